import sys
p=sys.argv[1]+'/purlin/snac/latency.cuh'; s=open(p).read()
old='''    loadLane<W8>(x, own, len, a, b);
    if (own != ownDst) storeLane<W8>(x, ownDst, len, a, b);  // skipped when in place
#pragma unroll 1
    for (int i = 1; i < n; ++i) {
      const int p = rg.from[i - 1];
      if (!pollLane(dc, pl, rg.recv[i - 1] + ce.h, p, g, lane, a, b)) return;  // checked wait gave up
      storeLane<W8>(x, out + rg.rx[i - 1], len, a, b);
    }
'''
new='''    uint64_t oa = a, ob = b;
    if constexpr (K != CollKind::AllGather) loadLane<W8>(x, own, len, oa, ob);
#pragma unroll 1
    for (int i = 1; i < n; ++i) {
      const int p = rg.from[i - 1];
      if (!pollLane(dc, pl, rg.recv[i - 1] + ce.h, p, g, lane, a, b)) return;  // checked wait gave up
      storeLane<W8>(x, out + rg.rx[i - 1], len, a, b);
    }
    if (own != ownDst) storeLane<W8>(x, ownDst, len, oa, ob);  // skipped when in place
'''
assert old in s
s=s.replace(old,new)
open(p,'w').write(s)
