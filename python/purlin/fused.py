"""Fused ops built on the device API (docs/device-api.md): a collective's
program and the op's own code in one kernel.

all_reduce_add_rms_norm: AllReduce + residual add + RMSNorm, the shipped
example (examples/fused_rmsnorm, part of libpurlin.so)::

    out = purlin.fused.all_reduce_add_rms_norm(comm, x, residual, weight, eps)

x (tokens x hidden bf16, this rank's partial sums) is reduced in place;
residual becomes x + residual (in place unless residual_out is given); out
is RMSNorm of it times weight, bf16 or float8_e4m3fn (divided by `scale`).
The fused kernel runs the latency program up to the policy's bound and the
throughput program past it; where it cannot (its grid does not fit the
GPU), the AllReduce and an add-and-norm kernel run (fused="auto"); both
give the same bits. On the current stream; may be captured by torch.cuda.graph.
"""
from __future__ import annotations

import ctypes
from typing import Optional

import torch

from . import _capi
from ._capi import PurlinError
from ._core import dtype_code
from ._tensors import check_tensor, purlin_dtype_name

__all__ = ["all_reduce_add_rms_norm"]

_MODES = {"auto": 0, "fused": 1, "unfused": 2}


def _require(ok: bool, what: str) -> None:
    if not ok:
        raise PurlinError("InvalidArgument", 1, "all_reduce_add_rms_norm: " + what)


def all_reduce_add_rms_norm(comm, x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                            eps: float = 1e-6, *, residual_out: Optional[torch.Tensor] = None,
                            out: Optional[torch.Tensor] = None, scale: Optional[float] = None,
                            fused: str = "auto") -> torch.Tensor:
    """On every rank of `comm` (a purlin.torch.Communicator): x <- AllReduce(x)
    (sum); residual_out (default: residual, in place) <- bf16(x + residual);
    out (default: a new bf16 tensor like x) <- bf16((residual_out * rms) *
    weight) with rms = rsqrt(mean(residual_out^2) + eps) per row, or for a
    float8_e4m3fn `out` that value / scale, saturated. x, residual,
    residual_out: (tokens, hidden) bf16 contiguous; weight: (hidden,) bf16;
    hidden a multiple of 8. fused: "auto", "fused" (PurlinError Unsupported
    where the fused kernel's grid does not fit the GPU) or "unfused".
    Returns out."""
    _require(fused in _MODES, f"fused is one of {sorted(_MODES)}, not {fused!r}")
    if residual_out is None:
        residual_out = residual
    if out is None:
        out = torch.empty_like(x)
    with comm._own():  # this rank's own tensors: a refusal fails the communicator on every rank
        for t, name in ((x, "x"), (residual, "residual"), (residual_out, "residual_out"), (weight, "weight"),
                        (out, "out")):
            check_tensor(t, f"all_reduce_add_rms_norm: {name}", comm.device.index)
        _require(x.dim() == 2, f"x is (tokens, hidden), not of shape {tuple(x.shape)}")
        for t, name in ((x, "x"), (residual, "residual"), (residual_out, "residual_out"), (weight, "weight")):
            _require(t.dtype == torch.bfloat16, f"{name} is bfloat16, not {t.dtype}")
        for t, name in ((residual, "residual"), (residual_out, "residual_out"), (out, "out")):
            _require(tuple(t.shape) == tuple(x.shape), f"{name} has shape {tuple(t.shape)}, x {tuple(x.shape)}")
        _require(tuple(weight.shape) == (x.shape[1],), f"weight has shape {tuple(weight.shape)}, not ({x.shape[1]},)")
        _require(out.dtype in (torch.bfloat16, torch.float8_e4m3fn),
                 f"out is bfloat16 or float8_e4m3fn, not {out.dtype}")
        if out.dtype == torch.float8_e4m3fn:
            _require(scale is not None and float(scale) > 0, "a float8_e4m3fn out needs scale > 0")
    ran = ctypes.c_int(0)
    _capi.check(_capi.fused_rms_norm()(
        comm._comm.handle, x.data_ptr(), residual.data_ptr(), residual_out.data_ptr(), weight.data_ptr(),
        out.data_ptr(), dtype_code(purlin_dtype_name(out.dtype)).code, float(scale or 1.0), x.shape[0], x.shape[1],
        float(eps), comm._call_stream(), _MODES[fused], ctypes.byref(ran)))
    return out
