/// @file Printer.h
/// @brief The IR's stable text form (`--emit=ir`, one op per line, FileCheck
/// friendly) and its JSON form (`--emit=ir-json`). Format: docs/snac-ir.md.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/IR.h"

namespace purlin::ir {

/// Prints a whole collective: header (kind, layouts, dispatch, crossover,
/// bound policy), then `program latency { ... }` and `program throughput { ... }`.
void print(std::ostream &os, const CollectiveIR &ir);
std::string toText(const CollectiveIR &ir);

/// One op as `--emit=ir` prints its line, without indentation:
/// "%id <opText><conditions, [last arriver], // note>". The emitted CUDA
/// cites ops by this text.
std::string opLine(const Op &o);
/// One op without its id, e.g. "wait.acquire STAGED[p][slot(seq(r,c))] >= sig(e,round) for p in 0..n-1".
std::string opText(const Op &o);
/// "remote_write" when a copy/reduce writes another rank's S/Y (push),
/// "remote_read" when it reads another rank's S/Y (pull), else nullptr.
/// Printed as the op's suffix: `copy.remote_write`, `copy.remote_read`.
const char *remoteMode(const Op &o);
/// An operand, e.g. "S_p[seq(r,c)]".
std::string accessText(const Access &a);

/// The JSON form: the same content, structured (ops keep id and text).
nlohmann::json toJson(const CollectiveIR &ir);

} // namespace purlin::ir
