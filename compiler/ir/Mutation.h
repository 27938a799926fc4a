/// @file Mutation.h
/// @brief Mutation testing: delete each single notify or wait of a program
/// (one at a time) and check that the verifier or the simulator reports the
/// mutant, naming an op on the broken dependency.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace purlin::ir {

struct Mutant {
  std::string program;   ///< programName: "latency", "throughput", "direct" or "direct (copy engine)"
  int opId = -1;         ///< the deleted op (or the notify whose fence was dropped)
  bool fenceOnly = false; ///< the mutation drops only the op's fence.acq_rel.sys (push releases)
  std::string opText;
  bool caught = false;
  std::string by;        ///< "verifier" or "simulator"
  std::string message;   ///< the first finding
  bool namesOp = false;  ///< the finding names an op of the same signal (or the read it unguards)
};

/// Every single-op deletion of a Notify or Wait in both programs of `ir`,
/// and, for every fenced last-arriver Notify (push), the same program
/// without that fence. `seeds` simulator seeds are tried when the verifier
/// finds nothing. `withDirect`: also every Notify/Wait of the direct program
/// (its fences are per CTA over the CTA's own threads, not modelled, so
/// they are not dropped).
std::vector<Mutant> mutate(const CollectiveIR &ir, int seeds = 3, bool withDirect = true);

/// Copy of `ir` without op `id` (ids are kept, not renumbered).
CollectiveIR withoutOp(const CollectiveIR &ir, int id);
/// Copy of `ir` whose op `id` keeps its release but loses its fence.
CollectiveIR withoutFence(const CollectiveIR &ir, int id);

} // namespace purlin::ir
