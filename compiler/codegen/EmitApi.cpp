/// @file EmitApi.cpp
/// @brief printApiJson: the host API of the emitted collectives as JSON
/// (EmitApi.h), from the same parameter lists the header is printed from.
#include "codegen/EmitApi.h"

#include <nlohmann/json.hpp>

#include "codegen/Signature.h"
#include "codegen/Spelling.h"
#include "purlin/Collectives.h"

namespace purlin::codegen {

namespace {

/// "size_t " -> "size_t", "const void *" -> "const void *".
std::string trimmed(const std::string &type) {
  std::size_t end = type.size();
  while (end > 0 && type[end - 1] == ' ') --end;
  return type.substr(0, end);
}

} // namespace

std::string printApiJson(const EmitInput &in) {
  nlohmann::ordered_json doc;
  doc["format"] = kApiFormat;
  doc["source"] = in.sourceName;
  doc["arch"] = archName(in.arch);
  doc["collectives"] = nlohmann::ordered_json::array();
  for (const EmitCollective &c : in.collectives)
    for (SizeArgs sizes : apiForms(c.kind)) {
      nlohmann::ordered_json e;
      e["name"] = c.name + formSuffix(sizes);
      e["kind"] = toString(c.kind);
      e["function"] = cFunctionName(c.name) + formSuffix(sizes);
      e["line"] = c.line;
      e["sizes"] = static_cast<int>(sizes);
      e["reduces"] = reduces(c.kind);
      e["rooted"] = isRooted(c.kind);
      nlohmann::ordered_json params = nlohmann::ordered_json::array();
      params.push_back({{"name", "comm"}, {"c_type", "purlin_comm_t"}});
      for (const Param &p : hostParams(c.kind, sizes)) params.push_back({{"name", p.name}, {"c_type", trimmed(p.cType)}});
      e["params"] = std::move(params);
      e["doc"] = hostDoc(c.kind, sizes);
      doc["collectives"].push_back(std::move(e));
    }
  return doc.dump(2) + "\n";
}

} // namespace purlin::codegen
