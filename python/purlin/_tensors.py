"""Argument checks and dtype mapping for tensors, written against the few
attributes they use (dtype, device, is_contiguous, numel, element_size,
data_ptr) so that they are tested without torch (tests/test_tensors.py)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from ._capi import PurlinError

__all__ = ["TORCH_DTYPE_NAMES", "purlin_dtype_name", "check_tensor", "check_same", "reduce_op_name",
           "bool_op", "REDUCE_OPS"]

#: torch dtype name (str(torch.float32) without "torch.") -> the runtime's
#: dtype name (runtime/src/types.cpp). bool moves as 1-byte elements.
TORCH_DTYPE_NAMES = {
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float64": "f64",
    "int8": "i8",
    "uint8": "u8",
    "int32": "i32",
    "int64": "i64",
    "float8_e4m3fn": "f8e4m3",
    "float8_e5m2": "f8e5m2",
    "bool": "u8",
}

#: The reduction ops a caller may name (torch.distributed.ReduceOp names,
#: lower case) -> the runtime's op name (runtime/src/types.cpp).
REDUCE_OPS = {"sum": "sum", "avg": "avg", "product": "product", "min": "min", "max": "max"}


def _torch_name(dtype: Any) -> str:
    s = str(dtype)
    return s[len("torch."):] if s.startswith("torch.") else s


def purlin_dtype_name(dtype: Any) -> str:
    """The runtime's name for a torch dtype; PurlinError(Unsupported) for
    one purlin does not move (complex, uint16, ...)."""
    name = _torch_name(dtype)
    try:
        return TORCH_DTYPE_NAMES[name]
    except KeyError:
        raise PurlinError("Unsupported", 2, f"dtype torch.{name} is not supported by purlin (supported: "
                          + ", ".join("torch." + k for k in TORCH_DTYPE_NAMES) + ")") from None


def reduce_op_name(op: Any) -> str:
    """The op name of a ReduceOp given as purlin.torch.ReduceOp,
    torch.distributed.ReduceOp or a string ("sum", "avg", ...)."""
    raw = getattr(op, "name", None) or str(op)
    key = raw.rsplit(".", 1)[-1].lower()
    try:
        return REDUCE_OPS[key]
    except KeyError:
        raise PurlinError("Unsupported", 2, f"reduction op {raw!r} is not an op name purlin takes (names: "
                          + ", ".join(k.upper() for k in REDUCE_OPS) + ")") from None


def bool_op(op: str) -> str:
    """torch.distributed's meaning of an op on bool tensors, as the bytes
    0/1: SUM and MAX are a logical or (max), PRODUCT and MIN a logical and
    (min); AVG has no meaning."""
    if op in ("sum", "max"):
        return "max"
    if op in ("product", "min"):
        return "min"
    raise PurlinError("Unsupported", 2, f"reduction op {op!r} is not defined on torch.bool tensors")


def check_tensor(t: Any, what: str, device_index: int) -> None:
    """A tensor a collective may use: CUDA, on the communicator's device,
    contiguous (dense, no gaps), with a supported dtype."""
    if t is None:
        raise PurlinError("InvalidArgument", 1, f"{what}: None instead of a tensor")
    dev = getattr(t, "device", None)
    if getattr(dev, "type", None) != "cuda":
        raise PurlinError("InvalidArgument", 1, f"{what}: a tensor on {dev}, not on a CUDA device")
    index = dev.index if dev.index is not None else device_index
    if index != device_index:
        raise PurlinError("InvalidArgument", 1,
                          f"{what}: a tensor on cuda:{index}, but this rank's communicator is on cuda:{device_index}")
    if not t.is_contiguous():
        raise PurlinError("InvalidArgument", 1, f"{what}: a non-contiguous tensor (call .contiguous() first)")
    purlin_dtype_name(t.dtype)


def check_same(a: Any, b: Any, what: str) -> None:
    if _torch_name(a.dtype) != _torch_name(b.dtype):
        raise PurlinError("InvalidArgument", 1, f"{what}: dtypes differ ({a.dtype} and {b.dtype})")


def check_numel(t: Any, want: int, what: str) -> None:
    if t.numel() != want:
        raise PurlinError("InvalidArgument", 1, f"{what}: {t.numel()} elements, expected {want}")


def check_capacity(t: Any, want: int, what: str) -> None:
    """A buffer of a call whose counts are in device memory holds at least
    `want` elements (the bound's capacity, docs/device-counts.md)."""
    if t.numel() < want:
        raise PurlinError("InvalidArgument", 1, f"{what}: {t.numel()} elements, fewer than the {want} the bound "
                          "max_count gives it (docs/device-counts.md)")


def device_counts(counts: Any, n: int, device_index: int, what: str) -> Any:
    """Counts in device memory as the library reads them: a CUDA tensor of
    n integers on the communicator's device, as int64 (size_t's bits; a
    negative entry reads as a huge count and is refused on the device)."""
    import torch
    check_tensor(counts, what, device_index)
    if counts.dim() != 1 or counts.numel() != n:
        raise PurlinError("InvalidArgument", 1, f"{what}: shape {tuple(counts.shape)}, expected ({n},)")
    if counts.dtype.is_floating_point or counts.dtype.is_complex or counts.dtype == torch.bool:
        raise PurlinError("InvalidArgument", 1, f"{what}: dtype {counts.dtype}, expected an integer dtype")
    return counts.to(torch.int64).contiguous()


def split_counts(splits: Optional[Sequence[int]], numel: int, rows: int, n: int, what: str) -> list[int]:
    """Element counts per rank of all_to_all_single's split sizes (rows of
    dim 0); None = equal splits."""
    row = numel // rows if rows else 0
    if splits is None:
        if rows % n:
            raise PurlinError("InvalidArgument", 1,
                              f"{what}: dim 0 ({rows}) is not divisible by the world size {n}; pass split sizes")
        return [numel // n] * n
    if len(splits) != n:
        raise PurlinError("InvalidArgument", 1, f"{what}: {len(splits)} split sizes for {n} ranks")
    if any(int(s) < 0 for s in splits) or sum(int(s) for s in splits) != rows:
        raise PurlinError("InvalidArgument", 1,
                          f"{what}: split sizes {list(splits)} do not add up to dim 0 ({rows})")
    return [int(s) * row for s in splits]
