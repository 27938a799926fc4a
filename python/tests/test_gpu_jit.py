"""purlin.jit on a GPU: a declaration of the user's own built at run time
(purlinc and nvcc on this machine), loaded before the communicators (whose
creation loads its kernels too) and run by ranks as threads sharing one GPU,
bitwise against torch; eager and captured in a CUDA graph. Skipped without
torch, a GPU, purlinc or nvcc."""
import pytest

import purlin
from purlin import jit

from test_gpu import rank_input, run_ranks

GATHER = "using myGather = SNAC<Atom, Policy, copy, packed, scattered>;\n"


@pytest.fixture(scope="module")
def gather_library(gpu, tmp_path_factory):
    try:
        jit._purlinc(), jit._nvcc()
    except purlin.PurlinError as e:
        pytest.skip(f"purlin.jit needs purlinc and nvcc: {e}")
    import os
    saved = os.environ.get("PURLIN_JIT_CACHE")
    os.environ["PURLIN_JIT_CACHE"] = str(tmp_path_factory.mktemp("jit-cache"))  # a fresh build: this test's own
    try:
        # myGather is no symbol of libpurlin.so: the calls below can only run the jit library's kernels.
        yield jit.load(GATHER, name="gather", device=0)
    finally:
        if saved is None:
            del os.environ["PURLIN_JIT_CACHE"]
        else:
            os.environ["PURLIN_JIT_CACHE"] = saved


@pytest.mark.parametrize("n", [2, 3])
def test_jit_all_gather(gpu, gather_library, n):
    torch = gpu
    lib = gather_library
    for dtype in (torch.bfloat16, torch.float32, torch.int8):
        for count in (1, 1000, 65536 + 3, 1 << 20):
            xs = [rank_input(torch, dtype, count, r) for r in range(n)]
            want = torch.cat(xs)

            def body(comm, r):
                x = xs[r].clone()
                out = torch.full((n * count,), 7, dtype=dtype, device="cuda")
                lib.my_gather(comm, x, out, count, dtype, None)  # eager, on the current stream
                eager = out.clone()
                out.fill_(7)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, stream=torch.cuda.current_stream(), capture_error_mode="thread_local"):
                    lib.my_gather(comm, x, out, count, dtype, None)
                graph.replay()
                torch.cuda.current_stream().synchronize()
                return eager.cpu(), out.cpu()

            for r, (eager, captured) in enumerate(run_ranks(torch, n, body)):
                assert torch.equal(eager.view(torch.uint8), want.cpu().view(torch.uint8)), (dtype, count, r)
                assert torch.equal(captured.view(torch.uint8), want.cpu().view(torch.uint8)), (dtype, count, r)


def test_jit_mismatch_fails_every_rank(gpu, gather_library):
    """Ranks pass different counts (checked communicator): the call fails on
    every rank (its call check), and later calls raise."""
    torch = gpu
    lib = gather_library

    def body(comm, r):
        x = torch.zeros(101, dtype=torch.float32, device="cuda")
        out = torch.zeros(202, dtype=torch.float32, device="cuda")
        try:
            lib.my_gather(comm, x, out, 100 + r, torch.float32, None)
        except purlin.PurlinError:
            pass
        torch.cuda.current_stream().synchronize()
        err = comm.async_error()
        assert err is not None, "a mismatched call passed"
        with pytest.raises(purlin.PurlinError):
            lib.my_gather(comm, x, out, 100, torch.float32, None)
        return err.status

    statuses = run_ranks(torch, 2, body, checked=True)
    assert all(s != "Ok" for s in statuses), statuses
