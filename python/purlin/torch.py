"""purlin for PyTorch: a communicator created over a torch.distributed
process group, with methods named and shaped like torch.distributed's.

    import purlin.torch as pt
    comm = pt.Communicator()                 # collective over the default group
    comm.all_reduce(x)                       # in place, on the current stream
    comm.all_gather_into_tensor(out, x)

Every call enqueues on the current CUDA stream (torch.cuda.current_stream)
and returns; it may be captured by torch.cuda.graph. all_reduce,
all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single,
broadcast and reduce are also torch.library custom ops (torch.ops.purlin.*)
with fake implementations, so torch.compile traces them without a graph
break; gather and scatter run eagerly under torch.compile (a graph break). Bad arguments raise
purlin.PurlinError (a RuntimeError) with the runtime's message.
"""
import contextlib
import enum
import itertools
import threading
import weakref
from typing import Any, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

from . import _core
from ._capi import PurlinError
from ._tensors import (bool_op, check_capacity, check_numel, check_same, check_tensor, device_counts,
                       purlin_dtype_name, reduce_op_name, split_counts)

__all__ = ["Communicator", "ReduceOp", "PurlinError"]


class ReduceOp(enum.Enum):
    """The reduction ops (torch.distributed.ReduceOp's names; those are
    accepted too)."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


# Communicators by id, for the custom ops (which take plain ints).
_registry: "weakref.WeakValueDictionary[int, Communicator]" = weakref.WeakValueDictionary()
_ids = itertools.count(1)
_registry_lock = threading.Lock()


def _lookup(comm_id: int) -> "Communicator":
    comm = _registry.get(comm_id)
    if comm is None:
        raise PurlinError("InvalidArgument", 1, f"purlin communicator {comm_id} does not exist (destroyed?)")
    return comm


def _stream(device: torch.device) -> int:
    return torch.cuda.current_stream(device).cuda_stream


def _dtype_op(t: torch.Tensor, op: str) -> Tuple[str, str]:
    """The library's dtype and op names for a reduction of `t` by `op`
    (already a library op name: reduce_op_name ran in the public method)."""
    name = purlin_dtype_name(t.dtype)
    return name, bool_op(op) if t.dtype == torch.bool else op


class Communicator:
    """One rank's Purlin communicator, created collectively over a
    torch.distributed process group (the rendezvous id is broadcast through
    it; any backend). Without an initialised torch.distributed and with
    group=None it is a world of one.

    device: this rank's GPU (default: torch.cuda.current_device()).
    checked: bound every device wait by time and compare every call across
    ranks (a debugging mode; see docs/failure-model.md).
    Other keyword options: staging_half_bytes, packet_half_bytes,
    wait_timeout_us, direct (purlin_comm_options_t)."""

    def __init__(self, group: Optional[dist.ProcessGroup] = None, device: Any = None, checked: bool = False,
                 **options: Any):
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device())
        device = torch.device(device)
        if device.type != "cuda":
            raise PurlinError("InvalidArgument", 1, f"device {device}: purlin communicators live on CUDA devices")
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self.device = device
        opts = _core.default_options(checked=int(bool(checked)), **options)
        if dist.is_available() and dist.is_initialized():
            rank = dist.get_rank(group)
            size = dist.get_world_size(group)
            src = dist.get_global_rank(group, 0) if group is not None else 0
            box: List[Any] = [_core.get_unique_id() if rank == 0 else None]
            dist.broadcast_object_list(box, src=src, group=group, device=device
                                       if dist.get_backend(group) == "nccl" else None)
            uid = box[0]
        elif group is None:
            rank, size, uid = 0, 1, _core.get_unique_id()
        else:
            raise PurlinError("InvalidArgument", 1, "a process group was given but torch.distributed is not initialised")
        with torch.cuda.device(device):
            self._comm = _core.Comm.from_unique_id(uid, rank, size, device.index, opts)
        self.rank, self.size = rank, size
        self._group = group
        self._captured: Optional[int] = None  # calls captured inside capture(), None outside it
        self.last_captured_calls: Optional[int] = None  # what the last capture() agreed on
        with _registry_lock:
            self.id = next(_ids)
            _registry[self.id] = self

    def _root(self, global_rank: int) -> int:
        """torch.distributed's src/dst are global ranks: the rank in this
        communicator's group (the same number for the default group and for
        communicators made without torch.distributed)."""
        if self._group is None:
            return int(global_rank)
        return dist.get_group_rank(self._group, int(global_rank))

    @classmethod
    def _from_comm(cls, comm: _core.Comm) -> "Communicator":
        """Wraps a Comm made another way (e.g. purlin._core.Comm.in_group: ranks as threads)."""
        self = cls.__new__(cls)
        self._comm = comm
        self.device = torch.device("cuda", comm.device)
        self.rank, self.size = comm.rank, comm.size
        self._group = None
        self._captured = None
        self.last_captured_calls = None
        with _registry_lock:
            self.id = next(_ids)
            _registry[self.id] = self
        return self

    @classmethod
    def in_process_group(cls, group: _core.InProcessGroup, rank: int, device: Any = None, checked: bool = False,
                         **options: Any) -> "Communicator":
        """Collective over the threads of this process that share `group`
        (purlin._core.InProcessGroup): each thread calls it with its rank."""
        dev = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
        if dev.type != "cuda":
            raise PurlinError("InvalidArgument", 1, f"device {dev}: purlin communicators live on CUDA devices")
        if dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
        opts = _core.default_options(checked=int(bool(checked)), **options)
        with torch.cuda.device(dev):
            return cls._from_comm(_core.Comm.in_group(group, rank, dev.index, opts))

    # -- lifetime and failure ---------------------------------------------
    def destroy(self) -> None:
        """Frees this rank's communicator (synchronize its streams first;
        kernels still waiting on a peer that is gone are aborted after a
        bound: purlin._core.Communicator.destroy)."""
        self._comm.destroy()

    def abort(self) -> None:
        """Every wait of this rank gives up and tells the peers (no CUDA call)."""
        self._comm.abort()

    def async_error(self) -> Optional[PurlinError]:
        """The communicator's failure so far, or None (never waits)."""
        return self._comm.async_error()

    def _call_stream(self) -> int:
        """The stream a call enqueues on (the current one of the
        communicator's device); inside capture(), counts captured calls."""
        if self._captured is not None and torch.cuda.is_current_stream_capturing():
            self._captured += 1
        return torch.cuda.current_stream(self.device).cuda_stream

    @contextlib.contextmanager
    def capture(self):
        """Around an inference server's graph-capture phase (the graphs it
        captures with torch.cuda.graph inside): at the end, every rank
        compares how many of this communicator's calls each captured (one
        small AllReduce and a host read). Ranks that captured different
        calls would pair different collectives at every replay; then every
        rank raises PurlinError (InvalidArgument) naming the counts, before
        any graph runs. Not nested; the check is skipped when the block raises."""
        if self._captured is not None:
            raise PurlinError("InvalidArgument", 1, "capture(): already inside capture() on this communicator")
        self._captured = 0
        try:
            yield self
        except BaseException:
            # The peers still compare: this rank takes part with -1 (so
            # they raise too, instead of waiting for it), then re-raises.
            self._captured = None
            self._compare_captured(-1)
            raise
        mine, self._captured = self._captured, None
        self._compare_captured(mine)

    def _compare_captured(self, mine: int) -> None:
        counts = torch.zeros(self.size, dtype=torch.int64, device=self.device)
        counts[self.rank] = mine
        self._all_reduce(counts, "sum")
        per_rank = counts.tolist()
        if mine < 0:
            return
        if -1 in per_rank:
            raise PurlinError("InvalidArgument", 1, "capture(): rank " + str(per_rank.index(-1)) +
                              " raised inside capture(); its graphs are incomplete")
        if len(set(per_rank)) > 1:
            raise PurlinError("InvalidArgument", 1, "capture(): the ranks captured different numbers of calls ("
                              + ", ".join(f"rank {r}: {c}" for r, c in enumerate(per_rank))
                              + "); replaying these graphs would pair different collectives")
        self.last_captured_calls = mine

    # -- checks ------------------------------------------------------------
    def _check(self, t: torch.Tensor, what: str) -> None:
        check_tensor(t, what, self.device.index)

    @contextlib.contextmanager
    def _own(self):
        """Checks of this rank's own tensors (device, layout, dtype pair,
        sizes): its peers may be making the call, so a refusal here fails
        the communicator on every rank (purlin_comm_refuse_call; docs/
        failure-model.md "A refusal on one rank") before the error is raised.
        A dtype or op Purlin does not run (Unsupported) is what every rank
        passes alike: every rank refuses it, and the communicator stays
        usable (a caller may fall back to another library)."""
        try:
            yield
        except PurlinError as e:
            if e.status != "Unsupported":
                self._comm.refuse_call(_stream(self.device), e)
            raise

    # -- collectives (eager bodies; the public methods route through the
    #    custom ops while torch.compile traces) ------------------------------
    def _all_reduce(self, tensor: torch.Tensor, op: str, output: Optional[torch.Tensor] = None) -> None:
        with self._own():
            self._check(tensor, "all_reduce")
            if output is not None:
                self._check(output, "all_reduce: output")
                check_same(output, tensor, "all_reduce")
                check_numel(output, tensor.numel(), "all_reduce: output")
        dtype, o = _dtype_op(tensor, op)
        out = tensor if output is None else output
        self._comm.all_reduce(tensor.data_ptr(), out.data_ptr(), tensor.numel(), dtype, o, self._call_stream())

    def _all_gather_v(self, out: torch.Tensor, inp: torch.Tensor, counts: Sequence[int]) -> None:
        with self._own():
            self._check(out, "all_gather_v: output")
            self._check(inp, "all_gather_v: input")
            check_same(out, inp, "all_gather_v")
            if len(counts) != self.size:
                raise PurlinError("InvalidArgument", 1, f"all_gather_v: {len(counts)} counts for {self.size} ranks")
            check_numel(inp, int(counts[self.rank]), "all_gather_v: input (counts[rank])")
            check_numel(out, sum(int(c) for c in counts), "all_gather_v: output (sum of counts)")
        self._comm.all_gather_v(inp.data_ptr(), out.data_ptr(), [int(c) for c in counts],
                                purlin_dtype_name(inp.dtype), self._call_stream())

    def _reduce_scatter_v(self, out: torch.Tensor, inp: torch.Tensor, counts: Sequence[int], op: str) -> None:
        with self._own():
            self._check(out, "reduce_scatter_v: output")
            self._check(inp, "reduce_scatter_v: input")
            check_same(out, inp, "reduce_scatter_v")
            if len(counts) != self.size:
                raise PurlinError("InvalidArgument", 1,
                                  f"reduce_scatter_v: {len(counts)} counts for {self.size} ranks")
            check_numel(out, int(counts[self.rank]), "reduce_scatter_v: output (counts[rank])")
            check_numel(inp, sum(int(c) for c in counts), "reduce_scatter_v: input (sum of counts)")
        dtype, o = _dtype_op(inp, op)
        self._comm.reduce_scatter_v(inp.data_ptr(), out.data_ptr(), [int(c) for c in counts], dtype, o,
                                    self._call_stream())

    # -- V forms with their counts in device memory (docs/device-counts.md) --
    def _bound(self, max_count: Optional[int], what: str) -> int:
        if max_count is None or int(max_count) < 0:
            raise PurlinError("InvalidArgument", 1, f"{what}: counts in device memory need max_count (elements, "
                              "at least every count of every rank, the same on every rank: it picks the program)")
        return int(max_count)

    def _v_device(self, which: str, out: torch.Tensor, inp: torch.Tensor, counts: torch.Tensor,
                  max_count: Optional[int], op: Optional[str]) -> None:
        """all_gather_v / reduce_scatter_v with `counts` a CUDA tensor: the
        ...Device functions; the buffers hold the bound's capacity."""
        n = self.size
        with self._own():
            self._check(out, which + ": output")
            self._check(inp, which + ": input")
            check_same(out, inp, which)
            bound = self._bound(max_count, which)
            dev = device_counts(counts, n, self.device.index, which + ": counts")
            packed_in = which == "all_gather_v"
            check_capacity(inp, bound if packed_in else n * bound, which + ": input")
            check_capacity(out, n * bound if packed_in else bound, which + ": output")
        if op is None:
            self._comm.all_gather_v_device(inp.data_ptr(), out.data_ptr(), dev.data_ptr(), bound,
                                           purlin_dtype_name(inp.dtype), self._call_stream())
        else:
            dtype, o = _dtype_op(inp, op)
            self._comm.reduce_scatter_v_device(inp.data_ptr(), out.data_ptr(), dev.data_ptr(), bound, dtype, o,
                                               self._call_stream())

    def _all_to_all_device(self, out: torch.Tensor, inp: torch.Tensor, out_splits: torch.Tensor,
                           in_splits: torch.Tensor, max_count: Optional[int]) -> None:
        """all_to_all_single with split sizes (rows of dim 0) in CUDA tensors,
        like torch symmetric memory's all_to_all_vdev: the counts and packed
        displacements are computed on the device (no synchronization), and
        allToAllVDevice reads them when it runs."""
        n = self.size
        with self._own():
            self._check(out, "all_to_all_single: output")
            self._check(inp, "all_to_all_single: input")
            check_same(out, inp, "all_to_all_single")
            if tuple(inp.shape[1:]) != tuple(out.shape[1:]):
                raise PurlinError("InvalidArgument", 1, f"all_to_all_single: input rows {tuple(inp.shape[1:])} and "
                                  f"output rows {tuple(out.shape[1:])} differ")
            bound = self._bound(max_count, "all_to_all_single")
            send = device_counts(in_splits, n, self.device.index, "all_to_all_single: input_split_sizes")
            recv = device_counts(out_splits, n, self.device.index, "all_to_all_single: output_split_sizes")
            check_capacity(inp, n * bound, "all_to_all_single: input")
            check_capacity(out, n * bound, "all_to_all_single: output")
        row = 1
        for d in inp.shape[1:]:
            row *= int(d)
        send, recv = send * row, recv * row
        arrays = torch.cat([send, torch.cumsum(send, 0) - send, recv, torch.cumsum(recv, 0) - recv])
        p, z = arrays.data_ptr(), arrays.element_size() * n
        self._comm.all_to_all_v_device(inp.data_ptr(), out.data_ptr(), p, p + z, p + 2 * z, p + 3 * z, bound,
                                       purlin_dtype_name(inp.dtype), self._call_stream())

    def _all_gather(self, out: torch.Tensor, inp: torch.Tensor) -> None:
        with self._own():
            self._check(out, "all_gather_into_tensor: output")
            self._check(inp, "all_gather_into_tensor: input")
            check_same(out, inp, "all_gather_into_tensor")
            check_numel(out, inp.numel() * self.size, "all_gather_into_tensor: output")
        self._comm.all_gather(inp.data_ptr(), out.data_ptr(), inp.numel(), purlin_dtype_name(inp.dtype),
                              self._call_stream())

    def _reduce_scatter(self, out: torch.Tensor, inp: torch.Tensor, op: str) -> None:
        with self._own():
            self._check(out, "reduce_scatter_tensor: output")
            self._check(inp, "reduce_scatter_tensor: input")
            check_same(out, inp, "reduce_scatter_tensor")
            check_numel(inp, out.numel() * self.size, "reduce_scatter_tensor: input")
        dtype, o = _dtype_op(inp, op)
        self._comm.reduce_scatter(inp.data_ptr(), out.data_ptr(), out.numel(), dtype, o, self._call_stream())

    def _all_to_all(self, out: torch.Tensor, inp: torch.Tensor, out_splits: Optional[Sequence[int]],
                    in_splits: Optional[Sequence[int]], max_count: Optional[int]) -> None:
        with self._own():
            self._check(out, "all_to_all_single: output")
            self._check(inp, "all_to_all_single: input")
            check_same(out, inp, "all_to_all_single")
        n, dtype = self.size, purlin_dtype_name(inp.dtype)
        with self._own():
            blocks = self._all_to_all_blocks(out, inp, out_splits, in_splits, max_count, n)
        if blocks is None:  # equal blocks of dim 0: the AllToAll program
            self._comm.all_to_all(inp.data_ptr(), out.data_ptr(), inp.numel() // n, dtype, self._call_stream())
        else:
            send, sdis, recv, rdis = blocks
            self._comm.all_to_all_v(inp.data_ptr(), out.data_ptr(), send, sdis, recv, rdis, int(max_count), dtype,
                                    self._call_stream())

    def _all_to_all_blocks(self, out: torch.Tensor, inp: torch.Tensor, out_splits: Optional[Sequence[int]],
                           in_splits: Optional[Sequence[int]], max_count: Optional[int], n: int):
        """all_to_all_single's blocks from this rank's own rows and split
        sizes: None for equal blocks of dim 0 (the AllToAll program), else
        the AllToAllV counts and displacements (send, sdis, recv, rdis)."""
        out_splits = list(out_splits) if out_splits else None  # [] means equal splits, as in torch
        in_splits = list(in_splits) if in_splits else None
        if tuple(inp.shape[1:]) != tuple(out.shape[1:]):
            raise PurlinError("InvalidArgument", 1, f"all_to_all_single: input rows {tuple(inp.shape[1:])} and "
                              f"output rows {tuple(out.shape[1:])} differ")
        rows_in = inp.shape[0] if inp.dim() else 1
        rows_out = out.shape[0] if out.dim() else 1
        equal = max_count is None and all(s is None or len(set(s)) <= 1 for s in (out_splits, in_splits))
        if equal:
            # Equal blocks of dim 0 (the AllToAll program). Split sizes that
            # are all equal land here too, so that a rank passing them and a
            # rank passing None run the same collective.
            if rows_in % n or rows_in != rows_out:
                raise PurlinError("InvalidArgument", 1,
                                  f"all_to_all_single: dim 0 of input ({rows_in}) and output ({rows_out}) must be "
                                  f"equal and divisible by the world size {n}")
            for splits, what in ((in_splits, "input"), (out_splits, "output")):
                if splits is not None and (len(splits) != n or splits[0] * n != rows_in):
                    raise PurlinError("InvalidArgument", 1, f"all_to_all_single: {what} split sizes {splits} do not "
                                      f"split dim 0 ({rows_in}) into {n} blocks")
            return None
        if max_count is None:
            raise PurlinError("InvalidArgument", 1,
                              "all_to_all_single: unequal split sizes need max_count (elements, at least every block "
                              "any rank sends, the same on every rank: it picks the program)")
        send = split_counts(in_splits, inp.numel(), rows_in, n, "all_to_all_single: input")
        recv = split_counts(out_splits, out.numel(), rows_out, n, "all_to_all_single: output")
        sdis = [sum(send[:p]) for p in range(n)]
        rdis = [sum(recv[:p]) for p in range(n)]
        return send, sdis, recv, rdis

    def _broadcast(self, tensor: torch.Tensor, src: int) -> None:
        with self._own():
            self._check(tensor, "broadcast")
        p = tensor.data_ptr()
        self._comm.broadcast(p, p, tensor.numel(), purlin_dtype_name(tensor.dtype), int(src), self._call_stream())

    def _reduce(self, tensor: torch.Tensor, dst: int, op: str) -> None:
        with self._own():
            self._check(tensor, "reduce")
        dtype, o = _dtype_op(tensor, op)
        p = tensor.data_ptr()
        self._comm.reduce(p, p, tensor.numel(), dtype, o, int(dst), self._call_stream())

    def _gather(self, out: Optional[torch.Tensor], inp: torch.Tensor, dst: int) -> None:
        with self._own():
            self._check(inp, "gather: input")
            if self.rank == dst:
                self._check(out, "gather: output")
                check_same(out, inp, "gather")
                check_numel(out, inp.numel() * self.size, "gather: output")
        self._comm.gather(inp.data_ptr(), out.data_ptr() if self.rank == dst else 0, inp.numel(),
                          purlin_dtype_name(inp.dtype), int(dst), self._call_stream())

    def _scatter(self, out: torch.Tensor, inp: Optional[torch.Tensor], src: int) -> None:
        with self._own():
            self._check(out, "scatter: output")
            if self.rank == src:
                self._check(inp, "scatter: input")
                check_same(out, inp, "scatter")
                check_numel(inp, out.numel() * self.size, "scatter: input")
        self._comm.scatter(inp.data_ptr() if self.rank == src else 0, out.data_ptr(), out.numel(),
                           purlin_dtype_name(out.dtype), int(src), self._call_stream())

    # -- the public methods --------------------------------------------------
    def all_reduce(self, tensor: torch.Tensor, op: Any = ReduceOp.SUM, output: Optional[torch.Tensor] = None) -> None:
        """Every rank's `tensor` becomes the reduction over ranks (ascending
        rank order, deterministic); with `output` (same dtype and size) the
        result goes there and `tensor` is left as it was (out of place)."""
        o = reduce_op_name(op)
        if torch.compiler.is_compiling():
            if output is None:
                torch.ops.purlin.all_reduce_(tensor, self.id, o)
            else:
                torch.ops.purlin.all_reduce_out_(output, tensor, self.id, o)
        else:
            self._all_reduce(tensor, o, output)

    @torch.compiler.disable  # no custom op yet: torch.compile runs it eagerly (a graph break)
    def all_gather_v(self, output: torch.Tensor, input: torch.Tensor, counts: Any,
                     max_count: Optional[int] = None) -> None:
        """Uneven all-gather: rank r contributes counts[r] elements (its
        `input`); `output` (sum of counts) gets them in rank order. Every
        rank passes the same counts. `counts` may be a CUDA tensor (n
        integers, e.g. a router's output): read on the device when the call
        runs (a CUDA graph replays with the counts of each replay), with
        `max_count` bounding every count; `input` then holds max_count
        elements and `output` n * max_count (docs/device-counts.md)."""
        if isinstance(counts, torch.Tensor):
            self._v_device("all_gather_v", output, input, counts, max_count, None)
        else:
            self._all_gather_v(output, input, counts)

    @torch.compiler.disable  # no custom op yet: torch.compile runs it eagerly (a graph break)
    def reduce_scatter_v(self, output: torch.Tensor, input: torch.Tensor, counts: Any,
                         op: Any = ReduceOp.SUM, max_count: Optional[int] = None) -> None:
        """Uneven reduce-scatter: `input` (sum of counts elements) is cut in
        rank order into partitions of counts[r]; rank r's `output` gets the
        reduction over ranks of partition r. Every rank passes the same counts.
        `counts` may be a CUDA tensor, as in all_gather_v (`input` then holds
        n * max_count elements, `output` max_count)."""
        if isinstance(counts, torch.Tensor):
            self._v_device("reduce_scatter_v", output, input, counts, max_count, reduce_op_name(op))
        else:
            self._reduce_scatter_v(output, input, counts, reduce_op_name(op))

    # -- registration, graphs, eligibility --------------------------------
    def register(self, tensor: torch.Tensor) -> int:
        """Collective (every rank, same order): registers `tensor`'s memory
        for the eager direct program (calls whose buffers lie in registered
        memory read and write the peers' buffers directly); returns a handle
        for deregister(). docs/runtime.md "Registered buffers"."""
        # No local check: a rank whose tensor does not qualify (host memory,
        # ...) says so in the library's first round, so every rank raises
        # alike instead of its peers waiting for it.
        return self._comm.register(tensor.data_ptr(), tensor.numel() * tensor.element_size())

    def deregister(self, handle: int) -> None:
        """Forgets a registration (before the memory is freed)."""
        self._comm.deregister(int(handle))

    def release(self) -> None:
        """Gives back the peers' mappings that captured calls made (the
        direct program under CUDA graphs): call it after destroying the
        graphs and before freeing the buffers they captured."""
        self._comm.release_direct()

    def should_use(self, tensor: torch.Tensor, op: Any = ReduceOp.SUM) -> bool:
        """Whether this communicator can run a collective on `tensor` with
        `op` (a CUDA tensor on its device, contiguous, a dtype and op Purlin
        reduces), so that a caller can fall back per tensor, as vLLM's
        should_custom_ar does. Decided from the arguments only (local and
        cheap): ranks that pass alike choose alike. A failed communicator
        raises at the call instead (async_error())."""
        try:
            check_tensor(tensor, "should_use", self.device.index)
            name = reduce_op_name(op)
            _dtype_op(tensor, name)
            if tensor.dtype == torch.bool and name == "avg":
                return False
        except PurlinError:
            return False
        return True

    def all_gather_into_tensor(self, output_tensor: torch.Tensor, input_tensor: torch.Tensor) -> None:
        """`output_tensor` (size x input elements) gets every rank's input in rank order."""
        if torch.compiler.is_compiling():
            torch.ops.purlin.all_gather_into_tensor_(output_tensor, input_tensor, self.id)
        else:
            self._all_gather(output_tensor, input_tensor)

    def reduce_scatter_tensor(self, output: torch.Tensor, input: torch.Tensor, op: Any = ReduceOp.SUM) -> None:
        """`output` gets the reduction over ranks of partition `rank` of `input`."""
        o = reduce_op_name(op)
        if torch.compiler.is_compiling():
            torch.ops.purlin.reduce_scatter_tensor_(output, input, self.id, o)
        else:
            self._reduce_scatter(output, input, o)

    def all_to_all_single(self, output: torch.Tensor, input: torch.Tensor,
                          output_split_sizes: Optional[Sequence[int]] = None,
                          input_split_sizes: Optional[Sequence[int]] = None,
                          max_count: Optional[int] = None) -> None:
        """Block p of `input` (rows of dim 0) goes to rank p; block q of
        `output` comes from rank q. Equal blocks (no split sizes, or equal
        ones) run the AllToAll program. Unequal split sizes need `max_count`
        (elements): at least every block any rank sends, and the same on
        every rank (it picks the program); pass it on every rank or on
        none. Split sizes in CUDA tensors (both; like torch symmetric
        memory's all_to_all_vdev) are read on the device when the call runs,
        with no synchronization (a CUDA graph replays with the splits of each
        replay): `max_count` is then required and both buffers hold
        size * max_count elements (docs/device-counts.md)."""
        if isinstance(output_split_sizes, torch.Tensor) or isinstance(input_split_sizes, torch.Tensor):
            if not (isinstance(output_split_sizes, torch.Tensor) and isinstance(input_split_sizes, torch.Tensor)):
                with self._own():
                    raise PurlinError("InvalidArgument", 1, "all_to_all_single: split sizes in device memory need "
                                      "both output_split_sizes and input_split_sizes as CUDA tensors")
            torch.compiler.disable(self._all_to_all_device)(output, input, output_split_sizes, input_split_sizes,
                                                            max_count)
            return
        if torch.compiler.is_compiling():
            torch.ops.purlin.all_to_all_single_(output, input, self.id, list(output_split_sizes or []),
                                                list(input_split_sizes or []), -1 if max_count is None else max_count,
                                                output_split_sizes is not None, input_split_sizes is not None)
        else:
            self._all_to_all(output, input, output_split_sizes, input_split_sizes, max_count)

    def broadcast(self, tensor: torch.Tensor, src: int = 0) -> None:
        """In place: every rank's `tensor` becomes rank `src`'s."""
        src = self._root(src)
        if torch.compiler.is_compiling():
            torch.ops.purlin.broadcast_(tensor, self.id, src)
        else:
            self._broadcast(tensor, src)

    def reduce(self, tensor: torch.Tensor, dst: int = 0, op: Any = ReduceOp.SUM) -> None:
        """In place on rank `dst`: the reduction over ranks (others' tensors are unchanged)."""
        o = reduce_op_name(op)
        dst = self._root(dst)
        if torch.compiler.is_compiling():
            torch.ops.purlin.reduce_(tensor, self.id, dst, o)
        else:
            self._reduce(tensor, dst, o)

    @torch.compiler.disable  # no custom op yet: torch.compile runs it eagerly (a graph break)
    def gather(self, tensor: torch.Tensor, gather_list: Optional[List[torch.Tensor]] = None, dst: int = 0,
               output: Optional[torch.Tensor] = None) -> None:
        """Rank `dst` gets every rank's `tensor`: into `output` (size x
        elements, rank order) or, like torch.distributed, into `gather_list`.
        The root's own argument errors (a missing or wrongly sized output)
        are known to the root only: it raises while the others wait, as
        with NCCL (checked mode or abort() ends their wait)."""
        dst = self._root(dst)
        if self.rank == dst and output is None:
            if gather_list is None or len(gather_list) != self.size:
                raise PurlinError("InvalidArgument", 1,
                                  f"gather: rank {dst} needs an output tensor or a gather_list of {self.size} tensors")
            output = torch.empty((self.size,) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
            self._gather(output, tensor, dst)
            for p, t in enumerate(gather_list):
                t.copy_(output[p])
            return
        self._gather(output, tensor, dst)

    @torch.compiler.disable  # no custom op yet: torch.compile runs it eagerly (a graph break)
    def scatter(self, tensor: torch.Tensor, scatter_list: Optional[List[torch.Tensor]] = None, src: int = 0,
                input: Optional[torch.Tensor] = None) -> None:
        """Every rank's `tensor` gets block `rank` of rank `src`'s `input`
        (size x elements) or of its `scatter_list`. As with gather, the
        root's own argument errors are the root's alone."""
        src = self._root(src)
        if self.rank == src and input is None:
            if scatter_list is None or len(scatter_list) != self.size:
                raise PurlinError("InvalidArgument", 1,
                                  f"scatter: rank {src} needs an input tensor or a scatter_list of {self.size} tensors")
            input = torch.stack([t.reshape(tensor.shape) for t in scatter_list])
        self._scatter(tensor, input, src)


# ---------------------------------------------------------------------------
# torch.library custom ops: what torch.compile sees (they mutate their
# output argument and return nothing; the fake implementations do nothing).
# ---------------------------------------------------------------------------

@torch.library.custom_op("purlin::all_reduce_", mutates_args=("tensor",))
def _op_all_reduce(tensor: torch.Tensor, comm_id: int, op: str) -> None:
    _lookup(comm_id)._all_reduce(tensor, op)


@_op_all_reduce.register_fake
def _(tensor, comm_id, op):
    return None


@torch.library.custom_op("purlin::all_reduce_out_", mutates_args=("output",))
def _op_all_reduce_out(output: torch.Tensor, tensor: torch.Tensor, comm_id: int, op: str) -> None:
    _lookup(comm_id)._all_reduce(tensor, op, output)


@_op_all_reduce_out.register_fake
def _(output, tensor, comm_id, op):
    return None


@torch.library.custom_op("purlin::all_gather_into_tensor_", mutates_args=("output",))
def _op_all_gather(output: torch.Tensor, input: torch.Tensor, comm_id: int) -> None:
    _lookup(comm_id)._all_gather(output, input)


@_op_all_gather.register_fake
def _(output, input, comm_id):
    return None


@torch.library.custom_op("purlin::reduce_scatter_tensor_", mutates_args=("output",))
def _op_reduce_scatter(output: torch.Tensor, input: torch.Tensor, comm_id: int, op: str) -> None:
    _lookup(comm_id)._reduce_scatter(output, input, op)


@_op_reduce_scatter.register_fake
def _(output, input, comm_id, op):
    return None


@torch.library.custom_op("purlin::all_to_all_single_", mutates_args=("output",))
def _op_all_to_all(output: torch.Tensor, input: torch.Tensor, comm_id: int, output_split_sizes: List[int],
                   input_split_sizes: List[int], max_count: int, has_out_splits: bool, has_in_splits: bool) -> None:
    _lookup(comm_id)._all_to_all(output, input, output_split_sizes if has_out_splits else None,
                                 input_split_sizes if has_in_splits else None, None if max_count < 0 else max_count)


@_op_all_to_all.register_fake
def _(output, input, comm_id, output_split_sizes, input_split_sizes, max_count, has_out_splits, has_in_splits):
    return None


@torch.library.custom_op("purlin::broadcast_", mutates_args=("tensor",))
def _op_broadcast(tensor: torch.Tensor, comm_id: int, src: int) -> None:
    _lookup(comm_id)._broadcast(tensor, src)


@_op_broadcast.register_fake
def _(tensor, comm_id, src):
    return None


@torch.library.custom_op("purlin::reduce_", mutates_args=("tensor",))
def _op_reduce(tensor: torch.Tensor, comm_id: int, dst: int, op: str) -> None:
    _lookup(comm_id)._reduce(tensor, dst, op)


@_op_reduce.register_fake
def _(tensor, comm_id, dst, op):
    return None


# The torch.distributed backend "purlin" (purlin.distributed), registered on import.
from . import distributed as _distributed  # noqa: E402

_distributed.register()
