/// @file types.h
/// @brief Types shared by host and device code of the runtime: element
/// types, reduction ops, status codes, limits. Plain C++; no CUDA needed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace purlin {

/// Largest world size the runtime supports (one NVLink domain of 8 GPUs).
inline constexpr int kMaxRanks = 8;

/// Element types (purlin/types.def). Copy collectives move count * size
/// bytes as they are; reductions of every dtype compute in the type's
/// accumulator (purlin/atom/elem.cuh).
enum class DType : int {
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) Name,
#include "purlin/types.def"
};
/// Reduction operators (purlin/types.def), applied in ascending rank order.
enum class RedOp : int {
#define PURLIN_REDOP(Name, name, CNAME) Name,
#include "purlin/types.def"
};
/// How many of each there are (the enums' values are 0 .. count-1).
inline constexpr int kNumDTypes = 0
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) +1
#include "purlin/types.def"
    ;
inline constexpr int kNumRedOps = 0
#define PURLIN_REDOP(Name, name, CNAME) +1
#include "purlin/types.def"
    ;

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

/// Bytes per element; 0 for a value outside the enum.
inline constexpr std::size_t dtypeSize(DType t) {
  switch (t) {
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) \
  case DType::Name: return bytes;
#include "purlin/types.def"
  }
  return 0;
}
/// The dtype's name ("f32", "i8", ...; purlin/types.def), header-only for
/// code that does not link the runtime (makePlan in the compiler);
/// "unknown-dtype" outside the enum. toString(DType) returns the same.
inline constexpr const char *dtypeName(DType t) {
  switch (t) {
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) \
  case DType::Name: return #name;
#include "purlin/types.def"
  }
  return "unknown-dtype";
}
/// The op's name ("sum", "max", ...; purlin/types.def), header-only like
/// dtypeName (policy JSON and the instantiation table spell ops so);
/// "unknown-op" outside the enum. toString(RedOp) returns the same.
inline constexpr const char *redOpName(RedOp op) {
  switch (op) {
#define PURLIN_REDOP(Name, name, CNAME) \
  case RedOp::Name: return #name;
#include "purlin/types.def"
  }
  return "unknown-op";
}
/// True for the values the enums define (a cast from a C int may not be).
inline constexpr bool isValid(DType t) { return int(t) >= 0 && int(t) < kNumDTypes; }
inline constexpr bool isValid(RedOp op) { return int(op) >= 0 && int(op) < kNumRedOps; }
const char *toString(DType);
const char *toString(RedOp);
const char *toString(Status);

} // namespace purlin
