/// @file micro_latency.cuh
/// @brief Push vs pull latency over NVLink (paper Figure 6, left): a
/// ping-pong between one CTA on GPU 0 and one on GPU 1, each iteration one
/// message each way; one-way latency = round trip / 2.
///   push:   Atom::copy into the peer's buffer, __syncthreads, then thread 0
///           st.release.sys of the peer's flag (the barrier makes the CTA's
///           stores precede the release); the receiver polls its own flag
///           with ld.acquire.sys.
///   push+fence: as push with an extra fence.acq_rel.sys before the release
///           (measures what a redundant system fence costs).
///   pull:   thread 0 releases "my data is ready" into the peer's flag; the
///           receiver acquires it and Atom::copy-s the data from the peer.
///   packet: the latency program's form: every 8 payload bytes travel with
///           the flag in one 16-byte store {d0, f, d1, f}; the receiver's
///           threads poll their own packets until both flags match.
/// Every wait is bounded (1 s by %globaltimer); a timeout sets *err.
#pragma once

#include "micro_common.cuh"

namespace micro {

enum class Mode : int { Push = 0, Pull = 1, Packet = 2, PushFence = 3 };
inline const char* modeName(Mode m) {
  return m == Mode::Push ? "push" : m == Mode::Pull ? "pull" : m == Mode::Packet ? "packet" : "push+fence";
}

constexpr uint64_t kWaitLimitNs = 1000000000ull;

/// Thread 0 waits until *flag >= v; the CTA then proceeds. Returns false on timeout.
__device__ inline bool ctaWait(const uint64_t* flag, uint64_t v, int* err) {
  __shared__ int ok;
  if (threadIdx.x == 0) {
    ok = 1;
    const uint64_t t0 = purlin::arch::globalTimerNs();
    while (purlin::arch::ldAcquireSys(flag) < v) {
      if (purlin::arch::globalTimerNs() - t0 > kWaitLimitNs) { ok = 0; atomicExch(err, 1); break; }
    }
  }
  __syncthreads();
  return ok != 0;
}

/// One side of the ping-pong. buffers: `mine` (local, receives in push and
/// packet modes; source of the peer's pull), `peer` (the peer's `mine`),
/// `out` (local, where pulled / unpacked data lands), flags likewise.
template <class A>
__global__ void pingPong(Mode mode, std::byte* mine, std::byte* peer, std::byte* out, uint64_t* myFlag,
                         uint64_t* peerFlag, std::size_t bytes, int iters, uint64_t base, int leader, int* err) {
  extern __shared__ __align__(16) std::byte ws[];
  if constexpr (pa::kAtomCompiled<A>) {
    const std::byte* payload = out;  // what this side sends (any local bytes)
    for (int it = 1; it <= iters; ++it) {
      const uint64_t v = base + it;
      for (int phase = 0; phase < 2; ++phase) {
        const bool sending = (phase == 0) == (leader != 0);
        if (mode == Mode::Packet) {
          const uint32_t f = static_cast<uint32_t>(v);
          const std::size_t npk = (bytes + 7) / 8;
          if (sending) {
            for (std::size_t i = threadIdx.x; i < npk; i += blockDim.x) {
              const uint2 d = reinterpret_cast<const uint2*>(payload)[i];
              purlin::arch::stVolatile16(peer + 16 * i, make_uint4(d.x, f, d.y, f));
            }
          } else {
            bool timedOut = false;
            for (std::size_t i = threadIdx.x; i < npk && !timedOut; i += blockDim.x) {
              const uint64_t t0 = purlin::arch::globalTimerNs();
              uint4 p;
              do {
                p = purlin::arch::ldVolatile16(mine + 16 * i);
                if (purlin::arch::globalTimerNs() - t0 > kWaitLimitNs) { atomicExch(err, 1); timedOut = true; break; }
              } while (p.y != f || p.w != f);
              reinterpret_cast<uint2*>(out)[i] = make_uint2(p.x, p.z);
            }
            if (__syncthreads_or(timedOut)) return;
          }
        } else if (mode == Mode::Push || mode == Mode::PushFence) {
          if (sending) {
            A::copy(peer, payload, bytes, ws);
            __syncthreads();
            if (threadIdx.x == 0) {
              if (mode == Mode::PushFence) purlin::arch::fenceAcqRelSys();
              purlin::arch::stReleaseSys(peerFlag, v);
            }
          } else if (!ctaWait(myFlag, v, err)) {
            return;
          }
        } else {  // pull
          if (sending) {
            __syncthreads();
            if (threadIdx.x == 0) purlin::arch::stReleaseSys(peerFlag, v);
          } else {
            if (!ctaWait(myFlag, v, err)) return;
            A::copy(out, peer, bytes, ws);
            __syncthreads();
          }
        }
      }
    }
  } else {
    __trap();
  }
}

} // namespace micro
