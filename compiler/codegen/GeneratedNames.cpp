/// @file GeneratedNames.cpp
/// @brief Collision and shadowing checks of identifiers derived from alias names.
#include "codegen/GeneratedNames.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "codegen/Spelling.h"

namespace purlin::codegen {

const std::vector<std::string> &reservedGeneratedNames() {
  // Looked up unqualified inside namespace purlin::gen::<ns> by the generated
  // header and source (EmitHeader.cpp, EmitSource.cpp, Signature.cpp): a
  // function or namespace of that name declared there hides them and the
  // output does not compile (checked with nvcc for each name, as alias and
  // as namespace: the types break as either, snac and std as a namespace;
  // both spellings are reserved). CallArgs (snac::CallArgs, the runtime's
  // argument block) is reserved with them although the emitter qualifies it.
  static const std::vector<std::string> names = {"snac",  "std",   "Status",   "Communicator",
                                                 "DType", "RedOp", "CallArgs", "cudaStream_t"};
  return names;
}

const std::vector<std::string> &reservedCNames() {
  // Every purlin_* identifier of runtime/include/purlin/purlin.h (the C API
  // the generated header includes).
  static const std::vector<std::string> names = {
      "purlin_comm",          "purlin_comm_abort",  "purlin_comm_async_error", "purlin_comm_check",
      "purlin_comm_create_by_id", "purlin_comm_create_from_env", "purlin_comm_create_in_group",
      "purlin_comm_create_unix", "purlin_comm_deregister", "purlin_comm_destroy", "purlin_comm_device",
      "purlin_comm_options_default", "purlin_comm_refuse_call", "purlin_comm_register", "purlin_comm_release_direct",
      "purlin_comm_options_t", "purlin_comm_rank",  "purlin_comm_size",
      "purlin_comm_t",        "purlin_comm_unwrap", "purlin_dtype_name", "purlin_dtype_size", "purlin_dtype_t",
      "purlin_get_unique_id", "purlin_group", "purlin_group_create", "purlin_group_destroy", "purlin_group_t",
      "purlin_collective",    "purlin_collective_t", "purlin_last_error", "purlin_redop_name",  "purlin_redop_t",
      "purlin_preload_kernels", "purlin_status_string",
      "purlin_status_t",      "purlin_unique_id_t", "purlin_version"};
  return names;
}

namespace {

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

/// Why `part` cannot be spelled into the generated header, or nullptr:
/// identifiers C and C++ reserve to the implementation (a double
/// underscore anywhere, or an underscore and a capital first: __global__,
/// _Bool), and the macros of the C, C++ and CUDA headers the generated code
/// includes, or of GNU mode (linux, unix).
const char *implementationName(const std::string &part) {
  if (part.find("__") != std::string::npos ||
      (part.size() > 1 && part[0] == '_' && std::isupper(static_cast<unsigned char>(part[1]))))
    return "an identifier C and C++ reserve to the implementation (a double underscore, or _ and a capital)";
  static const char *const macros[] = {
      "NULL",     "errno",    "assert",      "offsetof",     "EOF",          "stdin",        "stdout",
      "stderr",   "linux",    "unix",        "i386",         "BUFSIZ",       "FILENAME_MAX", "RAND_MAX",
      "EXIT_SUCCESS", "EXIT_FAILURE", "CHAR_BIT", "SIZE_MAX", "INFINITY",  "NAN",          "HUGE_VAL",
      "MB_LEN_MAX", "SEEK_SET", "SEEK_CUR",   "SEEK_END",     "TMP_MAX",      "CLOCKS_PER_SEC", "MB_CUR_MAX",
      "CUDART_VERSION", "CUDA_VERSION"};
  for (const char *m : macros)
    if (part == m) return "a macro of the C, C++ or CUDA headers the generated code includes";
  return nullptr;
}

} // namespace

std::optional<NameClash> checkGeneratedNames(const std::vector<const Collective *> &collectives) {
  std::map<std::string, const Collective *> byFlat;
  for (const Collective *c : collectives) {
    if (!c) continue;
    for (const std::string &part : nameParts(c->name)) {
      if (const char *why = implementationName(part))
        return NameClash{"the alias name '" + c->name + "' uses '" + part + "', " + why +
                             "; the generated header would not compile: rename the alias",
                         c->loc};
      if (contains(reservedGeneratedNames(), part))
        return NameClash{"the alias name '" + c->name + "' uses '" + part +
                             "', which the generated code needs for itself (reserved in generated code: " +
                             "snac, std, Status, Communicator, DType, RedOp, CallArgs, cudaStream_t); "
                             "rename the alias or its namespace",
                         c->loc};
    }
    const std::string cname = cFunctionName(c->name);
    if (contains(reservedCNames(), cname))
      return NameClash{"the alias name '" + c->name + "' would generate the C function '" + cname +
                           "', which purlin/purlin.h already declares; rename the alias",
                       c->loc};
    auto [it, fresh] = byFlat.emplace(flatName(c->name), c);
    if (!fresh)
      return NameClash{"the aliases '" + it->second->name + "' (line " + std::to_string(it->second->loc.line) +
                           ") and '" + c->name + "' both generate '" + cname + "' and '" + flatName(c->name) +
                           "_Policy'; rename one of them",
                       c->loc};
  }
  return std::nullopt;
}

} // namespace purlin::codegen
