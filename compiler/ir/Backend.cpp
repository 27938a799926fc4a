/// @file Backend.cpp
/// @brief runIR(): lowers each collective, prints it, or simulates it and
/// runs the mutation tests (docs/snac-ir.md, "purlinc").
#include "ir/Backend.h"

#include "ir/DerivePush.h"
#include "ir/Mutation.h"
#include "ir/Pipeline.h"
#include "ir/Printer.h"
#include "ir/Simulator.h"

namespace purlin::ir {
namespace {

std::string firstLine(const std::string &s) { return s.substr(0, s.find('\n')); }

/// Simulates both programs on every size; returns false on any failure.
bool simulateOne(const CollectiveIR &ir, const IRRequest &req, std::ostream &os, std::string &why) {
  const int n = ir.n;
  const uint64_t E = reducesKind(ir.kind) ? 4 : 1;
  std::vector<uint64_t> sizes = req.bytes;
  if (sizes.empty()) sizes = {0, E, uint64_t(3 * n + 1) * E, uint64_t(40 * n + 7) * E};
  bool ok = true;
  bool directShown = false;
  for (uint64_t bytes : sizes) {
    os << "  bytes " << bytes;
    // argsForBytes simulates whole elements: say so when bytes are dropped.
    if (bytes % E != 0) os << " (" << bytes / E << " elements of " << E << " B)";
    os << ":";
    // A captured call of at least directMinBytes takes the direct program
    // at run time (the same decision on every rank): simulate it too.
    std::vector<const Program *> progs = {&ir.latency, &ir.throughput};
    if (ir.hasDirect() &&
        computeSizes(ir.kind, n, argsForBytes(ir.kind, n, bytes, 1)).dispatch >= ir.bound.directMinBytes())
      progs.push_back(&ir.direct), directShown = true;
    // Its copy-engine form from directEngineMinBytes (equal partitions).
    if (ir.hasEngine()) {
      Sizes sz = computeSizes(ir.kind, n, argsForBytes(ir.kind, n, bytes, 1));
      if (sz.dispatch >= ir.bound.directEngineMinBytes() && engineApplies(ir, sz)) progs.push_back(&ir.engine);
    }
    for (const Program *p : progs) {
      bool pass = true;
      uint64_t steps = 0;
      bool launched = true;
      for (int s = 1; s <= req.seeds && pass; ++s) {
        CallArgs a = argsForBytes(ir.kind, n, bytes, uint64_t(s));
        Sizes sz = computeSizes(ir.kind, n, a);
        SimOptions o;
        o.seed = uint64_t(s) * 7919 + bytes;
        SimResult r = simulate(ir, *p, a, simGeometry(ir, sz), o);
        steps += r.steps;
        launched = r.launched;
        if (!r.report.ok()) {
          pass = false;
          ok = false;
          why = std::string(programName(*p)) + " program, " + std::to_string(bytes) + " bytes, seed " +
                std::to_string(s) + ":\n" + r.report.text();
          os << " " << programName(*p) << " FAILED\n" << r.report.text();
        }
      }
      if (pass)
        os << " " << programName(*p) << (p->regime == Regime::Direct ? " (captured)" : "")
           << (launched ? " ok" : " ok (nothing launched)");
    }
    os << " (" << req.seeds << " seeds x 3 calls)\n";
  }
  auto ms = mutate(ir, 2, directShown);
  int caught = 0, byVerifier = 0, named = 0;
  for (auto &m : ms) caught += m.caught, byVerifier += m.by == "verifier", named += m.namesOp;
  os << "  mutations: " << caught << " of " << ms.size() << " single notify/wait/fence deletions reported (verifier "
     << byVerifier << ", simulator " << caught - byVerifier << "), " << named << " naming a related op\n";
  for (auto &m : ms) {
    if (m.fenceOnly) os << "    " << m.program << ": dropped the fence of %" << m.opId << " -> ";
    else os << "    " << m.program << ": deleted %" << m.opId << " '" << m.opText << "' -> ";
    if (m.caught) os << m.by << ": " << firstLine(m.message) << "\n";
    else os << "NOT REPORTED\n";
  }
  if (caught != int(ms.size()) || named != int(ms.size())) {
    ok = false;
    why = "a mutated program was not reported with the offending op named";
  }
  return ok;
}

} // namespace

std::vector<IRProblem> runIR(const IRRequest &req, const Module &m, const PolicySet &policies, std::ostream &os) {
  std::vector<IRProblem> problems;
  if (req.ranks < kMinWorld || req.ranks > kMaxWorld) {
    problems.push_back({Location{m.file, 0, 0}, "--simulate: world size " + std::to_string(req.ranks) +
                                                    " out of range (2..8)"});
    return problems;
  }
  nlohmann::json all = nlohmann::json::array();
  for (auto &cp : m.collectives) {
    const Collective &c = *cp;
    auto pit = policies.policies.find(c.policy);
    if (pit == policies.policies.end()) {
      problems.push_back({c.loc, "'" + c.name + "': policy '" + c.policy + "' is not defined"});
      continue;
    }
    try {
      PipelineOptions po;
      if (req.mode == IRRequest::Mode::PrintAfterAll) po.printAfterAll = &os;
      CollectiveIR ir = lower(c, pit->second, req.ranks, po);
      switch (req.mode) {
      case IRRequest::Mode::Text: print(os, ir); break;
      case IRRequest::Mode::Json: all.push_back(toJson(ir)); break;
      case IRRequest::Mode::PrintAfterAll: break;
      case IRRequest::Mode::Simulate: {
        os << "simulate " << c.name << " (" << toString(ir.kind) << ") n=" << ir.n << ":\n";
        std::string why;
        if (!simulateOne(ir, req, os, why)) problems.push_back({c.loc, "'" + c.name + "': simulation failed: " + why});
        break;
      }
      }
    } catch (const IRError &e) {
      problems.push_back({c.loc, e.message});
    } catch (const std::exception &e) {
      problems.push_back({c.loc, "'" + c.name + "': internal error in the SNAC IR: " + e.what()});
    }
    if (req.mode != IRRequest::Mode::Simulate && req.everyTransfer) {
      // The world size showing the other transfer (worldShowing: the one the
      // CUDA emitter prints that program from).
      const Policy &pol = pit->second;
      const Kind kind = classify(c);
      const Transfer here = boundTransfer(kind, pol.forWorld(req.ranks).throughput.transfer);
      const Transfer other = here == Transfer::Push ? Transfer::Pull : Transfer::Push;
      if (const int n = worldShowing(kind, pol, other, req.ranks); n != 0) {
        std::string tr = other == Transfer::Push ? "push" : "pull";
        try {
          PipelineOptions po;
          if (req.mode == IRRequest::Mode::PrintAfterAll) po.printAfterAll = &os;
          CollectiveIR ir = lower(c, pol, n, po);
          if (req.mode == IRRequest::Mode::Text) print(os, ir);
          if (req.mode == IRRequest::Mode::Json) all.push_back(toJson(ir));
        } catch (const IRError &e) {
          // Shown, not fatal: the IR for req.ranks above is what was asked for.
          if (req.mode != IRRequest::Mode::Json)
            os << "// " << c.name << ": no IR for world n = " << n << " (transfer " << tr << "): " << e.message << "\n";
        } catch (const std::exception &e) {
          problems.push_back({c.loc, "'" + c.name + "': internal error in the SNAC IR: " + e.what()});
        }
      }
    }
  }
  if (req.mode == IRRequest::Mode::Json) os << all.dump(2) << "\n";
  if (req.mode == IRRequest::Mode::Simulate && problems.empty()) os << "simulation: all collectives pass\n";
  return problems;
}

} // namespace purlin::ir
