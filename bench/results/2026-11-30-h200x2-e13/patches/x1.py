import sys
p=sys.argv[1]+'/purlin/snac/primitives.cuh'; s=open(p).read()
start=s.index('  SlotWords s0 = slotLoad(slot);\n  spinCycles(kPollStaggerCycles);')
end=s.index('  if (__any_sync(~0u, gaveUp)) return false;', start)
new='''  for (;;) {
    const SlotWords s0 = slotLoad(slot);
    spinCycles(kPollStaggerCycles);
    const SlotWords s1 = slotLoad(slot);
    if (slotFull(s0)) {
      w = s0;
      break;
    }
    if (slotFull(s1)) {
      w = s1;
      break;
    }
    if (!bound.step(dc, WaitKind::Packet, index, 3, (s1.lo >> 63) | ((s1.hi >> 63) << 1))) {
      gaveUp = true;
      break;
    }
  }
'''
s=s[:start]+new+s[end:]
open(p,'w').write(s)
