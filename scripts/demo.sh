#!/usr/bin/env bash
# @file demo.sh
# @brief `make demo`: compile every example in dsl_examples/ with purlinc,
# show the SNAC IR, verify and simulate it; emit CUDA for the collectives
# the runtime supports; on a GPU host also run them (one GPU: two ranks
# sharing it) and, with two or more GPUs, time them beside NCCL.
# Usage: scripts/demo.sh [BUILD_DIR [cpu|gpu]]   (default: build, both parts)
# `make demo` runs the CPU part (needs only purlinc) before any CUDA is
# compiled, then builds the rest and runs the GPU part.
#
# The demo is a list of steps; each step is a function `step_NAME` taking the
# example file, listed in STEPS below. GPU steps run once, after them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PART=${2:-all}
case $PART in cpu|gpu|all) ;; *) echo "demo: part '$PART' is not cpu, gpu or all" >&2; exit 2;; esac
PURLINC=$BUILD/bin/purlinc
GPUBIN=$BUILD/gpu-bin
OUTDIR=$BUILD/demo
mkdir -p "$OUTDIR"
if [ ! -x "$PURLINC" ]; then
  echo "demo: $PURLINC not found; run 'make demo' (or 'make build') first" >&2
  exit 1
fi

# Front end: the parsed declarations with their locations.
step_ast() {
  "$PURLINC" "$1" --emit=ast
}

# The derived orchestration (SNAC IR): shown in full for AllReduce
# (Algorithm 1's three roles and the latency program), verified for all.
step_ir() {
  if [ "$(basename "$1")" = allreduce.pl ]; then
    "$PURLINC" "$1" --emit=ir
  else
    "$PURLINC" "$1" --emit=ir >/dev/null && echo "IR derived and verified"
  fi
}

# Static verifier + CPU simulator on 2, 4 and 8 ranks with adversarial
# interleavings, and the mutation check (every notify/wait deleted in turn
# must be caught). Summary lines only.
step_simulate() {
  local n
  for n in 2 4 8; do
    "$PURLINC" "$1" --simulate=$n | grep -E '^(simulate|  bytes|  mutations|simulation)'
  done
}

# CUDA for every collective (the runtime runs all eleven).
step_cuda() {
  local base
  base=$(basename "$1" .pl)
  "$PURLINC" "$1" -o "$OUTDIR/$base.cu" || return 1
  echo "wrote $OUTDIR/$base.{h,plan.h,programs.h,device.cuh,cu} and the kernel units $base.{latency,throughput,direct,pairs}.cu" \
       "($(cat "$OUTDIR/$base".*.cu "$OUTDIR/$base.cu" "$OUTDIR/$base".*h | wc -l) lines)"
  # The programs are printed from the IR: their statements cite the ops.
  echo "programs printed from the IR, statements citing ops:"
  grep -E '^ *// %[0-9]+ ' "$OUTDIR/$base.device.cuh" | sed 's/^ */  /' | cut -c1-110
}

STEPS=(ast ir simulate cuda)

status=0
[ "$PART" = gpu ] || for pl in dsl_examples/*.pl; do
  for step in "${STEPS[@]}"; do
    echo "==> purlinc $pl [$step]"
    if ! "step_$step" "$pl"; then
      echo "demo: step '$step' failed on $pl" >&2
      status=1
    fi
  done
  echo
done

[ "$PART" = cpu ] && exit $status

# GPU part: the generated collectives (generated/, through their host API) on
# every GPU found, in one process and one process per GPU, then timings.
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${ngpu:-0}" -ge 1 ] && [ -x "$GPUBIN/demo_allreduce_test" ]; then
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  if [ "$ngpu" -ge 2 ]; then
    echo "==> GPU: generated AllReduce, AllGather, ReduceScatter, AllToAll on $ngpu GPUs (one process)"
  else
    echo "==> GPU: generated AllReduce, AllGather, ReduceScatter, AllToAll, two ranks sharing the one GPU (one process)"
  fi
  timeout 300 "$GPUBIN/demo_allreduce_test" || status=1
  if [ -x "$GPUBIN/demo_rooted_test" ]; then
    echo "==> GPU: generated Broadcast, Reduce, Scatter, Gather (host API), every root"
    timeout 300 "$GPUBIN/demo_rooted_test" | grep -E "root=0 count=1 |root=1 count=1048577|ok   (broadcast|purlin)|FAIL|PASS" || status=1
  fi
  if [ -x "$GPUBIN/demo_vform_test" ]; then
    echo "==> GPU: generated AllGatherV, ReduceScatterV, AllToAllV (host API), count arrays with zeros"
    timeout 300 "$GPUBIN/demo_vform_test" || status=1
  fi
  if [ "$ngpu" -ge 2 ]; then
    echo "==> GPU: generated AllReduce, one process per GPU"
    timeout 300 "$GPUBIN/purlin-launch" -n "$ngpu" "$GPUBIN/demo_allreduce_test" || status=1
    [ -x "$GPUBIN/demo_rooted_test" ] && { timeout 300 "$GPUBIN/purlin-launch" -n "$ngpu" "$GPUBIN/demo_rooted_test" | tail -n 1 || status=1; }
    [ -x "$GPUBIN/demo_vform_test" ] && { timeout 300 "$GPUBIN/purlin-launch" -n "$ngpu" "$GPUBIN/demo_vform_test" | tail -n 1 || status=1; }
    if [ -x "$GPUBIN/coll_perf_test" ]; then
      echo "==> GPU: timings (paper method: 128 calls in a CUDA graph, 8 replays, max over ranks)"
      timeout 300 "$GPUBIN/coll_perf_test" || status=1
    fi
  else
    echo "==> GPU: one GPU: the multi-process run and the NCCL timings need two (NCCL runs one rank per GPU)"
  fi
else
  echo "==> GPU steps skipped: no GPU visible (run 'make demo' on a GPU host)"
fi
exit $status
