# communicator creation time and device memory: first (loads the kernels) and second creation, two ranks as threads
import os, sys, time, threading, json
sys.path.insert(0, os.path.join(os.environ.get("PURLIN_REPO", os.path.join(os.path.dirname(__file__), "../../..")), "python", "tests"))
import torch, purlin
from purlin.torch import Communicator
torch.cuda.init(); torch.zeros(1, device="cuda"); torch.cuda.synchronize()
res = {"CUDA_MODULE_LOADING": os.environ.get("CUDA_MODULE_LOADING", "(default)")}
def create(n, label):
    group = purlin.InProcessGroup(n)
    comms = [None] * n
    free0 = torch.cuda.mem_get_info()[0]
    t0 = time.perf_counter()
    def f(r):
        torch.cuda.set_device(0)
        comms[r] = Communicator.in_process_group(group, r, device=0)
    ts = [threading.Thread(target=f, args=(r,)) for r in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    dt = time.perf_counter() - t0
    free1 = torch.cuda.mem_get_info()[0]
    for c in comms: c.destroy()
    group.close()
    res[label] = {"seconds": round(dt, 3), "device_MiB_used": round((free0 - free1) / 2**20, 1)}
create(2, "first"); create(2, "second")
print(json.dumps(res))
