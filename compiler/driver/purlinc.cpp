/// @file purlinc.cpp
/// @brief purlinc: parse a .pl file, check it, load policies, then dump the
/// AST or hand over to the back end (runBackend in Backend.cpp).
#include "ASTDumper.h"
#include "Backend.h"
#include "LargeStack.h"
#include "Options.h"
#include "Output.h"
#include "Parser.h"
#include "PolicyLoader.h"
#include "Sema.h"
#include "ir/Simulator.h"

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include "codegen/EmitCUDA.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using namespace purlin;

/// Parses "RANKS[,BYTES...]" of --simulate; false on malformed text.
bool parseSimulate(const std::string &text, Options &o, std::string &error) {
  if (!text.empty() && text.back() == ',') {
    error = "--simulate: '" + text + "' ends with a comma; expected RANKS[,BYTES...]";
    return false;
  }
  std::stringstream ss(text);
  std::string item;
  bool first = true;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(item, &used);
    } catch (...) {
      used = 0;
    }
    if (item.empty() || used != item.size() || item[0] == '-') {
      error = "--simulate: '" + item + "' is not a non-negative integer";
      return false;
    }
    if (first) {
      if (v < kMinWorld || v > kMaxWorld) {
        error = "--simulate: RANKS must be in [2, 8], got " + item;
        return false;
      }
      o.simulateRanks = static_cast<int>(v);
      first = false;
    } else {
      if (v > ir::kMaxSimulateBytes) {
        error = "--simulate: BYTES " + item + " is above the simulator's limit of " +
                std::to_string(ir::kMaxSimulateBytes) + " bytes (64 KiB; larger calls take too long to simulate)";
        return false;
      }
      o.simulateBytes.push_back(v);
    }
  }
  if (first) {
    error = "--simulate: expected RANKS[,BYTES...]";
    return false;
  }
  return true;
}

/// Keeps only the collectives named by --collective (all if none given),
/// each once, in the order first named (a repeated name is ignored).
bool selectCollectives(const Options &o, Module &m, Diagnostics &diags) {
  if (o.collectives.empty())
    return true;
  std::vector<std::shared_ptr<const Collective>> kept;
  bool ok = true;
  for (const std::string &name : o.collectives) {
    bool found = false;
    for (const auto &c : m.collectives)
      if (c->name == name) {
        if (std::find(kept.begin(), kept.end(), c) == kept.end())
          kept.push_back(c);
        found = true;
      }
    if (!found) {
      diags.report(DiagKind::UnknownCollectiveName, Location{}, name, m.file);
      ok = false;
    }
  }
  m.collectives = std::move(kept);
  return ok;
}

/// The files `-o` makes purlinc write: for --emit=cuda (instances: one
/// file) every file beside the .cu (EmitCUDA.h outputPaths), else the one.
std::vector<std::string> outputFiles(const Options &opts) {
  if (opts.output.empty() || opts.output == "-") return {};
  const bool files = opts.emit == EmitKind::Cuda && !opts.printIRAfterAll && !opts.simulateRanks;
  if (!files) return {opts.output};
  const codegen::OutputPaths p = codegen::outputPaths(opts.output);
  std::vector<std::string> all{p.cu, p.h, p.plan, p.programs, p.device};
  all.insert(all.end(), p.units.begin(), p.units.end());
  return all;
}

/// Refuses an output that would overwrite an input (the .pl or the policy
/// file, by device and inode), and a set of generated files (--emit=cuda)
/// placed beside something that is not a regular file (`-o /dev/full`
/// would create /dev/full.h and the others).
bool checkOutputs(const Options &opts, Diagnostics &diags) {
  const std::vector<std::string> outputs = outputFiles(opts);
  const bool fileSet = outputs.size() > 1;
  struct stat in {}, out {};
  for (const std::string &path : outputs) {
    if (::stat(path.c_str(), &out) != 0) continue;  // does not exist yet
    for (const std::string *input : {&opts.input, &opts.policyFile})
      if (!input->empty() && ::stat(input->c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
        diags.report(DiagKind::CannotWrite, Location{}, path,
                     "it is the input '" + *input + "' (choose another -o)");
        return false;
      }
    if (fileSet && !S_ISREG(out.st_mode)) {
      diags.report(DiagKind::CannotWrite, Location{}, path,
                   "not a regular file; --emit=cuda writes a set of files named after -o (" + opts.output +
                       " and the others beside it)");
      return false;
    }
  }
  return true;
}

int run(const Options &opts) {
  Diagnostics diags(std::cerr);
  if (!checkOutputs(opts, diags))
    return 1;
  std::optional<Module> module = parseFile(opts.input, diags);
  if (!module)
    return 1;

  PolicySet policies;
  std::string source;
  if (opts.policyFile.empty()) {
    policies = defaultPolicies(opts.arch);
    source = std::string("the built-in ") + toString(opts.arch) + " defaults";
  } else {
    std::string error;
    policies = loadPolicies(opts.policyFile, opts.arch, error);
    if (!error.empty()) {
      diags.report(DiagKind::PolicyError, Location{}, error);
      return 1;
    }
    source = "'" + opts.policyFile + "'";
  }

  if (!checkModule(*module, policies, source, diags))
    return 1;
  if (!selectCollectives(opts, *module, diags))
    return 1;

  if (opts.emit != EmitKind::AST || opts.printIRAfterAll || opts.simulateRanks)
    return runBackend(opts, *module, policies, diags);

  Output out;
  if (!out.open(opts.output, diags))
    return 1;
  dumpAST(*module, out.stream());
  return out.finish(diags) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  CLI::App app{"purlinc: compiles Purlin collective declarations (.pl) into SNAC IR and CUDA"};
  app.set_version_flag("--version", std::string("purlinc ") + PURLIN_VERSION);
  app.add_option("file", opts.input, "the .pl file")->required();
  app.add_option("-o", opts.output, "output file (default: stdout)");
  app.add_option("--policy", opts.policyFile, "policy JSON (default: the built-in policies of --arch)");
  std::string arch = "sm_90";
  app.add_option("--arch", arch, "target architecture")
      ->check(CLI::IsMember({"sm_80", "sm_90", "sm_100"}))
      ->capture_default_str();
  std::map<std::string, EmitKind> emitKinds = {
      {"ast", EmitKind::AST}, {"ir", EmitKind::IR}, {"ir-json", EmitKind::IRJson}, {"cuda", EmitKind::Cuda},
      {"instances", EmitKind::Instances}, {"api", EmitKind::Api}};
  app.add_option("--emit", opts.emit,
                 "what to produce: ast, ir, ir-json, cuda, instances (the instantiation tables), api (the host API "
                 "as JSON)")
      ->transform(CLI::CheckedTransformer(emitKinds))
      ->default_str("cuda");
  app.add_option("--collective", opts.collectives, "only this collective (repeatable; default: all)");
  app.add_flag("--print-ir-after-all", opts.printIRAfterAll, "print the SNAC IR after each pass");
  std::string simulate;
  app.add_option("--simulate", simulate, "RANKS[,BYTES...]: run the CPU simulator on the IR");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  opts.arch = *parseArch(arch);
  if (!simulate.empty()) {
    std::string error;
    if (!parseSimulate(simulate, opts, error)) {
      std::cerr << "purlinc: error: " << error << '\n';
      return 1;
    }
  }
  // Clang's parser recurses per nesting level; give it room (see LargeStack.h).
  std::string stackError;
  const int rc = runWithLargeStack([&] { return run(opts); }, stackError);
  if (!stackError.empty()) {
    std::cerr << "purlinc: error: " << stackError << '\n';
    return 1;
  }
  return rc;
}
