"""The V collectives with their counts in device memory through the torch
layer (docs/device-counts.md): all_to_all_single with split sizes in CUDA
tensors (like torch symmetric memory's all_to_all_vdev), all_gather_v and
reduce_scatter_v with counts in a CUDA tensor; ranks as threads sharing
one GPU, checked bitwise against torch, eagerly and in a CUDA graph
replayed with new splits written into the same tensors. Skipped without a
GPU (scripts/gpu-all.sh runs it on the device machines)."""
import threading

import pytest

import purlin
from test_gpu import rank_input, run_ranks

WORLDS = [2, 3, 4]


def splits_of(n, r, shift, scale):
    """Rows rank r sends each rank: uneven, some zero, moved by `shift`."""
    return [((p + r + shift) % 4) * scale for p in range(n)]


@pytest.mark.parametrize("n", WORLDS)
def test_all_to_all_single_with_device_splits(gpu, n):
    torch = gpu
    dtype, width = torch.bfloat16, 7
    gate = threading.Barrier(n, timeout=120)
    for scale in (1, 300):  # the latency and the throughput program (max_count picks it)
        bound = 3 * scale * width  # elements: at least every block of every rank
        xs = [rank_input(torch, dtype, n * bound, r, seed=scale).reshape(-1, width) for r in range(n)]

        def expect(r, shift):
            parts = []
            for p in range(n):
                rows = splits_of(n, p, shift, scale)
                start = sum(rows[:r])
                parts.append(xs[p][start:start + rows[r]])
            return torch.cat(parts)

        def body(comm, r):
            send = torch.tensor(splits_of(n, r, 0, scale), device="cuda")
            recv = torch.tensor([splits_of(n, p, 0, scale)[r] for p in range(n)], device="cuda")
            out = torch.zeros(n * bound // width, width, dtype=dtype, device="cuda")
            comm.all_to_all_single(out, xs[r], output_split_sizes=recv, input_split_sizes=send, max_count=bound)
            eager = out[:int(recv.sum())].clone()
            # A graph, replayed with other splits written into the same tensors;
            # captured on this rank's stream (torch's default capture stream is
            # one per process: two rank threads capturing on it at once
            # interleave; session 16's first device run hung so).
            # One rank after another: torch.cuda.graph's __enter__ synchronizes
            # the device, which invalidates a peer's capture in progress (seen
            # at 4 ranks, session 17's device run).
            g = torch.cuda.CUDAGraph()
            torch.cuda.current_stream().synchronize()
            for turn in range(n):
                gate.wait()
                if turn == r:
                    with torch.cuda.graph(g, stream=torch.cuda.current_stream(), capture_error_mode="thread_local"):
                        comm.all_to_all_single(out, xs[r], output_split_sizes=recv, input_split_sizes=send,
                                               max_count=bound)
            gate.wait()
            replays = []
            for shift in (1, 2):
                send.copy_(torch.tensor(splits_of(n, r, shift, scale)))
                recv.copy_(torch.tensor([splits_of(n, p, shift, scale)[r] for p in range(n)]))
                out.zero_()
                g.replay()
                replays.append(out[:int(recv.sum())].clone())
            torch.cuda.current_stream().synchronize()
            assert comm.async_error() is None
            return eager, replays
        for r, (eager, replays) in enumerate(run_ranks(torch, n, body)):
            assert torch.equal(eager, expect(r, 0)), f"n={n} scale={scale} rank {r}: eager"
            for shift, got in zip((1, 2), replays):
                assert torch.equal(got, expect(r, shift)), f"n={n} scale={scale} rank {r}: replay shift {shift}"


@pytest.mark.parametrize("n", WORLDS)
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])  # f64: the latency kernels' whole-word form
def test_all_gather_v_and_reduce_scatter_v_with_device_counts(gpu, n, dtype_name):
    torch = gpu
    dtype = getattr(torch, dtype_name)
    counts = [(3 * p + 1) * 100 for p in range(n)]
    bound = max(counts)
    xs = [rank_input(torch, dtype, bound, r) for r in range(n)]
    big = [rank_input(torch, dtype, n * bound, r, seed=1) for r in range(n)]
    total = sum(counts)
    red = big[0][:total].clone()
    for p in range(1, n):
        red = red + big[p][:total]  # fp32 sum in ascending rank order

    def body(comm, r):
        dev = torch.tensor(counts, device="cuda")
        out = torch.zeros(n * bound, dtype=dtype, device="cuda")
        comm.all_gather_v(out, xs[r], dev, max_count=bound)
        rs = torch.zeros(bound, dtype=dtype, device="cuda")
        comm.reduce_scatter_v(rs, big[r], dev, op="sum", max_count=bound)
        torch.cuda.current_stream().synchronize()
        return out[:total].clone(), rs[:counts[r]].clone()
    for r, (ag, rs) in enumerate(run_ranks(torch, n, body)):
        assert torch.equal(ag, torch.cat([xs[p][:counts[p]] for p in range(n)])), f"all_gather_v n={n} {dtype} rank {r}"
        start = sum(counts[:r])
        assert torch.equal(rs, red[start:start + counts[r]]), f"reduce_scatter_v n={n} rank {r}"


def test_device_count_arguments_are_checked(gpu):
    torch = gpu

    def body(comm, r):
        x = torch.zeros(8, device="cuda")
        bad = []
        for call in (lambda: comm.all_gather_v(x, x[:4], torch.tensor([4, 4], device="cuda")),  # no max_count
                     lambda: comm.all_gather_v(x, x[:4], torch.tensor([4, 4, 4], device="cuda"), max_count=4),
                     lambda: comm.all_gather_v(x, x[:4], torch.tensor([4.0, 4.0], device="cuda"), max_count=4),
                     lambda: comm.all_gather_v(x, x[:4], torch.tensor([4, 4], device="cuda"), max_count=5),
                     lambda: comm.all_to_all_single(x, x, output_split_sizes=torch.tensor([1, 1], device="cuda"),
                                                    input_split_sizes=[1, 1], max_count=4)):
            with pytest.raises(purlin.PurlinError) as e:
                call()
            bad.append(e.value.message)
        return bad
    # Each refusal is this rank's own argument: the communicator fails on
    # every rank after the first, so each rank sees the first message here.
    for bad in run_ranks(torch, 2, body):
        assert "need max_count" in bad[0]
        assert "shape (3,), expected (2,)" in bad[1]
        assert "expected an integer dtype" in bad[2]
        assert "fewer than the 5 the bound" in bad[3]
        assert "both output_split_sizes and input_split_sizes" in bad[4]
