"""Shared fixtures: the library (skips with the reason when it cannot be
loaded), torch and a GPU (skip when absent)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import purlin  # noqa: E402
from purlin import _capi  # noqa: E402


@pytest.fixture(scope="session")
def lib():
    """The loaded library. In `make test` PURLIN_LIBRARY names the build's
    libpurlin.so and a failure to load it is an error, not a skip."""
    try:
        return _capi.load()
    except purlin.PurlinError as e:
        if os.environ.get("PURLIN_REQUIRE_LIBRARY"):
            raise
        pytest.skip(f"libpurlin.so not loadable: {e}")


def _gpu_count() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


@pytest.fixture(scope="session")
def torch_mod():
    torch = pytest.importorskip("torch", reason="torch is not installed (the torch layer's tests need it)")
    return torch


@pytest.fixture(scope="session")
def gpu(torch_mod, lib):
    if _gpu_count() < 1:
        pytest.skip("no CUDA GPU visible (GPU tests run on the device machines: scripts/gpu-all.sh)")
    return torch_mod
