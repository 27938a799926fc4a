/// @file SampleInput.h
/// @brief Sample emitter inputs shared by the codegen tests: a policy with
/// distinct numbers per world size, and an allreduce.pl-like Module.
#pragma once

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
/// The EmitInput for allReduce alone, with two IR program notes, its
/// verified IR and the latency device code printed from it.
EmitInput sampleAllReduceInput();

} // namespace purlin::codegen::test
