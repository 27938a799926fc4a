# Every collective of purlin.torch, bf16 (sum where it reduces), two ranks as threads sharing
# one GPU: at 1 MiB (the latency program on two ranks) and 256 MiB per rank's input (eager:
# the throughput program; captured: the direct or copy-engine program where the graph
# registers the output, else throughput). Per call: median of 5 repetitions of ITERS calls
# (rank 0's CUDA events); the outputs are checked against torch's result once per row.
# Run once per library (PURLIN_LIBRARY): the cp.async and the TMA datapath builds.
#   python3 program_bandwidth.py LABEL OUT.json [sizes...]
import os, sys, json, statistics
sys.path.insert(0, os.path.join(os.environ["PURLIN_REPO"], "python", "tests"))
import torch, purlin
import test_gpu as T
label, out = sys.argv[1], sys.argv[2]
sizes = [int(s) for s in sys.argv[3:]] or [1 << 20, 256 << 20]
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
def body(comm, r):
    s = torch.cuda.current_stream()
    n = 2
    for nbytes in sizes:
        count = nbytes // 2
        g = torch.Generator(device="cuda").manual_seed(7)
        xs = [torch.randint(-8, 8, (count,), device="cuda", generator=g).to(torch.bfloat16) for _ in range(n)]
        x = xs[r].clone()
        cases = {
            "all_reduce": (lambda t: comm.all_reduce(t), lambda: x.clone(), lambda: sum(v.float() for v in xs).to(torch.bfloat16)),
            "reduce_scatter": (None, None, lambda: sum(v.float() for v in xs).to(torch.bfloat16).chunk(n)[r]),
            "all_gather": (None, None, lambda: xs[r].new_empty(0)),
            "all_to_all": (None, None, None),
            "broadcast": (lambda t: comm.broadcast(t, src=0), lambda: x.clone(), lambda: xs[0]),
            "reduce": (lambda t: comm.reduce(t, dst=0), lambda: x.clone(), lambda: sum(v.float() for v in xs).to(torch.bfloat16) if r == 0 else xs[r]),
        }
        rsout = torch.empty(count // n, dtype=torch.bfloat16, device="cuda")
        agout = torch.empty(count * n, dtype=torch.bfloat16, device="cuda")
        a2aout = torch.empty(count, dtype=torch.bfloat16, device="cuda")
        for name in ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce"):
            buf = x.clone()
            if name == "reduce_scatter":
                call = lambda: comm.reduce_scatter_tensor(rsout, x); res = lambda: rsout
                want = sum(v.float() for v in xs).to(torch.bfloat16).chunk(n)[r]
            elif name == "all_gather":
                call = lambda: comm.all_gather_into_tensor(agout, x); res = lambda: agout
                want = torch.cat(xs)
            elif name == "all_to_all":
                call = lambda: comm.all_to_all_single(a2aout, x); res = lambda: a2aout
                want = torch.cat([v.chunk(n)[r] for v in xs])
            else:
                f = cases[name][0]
                call = lambda: f(buf); res = lambda: buf
                want = cases[name][2]()
            # correctness once (in place collectives start from this rank's input)
            buf.copy_(x); call(); s.synchronize()
            ok = torch.equal(res(), want)
            eager = timed(s, lambda: [call() for _ in range(ITERS)])
            gr = torch.cuda.CUDAGraph()
            with torch.cuda.graph(gr, stream=s, capture_error_mode="thread_local"):
                call()
            buf.copy_(x); gr.replay(); s.synchronize()
            ok = ok and torch.equal(res(), want)
            graph = timed(s, lambda: [gr.replay() for _ in range(ITERS)])
            del gr
            s.synchronize()
            comm._comm.release_direct()
            if r == 0:
                for mode, t in (("eager", eager), ("graph", graph)):
                    rows.append({"lib": label, "collective": name, "bytes": nbytes, "mode": mode, "ok": ok,
                                 "us_median": round(statistics.median(t), 2), "us_min": round(min(t), 2),
                                 "us_max": round(max(t), 2)})
                print(f"{label} {name:14s} {nbytes:>10d} eager {statistics.median(eager):9.2f} graph "
                      f"{statistics.median(graph):9.2f} us {'ok' if ok else 'WRONG'}", flush=True)
        del xs, x, rsout, agout, a2aout
    return 0
T.run_ranks(torch, 2, body)
json.dump(rows, open(out, "w"), indent=1)
