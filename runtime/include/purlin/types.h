/// @file types.h
/// @brief Types shared by host and device code of the runtime: element
/// types, reduction ops, status codes, limits. Plain C++; no CUDA needed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace purlin {

/// Largest world size the runtime supports (one NVLink domain of 8 GPUs).
inline constexpr int kMaxRanks = 8;

/// Element types of reductions (copy collectives move any bytes).
enum class DType : int { F32 = 0, F16 = 1, BF16 = 2 };
/// Reduction operators. Accumulation is fp32, in ascending rank order.
enum class RedOp : int { Sum = 0, Max = 1, Min = 2 };

/// Status codes of the C ABI and of non-throwing calls.
enum class Status : int {
  Ok = 0,
  InvalidArgument = 1,   ///< null pointer, bad count, wrong world size, ...
  Unsupported = 2,       ///< dtype/op/arch the collective does not support
  CudaError = 3,         ///< a CUDA call failed
  BootstrapError = 4,    ///< the rendezvous between ranks failed
  Timeout = 5,           ///< a checked-mode spin-wait expired
  Internal = 6,          ///< a bug in purlin
  Aborted = 7,           ///< Communicator::abort() on this rank or a peer
  RemoteError = 8,       ///< a peer failed (its wait timed out, or its call differed): like ncclRemoteError
};

inline constexpr std::size_t dtypeSize(DType t) {
  return t == DType::F32 ? 4 : 2;
}
const char *toString(DType);
const char *toString(RedOp);
const char *toString(Status);

} // namespace purlin
