/// @file Pipeline.h
/// @brief The linear lowering pipeline of one collective for one world size:
/// derive -> bindPolicy -> insertSlotReuseGuards -> insertDoneAcks -> verify,
/// optionally printing the IR after every pass (`--print-ir-after-all`).
#pragma once

#include <memory>

#include <ostream>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verifier.h"

namespace purlin::ir {

struct PipelineOptions {
  std::ostream *printAfterAll = nullptr; ///< when set, "// IR after <pass>" + the IR after each pass
  bool verify = true;                    ///< run the verify pass (throws IRError with the report on failure)
};

/// The pass names, in order.
const std::vector<std::string> &passNames();

/// Lowers `c` for world size n with `policy`. Throws IRError (unsupported
/// declaration, unusable policy numbers, or a verifier report).
CollectiveIR lower(const Collective &c, const Policy &policy, int n, const PipelineOptions &opts = {});

/// A collective's IR that the verifier accepted. Only check() (and
/// lowerVerified) make one, and the IR it holds cannot be changed, so code
/// printed from a VerifiedIR is printed from a verified program (the CUDA
/// emitter takes nothing else).
class VerifiedIR {
public:
  const CollectiveIR &ir() const { return *ir_; }
  /// Runs the verifier on `ir`; throws IRError with the report when it rejects it.
  static VerifiedIR check(CollectiveIR ir);

private:
  explicit VerifiedIR(std::shared_ptr<const CollectiveIR> ir) : ir_(std::move(ir)) {}
  std::shared_ptr<const CollectiveIR> ir_;
};

/// The world size whose IR shows the throughput program of transfer `t`
/// (what `purlinc --emit=ir` prints and the CUDA emitter prints from): `shown`
/// when its bound transfer is `t`, else the smallest world size 2..8 whose
/// bound transfer is `t`; 0 when no world size of the policy binds `t`.
int worldShowing(Kind k, const Policy &policy, Transfer t, int shown = kMaxWorld);

/// lower() with the verify pass, returning the verified IR itself.
VerifiedIR lowerVerified(const Collective &c, const Policy &policy, int n, const PipelineOptions &opts = {});

} // namespace purlin::ir
