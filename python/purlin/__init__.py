"""Purlin: collectives for one NVLink domain, from Python.

`purlin.torch.Communicator` is the PyTorch entry point (needs torch);
`purlin.Comm` is the framework-neutral communicator over raw device
pointers. The library (libpurlin.so) is found through $PURLIN_LIBRARY,
next to this package, in the repository's build tree, or on the loader's
path (purlin._capi.load says where it looked).
"""
from ._capi import PurlinError, library_path
from ._core import Comm, DTypeInfo, InProcessGroup, default_options, dtypes, get_unique_id, ops

__all__ = ["PurlinError", "library_path", "Comm", "DTypeInfo", "InProcessGroup", "default_options", "dtypes",
           "get_unique_id", "ops", "version"]


def version() -> str:
    """The library's version string (purlin_version)."""
    from . import _capi
    return _capi.load().purlin_version().decode()
