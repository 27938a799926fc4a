"""The C ABI of libpurlin.so (runtime/include/purlin/purlin.h and the
generated collectives' headers, generated/*.h), loaded with ctypes.

Only this module knows C signatures; everything above it passes Python ints
for device pointers and CUDA streams.
"""
from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Callable, Optional

__all__ = ["PurlinError", "load", "library_path", "check", "Options", "UniqueId", "UNIQUE_ID_BYTES"]

#: Bytes of purlin_unique_id_t (PURLIN_UNIQUE_ID_BYTES in purlin.h).
UNIQUE_ID_BYTES = 128

_c_status = ctypes.c_int
_comm_t = ctypes.c_void_p
_group_t = ctypes.c_void_p
_stream_t = ctypes.c_void_p
_size_p = ctypes.POINTER(ctypes.c_size_t)


class PurlinError(RuntimeError):
    """A Purlin call failed. ``status`` is the runtime's status name (e.g.
    ``"InvalidArgument"``, ``"Unsupported"``, ``"CudaError"``), ``code`` its
    number (purlin_status_t) and the message the runtime's own text."""

    def __init__(self, status: str, code: int, message: str):
        super().__init__(f"{status}: {message}" if message else status)
        self.status = status
        self.code = code
        self.message = message


class Options(ctypes.Structure):
    """purlin_comm_options_t (fields as in purlin.h)."""

    _fields_ = [
        ("staging_half_bytes", ctypes.c_size_t),
        ("packet_half_bytes", ctypes.c_size_t),
        ("checked", ctypes.c_int),
        ("wait_timeout_us", ctypes.c_uint64),
        ("direct", ctypes.c_int),
    ]


class UniqueId(ctypes.Structure):
    """purlin_unique_id_t: what rank 0 draws and every rank passes to
    purlin_comm_create_by_id (a socket name and the job's secret)."""

    _fields_ = [("internal", ctypes.c_char * UNIQUE_ID_BYTES)]

    def to_bytes(self) -> bytes:
        return ctypes.string_at(ctypes.addressof(self), UNIQUE_ID_BYTES)

    @classmethod
    def from_bytes(cls, data: bytes) -> "UniqueId":
        if not isinstance(data, (bytes, bytearray)) or len(data) != UNIQUE_ID_BYTES:
            raise ValueError(f"a purlin unique id is {UNIQUE_ID_BYTES} bytes")
        uid = cls()
        ctypes.memmove(ctypes.addressof(uid), bytes(data), UNIQUE_ID_BYTES)
        return uid


# (name, restype, argtypes) of every entry point the package uses.
_SIGNATURES = [
    ("purlin_last_error", ctypes.c_char_p, []),
    ("purlin_status_string", ctypes.c_char_p, [_c_status]),
    ("purlin_version", ctypes.c_char_p, []),
    ("purlin_dtype_name", ctypes.c_char_p, [ctypes.c_int]),
    ("purlin_dtype_size", ctypes.c_size_t, [ctypes.c_int]),
    ("purlin_redop_name", ctypes.c_char_p, [ctypes.c_int]),
    ("purlin_comm_options_default", Options, []),
    ("purlin_get_unique_id", _c_status, [ctypes.POINTER(UniqueId)]),
    ("purlin_comm_create_by_id", _c_status,
     [ctypes.POINTER(UniqueId), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(Options),
      ctypes.POINTER(_comm_t)]),
    ("purlin_group_create", _c_status, [ctypes.c_int, ctypes.POINTER(_group_t)]),
    ("purlin_group_destroy", _c_status, [_group_t]),
    ("purlin_comm_create_in_group", _c_status,
     [_group_t, ctypes.c_int, ctypes.c_int, ctypes.POINTER(Options), ctypes.POINTER(_comm_t)]),
    ("purlin_comm_destroy", _c_status, [_comm_t]),
    ("purlin_comm_rank", ctypes.c_int, [_comm_t]),
    ("purlin_comm_size", ctypes.c_int, [_comm_t]),
    ("purlin_comm_device", ctypes.c_int, [_comm_t]),
    ("purlin_comm_async_error", _c_status, [_comm_t]),
    ("purlin_comm_abort", _c_status, [_comm_t]),
    ("purlin_comm_register", _c_status, [_comm_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]),
    ("purlin_comm_deregister", _c_status, [_comm_t, ctypes.c_uint64]),
    ("purlin_comm_release_direct", _c_status, [_comm_t]),
    # The collectives (generated/*.h).
    ("purlin_allGather", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, _stream_t]),
    ("purlin_allGatherV", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, _size_p, ctypes.c_int, _stream_t]),
    ("purlin_allReduce", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _stream_t]),
    ("purlin_allToAll", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, _stream_t]),
    ("purlin_allToAllV", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, _size_p, _size_p, _size_p, _size_p, ctypes.c_size_t, ctypes.c_int,
      _stream_t]),
    ("purlin_broadcast", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _stream_t]),
    ("purlin_gather", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _stream_t]),
    ("purlin_reduce", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
      _stream_t]),
    ("purlin_reduceScatter", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _stream_t]),
    ("purlin_reduceScatterV", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, _size_p, ctypes.c_int, ctypes.c_int, _stream_t]),
    ("purlin_scatter", _c_status,
     [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _stream_t]),
]

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_path: Optional[str] = None


def _candidates() -> list[str]:
    """Where libpurlin.so is looked for, first match wins:
    1. $PURLIN_LIBRARY (a file);
    2. next to this package (purlin/libpurlin.so: `make python` copies it there);
    3. the repository's build tree, when the package runs from a checkout
       (build/lib/libpurlin.so beside python/);
    4. the dynamic loader's search path (an installed libpurlin.so)."""
    out = []
    env = os.environ.get("PURLIN_LIBRARY")
    if env:
        return [env]
    here = Path(__file__).resolve().parent
    out.append(str(here / "libpurlin.so"))
    out.append(str(here.parent.parent / "build" / "lib" / "libpurlin.so"))
    out.append("libpurlin.so")
    return out


def load() -> ctypes.CDLL:
    """The loaded library (loaded once, thread-safe). Raises PurlinError
    ("LibraryNotFound") naming every place it looked."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for cand in _candidates():
            if os.sep in cand and not os.path.exists(cand):
                tried.append(f"{cand} (no such file)")
                continue
            try:
                lib = ctypes.CDLL(cand)
            except OSError as e:
                tried.append(f"{cand} ({e})")
                continue
            missing = [name for name, _, _ in _SIGNATURES if not hasattr(lib, name)]
            if missing:
                tried.append(f"{cand} (lacks {', '.join(missing[:3])}{'...' if len(missing) > 3 else ''}: "
                             f"an older libpurlin?)")
                continue
            for name, restype, argtypes in _SIGNATURES:
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib, _path = lib, cand
            return lib
        raise PurlinError("LibraryNotFound", -1,
                          "libpurlin.so not found; set PURLIN_LIBRARY to its path (tried: " + "; ".join(tried) + ")")


def library_path() -> str:
    """The file (or loader name) the library was loaded from."""
    load()
    assert _path is not None
    return _path


def status_name(code: int) -> str:
    name = load().purlin_status_string(code)
    return name.decode() if name else f"status {code}"


def last_error() -> str:
    msg = load().purlin_last_error()
    return msg.decode(errors="replace") if msg else ""


def check(code: int, what: str = "") -> None:
    """Raises PurlinError with the runtime's message unless `code` is Ok."""
    if code != 0:
        message = last_error()
        if what and not message:
            message = what
        raise PurlinError(status_name(code), code, message)


def call(name: str) -> Callable[..., int]:
    """The C function `name` of the library."""
    return getattr(load(), name)
