/// @file FromModule.cpp
/// @brief EmitInput from a checked Module, a PolicySet and a selection.
#include "codegen/FromModule.h"

#include <algorithm>

#include "codegen/EmitCUDA.h"
#include "codegen/GeneratedNames.h"
#include "codegen/Spelling.h"

namespace purlin::codegen {

std::string fileNameOf(const std::string &path) {
  std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

namespace {

StageSpec stageOf(const Collective &c) { return StageSpec{c.op, c.in, c.out, c.root}; }

bool matches(const Collective &c, const std::string &want) {
  return c.name == want || baseName(c.name) == want;
}

/// The file name as printed in generated comments: printable ASCII only,
/// and no backslash (a trailing one would splice the next line into a
/// `//` comment); anything else becomes '?'.
std::string commentSafe(const std::string &name) {
  std::string s = name;
  for (char &c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e || c == '\\') c = '?';
  return s;
}

/// Whether a generated file's name can be printed in an #include line and
/// a comment as it is: letters, digits, '.', '_', '-', '+'.
bool plainFileName(const std::string &name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-' || c == '+'))
      return false;
  return true;
}

} // namespace

BuildResult buildEmitInput(const Module &module, const PolicySet &policies,
                           const std::vector<std::string> &selected,
                           const std::string &cuPath) {
  BuildResult r;
  EmitInput &in = r.input;
  in.sourceName = commentSafe(fileNameOf(module.file));
  const OutputPaths paths = outputPaths(cuPath);
  in.cuName = fileNameOf(paths.cu);
  in.headerName = fileNameOf(paths.h);
  in.planName = fileNameOf(paths.plan);
  in.programsName = fileNameOf(paths.programs);
  in.deviceName = fileNameOf(paths.device);
  for (int u = 0; u < kNumKernelUnits; ++u) in.unitNames[u] = fileNameOf(paths.units[u]);
  for (const std::string *name : {&in.cuName, &in.headerName})
    if (!plainFileName(*name)) {
      r.error = "output file name '" + commentSafe(*name) +
                "' is printed in the generated #include and comments: use only letters, digits, '.', '_', '-', '+'";
      return r;
    }
  in.arch = policies.arch;

  for (const std::string &want : selected) {
    bool found = std::any_of(module.collectives.begin(), module.collectives.end(),
                             [&](const auto &c) { return c && matches(*c, want); });
    if (!found) {
      r.error = "no collective named '" + want + "' in " + in.sourceName;
      return r;
    }
  }
  for (const auto &cp : module.collectives) {
    if (!cp) continue;
    const Collective &c = *cp;
    if (!selected.empty() &&
        std::none_of(selected.begin(), selected.end(), [&](const std::string &w) { return matches(c, w); }))
      continue;
    EmitCollective e;
    e.name = c.name;
    e.kind = classify(c);
    e.line = c.loc.line;
    e.atom = c.atom;
    if (c.isCompose) {
      for (const auto &child : c.children) {
        if (!child) continue;
        e.stages.push_back(stageOf(*child));
        e.stageNames.push_back(child->name);
      }
    } else {
      e.stages.push_back(stageOf(c));
    }
    auto pol = policies.policies.find(c.policy);
    if (pol == policies.policies.end()) {
      r.error = "collective " + c.name + " uses policy '" + c.policy +
                "', which the policy set for " + archName(policies.arch) + " does not define";
      r.errorLoc = c.loc;
      return r;
    }
    e.policy = pol->second;
    in.collectives.push_back(std::move(e));
  }
  std::vector<const Collective *> emitted;
  for (const auto &cp : module.collectives)
    if (cp && std::any_of(in.collectives.begin(), in.collectives.end(),
                          [&](const EmitCollective &e) { return e.name == cp->name; }))
      emitted.push_back(cp.get());
  if (auto clash = checkGeneratedNames(emitted)) {
    r.error = clash->message;
    r.errorLoc = clash->loc;
    return r;
  }
  if (in.collectives.empty()) {
    r.error = in.sourceName + " declares no collective to generate code for";
    return r;
  }
  return r;
}

} // namespace purlin::codegen
