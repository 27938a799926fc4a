#!/usr/bin/env bash
# nvcc -c of generated/ AllGather and AllReduce (the host unit and the four
# kernel units each), sm_90, -O3, 2 at a time, alternating the trees of two
# commits (each a directory with generated/ and runtime/include, e.g.
# `git archive REV generated runtime | tar -x -C DIR`), ROUNDS rounds:
#   ctab.sh BASE_DIR NEW_DIR [ROUNDS]
# Prints per (tree, collective) the sum of the units' times and the wall
# time of the 2-at-a-time compile, then the medians and the ratios.
set -euo pipefail
base=$1 new=$2 rounds=${3:-3}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() {  # tree stem -> "sum wall"
  local tree=$1 stem=$2 t0 t1
  : > "$work/times"
  t0=$(date +%s.%N)
  for u in "" .latency .throughput .direct .pairs; do echo "$tree/generated/$stem$u.cu"; done |
    xargs -P 2 -I{} bash -c 'a=$(date +%s.%N); "$0" -std=c++20 -O3 -DNDEBUG -arch=sm_90 -c -I"$1/runtime/include" -I"$1/generated" "$2" -o "$3/$(basename "$2").o"; b=$(date +%s.%N); echo "$b - $a" | bc >> "$3/times"' "$nvcc" "$tree" {} "$work"
  t1=$(date +%s.%N)
  printf '%.1f %.1f\n' "$(paste -sd+ "$work/times" | bc)" "$(echo "$t1 - $t0" | bc)"
}
for r in $(seq "$rounds"); do
  for tree in base new; do
    dir=$base; [ "$tree" = new ] && dir=$new
    for stem in allgather allreduce; do
      read -r sum wall < <(one "$dir" "$stem")
      echo "$tree $stem sum_s=$sum wall_s=$wall"
    done
  done
done | tee "$work/rows"
python3 - "$work/rows" <<'PY'
import re, statistics, sys
v = {}
for line in open(sys.argv[1]):
    t, s, a, b = re.match(r"(\S+) (\S+) sum_s=(\S+) wall_s=(\S+)", line).groups()
    v.setdefault((t, s), []).append((float(a), float(b)))
med = {k: (statistics.median(x for x, _ in r), statistics.median(y for _, y in r)) for k, r in v.items()}
for t in ("base", "new"):
    ag, ar = med[(t, "allgather")], med[(t, "allreduce")]
    print(f"medians {t}: AllGather {ag[0]:.1f} / {ag[1]:.1f} s, AllReduce {ar[0]:.1f} / {ar[1]:.1f} s "
          f"(sum / wall); AllReduce / AllGather {ar[0] / ag[0]:.2f}x sum, {ar[1] / ag[1]:.2f}x wall")
PY
