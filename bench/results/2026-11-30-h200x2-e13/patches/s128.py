import sys
p=sys.argv[1]+'/purlin/snac/plan.h'; s=open(p).read()
assert 'inline constexpr int kLatencySpreadThreads = 256;' in s
s=s.replace('inline constexpr int kLatencySpreadThreads = 256;','inline constexpr int kLatencySpreadThreads = 128;')
open(p,'w').write(s)
