/// @file pl_fuzz.cpp
/// @brief libFuzzer target of the .pl front end: any bytes as a .pl buffer
/// through parseBuffer (Clang libTooling with the vocabulary header) and
/// checkModule against the built-in sm_90 policies. A crash, a sanitizer
/// report, or an accepted module with an error count is a failure; every
/// message must go through Diagnostics (nothing thrown). Seeds:
/// dsl_examples/*.pl and tests/lit/**/*.pl (fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "Parser.h"
#include "Sema.h"
#include "purlin/Policy.h"
#include "PolicyLoader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size > 16384) return -1;  // Clang's parse time grows with the input; keep runs fast
  const std::string code(reinterpret_cast<const char *>(data), size);
  std::ostringstream sink;
  purlin::Diagnostics diags(sink);
  std::optional<purlin::Module> m = purlin::parseBuffer("fuzz.pl", code, diags);
  if (!m) {
    if (diags.errorCount() == 0) std::abort();  // a failed parse must say why
    return 0;
  }
  static const purlin::PolicySet policies = purlin::defaultPolicies(purlin::Arch::Sm90);
  const bool ok = purlin::checkModule(*m, policies, "the built-in sm_90 defaults", diags);
  if (ok != (diags.errorCount() == 0)) std::abort();  // the verdict and the diagnostics agree
  return 0;
}
