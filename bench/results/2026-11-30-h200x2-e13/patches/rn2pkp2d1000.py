import sys,subprocess
subprocess.check_call(['python3','/tmp/pv/rn2pk.py',sys.argv[1]])
subprocess.check_call(['python3','/tmp/pv/poll.py',sys.argv[1],'2','120','1000'])
