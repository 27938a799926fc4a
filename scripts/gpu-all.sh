#!/usr/bin/env bash
# Runs every GPU test and benchmark in one go on a GPU host, writes one log
# per step, and prints a short table last.
#   scripts/gpu-all.sh [GPU_BIN_DIR] [--no-bench] [--micro] [--steps REGEX]
# --steps REGEX runs only the steps whose names match (grep -E), so that the
# suite can be run in parts that each fit a time limit (the device tool's
# 600 s): e.g. --steps '^(comm|failure|lifetime)' or --steps '^sanitize'.
# GPU_BIN_DIR defaults to build/gpu-bin (the programs built by `make`).
# Every *_test program there runs once in one process; the communicator,
# collective and demo programs also run one process per GPU (purlin-launch).
# Logs go to ./gpu-logs, or, when $OUT is set (the device tool), to a
# tarball $OUT/gpu-logs.tar.gz plus $OUT/summary.txt and the benchmark CSV.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-build/gpu-bin}
BENCH=1; MICRO=0; STEPS=''
set -- "${@:2}"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-bench) BENCH=0;;
    --micro) MICRO=1;;
    --steps) [ $# -ge 2 ] || { echo "gpu-all: --steps needs a regular expression" >&2; exit 2; }
             STEPS=$2; shift;;
    *) echo "gpu-all: unknown option $1" >&2; exit 2;;
  esac
  shift
done
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; LOG=$(mktemp -d); else LOG=$(pwd)/gpu-logs; fi
mkdir -p "$LOG"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "gpu-all: $NGPU GPU(s); binaries in $BIN; logs in $LOG"
nvidia-smi -L 2>/dev/null | sed 's/^/  /'

declare -a NAMES RESULTS SECS
step() {  # step NAME TIMEOUT CMD...
  local name=$1 to=$2; shift 2
  if [ -n "$STEPS" ] && ! grep -qE -- "$STEPS" <<<"$name"; then return 0; fi
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
  # coll_correctness_test runs every case under the throughput transfers of
  # the generated kernels (pull and push with (2, 1) lanes)
  # in one process, ~70 s each on 2 x H200, and checks the other push lanes
  # are refused.
  to=300; [ "$n" = coll_correctness_test ] && to=600
  step "$n" "$to" "$t"
  case "$n" in
    oversub_test)
      # Its default worlds are 4 and 8 ranks; the others of 2..8 too
      # (ranks share GPUs: the residency sizing, resident.cuh).
      for k in 2 3 5; do step "$n.ranks$k" 200 "$t" --ranks "$k"; done;;
    rooted_test|vform_test)
      # Its default run is 2, 3, 5 and 8 ranks sharing the GPUs against host
      # references; with two GPUs, NCCL's results too, in one process and
      # one process per GPU.
      if [ "$NGPU" -ge 2 ]; then
        step "$n.nccl" 300 "$t" --nccl
        [ -x "$LAUNCH" ] && step "$n.mp$NGPU" 300 "$LAUNCH" -n "$NGPU" "$t"
      fi;;
    comm_*|coll_*|demo_*)
      if [ -x "$LAUNCH" ] && [ "$NGPU" -ge 2 ]; then
        # The in-process run covers every throughput transfer; one process
        # per GPU runs the default policy's (push, (2, 1) lanes) to keep the run short.
        mpargs=(); [ "$n" = coll_correctness_test ] && mpargs=(--transfer push21)
        step "$n.mp$NGPU" 300 "$LAUNCH" -n "$NGPU" "$t" "${mpargs[@]}"
      elif [ -x "$LAUNCH" ] && [ "$n" = comm_test ]; then
        # One GPU: two processes share it (CUDA IPC within one device; the
        # GPU time-slices their contexts, so only the short communicator
        # test runs this way: the collective tests run their ranks as
        # threads sharing the GPU above).
        step "$n.mp2" 300 "$LAUNCH" -n 2 "$t"
      fi;;
  esac
done

# The Python package on the GPU (docs/python.md; python/tests/test_gpu.py:
# ranks as threads sharing a GPU, graphs, torch.compile): needs torch and
# libpurlin.so (beside the programs or in the build tree's lib/).
PYLIB=""
for c in "$BIN/libpurlin.so" "$BIN/../lib/libpurlin.so"; do [ -f "$c" ] && { PYLIB=$c; break; }; done
if [ -n "$PYLIB" ] && python3 -c "import torch" > /dev/null 2>&1; then
  step python.gpu 560 env PURLIN_LIBRARY="$PYLIB" PURLIN_REQUIRE_LIBRARY=1 "$HERE/pytest.sh" "$HERE/../python/tests"
fi

# compute-sanitizer (memcheck, racecheck, synccheck) over the correctness
# suites at small sizes: the Atom datapaths (one kernel each), and with
# memcheck the collectives of two ranks sharing a GPU (their kernels wait on
# each other, which racecheck's and synccheck's serialization would
# deadlock). Zero errors required (--error-exitcode). failure_test is not
# among them: under memcheck it reports 0 errors, but its healthy checked
# calls then outlast their 20 s wait bound (one H200, 2026-12-03).
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$SAN" ]; then
  for tool in memcheck racecheck synccheck; do
    for t in atom_copy_test atom_reduce_test reduce_pair_test; do
      args=(); [ "$t" = atom_reduce_test ] && args=(--small)  # every count: over 530 s under racecheck
      [ -x "$BIN/$t" ] && step "sanitize.$tool.$t" 600 "$SAN" --tool "$tool" --error-exitcode 9 "$BIN/$t" "${args[@]}"
    done
  done
  for t in rooted_test vform_test device_counts_test; do
    [ -x "$BIN/$t" ] && step "sanitize.memcheck.$t" 600 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/$t" --ranks 2
  done
fi

if [ $BENCH -eq 1 ]; then
  [ $MICRO -eq 1 ] && [ -x "$BIN/atom_micro" ] && step micro 300 "$BIN/atom_micro" "$LOG/micro"
  # The TMA datapath against the cp.async pipeline, one GPU, ~40 s.
  [ $MICRO -eq 1 ] && [ -x "$BIN/atom_local_micro" ] && step atom_local_micro 120 "$BIN/atom_local_micro"
  # E11-E12 (bench/NOTES.md): per-call floor, packet formats, the runtime's
  # latency kernel per collective, and the phases of one call; two GPUs, ~3 s.
  [ -x "$BIN/lat_floor_micro" ] && [ "$NGPU" -ge 2 ] && step lat_floor_micro 120 "$BIN/lat_floor_micro"
  # One GPU: the printed latency kernels' own code, both ranks on device 0.
  [ -x "$BIN/lat_floor_micro" ] && [ "$NGPU" -eq 1 ] && step lat_floor_micro.loopback 120 "$BIN/lat_floor_micro" --only rt- --loopback
  # One GPU: the printed throughput (pull, push) and direct kernels' own code,
  # two in-process ranks on device 0 (bench/NOTES.md E15), ~5 s.
  [ -x "$BIN/tp_loopback_micro" ] && [ "$NGPU" -eq 1 ] && step tp_loopback_micro 300 "$BIN/tp_loopback_micro"
  [ -x "$BIN/lat_trace_micro" ] && [ "$NGPU" -ge 2 ] && step lat_trace_micro 120 "$BIN/lat_trace_micro"
  if [ -x "$BIN/coll_bench" ] && [ -x "$LAUNCH" ]; then
    # Every series (scripts/bench.sh: NCCL's modes, torch, PDL-neutral, eager,
    # registered; with one GPU a dry run of the harness), side by side.
    step bench 3600 env OUT="$LOG" PART_TIMEOUT=420 "$HERE/bench.sh" "$BIN"
  fi
fi

echo
echo "== summary ($(date -u +%F) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x$NGPU)"
printf '%-40s %-14s %8s\n' step result seconds
for i in "${!NAMES[@]}"; do
  printf '%-40s %-14s %8s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${SECS[$i]}"
done | tee "$LOG/summary.txt"
if [ -n "${OUT:-}" ]; then
  cp "$LOG/summary.txt" "$OUT/"
  [ -f "$LOG/summary/summary.md" ] && cp "$LOG/summary/summary.md" "$OUT/bench-summary.md" 2>/dev/null
  tar -C "$LOG" -czf "$OUT/gpu-logs.tar.gz" .
fi
grep -q -E 'FAIL|TIMEOUT' "$LOG/summary.txt" && exit 1
exit 0
