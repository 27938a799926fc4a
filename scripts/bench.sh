#!/usr/bin/env bash
# @file bench.sh
# @brief The benchmark of one job (bench/README.md "Series"): every series in
# its own run directory, then scripts/compare_series.py puts them side by side
# (summary.md, plots with the link ceilings, program switches, ratios).
#   scripts/bench.sh [GPU_BIN_DIR] [coll_bench options...]
# GPU_BIN_DIR defaults to build/gpu-bin. Results go to $OUT/bench if OUT is
# set, else to ./bench-run-<date>. NGPU overrides the GPU count; PARTS picks
# the parts (default: all of those below for the GPUs there), e.g.
# PARTS="graph eager" to split a run into pieces that fit a time limit
# (compare_series.py then reads whatever part directories exist).
#
# Two or more GPUs, one process per GPU (purlin-launch; torchrun for torch):
#   ceilings     link_ceiling: copy engine and SM stores, 1 and 2 directions
#   graph        Purlin in CUDA graphs (direct where eligible) vs NCCL default
#   staged       Purlin in graphs, staged only   vs NCCL_LEGACY_CUDA_REGISTER=1
#   symmetric    NCCL ncclMemAlloc + symmetric windows (ncclAlltoAll)
#   copy-engine  NCCL symmetric windows + NCCL_CTA_POLICY_ZERO
#   sep          PDL-neutral (an empty kernel between calls): Purlin graph vs NCCL default
#   sep-symmetric  PDL-neutral NCCL symmetric windows
#   eager        Purlin eager, unregistered (staged) vs NCCL default, eager
#   registered   Purlin eager on a registered output vs NCCL symmetric, eager
#   torch, torch-sep  torch symmetric memory (one-shot, two-shot AllReduce)
# NCCL's choices (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING,REG) go to
# nccl-debug.*.log in each part's folder.
# One GPU: a dry run of the same harness with two in-process ranks sharing
# it (coll_bench --threads 2 --nccl none; the device reference checks every
# call) for graph, staged, sep, eager and registered, and local ceilings;
# its figures are not performance figures.
set -uo pipefail
BIN=${1:-build/gpu-bin}
shift || true
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
HERE=$(cd "$(dirname "$0")/.." && pwd)
RUN=${OUT:+$OUT/bench}
RUN=${RUN:-$(pwd)/bench-run-$(date -u +%F)}
mkdir -p "$RUN"
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | wc -l)}
[ "$NGPU" -gt 8 ] && NGPU=8
if [ "$NGPU" -lt 1 ]; then echo "bench.sh: no GPU" >&2; exit 2; fi
for f in coll_bench purlin-launch; do
  if [ ! -x "$BIN/$f" ]; then echo "bench.sh: $BIN/$f not found; build first (make build)" >&2; exit 2; fi
done
if [ -z "${PURLIN_COMMIT:-}" ]; then
  PURLIN_COMMIT=$(git -C "$HERE" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  [ -n "$(git -C "$HERE" status --porcelain --untracked-files=no 2>/dev/null)" ] && PURLIN_COMMIT="$PURLIN_COMMIT-dirty"
fi
export PURLIN_COMMIT
PART_TIMEOUT=${PART_TIMEOUT:-420}
if [ "$NGPU" -ge 2 ]; then
  ALL="ceilings graph staged symmetric copy-engine sep sep-symmetric eager registered torch torch-sep"
else
  ALL="ceilings graph staged sep eager registered"
fi
PARTS=${PARTS:-$ALL}
echo "bench.sh: $NGPU GPU(s), commit $PURLIN_COMMIT, parts: $PARTS; results in $RUN"

rc=0
# part NAME ARGS...: coll_bench with ARGS into $RUN/NAME (console output in console.log).
part() {
  local name=$1; shift
  mkdir -p "$RUN/$name"
  echo "=== $name: $*"
  if [ "$NGPU" -ge 2 ]; then
    # What NCCL chose (algorithm, protocol, channels; registrations), one
    # file per rank beside the part's results (NCCL_DEBUG_FILE).
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,REG NCCL_DEBUG_FILE="$RUN/$name/nccl-debug.%h.%p.log" \
    timeout --kill-after=10 "$PART_TIMEOUT" "$BIN/purlin-launch" -n "$NGPU" "$BIN/coll_bench" "$RUN/$name" "$@" \
      >"$RUN/$name/console.log" 2>&1
  else
    timeout --kill-after=10 "$PART_TIMEOUT" "$BIN/coll_bench" "$RUN/$name" --threads 2 --nccl none "$@" \
      >"$RUN/$name/console.log" 2>&1
  fi
  local s=$?
  [ $s -eq 124 ] && echo "bench.sh: $name timed out after $PART_TIMEOUT s" >&2
  tail -n 1 "$RUN/$name/console.log"
  [ $s -ne 0 ] && rc=$s
}
torch_part() {
  local name=$1; shift
  mkdir -p "$RUN/$name"
  echo "=== $name: torch_symm_bench.py $*"
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,REG NCCL_DEBUG_FILE="$RUN/$name/nccl-debug.%h.%p.log" \
  timeout --kill-after=10 "$PART_TIMEOUT" torchrun --standalone --nproc-per-node "$NGPU" \
    "$HERE/bench/coll/torch_symm_bench.py" "$RUN/$name" "$@" >"$RUN/$name/console.log" 2>&1
  local s=$?
  tail -n 1 "$RUN/$name/console.log"
  [ $s -ne 0 ] && rc=$s
}

# In the dry run the NCCL mode is always none (bench.sh adds it).
nccl() { [ "$NGPU" -ge 2 ] && echo --nccl "$1"; }
for p in $PARTS; do
  case "$p" in
    ceilings)
      if [ -x "$BIN/link_ceiling" ]; then
        echo "=== ceilings"; "$BIN/link_ceiling" "$RUN/ceilings.csv" || rc=$?
      fi;;
    graph) part graph --purlin graph $(nccl default) "$@";;
    staged) part staged --purlin staged $(nccl legacy-register) "$@";;
    symmetric) part symmetric --purlin none --nccl symmetric "$@";;
    copy-engine) part copy-engine --purlin none --nccl copy-engine "$@";;
    sep) part sep --purlin graph $(nccl default) --separator "$@";;
    sep-symmetric) part sep-symmetric --purlin none --nccl symmetric --separator "$@";;
    eager) part eager --purlin eager $(nccl default) "$@";;
    registered) part registered --purlin registered $(nccl symmetric) "$@";;
    torch) torch_part torch;;
    torch-sep) torch_part torch-sep --separator;;
    *) echo "bench.sh: unknown part '$p' (known: $ALL)" >&2; rc=2;;
  esac
done

runs=()
for d in "$RUN"/*/; do [ -s "$d/results.csv" ] && runs+=("${d%/}"); done
if [ ${#runs[@]} -gt 0 ]; then
  ceil=(); [ -s "$RUN/ceilings.csv" ] && ceil=(--ceilings "$RUN/ceilings.csv")
  SUMMARY=${OUT:+$OUT/summary}
  python3 "$HERE/scripts/compare_series.py" "${runs[@]}" --out "${SUMMARY:-$RUN/summary}" "${ceil[@]}" ||
    echo "bench.sh: compare_series.py failed" >&2
fi
exit $rc
