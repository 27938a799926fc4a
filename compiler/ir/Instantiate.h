/// @file Instantiate.h
/// @brief Expands a symbolic Program for n ranks and concrete run-time sizes
/// into per-rank, per-role, per-CTA op sequences (the verifier's and the
/// simulator's input). Also the size rules of every collective.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace purlin::ir {

/// Run-time arguments of one call, as the generated API takes them.
struct CallArgs {
  uint64_t count = 0;                       ///< fixed layouts (docs/snac-protocol.md)
  std::vector<uint64_t> counts;             ///< AllGatherV / ReduceScatterV: counts[n]
  std::vector<std::vector<uint64_t>> matrix; ///< AllToAllV: matrix[p][q] elements p sends to q
  int root = 0;
  uint32_t elemSize = 1;                    ///< E
};

/// Byte sizes of every buffer partition of every rank for one call.
struct Sizes {
  int n = 0, root = 0;
  uint32_t elem = 1;
  std::vector<std::vector<uint64_t>> in, out; ///< [rank][partition] bytes (packed: one partition)
  std::vector<uint64_t> y;                    ///< [rank] bytes of Y (compose), else empty
  uint64_t maxLen = 0;                        ///< largest input partition of any rank
  uint64_t dispatch = 0;                      ///< bytes compared with the crossover
  bool empty = true;                          ///< no data anywhere: nothing is launched

  uint64_t inTotal(int r) const;
  uint64_t outTotal(int r) const;
  uint64_t inOff(int r, int part) const;
  uint64_t outOff(int r, int part) const;
};

/// Computes the sizes of a call; throws IRError on inconsistent arguments.
Sizes computeSizes(Kind k, int n, const CallArgs &a);

/// Per-call geometry of the throughput and latency programs.
struct Geometry {
  uint64_t chunk = 0;      ///< bytes per chunk
  int cpp = 1;             ///< chunks per partition, max(1, ceil(maxLen/chunk))
  int slots = 1, ySlots = 0;
  int parts = 1;           ///< partitions a producer stages per chunk index: 1 (packed input) or n-1
  bool push = false;       ///< push transfer: `slots`/`ySlots` are per source region, S region of
                           ///< source s at idx(s)*srcRegion, Y region at region + idx(s)*srcRegion,
                           ///< idx(s) = (s - owner - 1) mod n
  uint64_t srcRegion = 0;  ///< push: bytes of one source's region, floor(region/(n-1)) rounded down to 16
  uint64_t region = 0;     ///< S region bytes; Y starts at `region`
  uint64_t packetRegion = 0; ///< payload bytes per source region of a packet half
  /// Direct program: a round of a CTA slice of L bytes is clamp(L/8,
  /// roundMin, roundMax) rounded up to 16 (the runtime's bounds; the
  /// simulator uses small ones so that slices have several rounds).
  uint64_t directRoundMin = kDirectRoundMin, directRoundMax = kDirectRoundMax;
  /// Copy-engine form: the smallest engine chunk (protocol.h
  /// engineChunkBytes; the simulator uses a small one).
  uint64_t engineMinChunk = kEngineMinChunk;
};

/// Bytes before chunk c and of chunk c of a partition of `len` bytes cut
/// into engine chunks (protocol.h engineChunkBytes), and their number.
uint64_t engineChunkBegin(bool allReduce, uint64_t len, int c, const Geometry &g);
uint64_t engineChunkLen(bool allReduce, uint64_t len, int c, const Geometry &g);
int engineChunkCount(bool allReduce, uint64_t len, const Geometry &g);

/// Whether the copy-engine form runs a call of these sizes: the runtime
/// takes it for reductions only when both partitions have one length
/// (directEligible: 16-byte multiples of an even split); copies always.
bool engineApplies(const CollectiveIR &ir, const Sizes &s);

/// Bytes per round of a direct CTA slice of `sliceLen` bytes (protocol.h
/// directRoundBytes with g's bounds), and the number of rounds (0 for an
/// empty slice).
uint64_t directRoundBytes(uint64_t sliceLen, const Geometry &g);
uint64_t directRounds(uint64_t sliceLen, const Geometry &g);

/// One concrete memory range. X/O are the call's own user buffers; S, Y and
/// PK are in half e&1 of `owner`'s workspace (PK offsets in payload bytes).
struct Mem {
  Buf buf = Buf::X;
  int owner = 0;
  uint64_t off = 0, len = 0;
  int region = -1;          ///< push S/Y: the source rank whose region of owner's half this is
};

/// One concrete op of one CTA (of the copy-engine form: of one stream).
struct COp {
  const Op *sym = nullptr;  ///< the symbolic op (id, text)
  OpKind kind = OpKind::Copy;
  Mem dst;
  std::vector<Mem> srcs;    ///< copy/put/poll: 1; reduce: n, ascending rank order
  Sig sig = Sig::STAGED;
  int arrayOwner = 0;       ///< rank whose signal array holds the signal
  int peer = 0;             ///< Notify: = arrayOwner; Wait: the notifying rank; Poll/Put: source/target
  uint32_t index = 0;       ///< signal index
  uint32_t round = 0;       ///< value = sig(e, round)
  int counter = 0, arrivals = 0;
  bool last = false;
  bool emptyFlow = false;   ///< put/poll of a zero-byte flow: CTA 0 still moves one full marker word
  bool perCta = false;      ///< from a perCta loop: only this CTA runs this iteration (whole chunks)
  bool one = false;         ///< copy-engine flag (E_PUT/E_BACK): value 1, not sig(e, round)
  int lastCounter = -1;     ///< last ops: the counter whose last arriver runs them
  // Static facts for the verifier: which slot use a Notify/Wait/read is about.
  int slotOwner = -1;       ///< rank whose S/Y slot
  int region = -1;          ///< push: source region of slotOwner's half (-1: pull)
  SlotSpace space = SlotSpace::None;
  int slot = -1;
  uint32_t writeRound = 0;             ///< data op writing S/Y: the round of that slot use
  std::vector<int> readSlot;           ///< per src: S/Y slot read (-1 otherwise)
  std::vector<uint32_t> readRound;     ///< per src: round of that slot use
};

struct CTAProgram {
  std::vector<COp> ops;
};
struct RoleInstance {
  const Role *sym = nullptr;
  std::vector<CTAProgram> ctas;
};
struct RankInstance {
  std::vector<RoleInstance> roles;
};

/// A program expanded for n ranks and one call's sizes.
struct Instance {
  const CollectiveIR *ir = nullptr;
  const Program *prog = nullptr;
  int n = 0;
  Sizes sizes;
  Geometry geo;
  std::vector<RankInstance> ranks;
};

/// Geometry for a call: chunk = `chunk` bytes (the policy's unless
/// overridden), slots from ir.bound's staging capacity (or `stagingBytes`
/// when nonzero). Packet regions hold the largest flow of the call.
Geometry computeGeometry(const CollectiveIR &ir, const Sizes &s, uint64_t chunk, uint64_t stagingBytes);

/// Expands `prog` (ir.latency or ir.throughput). CTA counts of every role
/// are capped at `maxCtas` (>= 1) to keep simulations small; the counts in
/// the IR are not changed.
Instance instantiate(const CollectiveIR &ir, const Program &prog, const Sizes &s, const Geometry &g,
                     int maxCtas);

/// "%id op-text (role R of rank k)" for messages.
std::string describe(const COp &op, const std::string &role, int rank);

} // namespace purlin::ir
