import sys
# the single-load poll of 853c6e3 on today's code (reduce path and reducePair kept)
p=sys.argv[1]+'/purlin/snac/primitives.cuh'; s=open(p).read()
start=s.index('  SlotWords s0 = slotLoad(slot);\n  spinCycles(kPollStaggerCycles);')
end=s.index('  if (__any_sync(~0u, gaveUp)) return false;', start)
new='''  for (;;) {
    w = slotLoad(slot);
    if (slotFull(w)) break;
    if (!bound.step(dc, WaitKind::Packet, index, 3, (w.lo >> 63) | ((w.hi >> 63) << 1))) {
      gaveUp = true;
      break;
    }
  }
'''
s=s[:start]+new+s[end:]
open(p,'w').write(s)
