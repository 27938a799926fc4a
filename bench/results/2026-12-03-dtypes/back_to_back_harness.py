# back-to-back reductions of ranks sharing one GPU: which first-launch effect hangs
# usage: b2b.py MODE   (MODE: plain | stack | warm)   env CUDA_MODULE_LOADING may be EAGER
import faulthandler, os, sys, time, ctypes
mode = sys.argv[1]
out = os.environ["OUT"]
tag = mode + ("-eager" if os.environ.get("CUDA_MODULE_LOADING") == "EAGER" else "")
tf = open(os.path.join(out, f"traces-{tag}.txt"), "w")
faulthandler.dump_traceback_later(int(os.environ.get("B2B_TIMEOUT", "40")), file=tf, exit=True)
sys.path.insert(0, os.path.join(os.environ.get("PURLIN_REPO", os.path.join(os.path.dirname(__file__), "../../..")), "python", "tests"))
import torch, purlin
import test_gpu as T
log = open(os.path.join(out, f"progress-{tag}.txt"), "w", buffering=1)
torch.cuda.init(); torch.zeros(1, device="cuda")
if mode == "stack":
    cuda = ctypes.CDLL("libcuda.so.1")
    v = ctypes.c_size_t()
    cuda.cuCtxGetLimit(ctypes.byref(v), 0); log.write(f"stack limit before {v.value}\n")
    rc = cuda.cuCtxSetLimit(0, ctypes.c_size_t(16384)); cuda.cuCtxGetLimit(ctypes.byref(v), 0)
    log.write(f"cuCtxSetLimit rc={rc} stack limit now {v.value}\n")
n = 2
dtypes = T.every_dtype(torch)
def cases():
    seed = 0
    for dtype in dtypes:
        size = torch.empty(0, dtype=dtype).element_size()
        for op in T.ALL_OPS:
            if dtype == torch.bool and op == "avg":
                continue
            for count in (1, 7, 1000, 65536 + 3, (5 << 20) // size + 3):
                seed += 1
                yield seed, dtype, op, count
def body(comm, r):
    bad = 0
    passes = ("sync", "b2b") if mode == "warm" else ("b2b",)
    for p in passes:
        for seed, dtype, op, count in cases():
            xs = [T.case_input(torch, dtype, count * n, q, seed) for q in range(n)]
            want = T.reference_of(torch, xs, op)
            root = seed % n
            t = xs[r].clone(); rs = torch.empty(count, dtype=dtype, device="cuda"); red = xs[r].clone()
            log.write(f"{p} r{r} {dtype} {op} {count} launch\n")
            comm.all_reduce(t, op=op)
            if p == "sync": torch.cuda.current_stream().synchronize()
            comm.reduce_scatter_tensor(rs, xs[r], op=op)
            if p == "sync": torch.cuda.current_stream().synchronize()
            comm.reduce(red, dst=root, op=op)
            log.write(f"{p} r{r} {dtype} {op} {count} launched\n")
            ok = (T.torch_equal_bytes(t, want) and T.torch_equal_bytes(rs, want[r * count:(r + 1) * count])
                  and T.torch_equal_bytes(red, want if r == root else xs[r]))
            bad += not ok
            log.write(f"{p} r{r} {dtype} {op} {count} {'ok' if ok else 'MISMATCH'}\n")
    return bad
t0 = time.time()
res = T.run_ranks(torch, n, body)
log.write(f"done in {time.time()-t0:.1f}s mismatches {res}\n")
print(tag, "done", res, f"{time.time()-t0:.1f}s")
