/// @file Passes.h
/// @brief The IR passes after derive(), one function each (Halide Lower.cpp
/// style); Pipeline.h runs them in order.
#pragma once

#include "ir/IR.h"

namespace purlin::ir {

/// Records the policy numbers for world size ir.n (CTAs and threads per
/// role, chunk, Atom stages and stage bytes, staging capacity and slots,
/// crossover) and sets every Arrive's expected arrivals. Throws IRError
/// naming the policy field when a number is unusable.
void bindPolicy(CollectiveIR &ir, const Policy &policy);

/// Throughput program: before a stage (or Y) write of a slot's round > 0,
/// waits CONSUMED (GATHERED) from every reader of the slot's previous use;
/// after each read of a slot with a later use, the reader's last CTA
/// notifies CONSUMED (GATHERED) to the slot's owner.
void insertSlotReuseGuards(CollectiveIR &ir);

/// Rooted collectives: the readers' last CTA acks DONE to the producers
/// whose memory they read, and those producers wait for every DONE before
/// their kernel ends (docs/snac-protocol.md, reuse of halves).
void insertDoneAcks(CollectiveIR &ir);

} // namespace purlin::ir
