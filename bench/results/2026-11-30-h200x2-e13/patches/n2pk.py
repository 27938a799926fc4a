import sys,shutil; shutil.copy('/tmp/pv/latency_n2pk.cuh', sys.argv[1]+'/purlin/snac/latency.cuh'); shutil.copy('/tmp/pv/elem_pk.cuh', sys.argv[1]+'/purlin/snac/elementwise.cuh')
