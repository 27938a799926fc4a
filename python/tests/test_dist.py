"""The torch.distributed backend "purlin" under torchrun: python/tests/
dist_check.py in every rank (each op against torch on the host, the
fallbacks counted and logged once per reason). CPU only (CUDA hidden: no
communicator, the reason logged, CPU tensors through gloo) wherever torch
is installed; on a GPU with 2 and 4 ranks sharing it, and with 2 ranks
under torch's expandable segments. Skipped without torch (and the GPU
cases without a GPU), with the reason."""
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def torchrun(nproc, extra_env=None, timeout=420, script=None, args=(), done=r"dist_check rank (\d+): PASS"):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, ".."), env.get("PYTHONPATH", "")])
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra_env or {})
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
           script or os.path.join(HERE, "dist_check.py"), *args]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    passed = set(re.findall(done, p.stdout))
    assert p.returncode == 0 and len(passed) == nproc, f"torchrun rc={p.returncode}:\n{p.stdout[-6000:]}"
    return p.stdout


def test_torchrun_cpu_only(torch_mod, lib):
    torchrun(2, {"CUDA_VISIBLE_DEVICES": ""}, timeout=180)  # each rank checks the logged reason


@pytest.mark.parametrize("nproc", [2, 4])
def test_torchrun_gpu(gpu, nproc):
    out = torchrun(nproc)
    assert "fallback backend gloo" in out  # ranks share the one GPU: NCCL would refuse


def test_torchrun_gpu_expandable_segments(gpu):
    """torch's expandable segments (cuMem memory): registration and capture
    map the peers' buffers through POSIX file descriptors, and the direct
    program runs (the plan lines say so)."""
    out = torchrun(2, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "PURLIN_LOG_PLANS": "1"})
    direct = [line for line in out.splitlines() if "direct (" in line]
    assert direct, "no call took the direct program:\n" + out[-3000:]


def test_torchrun_gpu_device_id(gpu):
    """init_process_group(device_id=...): torch asks the group's backend
    whether it splits (no); collectives run on that device; another
    device_id than the group's is refused with what to do."""
    torchrun(2, script=os.path.join(HERE, "dist_device_id.py"), timeout=240)


@pytest.mark.parametrize("nproc", [2, 4])
def test_torchrun_tp_decode(gpu, nproc, tmp_path):
    """examples/tp_decode.py on the purlin backend: every Purlin output
    (torch.distributed through the backend, and purlin.torch) bitwise the
    host reference's, eager and replayed from a graph."""
    torchrun(nproc, script=os.path.join(HERE, "..", "..", "examples", "tp_decode.py"),
             args=["--backend", "purlin", "--check", "--hidden", "2048", "--batches", "1,16,256", "--iters", "2",
                   "--reps", "1", "--out", str(tmp_path)],
             done=r"tp_decode rank (\d+): every Purlin output bitwise")
