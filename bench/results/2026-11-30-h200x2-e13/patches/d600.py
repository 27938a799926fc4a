import sys,subprocess
subprocess.check_call(['python3','/tmp/pv/poll.py',sys.argv[1],'1','0','600'])
