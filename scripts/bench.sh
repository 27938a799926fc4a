#!/usr/bin/env bash
# @file bench.sh
# @brief Runs the collective benchmark (Purlin vs NCCL) on a GPU host, one
# process per GPU, then writes the plots and summary when matplotlib is there.
#   scripts/bench.sh [GPU_BIN_DIR] [coll_bench options...]
# GPU_BIN_DIR defaults to build/gpu-bin. Results go to $OUT/bench if OUT is
# set, else to ./bench-run-<date>; the summary goes to
# bench/results/<date>-<device>/ (plot here with scripts/plot_bench.py RUN_DIR
# if the GPU host lacks matplotlib). NGPU overrides the GPU count.
set -uo pipefail
BIN=${1:-build/gpu-bin}
shift || true
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
HERE=$(cd "$(dirname "$0")/.." && pwd)
RUN=${OUT:+$OUT/bench}
RUN=${RUN:-$(pwd)/bench-run-$(date -u +%F)}
mkdir -p "$RUN"
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | wc -l)}
if [ "$NGPU" -lt 2 ]; then
  echo "bench.sh: needs at least 2 GPUs (found $NGPU)" >&2; exit 2
fi
[ "$NGPU" -gt 8 ] && NGPU=8
for f in coll_bench purlin-launch; do
  if [ ! -x "$BIN/$f" ]; then echo "bench.sh: $BIN/$f not found; build first (make build)" >&2; exit 2; fi
done
if [ -z "${PURLIN_COMMIT:-}" ]; then
  PURLIN_COMMIT=$(git -C "$HERE" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  [ -n "$(git -C "$HERE" status --porcelain --untracked-files=no 2>/dev/null)" ] && PURLIN_COMMIT="$PURLIN_COMMIT-dirty"
fi
export PURLIN_COMMIT
echo "bench.sh: $NGPU GPU(s), commit $PURLIN_COMMIT, results in $RUN"
timeout --kill-after=10 420 "$BIN/purlin-launch" -n "$NGPU" "$BIN/coll_bench" "$RUN" "$@"
rc=$?
[ $rc -eq 124 ] && echo "bench.sh: coll_bench timed out after 420 s" >&2
# The same sweep with the direct program off (every call staged), reported
# beside the main run. STAGED=0 skips it.
STAGED_ARGS=()
if [ "${STAGED:-1}" != 0 ]; then
  mkdir -p "$RUN/staged"
  timeout --kill-after=10 420 "$BIN/purlin-launch" -n "$NGPU" "$BIN/coll_bench" "$RUN/staged" --no-direct "$@"
  src=$?
  [ $src -eq 124 ] && echo "bench.sh: coll_bench --no-direct timed out after 420 s" >&2
  [ $src -ne 0 ] && [ $rc -eq 0 ] && rc=$src
  [ -s "$RUN/staged/results.csv" ] && STAGED_ARGS=(--staged "$RUN/staged")
fi
if [ -s "$RUN/results.csv" ]; then
  python3 "$HERE/scripts/plot_bench.py" "$RUN" ${OUT:+--out "$OUT/summary"} "${STAGED_ARGS[@]}" || echo "bench.sh: plotting failed; run scripts/plot_bench.py $RUN where matplotlib is" >&2
fi
exit $rc
