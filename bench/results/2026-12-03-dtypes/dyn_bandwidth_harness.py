# DynElem against specialized reductions: two ranks as threads sharing one GPU, all_reduce and
# reduce_scatter per-call time (median of 5 reps of 20 calls, rank 0's CUDA events), equal bytes.
import os, sys, json, statistics
sys.path.insert(0, os.path.join(os.environ.get("PURLIN_REPO", os.path.join(os.path.dirname(__file__), "../../..")), "python", "tests"))
import torch, purlin
import test_gpu as T
pairs = [("float32", "sum", "specialized"), ("bfloat16", "sum", "specialized"), ("float16", "max", "specialized"),
         ("int32", "sum", "DynElem"), ("float32", "avg", "DynElem"), ("bfloat16", "product", "DynElem"),
         ("float64", "sum", "DynElem"), ("int8", "sum", "DynElem"), ("float8_e4m3fn", "sum", "DynElem")]
sizes = [64 << 10, 2 << 20, 32 << 20, 256 << 20]
REPS, ITERS = 5, 20
rows = []
def body(comm, r):
    s = torch.cuda.current_stream()
    for dname, op, kind in pairs:
        dtype = getattr(torch, dname)
        esize = torch.empty(0, dtype=dtype).element_size()
        for nbytes in sizes:
            count = nbytes // esize
            x = torch.zeros(count, dtype=dtype, device="cuda")
            rs = torch.zeros(count // 2, dtype=dtype, device="cuda")
            for name in ("all_reduce", "reduce_scatter"):
                call = (lambda: comm.all_reduce(x, op=op)) if name == "all_reduce" else (lambda: comm.reduce_scatter_tensor(rs, x, op=op))
                for _ in range(3): call()
                s.synchronize()
                times = []
                for _ in range(REPS):
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record(s)
                    for _ in range(ITERS): call()
                    b.record(s); b.synchronize()
                    times.append(a.elapsed_time(b) * 1000 / ITERS)
                if r == 0:
                    rows.append({"dtype": dname, "op": op, "kind": kind, "collective": name, "bytes": nbytes,
                                 "us_median": round(statistics.median(times), 2), "us_min": round(min(times), 2), "us_max": round(max(times), 2)})
                    print(f"{name:15s} {dname:14s} {op:8s} {kind:11s} {nbytes:>10d} B {statistics.median(times):10.2f} us", flush=True)
            del x, rs
    return 0
T.run_ranks(torch, 2, body)
json.dump(rows, open(os.path.join(os.environ["OUT"], "dyn_bw.json"), "w"), indent=1)
