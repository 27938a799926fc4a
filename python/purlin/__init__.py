"""Purlin: collectives for one NVLink domain, from Python.

`purlin.torch.Communicator` is the PyTorch entry point (needs torch);
`purlin.Comm` is the framework-neutral communicator over raw device
pointers. The library (libpurlin.so) is found through $PURLIN_LIBRARY,
next to this package, in the repository's build tree, or on the loader's
path (purlin._capi.load says where it looked).
"""
import os as _os
import sys as _sys


def _set_device_queues() -> None:
    """CUDA_DEVICE_MAX_CONNECTIONS for ranks that share a GPU (docs/runtime.md
    "Ranks sharing a GPU", "Hardware queues"): 32 where unset or empty, as
    libpurlin sets it when loaded; the package loads the library lazily,
    after torch may have started CUDA, so it is set here, at import. Where
    torch has started CUDA already the setting comes too late for this
    process (CUDA uses its default, 8): PURLIN_CUDA_STARTED_PID names this
    process so that the library counts 8 here, while child processes, which
    start CUDA afresh, inherit 32."""
    if _os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS"):
        return
    started = False
    torch = _sys.modules.get("torch")
    if torch is not None:
        try:
            started = bool(torch.cuda.is_initialized())
        except Exception:  # a torch without CUDA
            started = False
    if started:
        _os.environ["PURLIN_CUDA_STARTED_PID"] = str(_os.getpid())
    _os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "32"


_set_device_queues()

from ._capi import PurlinError, library_path  # noqa: E402
from ._core import Comm, DTypeInfo, InProcessGroup, default_options, dtypes, get_unique_id, ops  # noqa: E402

__all__ = ["PurlinError", "library_path", "Comm", "DTypeInfo", "InProcessGroup", "default_options", "dtypes",
           "get_unique_id", "ops", "version"]


def version() -> str:
    """The library's version string (purlin_version)."""
    from . import _capi
    return _capi.load().purlin_version().decode()
