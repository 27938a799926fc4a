/// @file SampleInput.h
/// @brief Sample emitter inputs shared by the codegen tests: a policy with
/// distinct numbers per world size, and an allreduce.pl-like Module.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/EmitModel.h"
#include "purlin/AST.h"
#include "purlin/Policy.h"

namespace purlin::codegen::test {

/// A policy whose every number differs per world size n (latency maxBytes
/// = n * 1000, ...), so tests can see each one land in the output.
Policy samplePolicy(const std::string &name = "Policy");
/// {"Policy": samplePolicy()} for sm_90.
PolicySet samplePolicySet();
/// reduceScatter (line 4), allGather (line 5), allReduce = compose (line 6),
/// as the front end would build them from allreduce.pl.
Module sampleModule();
/// A leaf collective `name` at x.pl:1:1 (the printers' tests).
std::shared_ptr<Collective> leaf(const std::string &name, ConsumeOp op, Layout in, Layout out, Root root = Root::None);
/// The four collectives the runtime runs, as the front end builds them:
/// reduceScatter, allGather, allReduce (sampleModule) and allToAll.
std::vector<std::shared_ptr<const Collective>> runnable();
/// The rooted collectives: scatter, gather, broadcast = compose<scatter,
/// allGather>, reduce = compose<reduceScatter, gather>.
std::vector<std::shared_ptr<const Collective>> rooted();
/// Every op of `p`: id -> its IR line (ir::opLine).
std::map<int, std::string> opsOf(const ir::Program &p);
/// Checks (Catch2) that `text` cites every op of `ops` exactly once in full
/// (`// %N <its IR line>`) and cites nothing else; `variants`: a citation
/// `// %N [variant]` (the same op again in a specialization) is allowed.
void checkCitations(const std::string &text, const std::map<int, std::string> &ops, bool variants = false);
/// The EmitInput for allReduce alone, with two IR program notes, its
/// verified IR and the latency device code printed from it.
EmitInput sampleAllReduceInput();

} // namespace purlin::codegen::test
