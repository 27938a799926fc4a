/// @file throughput.cuh
/// @brief The throughput program's kernel (paper Algorithm 1): disjoint CTA
/// ranges of one grid run the roles concurrently — [0, stage) stage,
/// [stage, stage+consume) consume, then (AllReduce) gather. Every CTA reads
/// the epoch at start and takes part in advancing it at the end, also when
/// a checked-mode wait gave up (the role returns early). Plan::push selects
/// the push transfer's roles (tp_push.cuh) instead of pull's.
///
/// Launch: grid = plan.ctas(), block = plan.threads, dynamic shared memory
/// = AtomT::kWorkspaceBytes. All CTAs must be co-resident (they wait on each
/// other), which holds for the policy's few tens of CTAs. In a compilation
/// pass for an architecture older than the datapath needs, the kernel traps.
#pragma once

#include "purlin/atom/atom.cuh"
#include "purlin/snac/epoch.cuh"
#include "purlin/snac/tp_consume.cuh"
#include "purlin/snac/tp_gather.cuh"
#include "purlin/snac/tp_push.cuh"
#include "purlin/snac/tp_stage.cuh"

namespace purlin::snac {

template <CollKind K, class AtomT, class E, RedOp Op>
__global__ void throughputKernel(DeviceComm dc, Plan pl, const std::byte* in, std::byte* out) {
  extern __shared__ __align__(128) std::byte atomWorkspace[];
  if constexpr (!atom::kAtomCompiled<AtomT>) {
    __trap();  // this pass's architecture is older than the datapath needs
  } else {
  const uint64_t e = ctaBeginCall(dc);
  const TpContext cx{dc, pl, e, atomWorkspace};
  const int b = int(blockIdx.x);
  const int consumeBegin = pl.stageCtas, gatherBegin = pl.stageCtas + pl.consumeCtas;
  if (pl.push) {
    if constexpr (LaneAtomOf<AtomT, 2>::supported) {
      if (pl.lanes == 2) {
        if (pl.consumeLanes == 2) pushCta<K, AtomT, E, Op, 2, 2>(cx, in, out, b);
        else pushCta<K, AtomT, E, Op, 2, 1>(cx, in, out, b);
      } else {
        if (pl.consumeLanes == 2) pushCta<K, AtomT, E, Op, 1, 2>(cx, in, out, b);
        else pushCta<K, AtomT, E, Op, 1, 1>(cx, in, out, b);
      }
    } else {
      pushCta<K, AtomT, E, Op, 1, 1>(cx, in, out, b);
    }
  } else if (b < consumeBegin) {
    stageRole<AtomT>(cx, in, out, b, pl.stageCtas);
  } else if (b < gatherBegin) {
    if constexpr (K == CollKind::AllGather || K == CollKind::AllToAll)
      consumeCopyRole<AtomT>(cx, in, out, b - consumeBegin, pl.consumeCtas);
    else
      consumeReduceRole<AtomT, E, Op, K == CollKind::AllReduce>(cx, in, out, b - consumeBegin, pl.consumeCtas);
  } else if constexpr (K == CollKind::AllReduce) {
    gatherRole<AtomT>(cx, out, b - gatherBegin, pl.gatherCtas);
  }
  ctaEndCall(dc, e);
  }
}

} // namespace purlin::snac
