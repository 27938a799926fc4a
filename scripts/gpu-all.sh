#!/usr/bin/env bash
# Runs every GPU test and benchmark in one go on a GPU host, writes one log
# per step to $OUT (or ./gpu-logs), and prints a short table last.
#   scripts/gpu-all.sh [GPU_BIN_DIR] [--no-bench]
# GPU_BIN_DIR defaults to build/gpu-bin (the programs built by `make`).
set -uo pipefail
BIN=${1:-build/gpu-bin}
BENCH=1; [ "${2:-}" = "--no-bench" ] && BENCH=0
LOG=${OUT:-$(pwd)/gpu-logs}
mkdir -p "$LOG"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "gpu-all: $NGPU GPU(s); binaries in $BIN; logs in $LOG"
nvidia-smi -L 2>/dev/null | sed 's/^/  /'

declare -a NAMES RESULTS SECS
step() {  # step NAME TIMEOUT CMD...
  local name=$1 to=$2; shift 2
  local t0=$(date +%s.%N)
  echo "=== $name: $*" | tee -a "$LOG/all.log"
  timeout --kill-after=10 "$to" "$@" >"$LOG/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  tail -n 5 "$LOG/$name.log" | sed 's/^/    /'
  local r=PASS; [ $rc -ne 0 ] && r="FAIL(rc=$rc)"; [ $rc -eq 124 ] && r="TIMEOUT"
  NAMES+=("$name"); RESULTS+=("$r"); SECS+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')")
}

LAUNCH="$BIN/purlin-launch"
for t in "$BIN"/*_test; do
  [ -x "$t" ] || continue
  n=$(basename "$t")
  step "$n" 300 "$t"
  case "$n" in
    comm_*|coll_*|demo_*)
      if [ -x "$LAUNCH" ] && [ "$NGPU" -ge 2 ]; then
        step "$n.mp$NGPU" 300 "$LAUNCH" -n "$NGPU" "$t"
      fi;;
  esac
done

if [ $BENCH -eq 1 ]; then
  [ -x "$BIN/atom_micro" ] && step micro 300 "$BIN/atom_micro" "$LOG"
  if [ -x "$BIN/coll_bench" ] && [ -x "$LAUNCH" ]; then
    step bench 420 "$LAUNCH" -n "$NGPU" "$BIN/coll_bench" "$LOG"
  fi
fi

echo
echo "== summary ($(date -u +%F) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x$NGPU)"
printf '%-40s %-14s %8s\n' step result seconds
fail=0
for i in "${!NAMES[@]}"; do
  printf '%-40s %-14s %8s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${SECS[$i]}"
  [ "${RESULTS[$i]}" = PASS ] || fail=1
done | tee "$LOG/summary.txt"
grep -qv ' PASS ' "$LOG/summary.txt" && grep -q -E 'FAIL|TIMEOUT' "$LOG/summary.txt" && exit 1
exit 0
