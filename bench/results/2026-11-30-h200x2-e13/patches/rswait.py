import sys
p=sys.argv[1]+'/purlin/snac/latency.cuh'; s=open(p).read()
old='''      if (!pollLane(dc, pl, rg.recv[0] + ce.h, rg.from[0], g, lane, a, b)) return;  // checked wait gave up'''
assert old in s
new='''      uint64_t z = 0;
      if constexpr (K == CollKind::ReduceScatter) asm volatile("and.b64 %0, %1, 0;" : "=l"(z) : "l"(mineA));
      if (!pollLane(dc, pl, rg.recv[0] + ce.h + z, rg.from[0], g, lane, a, b)) return;  // checked wait gave up'''
s=s.replace(old,new)
open(p,'w').write(s)
