import sys
D = sys.argv[1]
p = D + '/purlin/snac/latency.cuh'
s = open(p).read()
old = s[s.index('    WordAcc<E, Op> accA, accB;'):s.index('    storeLane<W8>(x, out, len, accA.result(), accB.result());')]
new = '''    WordAcc<E, Op> accA, accB;
    bool started = false, ownDone = false;
#pragma unroll 1
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      if (!pollLane(dc, pl, rg.recvFrom[p] + ce.h, p, g, lane, a, b)) return;
      if (p > r && !ownDone) {
        if (!started) { accA.first(mineA); accB.first(mineB); started = true; } else { accA.next(mineA); accB.next(mineB); }
        ownDone = true;
      }
      if (!started) { accA.first(a); accB.first(b); started = true; } else { accA.next(a); accB.next(b); }
    }
    if (!ownDone) {
      if (!started) { accA.first(mineA); accB.first(mineB); } else { accA.next(mineA); accB.next(mineB); }
    }
'''
s = s.replace(old, new)
open(p, 'w').write(s)
