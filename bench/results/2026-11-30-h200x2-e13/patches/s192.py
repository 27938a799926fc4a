import sys
p=sys.argv[1]+'/purlin/snac/plan.h'; s=open(p).read()
s=s.replace('inline constexpr int kLatencySpreadThreads = 256;','inline constexpr int kLatencySpreadThreads = 192;')
open(p,'w').write(s)
