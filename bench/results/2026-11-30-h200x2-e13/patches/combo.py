import sys, subprocess
D = sys.argv[1]
subprocess.check_call(['python3', '/tmp/pv/poll.py', D, sys.argv[2], sys.argv[3]])
subprocess.check_call(['python3', '/tmp/pv/reord.py', D])
