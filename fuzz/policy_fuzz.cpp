/// @file policy_fuzz.cpp
/// @brief libFuzzer target of the policy loader: any bytes as policy JSON
/// through parsePolicies for sm_90. A rejected text must come with a
/// message; an accepted one must survive the round trip policyToJson ->
/// parsePolicies -> policyToJson unchanged, and every policy it holds must
/// pass validatePolicy. A crash, a sanitizer report or a broken property
/// is a failure. Seeds: dsl_examples/policies/*.json and
/// tests/lit/**/Inputs/*.json (fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "PolicyLoader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  const purlin::PolicySet set = purlin::parsePolicies(text, "fuzz.json", purlin::Arch::Sm90, error);
  if (!error.empty()) return 0;  // refused with a message
  for (const auto &[name, p] : set.policies)
    if (!purlin::validatePolicy(p).empty()) std::abort();
  const std::string json = purlin::policyToJson(set);
  std::string again;
  const purlin::PolicySet back = purlin::parsePolicies(json, "round-trip.json", purlin::Arch::Sm90, again);
  if (!again.empty() || purlin::policyToJson(back) != json) std::abort();
  return 0;
}
