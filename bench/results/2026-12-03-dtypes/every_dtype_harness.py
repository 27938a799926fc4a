import faulthandler, os, sys, time, threading
out = os.environ["OUT"]
tf = open(os.path.join(out, "traces.txt"), "w")
faulthandler.dump_traceback_later(100, file=tf, exit=True)
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
import torch, purlin
import test_gpu as T
log = open(os.path.join(out, "progress.txt"), "w", buffering=1)
n = 2
dtypes = T.every_dtype(torch)
def body(comm, r):
    seed = 0
    for dtype in dtypes:
        size = torch.empty(0, dtype=dtype).element_size()
        for op in T.ALL_OPS:
            if dtype == torch.bool and op == "avg":
                continue
            for count in (1, 7, 1000, 65536 + 3, (5 << 20) // size + 3):
                seed += 1
                xs = [T.case_input(torch, dtype, count * n, p, seed) for p in range(n)]
                want = T.reference_of(torch, xs, op)
                for name in ("all_reduce", "reduce_scatter", "reduce"):
                    t0 = time.time()
                    log.write(f"r{r} {dtype} {op} {count} {name} start\n")
                    if name == "all_reduce":
                        t = xs[r].clone(); comm.all_reduce(t, op=op); ok = T.torch_equal_bytes(t, want)
                    elif name == "reduce_scatter":
                        t = torch.empty(count, dtype=dtype, device="cuda"); comm.reduce_scatter_tensor(t, xs[r], op=op)
                        ok = T.torch_equal_bytes(t, want[r * count:(r + 1) * count])
                    else:
                        root = seed % n; t = xs[r].clone(); comm.reduce(t, dst=root, op=op)
                        ok = T.torch_equal_bytes(t, want if r == root else xs[r])
                    log.write(f"r{r} {dtype} {op} {count} {name} {'ok' if ok else 'MISMATCH'} {time.time()-t0:.3f}s\n")
    return 0
t0 = time.time()
T.run_ranks(torch, n, body)
log.write(f"done in {time.time()-t0:.1f}s\n")
