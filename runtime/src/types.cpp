/// @file types.cpp
/// @brief Names of the shared enums of types.h.
#include "purlin/types.h"

namespace purlin {

const char *toString(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  }
  return "unknown-dtype";
}

const char *toString(RedOp op) {
  switch (op) {
  case RedOp::Sum: return "sum";
  case RedOp::Max: return "max";
  case RedOp::Min: return "min";
  }
  return "unknown-op";
}

const char *toString(Status s) {
  switch (s) {
  case Status::Ok: return "Ok";
  case Status::InvalidArgument: return "InvalidArgument";
  case Status::Unsupported: return "Unsupported";
  case Status::CudaError: return "CudaError";
  case Status::BootstrapError: return "BootstrapError";
  case Status::Timeout: return "Timeout";
  case Status::Internal: return "Internal";
  case Status::Aborted: return "Aborted";
  case Status::RemoteError: return "RemoteError";
  }
  return "UnknownStatus";
}

} // namespace purlin
