/// @file Signature.h
/// @brief The generated host API of one collective: the C++ and C parameter
/// lists and the documentation of each buffer's size, by collective kind.
#pragma once

#include <string>
#include <vector>

#include "codegen/CollectiveKind.h"

namespace purlin::codegen {

/// One parameter: C++ and C spelling of its type, its name, and how the
/// C wrapper converts it to the C++ call ("" = pass as is).
struct Param {
  std::string cxxType;
  std::string cType;
  std::string name;
  std::string toCxx; ///< e.g. "static_cast<purlin::DType>(dtype)"
};

/// The host functions of a collective, by how each takes its sizes: its
/// kind's (sizeArgs), and for a V collective also the form with its counts
/// in device memory (SizeArgs::DeviceCounts / DeviceSendRecvCounts,
/// docs/device-counts.md).
std::vector<SizeArgs> apiForms(CollectiveKind k);
/// What a form's function name adds to the collective's: "" or "Device".
std::string formSuffix(SizeArgs sizes);

/// The parameters after the communicator, in order: in, out, count |
/// counts | sendCounts+recvCounts (+ maxCount), dtype, op, [root], stream.
/// `sizes`: one of apiForms(k) (default: the kind's own).
std::vector<Param> hostParams(CollectiveKind k, SizeArgs sizes);
std::vector<Param> hostParams(CollectiveKind k);

/// Doc-comment lines for the header: buffer sizes, what `count` means,
/// whether op is used, in-place rules. Each line without the "/// " prefix.
std::vector<std::string> hostDoc(CollectiveKind k, SizeArgs sizes);
std::vector<std::string> hostDoc(CollectiveKind k);

} // namespace purlin::codegen
