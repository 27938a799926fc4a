/// @file resident.cuh
/// @brief Ranks that share a GPU (Communicator::ranksPerDevice() > 1, e.g.
/// several in-process ranks on one device): the CTAs of every program spin
/// on signals that CTAs of the other ranks send, so all CTAs of all ranks on
/// one GPU must be resident at once, or the spinning ones starve the ones
/// they wait for (a hang, or a checked-mode timeout). fitColocated(), with
/// this rank's device current, sizes the policy's CTA counts before the
/// call is planned, so that ranksPerDevice ranks' grids fit the GPU
/// together (occupancy API), and says when a program cannot fit at all. The counts depend only on the
/// kernel, the policy, the GPU model and ranksPerDevice, so every rank
/// computes the same ones (the communicator checks that ranks sharing GPUs
/// have GPUs of one model). With one rank per GPU nothing changes.
#pragma once

#include <cstddef>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "purlin/host/communicator.h"
#include "purlin/host/device_queues.h"
#include "purlin/snac/direct.cuh"
#include "purlin/snac/plan.h"
#include "purlin/snac/program_launch.cuh"

namespace purlin::snac::detail {

/// CTAs of `kernel` (blockDim `threads`, `smem` dynamic shared bytes) one
/// rank may launch so that `sharing` ranks' grids are resident together on
/// a GPU of `sms` multiprocessors; 0 if not even one CTA each fits; -1 (and
/// `error`) if the occupancy query fails. With `memo`, the query runs once
/// per communicator (Communicator::occupancy), not once per call.
template <class Kernel>
int residentCtas(Kernel kernel, int threads, std::size_t smem, int sms, int sharing, std::string& error,
                 const Communicator* memo = nullptr) {
  const void* const key = reinterpret_cast<const void*>(kernel);
  if (memo)
    if (const int known = memo->occupancy(key, threads, smem); known >= 0) return known * sms / sharing;
  int perSm = 0;
  if (smem > 48 * 1024) {
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        e != cudaSuccess) {
      (void)cudaGetLastError();
      error = std::string("cudaFuncSetAttribute: ") + cudaGetErrorString(e);
      return -1;
    }
  }
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, smem);
      e != cudaSuccess) {
    (void)cudaGetLastError();
    error = std::string("cudaOccupancyMaxActiveBlocksPerMultiprocessor: ") + cudaGetErrorString(e);
    return -1;
  }
  if (memo) memo->setOccupancy(key, threads, smem, perSm);
  return perSm * sms / sharing;
}

/// The latency and direct kernels are launched with programmatic dependent
/// launch: a rank's next grid may be scheduled (and sit in its grid
/// dependency wait) while its current one still spins on the peers, so each
/// rank may hold two grids of such a kernel on the GPU at once.
inline constexpr int kGridsPerRankWithPdl = 2;

/// The most ranks sharing one GPU that the copy-engine form has run with.
/// Measured: 4 ranks pass (one H200, 8 hardware queues); 8 ranks hang with
/// 8 queues (one H200) and with 16 and 32 (one H100, 2026-12-06,
/// bench/results/2026-12-06-s12-device), so the queue count alone does not
/// explain it (a graph's branches run on streams the driver picks). Ranks
/// sharing a GPU are a test setup; one rank per GPU is unaffected.
inline constexpr int kMaxEngineSharing = 4;

/// Whether the copy-engine form of the direct program may run with
/// `sharing` ranks per GPU: it forks each call onto a second stream, and
/// when the ranks' streams outnumber the device's hardware queues, two of
/// them share a queue, so a rank's arrive kernel (spinning on its peers')
/// can sit in front of a peer's in the same queue; and past
/// kMaxEngineSharing ranks it hung whatever the queue count. The launcher
/// ANDs the answer over all ranks (registerDirect), so every rank takes the
/// same form.
inline bool engineFitsQueues(int sharing) {
  return sharing <= 1 || (sharing <= kMaxEngineSharing && 2 * sharing <= deviceQueues());
}

/// The sizing of the kernels that would run.
template <CollKind K, class AtomT, class Programs>
Status fitColocatedKernels(int sms, int sharing, int n, WorldConsts& w, bool& throughputFits, std::string& error,
                           const Communicator* memo = nullptr) {
  throughputFits = true;
  // Latency program: fewer CTAs only mean more packet groups per warp.
  if (w.latencyCtas > 0 && w.latencyThreads > 0) {
    const int threads = w.latencyThreads > 32 ? w.latencyThreads / 32 * 32 : 32;
    // The fewest resident of every kernel the launch may pick for n ranks (W8
    // or not, and each pair with kernels of its own: Programs::forEachPair).
    int fewest = -1;
    bool failed = false;
    Programs::forEachPair([&](auto pair) {
      for (const auto k : {Programs::template latency<true, decltype(pair)::value>(n),
                           Programs::template latency<false, decltype(pair)::value>(n)}) {
        const int c = residentCtas(k, threads, 0, sms, sharing, error, memo);
        if (c < 0) failed = true;
        else if (fewest < 0 || c < fewest) fewest = c;
      }
    });
    if (failed) return Status::CudaError;
    const int budget = fewest / kGridsPerRankWithPdl;
    if (budget < 1) w.latencyCtas = 0;  // never the latency program
    else if (w.latencyCtas > budget) w.latencyCtas = budget;
  }
  // Throughput program: the roles shrink together.
  if (w.stageCtas > 0 && w.threads > 0) {
    int budget = -1;
    bool failed = false;
    Programs::forEachPair([&](auto pair) {
      const int c = residentCtas(Programs::template throughput<AtomT, decltype(pair)::value>(), w.threads,
                                 AtomT::kWorkspaceBytes, sms, sharing, error, memo);
      if (c < 0) failed = true;
      else if (budget < 0 || c < budget) budget = c;
    });
    if (failed) return Status::CudaError;
    int roles[3] = {w.stageCtas, w.consumeCtas, isComposition(K) ? w.gatherCtas : 0};
    throughputFits = scaleRoleCtas(budget, roles, 3);
    if (throughputFits) {
      w.stageCtas = roles[0];
      w.consumeCtas = roles[1];
      if (isComposition(K)) w.gatherCtas = roles[2];
    } else {
      error = std::to_string(sharing) + " ranks share one GPU and the throughput program needs at least " +
              std::to_string(isComposition(K) ? 3 : 2) + " CTAs per rank resident at once; the GPU holds " +
              std::to_string(budget) + " per rank";
    }
  }
  // Direct program: CTA c of every rank waits on CTA c of its peers.
  if (!Programs::hasDirect) w.directCtas = -1;  // no direct program printed for this collective
  if (w.directCtas >= 0) {
    const int most = w.directCtas > 0 ? w.directCtas : kDirectCtas;
    int threads = w.directThreads > 0 ? w.directThreads : kDirectThreads;
    threads = (threads + 31) / 32 * 32;
    if (threads < 64) threads = 64;
    if (threads > kDirectMaxThreads) threads = kDirectMaxThreads;
    std::string ignored;
    int fewest = -1;
    bool failed = false;
    Programs::forEachPair([&](auto pair) {
      const int c =
          residentCtas(Programs::template direct<decltype(pair)::value>(), threads, 0, sms, sharing, ignored, memo);
      if (c < 0) failed = true;
      else if (fewest < 0 || c < fewest) fewest = c;
    });
    const int budget = failed ? 0 : fewest / kGridsPerRankWithPdl;
    if (budget < 1) w.directCtas = -1;  // staged instead
    else w.directCtas = most < budget ? most : budget;
  }
  return Status::Ok;
}

/// Sizes `w` for `comm`'s ranks sharing GPUs (see the file comment);
/// nothing to do when every rank has its own GPU. `throughputFits` is false
/// when the throughput program cannot be resident (`error` says why): the
/// launcher refuses the call if it is planned for that program.
template <CollKind K, class AtomT, class Programs>
Status fitColocated(const Communicator& comm, WorldConsts& w, bool& throughputFits, std::string& error) {
  throughputFits = true;
  const int sharing = comm.ranksPerDevice(), sms = comm.multiprocessors();
  if (sharing <= 1) return Status::Ok;
  return fitColocatedKernels<K, AtomT, Programs>(sms, sharing, comm.size(), w, throughputFits, error, &comm);
}

} // namespace purlin::snac::detail
