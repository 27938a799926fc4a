import sys
p=sys.argv[1]+'/purlin/snac/latency.cuh'; s=open(p).read()
old='    loadLane<W8>(x, own, len, a, b);\n    if (own != ownDst) storeLane<W8>(x, ownDst, len, a, b);  // skipped when in place\n'
assert old in s
s=s.replace(old,'    if constexpr (K != CollKind::AllGather) loadLane<W8>(x, own, len, a, b);\n    if (own != ownDst) storeLane<W8>(x, ownDst, len, a, b);  // skipped when in place\n')
open(p,'w').write(s)
