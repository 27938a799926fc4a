import sys,subprocess; subprocess.check_call(['python3','/tmp/pv/poll.py',sys.argv[1],'2','200']); subprocess.check_call(['python3','/tmp/pv/reord.py',sys.argv[1]])
