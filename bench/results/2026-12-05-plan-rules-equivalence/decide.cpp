// Prints the program choice of makePlan (+ direct and engine as launch
// decides them) for a grid of call shapes: built against 86b2d52 (-DOLD,
// hand-written rules) and HEAD (printed rules); the outputs must match.
#include <cstdio>
#include <string>
#include <vector>
#include "purlin/snac/plan.h"
#ifndef OLD
#include "allgather.plan.h"
#include "allgatherv.plan.h"
#include "allreduce.plan.h"
#include "alltoall.plan.h"
#include "alltoallv.plan.h"
#include "broadcast.plan.h"
#include "gather.plan.h"
#include "reduce.plan.h"
#include "reducescatter.plan.h"
#include "reducescatterv.plan.h"
#include "scatter.plan.h"
#endif
using namespace purlin;
using namespace purlin::snac;

#ifndef OLD
template <class F> auto withRules(CollKind k, F&& f) {
  switch (k) {
  case CollKind::AllGather: return f(gen::allGather_PlanRules{});
  case CollKind::AllGatherV: return f(gen::allGatherV_PlanRules{});
  case CollKind::AllReduce: return f(gen::allReduce_PlanRules{});
  case CollKind::AllToAll: return f(gen::allToAll_PlanRules{});
  case CollKind::AllToAllV: return f(gen::allToAllV_PlanRules{});
  case CollKind::Broadcast: return f(gen::broadcast_PlanRules{});
  case CollKind::Gather: return f(gen::gather_PlanRules{});
  case CollKind::Reduce: return f(gen::reduce_PlanRules{});
  case CollKind::ReduceScatter: return f(gen::reduceScatter_PlanRules{});
  case CollKind::ReduceScatterV: return f(gen::reduceScatterV_PlanRules{});
  case CollKind::Scatter: return f(gen::scatter_PlanRules{});
  }
  return f(gen::allGather_PlanRules{});
}
#endif

int main() {
  const CollKind kinds[] = {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce, CollKind::AllToAll,
                            CollKind::Broadcast, CollKind::Reduce, CollKind::Scatter, CollKind::Gather,
                            CollKind::AllGatherV, CollKind::ReduceScatterV, CollKind::AllToAllV};
  long lines = 0;
  for (CollKind k : kinds)
    for (int n = 2; n <= 8; ++n)
      for (std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(512), std::size_t(4099),
                                std::size_t(65536), std::size_t(1) << 20, std::size_t(3) << 20, std::size_t(1) << 24,
                                std::size_t(1) << 27})
        for (DType t : {DType::BF16, DType::F32, DType::F8E4M3})
          for (int policy = 0; policy < 3; ++policy) {
            WorldConsts w{};
            w.latencyMaxBytes = policy == 2 ? 0 : (n == 2 ? (std::size_t(4) << 20) : (std::size_t(256) << 10));
            w.latencyCtas = policy == 2 ? 0 : 32; w.latencyThreads = 512;
            w.stageCtas = 8; w.consumeCtas = 16; w.gatherCtas = 8; w.threads = 512;
            w.chunkBytes = std::size_t(1) << 20; w.push = n == 2 && policy != 1;
            w.directMinBytes = policy == 1 ? 0 : (std::size_t(4) << 20); w.directCtas = policy == 1 ? -1 : 32;
            w.directThreads = 512; w.directEngineMinBytes = policy == 2 ? (std::size_t(1) << 20) : 0;
            std::vector<std::size_t> counts(n), sc(n), sd(n), rc(n), rd(n);
            for (int p = 0; p < n; ++p) counts[p] = (count * (p + 1)) / n;
            CallArgs a;
            a.in = reinterpret_cast<const void*>(std::uintptr_t(1) << 40);
            a.out = reinterpret_cast<void*>(std::uintptr_t(1) << 41);
            a.count = count; a.dtype = t; a.root = n - 1; a.counts = counts.data();
            for (int q = 0; q < n; ++q) { sc[q] = rc[q] = count; sd[q] = rd[q] = q * count; }
            a.sendCounts = sc.data(); a.sendDispls = sd.data(); a.recvCounts = rc.data(); a.recvDispls = rd.data();
            a.maxCount = count;
            for (int rank : {0, 1}) {
              Plan p; std::string err;
#ifdef OLD
              Status s = makePlan(k, n, rank, a, w, std::size_t(256) << 20, std::size_t(16) << 20, p, err, 8);
#else
              Status s = withRules(k, [&](auto r) { return makePlan(k, n, rank, a, w, std::size_t(256) << 20, std::size_t(16) << 20, p, err, 8, r); });
#endif
              std::printf("%d n%d c%zu t%d pol%d r%d: s%d", int(k), n, count, int(t), policy, rank, int(s));
              if (s == Status::Ok && !p.empty && n > 1) {
                std::printf(" lat%d flow%zu ctas%d thr%d w8%d chunk%zu cpp%d slots%d ys%d push%d lanes%d/%d", p.latency, p.packetFlowBytes,
                            p.latencyCtas, p.latencyThreads, p.words8, p.chunk, p.cpp, p.slots, p.ySlots, p.push, p.lanes, p.consumeLanes);
#ifdef OLD
                const bool wanted = directWanted(p, w);
#else
                const bool wanted = withRules(k, [&](auto r) { return r.direct(p, w); });
#endif
                std::printf(" direct%d", wanted);
                if (wanted)
                  for (int checked : {0, 1}) for (int memops : {0, 1}) for (int fit : {0, 1}) {
                    Plan q = p;
#ifdef OLD
                    bool engine = !checked && (!isReduction(k) || memops) && fit;
                    WorldConsts ww = w;
                    if (!engine) ww.directEngineMinBytes = ~std::size_t(0);
                    planDirect(q, ww);
#else
                    withRules(k, [&](auto r) { planDirect(q, w, r.engine(q, w, EngineFacts{bool(checked), bool(memops), bool(fit)}), r.engineReduces); return 0; });
#endif
                    std::printf(" [%d%d%d e%d %dx%d]", checked, memops, fit, q.directEngine, q.directCtas, q.directThreads);
                  }
              }
              std::printf("\n");
              ++lines;
            }
          }
  std::fprintf(stderr, "%ld shapes\n", lines);
}
