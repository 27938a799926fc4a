#!/usr/bin/env bash
# @file tune.sh
# @brief The tuner command: sweeps the policy knobs on this machine's GPUs
# (purlin_tune, one process per GPU), writes a policy JSON from the
# measurements (make_policy.py) and checks it with purlinc when available.
#   bench/tune/tune.sh [GPU_BIN_DIR] [OUT_DIR] [-- purlin_tune options]
# Defaults: build/gpu-bin, ./tune-<date>. NGPU overrides the GPU count,
# POLICY_NAME the policy's name (default Policy), PURLINC the compiler.
# The result: OUT_DIR/policy.json, usable as `purlinc --policy OUT_DIR/policy.json`.
set -uo pipefail
BIN=${1:-build/gpu-bin}
DIR=${2:-$(pwd)/tune-$(date -u +%F)}
shift 2 2>/dev/null || shift $#
[ "${1:-}" = "--" ] && shift
HERE=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | wc -l)}
if [ "$NGPU" -lt 2 ]; then echo "tune.sh: needs at least 2 GPUs (found $NGPU)" >&2; exit 2; fi
[ "$NGPU" -gt 8 ] && NGPU=8
for f in purlin_tune purlin-launch; do
  [ -x "$BIN/$f" ] || { echo "tune.sh: $BIN/$f not found; build first" >&2; exit 2; }
done
mkdir -p "$DIR"
echo "tune.sh: sweeping on $NGPU GPU(s) into $DIR"
timeout --kill-after=10 900 "$BIN/purlin-launch" -n "$NGPU" "$BIN/purlin_tune" "$DIR" "$@" || {
  echo "tune.sh: purlin_tune failed (see $DIR/tune.log)" >&2; exit 1; }
python3 "$HERE/make_policy.py" "$DIR/measurements.csv" -o "$DIR/policy.json" --name "${POLICY_NAME:-Policy}" || exit 1
PURLINC=${PURLINC:-$(command -v purlinc || true)}
[ -z "$PURLINC" ] && [ -x "$BIN/../bin/purlinc" ] && PURLINC="$BIN/../bin/purlinc"
if [ -n "$PURLINC" ]; then
  "$PURLINC" "$HERE/testdata/collectives.pl" --policy "$DIR/policy.json" --emit=cuda -o "$DIR/check.cu" ||
    { echo "tune.sh: purlinc rejected $DIR/policy.json" >&2; exit 1; }
  echo "tune.sh: purlinc accepts $DIR/policy.json"
else
  echo "tune.sh: purlinc not found; check with: purlinc FILE.pl --policy $DIR/policy.json"
fi
