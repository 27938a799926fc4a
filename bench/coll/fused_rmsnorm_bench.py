"""AllReduce + residual add + RMSNorm at decode shapes (issue 37 item 3;
docs/device-api.md), ranks as threads sharing one GPU (purlin.InProcessGroup),
bf16 x of (tokens, hidden):

  fused:        purlin.fused.all_reduce_add_rms_norm(fused="fused"): one kernel
                (the device API: allReduce's latency or throughput program, then the rows);
  unfused:      the same op with fused="unfused": purlin's AllReduce, then
                the example's add-and-norm kernel (the same bits);
  torch:        purlin's AllReduce (comm.all_reduce), then torch: x + residual
                and torch.nn.functional.rms_norm (what a server does without
                the fused op).

Each form: ITERS calls captured in one CUDA graph per rank, replayed REPS
times (rank 0's CUDA events around each replay, us per call), and the same
ITERS calls eagerly (events around the loop). Medians over REPS. Ranks
sharing one GPU run their kernels side by side: these are not two-GPU
figures.

  python3 bench/coll/fused_rmsnorm_bench.py OUT.json [--ranks 2] [--tokens 1,8,32,128] [--hidden 4096]
"""
import argparse
import json
import statistics
import sys
import threading

import torch

import purlin
from purlin.fused import all_reduce_add_rms_norm
from purlin.torch import Communicator

FORMS = ("fused", "unfused", "torch")


def step(form, comm, x, res, w, out, eps):
    if form == "torch":
        comm.all_reduce(x)
        h = x + res
        res.copy_(h)
        out.copy_(torch.nn.functional.rms_norm(h, (x.shape[1],), w, eps))
    else:
        all_reduce_add_rms_norm(comm, x, res, w, eps, out=out, fused=form)


def run(n, tokens, hidden, iters, reps):
    group = purlin.InProcessGroup(n)
    results, errors = {}, []
    barrier = threading.Barrier(n, timeout=600)

    def rank_main(r):
        try:
            torch.cuda.set_device(0)
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                comm = Communicator.in_process_group(group, r, device=0)
                x = (torch.randn(tokens, hidden, device="cuda") / 8).bfloat16()
                res = torch.randn(tokens, hidden, device="cuda").bfloat16()
                w = torch.rand(hidden, device="cuda").bfloat16() + 0.5
                out = torch.empty_like(x)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                for form in FORMS:
                    for _ in range(3):  # warm-up (and the torch form's allocations before capture)
                        step(form, comm, x, res, w, out, 1e-6)
                    stream.synchronize()
                    barrier.wait()
                    # One rank after another: torch.cuda.graph's capture
                    # synchronizes the device, which invalidates a peer's
                    # capture in progress.
                    g = torch.cuda.CUDAGraph()
                    for turn in range(n):
                        if turn == r:
                            with torch.cuda.graph(g, stream=stream, capture_error_mode="thread_local"):
                                for _ in range(iters):
                                    step(form, comm, x, res, w, out, 1e-6)
                        barrier.wait()
                    for mode in ("graph", "eager"):
                        times = []
                        for _ in range(reps):
                            stream.synchronize()
                            barrier.wait()
                            start.record(stream)
                            if mode == "graph":
                                g.replay()
                            else:
                                for _ in range(iters):
                                    step(form, comm, x, res, w, out, 1e-6)
                            end.record(stream)
                            end.synchronize()
                            times.append(start.elapsed_time(end) * 1000 / iters)
                        if r == 0:
                            results[(form, mode)] = statistics.median(times)
                    # Graph destruction and torch.cuda.graph's capture may wait
                    # for the whole device: never while a peer's kernel waits
                    # for this rank.
                    stream.synchronize()
                    barrier.wait()
                    del g
                    torch.cuda.synchronize()
                    barrier.wait()
                stream.synchronize()
                barrier.wait()
                comm.destroy()
        except BaseException as e:  # noqa: BLE001
            errors.append((r, e))
            barrier.abort()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"rank {errors[0][0]}: {errors[0][1]!r}")
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--tokens", default="1,8,32,128")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    rows = []
    print(f"# {torch.cuda.get_device_name(0)}, {a.ranks} ranks sharing it, hidden {a.hidden} bf16, "
          f"us per call (median of {a.reps} x {a.iters} calls)")
    print(f"{'tokens':>6} " + " ".join(f"{f + '/' + m:>14}" for f in FORMS for m in ("graph", "eager")))
    for tokens in [int(t) for t in a.tokens.split(",")]:
        res = run(a.ranks, tokens, a.hidden, a.iters, a.reps)
        rows.append({"tokens": tokens, **{f"{f}/{m}": res[(f, m)] for f in FORMS for m in ("graph", "eager")}})
        print(f"{tokens:>6} " + " ".join(f"{res[(f, m)]:>14.2f}" for f in FORMS for m in ("graph", "eager")),
              flush=True)
    with open(a.out, "w") as fh:
        json.dump({"device": torch.cuda.get_device_name(0), "ranks": a.ranks, "hidden": a.hidden,
                   "iters": a.iters, "reps": a.reps, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
