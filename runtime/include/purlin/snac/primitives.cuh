/// @file primitives.cuh
/// @brief SNAC device primitives: notify (release) / wait (acquire) on
/// signals, the warp poll of packet-group slots, last-arriver counters, and checked
/// mode (bounded spin-waits that record a WaitError and make every CTA of
/// the kernel bail out instead of hanging).
///
/// Preconditions common to all: `dc` is the DeviceComm of the calling rank;
/// signal indices come from protocol.h. Functions named `cta*` are
/// CTA-collective (every thread calls them, with the same arguments) and
/// return the same value in every thread.
#pragma once

#include <cstdint>

#include "purlin/arch/common.cuh"
#include "purlin/device_comm.h"
#include "purlin/snac/packet_group.cuh"
#include "purlin/snac/protocol.h"

namespace purlin::snac {

/// What a wait waited on, or what ended it (WaitError::kind).
using WaitKind = WaitErrorKind;

/// True once this rank's kernels recorded a failure (the record is claimed
/// in DeviceState::failed, device memory: cheap to poll).
__device__ __forceinline__ bool aborted(const DeviceComm& dc) {
  return *reinterpret_cast<volatile uint32_t*>(&dc.state->failed) != 0;
}

/// Records this rank's first failure (later ones are dropped) in its
/// host-mapped HostStatus (Communicator::asyncError reads it with no CUDA
/// call) and, unless the failure came from a peer (which has told every
/// rank already), writes failureCode(rank, kind) into every rank's FAILED
/// signal, its own included: every wait of every rank then gives up within
/// one poll period instead of waiting on this rank.
///
/// It and SpinBound::look are inlined although they are cold: a call to an
/// out-of-line function that takes `const DeviceComm&` copies the kernel's
/// DeviceComm parameter to the stack (a 288-byte frame in every kernel)
/// and raised the printed Broadcast throughput kernel from 128 to 154
/// registers, more than 512 threads may hold: it could not launch (seen on
/// one H200, 2026-12-03).
__device__ __forceinline__ void recordWaitError(const DeviceComm& dc, WaitKind kind, uint32_t index,
                                             uint64_t expected, uint64_t observed) {
  if (atomicCAS(&dc.state->failed, 0u, 1u) != 0u) return;
  if (HostStatus* host = dc.state->host; host != nullptr) {
    volatile WaitError& e = host->error;
    e.rank = dc.rank;
    e.signal = index;
    e.kind = uint32_t(kind);
    e.expected = expected;
    e.observed = observed;
    __threadfence_system();
    e.failed = 1u;
  }
  if (kind != WaitKind::PeerFailed) {
    const uint64_t code = failureCode(dc.rank, uint32_t(kind));
    arch::fenceAcqRelSys();
    for (int q = 0; q < dc.size; ++q) arch::stRelaxedSys(dc.signals[q] + kFailedIndex, code);
  }
}

/// Polls between two looks at the failure sources (SpinBound). A wait that
/// is satisfied sooner never looks (no cost on the fast path); a wait that
/// spins looks once per ~1024 polls: one device load (FAILED), one
/// host-mapped load (abort), and in checked mode the clock.
inline constexpr uint32_t kFailurePollMask = 1023;

/// Spin-wait bookkeeping of one waiting thread. step() returns false when
/// the wait must give up: this rank or a peer failed (FAILED signal, a wait
/// of this rank's kernels), the host asked to abort (HostStatus), or, in
/// checked mode, the wait has lasted DeviceState::timeoutNs (%globaltimer).
struct SpinBound {
  uint32_t spins = 0;
  uint64_t start = 0;
  __device__ __forceinline__ bool step(const DeviceComm& dc, WaitKind kind, uint32_t index,
                                       uint64_t expected, uint64_t observed) {
    if ((++spins & kFailurePollMask) != 0) return true;
    return look(dc, kind, index, expected, observed);
  }
  __device__ __forceinline__ bool look(const DeviceComm& dc, WaitKind kind, uint32_t index, uint64_t expected,
                                    uint64_t observed) {
    if (aborted(dc)) return false;  // another wait of this rank gave up
    const uint64_t failed = arch::ldRelaxedSys(dc.signals[dc.rank] + kFailedIndex);
    if (failed != 0) {
      recordWaitError(dc, WaitKind::PeerFailed, uint32_t(failureOrigin(failed)), failureKind(failed), 0);
      return false;
    }
    const HostStatus* host = dc.state->host;
    if (host != nullptr && *reinterpret_cast<const volatile uint32_t*>(&host->abortRequested) != 0) {
      recordWaitError(dc, WaitKind::Aborted, index, expected, observed);
      return false;
    }
    if (const uint64_t timeoutNs = dc.state->timeoutNs; timeoutNs != 0) {
      const uint64_t now = arch::globalTimerNs();
      if (start == 0) start = now;
      else if (now - start > timeoutNs) {
        recordWaitError(dc, kind, index, expected, observed);
        return false;
      }
    }
    return true;
  }
};

/// Checked mode: false if this rank's kernels already failed, so that a
/// wait whose value is there already does not let a failed call go on
/// (a call-check mismatch must stop every data access). One branch on a
/// kernel parameter otherwise.
__device__ __forceinline__ bool checkedFailed(const DeviceComm& dc) {
  return dc.checked != 0 && aborted(dc);
}

/// Wait (acquire, system scope) until this rank's signal `index` >= `expected`.
/// One thread. Returns false if the wait gave up (checked mode).
__device__ __forceinline__ bool waitSignal(const DeviceComm& dc, uint32_t index, uint64_t expected) {
  const uint64_t* sig = dc.signals[dc.rank] + index;
  SpinBound bound;
  uint64_t v;
  while ((v = arch::ldAcquireSys(sig)) < expected)
    if (!bound.step(dc, WaitKind::Signal, index, expected, v)) return false;
  return !checkedFailed(dc);
}

/// CTA-collective wait: thread 0 waits (acquire), then a barrier orders the
/// whole CTA's later accesses after it. Returns false in every thread if the
/// wait gave up.
__device__ __forceinline__ bool ctaWaitSignal(const DeviceComm& dc, uint32_t index, uint64_t expected) {
  int ok = 1;
  if (threadIdx.x == 0) ok = waitSignal(dc, index, expected);
  return __syncthreads_and(ok) != 0;
}

/// Notify (release, system scope): writes `value` into rank `dst`'s signal
/// `index`. The fence first publishes everything this thread has observed
/// (other threads' writes ordered before it by a barrier or an acq_rel RMW).
/// One thread.
__device__ __forceinline__ void notify(const DeviceComm& dc, int dst, uint32_t index, uint64_t value) {
  arch::fenceAcqRelSys();
  arch::stReleaseSys(dc.signals[dst] + index, value);
}

/// Notify every rank (itself included when `includeSelf`).
__device__ __forceinline__ void notifyAll(const DeviceComm& dc, uint32_t index, uint64_t value, bool includeSelf) {
  arch::fenceAcqRelSys();
  for (int q = 0; q < dc.size; ++q)
    if (includeSelf || q != dc.rank) arch::stReleaseSys(dc.signals[q] + index, value);
}

/// Last-arriver counter: CTA-collective. Each of `ctas` CTAs arrives once per
/// use after its slice; returns true in every thread of exactly one CTA, the
/// last to arrive, after it reset the counter to 0 (ready for the next use).
/// The acq_rel RMW at gpu scope orders the other CTAs' writes before the
/// last arriver's subsequent (release) notify.
__device__ __forceinline__ bool ctaArriveLast(const DeviceComm& dc, uint32_t counter, int ctas) {
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    arch::fenceAcqRelSys();
    uint32_t old = arch::atomAddAcqRelGpu(&dc.state->counters[counter], 1u);
    last = old == uint32_t(ctas - 1);
    if (last) atomicExch(&dc.state->counters[counter], 0u);
  }
  __syncthreads();
  return last != 0;
}

// ---------------------------------------------------------------------------
// Packets (latency program).
// ---------------------------------------------------------------------------

/// Packet region of source `src` in rank `dst`'s packet half `half`.
__device__ __forceinline__ Packet* packetRegion(const DeviceComm& dc, int dst, int half, int src,
                                                std::size_t perSource) {
  Packet* base = dc.packets[dst] + std::size_t(half) * (dc.packetHalfBytes / sizeof(Packet));
  return base + std::size_t(src) * perSource;
}

/// Cycles between a lane's two poll loads of a staggered round
/// (warpPollSlot), about a third of an L2 round trip (~400 cycles at 1.98
/// GHz, bench/NOTES.md E12).
inline constexpr long long kPollStaggerCycles = 120;

/// Spins for `cycles` SM clock cycles (no memory access).
__device__ __forceinline__ void spinCycles(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

/// How warpPollSlot's two loads per round are placed (measured per
/// program with two ranks, bench/NOTES.md E13 runs 1-3, 9 and 10):
///  - First: the first pair kPollStaggerCycles apart; then each load is
///    reissued right after it was checked. As compiled (nvcc 13.0, sm_80 and
///    sm_90) ptxas gives the loads one scoreboard, so each check waits for
///    both loads of its round and after the first round the pair is a few
///    cycles apart. The copy programs use it: against one load per round,
///    -0.04 to -0.08 us per call at 64-512 KiB; at 1-4 KiB about even for
///    AllGather, -0.01 to -0.08 for AllToAll. EveryRound cost AllGather
///    +0.06 to +0.08 at 64-512 KiB; for AllToAll it was mixed (-0.08 to
///    +0.03 over sizes and sessions), so the copy programs share First.
///  - EveryRound: every round issues a load, spins kPollStaggerCycles,
///    issues the second, then checks both. The reduce programs use it:
///    against First, ReduceScatter -0.06 to -0.12 us per call and
///    AllReduce -0.07 to -0.15 at 1-64 KiB, even at 512 KiB.
/// A slot stays full until its lane clears it, so the first load of a
/// round seeing it full implies the second does too: with one scoreboard
/// the second sample decides, and the first is one more sample only in
/// First's first round. Why either form is faster than one load per round
/// is not separated (E13); for more than two ranks neither is measured.
enum class PollStagger { First, EveryRound };

/// Warp-collective poll of one slot per lane (packet groups,
/// packet_group.cuh): spins until both words of every lane's slot are full,
/// then empties the lane's own slot (a store after its loads of the same
/// address) and returns the words read. `index` names the slot in a checked
/// wait's error. Returns false in every lane if a wait gave up (checked mode).
///
/// Each lane samples its slot with two loads per round, placed as S says.
/// Either load seeing the slot full holds this call's packet
/// (packet_group.cuh); a load still in flight when the lane clears the slot
/// reads it before the clear (same address, program order) and its value
/// is dropped. A slot already full when polled costs the stagger (~60 ns)
/// more than one load would; with more than two ranks the later peers'
/// packets are often there already (unmeasured: no such machine). A checked
/// wait that gives up reports the full bits of the last sample it checked.
template <PollStagger S>
__device__ __forceinline__ bool warpPollSlot(const DeviceComm& dc, Packet* slot, uint32_t index, SlotWords& w) {
  // Each lane spins on its own slot; the vote below is where the warp
  // converges again (every lane's slot full, or some wait gave up).
  SpinBound bound;
  bool gaveUp = false;
  if constexpr (S == PollStagger::EveryRound) {
    for (;;) {
      const SlotWords s0 = slotLoad(slot);
      spinCycles(kPollStaggerCycles);
      const SlotWords s1 = slotLoad(slot);
      if (slotFull(s0)) {
        w = s0;
        break;
      }
      if (slotFull(s1)) {
        w = s1;
        break;
      }
      if (!bound.step(dc, WaitKind::Packet, index, 3, (s1.lo >> 63) | ((s1.hi >> 63) << 1))) {
        gaveUp = true;
        break;
      }
    }
  } else {
    SlotWords s0 = slotLoad(slot);
    spinCycles(kPollStaggerCycles);
    SlotWords s1 = slotLoad(slot);
    for (;;) {
      if (slotFull(s0)) {
        w = s0;
        break;
      }
      s0 = slotLoad(slot);
      if (slotFull(s1)) {
        w = s1;
        break;
      }
      const uint64_t seen = (s1.lo >> 63) | ((s1.hi >> 63) << 1);  // the sample just checked
      s1 = slotLoad(slot);
      if (!bound.step(dc, WaitKind::Packet, index, 3, seen)) {
        gaveUp = true;
        break;
      }
    }
  }
  if (__any_sync(~0u, gaveUp || checkedFailed(dc))) return false;
  slotClear(slot);
  return true;
}

} // namespace purlin::snac
