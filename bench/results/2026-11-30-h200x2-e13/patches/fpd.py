import sys
D=sys.argv[1]
p=D+'/purlin/snac/latency.cuh'; s=open(p).read()
old='''#pragma unroll 1
    for (int i = 1; i < n; ++i) {
      const int p = rg.from[i - 1];'''
assert old in s
s=s.replace(old,'''    if (g == warp) spinCycles(300);
#pragma unroll 1
    for (int i = 1; i < n; ++i) {
      const int p = rg.from[i - 1];''')
old2='''    if constexpr (N2) {
      // recv[0]: the peer's region (from[0] = the other rank)
'''
assert old2 in s
s=s.replace(old2,'''    if (g == warp) spinCycles(300);
    if constexpr (N2) {
      // recv[0]: the peer's region (from[0] = the other rank)
''')
open(p,'w').write(s)
