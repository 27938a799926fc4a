/// @file Collectives.h
/// @brief The eleven collectives for the compiler (front end, SNAC IR,
/// emitter), from the one definition runtime/include/purlin/collectives.def
/// that the runtime uses too: the kind enum, names, classification of a
/// declaration, and the properties every part asks for.
#pragma once

#include <vector>

#include "purlin/AST.h"
#include "purlin/snac/kinds.h"

namespace purlin {

/// The kinds, in collectives.def order, plus Unknown for a declaration
/// that is none of them.
enum class CollectiveKind {
#define PURLIN_LEAF(Name, ...) Name,
#define PURLIN_COMPOSE(Name, ...) Name,
#include "purlin/collectives.def"
  Unknown
};

// CollectiveKind and snac::def::Any list collectives.def's rows in its order.
#define PURLIN_LEAF(Name, ...) static_assert(int(CollectiveKind::Name) == int(snac::def::Any::Name));
#define PURLIN_COMPOSE(Name, ...) static_assert(int(CollectiveKind::Name) == int(snac::def::Any::Name));
#include "purlin/collectives.def"

inline const char *toString(CollectiveKind k) {
  switch (k) {
#define PURLIN_LEAF(Name, ...) case CollectiveKind::Name: return #Name;
#define PURLIN_COMPOSE(Name, ...) case CollectiveKind::Name: return #Name;
#include "purlin/collectives.def"
  case CollectiveKind::Unknown: return "Unknown";
  }
  return "?";
}

/// Every kind but Unknown, in collectives.def order.
inline const std::vector<CollectiveKind> &allCollectiveKinds() {
  static const std::vector<CollectiveKind> kinds = {
#define PURLIN_LEAF(Name, ...) CollectiveKind::Name,
#define PURLIN_COMPOSE(Name, ...) CollectiveKind::Name,
#include "purlin/collectives.def"
  };
  return kinds;
}

/// The leaf (op, in, out, root) is, or Unknown.
inline CollectiveKind classifyLeaf(ConsumeOp op, Layout in, Layout out, Root root) {
#define PURLIN_LEAF(Name, Op, In, Out, R, Runs)                                                          \
  if (op == ConsumeOp::Op && in == Layout::In && out == Layout::Out && root == Root::R) return CollectiveKind::Name;
#include "purlin/collectives.def"
  return CollectiveKind::Unknown;
}

/// compose<f, g> is, or Unknown.
inline CollectiveKind classifyCompose(CollectiveKind f, CollectiveKind g) {
#define PURLIN_COMPOSE(Name, F, G, Runs)                                                                 \
  if (f == CollectiveKind::F && g == CollectiveKind::G) return CollectiveKind::Name;
#include "purlin/collectives.def"
  return CollectiveKind::Unknown;
}

/// Which collective a declaration is: its op, layouts and root for a SNAC,
/// its two stages' kinds for a compose (never its atom or policy).
inline CollectiveKind classify(const Collective &c) {
  if (c.notACollective) return CollectiveKind::Unknown;
  if (!c.isCompose) return classifyLeaf(c.op, c.in, c.out, c.root);
  if (c.children.size() != 2 || !c.children[0] || !c.children[1]) return CollectiveKind::Unknown;
  return classifyCompose(classify(*c.children[0]), classify(*c.children[1]));
}

/// Whether a kind is a composition, and its two stages (Unknown for a leaf).
inline bool isCompose(CollectiveKind k) {
  switch (k) {
#define PURLIN_COMPOSE(Name, ...) case CollectiveKind::Name: return true;
#include "purlin/collectives.def"
  default: return false;
  }
}
inline CollectiveKind firstStage(CollectiveKind k) {
  switch (k) {
#define PURLIN_COMPOSE(Name, F, G, Runs) case CollectiveKind::Name: return CollectiveKind::F;
#include "purlin/collectives.def"
  default: return CollectiveKind::Unknown;
  }
}
inline CollectiveKind secondStage(CollectiveKind k) {
  switch (k) {
#define PURLIN_COMPOSE(Name, F, G, Runs) case CollectiveKind::Name: return CollectiveKind::G;
#include "purlin/collectives.def"
  default: return CollectiveKind::Unknown;
  }
}

/// The properties of a kind: the runtime's own (snac::def, purlin/snac/
/// kinds.h, from the same rows), Unknown having none.
inline snac::def::Any defOf(CollectiveKind k) { return snac::def::Any(int(k)); }

/// A rooted collective (a leaf with a root, or a composition of one):
/// Broadcast, Reduce, Scatter, Gather. Its host API takes `int root`.
inline bool isRooted(CollectiveKind k) {
  return k != CollectiveKind::Unknown && snac::def::root(defOf(k)) != Root::None;
}
/// Scatter and Broadcast: the root produces, every rank consumes.
inline bool isRootProducer(CollectiveKind k) {
  return k != CollectiveKind::Unknown && snac::def::root(defOf(k)) == Root::Producer;
}

/// A reduction (the leaf's op is Reduce, or a composition's first stage
/// reduces): dtype and op both matter; copies use dtype for the size only.
inline bool reduces(CollectiveKind k) { return k != CollectiveKind::Unknown && snac::def::reduces(defOf(k)); }

/// AllGather, AllGatherV, Gather: a packed input, staged whole once per
/// chunk and read by every consumer (not one partition per peer).
inline bool hasPackedInput(CollectiveKind k) {
  if (k == CollectiveKind::Unknown) return false;
  const Layout in = snac::def::input(defOf(k));
  return in == Layout::Packed || in == Layout::PackedV;
}
/// ReduceScatter, ReduceScatterV, Scatter: a packed output (one block per rank).
inline bool hasPackedOutput(CollectiveKind k) {
  if (k == CollectiveKind::Unknown) return false;
  const Layout out = snac::def::output(defOf(k));
  return out == Layout::Packed || out == Layout::PackedV;
}

} // namespace purlin
