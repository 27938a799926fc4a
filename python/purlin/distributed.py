"""The torch.distributed backend "purlin" (registered by `import purlin.torch`).

    import purlin.torch  # noqa: F401  (registers the backend)
    torch.cuda.set_device(local_rank)
    dist.init_process_group("cuda:purlin,cpu:gloo")     # or backend="purlin"
    dist.all_reduce(x)                                    # Purlin's AllReduce
    group = dist.new_group([0, 1], backend="purlin")

Each group is a ProcessGroupPurlin: one Purlin communicator on the device
current at creation (set it first, as with NCCL's device_id), created
through the group's store, plus a process group it holds for what Purlin
does not run: NCCL, or gloo with CUDA tensors staged through host memory
where two ranks share a GPU (NCCL refuses that), or as
PURLIN_TORCH_FALLBACK says. CPU tensors go to a gloo group it also holds.

Native: broadcast, all_reduce (SUM, AVG, PRODUCT, MIN, MAX, also out of
place through purlin.torch), reduce, all_gather / all_gather_into_tensor
(uneven list outputs: AllGatherV), reduce_scatter / reduce_scatter_tensor
(uneven list inputs: ReduceScatterV), all_to_all_single (uneven splits:
AllToAllV, bound agreed on the device), all_to_all (lists), gather,
scatter, barrier, the coalesced forms. Fallback, logged once per reason
(PURLIN_DEBUG=OFF|WARN|INFO|TRACE) and counted in `fallbacks`: PREMUL_SUM
and the bitwise ops, dtypes Purlin does not move, send / recv, more than
one tensor per rank, uneven all-to-all under graph capture, and
everything when the ranks span nodes or a rank has no CUDA or no library.
Every decision is taken from what every rank passes alike, so all ranks
take the same path.

Calls run on the current stream of the communicator's device (no internal
stream): `work.wait()` orders the caller's current stream after the call
when it is another stream, and raises the communicator's failure;
`async_op=True` returns the same Work. The Purlin unique id travels
through the group's store, like NCCL's.
"""
from __future__ import annotations

import datetime
import logging
import os
import socket
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as _c10d

from . import _capi, _core
from . import _dist_rules as rules
from ._capi import PurlinError

__all__ = ["BACKEND", "ProcessGroupPurlin", "register", "comm_options", "purlin_group"]

BACKEND = "purlin"

#: Communicator options (purlin_comm_options_t fields: checked,
#: staging_half_bytes, packet_half_bytes, wait_timeout_us, direct) for
#: groups created from now on.
comm_options: Dict[str, Any] = {}

_log = logging.getLogger("purlin.distributed")
_handler_lock = threading.Lock()


def _ensure_handler(level: int) -> None:
    """INFO and TRACE lines reach stderr even where the application set up
    no logging (WARN lines do through logging's last resort)."""
    if level < rules.LEVELS.index("INFO"):
        return
    with _handler_lock:
        if not any(getattr(h, "_purlin", False) for h in _log.handlers):
            h = logging.StreamHandler(sys.stderr)
            h.setFormatter(logging.Formatter("%(name)s: %(message)s"))
            h._purlin = True  # type: ignore[attr-defined]
            _log.addHandler(h)
        _log.setLevel(logging.INFO)


def _names(tensors: Sequence[torch.Tensor]) -> List[str]:
    return [str(t.dtype)[len("torch."):] for t in tensors]


def _flat(nested) -> List[torch.Tensor]:
    out: List[torch.Tensor] = []
    for x in nested:
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            out.extend(_flat(x))
    return out


def _dense(t: torch.Tensor):
    """(a contiguous tensor to run on, the tensor to copy it back to or None)."""
    return (t, None) if t.is_contiguous() else (t.contiguous(), t)


class _Work(dist.Work):
    """A Purlin call enqueued on `stream` (the caller's current stream)."""

    def __init__(self, pg: "ProcessGroupPurlin", stream: torch.cuda.Stream, outputs: List[torch.Tensor],
                 record: bool, host_wait: bool = False):
        super().__init__()
        self._pg, self._stream, self._outputs, self._host_wait = pg, stream, outputs, host_wait
        self._event: Optional[torch.cuda.Event] = None
        if record or host_wait:
            self._mark()

    def _mark(self) -> torch.cuda.Event:
        # Recorded when the call returns for async_op and barrier; otherwise
        # at the first wait from another stream (then it covers later work
        # on this stream too: more ordering, never less).
        if self._event is None:
            self._event = torch.cuda.Event()
            self._event.record(self._stream)
        return self._event

    def wait(self, timeout: Optional[datetime.timedelta] = None) -> bool:
        self._pg._raise_failure()
        current = torch.cuda.current_stream(self._stream.device)
        if current != self._stream:
            current.wait_event(self._mark())
        if self._host_wait:
            self._mark().synchronize()
            self._pg._raise_failure()
        return True

    def is_completed(self) -> bool:
        return self._mark().query()

    def is_success(self) -> bool:
        return self._pg.comm is not None and self._pg.comm.async_error() is None

    def exception(self):
        return None if self._pg.comm is None else self._pg.comm.async_error()

    def result(self) -> List[torch.Tensor]:
        return self._outputs

    def get_future(self) -> torch.futures.Future:
        fut = torch.futures.Future(devices=[self._stream.device])
        with torch.cuda.stream(self._stream):
            fut.set_result(self._outputs)
        return fut


class _StagedWork(dist.Work):
    """A gloo call on host copies: wait() waits for it, then copies the
    outputs back to the device (on the current stream)."""

    def __init__(self, work: dist.Work, pairs: List[tuple]):
        super().__init__()
        self._work, self._pairs, self._done = work, pairs, False

    def wait(self, timeout: Optional[datetime.timedelta] = None) -> bool:
        if not self._done:
            self._work.wait()
            for device_tensor, host_tensor in self._pairs:
                device_tensor.copy_(host_tensor)
            self._done = True
        return True

    def is_completed(self) -> bool:
        return self._done or self._work.is_completed()

    def result(self) -> List[torch.Tensor]:
        return [d for d, _ in self._pairs]

    def get_future(self) -> torch.futures.Future:
        self.wait()
        fut = torch.futures.Future()
        fut.set_result(self.result())
        return fut


class _Works(dist.Work):
    """Several calls' Works as one (the coalescing manager's device form)."""

    def __init__(self, works: List[dist.Work]):
        super().__init__()
        self._works = works

    def wait(self, timeout: Optional[datetime.timedelta] = None) -> bool:
        for w in self._works:
            w.wait()
        return True

    def is_completed(self) -> bool:
        return all(w.is_completed() for w in self._works)

    def result(self) -> List[torch.Tensor]:
        return [t for w in self._works for t in w.result()]

    def get_future(self) -> torch.futures.Future:
        self.wait()
        fut = torch.futures.Future()
        fut.set_result(self.result())
        return fut


class _CudaBackendInfo:
    """A ProcessGroupPurlin's answer to `_get_backend(cuda)`: the properties
    torch reads of a backend (no communicator splitting, no coalescing
    manager of torch's, no time estimator)."""

    supports_splitting = False
    supports_coalescing = False
    supports_time_estimate = False

    def name(self) -> str:
        return BACKEND


class ProcessGroupPurlin(dist.ProcessGroup):
    """One rank of a torch.distributed group whose CUDA collectives Purlin runs."""

    def __init__(self, store: dist.Store, rank: int, size: int, timeout: datetime.timedelta):
        super().__init__(rank, size)
        self._level = rules.log_level()
        _ensure_handler(self._level)
        self._store, self._timeout = store, timeout
        self.fallbacks: Dict[str, int] = {}
        self._fallback_lock = threading.Lock()
        self._nccl: Optional[dist.ProcessGroup] = None
        self._coalesced: Optional[List[dist.Work]] = None  # inside _start/_end_coalescing
        self.comm = None  # purlin.torch.Communicator when Purlin runs this group's CUDA calls
        self.device: Optional[torch.device] = None
        # A store may outlive a group (destroy_process_group, then init
        # again on torchrun's store): the keys of this creation carry its
        # generation, counted by the arrivals (creations are collective,
        # so they do not overlap).
        generation = (int(store.add("purlin/arrivals", 1)) - 1) // size
        self._keys = f"purlin/{generation}/"
        self._cpu = dist.ProcessGroupGloo(dist.PrefixStore(self._keys + "gloo/", store), rank, size, timeout)
        facts = self._exchange_facts(store, rank, size)
        group = rules.agree(facts)
        self.shared_gpu = group.shared_gpu
        self.fallback_backend = rules.fallback_backend(group.shared_gpu, facts[0].fallback)  # alike on every rank
        self.native_reason = group.native
        if self.native_reason is None:
            self.native_reason = self._create_communicator(store, rank, size)
        if self.native_reason is not None:
            self._say("WARN", f"rank {rank}: Purlin runs no collective of this group: {self.native_reason}; "
                              f"all go to {self.fallback_backend}")
        else:
            self._say("INFO", f"rank {rank}/{size}: Purlin on {self.device}; fallback {self.fallback_backend}"
                              f"{' (ranks share a GPU)' if self.shared_gpu else ''}")

    # -- creation ------------------------------------------------------------
    def _exchange_facts(self, store, rank: int, size: int) -> List[rules.RankFacts]:
        library = ""
        try:
            _capi.load()
        except PurlinError as e:
            library = str(e)
        cuda = torch.cuda.is_available()
        device = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid) if cuda else ""
        mine = rules.RankFacts(socket.gethostname(), cuda, device, library,
                               os.environ.get("PURLIN_TORCH_FALLBACK", ""))
        store.set(f"{self._keys}facts/{rank}", mine.encode())
        return [rules.RankFacts.decode(store.get(f"{self._keys}facts/{r}").decode()) for r in range(size)]

    def _create_communicator(self, store, rank: int, size: int) -> Optional[str]:
        """Creates this rank's communicator; every rank then learns whether
        every rank's creation worked (None) or why not (the same reason)."""
        from .torch import Communicator
        device = torch.device("cuda", torch.cuda.current_device())
        if rank == 0:
            store.set(f"{self._keys}uid", _core.get_unique_id())
        uid = store.get(f"{self._keys}uid")
        comm, error = None, ""
        try:
            opts = _core.default_options(**comm_options)
            with torch.cuda.device(device):
                comm = _core.Comm.from_unique_id(uid, rank, size, device.index, opts)
        except Exception as e:  # noqa: BLE001 - every rank must hear of it (else they wait in the store)
            error = f"{type(e).__name__}: {e}"
        store.set(f"{self._keys}created/{rank}", error)
        for r in range(size):
            theirs = store.get(f"{self._keys}created/{r}").decode()
            if theirs:
                if comm is not None:
                    comm.destroy()  # no kernel has run on it
                return f"rank {r} could not create its Purlin communicator: {theirs}"
        self.comm = Communicator._from_comm(comm)
        self.device = device
        return None

    # -- bookkeeping ---------------------------------------------------------
    def getBackendName(self) -> str:
        return BACKEND

    def _get_backend(self, device) -> Any:
        """What torch asks of a group's backend per device type:
        init_process_group(device_id=...) whether it splits (no), the
        process-group helpers its name. CPU: the gloo group's backend. CUDA:
        a description of this one; a device_id other than the device the
        communicator was created on (the current one at creation) is refused
        with what to do, not silently used for another GPU."""
        dev = torch.device(device)
        if dev.type == "cpu":
            return self._cpu  # a ProcessGroupGloo is itself a c10d Backend
        if dev.type != "cuda":
            raise RuntimeError(f"purlin: no backend for device type {dev.type} (purlin runs CUDA; CPU goes to gloo)")
        mine = self.device.index if self.device is not None else \
            (torch.cuda.current_device() if torch.cuda.is_available() else None)
        if dev.index is not None and mine is not None and dev.index != mine:
            raise ValueError(f"purlin: this rank's group was created on cuda:{mine} (the current device at "
                             f"init_process_group), not on {dev}: call torch.cuda.set_device({dev.index}) "
                             f"before init_process_group(device_id={dev})")
        return _CudaBackendInfo()

    def name(self) -> str:
        return BACKEND

    def _say(self, level: str, text: str) -> None:
        if self._level >= rules.LEVELS.index(level):
            (_log.warning if level == "WARN" else _log.info)(text)

    def _raise_failure(self) -> None:
        if self.comm is not None:
            err = self.comm.async_error()
            if err is not None:
                raise err

    def _held(self) -> dist.ProcessGroup:
        """The process group for CUDA calls Purlin does not run."""
        if self.fallback_backend == "gloo":
            return self._cpu
        if self._nccl is None:
            opts = dist.ProcessGroupNCCL.Options()
            opts._timeout = self._timeout
            self._nccl = dist.ProcessGroupNCCL(dist.PrefixStore(self._keys + "nccl/", self._store), self.rank(),
                                               self.size(), opts)
        return self._nccl

    def _fallback(self, reason: str, method: str, *args) -> dist.Work:
        with self._fallback_lock:
            seen = self.fallbacks.get(reason, 0)
            self.fallbacks[reason] = seen + 1
        if seen == 0:
            self._say("WARN", f"rank {self.rank()}: {method} falls back to {self.fallback_backend}: {reason}")
        else:
            self._say("TRACE", f"rank {self.rank()}: {method} -> {self.fallback_backend} ({reason})")
        held = self._held()
        if held is self._cpu and any(t.is_cuda for t in _flat(args)):
            return self._staged(method, *args)
        return getattr(held, method)(*args)

    def _staged(self, method: str, *args) -> dist.Work:
        """gloo on host copies of the CUDA tensors; the first argument (the
        outputs, or the in-place tensors, of every c10d method) is copied
        back when the Work is waited for (so that isend/irecv pairs, which
        complete only together, do not wait for each other here)."""
        pairs: List[tuple] = []

        def to_host(x, is_output):
            if isinstance(x, torch.Tensor):
                if not x.is_cuda:
                    return x
                h = x.cpu()
                if is_output:
                    pairs.append((x, h))
                return h
            if isinstance(x, (list, tuple)):
                return type(x)(to_host(y, is_output) for y in x)
            return x

        host_args = [to_host(a, i == 0) for i, a in enumerate(args)]
        return _StagedWork(getattr(self._cpu, method)(*host_args), pairs)

    def _route(self, tensors: Sequence[torch.Tensor], reason: Optional[str]) -> str:
        """"cpu", "native" or "fallback" for a call on `tensors`; `reason`
        is the op's own reason to fall back (None if Purlin runs it)."""
        if tensors and all(not t.is_cuda for t in tensors):
            return "cpu"
        if self.comm is None or reason is not None:
            return "fallback"
        return "native"

    def _why(self, reason: Optional[str]) -> str:
        return self.native_reason if self.comm is None else str(reason)

    def _native(self, outputs: List[torch.Tensor], opts, body: Callable[[], None], host_wait: bool = False):
        stream = torch.cuda.current_stream(self.device)
        body()
        self._say("TRACE", f"rank {self.rank()}: native on stream {stream.cuda_stream:#x}")
        return _Work(self, stream, outputs, bool(getattr(opts, "asyncOp", False)), host_wait)

    def _dispatch(self, method: str, tensors, reason, args, native_body, outputs, opts, host_wait=False):
        """Runs one c10d method (inside the coalescing manager's device form,
        its Work is kept for _end_coalescing)."""
        work = self._dispatch_one(method, tensors, reason, args, native_body, outputs, opts, host_wait)
        if self._coalesced is not None and work is not None:
            self._coalesced.append(work)
        return work

    def _dispatch_one(self, method: str, tensors, reason, args, native_body, outputs, opts, host_wait=False):
        """Gloo for CPU tensors, the held group for a fallback, else
        `native_body` (which may still raise Unsupported, alike on every
        rank: then it falls back with the library's reason)."""
        route = self._route(tensors, reason)
        if route == "cpu":
            return getattr(self._cpu, method)(*args)
        if route == "fallback":
            return self._fallback(self._why(reason), method, *args)
        try:
            return self._native(outputs, opts, native_body, host_wait)
        except PurlinError as e:
            if e.status != "Unsupported":
                raise
            return self._fallback(e.message or str(e), method, *args)

    @staticmethod
    def _op(opts) -> str:
        op = opts.reduceOp
        return getattr(getattr(op, "op", op), "name", str(op))

    def _single(self, tensors: Sequence[torch.Tensor]) -> Optional[str]:
        return None if len(tensors) == 1 else f"{len(tensors)} tensors per rank"

    # -- collectives ---------------------------------------------------------
    def broadcast(self, tensors, opts=None):
        opts = opts or dist.BroadcastOptions()
        reason = self._single(tensors) or rules.dtype_route(_names(tensors))

        def body():
            t, back = _dense(tensors[0])
            self.comm._broadcast(t, int(opts.rootRank))
            if back is not None:
                back.copy_(t)
        return self._dispatch("broadcast", tensors, reason, (tensors, opts), body, list(tensors), opts)

    def allreduce(self, tensors, opts=None):
        opts = opts or dist.AllreduceOptions()
        op = self._op(opts)
        reason = self._single(tensors) or rules.reduce_route(op, _names(tensors))

        def body():
            self._all_reduce_one(tensors[0], op)
        return self._dispatch("allreduce", tensors, reason, (tensors, opts), body, list(tensors), opts)

    def _all_reduce_one(self, tensor: torch.Tensor, op: str) -> None:
        from ._tensors import reduce_op_name
        t, back = _dense(tensor)
        self.comm._all_reduce(t, reduce_op_name(op))
        if back is not None:
            back.copy_(t)

    def allreduce_coalesced(self, tensors, opts=None):
        opts = opts or dist.AllreduceCoalescedOptions()
        op = self._op(opts)
        reason = rules.reduce_route(op, _names(tensors))

        def body():
            for t in tensors:
                self._all_reduce_one(t, op)
        return self._dispatch("allreduce_coalesced", tensors, reason, (tensors, opts), body, list(tensors), opts)

    def reduce(self, tensors, opts=None):
        opts = opts or dist.ReduceOptions()
        op = self._op(opts)
        reason = self._single(tensors) or rules.reduce_route(op, _names(tensors))

        def body():
            from ._tensors import reduce_op_name
            t, back = _dense(tensors[0])
            self.comm._reduce(t, int(opts.rootRank), reduce_op_name(op))
            if back is not None:
                back.copy_(t)
        return self._dispatch("reduce", tensors, reason, (tensors, opts), body, list(tensors), opts)

    def _all_gather_list(self, outs: Sequence[torch.Tensor], inp: torch.Tensor) -> None:
        n = self.size()
        if len(outs) != n:
            with self.comm._own():
                raise PurlinError("InvalidArgument", 1, f"all_gather: {len(outs)} output tensors for {n} ranks")
        counts = [o.numel() for o in outs]
        src, _ = _dense(inp)
        flat = torch.empty(sum(counts), dtype=inp.dtype, device=inp.device)
        if len(set(counts)) == 1:  # the same on every rank: every rank passes n outputs of these sizes
            self.comm._all_gather(flat, src)
        else:
            self.comm._all_gather_v(flat, src, counts)
        for o, block in zip(outs, torch.split(flat, counts)):
            o.copy_(block.view(o.shape))

    def allgather(self, output_lists, input_list, opts=None):
        opts = opts or _c10d.AllgatherOptions()
        tensors = _flat([output_lists, input_list])
        reason = (self._single(input_list) or (None if len(output_lists) == 1 else "several output lists")
                  or rules.dtype_route(_names(tensors)))

        def body():
            self._all_gather_list(output_lists[0], input_list[0])
        return self._dispatch("allgather", tensors, reason, (output_lists, input_list, opts), body,
                              list(output_lists[0]) if output_lists else [], opts)

    def _allgather_base(self, output, input, opts=None):
        opts = opts or _c10d.AllgatherOptions()
        reason = rules.dtype_route(_names([output, input]))

        def body():
            out, back = _dense(output)
            src, _ = _dense(input)
            self.comm._all_gather(out, src)
            if back is not None:
                back.copy_(out)
        return self._dispatch("_allgather_base", [output, input], reason, (output, input, opts), body, [output],
                              opts)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        opts = opts or _c10d.AllgatherOptions()
        reason = rules.dtype_route(_names(list(outputs) + list(inputs)))

        def body():
            for o, i in zip(outputs, inputs):
                self._allgather_base_body(o, i)
        return self._dispatch("allgather_into_tensor_coalesced", list(outputs) + list(inputs), reason,
                              (outputs, inputs, opts), body, list(outputs), opts)

    def _allgather_base_body(self, output, input) -> None:
        out, back = _dense(output)
        self.comm._all_gather(out, _dense(input)[0])
        if back is not None:
            back.copy_(out)

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        opts = opts or _c10d.AllgatherOptions()
        tensors = _flat([output_lists, input_list])
        reason = ((None if len(output_lists) == len(input_list) else "output and input lists differ in length")
                  or rules.dtype_route(_names(tensors)))

        def body():
            for outs, i in zip(output_lists, input_list):
                self._all_gather_list(outs, i)
        return self._dispatch("allgather_coalesced", tensors, reason, (output_lists, input_list, opts), body,
                              _flat(output_lists), opts)

    def _reduce_scatter_list(self, out: torch.Tensor, ins: Sequence[torch.Tensor], op: str) -> None:
        from ._tensors import reduce_op_name
        n = self.size()
        if len(ins) != n:
            with self.comm._own():
                raise PurlinError("InvalidArgument", 1, f"reduce_scatter: {len(ins)} input tensors for {n} ranks")
        counts = [i.numel() for i in ins]
        flat = torch.cat([i.reshape(-1) for i in ins])
        dst, back = _dense(out)
        if len(set(counts)) == 1:
            self.comm._reduce_scatter(dst, flat, reduce_op_name(op))
        else:
            self.comm._reduce_scatter_v(dst, flat, counts, reduce_op_name(op))
        if back is not None:
            back.copy_(dst)

    def reduce_scatter(self, outputs, input_lists, opts=None):
        opts = opts or dist.ReduceScatterOptions()
        op = self._op(opts)
        tensors = _flat([outputs, input_lists])
        reason = (self._single(outputs) or (None if len(input_lists) == 1 else "several input lists")
                  or rules.reduce_route(op, _names(tensors)))

        def body():
            self._reduce_scatter_list(outputs[0], input_lists[0], op)
        return self._dispatch("reduce_scatter", tensors, reason, (outputs, input_lists, opts), body, list(outputs),
                              opts)

    def _reduce_scatter_base(self, output, input, opts=None):
        opts = opts or dist.ReduceScatterOptions()
        op = self._op(opts)
        reason = rules.reduce_route(op, _names([output, input]))

        def body():
            self._reduce_scatter_base_body(output, input, op)
        return self._dispatch("_reduce_scatter_base", [output, input], reason, (output, input, opts), body,
                              [output], opts)

    def _reduce_scatter_base_body(self, output, input, op: str) -> None:
        from ._tensors import reduce_op_name
        out, back = _dense(output)
        self.comm._reduce_scatter(out, _dense(input)[0], reduce_op_name(op))
        if back is not None:
            back.copy_(out)

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        opts = opts or dist.ReduceScatterOptions()
        op = self._op(opts)
        reason = rules.reduce_route(op, _names(list(outputs) + list(inputs)))

        def body():
            for o, i in zip(outputs, inputs):
                self._reduce_scatter_base_body(o, i, op)
        return self._dispatch("reduce_scatter_tensor_coalesced", list(outputs) + list(inputs), reason,
                              (outputs, inputs, opts), body, list(outputs), opts)

    def _agreed_bound(self, blocks: List[int]) -> List[int]:
        """The uneven all-to-all's bound, agreed by a MAX all-reduce on the
        device (one host read): [largest block, -smallest block] over ranks."""
        pair = torch.tensor(rules.split_bound(blocks), dtype=torch.int64, device=self.device)
        self.comm._all_reduce(pair, "max")
        return [int(v) for v in pair.tolist()]

    def _all_to_all_blocks(self, out: torch.Tensor, inp: torch.Tensor, send: List[int], recv: List[int]) -> None:
        agreed = self._agreed_bound(send)
        stream = torch.cuda.current_stream(self.device).cuda_stream
        dst, back = _dense(out)
        src, _ = _dense(inp)
        from ._tensors import check_numel, check_same, purlin_dtype_name
        even = rules.bound_is_even(agreed)  # the same on every rank
        with self.comm._own():
            self.comm._check(dst, "all_to_all: output")
            self.comm._check(src, "all_to_all: input")
            check_same(dst, src, "all_to_all")
            if even:
                check_numel(src, agreed[0] * self.size(), "all_to_all: input (every block of every rank is equal)")
                check_numel(dst, agreed[0] * self.size(), "all_to_all: output (every block of every rank is equal)")
        if even:
            self.comm._comm.all_to_all(src.data_ptr(), dst.data_ptr(), agreed[0], purlin_dtype_name(src.dtype),
                                       stream)
        else:
            sdis = [sum(send[:p]) for p in range(len(send))]
            rdis = [sum(recv[:p]) for p in range(len(recv))]
            self.comm._comm.all_to_all_v(src.data_ptr(), dst.data_ptr(), send, sdis, recv, rdis, max(agreed[0], 0),
                                         purlin_dtype_name(src.dtype), stream)
        if back is not None:
            back.copy_(dst)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        """Outside graph capture every rank agrees on the blocks first (one
        small MAX all-reduce and a host read: a rank passing no split sizes
        may pair with ranks passing uneven ones, as torch allows), then runs
        AllToAll if every block is equal, else AllToAllV. Under capture no
        host read is possible: ranks whose split sizes are absent or equal
        run AllToAll; uneven split sizes fall back (pass them alike on every
        rank under capture)."""
        from ._tensors import split_counts
        opts = opts or dist.AllToAllOptions()
        n = self.size()
        rows_in = input.shape[0] if input.dim() else 1
        rows_out = output.shape[0] if output.dim() else 1
        even = all(not s or len(set(s)) == 1 and len(s) == n and s[0] * n == rows
                   for s, rows in ((input_split_sizes, rows_in), (output_split_sizes, rows_out)))
        capturing = torch.cuda.is_current_stream_capturing()
        reason = rules.dtype_route(_names([output, input]))
        if reason is None and capturing and not even:
            reason = "all_to_all_single with uneven split sizes under graph capture (the bound needs a host read)"

        def body():
            if capturing:
                self.comm._all_to_all(output, input, None, None, None)
                return
            with self.comm._own():
                send = split_counts(list(input_split_sizes or []) or None, input.numel(), rows_in, n,
                                    "all_to_all: input")
                recv = split_counts(list(output_split_sizes or []) or None, output.numel(), rows_out, n,
                                    "all_to_all: output")
            self._all_to_all_blocks(output, input, send, recv)
        return self._dispatch("alltoall_base", [output, input], reason,
                              (output, input, output_split_sizes, input_split_sizes, opts), body, [output], opts)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        opts = opts or dist.AllToAllOptions()
        tensors = list(output_tensors) + list(input_tensors)
        reason = rules.dtype_route(_names(tensors))
        if reason is None and torch.cuda.is_current_stream_capturing():
            reason = "all_to_all with lists under graph capture (the bound needs a host read)"

        def body():
            n = self.size()
            if len(output_tensors) != n or len(input_tensors) != n:
                with self.comm._own():
                    raise PurlinError("InvalidArgument", 1, f"all_to_all: {len(input_tensors)} inputs and "
                                                            f"{len(output_tensors)} outputs for {n} ranks")
            inp = torch.cat([t.reshape(-1) for t in input_tensors])
            out = torch.empty(sum(t.numel() for t in output_tensors), dtype=inp.dtype, device=inp.device)
            self._all_to_all_blocks(out, inp, [t.numel() for t in input_tensors],
                                    [t.numel() for t in output_tensors])
            for o, block in zip(output_tensors, torch.split(out, [t.numel() for t in output_tensors])):
                o.copy_(block.view(o.shape))
        return self._dispatch("alltoall", tensors, reason, (output_tensors, input_tensors, opts), body,
                              list(output_tensors), opts)

    def gather(self, output_lists, input_list, opts=None):
        opts = opts or dist.GatherOptions()
        tensors = _flat([output_lists, input_list])
        reason = self._single(input_list) or rules.dtype_route(_names(tensors))
        root = int(opts.rootRank)

        def body():
            outs = output_lists[0] if self.rank() == root else None
            self.comm.gather(_dense(input_list[0])[0], gather_list=outs, dst=root)
        return self._dispatch("gather", tensors, reason, (output_lists, input_list, opts), body,
                              _flat(output_lists), opts)

    def scatter(self, output_list, input_lists, opts=None):
        opts = opts or dist.ScatterOptions()
        tensors = _flat([output_list, input_lists])
        reason = self._single(output_list) or rules.dtype_route(_names(tensors))
        root = int(opts.rootRank)

        def body():
            out, back = _dense(output_list[0])
            ins = [_dense(t)[0] for t in input_lists[0]] if self.rank() == root else None
            self.comm.scatter(out, scatter_list=ins, src=root)
            if back is not None:
                back.copy_(out)
        return self._dispatch("scatter", tensors, reason, (output_list, input_lists, opts), body,
                              list(output_list), opts)

    def barrier(self, opts=None):
        opts = opts or dist.BarrierOptions()
        device = getattr(opts, "device", None)
        if self.comm is None or (device is not None and device.type == "cpu"):
            return self._cpu.barrier(opts)
        token = torch.zeros(1, dtype=torch.int32, device=self.device)
        return self._native([token], opts, lambda: self.comm._all_reduce(token, "sum"), host_wait=True)

    # -- the coalescing manager's device form ----------------------------------
    def _start_coalescing(self, device) -> None:
        """_coalescing_manager(device=...): every call runs at once (Purlin's
        in order on the stream); their Works are kept for _end_coalescing."""
        self._coalesced = []

    def _end_coalescing(self, device):
        """One Work for the coalesced calls (torch keeps only this one)."""
        works, self._coalesced = self._coalesced or [], None
        return _Works(works)

    # -- point to point: the held group ---------------------------------------
    def send(self, tensors, dst, tag=0):
        if all(not t.is_cuda for t in tensors):
            return self._cpu.send(tensors, dst, tag)
        return self._fallback("send/recv (point to point)", "send", tensors, dst, tag)

    def recv(self, tensors, src, tag=0):
        if all(not t.is_cuda for t in tensors):
            return self._cpu.recv(tensors, src, tag)
        return self._fallback("send/recv (point to point)", "recv", tensors, src, tag)

    def recv_anysource(self, tensors, tag=0):
        if all(not t.is_cuda for t in tensors):
            return self._cpu.recv_anysource(tensors, tag)
        return self._fallback("send/recv (point to point)", "recv_anysource", tensors, tag)

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        return self._cpu.monitored_barrier(timeout, wait_all_ranks)

    # -- lifetime ------------------------------------------------------------
    def abort(self) -> None:
        if self.comm is not None:
            self.comm.abort()
        if self._nccl is not None:
            self._nccl.abort()

    def shutdown(self) -> None:
        """Destroys this rank's communicator (torch calls it from
        destroy_process_group; synchronize and barrier first, as Purlin's
        destroy is local)."""
        if self.comm is not None:
            comm, self.comm = self.comm, None
            torch.cuda.synchronize(self.device)
            self._cpu.barrier().wait()  # every rank: no peer's kernel reads this rank's workspace any more
            comm.destroy()
        if self._nccl is not None:
            self._nccl.shutdown()
            self._nccl = None


def _create(store, rank, size, timeout):
    return ProcessGroupPurlin(store, rank, size, timeout)


def register() -> None:
    """Registers the "purlin" backend with torch.distributed (once; `import
    purlin.torch` calls it)."""
    if BACKEND.upper() in dist.Backend._plugins or hasattr(dist.Backend, BACKEND.upper()):
        return
    dist.Backend.register_backend(BACKEND, _create, devices=["cuda"])


def purlin_group(group: Optional[dist.ProcessGroup] = None) -> ProcessGroupPurlin:
    """The ProcessGroupPurlin of a torch.distributed group (the default group
    when None); TypeError if the group is not a purlin one."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupPurlin):
        raise TypeError(f"{type(pg).__name__} is not a purlin process group (init_process_group('cuda:purlin,"
                        "cpu:gloo') or new_group(backend='purlin'))")
    return pg
