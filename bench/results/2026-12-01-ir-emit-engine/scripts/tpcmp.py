import sys,glob,statistics,collections
d=sys.argv[1]
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for side in ('legacy','new'):
    for f in sorted(glob.glob(f"{d}/tp.{side}.*.log")):
        for l in open(f):
            if l.startswith('row,'):
                _,c,t,b,med,mn,mx=l.strip().split(',')
                rows[(c,t,int(b))][side].append(float(med))
print(f"{'collective':14}{'xfer':5}{'bytes':>10} {'legacy us':>10} {'new us':>10} {'diff':>7}   runs (legacy | new)")
worst=0
for k in sorted(rows, key=lambda k:(k[1],k[0],k[2])):
    L=rows[k]['legacy']; N=rows[k]['new']
    if not L or not N: continue
    l=statistics.median(L); n=statistics.median(N); dd=(n-l)/l*100; worst=max(worst,dd)
    print(f"{k[0]:14}{k[1]:5}{k[2]:>10} {l:10.2f} {n:10.2f} {dd:+6.1f}%   {' '.join('%.2f'%x for x in L)} | {' '.join('%.2f'%x for x in N)}")
print(f"worst: {worst:+.1f}%")
