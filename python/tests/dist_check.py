"""One rank of the torch.distributed backend check, started by torchrun
(tests/test_dist.py):

    torchrun --nproc-per-node N python/tests/dist_check.py

Every torch.distributed op on CUDA tensors through the "purlin" backend,
each result compared bitwise with one computed by torch on the host from
every rank's input (gathered through gloo); the fallbacks (bitwise ops,
send/recv) are counted and logged once per reason. Without a GPU the
group has no Purlin communicator and the check covers CPU tensors and the
logged reason. Prints "dist_check rank R: PASS (k checks)" or raises.
"""
import logging
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import purlin  # noqa: E402
import purlin.torch  # noqa: E402,F401  (registers the backend)
from purlin import distributed as pd  # noqa: E402

FLOATS = [torch.float32, torch.bfloat16, torch.float16]


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def data(shape, dtype, rank, seed, device):
    """Small integers (exact in every float dtype, so the sums are exact in any order)."""
    g = torch.Generator().manual_seed(1000 * seed + rank)
    x = torch.randint(-8, 9, shape, generator=g)
    return x.to(dtype).to(device)


def every_rank(fn, size):
    return [fn(r) for r in range(size)]


def main():
    lines = Lines()
    logging.getLogger("purlin.distributed").addHandler(lines)
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    dist.init_process_group("cuda:purlin,cpu:gloo")
    pg = pd.purlin_group()
    checks = 0

    def same(got, want, what):
        nonlocal checks
        got, want = got.cpu(), want.cpu()
        if got.shape != want.shape or not torch.equal(got.view(torch.uint8) if got.dtype == torch.bool else got,
                                                      want.view(torch.uint8) if want.dtype == torch.bool else want):
            raise AssertionError(f"rank {rank}: {what}: got {got.flatten()[:8].tolist()} want "
                                 f"{want.flatten()[:8].tolist()}")
        checks += 1

    if not cuda:  # the CPU-only path: every call goes to gloo
        assert pg.comm is None and "no CUDA device" in pg.native_reason, pg.native_reason
        t = torch.full((7,), float(rank + 1))
        dist.all_reduce(t)
        same(t, torch.full((7,), float(size * (size + 1) // 2)), "cpu all_reduce")
        box = [f"from {rank}"]
        dist.broadcast_object_list(box, src=size - 1)
        assert box == [f"from {size - 1}"], box
        dist.barrier()
        assert any("no CUDA device" in m for m in lines.lines), lines.lines
        dist.destroy_process_group()
        # again on the same store (torchrun's): the keys of a new creation differ from the last one's
        dist.init_process_group("cuda:purlin,cpu:gloo")
        t = torch.full((3,), float(rank))
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        same(t, torch.full((3,), float(size - 1)), "cpu all_reduce after a second init")
        assert pd.purlin_group()._keys != pg._keys, (pd.purlin_group()._keys, pg._keys)
        dist.destroy_process_group()
        print(f"dist_check rank {rank}: PASS ({checks} checks, cpu only)", flush=True)
        return

    dev = torch.device("cuda", torch.cuda.current_device())
    assert pg.comm is not None, pg.native_reason
    host_group = dist.new_group(backend="gloo")

    def inputs(shape, dtype, seed):
        return every_rank(lambda r: data(shape, dtype, r, seed, "cpu"), size)

    def reduce_ref(xs, op):
        acc = xs[0].float() if xs[0].is_floating_point() else xs[0].clone()
        for x in xs[1:]:
            y = x.float() if x.is_floating_point() else x
            acc = {"SUM": acc + y, "AVG": acc + y, "PRODUCT": acc * y, "MIN": torch.minimum(acc, y),
                   "MAX": torch.maximum(acc, y)}[op]
        if op == "AVG":
            acc = acc / len(xs)
        return acc.to(xs[0].dtype)

    # all_reduce, every op, floats and ints; non-contiguous once
    seed = 0
    for dtype in FLOATS + [torch.int32, torch.int8]:
        for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
            if op == "AVG" and not dtype.is_floating_point:
                continue
            for count in (1, 1000, 70003, 1 << 20):
                seed += 1
                xs = inputs((count,), dtype, seed)
                if op == "PRODUCT":
                    xs = [x.clamp(-2, 2) for x in xs]
                t = xs[rank].to(dev)
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                same(t, reduce_ref(xs, op), f"all_reduce {dtype} {op} {count}")
    xs = inputs((64, 48), torch.float32, 99)
    t = xs[rank].to(dev).t()  # non-contiguous
    dist.all_reduce(t)
    same(t, reduce_ref(xs, "SUM").t(), "all_reduce non-contiguous")
    xs = [x > 0 for x in inputs((999,), torch.int32, 98)]
    t = xs[rank].to(dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    same(t, torch.stack(xs).any(0), "all_reduce bool")

    # reduce, broadcast
    for root in range(size):
        xs = inputs((4099,), torch.bfloat16, 200 + root)
        t = xs[rank].to(dev)
        dist.reduce(t, dst=root)
        same(t, reduce_ref(xs, "SUM") if rank == root else xs[rank], f"reduce root {root}")
        t = xs[rank].to(dev)
        dist.broadcast(t, src=root)
        same(t, xs[root], f"broadcast root {root}")

    # all_gather: into a tensor, into a list (even, uneven: AllGatherV)
    for count in (5, 65536 + 3):
        xs = inputs((count,), torch.float16, 300 + count)
        out = torch.empty(size * count, dtype=torch.float16, device=dev)
        dist.all_gather_into_tensor(out, xs[rank].to(dev))
        same(out, torch.cat(xs), f"all_gather_into_tensor {count}")
        outs = [torch.empty(count, dtype=torch.float16, device=dev) for _ in range(size)]
        dist.all_gather(outs, xs[rank].to(dev))
        for r in range(size):
            same(outs[r], xs[r], f"all_gather list {count} block {r}")
    counts = [3 + 1000 * r for r in range(size)]
    xs = every_rank(lambda r: data((counts[r],), torch.float32, r, 400, "cpu"), size)
    outs = [torch.empty(c, device=dev) for c in counts]
    dist.all_gather(outs, xs[rank].to(dev))
    for r in range(size):
        same(outs[r], xs[r], f"all_gather uneven block {r}")

    # reduce_scatter: tensor, list (even, uneven: ReduceScatterV)
    for op in ["SUM", "MAX"]:
        xs = inputs((size * 4097,), torch.float32, 500)
        out = torch.empty(4097, device=dev)
        dist.reduce_scatter_tensor(out, xs[rank].to(dev), op=getattr(dist.ReduceOp, op))
        same(out, reduce_ref(xs, op)[rank * 4097:(rank + 1) * 4097], f"reduce_scatter_tensor {op}")
        out = torch.empty(4097, device=dev)
        dist.reduce_scatter(out, list(xs[rank].to(dev).chunk(size)), op=getattr(dist.ReduceOp, op))
        same(out, reduce_ref(xs, op)[rank * 4097:(rank + 1) * 4097], f"reduce_scatter list {op}")
    counts = [2 + 777 * r for r in range(size)]
    xs = inputs((sum(counts),), torch.bfloat16, 600)
    out = torch.empty(counts[rank], dtype=torch.bfloat16, device=dev)
    dist.reduce_scatter(out, list(xs[rank].to(dev).split(counts)))
    start = sum(counts[:rank])
    same(out, reduce_ref(xs, "SUM")[start:start + counts[rank]], "reduce_scatter uneven")

    # all_to_all_single: equal blocks, equal split sizes, uneven split sizes; all_to_all lists
    rows = 6 * size
    xs = inputs((rows, 5), torch.float32, 700)
    out = torch.empty(rows, 5, device=dev)
    dist.all_to_all_single(out, xs[rank].to(dev))
    want = torch.cat([xs[q].chunk(size)[rank] for q in range(size)])
    same(out, want, "all_to_all_single equal")
    out = torch.empty(rows, 5, device=dev)
    dist.all_to_all_single(out, xs[rank].to(dev), [6] * size, [6] * size)
    same(out, want, "all_to_all_single equal splits")

    out = torch.empty(rows, 5, device=dev)  # rank 0 passes no split sizes, its peers equal ones (torch allows it)
    if rank == 0:
        dist.all_to_all_single(out, xs[rank].to(dev))
    else:
        dist.all_to_all_single(out, xs[rank].to(dev), [6] * size, [6] * size)
    same(out, want, "all_to_all_single, split sizes on some ranks only")

    def split(p, q):  # rows rank p sends to rank q
        return (p * 3 + q * 5) % 7

    xs = every_rank(lambda p: data((sum(split(p, q) for q in range(size)), 3), torch.int32, p, 800, "cpu"), size)
    send = [split(rank, q) for q in range(size)]
    recv = [split(p, rank) for p in range(size)]
    out = torch.empty(sum(recv), 3, dtype=torch.int32, device=dev)
    dist.all_to_all_single(out, xs[rank].to(dev), recv, send)
    want = torch.cat([xs[p].split([split(p, q) for q in range(size)])[rank] for p in range(size)])
    same(out, want, "all_to_all_single uneven")
    ins = [xs[rank].split(send)[q].to(dev) for q in range(size)]
    outs = [torch.empty(recv[p], 3, dtype=torch.int32, device=dev) for p in range(size)]
    dist.all_to_all(outs, ins)
    for p in range(size):
        same(outs[p], xs[p].split([split(p, q) for q in range(size)])[rank], f"all_to_all list from {p}")

    # gather, scatter
    root = size - 1
    xs = inputs((333,), torch.float32, 900)
    outs = [torch.empty(333, device=dev) for _ in range(size)] if rank == root else None
    dist.gather(xs[rank].to(dev), outs, dst=root)
    if rank == root:
        for r in range(size):
            same(outs[r], xs[r], f"gather block {r}")
    out = torch.empty(333, device=dev)
    dist.scatter(out, [x.to(dev) for x in xs] if rank == root else None, src=root)
    same(out, xs[rank], "scatter")

    # async_op: the Work orders another stream; the coalesced all_reduce
    xs = inputs((1 << 18,), torch.float32, 1000)
    t = xs[rank].to(dev)
    work = dist.all_reduce(t, async_op=True)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        work.wait()
        copy = t.clone()
    side.synchronize()
    same(copy, reduce_ref(xs, "SUM"), "async all_reduce waited on another stream")
    assert work.is_completed()
    ts, ys = inputs((77,), torch.float32, 1100), inputs((99,), torch.float32, 1101)
    t, y = ts[rank].to(dev), ys[rank].to(dev)
    with dist._coalescing_manager(async_ops=True) as cm:
        dist.all_reduce(t)
        dist.all_reduce(y)
    cm.wait()
    same(t, reduce_ref(ts, "SUM"), "coalesced all_reduce 1")
    same(y, reduce_ref(ys, "SUM"), "coalesced all_reduce 2")
    a, b = inputs((5,), torch.float16, 1103), inputs((7,), torch.float16, 1104)
    oa, ob = torch.empty(5 * size, dtype=torch.float16, device=dev), torch.empty(7 * size, dtype=torch.float16,
                                                                               device=dev)
    with dist._coalescing_manager(async_ops=True) as cm:  # all_gather_into_tensor_coalesced
        dist.all_gather_into_tensor(oa, a[rank].to(dev))
        dist.all_gather_into_tensor(ob, b[rank].to(dev))
    cm.wait()
    same(oa, torch.cat(a), "coalesced all_gather_into_tensor 1")
    same(ob, torch.cat(b), "coalesced all_gather_into_tensor 2")
    ints = inputs((33,), torch.int32, 1105)
    t = ints[rank].to(dev)
    with dist._coalescing_manager(device=dev, async_ops=True) as cm:  # a fallback inside the device form
        dist.all_reduce(t, op=dist.ReduceOp.BAND)
    cm.wait()
    want = ints[0].clone()
    for x in ints[1:]:
        want = torch.bitwise_and(want, x)
    same(t, want, "coalesced BAND all_reduce (fallback, device form)")
    xs = inputs((4 * size,), torch.float32, 1102)
    outs = [torch.empty(4, device=dev), torch.empty(4, device=dev)]
    with dist._coalescing_manager(device=dev, async_ops=True) as cm:  # the device form
        dist.reduce_scatter_tensor(outs[0], xs[rank].to(dev))
        dist.reduce_scatter_tensor(outs[1], (2 * xs[rank]).to(dev))
    cm.wait()
    want = reduce_ref(xs, "SUM")[4 * rank:4 * rank + 4]
    same(outs[0], want, "coalesced reduce_scatter 1 (device form)")
    same(outs[1], 2 * want, "coalesced reduce_scatter 2 (device form)")

    # CUDA graph capture of all_reduce (replayed with new data)
    static = torch.zeros(1 << 16, device=dev)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        dist.all_reduce(static)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(static)
    for it in range(3):
        xs = inputs((1 << 16,), torch.float32, 1200 + it)
        static.copy_(xs[rank].to(dev))
        graph.replay()
        same(static, reduce_ref(xs, "SUM"), f"captured all_reduce replay {it}")
    torch.cuda.synchronize()
    del graph
    pg.comm.release()  # collective: the captured direct mappings go before the buffers do

    # subgroup through new_group(backend="purlin")
    if size >= 2:
        sub = dist.new_group([0, 1], backend="purlin")
        if rank < 2:
            t = torch.full((10,), float(rank + 1), device=dev)
            dist.all_reduce(t, group=sub)
            same(t, torch.full((10,), 3.0), "subgroup all_reduce")
            assert isinstance(sub, pd.ProcessGroupPurlin) and sub.comm is not None

    # purlin.torch on the group's communicator: out of place, V forms, should_use, register
    comm = pg.comm
    xs = inputs((5000,), torch.bfloat16, 1400)
    src = xs[rank].to(dev)
    out = torch.empty_like(src)
    comm.all_reduce(src, output=out)
    same(out, reduce_ref(xs, "SUM"), "out-of-place all_reduce")
    same(src, xs[rank], "out-of-place all_reduce leaves its input")
    counts = [1 + 300 * r for r in range(size)]
    mine = data((counts[rank],), torch.float32, rank, 1500, "cpu")
    out = torch.empty(sum(counts), device=dev)
    comm.all_gather_v(out, mine.to(dev), counts)
    same(out, torch.cat(every_rank(lambda r: data((counts[r],), torch.float32, r, 1500, "cpu"), size)),
         "all_gather_v")
    xs = inputs((sum(counts),), torch.float32, 1600)
    out = torch.empty(counts[rank], device=dev)
    comm.reduce_scatter_v(out, xs[rank].to(dev), counts, op="max")
    start = sum(counts[:rank])
    same(out, reduce_ref(xs, "MAX")[start:start + counts[rank]], "reduce_scatter_v")
    assert comm.should_use(torch.ones(8, device=dev)) and comm.should_use(torch.ones(8, device=dev), "max")
    assert not comm.should_use(torch.ones(8))  # host memory
    assert not comm.should_use(torch.ones(8, 8, device=dev).t())  # not contiguous
    assert not comm.should_use(torch.ones(8, device=dev, dtype=torch.int16))  # a dtype Purlin does not move
    assert not comm.should_use(torch.ones(8, device=dev, dtype=torch.bool), "avg")
    # a registered buffer (8 MiB, above the 4 MiB latency crossover: the direct program on 2 ranks); under
    # expandable segments torch allocates it with cuMem (exported to the
    # peers as POSIX file descriptors, runtime/src/vmm_share.h)
    gout = torch.zeros(size << 20, device=dev)  # AllGather into a registered output: the direct program, any n
    gathered = comm.register(gout)
    xs = inputs((1 << 20,), torch.float32, 1900)
    comm.all_gather_into_tensor(gout, xs[rank].to(dev))
    same(gout, torch.cat(xs), "all_gather_into_tensor into a registered buffer")
    torch.cuda.synchronize()
    dist.barrier()
    comm.deregister(gathered)
    buf = torch.zeros(2 << 20, device=dev)
    handle = comm.register(buf)
    xs = inputs((2 << 20,), torch.float32, 1700)
    buf.copy_(xs[rank].to(dev))
    comm.all_reduce(buf)
    same(buf, reduce_ref(xs, "SUM"), "all_reduce on a registered buffer")
    torch.cuda.synchronize()
    dist.barrier()
    comm.deregister(handle)
    # captured with 8 MiB: the capture maps the peers' outputs (the direct program on 2 ranks)
    big = torch.zeros(2 << 20, device=dev)
    comm.all_reduce(big)
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        comm.all_reduce(big)
    for it in range(2):
        xs = inputs((2 << 20,), torch.float32, 1800 + it)
        big.copy_(xs[rank].to(dev))
        g2.replay()
        same(big, reduce_ref(xs, "SUM"), f"captured 8 MiB all_reduce replay {it}")
    torch.cuda.synchronize()
    del g2
    comm.release()

    # fallbacks: bitwise ops, send/recv
    before = dict(pg.fallbacks)
    xs = inputs((513,), torch.int32, 1300)
    for op, fn in (("BAND", torch.bitwise_and), ("BOR", torch.bitwise_or), ("BXOR", torch.bitwise_xor)):
        for _ in range(2):
            t = xs[rank].to(dev)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            want = xs[0].clone()
            for x in xs[1:]:
                want = fn(want, x)
            same(t, want, f"all_reduce {op} (fallback)")
    if rank < 2 and size >= 2:
        t = torch.arange(10, device=dev, dtype=torch.float32) + 100 * rank
        if rank == 0:
            dist.send(t, dst=1)
        else:
            got = torch.empty(10, device=dev)
            dist.recv(got, src=0)
            same(got, torch.arange(10, dtype=torch.float32), "recv (fallback)")
    if size >= 2:  # batch_isend_irecv: a ring, every rank sends and receives at once
        t = torch.full((1000,), float(rank), device=dev)
        got = torch.empty(1000, device=dev)
        ops = [dist.P2POp(dist.isend, t, (rank + 1) % size), dist.P2POp(dist.irecv, got, (rank - 1) % size)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        same(got, torch.full((1000,), float((rank - 1) % size)), "batch_isend_irecv ring (fallback)")
    for op in ("BAND", "BOR", "BXOR"):
        assert pg.fallbacks.get(f"ReduceOp.{op}", 0) - before.get(f"ReduceOp.{op}", 0) == 2, pg.fallbacks
        logged = [m for m in lines.lines if f"ReduceOp.{op}" in m]
        assert len(logged) == 1, (op, lines.lines)  # one log line per reason
    if rank < 2 and size >= 2:
        assert pg.fallbacks.get("send/recv (point to point)") == 3, pg.fallbacks
    # the native calls were not fallbacks
    assert set(pg.fallbacks) <= {"ReduceOp.BAND", "ReduceOp.BOR", "ReduceOp.BXOR", "send/recv (point to point)"}, \
        pg.fallbacks

    dist.barrier()
    torch.cuda.synchronize()
    dist.destroy_process_group(host_group)
    dist.destroy_process_group()
    print(f"dist_check rank {rank}: PASS ({checks} checks; fallbacks {pd.rules.reasons_text(before)} before, "
          f"{pd.rules.reasons_text(pg.fallbacks)} after; fallback backend {pg.fallback_backend})", flush=True)


if __name__ == "__main__":
    main()
