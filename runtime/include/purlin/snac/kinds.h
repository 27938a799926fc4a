/// @file kinds.h
/// @brief The collectives the runtime runs, from the one definition
/// purlin/collectives.def (the rows with Runs = 1), which the compiler
/// reads too: snac::CollKind, its names, and what each is (reduces,
/// composed, packed input, rooted). Plain C++ (host and device).
#pragma once

#include "purlin/vocabulary.h"

namespace purlin::snac {

namespace def {
/// Every collective of collectives.def, and the consume op of a leaf.
enum class Any {
#define PURLIN_LEAF(Name, ...) Name,
#define PURLIN_COMPOSE(Name, ...) Name,
#include "purlin/collectives.def"
};
using Op = purlin::ConsumeOp;  // the vocabulary (vocabulary.def) the def's rows spell
using Layout = purlin::Layout;
using Root = purlin::Root;
/// A leaf reduces when its op does; a composition when its first stage does.
constexpr bool reduces(Any k) {
  switch (k) {
#define PURLIN_LEAF(Name, O, In, Out, R, Runs) case Any::Name: return Op::O == Op::Reduce;
#define PURLIN_COMPOSE(Name, F, G, Runs) case Any::Name: return reduces(Any::F);
#include "purlin/collectives.def"
  }
  return false;
}
constexpr bool composed(Any k) {
  switch (k) {
#define PURLIN_COMPOSE(Name, F, G, Runs) case Any::Name: return true;
#include "purlin/collectives.def"
  default: return false;
  }
}
/// The input layout (a composition's first stage's).
constexpr Layout input(Any k) {
  switch (k) {
#define PURLIN_LEAF(Name, O, In, Out, R, Runs) case Any::Name: return Layout::In;
#define PURLIN_COMPOSE(Name, F, G, Runs) case Any::Name: return input(Any::F);
#include "purlin/collectives.def"
  }
  return Layout::Packed;
}
/// The output layout (a composition's last stage's).
constexpr Layout output(Any k) {
  switch (k) {
#define PURLIN_LEAF(Name, O, In, Out, R, Runs) case Any::Name: return Layout::Out;
#define PURLIN_COMPOSE(Name, F, G, Runs) case Any::Name: return output(Any::G);
#include "purlin/collectives.def"
  }
  return Layout::Packed;
}
/// The root (a composition's: that of the stage that has one).
constexpr Root root(Any k) {
  switch (k) {
#define PURLIN_LEAF(Name, O, In, Out, R, Runs) case Any::Name: return Root::R;
#define PURLIN_COMPOSE(Name, F, G, Runs) case Any::Name: return root(Any::F) != Root::None ? root(Any::F) : root(Any::G);
#include "purlin/collectives.def"
  }
  return Root::None;
}
/// How a collective's host API takes its sizes (after `in`, `out`): one
/// count (fixed layouts); one count per rank (a V layout: AllGatherV,
/// ReduceScatterV); or send and receive counts and displacements plus the
/// bound maxCount (a transposedV output, read per (source, destination)
/// pair: AllToAllV). A composition takes its first stage's.
/// The V collectives also have a form whose counts are in device memory
/// (docs/device-counts.md; the function's name + "Device"): DeviceCounts
/// (counts, then the bound maxCount) and DeviceSendRecvCounts (the four
/// AllToAllV arrays, then maxCount). The values are the C ABI's
/// purlin_collective_t::sizes.
enum class SizeArgs { Count, Counts, SendRecvCounts, DeviceCounts, DeviceSendRecvCounts };
/// The device-count form of a V collective's sizes (Count: none, itself).
constexpr SizeArgs deviceForm(SizeArgs s) {
  return s == SizeArgs::Counts ? SizeArgs::DeviceCounts
         : s == SizeArgs::SendRecvCounts ? SizeArgs::DeviceSendRecvCounts
                                         : s;
}
/// Whether sizes `s` are a device-count form.
constexpr bool isDeviceForm(SizeArgs s) { return s == SizeArgs::DeviceCounts || s == SizeArgs::DeviceSendRecvCounts; }
constexpr SizeArgs sizeArgs(Any k) {
  switch (k) {
#define PURLIN_LEAF(Name, O, In, Out, R, Runs)                                                     \
  case Any::Name:                                                                                  \
    return Layout::Out == Layout::TransposedV                    ? SizeArgs::SendRecvCounts        \
           : isVariable(Layout::In) || isVariable(Layout::Out) ? SizeArgs::Counts                \
                                                               : SizeArgs::Count;
#define PURLIN_COMPOSE(Name, F, G, Runs) case Any::Name: return sizeArgs(Any::F);
#include "purlin/collectives.def"
  }
  return SizeArgs::Count;
}
} // namespace def

#define PURLIN_RUNS_0(Name)
#define PURLIN_RUNS_1(Name) Name,
/// The collectives the runtime runs (the ones a Transform/Compose maps to,
/// collective.cuh KindOf), in collectives.def order.
enum class CollKind : int {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs(Name)
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs(Name)
#include "purlin/collectives.def"
};
#undef PURLIN_RUNS_0
#undef PURLIN_RUNS_1

#define PURLIN_RUNS_0(Name, ...)
#define PURLIN_RUNS_1(Name, ...) case CollKind::Name: return __VA_ARGS__;
inline const char* toString(CollKind k) {
  switch (k) {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs(Name, #Name)
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs(Name, #Name)
#include "purlin/collectives.def"
  }
  return "?";
}
/// The collectives-of-the-def counterpart of a CollKind.
inline constexpr def::Any anyOf(CollKind k) {
  switch (k) {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs(Name, def::Any::Name)
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs(Name, def::Any::Name)
#include "purlin/collectives.def"
  }
  return def::Any{};  // not reached: the switch covers every CollKind
}

/// Number of CollKind values.
inline constexpr int kNumCollKinds = 0
#define PURLIN_RUNS_0_COUNT
#define PURLIN_RUNS_1_COUNT +1
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs##_COUNT
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs##_COUNT
#include "purlin/collectives.def"
#undef PURLIN_RUNS_0_COUNT
#undef PURLIN_RUNS_1_COUNT
    ;

/// The CollKinds for which `pred(def::Any)` holds, as a bit mask (bit
/// int(k)): the predicates below test one bit, on the host and in kernels.
template <class Pred> constexpr unsigned kindMask(Pred pred) {
  unsigned m = 0;
  for (int i = 0; i < kNumCollKinds; ++i)
    if (pred(anyOf(CollKind(i)))) m |= 1u << i;
  return m;
}
inline constexpr unsigned kReductionKinds = kindMask([](def::Any a) { return def::reduces(a); });
inline constexpr unsigned kCompositionKinds = kindMask([](def::Any a) { return def::composed(a); });
inline constexpr unsigned kPackedInputKinds = kindMask(
    [](def::Any a) { return def::input(a) == def::Layout::Packed || def::input(a) == def::Layout::PackedV; });
inline constexpr unsigned kPackedOutputKinds = kindMask(
    [](def::Any a) { return def::output(a) == def::Layout::Packed || def::output(a) == def::Layout::PackedV; });
inline constexpr unsigned kRootProducerKinds = kindMask([](def::Any a) { return def::root(a) == def::Root::Producer; });
inline constexpr unsigned kVariableKinds =
    kindMask([](def::Any a) { return isVariable(def::input(a)) || isVariable(def::output(a)); });
inline constexpr unsigned kRootConsumerKinds = kindMask([](def::Any a) { return def::root(a) == def::Root::Consumer; });
inline constexpr unsigned kPairCountKinds =
    kindMask([](def::Any a) { return def::sizeArgs(a) == def::SizeArgs::SendRecvCounts; });

#if defined(__CUDACC__)
#define PURLIN_KIND_HD __host__ __device__
#else
#define PURLIN_KIND_HD
#endif
PURLIN_KIND_HD constexpr bool kindIn(unsigned mask, CollKind k) { return ((mask >> unsigned(k)) & 1u) != 0; }
/// ReduceScatter, AllReduce, Reduce (dtype and op matter; copies move bytes).
PURLIN_KIND_HD constexpr bool isReduction(CollKind k) { return kindIn(kReductionKinds, k); }
/// AllReduce, Broadcast, Reduce: a compose<F, G> (a gather role reads F's
/// intermediate Y, which takes half of a staging half).
PURLIN_KIND_HD constexpr bool isComposition(CollKind k) { return kindIn(kCompositionKinds, k); }
/// AllGather, AllGatherV, Gather: every rank stages its whole input once per
/// chunk (read by every consumer), not one partition per peer.
PURLIN_KIND_HD constexpr bool hasPackedInput(CollKind k) { return kindIn(kPackedInputKinds, k); }
/// ReduceScatter, ReduceScatterV, Scatter: one packed block out per rank
/// (in place: the output is the rank's own block of the input).
PURLIN_KIND_HD constexpr bool hasPackedOutput(CollKind k) { return kindIn(kPackedOutputKinds, k); }
/// Scatter, Broadcast: only the root produces (its input is read by the
/// others); Gather, Reduce: only the root consumes (its output is written).
PURLIN_KIND_HD constexpr bool rootProduces(CollKind k) { return kindIn(kRootProducerKinds, k); }
PURLIN_KIND_HD constexpr bool rootConsumes(CollKind k) { return kindIn(kRootConsumerKinds, k); }
/// AllGatherV, ReduceScatterV, AllToAllV: partitions of run-time sizes
/// (CallArgs::counts; AllToAllV's send/recv arrays), so flows differ in length.
PURLIN_KIND_HD constexpr bool isVariable(CollKind k) { return kindIn(kVariableKinds, k); }
/// AllToAllV: a transposedV output, sized per (source, destination) pair
/// (CallArgs' send/recv counts and displacements, bounded by maxCount).
PURLIN_KIND_HD constexpr bool hasPairCounts(CollKind k) { return kindIn(kPairCountKinds, k); }
/// Broadcast, Reduce, Scatter, Gather: the call takes a root rank.
PURLIN_KIND_HD constexpr bool isRooted(CollKind k) { return rootProduces(k) || rootConsumes(k); }
#undef PURLIN_KIND_HD
#undef PURLIN_RUNS_0
#undef PURLIN_RUNS_1

} // namespace purlin::snac
