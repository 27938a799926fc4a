import sys
p=sys.argv[1]+'/purlin/snac/primitives.cuh'; s=open(p).read()
old='    if (!bound.step(dc, WaitKind::Packet, index, 3, (s0.lo >> 63) | ((s0.hi >> 63) << 1))) {'
assert old in s
s=s.replace(old,'    if (!bound.step(dc, WaitKind::Packet, index, 3, (s1.lo >> 63) | ((s1.hi >> 63) << 1))) {')
open(p,'w').write(s)
