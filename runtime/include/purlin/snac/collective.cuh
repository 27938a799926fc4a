/// @file collective.cuh
/// @brief The host launch API the generated code instantiates:
/// snac::launch<Collective, P, AtomArch, Programs>(comm, args, stream). A
/// Collective is a Transform (consume op + input/output layouts + root) or a
/// Compose<F, G>; P is a policy type with static constexpr members (NCCL
/// ProtoSimple style, emitted by purlinc); AtomArch an Atom datapath tag;
/// Programs what purlinc printed from the SNAC IR for this collective:
/// `template <class AtomT> static ProgramEnqueue enqueue()`, the host code
/// that picks the planned program and enqueues it (program_launch.cuh),
/// `reductions`, the reduction classes its programs compile (purlinc's
/// instantiation table; a reduction of a pair outside them is refused),
/// `Rules`, the rules of the call plan (NAME_PlanRules: the plan ops of its
/// SNAC IR; snac::makePlan),
/// and, for the occupancy queries of ranks sharing a GPU (resident.cuh),
/// the kernels: `latency<W8, Pair>(n)`, `throughput<AtomT, Pair>()`,
/// `hasDirect` and `direct<Pair>()`, for every Pair of `forEachPair`
/// (kAnyPair and the specialized pairs, purlin/reduction.h).
///
/// launch validates the arguments (never throws), sizes the programs for
/// ranks sharing a GPU, plans the call (snac::makePlan with Programs::Rules:
/// the latency program by message bytes against P::world[n].latencyMaxBytes
/// and the packet window, else the throughput program; the same decision
/// on every rank; a call the rules' `direct` admits and that is captured
/// into a CUDA graph may instead take the direct program, planDirect after
/// Communicator::registerDirect, a collective host exchange at capture
/// time, so every rank must capture the same calls; an eager call whose
/// output lies in a registered buffer takes it too, Communicator::registerBuffer),
/// and hands the plan to
/// the printed host code (nothing is enqueued for a call with no data).
/// Errors: a Status plus a message from snac::lastError().
///
/// Supported now (collectives.def, Runs = 1): AllGather = Transform<Copy, Packed, Scattered>,
/// ReduceScatter = Transform<Reduce, Scattered, Packed>, AllToAll =
/// Transform<Copy, Scattered, Transposed>, AllReduce = Compose<ReduceScatter,
/// AllGather>, Scatter = Transform<Copy, Scattered, Packed, Producer>, Gather =
/// Transform<Copy, Packed, Scattered, Consumer>, Broadcast = Compose<Scatter,
/// AllGather>, Reduce = Compose<ReduceScatter, Gather>, and the V forms
/// AllGatherV, ReduceScatterV, AllToAllV.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "purlin/atom/atom.cuh"
#include "purlin/host/communicator.h"
#include "purlin/host/stream_memops.h"
#include "purlin/snac/device_api.cuh"
#include "purlin/snac/device_counts.cuh"
#include "purlin/snac/direct.cuh"
#include "purlin/snac/graph.cuh"
#include "purlin/snac/program_launch.cuh"
#include "purlin/snac/packet_lane.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/resident.cuh"
#include "purlin/snac/lane.cuh"
#include "purlin/snac/module_anchor.cuh"
#include "purlin/snac/tp_context.cuh"
#include "purlin/vocabulary.h"

namespace purlin::snac {

/// The signature of the kernels purlinc prints: latency (grid =
/// plan.latencyCtas, block = plan.latencyThreads, no dynamic shared
/// memory) and throughput (grid = plan.ctas(), block = plan.threads,
/// dynamic shared memory = the datapath's workspace).
using ProgramKernel = void (*)(DeviceComm, Plan, const std::byte*, std::byte*);
/// The signature of the direct kernel purlinc prints (grid = plan.directCtas,
/// block = plan.directThreads; `peers` from Communicator::registerDirect).
using DirectKernel = void (*)(DeviceComm, Plan, DirectPeers, const std::byte*, std::byte*);

// The vocabulary of a Transform, defined once (purlin/vocabulary.def) for
// the runtime and purlinc.
using Consume = purlin::ConsumeOp;
using Layout = purlin::Layout;
using Root = purlin::Root;

/// A SNAC transformation (paper §3.1): consume op, input and output layout, root.
template <Consume Op, Layout In, Layout Out, Root R = Root::None> struct Transform {
  static constexpr Consume op = Op;
  static constexpr Layout in = In, out = Out;
  static constexpr Root root = R;
};

/// compose<F, G>: G consumes F's intermediate in place, in one kernel.
template <class F, class G> struct Compose {
  static_assert(F::out == G::in, "compose<F, G> needs F's output layout = G's input layout");
  using First = F;
  using Second = G;
  static constexpr Layout in = F::in, out = G::out;
};

/// The runtime collective a Collective type maps to (`supported` = false
/// for those it does not run yet), from collectives.def: each leaf's
/// Transform, each composition's Compose of its stages' Transforms.
template <class C> struct KindOf {
  static constexpr bool supported = false;
  static constexpr CollKind kind{};  // unused: `supported` is false
};
namespace leaf {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) using Name = Transform<Consume::Op, Layout::In, Layout::Out, Root::R>;
#include "purlin/collectives.def"
} // namespace leaf
#define PURLIN_KINDOF_0(Name, ...)
#define PURLIN_KINDOF_1(Name, ...)                                                                        \
  template <> struct KindOf<__VA_ARGS__> {                                                                \
    static constexpr bool supported = true;                                                               \
    static constexpr CollKind kind = CollKind::Name;                                                      \
  };
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_KINDOF_##Runs(Name, leaf::Name)
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_KINDOF_##Runs(Name, Compose<leaf::F, leaf::G>)
#include "purlin/collectives.def"
#undef PURLIN_KINDOF_0
#undef PURLIN_KINDOF_1

namespace detail {
/// Makes comm's device current for the scope of one launch; `error` is the
/// failure of cudaSetDevice (cudaSuccess when the device is current).
struct DeviceGuard {
  int previous = -1;
  cudaError_t error = cudaSuccess;
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    if (previous != device) error = cudaSetDevice(device);
  }
  ~DeviceGuard() {
    int now = -1;
    if (previous >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous) cudaSetDevice(previous);
  }
};
} // namespace detail

namespace detail {

/// Whether the latency kernel is launched with programmatic dependent launch:
/// the policy's optional `static constexpr bool programmaticLaunch` (default
/// true), and only on devices of compute capability 9.0 or newer.
template <class P> constexpr bool policyWantsPdl() {
  if constexpr (requires { P::programmaticLaunch; }) return bool(P::programmaticLaunch);
  else return true;
}
inline bool deviceSupportsPdl(int device) {
  int major = 0;
  return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
}

/// The printed host code picks the planned program and enqueues it
/// (NAME_enqueue in the generated .cu): one function for every dtype and
/// op, whose reduce sites dispatch on the call's reduction class.
template <class AtomT, class Programs>
Status enqueue(const Plan& pl, const DeviceComm& dc, const CallArgs& a, const LaunchContext& lc,
               const DirectPeers& peers) {
  return Programs::template enqueue<AtomT>()(pl, dc, peers, static_cast<const std::byte*>(a.in),
                                             static_cast<std::byte*>(a.out), lc);
}

/// The device API (device_api.cuh): fits the planned program to the CTAs
/// of the user's kernel resident with the ranks sharing the GPU. The
/// latency program runs on any grid (a warp takes every warps-th packet
/// group): its grid is capped there. The throughput program's grid is the
/// plan's (every role's CTAs resident at once, `smem` bytes of workspace
/// each): a kernel that cannot hold it is refused. Ok; Unsupported when
/// it does not fit (every rank alike); CudaError when the query failed
/// (this rank's). `error` says why.
template <int = 0>
Status fitDeviceGrid(Plan& pl, const CallArgs& a, int device, int ranksPerDevice, std::size_t smem,
                     std::string& error) {
  if (pl.latency) {
    // Ranks sharing a GPU: each may hold two grids at once (its next one,
    // let in by programmatic dependent launch, beside the one that spins),
    // as resident.cuh sizes the printed programs (kGridsPerRankWithPdl).
    const int grids = ranksPerDevice > 1 ? ranksPerDevice * kGridsPerRankWithPdl : 1;
    const int resident = residentDeviceCtas(*a.deviceLaunch, device, pl.latencyThreads, 0, grids, error);
    if (resident < 0) return Status::CudaError;
    if (resident == 0) return Status::Unsupported;
    if (pl.latencyCtas > resident) pl.latencyCtas = resident;
    return Status::Ok;
  }
  // The throughput kernel is launched without programmatic dependent
  // launch: one grid per rank.
  const int resident = residentDeviceCtas(*a.deviceLaunch, device, pl.threads, smem, ranksPerDevice, error);
  if (resident < 0) return Status::CudaError;
  if (resident < pl.ctas()) {
    if (resident > 0)
      error = "the device API's kernel: " + std::to_string(resident) + " CTAs of " + std::to_string(pl.threads) +
              " threads and " + std::to_string(smem) + " B of dynamic shared memory are resident per rank; the "
              "throughput program needs its " + std::to_string(pl.ctas()) + " at once (give the kernel "
              "__launch_bounds__(snac::kDeviceMaxThreads) and fewer registers)";
    return Status::Unsupported;
  }
  return Status::Ok;
}

} // namespace detail

/// Runs collective `Collective` with policy `P`, datapath `AtomArch` and
/// the printed programs `Programs` on `stream`. Never throws. See the file
/// comment. DeviceApi: the device API's call (NAME_launchDevice,
/// device_api.cuh): args.deviceLaunch's kernel in place of the planned
/// latency or throughput program's (never the direct program); a template
/// parameter, so that NAME's own units do not compile that path.
template <class Collective, class P, class AtomArch, class Programs, bool DeviceApi = false>
Status launch(Communicator& comm, const CallArgs& args, cudaStream_t stream) {
  using detail::report;
  (void)PurlinModuleRegistration<Collective>::registered;  // creation loads this unit's kernels (module_anchor.cuh)
  if constexpr (!KindOf<Collective>::supported) {
    return report(Status::Unsupported,
                  "purlin::snac::launch: this collective (V layouts) is not implemented by the runtime yet");
  } else {
    constexpr CollKind K = KindOf<Collective>::kind;
    using AtomT = atom::Atom<AtomArch, P::pipelineStages, P::stageBytes>;
    try {
      const DeviceComm& dc = comm.deviceComm();
      const int n = comm.size(), r = comm.rank();
      if (n < 1 || n > kMaxRanks)
        return report(Status::InvalidArgument, "purlin::snac::launch: communicator of size " + std::to_string(n));
      if (dc.state == nullptr || dc.size != n)
        return report(Status::InvalidArgument, "purlin::snac::launch: communicator has no device workspace");
      // A failed communicator stays failed (docs/runtime.md "Failure model").
      {
        std::string why;
        if (const Status failed = comm.asyncError(&why); failed != Status::Ok)
          return report(failed, "purlin::snac::launch: the communicator failed (" + why +
                                    "); destroy it and create a new one");
      }
      static_assert(isReduction(K) || Programs::reductions == 0, "a copy's programs compile no reduction class");
      if constexpr (isReduction(K)) {
        if (isValid(args.dtype) && isValid(args.op) && !reducesPair(Programs::reductions, args.dtype, args.op))
          return report(Status::Unsupported, std::string("purlin::snac::launch<") + toString(K) +
                                                 ">: the policy compiles no reduction class for " +
                                                 dtypeName(args.dtype) + " " + toString(args.op) +
                                                 " (its reductions masks: purlinc's instantiation table)");
      }
      // The device API (device_api.cuh): a user's kernel compiled for one
      // pair runs no other; its program reads no counts in device memory.
      if constexpr (DeviceApi) {
        if (args.deviceLaunch == nullptr)
          return report(Status::InvalidArgument, "purlin::snac::launch: the device API's call names no kernel");
        if (args.countsOnDevice)
          return report(Status::InvalidArgument, std::string("purlin::snac::launch<") + toString(K) +
                                                     ">: the device API takes no counts in device memory");
        const int pair = args.deviceLaunch->pair;
        if (isReduction(K) && pair != kAnyPair && (!isValid(args.dtype) || !isValid(args.op) ||
                                                   pairIndex(args.dtype, args.op) != pair))
          return report(Status::InvalidArgument, std::string("purlin::snac::launch<") + toString(K) +
                                                     ">: the device API's kernel is compiled for another (dtype, op) "
                                                     "pair than this call's " + dtypeName(args.dtype) + " " +
                                                     toString(args.op) + " (NAME_device<Pair>)");
      }
      // A refusal of this rank's own (its pointers, its stream, its
      // AllToAllV row, a CUDA error): its peers may be making the call, so
      // it fails the communicator on every rank (Communicator::refuseCall;
      // docs/runtime.md "A refusal on one rank"). A refusal of what every
      // rank passes alike (kind, counts, dtype, op, root, the policy) is
      // every rank's and needs no telling: the communicator stays usable.
      const auto refuseOwn = [&](Status st, const std::string& why) {
        report(st, why + "; a refusal of this rank's own arguments fails the communicator on every rank");
        return comm.refuseCall(st, why, stream);
      };
      WorldConsts w = P::world[n];
      // Ranks sharing a GPU: every program sized to be resident together.
      bool throughputFits = true;
      std::string fitError;
      if (comm.ranksPerDevice() > 1) {
        detail::DeviceGuard onDevice(comm.device());  // occupancy queries and attributes of this device
        if (onDevice.error != cudaSuccess)
          return refuseOwn(Status::CudaError, std::string("purlin::snac::launch: cudaSetDevice(") +
                                                  std::to_string(comm.device()) + "): " + cudaGetErrorString(onDevice.error));
        if (Status s = detail::fitColocated<K, AtomT, Programs>(comm, w, throughputFits, fitError); s != Status::Ok) {
          const std::string why = std::string("purlin::snac::launch<") + toString(K) + ">: " + fitError;
          return s == Status::CudaError ? refuseOwn(s, why) : report(s, why);
        }
      }
      std::size_t capacity = dc.stagingHalfBytes;
      if (P::stagingBytes != 0 && P::stagingBytes < capacity) capacity = P::stagingBytes;
      Plan pl;
      std::string error;
      using Rules = typename Programs::Rules;  // the call plan's rules purlinc printed (NAME.plan.h)
      RefusalScope scope = RefusalScope::Shared;
      Status s = makePlan(K, n, r, args, w, capacity, dc.packetHalfBytes, pl, error, P::pipelineStages, Rules{}, &scope);
      if (s != Status::Ok) return scope == RefusalScope::Own ? refuseOwn(s, error) : report(s, error);
      if (pl.empty) return Status::Ok;
      detail::DeviceGuard guard(comm.device());
      if (guard.error != cudaSuccess)
        return refuseOwn(Status::CudaError, std::string("purlin::snac::launch: cudaSetDevice(") +
                                                std::to_string(comm.device()) + "): " + cudaGetErrorString(guard.error));
      // The plan log (CommOptions::logPlans): once per distinct call shape.
      DirectBy directBy = DirectBy::Capture;
      const auto logPlan = [&] {
        if (!comm.logPlans()) return;
        if (const uint64_t key = planShapeKey(pl, directBy); comm.firstOfShape(key))
          comm.logPlan(key, std::string(toString(K)) + " " + std::to_string(pl.msgBytes) + " B " + toString(pl.dtype),
                       describePlan(pl, w, directBy));
      };
      // A V call with counts in device memory (docs/device-counts.md): the
      // counts kernel (device_counts.cuh) on this call's stream, from the
      // call's pointers and the host's hash of what every rank passes alike.
      CountsLaunch counts{dc, {}};
      if (pl.deviceCounts) {
        DeviceCountsCall& c = counts.call;
        c.kind = K, c.n = n, c.rank = r, c.elemSize = pl.elemSize, c.maxCount = args.maxCount;
        c.counts = args.counts;
        c.sendCounts = args.sendCounts, c.sendDispls = args.sendDispls;
        c.recvCounts = args.recvCounts, c.recvDispls = args.recvDispls;
        c.base = callCheckOf(K, n, args);
      }
      if constexpr (isVariable(K)) {  // only the V forms compile the counts kernels
        if (n == 1 && pl.deviceCounts) {  // its block to itself, at the offsets its counts give
          logPlan();
          const std::size_t blocks = pl.msgBytes / (std::size_t(256) * 16 * 4) + 1;
          return launchCountsLocalCopy(stream, int(blocks < 32 ? blocks : 32), dc, counts.call,
                                       static_cast<const std::byte*>(args.in), static_cast<std::byte*>(args.out));
        }
      }
      if (n == 1) {  // every collective is a copy of the input on one rank: its block to itself
        logPlan();
        if constexpr (DeviceApi) {  // the user's kernel runs; NAME_device copies (deviceLocalCall)
          LaunchContext lc;
          lc.stream = stream;
          lc.pdl = detail::policyWantsPdl<P>() && detail::deviceSupportsPdl(comm.device());
          lc.collective = toString(K);
          // Whole warps (the user's kernel may shuffle over full warps), at most 1024.
          pl.latencyThreads = w.latencyThreads > 0 ? (w.latencyThreads + 31) / 32 * 32 : kDeviceLocalThreads;
          if (pl.latencyThreads > 1024) pl.latencyThreads = 1024;
          pl.latencyCtas = w.latencyCtas > 0 && w.latencyCtas < kDeviceLocalCtas ? w.latencyCtas : kDeviceLocalCtas;
          std::string why;
          pl.latency = true;  // the grid fitDeviceGrid caps: the latency shape above
          if (const Status s = detail::fitDeviceGrid(pl, args, comm.device(), 1, 0, why); s != Status::Ok)
            return report(s, lc.who() + why);
          const DeviceCall call{dc, pl, static_cast<const std::byte*>(args.in), static_cast<std::byte*>(args.out)};
          return launchDeviceKernel(lc, *args.deviceLaunch, call, pl.latencyCtas, pl.latencyThreads, 0, lc.pdl);
        }
        const auto* src = static_cast<const std::byte*>(args.in) + pl.txOff[0];
        auto* dst = static_cast<std::byte*>(args.out) + pl.rxOff[0];
        if (src == dst || pl.txLen[0] == 0) return Status::Ok;
        cudaError_t err = cudaMemcpyAsync(dst, src, pl.txLen[0], cudaMemcpyDeviceToDevice, stream);
        if (err != cudaSuccess)
          return report(Status::CudaError, std::string("purlin::snac::launch: cudaMemcpyAsync: ") + cudaGetErrorString(err));
        return Status::Ok;
      }
      // Direct program: for calls being captured into a CUDA graph (the
      // peers' output buffers are mapped once, at capture; replays reuse
      // them), and for eager calls whose output lies in a registered buffer
      // (Communicator::registerBuffer). Rules::direct is the same on every
      // rank; a capture's eligibility is agreed inside registerDirect, a
      // registered call's by the registration contract (same offset, same
      // alignment on every rank). Whether a call wants it (the same on
      // every rank) and its copy-engine form: the printed rules.
      DirectPeers peers;
      if (Programs::hasDirect && !pl.deviceCounts && !DeviceApi && Rules::direct(pl, w)) {
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        cudaError_t err = cudaStreamIsCapturing(stream, &capture);
        if (err != cudaSuccess) {
          (void)cudaGetLastError();
          return refuseOwn(Status::CudaError, std::string("purlin::snac::launch: cudaStreamIsCapturing: ") +
                                                  cudaGetErrorString(err));
        }
        std::size_t outBytes = 0;  // the end of this rank's last received block
        for (int k = 0; k < n; ++k)
          outBytes = pl.rxOff[k] + pl.rxLen[k] > outBytes ? pl.rxOff[k] + pl.rxLen[k] : outBytes;
        // Copy-engine form (Rules::engine): captured calls only (their
        // output sizes are compared at capture, before any copy), with
        // ranks sharing a GPU only while their streams fit its hardware
        // queues.
        bool engine = Rules::engine(pl, w, EngineFacts{comm.options().checked, streamMemOpsAvailable(),
                                                       detail::engineFitsQueues(comm.ranksPerDevice()), true});
        bool direct = false;
        // Invalidated captures still take part in the exchange (as not
        // eligible), so that peers capturing this call are not left waiting.
        if (capture != cudaStreamCaptureStatusNone) {
          const bool eligible = capture == cudaStreamCaptureStatusActive && directEligible(pl, args);
          direct = comm.registerDirect(args.out, outBytes, eligible, peers.out, &engine, stream);  // engine: ANDed
        } else if (RegisteredPlace place;
                   comm.registeredPeers(args.out, outBytes, peers.out, &place) && directEligible(pl, args)) {
          // Not captured, so the SM form (Rules::engine): a copy-engine
          // form's copies would be enqueued here, on the host, before its
          // arrive kernel compares the peers' tags, and would still write
          // into a peer whose call differs.
          engine = Rules::engine(pl, w, EngineFacts{comm.options().checked, streamMemOpsAvailable(),
                                                    comm.ranksPerDevice() == 1, false});
          // Every rank writes into its peers' registrations at its own
          // offset: the tags carry the registration and the offset, so a
          // peer whose output is elsewhere is found before any kernel
          // writes.
          mixRegisteredTags(pl, place.handle, place.offset);
          direct = true;
          directBy = DirectBy::Registration;
        }
        if (direct) planDirect(pl, w, engine, Rules::engineReduces);
      }

      logPlan();
      if (!pl.latency && !pl.direct && !throughputFits)
        return report(Status::Unsupported, std::string("purlin::snac::launch<") + toString(K) + ">: " + fitError);
      if constexpr (DeviceApi) {  // before the call check: a refusal here moves nothing
        std::string why;
        const Status s =
            detail::fitDeviceGrid(pl, args, comm.device(), comm.ranksPerDevice(), AtomT::kWorkspaceBytes, why);
        const std::string message = std::string("purlin::snac::launch<") + toString(K) + ">: " + why;
        if (s == Status::CudaError) return refuseOwn(s, message);
        if (s != Status::Ok) return report(s, message);
      }
      if (pl.ctas() > kMaxEpochSlots)
        return report(Status::InvalidArgument, std::string("purlin::snac::launch<") + toString(K) + ">: " +
                                                   std::to_string(pl.ctas()) + " CTAs; a collective kernel has at most " +
                                                   std::to_string(kMaxEpochSlots) + " (per-CTA epochs)");
      // Checked mode: one stream for eager calls, and every call compared
      // across ranks on the device.
      if (comm.options().checked) {
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) (void)cudaGetLastError();
        if (capture == cudaStreamCaptureStatusNone && !comm.sameStream(stream))
          return refuseOwn(Status::InvalidArgument, std::string("purlin::snac::launch<") + toString(K) +
                                                        ">: checked mode: this call's stream differs from the previous "
                                                        "call's; calls on one communicator must be ordered on one stream");
        // The call check runs before the program (epoch.cuh callCheckKernel);
        // a device-count call's counts kernel checks the call too.
        if (!pl.deviceCounts) {
          callCheckKernel<><<<1, 32, 0, stream>>>(dc, callCheckFor(K, n, r, args));
          if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
            return refuseOwn(Status::CudaError, std::string("purlin::snac::launch<") + toString(K) +
                                                    ">: the call check kernel: " + cudaGetErrorString(e));
        }
      }

      const bool pdl = detail::policyWantsPdl<P>() && detail::deviceSupportsPdl(comm.device());
      cudaEvent_t chunkEvents[Communicator::kCaptureChunkEvents];
      for (int i = 0; i < Communicator::kCaptureChunkEvents; ++i)
        chunkEvents[i] = static_cast<cudaEvent_t>(comm.captureChunkEvent(i));
      LaunchContext lc;
      lc.stream = stream;
      lc.pdl = pdl;
      lc.collective = toString(K);
      lc.side = static_cast<cudaStream_t>(comm.captureSideStream());
      lc.fork = static_cast<cudaEvent_t>(comm.captureForkEvent());
      lc.join = static_cast<cudaEvent_t>(comm.captureJoinEvent());
      lc.chunks = chunkEvents;
      lc.chunkEvents = Communicator::kCaptureChunkEvents;
      if constexpr (isVariable(K))
        if (pl.deviceCounts) lc.prelude = launchCountsKernel<>, lc.preludeArg = &counts;  // right before the program
      if constexpr (DeviceApi) {  // the user's kernel in place of the planned program's (launchProgram)
        if (pl.direct)  // never planned above: the direct program's launches take other parameters
          return report(Status::Internal, lc.who() + "the device API planned the direct program");
        lc.device = launchDeviceProgram<>;
        lc.deviceArg = args.deviceLaunch;
      }
      Status st = detail::enqueue<AtomT, Programs>(pl, dc, args, lc, peers);
      if (st == Status::Ok && pl.direct && directBy == DirectBy::Registration) comm.countRegisteredCall();
      // A CUDA error enqueueing the program is this rank's (the printed
      // code's refusals, e.g. of push lanes, come from the policy: shared).
      if (st == Status::CudaError) return refuseOwn(st, lastError());
      return st;
    } catch (const Error& e) {
      return report(e.status(), std::string("purlin::snac::launch: ") + e.what());
    } catch (const std::exception& e) {
      return report(Status::Internal, std::string("purlin::snac::launch: ") + e.what());
    }
  }
}

} // namespace purlin::snac
