"""One rank of the init_process_group(device_id=...) check, started by
torchrun (tests/test_dist.py):

    torchrun --nproc-per-node N python/tests/dist_device_id.py

torch binds the default group to `device_id` and asks its backend whether
it splits communicators; the purlin group answers (no), runs its
collectives on that device, and refuses a device_id other than the device
its communicator was created on with what to do. Prints
"dist_check rank R: PASS (device_id)" or raises.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import purlin.torch  # noqa: E402,F401  (registers the backend)
from purlin import distributed as pd  # noqa: E402


def main():
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    dist.init_process_group(backend="cuda:purlin,cpu:gloo", device_id=dev)
    pg = pd.purlin_group()
    assert pg.comm is not None, pg.native_reason
    assert pg.device == dev, (pg.device, dev)
    assert pg._get_backend(dev).name() == "purlin" and not pg._get_backend(dev).supports_splitting
    t = torch.full((1000,), float(rank + 1), device=dev)
    dist.all_reduce(t)
    want = float(size * (size + 1) // 2)
    assert torch.equal(t.cpu(), torch.full((1000,), want)), t[:4].tolist()
    other = torch.device("cuda", dev.index + 1)
    try:
        pg._get_backend(other)
        raise AssertionError("a device_id other than the group's device was accepted")
    except ValueError as e:
        assert f"torch.cuda.set_device({other.index})" in str(e), str(e)
    sub = dist.new_group(list(range(size)), backend="purlin")
    u = torch.full((64,), float(rank), device=dev)
    dist.all_reduce(u, op=dist.ReduceOp.MAX, group=sub)
    assert torch.equal(u.cpu(), torch.full((64,), float(size - 1))), u[:4].tolist()
    dist.barrier()
    dist.destroy_process_group()
    print(f"dist_check rank {rank}: PASS (device_id)", flush=True)


if __name__ == "__main__":
    main()
