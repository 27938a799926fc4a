"""Framework-neutral layer: the runtime's vocabulary (dtypes, ops) read from
the library, unique ids, and `Comm`, one rank's communicator, whose
collectives take device pointers and CUDA streams as Python ints.
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Dict, Optional, Sequence

from . import _capi
from ._capi import PurlinError

__all__ = ["DTypeInfo", "dtypes", "ops", "dtype_code", "op_code", "get_unique_id", "Comm", "InProcessGroup",
           "default_options"]


@dataclass(frozen=True)
class DTypeInfo:
    name: str   #: the runtime's name, e.g. "bf16"
    code: int   #: purlin_dtype_t
    size: int   #: bytes per element


def _names(name_of) -> Dict[str, int]:
    """name -> value for values 0, 1, ... until name_of(value) is NULL."""
    out, code = {}, 0
    while (name := name_of(code)) is not None:
        out[name.decode()] = code
        code += 1
    return out


@functools.lru_cache(maxsize=None)
def dtypes() -> Dict[str, DTypeInfo]:
    """Every element type the library knows, by name (purlin_dtype_name;
    one definition: runtime/include/purlin/types.def)."""
    lib = _capi.load()
    return {name: DTypeInfo(name, code, int(lib.purlin_dtype_size(code)))
            for name, code in _names(lib.purlin_dtype_name).items()}


@functools.lru_cache(maxsize=None)
def ops() -> Dict[str, int]:
    """Every reduction op the library knows, by name (purlin_redop_name)."""
    return _names(_capi.load().purlin_redop_name)


def _known(table: Dict, name: str, what: str):
    try:
        return table[name]
    except KeyError:
        raise PurlinError("Unsupported", 2, f"{what} {name!r} is not one purlin knows (it knows: "
                          f"{', '.join(table)})") from None


def dtype_code(name: str) -> DTypeInfo:
    return _known(dtypes(), name, "dtype")


def op_code(name: str) -> int:
    return _known(ops(), name, "reduction op")


def default_options(**overrides) -> _capi.Options:
    """purlin_comm_options_default() with fields replaced by keyword
    (staging_half_bytes, packet_half_bytes, checked, wait_timeout_us, direct)."""
    opts = _capi.load().purlin_comm_options_default()
    names = {f for f, _ in _capi.Options._fields_}
    for key, value in overrides.items():
        if key not in names:
            raise TypeError(f"unknown communicator option {key!r} (options: {', '.join(sorted(names))})")
        if value is None:
            continue
        setattr(opts, key, int(value))
    return opts


def get_unique_id() -> bytes:
    """A fresh rendezvous id (like ncclGetUniqueId): draw it on one rank, pass
    the bytes to every rank (e.g. over torch.distributed), and create the
    communicator with Comm.from_unique_id."""
    uid = _capi.UniqueId()
    _capi.check(_capi.call("purlin_get_unique_id")(ctypes.byref(uid)))
    return uid.to_bytes()


class InProcessGroup:
    """A rendezvous between threads of this process (purlin_group_create):
    `size` threads each call Comm.in_group(group, rank, device) at once.
    Keep it alive until every rank's Comm exists."""

    def __init__(self, size: int):
        self._handle = ctypes.c_void_p()
        _capi.check(_capi.call("purlin_group_create")(int(size), ctypes.byref(self._handle)))
        self.size = int(size)

    def close(self) -> None:
        if self._handle:
            _capi.call("purlin_group_destroy")(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _method_name(function: str) -> str:
    """purlin_allGatherV -> all_gather_v: the Comm method of a C function."""
    name = function[len("purlin_"):] if function.startswith("purlin_") else function
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


@functools.lru_cache(maxsize=None)
def _collective_functions() -> Dict[str, str]:
    """Comm method name -> C function, for every collective of the library."""
    return {_method_name(f): f for f in _capi.collectives()}


def _sizes(values: Sequence[int], n: int, what: str):
    if len(values) != n:
        raise PurlinError("InvalidArgument", 1, f"{what} has {len(values)} entries; the world has {n} ranks")
    if any(int(v) < 0 for v in values):
        raise PurlinError("InvalidArgument", 1, f"{what} has a negative entry: {list(values)}")
    return (ctypes.c_size_t * n)(*[int(v) for v in values])


class Comm:
    """One rank's communicator (purlin_comm_t). Collective calls take device
    pointers, element counts, dtype and op names and a CUDA stream (ints),
    enqueue on that stream and return; a failure raises PurlinError with
    the runtime's message. Create with from_unique_id or in_group."""

    def __init__(self, handle: ctypes.c_void_p):
        self._handle = handle
        self.rank = int(_capi.call("purlin_comm_rank")(handle))
        self.size = int(_capi.call("purlin_comm_size")(handle))
        self.device = int(_capi.call("purlin_comm_device")(handle))

    @classmethod
    def from_unique_id(cls, uid: bytes, rank: int, size: int, device: int,
                       options: Optional[_capi.Options] = None) -> "Comm":
        """Collective over `size` processes (or threads) that pass the same id."""
        handle = ctypes.c_void_p()
        u = _capi.UniqueId.from_bytes(uid)
        _capi.check(_capi.call("purlin_comm_create_by_id")(ctypes.byref(u), int(rank), int(size), int(device),
                                                            ctypes.byref(options) if options else None,
                                                            ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def from_env(cls, device: int = -1, options: Optional[_capi.Options] = None) -> "Comm":
        """Collective over the processes of a job started by purlin-launch, or
        by torchrun on one node (RANK, WORLD_SIZE and the user's
        PURLIN_BOOTSTRAP_COOKIE: docs/bootstrap.md "torchrun"). device -1:
        PURLIN_DEVICE, else the rank mod the visible devices."""
        handle = ctypes.c_void_p()
        _capi.check(_capi.call("purlin_comm_create_from_env")(int(device), ctypes.byref(options) if options else None,
                                                               ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def in_group(cls, group: InProcessGroup, rank: int, device: int,
                 options: Optional[_capi.Options] = None) -> "Comm":
        """Collective over the group's threads (one call per rank, each in its own thread)."""
        handle = ctypes.c_void_p()
        _capi.check(_capi.call("purlin_comm_create_in_group")(group._handle, int(rank), int(device),
                                                               ctypes.byref(options) if options else None,
                                                               ctypes.byref(handle)))
        return cls(handle)

    @property
    def handle(self) -> ctypes.c_void_p:
        if not self._handle:
            raise PurlinError("InvalidArgument", 1, "the communicator was destroyed")
        return self._handle

    def destroy(self) -> None:
        """Frees this rank's communicator. Local, so call it once this rank's
        streams are synchronized and every peer is done with it (a barrier):
        a peer's kernel may still read this rank's workspace. Not called on
        garbage collection for that reason (an undestroyed communicator
        lives until the process exits). It waits for this rank's kernels;
        one still waiting on a peer that is gone (a dead process, a call it
        never made) is aborted after 10 s (checked mode: the wait timeout
        plus 1 s when longer; PURLIN_DESTROY_TIMEOUT_MS) and destroy
        returns; call abort() first to end such waits at once
        (docs/failure-model.md "Destruction")."""
        if self._handle:
            h, self._handle = self._handle, None
            _capi.check(_capi.call("purlin_comm_destroy")(h))

    def abort(self) -> None:
        """purlin_comm_abort: every wait of this rank gives up; no CUDA call."""
        _capi.check(_capi.call("purlin_comm_abort")(self.handle))

    def refuse_call(self, stream: int, error: PurlinError) -> None:
        """purlin_comm_refuse_call: this rank refuses a call for `error`, a
        fault of its own arguments found before the collective was reached
        (a tensor's device, layout or size), so the communicator fails on
        every rank, in stream order on `stream`, instead of leaving the
        peers' call waiting or pairing this rank's next call with it."""
        code = error.code if error.code else 1
        _capi.call("purlin_comm_refuse_call")(self.handle, ctypes.c_void_p(int(stream) or None), code,
                                              str(error.message or error).encode())

    def async_error(self) -> Optional[PurlinError]:
        """The communicator's failure so far (None while healthy); never waits."""
        code = _capi.call("purlin_comm_async_error")(self.handle)
        return None if code == 0 else PurlinError(_capi.status_name(code), code, _capi.last_error())

    def register(self, ptr: int, nbytes: int) -> int:
        """Collective: registers a buffer for the eager direct program; returns its handle."""
        h = ctypes.c_uint64()
        _capi.check(_capi.call("purlin_comm_register")(self.handle, ctypes.c_void_p(ptr), int(nbytes), ctypes.byref(h)))
        return int(h.value)

    def deregister(self, handle: int) -> None:
        _capi.check(_capi.call("purlin_comm_deregister")(self.handle, int(handle)))

    def release_direct(self) -> None:
        _capi.check(_capi.call("purlin_comm_release_direct")(self.handle))

    # -- collectives: pointers and streams are ints; counts in elements ----
    # Every collective of the library's table (purlin_collective: the C
    # function, its size arguments, whether it reduces, whether it is
    # rooted) is a method named after its function in snake case
    # (purlin_allGatherV -> all_gather_v), taking
    #   (inp, out, <sizes>, dtype, [op if it reduces], [root if rooted], stream)
    # with <sizes>: count; counts (one per rank); or send_counts, send_displs,
    # recv_counts, recv_displs, max_count; the "Device" forms
    # (docs/device-counts.md): the device address of counts (or of the four
    # AllToAllV arrays, n size_t each) and max_count. Nothing here lists
    # collectives.
    def collective(self, function: str, inp: int, out: int, *args) -> None:
        """Runs the library's collective `function` (e.g. "purlin_allReduce")
        with the method arguments above after (inp, out)."""
        info = _capi.collectives().get(function)
        if info is None:
            raise PurlinError("InvalidArgument", 1, f"the library has no collective {function}")
        self.call_c(_capi.call(function), function, info, inp, out, *args)

    def call_c(self, fn, function: str, info: "_capi.CollectiveInfo", inp: int, out: int, *args) -> None:
        """Calls C function `fn` (named `function`, of table row `info`:
        libpurlin.so's or a purlin.jit library's) on this communicator with
        the method arguments above after (inp, out)."""
        n = self.size
        size_count = _capi.size_arg_count(info.sizes)
        want = size_count + 2 + int(bool(info.reduces)) + int(bool(info.rooted))
        if len(args) != want:
            raise PurlinError("InvalidArgument", 1, f"{_method_name(function)} takes {want} arguments after inp, out; "
                                                    f"got {len(args)}")
        sizes, rest = list(args[:size_count]), list(args[size_count:])
        if info.sizes == 0:
            sizes = [int(sizes[0])]
        elif info.sizes == 1:
            sizes = [_sizes(sizes[0], n, "counts")]
        elif _capi.is_device_form(info.sizes):  # device addresses (or tensors), then the bound
            sizes = [s.data_ptr() if hasattr(s, "data_ptr") else int(s) for s in sizes]
        else:
            sizes = [_sizes(sizes[0], n, "send counts"), _sizes(sizes[1], n, "send displacements"),
                     _sizes(sizes[2], n, "receive counts"), _sizes(sizes[3], n, "receive displacements"),
                     int(sizes[4])]
        tail = [dtype_code(rest.pop(0)).code]
        if info.reduces:
            tail.append(op_code(rest.pop(0)))
        if info.rooted:
            tail.append(int(rest.pop(0)))
        _capi.check(fn(self.handle, inp, out, *sizes, *tail, rest.pop(0)))

    def __getattr__(self, name: str):
        function = None if name.startswith("_") else _collective_functions().get(name)
        if function is None:
            raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")
        return functools.partial(self.collective, function)

