# Every (dtype, op) pair of AllReduce and ReduceScatter at 256 MiB per rank's input (and one
# latency size), RANKS ranks (default 2) as threads sharing one GPU, eager calls and calls captured in a CUDA
# graph (one call captured, replayed); per-call time = median of REPS repetitions of ITERS calls (rank 0's CUDA events).
# Run once per library (PURLIN_LIBRARY): the build before (specialized f32/f16/bf16 x sum/max/min,
# the other pairs through DynElem) and this one (a loop per reduction class, dispatched per range).
# FILL=zeros (default) or ones: the inputs (an IEEE division's slow path takes zeros, so avg's
# time depends on it; bench/results/2026-12-04-units).
#   python3 pair_bandwidth.py LABEL OUT.json [sizes...]
import os, sys, json, statistics, time
sys.path.insert(0, os.path.join(os.environ["PURLIN_REPO"], "python", "tests"))
import torch, purlin
import test_gpu as T
label, out = sys.argv[1], sys.argv[2]
sizes = [int(s) for s in sys.argv[3:]] or [256 << 20]
dtypes = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64", "float8_e4m3fn", "float8_e5m2"]
ops = ["sum", "max", "min", "avg", "product"]
NRANKS = int(os.environ.get("RANKS", "2"))  # ranks (threads) sharing the GPU
REPS, ITERS = 5, int(os.environ.get("ITERS", "10"))
rows = []
def timed(s, fn):
    times = []
    for _ in range(REPS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(s)
        fn()
        b.record(s); b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / ITERS)
    return times
# PAIRS="bfloat16:sum float32:avg ...": only these (dtype, op) pairs (default: every one).
PAIRS = [tuple(p.split(":")) for p in os.environ.get("PAIRS", "").split()]
def body(comm, r):
    s = torch.cuda.current_stream()
    for nbytes in sizes:
        for dname in dtypes:
            dtype = getattr(torch, dname)
            esize = torch.empty(0, dtype=dtype).element_size()
            count = nbytes // esize // NRANKS * NRANKS  # ReduceScatter's input: equal parts
            if PAIRS and not any(d == dname for d, _ in PAIRS): continue
            x = (torch.ones if os.environ.get("FILL", "zeros") == "ones" else torch.zeros)(count, dtype=dtype, device="cuda")
            rs = torch.zeros(count // NRANKS, dtype=dtype, device="cuda")
            for op in ops:
                if PAIRS and (dname, op) not in PAIRS: continue
                for name in ("all_reduce", "reduce_scatter"):
                    call = (lambda: comm.all_reduce(x, op=op)) if name == "all_reduce" else \
                           (lambda: comm.reduce_scatter_tensor(rs, x, op=op))
                    for _ in range(2): call()
                    s.synchronize()
                    eager = timed(s, lambda: [call() for _ in range(ITERS)])
                    t0 = time.time()
                    g = torch.cuda.CUDAGraph()  # one call captured, replayed ITERS times per repetition
                    with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
                        call()
                    g.replay(); s.synchronize()
                    t1 = time.time()
                    graph = timed(s, lambda: [g.replay() for _ in range(ITERS)])
                    del g
                    s.synchronize()
                    comm._comm.release_direct()
                    if r == 0:
                        for mode, t in (("eager", eager), ("graph", graph)):
                            rows.append({"lib": label, "collective": name, "dtype": dname, "op": op, "bytes": nbytes,
                                         "mode": mode, "us_median": round(statistics.median(t), 2),
                                         "us_min": round(min(t), 2), "us_max": round(max(t), 2)})
                        print(f"{label} {os.environ['FILL'] + ' ' if 'FILL' in os.environ else ''}{name:14s} {dname:14s} {op:8s} {nbytes:>10d} eager {statistics.median(eager):9.2f} "
                              f"graph {statistics.median(graph):9.2f} us (capture {t1 - t0:.1f} s)", flush=True)
            del x, rs
    return 0
T.run_ranks(torch, NRANKS, body)
json.dump(rows, open(out, "w"), indent=1)
