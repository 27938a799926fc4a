"""The torch layer on a GPU: ranks as threads sharing one GPU (through the
C ABI's in-process group) against torch references, for every collective,
dtype and op; a world of one under torch.distributed;
CUDA graph capture; torch.compile without a graph break.

Skipped (with the reason) without torch or a GPU. Run on the device
machines by scripts/gpu-all.sh (step python.gpu)."""
import os
import threading

import pytest

import purlin

SIZES = [1, 1000, 65536 + 3, 1 << 20]   # latency and throughput programs, odd counts
WORLDS = [2, 3, 4]


def run_ranks(torch, n, body, **options):
    """body(comm, rank) in n threads, each with its own stream on GPU 0; returns
    the results in rank order, re-raising the first failure."""
    from purlin.torch import Communicator
    group = purlin.InProcessGroup(n)
    results, errors = [None] * n, []
    # Destruction is local: no rank frees its workspace while a peer's
    # kernel may still read it (docs/runtime.md), so all finish first.
    done = threading.Barrier(n, timeout=300)

    def rank_main(r):
        try:
            torch.cuda.set_device(0)
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                comm = Communicator.in_process_group(group, r, device=0, **options)
                try:
                    results[r] = body(comm, r)
                finally:
                    stream.synchronize()
                    try:
                        done.wait()
                    finally:
                        comm.destroy()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((r, e))

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a rank hung"
    group.close()
    if errors:
        r, e = errors[0]
        raise AssertionError(f"rank {r}: {e!r}") from e
    return results


def rank_input(torch, dtype, count, r, seed=0):
    g = torch.Generator(device="cuda").manual_seed(1000 * seed + r)
    if dtype.is_floating_point:
        return torch.randn(count, generator=g, device="cuda", dtype=torch.float32).to(dtype)
    return torch.randint(-100, 100, (count,), generator=g, device="cuda").to(dtype)


def float_dtypes(torch):
    names = purlin.dtypes()
    table = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    return [table[k] for k in table if k in names]


@pytest.mark.parametrize("n", WORLDS)
def test_all_reduce(gpu, n):
    torch = gpu
    for dtype in float_dtypes(torch):
        for op in [o for o in ("sum", "max", "min") if o in purlin.ops()]:
            for count in SIZES:
                xs = [rank_input(torch, dtype, count, r) for r in range(n)]
                want = reference_of(torch, xs, op)

                def body(comm, r):
                    t = xs[r].clone()
                    comm.all_reduce(t, op=op)
                    return t
                for r, got in enumerate(run_ranks(torch, n, body)):
                    assert torch.equal(got, want), f"n={n} {dtype} {op} count={count} rank {r}"


@pytest.mark.parametrize("n", WORLDS)
def test_all_gather_and_reduce_scatter(gpu, n):
    torch = gpu
    for dtype in float_dtypes(torch):
        for count in SIZES:
            xs = [rank_input(torch, dtype, count, r) for r in range(n)]
            big = [rank_input(torch, dtype, count * n, r, seed=1) for r in range(n)]
            red = reference_of(torch, big, "sum")

            def body(comm, r):
                out = torch.empty(count * n, dtype=dtype, device="cuda")
                comm.all_gather_into_tensor(out, xs[r])
                rs = torch.empty(count, dtype=dtype, device="cuda")
                comm.reduce_scatter_tensor(rs, big[r])
                return out, rs
            for r, (ag, rs) in enumerate(run_ranks(torch, n, body)):
                assert torch.equal(ag, torch.cat(xs)), f"all_gather n={n} {dtype} count={count} rank {r}"
                assert torch.equal(rs, red[r * count:(r + 1) * count]), f"reduce_scatter n={n} {dtype} rank {r}"


@pytest.mark.parametrize("n", WORLDS)
def test_all_to_all_single(gpu, n):
    torch = gpu
    dtype = torch.bfloat16
    for count in [1, 4099, 1 << 16]:
        xs = [rank_input(torch, dtype, count * n, r) for r in range(n)]
        # uneven splits: rank r sends (p + r) % 3 + 1 rows of `count` / 4 elements to rank p
        rows = [[(p + r) % 3 + 1 for p in range(n)] for r in range(n)]
        width = max(1, count // 4)
        ys = [rank_input(torch, dtype, sum(rows[r]) * width, r, seed=2).reshape(-1, width) for r in range(n)]
        cap = max(max(rw) for rw in rows) * width * n  # >= every block, the same on every rank

        def body(comm, r):
            out = torch.empty(count * n, dtype=dtype, device="cuda")
            comm.all_to_all_single(out, xs[r])
            recv_rows = [rows[p][r] for p in range(n)]
            out_v = torch.empty(sum(recv_rows), width, dtype=dtype, device="cuda")
            comm.all_to_all_single(out_v, ys[r], output_split_sizes=recv_rows, input_split_sizes=rows[r],
                                   max_count=cap)
            return out, out_v
        for r, (eq, v) in enumerate(run_ranks(torch, n, body)):
            want = torch.cat([xs[p][r * count:(r + 1) * count] for p in range(n)])
            assert torch.equal(eq, want), f"all_to_all n={n} count={count} rank {r}"
            parts = []
            for p in range(n):
                start = sum(rows[p][:r])
                parts.append(ys[p][start:start + rows[p][r]])
            assert torch.equal(v, torch.cat(parts)), f"all_to_all_v n={n} count={count} rank {r}"


@pytest.mark.parametrize("n", [2, 3])
def test_rooted(gpu, n):
    torch = gpu
    dtype = torch.float16
    for count in [1, 1000, 1 << 18]:
        for root in range(n):
            xs = [rank_input(torch, dtype, count, r, seed=root) for r in range(n)]
            blocks = rank_input(torch, dtype, count * n, root, seed=7)

            def body(comm, r):
                b = xs[r].clone()
                comm.broadcast(b, src=root)
                red = xs[r].clone()
                comm.reduce(red, dst=root, op="max")
                g = torch.empty(count * n, dtype=dtype, device="cuda") if r == root else None
                comm.gather(xs[r], dst=root, output=g)
                s = torch.empty(count, dtype=dtype, device="cuda")
                comm.scatter(s, src=root, input=blocks if r == root else None)
                return b, red, g, s
            res = run_ranks(torch, n, body)
            for r, (b, red, g, s) in enumerate(res):
                assert torch.equal(b, xs[root]), f"broadcast n={n} root={root} rank {r}"
                if r == root:
                    assert torch.equal(red, reference_of(torch, xs, "max")), f"reduce n={n} root={root}"
                    assert torch.equal(g, torch.cat(xs)), f"gather n={n} root={root}"
                else:
                    assert torch.equal(red, xs[r]), "reduce changed a non-root rank's tensor"
                assert torch.equal(s, blocks[r * count:(r + 1) * count]), f"scatter n={n} root={root} rank {r}"


def random_of(torch, dtype, count, r, seed):
    """count elements of `dtype` with random bytes (bool: 0/1), compared bitwise (as uint8) since
    random float bytes include NaNs."""
    g = torch.Generator(device="cuda").manual_seed(5000 + 100 * seed + r)
    size = torch.empty(0, dtype=dtype).element_size()
    hi = 2 if dtype == torch.bool else 256
    raw = torch.randint(0, hi, (count * size,), generator=g, device="cuda", dtype=torch.uint8)
    return raw.view(dtype)


def same_bytes(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch_equal_bytes(a, b)


def torch_equal_bytes(a, b):
    import torch
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


@pytest.mark.parametrize("n", [2, 3])
def test_copies_of_every_element_size(gpu, n):
    """The copy collectives (all_gather, all_to_all, broadcast, gather, scatter) move any dtype's bytes (1, 2,
    4, 8-byte elements, odd counts)."""
    torch = gpu
    names = purlin.dtypes()
    dtypes = [torch.int8, torch.uint8, torch.bool, torch.int32, torch.int64, torch.float64,
              torch.float8_e4m3fn, torch.float8_e5m2]
    from purlin._tensors import purlin_dtype_name
    dtypes = [d for d in dtypes if purlin_dtype_name(d) in names]
    assert len(dtypes) == 8, f"the library lacks some dtypes: {sorted(names)}"
    for dtype in dtypes:
        for count in [1, 7, 1001, 65536 + 3, (1 << 20) + 1]:
            xs = [random_of(torch, dtype, count, r, 0) for r in range(n)]
            big = [random_of(torch, dtype, count * n, r, 1) for r in range(n)]

            def body(comm, r):
                ag = torch.empty(count * n, dtype=dtype, device="cuda")
                comm.all_gather_into_tensor(ag, xs[r])
                a2a = torch.empty(count * n, dtype=dtype, device="cuda")
                comm.all_to_all_single(a2a, big[r])
                b = xs[r].clone()
                comm.broadcast(b, src=n - 1)
                root = count % n
                g = torch.empty(count * n, dtype=dtype, device="cuda") if r == root else None
                comm.gather(xs[r], dst=root, output=g)
                sc = torch.empty(count, dtype=dtype, device="cuda")
                comm.scatter(sc, src=root, input=big[root] if r == root else None)
                return ag, a2a, b, g, sc
            for r, (ag, a2a, b, g, sc) in enumerate(run_ranks(torch, n, body)):
                what = f"{dtype} count={count} n={n} rank {r}"
                assert same_bytes(ag, torch.cat(xs)), "all_gather " + what
                want = torch.cat([big[p][r * count:(r + 1) * count] for p in range(n)])
                assert same_bytes(a2a, want), "all_to_all " + what
                assert same_bytes(b, xs[n - 1]), "broadcast " + what
                root = count % n
                if r == root:
                    assert same_bytes(g, torch.cat(xs)), "gather " + what
                assert same_bytes(sc, big[root][r * count:(r + 1) * count]), "scatter " + what


ALL_OPS = ("sum", "avg", "product", "min", "max")


def every_dtype(torch):
    """Every dtype a torch.distributed NCCL user reduces (bool included)."""
    return [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8, torch.int32,
            torch.int64, torch.float8_e4m3fn, torch.float8_e5m2, torch.bool]


def case_input(torch, dtype, count, p, seed):
    """Rank p's input of a case: small normal floats (fp8 included), integers over their whole range (so that
    sums and products wrap), bool 0/1."""
    g = torch.Generator(device="cuda").manual_seed(7919 * seed + p)
    if dtype == torch.bool:
        return torch.randint(0, 2, (count,), generator=g, device="cuda").bool()
    if dtype.is_floating_point:
        return (torch.randn(count, generator=g, device="cuda", dtype=torch.float32) * 2).to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -(1 << 62)), min(info.max, 1 << 62)
    return torch.randint(lo, hi, (count,), generator=g, device="cuda", dtype=torch.int64).to(dtype)


def reference_of(torch, xs, op):
    """The runtime's contract (docs/runtime.md "Element arithmetic"): ascending rank order; floats accumulate
    in fp32 (f64 in fp64) and round once, avg = sum / n; integers exact modulo 2^bits (int64 arithmetic wraps
    like the narrower types), avg = the wrapped sum truncated toward zero; bool: sum/max = or, product/min =
    and (torch.distributed's NCCL mapping)."""
    dtype, n = xs[0].dtype, len(xs)
    if dtype == torch.bool:
        acc = xs[0].clone()
        for x in xs[1:]:
            acc = acc | x if op in ("sum", "max") else acc & x
        return acc
    floating = dtype.is_floating_point
    wide = (torch.float64 if dtype == torch.float64 else torch.float32) if floating else torch.int64
    acc = xs[0].to(wide)
    for x in xs[1:]:
        x = x.to(wide)
        if op in ("sum", "avg"):
            acc = acc + x
        elif op == "product":
            acc = acc * x
        elif op == "max":
            acc = torch.fmax(acc, x) if floating else torch.maximum(acc, x)
        else:
            acc = torch.fmin(acc, x) if floating else torch.minimum(acc, x)
    if op == "avg":
        if floating:
            # One rounded division: torch multiplies by 1/n for a scalar divisor on CUDA, which differs
            # from acc / n in the last bit for n = 3.
            acc = acc / torch.full_like(acc, n)
        else:
            acc = torch.div(acc.to(dtype).to(torch.int64), n, rounding_mode="trunc")
    return acc.to(dtype)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_reductions_of_every_dtype_and_op(gpu, n):
    """all_reduce, reduce_scatter_tensor and reduce of every dtype with every op against the torch reference,
    bitwise: counts that take the latency program and (> 4 MiB) the throughput program, odd counts. The
    pairs of every reduction class (purlin/reduction.h: a loop per class, dispatched per range)."""
    torch = gpu
    dtypes = every_dtype(torch)
    assert set(ALL_OPS) <= set(purlin.ops()), f"the library lacks ops: {sorted(purlin.ops())}"

    def body(comm, r):
        failures, seed = [], 0
        for dtype in dtypes:
            size = torch.empty(0, dtype=dtype).element_size()
            for op in ALL_OPS:
                if dtype == torch.bool and op == "avg":
                    with pytest.raises(purlin.PurlinError):
                        comm.all_reduce(torch.ones(4, dtype=dtype, device="cuda"), op=op)
                    continue
                for count in (1, 7, 1000, 65536 + 3, (5 << 20) // size + 3):
                    seed += 1
                    what = f"{dtype} {op} count={count} n={n} rank {r}"
                    xs = [case_input(torch, dtype, count * n, p, seed) for p in range(n)]
                    want = reference_of(torch, xs, op)
                    # Three calls in flight per rank before the comparisons (which synchronize): the
                    # first launches of kernels while the peers' kernels spin (docs/runtime.md
                    # "Kernel loading").
                    t = xs[r].clone()
                    comm.all_reduce(t, op=op)
                    rs = torch.empty(count, dtype=dtype, device="cuda")
                    comm.reduce_scatter_tensor(rs, xs[r], op=op)
                    root = seed % n
                    red = xs[r].clone()
                    comm.reduce(red, dst=root, op=op)
                    if not torch_equal_bytes(t, want):
                        failures.append("all_reduce " + what)
                    if not torch_equal_bytes(rs, want[r * count:(r + 1) * count]):
                        failures.append("reduce_scatter " + what)
                    if not torch_equal_bytes(red, want if r == root else xs[r]):
                        failures.append(f"reduce (root {root}) " + what)
        return failures
    failures = [f for fs in run_ranks(torch, n, body) for f in fs]
    assert not failures, f"{len(failures)} mismatches, e.g. {failures[:6]}"


def test_dynamic_element_reductions_in_graphs(gpu):
    """Captured calls of >= 4 MiB take the direct program (kernel and copy-engine forms): i32 sum, fp8 avg,
    i64 product and f64 max (their reduction classes' loops), replayed with new inputs."""
    torch = gpu
    n = 2
    cases = [(torch.int32, "sum"), (torch.float8_e4m3fn, "avg"), (torch.int64, "product"), (torch.float64, "max")]

    def body(comm, r):
        failures = []
        for k, (dtype, op) in enumerate(cases):
            size = torch.empty(0, dtype=dtype).element_size()
            count = (8 << 20) // size  # 16-byte partitions: the direct program (planDirect)
            x = torch.zeros(count, dtype=dtype, device="cuda")
            s = torch.cuda.current_stream()
            comm.all_reduce(x, op=op)  # warm-up, eager
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
                comm.all_reduce(x, op=op)
            for step in range(2):
                xs = [case_input(torch, dtype, count, p, 100 * k + step) for p in range(n)]
                x.copy_(xs[r])
                g.replay()
                if not torch_equal_bytes(x, reference_of(torch, xs, op)):
                    failures.append(f"{dtype} {op} replay {step} rank {r}")
            s.synchronize()
            del g
            comm._comm.release_direct()
        return failures
    failures = [f for fs in run_ranks(torch, n, body) for f in fs]
    assert not failures, failures


def test_bad_arguments_raise_on_every_rank(gpu):
    """Every rank passes the same bad arguments. An unsupported dtype is refused alike everywhere and the
    communicator stays usable; a fault of a rank's own tensors fails the communicator on every rank
    (docs/failure-model.md "A refusal on one rank"), and later calls still name their own faults."""
    torch = gpu

    def body(comm, r):
        msgs = []
        with pytest.raises(purlin.PurlinError) as e:
            comm.all_reduce(torch.ones(4, device="cuda", dtype=torch.complex64))
        msgs.append(e.value.message)
        assert comm.async_error() is None, "an unsupported dtype failed the communicator"
        x = torch.ones(4, device="cuda")
        comm.all_reduce(x)
        torch.cuda.current_stream().synchronize()
        assert torch.equal(x.cpu(), torch.full((4,), 2.0)), "the call after the unsupported dtype"
        cases = [
            lambda: comm.all_reduce(torch.ones(4, device="cpu")),
            lambda: comm.all_reduce(torch.ones(4, 2, device="cuda").t()),
            lambda: comm.all_gather_into_tensor(torch.empty(7, device="cuda"), torch.ones(4, device="cuda")),
            lambda: comm.all_gather_into_tensor(torch.empty(8, device="cuda", dtype=torch.float16),
                                                torch.ones(4, device="cuda")),
        ]
        for c in cases:
            with pytest.raises(purlin.PurlinError) as e:
                c()
            msgs.append(e.value.message)
        torch.cuda.current_stream().synchronize()
        err = comm.async_error()
        msgs.append(err.message if err else "")
        return msgs
    for msgs in run_ranks(torch, 2, body):
        assert "not supported by purlin" in msgs[0]
        assert "not on a CUDA device" in msgs[1]
        assert "non-contiguous" in msgs[2]
        assert "7 elements, expected 8" in msgs[3]
        assert "dtypes differ" in msgs[4]
        assert "refused a call" in msgs[5] and "not on a CUDA device" in msgs[5], msgs[5]


@pytest.mark.parametrize("count", [1000, 1 << 20])
def test_refusal_on_one_rank_fails_every_rank(gpu, count):
    """Rank 1's tensor is not contiguous, rank 0's call is correct (latency and throughput sizes): rank 1
    raises, rank 0's call ends instead of waiting on rank 1 (its stream synchronizes), both ranks' errors say
    rank 1 refused a call, and every later call raises on both ranks."""
    torch = gpu

    def body(comm, r):
        x = torch.ones(count, device="cuda")
        if r == 1:
            with pytest.raises(purlin.PurlinError) as e:
                comm.all_reduce(torch.ones(count, 2, device="cuda").t())
            assert "non-contiguous" in e.value.message
        else:
            comm.all_reduce(x)
        torch.cuda.current_stream().synchronize()
        err = comm.async_error()
        assert err is not None and "rank 1 refused a call" in err.message, err
        assert err.status == ("RemoteError" if r == 0 else "InvalidArgument"), err
        with pytest.raises(purlin.PurlinError):
            comm.all_reduce(x)
        return err.status
    assert run_ranks(torch, 2, body) == ["RemoteError", "InvalidArgument"]


def test_graph_capture_replays_new_inputs(gpu):
    torch = gpu
    n, count = 2, 4096

    def body(comm, r):
        x = torch.zeros(count, dtype=torch.bfloat16, device="cuda")
        s = torch.cuda.current_stream()
        g = torch.cuda.CUDAGraph()
        comm.all_reduce(x)  # warm-up, eager
        with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
            comm.all_reduce(x)
        outs = []
        for step in range(3):
            x.copy_(rank_input(torch, torch.bfloat16, count, r, seed=10 + step))
            g.replay()
            outs.append(x.clone())
        s.synchronize()
        del g
        comm._comm.release_direct()
        return outs
    res = run_ranks(torch, n, body)
    for step in range(3):
        xs = [rank_input(torch, torch.bfloat16, count, r, seed=10 + step) for r in range(n)]
        want = reference_of(torch, xs, "sum")
        for r in range(n):
            assert torch.equal(res[r][step], want), f"replay {step} rank {r}"


@pytest.mark.parametrize("mismatch", [False, True])
def test_capture_context_compares_captured_calls(gpu, mismatch):
    """capture(): ranks that captured the same calls pass (and the graph
    replays right); a rank that captured one more call makes every rank
    raise before any replay."""
    torch = gpu
    n, count = 2, 1000  # the latency program: capture makes no host exchange
    # The ranks capture one after another: torch.cuda.graph's __enter__
    # synchronizes the whole device, and a rank that has left capture()
    # already runs its compare (an eager all-reduce whose kernel waits for
    # the peer's): the peer's synchronization would wait for that kernel,
    # and the kernel for the peer (hung on one H100, session 18).
    gate = threading.Barrier(n, timeout=120)

    def body(comm, r):
        x = torch.zeros(count, dtype=torch.float32, device="cuda")
        s = torch.cuda.current_stream()
        comm.all_reduce(x)  # warm-up, eager
        s.synchronize()
        g = torch.cuda.CUDAGraph()
        try:
            with comm.capture():
                for turn in range(n):
                    gate.wait()
                    if turn == r:
                        with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
                            comm.all_reduce(x)
                            if mismatch and r == 1:
                                comm.all_reduce(x)
                gate.wait()
        except purlin.PurlinError as e:
            return str(e)
        x.copy_(rank_input(torch, torch.float32, count, r, seed=77))
        g.replay()
        s.synchronize()
        return comm.last_captured_calls, x.clone()
    res = run_ranks(torch, n, body)
    if mismatch:
        for r in range(n):
            assert isinstance(res[r], str) and "rank 0: 1, rank 1: 2" in res[r], res[r]
    else:
        want = reference_of(torch, [rank_input(torch, torch.float32, count, r, seed=77) for r in range(n)], "sum")
        for r in range(n):
            assert res[r][0] == 1 and torch.equal(res[r][1], want), r


def test_world_of_one_under_torch_distributed(gpu):
    torch = gpu
    import torch.distributed as dist
    from purlin.torch import Communicator
    if dist.is_initialized():
        pytest.skip("torch.distributed is already initialised in this process")
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        comm = Communicator(device=0)
        assert (comm.rank, comm.size) == (0, 1)
        x = torch.arange(1000, device="cuda", dtype=torch.float32)
        want = x.clone()
        comm.all_reduce(x)
        out = torch.empty_like(x)
        comm.all_gather_into_tensor(out, x)
        torch.cuda.synchronize()
        assert torch.equal(x, want) and torch.equal(out, want)

        def step(t):
            comm.all_reduce(t)
            return t * 2
        compiled = torch.compile(step, fullgraph=True)  # fullgraph: a graph break is an error
        y = compiled(x.clone())
        torch.cuda.synchronize()
        assert torch.equal(y, want * 2)
        comm.destroy()
    finally:
        dist.destroy_process_group()
