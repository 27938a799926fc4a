/// @file kinds.h
/// @brief The collectives the runtime runs, from the one definition
/// purlin/collectives.def (the rows with Runs = 1), which the compiler
/// reads too: snac::CollKind, its names, and which of them reduce. Plain
/// C++ (host and device).
#pragma once

namespace purlin::snac {

namespace def {
/// Every collective of collectives.def, and the consume op of a leaf.
enum class Any {
#define PURLIN_LEAF(Name, ...) Name,
#define PURLIN_COMPOSE(Name, ...) Name,
#include "purlin/collectives.def"
};
enum class Op { Copy, Reduce };
/// A leaf reduces when its op does; a composition when its first stage does.
constexpr bool reduces(Any k) {
  switch (k) {
#define PURLIN_LEAF(Name, O, In, Out, R, Runs) case Any::Name: return Op::O == Op::Reduce;
#define PURLIN_COMPOSE(Name, F, G, Runs) case Any::Name: return reduces(Any::F);
#include "purlin/collectives.def"
  }
  return false;
}
} // namespace def

#define PURLIN_RUNS_0(Name)
#define PURLIN_RUNS_1(Name) Name,
/// The collectives the runtime runs (the ones a Transform/Compose maps to,
/// collective.cuh KindOf), in collectives.def order.
enum class CollKind : int {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs(Name)
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs(Name)
#include "purlin/collectives.def"
};
#undef PURLIN_RUNS_0
#undef PURLIN_RUNS_1

#define PURLIN_RUNS_0(Name, ...)
#define PURLIN_RUNS_1(Name, ...) case CollKind::Name: return __VA_ARGS__;
inline const char* toString(CollKind k) {
  switch (k) {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs(Name, #Name)
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs(Name, #Name)
#include "purlin/collectives.def"
  }
  return "?";
}
/// ReduceScatter, AllReduce (dtype and op matter; copies move bytes).
inline constexpr bool isReduction(CollKind k) {
  switch (k) {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs) PURLIN_RUNS_##Runs(Name, def::reduces(def::Any::Name))
#define PURLIN_COMPOSE(Name, F, G, Runs) PURLIN_RUNS_##Runs(Name, def::reduces(def::Any::Name))
#include "purlin/collectives.def"
  }
  return false;
}
#undef PURLIN_RUNS_0
#undef PURLIN_RUNS_1

} // namespace purlin::snac
