import sys,subprocess
subprocess.check_call(['python3','/tmp/pv/n2pk.py',sys.argv[1]])
p=sys.argv[1]+'/purlin/snac/latency.cuh'; s=open(p).read()
old='''    if (pl.n == 2) copyProgram<K, W8, true>(dc, pl, rg, cs, in, out, ce, warp, warps);
    else copyProgram<K, W8, false>(dc, pl, rg, cs, in, out, ce, warp, warps);'''
s=s.replace(old,'''    copyProgram<K, W8, false>(dc, pl, rg, cs, in, out, ce, warp, warps);''')
open(p,'w').write(s)
