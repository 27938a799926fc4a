/// @file KernelIR.cpp
/// @brief The kernel IR's text form (KernelIR.h).
#include "ir/KernelIR.h"

#include <sstream>

#include "ir/Printer.h"

namespace purlin::ir::kernel {

Stmt stmtFor(StmtKind kind, const Op &op, bool cites) {
  Stmt s = stmtOf(kind);
  s.op = op.id;
  s.cites = cites;
  s.sig = op.sig;
  s.stream = op.stream;
  s.operand = op.dst;
  return s;
}

Stmt stmtOf(StmtKind kind) {
  Stmt s;
  s.kind = kind;
  return s;
}

const char *toString(Words w) {
  switch (w) {
    case Words::Flow: return "a,b";
    case Words::Mine: return "mineA,mineB";
    case Words::Reduced: return "ra,rb";
  }
  return "?";
}

namespace {

const char *regionText(const Stmt &s) {
  switch (s.region) {
    case Region::SendRing: return "send[i-1]";
    case Region::RecvRing: return s.fromRoot ? "recv[i-1] (from root)" : "recv[i-1] (from p)";
    case Region::RecvRank: return "recvFrom[p]";
    case Region::OnlyPeer: return "recv[0] (from the one peer)";
  }
  return "?";
}

const char *valueText(SignalValue v) {
  return v == SignalValue::First ? "sig(e,0)" : v == SignalValue::Round ? "sig(e,j)" : "sig(e, q's last round)";
}

const char *epochText(EpochRead e) {
  switch (e) {
    case EpochRead::AfterLoad: return "after the first loads are issued";
    case EpochRead::NothingPut: return "on the ranks that put nothing";
    case EpochRead::PastFlows: return "past the groups of every flow sent";
  }
  return "?";
}

std::string cited(const Stmt &s) {
  if (s.op < 0 || !(s.cites || s.citesAgain)) return "";
  return "  // %" + std::to_string(s.op) + (s.citesAgain ? " [n == 2]" : "");
}

void print(std::ostringstream &o, const std::vector<Stmt> &body, const std::string &pad);

void print(std::ostringstream &o, const Stmt &s, const std::string &pad) {
  const std::string c = cited(s);
  switch (s.kind) {
    case StmtKind::OnRanks:
      o << pad << "on " << toString(s.on) << " {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::PeerLoop:
      o << pad << "for i in 1..n-1, " << (s.fromPeers ? "from p = from[i-1]" : "to k = (r + i) mod n") << " {" << c
        << "\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::RootPosition:
      o << pad << "i = the root's ring position (" << (s.fromPeers ? "receive" : "send") << " side)" << c << "\n";
      return;
    case StmtKind::FlowLength:
      o << pad << "flow " << (s.fromPeers ? "recvLen[i-1]" : "sendLen[i-1]") << " (" << accessText(s.operand)
        << "); past its groups, next i" << c << "\n";
      return;
    case StmtKind::OwnFlow:
      o << pad << "if g < groups(ownLen)" << (s.partition ? " (this rank's partition)" : "") << " {" << c << "\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::Load:
      o << pad << "load " << toString(s.words) << " <- " << (s.bound ? "own = " : "") << accessText(s.operand);
      if (s.operandOf >= 0) o << (s.alsoOperand ? " (also %" : " (%") << s.operandOf << "'s operand p == r)";
      o << c << "\n";
      return;
    case StmtKind::ReadEpoch:
      o << pad << "epoch.read (" << epochText(s.epochRead) << ")" << c << "\n";
      return;
    case StmtKind::Put:
      o << pad << "put " << toString(s.words) << " -> " << regionText(s) << c << "\n";
      return;
    case StmtKind::PutToPeers:
      o << pad << "put " << toString(s.words) << " -> send[i-1] for i in 1..n-1" << c << "\n";
      return;
    case StmtKind::Poll:
      o << pad << "poll " << toString(s.words) << " <- " << regionText(s)
        << (s.stagger == Stagger::First ? ", first pair staggered" : ", every round staggered") << c << "\n";
      return;
    case StmtKind::Store:
      o << pad << "store " << toString(s.words) << " -> " << accessText(s.operand);
      if (s.after >= 0) o << " (after %" << s.after << "'s last p)";
      o << c << "\n";
      return;
    case StmtKind::StoreUnlessInPlace:
      o << pad << "store " << toString(s.words) << " -> ownDst unless in place" << c << "\n";
      return;
    case StmtKind::GatherRanks:
      o << pad << "gather p in 0..n-1: p == r ? mineA,mineB (%" << s.use << "'s operand) : poll recvFrom[p], "
        << (s.stagger == Stagger::First ? "first pair" : "every round") << " staggered" << c << "\n";
      return;
    case StmtKind::ReduceRanks:
      o << pad << "reduce the n ranks' words -> ra,rb (one class dispatch)" << c << "\n";
      return;
    case StmtKind::ReducePair:
      o << pad << "reduce mineA,mineB with a,b in rank order -> ra,rb (one class dispatch)" << c << "\n";
      return;
    case StmtKind::TwoRanks:
      o << pad << "if n > 2 {\n";
      print(o, s.body, pad + "  ");
      o << pad << "} else n == 2 {\n";
      print(o, s.orElse, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::Arrive:
      o << pad << "arrive: thread 0 releases ARRIVED to every peer's CTA c, then waits for theirs; one barrier  // %"
        << s.op << ", %" << s.use << "\n";
      return;
    case StmtKind::CopyToMany:
      o << pad << "copy the slice of X_r to block r of every O_k, peers first, own last (one read)" << c << "\n";
      return;
    case StmtKind::CopyPairs:
      o << pad << "copy the slice of X_r[k] to block r of O_k for every k, interleaved" << c << "\n";
      return;
    case StmtKind::Notify:
      o << pad << (s.fence ? "barrier, fence.sys, " : "") << "release " << toString(s.sig) << " to every peer's CTA c = "
        << valueText(s.value) << c << "\n";
      return;
    case StmtKind::Wait:
      o << pad << "wait " << toString(s.sig) << " from every peer's CTA c >= " << valueText(s.value) << "; one barrier"
        << c << "\n";
      return;
    case StmtKind::TwoRankSlices:
      o << pad << "two ranks, others(r) = {q}: the CTA's slices of partitions q and r, their rounds"
        << (s.fusedBack >= 0 ? ", and of q's output for the write-back" : "") << "\n";
      return;
    case StmtKind::Rounds:
      o << pad << "for j in 0..max rounds-1 {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::InRound:
      o << pad << "if j < rounds(" << (s.part == RankRef::K ? "q's slice" : "own slice") << ") {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::PushRound:
      o << pad << "copy round j of q's slice into O_q" << c << "\n";
      return;
    case StmtKind::ReduceRound:
      o << pad << "reduce round j of the own slice in place, rank order (one class dispatch)";
      if (s.fusedBack >= 0) o << ", each vector also stored into O_q (%" << s.fusedBack << ")";
      o << c << "\n";
      return;
    case StmtKind::AfterRounds:
      o << pad << "if q's slice had rounds {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::GraphGuard:
      o << pad << "refuse unless two ranks with equal partitions (one chunking for both)\n";
      return;
    case StmtKind::GraphKernel:
      o << pad << "kernel " << s.kernelName << " on " << toString(s.stream) << " ("
        << (s.wide ? "direct.ctas CTAs, a slice of the chunk each" : "1 CTA x 32 threads")
        << (s.readsEpoch ? ", reads the epoch" : "") << (s.endsCall ? ", ends the call" : "") << ") {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::EngineChunks:
      o << pad << "for c in engine chunks of " << accessText(s.operand) << " {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::GraphCopy:
      o << pad << "copy engine -> " << accessText(s.operand) << " on " << toString(s.stream) << c << "\n";
      return;
    case StmtKind::GraphEdge:
      o << pad << (s.records ? "event record on " : "event wait on ") << toString(s.stream) << c << "\n";
      return;
    case StmtKind::GraphFlag:
      o << pad << "stream memory operation " << toString(s.sig) << "[c] = 1 on " << toString(s.stream) << c << "\n";
      return;
    case StmtKind::NodeNotify: o << pad << "release " << toString(s.sig) << " (thread 0)" << c << "\n"; return;
    case StmtKind::NodeWait: o << pad << "wait " << toString(s.sig) << " (thread 0; one barrier)" << c << "\n"; return;
    case StmtKind::NodeReduce:
      o << pad << "reduce the CTA's slice of chunk c in place, rank order (one class dispatch)" << c << "\n";
      return;
    case StmtKind::NodeReset: o << pad << "reset the own " << toString(s.sig) << " flags" << c << "\n"; return;
    case StmtKind::RoleGuard: o << pad << "only on " << toString(s.on) << "\n"; return;
    case StmtKind::ChunkLoop:
      if (!s.worker) o << pad << "for c in chunks (every CTA its slice of each) {\n";
      else if (s.var == RankRef::None) o << pad << "for c = w, w+W, ... (this worker's chunks) {\n";
      else
        o << pad << "for steps j = w, w+W, ... (c = j / (n-1), " << toString(s.var) << " the m-th of "
          << toString(s.domain) << ") {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::PeerSteps:
      o << pad << "for " << toString(s.var) << " in " << toString(s.domain) << " {\n";
      print(o, s.body, pad + "  ");
      o << pad << "}\n";
      return;
    case StmtKind::Hoist:
      o << pad << "name seq, slot, round of (" << toString(s.owner) << ", " << toString(s.partOf) << ")\n";
      return;
    case StmtKind::WaitSignal: o << pad << "wait " << toString(s.sig) << c << "\n"; return;
    case StmtKind::MoveData:
      o << pad << (s.reduces ? "reduce into " : "copy into ") << accessText(s.operand)
        << (s.worker ? ", then the lane barrier" : s.syncAfter ? ", then a CTA barrier" : "") << c << "\n";
      return;
    case StmtKind::ArriveCounter:
      o << pad << "arrive" << (s.body.empty() ? "" : "; the last arriver's thread 0 {") << c << "\n";
      if (!s.body.empty()) {
        print(o, s.body, pad + "  ");
        o << pad << "}\n";
      }
      return;
    case StmtKind::NotifySignal: o << pad << "notify " << toString(s.sig) << c << "\n"; return;
    case StmtKind::LaneNotify:
      o << pad << (s.syncFirst ? "lane barrier, " : "") << "the lane's leader notifies " << toString(s.sig) << c << "\n";
      return;
  }
}

void print(std::ostringstream &o, const std::vector<Stmt> &body, const std::string &pad) {
  for (const Stmt &s : body) print(o, s, pad);
}

} // namespace

std::string toText(const PacketWarps &k) {
  std::ostringstream o;
  o << "kernel latency: packet warps (group g on warp g mod warps; lane l < 31: words 62g+2l, 62g+2l+1; lane 31: header, collector)";
  if (k.reduces) o << ", reduces";
  if (k.rooted) o << ", rooted";
  if (k.variable) o << ", V form";
  if (k.sharedLoad) o << ", one load for every put";
  o << " {\n";
  for (const Binding &b : k.bindings) o << "  bind " << b.name << " = " << accessText(b.access) << "\n";
  o << "  per group g {\n";
  print(o, k.group, "    ");
  o << "  }\n";
  if (k.hasDoneAcks) {
    const DoneAcks &a = k.acks;
    o << "  done: on " << toString(a.readers) << " every CTA arrives (counter " << a.counterBase
      << ") and the last notifies " << (a.notifyEveryProducer ? "every producer" : "the root") << "; the producers wait"
      << (a.waitEveryProducer ? " for every reader" : " for the root") << "  // %" << a.arrive << ", %" << a.notify
      << ", %" << a.wait << "\n";
  }
  o << "  next grid let in " << (k.triggerOnRead ? "once the epoch load is issued" : "right after the wait") << "\n";
  o << "}\n";
  return o.str();
}

std::string toText(const DirectCtas &k) {
  std::ostringstream o;
  o << "kernel direct: direct CTAs (CTA c of C: slice c of every partition, signals with index c)"
    << (k.reduces ? ", reduces" : "") << " {\n";
  print(o, k.body, "  ");
  o << "}\n";
  return o.str();
}

std::string toText(const HostGraph &k) {
  std::ostringstream o;
  o << "kernel copy engine: host graph (the host's enqueue order on the call's stream and the branch)"
    << (k.reduces ? ", reduces" : "") << " {\n";
  print(o, k.body, "  ");
  o << "}\n";
  return o.str();
}

std::string toText(const ThroughputRoles &k) {
  std::ostringstream o;
  o << "kernel throughput (" << (k.push ? "push" : "pull") << "): "
    << (k.push ? "lane workers (worker w of W, a lane of a CTA: whole chunks)"
               : "CTA slices (CTA i of ctas: a slice of every chunk)")
    << (k.rooted ? ", rooted" : "") << " {\n";
  for (const RoleKernel &r : k.roles) {
    o << "  role " << r.name << " {\n";
    print(o, r.body, "    ");
    o << "  }\n";
  }
  o << "}\n";
  return o.str();
}

} // namespace purlin::ir::kernel
