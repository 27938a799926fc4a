import faulthandler, os, sys, time
out = os.environ["OUT"]
tf = open(os.path.join(out, "traces.txt"), "w")
faulthandler.dump_traceback_later(70, file=tf, exit=True)
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
import torch, purlin
import test_gpu as T
log = open(os.path.join(out, "progress.txt"), "w", buffering=1)
def graph_body(comm, r):
    n = 2
    cases = [(torch.int32, "sum"), (torch.float8_e4m3fn, "avg"), (torch.int64, "product"), (torch.float64, "max")]
    for k, (dtype, op) in enumerate(cases):
        size = torch.empty(0, dtype=dtype).element_size()
        count = (8 << 20) // size
        x = torch.zeros(count, dtype=dtype, device="cuda")
        s = torch.cuda.current_stream()
        log.write(f"r{r} {dtype} {op} eager start\n")
        comm.all_reduce(x, op=op); s.synchronize()
        log.write(f"r{r} {dtype} {op} eager done; capture\n")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
            comm.all_reduce(x, op=op)
        log.write(f"r{r} {dtype} {op} captured\n")
        for step in range(2):
            xs = [T.case_input(torch, dtype, count, p, 100 * k + step) for p in range(n)]
            x.copy_(xs[r]); g.replay(); s.synchronize()
            log.write(f"r{r} {dtype} {op} replay {step} {'ok' if T.torch_equal_bytes(x, T.reference_of(torch, xs, op)) else 'MISMATCH'}\n")
        del g
        comm._comm.release_direct()
    return 0
t0 = time.time()
T.run_ranks(torch, 2, graph_body)
log.write(f"graph done in {time.time()-t0:.1f}s\n")
