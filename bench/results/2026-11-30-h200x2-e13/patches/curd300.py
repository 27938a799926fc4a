import sys,subprocess; subprocess.check_call(['python3','/tmp/pv/poll.py',sys.argv[1],'2','120','300'])
