import sys,subprocess; subprocess.check_call(['python3','/tmp/pv/poll.py',sys.argv[1],'4','100'])
