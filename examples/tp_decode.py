#!/usr/bin/env python3
"""A tensor-parallel transformer block at decode shapes, timed with three
all-reduce backends in the same run: torch.distributed (NCCL), torch
symmetric memory, and Purlin (docs/python.md).

The block (bf16, random weights, no download), per rank of a world of W:
    h = x + RowLinear(GELU(ColLinear(LN(x))))        "attention" projections
    y = h + RowLinear(GELU(ColLinear(LN(h))))        MLP, 4x hidden
ColLinear holds 1/W of the output features (no communication); RowLinear
holds 1/W of the input features and its partial sums are all-reduced: two
all-reduces per block, as in Megatron-style tensor parallelism.

For each batch (tokens: 1 to 256) and hidden size (4096, 8192) it times one
block step eager and replayed from a CUDA graph, median of --reps
repetitions of --iters steps, checks that the three backends' outputs agree
(bitwise where the reduction order is the same: always for W <= 2), prints
a table and writes a CSV and a PNG plot.

    torchrun --nproc-per-node 2 examples/tp_decode.py --out bench/results/...
    python3 examples/tp_decode.py            # a world of one (one GPU)
    torchrun --nproc-per-node 4 examples/tp_decode.py --backend purlin --check   # ranks sharing one GPU

With --backend purlin torch.distributed runs on Purlin's backend
(purlin.distributed) and the outputs are compared with torch's host
reference (gloo gathers, fp32 sums in rank order): bitwise at every W.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import purlin.torch as pt  # noqa: E402


def init_world(backend):
    if "RANK" not in os.environ:  # not under torchrun: a world of one
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=os.environ.get("MASTER_PORT", "29533"))
    local = int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count()  # ranks may share a GPU
    torch.cuda.set_device(local)
    if backend == "nccl":
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    else:  # Purlin's torch.distributed backend (purlin.distributed; NCCL refuses ranks sharing a GPU)
        dist.init_process_group("cuda:purlin,cpu:gloo")
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local)


def reference_all_reduce(world, device):
    """The all-reduce torch computes on the host: every rank's tensor
    gathered through gloo, summed in fp32 in ascending rank order and
    rounded once (Purlin's documented accumulation: bitwise its result)."""
    host = dist.new_group(backend="gloo")

    def all_reduce(t):
        parts = [torch.empty(t.shape, dtype=t.dtype) for _ in range(world)]
        dist.all_gather(parts, t.cpu(), group=host)
        acc = parts[0].float()
        for p in parts[1:]:
            acc = acc + p.float()
        return acc.to(t.dtype).to(device)
    all_reduce.untimed = True
    return all_reduce


class Block:
    """Weights of one tensor-parallel block on this rank (seeded: every rank
    draws the full matrices and keeps its shard, so W changes nothing but
    the split)."""

    def __init__(self, hidden, rank, world, device, dtype=torch.bfloat16):
        g = torch.Generator(device="cpu").manual_seed(1234)
        scale = hidden ** -0.5

        def shard(rows, cols, dim):
            w = (torch.randn(rows, cols, generator=g) * scale).to(dtype)
            return w.chunk(world, dim=dim)[rank].contiguous().to(device)
        self.a_in = shard(hidden, hidden, 0)          # column-parallel: out features split
        self.a_out = shard(hidden, hidden, 1)         # row-parallel: in features split
        self.m_in = shard(4 * hidden, hidden, 0)
        self.m_out = shard(hidden, 4 * hidden, 1)
        self.hidden = hidden

    def step(self, x, all_reduce):
        ln = torch.nn.functional.layer_norm
        a = torch.nn.functional.gelu(ln(x, (self.hidden,)) @ self.a_in.t()) @ self.a_out.t()
        a = all_reduce(a)
        h = x + a
        m = torch.nn.functional.gelu(ln(h, (self.hidden,)) @ self.m_in.t()) @ self.m_out.t()
        m = all_reduce(m)
        return h + m


def backends(world, device, comm, backend):
    """name -> all_reduce(t) -> t, each reducing in place into a buffer it
    owns. The first is the reference the others are compared with: NCCL,
    or with --backend purlin the host reference (not timed) and then
    torch.distributed through the purlin backend."""
    if backend == "nccl":
        out = {"nccl": lambda t: (dist.all_reduce(t), t)[1]}
    else:
        out = {"reference": reference_all_reduce(world, device),
               "purlin_dist": lambda t: (dist.all_reduce(t), t)[1]}
    out["purlin"] = lambda t: (comm.all_reduce(t), t)[1]
    if backend != "nccl":
        return out
    try:
        import torch.distributed._symmetric_memory as symm_mem
        group = dist.group.WORLD
        bufs = {}

        def symm(t):
            key = (t.shape, t.dtype)
            if key not in bufs:
                raise RuntimeError("symmetric buffer not prepared")
            buf = bufs[key]
            buf.copy_(t)
            torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group.group_name)
            return buf.clone()

        def prepare(shape, dtype):
            key = (torch.Size(shape), dtype)
            if key not in bufs:
                buf = symm_mem.empty(shape, dtype=dtype, device=device)
                symm_mem.rendezvous(buf, group.group_name)
                bufs[key] = buf
        symm.prepare = prepare
        out["symm_mem"] = symm
    except Exception as e:  # noqa: BLE001 - reported in the table
        out["symm_mem"] = e
    return out


def time_steps(fn, iters, reps):
    """Median over reps of the mean microseconds per step of `iters` calls."""
    samples = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(samples), min(samples), max(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", default="1,2,4,8,16,32,64,128,256")
    ap.add_argument("--hidden", default="4096,8192")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="tp_decode_results", help="directory for the CSV and the PNG")
    ap.add_argument("--backend", choices=["nccl", "purlin"], default="nccl",
                    help="torch.distributed's backend: nccl (one GPU per rank), or purlin (ranks may share a GPU; "
                         "the outputs are checked bitwise against torch's host reference)")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every Purlin output is bitwise the reference's")
    args = ap.parse_args()
    rank, world, device = init_world(args.backend)
    comm = pt.Communicator(device=device)
    bks = backends(world, device, comm, args.backend)
    global NAMES
    NAMES = [n for n in bks]
    refname = NAMES[0]
    mismatches = []
    rows = []
    for hidden in [int(h) for h in args.hidden.split(",")]:
        block = Block(hidden, rank, world, device)
        for batch in [int(b) for b in args.batches.split(",")]:
            g = torch.Generator(device="cpu").manual_seed(batch)
            x = torch.randn(batch, hidden, generator=g).to(torch.bfloat16).to(device)
            outs, row = {}, {"world": world, "hidden": hidden, "batch": batch}
            for name, ar in bks.items():
                if isinstance(ar, Exception):
                    row[f"{name}_eager"] = row[f"{name}_graph"] = float("nan")
                    row[f"{name}_note"] = f"unavailable: {type(ar).__name__}: {ar}"
                    continue
                if hasattr(ar, "prepare"):
                    ar.prepare((batch, hidden), torch.bfloat16)
                try:
                    outs[name] = block.step(x, ar)
                    if getattr(ar, "untimed", False):
                        continue
                    eager = time_steps(lambda: block.step(x, ar), args.iters, args.reps)
                    s = torch.cuda.Stream()
                    s.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(s):
                        for _ in range(2):
                            block.step(x, ar)  # warm-up outside the capture
                    torch.cuda.current_stream().wait_stream(s)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        y_static = block.step(x, ar)
                    graph.replay()
                    torch.cuda.synchronize()
                    if not torch.equal(y_static, outs[name]):
                        row[f"{name}_note"] = "graph replay differs from eager"
                    gtime = time_steps(graph.replay, args.iters, args.reps)
                    del graph
                    if name == "purlin":
                        torch.cuda.synchronize()
                        comm.release()  # the destroyed graph's peer mappings (collective)
                    elif name == "purlin_dist":
                        torch.cuda.synchronize()
                        from purlin.distributed import purlin_group
                        purlin_group().comm.release()
                    row[f"{name}_eager"], row[f"{name}_graph"] = eager[0], gtime[0]
                    row[f"{name}_graph_minmax"] = f"{gtime[1]:.1f}-{gtime[2]:.1f}"
                except Exception as e:  # noqa: BLE001 - reported in the table
                    # Only torch symmetric memory may be missing or refuse a
                    # shape (then on every rank alike); a failure of NCCL or
                    # Purlin is raised: one rank going on alone would leave
                    # its peers waiting.
                    if name != "symm_mem":
                        raise
                    row[f"{name}_eager"] = row[f"{name}_graph"] = float("nan")
                    row[f"{name}_note"] = f"failed: {type(e).__name__}: {e}"
            ref = outs.get(refname)
            for name, y in outs.items():
                if ref is not None:
                    diff = (y.float() - ref.float()).abs().max().item()
                    row[f"{name}_vs_ref"] = "bitwise" if torch.equal(y, ref) else f"max|diff|={diff:.3g}"
                    if name.startswith("purlin") and not torch.equal(y, ref):
                        mismatches.append(f"{name} h={hidden} b={batch}: {row[f'{name}_vs_ref']}")
            rows.append(row)
            if rank == 0:
                print(format_row(row), flush=True)
    if rank == 0:
        write_results(rows, args.out, world)
    torch.cuda.synchronize()
    dist.barrier()  # no rank frees its workspace while a peer may read it
    comm.destroy()
    dist.destroy_process_group()
    # Bitwise is expected where the reference reduces in Purlin's order:
    # the host reference always, NCCL only for W <= 2.
    comparable = args.backend == "purlin" or world <= 2
    if mismatches and comparable:
        print(f"rank {rank}: {len(mismatches)} outputs differ from {refname}: {mismatches[:4]}", flush=True)
        if args.check:
            sys.exit(1)
    elif args.check and comparable:
        print(f"tp_decode rank {rank}: every Purlin output bitwise {refname}'s", flush=True)
    elif args.check:
        print(f"tp_decode rank {rank}: --check needs --backend purlin or W <= 2 (NCCL reduces in another order)",
              flush=True)
        sys.exit(2)


NAMES = ["nccl", "symm_mem", "purlin"]  # main() sets the backends of the run


def format_row(r):
    cells = [f"W={r['world']} h={r['hidden']:5d} b={r['batch']:3d}"]
    for n in NAMES:
        cells.append(f"{n}: eager {r.get(n + '_eager', float('nan')):8.1f} graph {r.get(n + '_graph', float('nan')):8.1f}"
                     f" [{r.get(n + '_vs_ref', '-')}]" + (f" ({r[n + '_note']})" if n + "_note" in r else ""))
    return " | ".join(cells)


def write_results(rows, out, world):
    os.makedirs(out, exist_ok=True)
    keys = ["world", "hidden", "batch"] + [f"{n}_{k}" for n in NAMES for k in ("eager", "graph", "vs_ref", "note")]
    with open(os.path.join(out, f"tp_decode_w{world}.csv"), "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(str(r.get(k, "")).replace(",", ";") for k in keys) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    hiddens = sorted({r["hidden"] for r in rows})
    fig, axes = plt.subplots(1, len(hiddens), figsize=(6 * len(hiddens), 4), squeeze=False)
    for ax, h in zip(axes[0], hiddens):
        sub = [r for r in rows if r["hidden"] == h]
        for n in NAMES:
            for mode, style in (("graph", "-"), ("eager", ":")):
                ax.plot([r["batch"] for r in sub], [r.get(f"{n}_{mode}", float("nan")) for r in sub], style,
                        marker="o", label=f"{n} {mode}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch (tokens)")
        ax.set_ylabel("us per block step (median)")
        ax.set_title(f"TP decode block, hidden {h}, world {world}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"tp_decode_w{world}.png"), dpi=120)
    print("wrote", os.path.join(out, f"tp_decode_w{world}.png"))


if __name__ == "__main__":
    main()
