"""purlin.fused.all_reduce_add_rms_norm (the device API's shipped op,
docs/device-api.md): ranks as threads sharing one GPU; the fused kernel
against the unfused path (AllReduce, then the add-and-norm kernel)
bitwise, and both against torch (x + residual exact; RMSNorm within bf16 /
fp8 rounding), eagerly and in a CUDA graph; past the latency bound (256 x
8192 at 3 and 4 ranks) the fused kernel runs the throughput program; bad
shapes. Skipped without a GPU."""
import threading

import pytest

import purlin
from test_gpu import run_ranks

WORLDS = [2, 3, 4]


def inputs(torch, tokens, hidden, r, seed):
    """x: multiples of 1/16 in [-1, 1] (sums over ranks exact in bf16);
    residual: multiples of 1/8 in [-2, 2]; weight in [0.5, 1.5]."""
    i = torch.arange(tokens * hidden, device="cuda")
    x = (((i * 37 + r * 11 + seed * 5) % 33) - 16).to(torch.float32) / 16
    res = (((i * 13 + seed * 7) % 33) - 16).to(torch.float32) / 8
    w = 0.5 + (torch.arange(hidden, device="cuda") % 65).to(torch.float32) / 64
    return (x.reshape(tokens, hidden).bfloat16(), res.reshape(tokens, hidden).bfloat16(), w.bfloat16())


def reference(torch, xs, res, w, eps):
    s = sum(x.float() for x in xs)
    h = (s.bfloat16().float() + res.float()).bfloat16()
    rms = torch.rsqrt(h.float().pow(2).mean(dim=1, keepdim=True) + eps)
    return s.bfloat16(), h, h.float() * rms * w.float()


@pytest.mark.parametrize("n", WORLDS)
@pytest.mark.parametrize("tokens,hidden", [(1, 4096), (7, 2048), (64, 8192), (256, 8192)])
@pytest.mark.parametrize("fp8", [False, True])
def test_fused_against_unfused_and_torch(gpu, n, tokens, hidden, fp8):
    torch = gpu
    from purlin.fused import all_reduce_add_rms_norm
    eps, scale = 1e-6, 0.25
    data = [inputs(torch, tokens, hidden, r, 0) for r in range(n)]

    def body(comm, r):
        # Every tensor allocated before the first call: a rank thread's
        # cudaMalloc may wait for the GPU while a peer's kernel waits for
        # this rank's next launch (tests/gpu/demo_allreduce_test.cu).
        got = []
        for mode in ("fused", "unfused"):  # "fused": refused rather than silently unfused
            x, res, w = (t.clone() for t in data[r])
            out = torch.empty(tokens, hidden, dtype=torch.float8_e4m3fn if fp8 else torch.bfloat16, device="cuda")
            got.append((mode, x, res, w, out))
        torch.cuda.current_stream().synchronize()
        for mode, x, res, w, out in got:
            all_reduce_add_rms_norm(comm, x, res, w, eps, out=out, scale=scale if fp8 else None, fused=mode)
        torch.cuda.current_stream().synchronize()
        return [(x, res, out) for _, x, res, _, out in got]

    s, h, y = reference(torch, [d[0] for d in data], data[0][1], data[0][2], eps)
    for r, ((xa, ra, oa), (xb, rb, ob)) in enumerate(run_ranks(torch, n, body)):
        assert torch.equal(xa, xb) and torch.equal(ra, rb), f"rank {r}: the paths differ (x, residual)"
        assert torch.equal(oa.view(torch.uint8), ob.view(torch.uint8)), f"rank {r}: the paths differ (out)"
        assert torch.equal(xa, s) and torch.equal(ra, h), f"rank {r}: reduced x or residual differ from torch"
        if fp8:
            torch.testing.assert_close(oa.float() * scale, y, rtol=0.13, atol=scale / 32)
        else:
            torch.testing.assert_close(oa.float(), y, rtol=1 / 64, atol=1e-3)


def test_fused_in_a_graph_and_bad_shapes(gpu):
    torch = gpu
    from purlin.fused import all_reduce_add_rms_norm
    n, eps = 3, 1e-6
    # torch.cuda.graph's __enter__ synchronizes the whole device: not while a
    # peer replays (the peer's kernel would wait for this rank, the
    # synchronization for that kernel) nor while a peer captures (its capture
    # is invalidated), so the ranks capture one after another.
    gate = threading.Barrier(n, timeout=120)

    def body(comm, r):
        # Every tensor allocated before the first call (see the test above).
        x, res, w = inputs(torch, 7, 4096, r, 1)
        out = torch.empty_like(x)
        rout = torch.empty_like(res)
        later = {seed: inputs(torch, 7, 4096, r, seed) for seed in (2, 3)}
        results = {seed: (torch.empty_like(x), torch.empty_like(rout), torch.empty_like(out)) for seed in (2, 3)}
        bad_x, bad_res, bad_w = x[:, :100].contiguous(), res[:, :100].contiguous(), w[:100].contiguous()
        torch.cuda.current_stream().synchronize()
        g = torch.cuda.CUDAGraph()
        for turn in range(n):
            gate.wait()
            if turn == r:
                with torch.cuda.graph(g, stream=torch.cuda.current_stream(), capture_error_mode="thread_local"):
                    all_reduce_add_rms_norm(comm, x, res, w, eps, residual_out=rout, out=out, fused="fused")
        gate.wait()
        for seed in (2, 3):
            x.copy_(later[seed][0])
            res.copy_(later[seed][1])
            g.replay()
            for dst, src in zip(results[seed], (x, rout, out)):
                dst.copy_(src)
        with pytest.raises(purlin.PurlinError) as bad:
            all_reduce_add_rms_norm(comm, bad_x, bad_res, bad_w, eps)
        torch.cuda.current_stream().synchronize()
        return [results[seed] for seed in (2, 3)], bad.value.status

    for r, (results, bad) in enumerate(run_ranks(torch, n, body)):
        assert bad == "InvalidArgument"
        for seed, (x, rout, out) in zip((2, 3), results):
            s, h, y = reference(torch, [inputs(torch, 7, 4096, p, seed)[0] for p in range(n)],
                                inputs(torch, 7, 4096, r, seed)[1], inputs(torch, 7, 4096, r, seed)[2], eps)
            assert torch.equal(x, s) and torch.equal(rout, h), f"rank {r} replay {seed}"
            torch.testing.assert_close(out.float(), y, rtol=1 / 64, atol=1e-3)
