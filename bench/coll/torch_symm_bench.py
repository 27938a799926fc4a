#!/usr/bin/env python3
"""@file torch_symm_bench.py
@brief torch symmetric memory's collectives timed by coll_bench's method
(graph_timer.h: CALLS calls captured in one CUDA graph, one warm-up replay,
REPS timed replays per sample, SAMPLES samples, maximum over ranks; median,
min, max), written as a results.csv that scripts/compare_series.py reads
beside coll_bench's runs: one series per op, "torch-<op>-graph" (plus
"-sep" with --separator: an empty kernel between calls, the PDL-neutral
mode). Multicast stays off (TORCH_SYMM_MEM_DISABLE_MULTICAST=1; no
multimem op is timed).

Every size is validated first: the op's output against
torch.distributed.all_reduce (NCCL) on the same inputs (values k/64, so
two-rank sums are exact: bitwise; otherwise within the bf16 tolerance);
a failed size is written with ok = 0 and enters no geomean.

usage: torchrun --nproc-per-node N bench/coll/torch_symm_bench.py OUT_DIR
           [--min BYTES] [--max BYTES] [--calls N] [--reps N] [--samples N] [--separator]
"""
import argparse
import os
import statistics
import sys
import time

# The ops timed: (op name in torch.ops.symm_mem, collective, in place).
OPS = [("one_shot_all_reduce", "AllReduce", False), ("two_shot_all_reduce_", "AllReduce", True)]
HEADER = ("collective,bytes,purlin_us,nccl_us,purlin_GBps,nccl_GBps,ok,ctas,program,purlin_min_us,purlin_max_us,"
          "nccl_min_us,nccl_max_us,purlin_busGBps,nccl_busGBps,samples,purlin_series,nccl_series,plan")


def series_name(op, separator):
    """'torch-one_shot_all_reduce-graph' (the graph timing), '-sep' in the PDL-neutral mode."""
    return f"torch-{op}-graph" + ("-sep" if separator else "")


def sample_stats(samples):
    """(median, min, max) of per-call microseconds."""
    if not samples:
        raise ValueError("no samples")
    return statistics.median(samples), min(samples), max(samples)


def csv_row(coll, size, us, lo, hi, ok, samples, series, world):
    """One results.csv line in coll_bench's columns (the peer columns hold torch's figures)."""
    bus = (2.0 * (world - 1) / world) if coll == "AllReduce" else (world - 1) / world
    gb = size / us / 1e3 if us > 0 else float("nan")
    return (f"{coll},{size},nan,{us:.3f},nan,{gb:.2f},{1 if ok else 0},0,-,nan,nan,{lo:.3f},{hi:.3f},nan,"
            f"{gb * bus:.2f},{samples},-,{series},\"\"")


def sizes(lo, hi):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= 2
    return out


def parse(argv):
    ap = argparse.ArgumentParser(description="torch symmetric memory collectives, coll_bench's method")
    ap.add_argument("out")
    ap.add_argument("--min", type=int, default=1 << 10)
    ap.add_argument("--max", type=int, default=1 << 30)
    ap.add_argument("--calls", type=int, default=128)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--separator", action="store_true")
    a = ap.parse_args(argv)
    if a.min < 16 or a.min > a.max or min(a.calls, a.reps, a.samples) < 1:
        ap.error("need 16 <= --min <= --max and positive --calls, --reps, --samples")
    return a


def main(argv):
    a = parse(argv)
    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    group = dist.group.WORLD
    stream = torch.cuda.Stream()
    sep_src = torch.zeros(1, device=dev)

    def max_over_ranks(x):
        t = torch.tensor([x], device=dev, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    def timed(fn):
        with torch.cuda.stream(stream):
            fn()  # eager warm-up (lazy initialization outside capture)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            for _ in range(a.calls):
                fn()
                if a.separator:
                    sep_src.add_(0)  # one small non-PDL kernel between calls
        g.replay()
        torch.cuda.synchronize()
        samples = []
        for _ in range(a.samples):
            dist.barrier()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(a.reps):
                g.replay()
            end.record()
            end.synchronize()
            samples.append(max_over_ranks(start.elapsed_time(end) * 1e3 / (a.calls * a.reps)))
        return sample_stats(samples)

    rows = []
    if rank == 0:
        os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "run.log"), "a") if rank == 0 else None
    for op, coll, in_place in OPS:
        f = getattr(torch.ops.symm_mem, op, None)
        if f is None:
            if log:
                print(f"torch_symm_bench: torch.ops.symm_mem.{op} is not in this torch; skipped", file=log)
            continue
        for size in sizes(a.min, a.max):
            elems = size // 2
            t = symm_mem.empty(elems, dtype=torch.bfloat16, device=dev)
            symm_mem.rendezvous(t, group.group_name)
            gen = torch.Generator(device=dev).manual_seed(size * 31 + rank)
            src = (torch.randint(-64, 65, (elems,), device=dev, generator=gen).to(torch.float32) / 64).to(
                torch.bfloat16)
            t.copy_(src)
            want = src.clone()
            dist.all_reduce(want)
            got = f(t, "sum", group.group_name)
            got = t if in_place else got
            torch.cuda.synchronize()
            ok = bool(torch.equal(got, want)) if world == 2 else bool(
                torch.allclose(got.float(), want.float(), rtol=1e-2, atol=1e-2))
            ok = max_over_ranks(0.0 if ok else 1.0) == 0.0
            try:
                med, lo, hi = timed(lambda: f(t, "sum", group.group_name))
            except Exception as e:  # an op refusing a size (e.g. its buffer limit): a failed row
                med, lo, hi, ok = float("nan"), float("nan"), float("nan"), False
                if log:
                    print(f"torch_symm_bench: {op} {size} B: {e!r}"[:400], file=log)
            rows.append(csv_row(coll, size, med, lo, hi, ok, a.samples, series_name(op, a.separator), world))
            if log:
                print(rows[-1], file=log, flush=True)
            del t, got, want, src
    if rank == 0:
        with open(os.path.join(a.out, "results.csv"), "w") as f:
            f.write(HEADER + "\n" + "\n".join(rows) + "\n")
        with open(os.path.join(a.out, "meta.txt"), "w") as f:
            f.write("key,value\n")
            f.write(f"date,{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n")
            f.write(f"device,{torch.cuda.get_device_name(dev)}\nworld_size,{world}\n")
            f.write(f"commit,{os.environ.get('PURLIN_COMMIT', 'unknown')}\ntorch,{torch.__version__}\n")
            for op, _, _ in OPS:
                f.write(f"legend:{series_name(op, a.separator)},torch symmetric memory {op}, multicast off\n")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
