import sys, re
D = sys.argv[1]; depth = int(sys.argv[2]); stag = int(sys.argv[3]); pre = int(sys.argv[4]) if len(sys.argv) > 4 else 0
p = D + '/purlin/snac/primitives.cuh'
s = open(p).read()
start = s.index('__device__ __forceinline__ bool warpPollSlot(')
end = s.index('\n}\n', start) + 3
loads = []
body = ['__device__ __forceinline__ bool warpPollSlot(const DeviceComm& dc, Packet* slot, uint32_t index, SlotWords& w) {',
        '  SpinBound bound;', '  bool gaveUp = false;']
if pre: body.append('  { const long long t0 = clock64(); while (clock64() - t0 < %d) {} }' % pre)
for k in range(depth):
    if k: body.append('  { const long long t0 = clock64(); while (clock64() - t0 < %d) {} }' % stag)
    body.append('  SlotWords s%d = slotLoad(slot);' % k)
body.append('  for (;;) {')
for k in range(depth):
    body.append('    if (slotFull(s%d)) { w = s%d; break; }' % (k, k))
    body.append('    s%d = slotLoad(slot);' % k)
body.append('    if (!bound.step(dc, WaitKind::Packet, index, 3, (s0.lo >> 63) | ((s0.hi >> 63) << 1))) { gaveUp = true; break; }')
body.append('  }')
body.append('  if (__any_sync(~0u, gaveUp)) return false;')
body.append('  slotClear(slot);')
body.append('  return true;')
body.append('}\n')
s = s[:start] + '\n'.join(body) + s[end:]
open(p, 'w').write(s)
