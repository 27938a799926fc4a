"""MoE dispatch + combine with split sizes in device memory against the host
form (issue 37 item 3; docs/device-counts.md), ranks as threads sharing
one GPU (purlin.InProcessGroup), bf16 tokens of `hidden` elements:

  host:    the router's splits (a CUDA tensor) read to the host (.tolist():
           a device-to-host copy and a synchronization per call), then
           all_to_all_single with list splits (dispatch) and back (combine);
  device:  all_to_all_single with the split tensors themselves (the
           ...Device forms: no synchronization);
  graph:   the device form's dispatch + combine captured once in a CUDA
           graph, replayed with the splits written into the same tensors.

Each rank routes `tokens` tokens to the ranks with splits that change every
step (a fixed random sequence, the same for every form). Per (tokens,
form): medians over REPS repetitions of ITERS steps, rank 0's CUDA events
around the whole loop (so the host form's synchronizations count), us per
step. Every form's combine output is checked against the dispatch input
(dispatch then combine is the identity).

  python3 bench/coll/moe_device_counts.py OUT.json [--ranks 2] [--tokens 1,16,64,256] [--hidden 4096]
"""
import argparse
import json
import statistics
import sys
import threading

import torch

import purlin
from purlin.torch import Communicator


def splits_for(step, r, n, tokens):
    g = torch.Generator().manual_seed(1000 * step + r)
    cuts = sorted(torch.randint(0, tokens + 1, (n - 1,), generator=g).tolist())
    edges = [0] + cuts + [tokens]
    return [edges[i + 1] - edges[i] for i in range(n)]


def run(n, tokens, hidden, iters, reps):
    group = purlin.InProcessGroup(n)
    out = [None] * n
    errors = []
    steps = iters * (reps + 1)
    # Every rank's send splits per step; rank r receives column r.
    send = [[splits_for(s, r, n, tokens) for r in range(n)] for s in range(steps)]
    barrier = threading.Barrier(n, timeout=600)

    def rank_main(r):
        try:
            torch.cuda.set_device(0)
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                comm = Communicator.in_process_group(group, r, device=0)
                bound = tokens * hidden  # elements: at least every block of every rank
                x = torch.randn(n * tokens, hidden, device="cuda").to(torch.bfloat16)
                buf = torch.empty(n * tokens, hidden, dtype=torch.bfloat16, device="cuda")
                back = torch.empty_like(buf)
                dsend = torch.zeros(n, dtype=torch.int64, device="cuda")
                drecv = torch.zeros(n, dtype=torch.int64, device="cuda")
                host_send = torch.tensor([send[s][r] for s in range(steps)], dtype=torch.int64, device="cuda")
                host_recv = torch.tensor([[send[s][p][r] for p in range(n)] for s in range(steps)], dtype=torch.int64,
                                         device="cuda")

                def step_host(s):
                    sp, rp = host_send[s].tolist(), host_recv[s].tolist()  # the D2H read of the router's splits
                    a, b = sum(sp), sum(rp)  # list splits: the tensors hold exactly the rows they move
                    comm.all_to_all_single(buf[:b], x[:a], output_split_sizes=rp, input_split_sizes=sp,
                                           max_count=bound)
                    comm.all_to_all_single(back[:a], buf[:b], output_split_sizes=sp, input_split_sizes=rp,
                                           max_count=bound)

                def step_device(s):
                    dsend.copy_(host_send[s])
                    drecv.copy_(host_recv[s])
                    comm.all_to_all_single(buf, x, output_split_sizes=drecv, input_split_sizes=dsend, max_count=bound)
                    comm.all_to_all_single(back, buf, output_split_sizes=dsend, input_split_sizes=drecv,
                                           max_count=bound)

                graph = torch.cuda.CUDAGraph()
                # On this rank's stream (torch's default capture stream is one
                # per process), one rank after another: torch.cuda.graph's
                # __enter__ synchronizes the device, which invalidates a peer's
                # capture in progress and waits for a peer's running kernel.
                torch.cuda.current_stream().synchronize()
                for turn in range(n):
                    barrier.wait()
                    if turn == r:
                        with torch.cuda.graph(graph, stream=torch.cuda.current_stream(),
                                              capture_error_mode="thread_local"):
                            comm.all_to_all_single(buf, x, output_split_sizes=drecv, input_split_sizes=dsend,
                                                   max_count=bound)
                            comm.all_to_all_single(back, buf, output_split_sizes=dsend, input_split_sizes=drecv,
                                                   max_count=bound)
                barrier.wait()

                def step_graph(s):
                    dsend.copy_(host_send[s])
                    drecv.copy_(host_recv[s])
                    graph.replay()

                times = {}
                for form, fn in (("host", step_host), ("device", step_device), ("graph", step_graph)):
                    samples = []
                    for rep in range(reps + 1):  # the first repetition warms up
                        barrier.wait()
                        torch.cuda.current_stream().synchronize()
                        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        begin.record()
                        for i in range(iters):
                            fn(rep * iters + i)
                        end.record()
                        end.synchronize()
                        if rep:
                            samples.append(begin.elapsed_time(end) * 1000.0 / iters)
                    # The last step's combine gives back the dispatched rows.
                    s = reps * iters + iters - 1
                    rows = sum(send[s][r])
                    if not torch.equal(back[:rows], x[:rows]):
                        raise AssertionError(f"{form}: combine(dispatch(x)) != x on rank {r}")
                    times[form] = statistics.median(samples)
                err = comm.async_error()
                if err is not None:
                    raise err
                out[r] = times
                barrier.wait()
                comm.destroy()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((r, e))
            barrier.abort()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    group.close()
    if errors:
        raise RuntimeError(f"rank {errors[0][0]}: {errors[0][1]!r}")
    return out[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--tokens", default="1,16,64,256")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    rows = []
    print(f"{'tokens':>7} {'host us':>9} {'device us':>10} {'graph us':>9}  (per dispatch + combine, rank 0, medians)")
    for t in (int(v) for v in a.tokens.split(",")):
        r = run(a.ranks, t, a.hidden, a.iters, a.reps)
        rows.append({"tokens": t, "hidden": a.hidden, "ranks": a.ranks, **r})
        print(f"{t:>7} {r['host']:>9.1f} {r['device']:>10.1f} {r['graph']:>9.1f}", flush=True)
    with open(a.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
