#!/usr/bin/env bash
# compare-purlinc.sh OLD_PURLINC NEW_PURLINC: purlinc's whole output (every
# file, `-o -`, and any diagnostics) for every example and test .pl, under
# the built-in policies and every policy file, for sm_80, sm_90 and sm_100,
# from two purlinc binaries; prints the runs that differ and exits 1 if any
# does. A compiler refactor that must not change the printed code checks
# itself with it (build the old purlinc from a worktree: PURLIN_BUILD_RUNTIME=OFF).
set -uo pipefail
old=$1 new=$2
cd "$(dirname "$0")/.."
runs=0 differ=0
for pl in dsl_examples/*.pl tests/lit/*.pl tests/lit/Inputs/*.pl tests/consumer/project/*.pl; do
  [ -f "$pl" ] || continue
  for pol in "" dsl_examples/policies/*.json tests/gpu/policies/*.json; do
    for arch in sm_80 sm_90 sm_100; do
      args=("$pl" "--arch=$arch")
      [ -n "$pol" ] && args+=("--policy=$pol")
      a=$("$old" "${args[@]}" -o - 2>&1 | md5sum)
      b=$("$new" "${args[@]}" -o - 2>&1 | md5sum)
      runs=$((runs + 1))
      if [ "$a" != "$b" ]; then differ=$((differ + 1)); echo "differs: ${args[*]}"; fi
    done
  done
done
echo "compare-purlinc: $runs runs, $differ differ"
[ "$differ" -eq 0 ]
