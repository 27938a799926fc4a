import sys,subprocess,shutil,os
D=sys.argv[1]
shutil.rmtree(D)
os.makedirs(D)
subprocess.check_call('cd /work/main && git archive 853c6e3 runtime/include | tar -x -C /tmp/oldinc_tmp --strip-components=2', shell=True) if False else None
subprocess.check_call('rm -rf /tmp/oldinc && mkdir -p /tmp/oldinc && cd /work/main && git archive 853c6e3 runtime/include | tar -x -C /tmp/oldinc', shell=True)
shutil.rmtree(D); shutil.copytree('/tmp/oldinc/runtime/include', D)
