import sys,shutil; shutil.copy('/tmp/pv/latency_n2.cuh', sys.argv[1]+'/purlin/snac/latency.cuh')
