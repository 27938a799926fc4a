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

__all__ = ["PurlinError", "load", "library_path", "check", "collectives", "Options", "UniqueId", "UNIQUE_ID_BYTES"]

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


class CollectiveInfo(ctypes.Structure):
    """purlin_collective_t: one collective of the library (collectives.def)."""
    _fields_ = [("function", ctypes.c_char_p), ("sizes", ctypes.c_int), ("reduces", ctypes.c_int),
                ("rooted", ctypes.c_int)]


#: The size arguments after (comm, in, out) by purlin_collective_t.sizes:
#: a count; counts per rank; send/recv counts and displacements and maxCount;
#: (the "Device" forms, docs/device-counts.md) counts in device memory and
#: maxCount; the four AllToAllV arrays in device memory and maxCount.
_SIZE_ARGS = {0: [ctypes.c_size_t], 1: [_size_p], 2: [_size_p, _size_p, _size_p, _size_p, ctypes.c_size_t],
              3: [ctypes.c_void_p, ctypes.c_size_t],
              4: [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]}


def size_arg_count(sizes: int) -> int:
    """How many size arguments a collective of table row `sizes` takes."""
    if sizes not in _SIZE_ARGS:
        raise PurlinError("InvalidArgument", -1, f"unknown size arguments {sizes} in the collective table")
    return len(_SIZE_ARGS[sizes])


def is_device_form(sizes: int) -> bool:
    """Whether table row `sizes` is a V collective's form with its counts in
    device memory (its count pointers are device addresses)."""
    return sizes in (3, 4)


def collective_signature(info: CollectiveInfo) -> list:
    """The argtypes of a collective's C function, from its table row
    (purlin.h purlin_collective_t): comm, in, out, the sizes, dtype, op if
    it reduces, root if it is rooted, stream."""
    if info.sizes not in _SIZE_ARGS:
        raise PurlinError("InvalidArgument", -1, f"unknown size arguments {info.sizes} in the collective table")
    return ([_comm_t, ctypes.c_void_p, ctypes.c_void_p] + _SIZE_ARGS[info.sizes] + [ctypes.c_int] +
            ([ctypes.c_int] if info.reduces else []) + ([ctypes.c_int] if info.rooted else []) + [_stream_t])


def _collective_table(lib: ctypes.CDLL) -> dict:
    """The library's collectives (purlin_collective), by C function name."""
    table = {}
    i = 0
    while True:
        p = lib.purlin_collective(i)
        if not p:
            return table
        info = CollectiveInfo.from_address(p)
        table[info.function.decode()] = CollectiveInfo(info.function, info.sizes, info.reduces, info.rooted)
        i += 1


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
    ("purlin_comm_create_from_env", _c_status,
     [ctypes.c_int, ctypes.POINTER(Options), ctypes.POINTER(_comm_t)]),
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
    ("purlin_comm_refuse_call", _c_status, [_comm_t, ctypes.c_void_p, _c_status, ctypes.c_char_p]),
    ("purlin_comm_register", _c_status, [_comm_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]),
    ("purlin_comm_deregister", _c_status, [_comm_t, ctypes.c_uint64]),
    ("purlin_comm_release_direct", _c_status, [_comm_t]),
    ("purlin_collective", ctypes.c_void_p, [ctypes.c_int]),
    ("purlin_preload_kernels", _c_status, [ctypes.c_int]),
]

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_path: Optional[str] = None
_collectives: dict = {}


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
            # The collectives: their signatures from the library's own table.
            table = _collective_table(lib)
            missing = [name for name in table if not hasattr(lib, name)]
            if missing:
                tried.append(f"{cand} (its collective table names {', '.join(missing[:3])}, which it lacks)")
                continue
            for name, info in table.items():
                fn = getattr(lib, name)
                fn.restype = _c_status
                fn.argtypes = collective_signature(info)
            _lib, _path = lib, cand
            _collectives.clear()
            _collectives.update(table)
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


def collectives() -> dict:
    """The library's collectives: C function name -> CollectiveInfo (its
    size arguments, whether it reduces, whether it is rooted)."""
    load()
    return dict(_collectives)


_FUSED_RMS_NORM = "purlin_allReduceAddRmsNorm"


def fused_rms_norm() -> Callable[..., int]:
    """The device API's shipped op (examples/fused_rmsnorm/fused_rmsnorm.h,
    part of libpurlin.so): purlin_allReduceAddRmsNorm. PurlinError
    (Unsupported) from a library without it."""
    lib = load()
    fn = getattr(lib, _FUSED_RMS_NORM, None)
    if fn is None:
        raise PurlinError("Unsupported", 2, f"{library_path()} has no {_FUSED_RMS_NORM} (a library built without "
                                            "examples/fused_rmsnorm)")
    with _lock:
        if fn.argtypes is None:
            fn.argtypes = [_comm_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_int, ctypes.c_float, ctypes.c_size_t, ctypes.c_size_t,
                           ctypes.c_float, _stream_t, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
            fn.restype = _c_status
    return fn
