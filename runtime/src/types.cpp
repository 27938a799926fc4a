/// @file types.cpp
/// @brief Names of the shared enums of types.h.
#include "purlin/types.h"

namespace purlin {

const char *toString(DType t) { return dtypeName(t); }

const char *toString(RedOp op) { return redOpName(op); }

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
