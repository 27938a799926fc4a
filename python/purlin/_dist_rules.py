"""Which path a torch.distributed call takes in the "purlin" backend
(purlin.distributed): Purlin's own programs, or the process group the
backend holds for the rest. Written over names and numbers only, so that
every rank decides alike from what every rank passes alike, and tested
without torch (tests/test_dist_rules.py).

A route is None (Purlin runs it) or a *reason*: a short text that the
backend logs once per reason and counts (ProcessGroupPurlin.fallbacks).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from ._tensors import REDUCE_OPS, TORCH_DTYPE_NAMES

__all__ = ["RankFacts", "GroupFacts", "agree", "reduce_route", "dtype_route", "log_level", "LEVELS",
           "fallback_backend"]

#: PURLIN_DEBUG's levels, quietest first. WARN (the default) prints each
#: fallback reason once; INFO adds the group's set-up; TRACE every call's path.
LEVELS = ("OFF", "WARN", "INFO", "TRACE")


def log_level(env: Optional[str] = None) -> int:
    """PURLIN_DEBUG as an index into LEVELS (unknown values: WARN)."""
    raw = (os.environ.get("PURLIN_DEBUG", "WARN") if env is None else env).strip().upper()
    return LEVELS.index(raw) if raw in LEVELS else LEVELS.index("WARN")


@dataclass(frozen=True)
class RankFacts:
    """What one rank posts to the group's store before anything is created."""
    host: str           #: the node (socket.gethostname())
    cuda: bool          #: torch sees a CUDA device
    device: str         #: the device's UUID ("" without CUDA)
    library: str        #: "" when libpurlin.so loads, else why it does not
    fallback: str = ""  #: its PURLIN_TORCH_FALLBACK (rank 0's is the group's)

    def encode(self) -> str:
        return "\x1f".join([self.host, "1" if self.cuda else "0", self.device, self.library, self.fallback])

    @classmethod
    def decode(cls, text: str) -> "RankFacts":
        host, cuda, device, library, fallback = text.split("\x1f")
        return cls(host, cuda == "1", device, library, fallback)


@dataclass(frozen=True)
class GroupFacts:
    """What every rank concludes from every rank's RankFacts (the same on all)."""
    native: Optional[str]   #: None: Purlin's programs may run; else why not
    shared_gpu: bool        #: two ranks on one GPU (NCCL refuses that)


def agree(facts: Sequence[RankFacts]) -> GroupFacts:
    """The group's decision from every rank's facts, in rank order."""
    shared = len({f.device for f in facts if f.device}) < sum(1 for f in facts if f.device)
    for r, f in enumerate(facts):
        if f.library:
            return GroupFacts(f"rank {r} cannot load libpurlin.so ({f.library})", shared)
        if not f.cuda:
            return GroupFacts(f"rank {r} has no CUDA device", shared)
    hosts = sorted({f.host for f in facts})
    if len(hosts) > 1:
        return GroupFacts(f"the ranks span {len(hosts)} nodes ({', '.join(hosts[:4])}): Purlin runs within one "
                          "NVLink domain", shared)
    return GroupFacts(None, shared)


def fallback_backend(shared_gpu: bool, env: Optional[str] = None) -> str:
    """The backend of the held process group for what Purlin does not run:
    PURLIN_TORCH_FALLBACK (nccl or gloo; the group uses rank 0's, so that
    every rank decides alike) if set, else NCCL, or gloo (CUDA tensors
    staged through host memory) where ranks share a GPU."""
    raw = (os.environ.get("PURLIN_TORCH_FALLBACK", "") if env is None else env).strip().lower()
    if raw in ("nccl", "gloo"):
        return raw
    if raw:
        raise ValueError(f"PURLIN_TORCH_FALLBACK={raw!r}: expected nccl or gloo")
    return "gloo" if shared_gpu else "nccl"


#: torch.distributed.ReduceOp names that Purlin reduces with; the others
#: (PREMUL_SUM, BAND, BOR, BXOR) fall back.
NATIVE_OPS = {name.upper() for name in REDUCE_OPS}


def dtype_route(torch_dtype_names: Sequence[str]) -> Optional[str]:
    """None if Purlin moves every dtype named (str(dtype) without "torch."),
    else the reason."""
    for name in torch_dtype_names:
        if name not in TORCH_DTYPE_NAMES:
            return f"dtype torch.{name}"
    return None


def reduce_route(op_name: str, torch_dtype_names: Sequence[str]) -> Optional[str]:
    """None if Purlin runs a reduction by ReduceOp `op_name` (e.g. "SUM")
    over these dtypes, else the reason."""
    if op_name not in NATIVE_OPS:
        return f"ReduceOp.{op_name}"
    reason = dtype_route(torch_dtype_names)
    if reason:
        return reason
    if op_name == "AVG" and "bool" in torch_dtype_names:
        return "ReduceOp.AVG on torch.bool"
    return None


def split_bound(local_blocks: List[int]) -> List[int]:
    """This rank's part of the bound an uneven all-to-all agrees on (a MAX
    all-reduce of these two numbers): the largest block and the negated
    smallest, so that the agreed pair says whether every block of every
    rank is the same size (then the equal-blocks program runs)."""
    if not local_blocks:
        return [0, 0]
    return [max(local_blocks), -min(local_blocks)]


def bound_is_even(agreed: Sequence[int]) -> bool:
    """Whether the agreed split_bound pair means equal blocks everywhere."""
    return int(agreed[0]) == -int(agreed[1])


def reasons_text(counts: Dict[str, int]) -> str:
    return ", ".join(f"{k} ({v})" for k, v in sorted(counts.items())) or "none"
