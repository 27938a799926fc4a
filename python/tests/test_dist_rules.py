"""The torch.distributed backend's routing rules (purlin._dist_rules),
without torch: what every rank concludes from every rank's facts, which
ops and dtypes Purlin runs, the fallback backend, PURLIN_DEBUG levels."""
import pytest

from purlin import _dist_rules as rules

F = rules.RankFacts


def test_facts_round_trip():
    f = F("node-a", True, "GPU-1234", "")
    assert F.decode(f.encode()) == f
    g = F("node-b", False, "", "libpurlin.so: cannot open", "gloo")
    assert F.decode(g.encode()) == g


def test_agree_native_on_one_node():
    g = rules.agree([F("a", True, "u0", ""), F("a", True, "u1", "")])
    assert g.native is None and not g.shared_gpu


def test_agree_shared_gpu():
    g = rules.agree([F("a", True, "u0", ""), F("a", True, "u0", ""), F("a", True, "u1", "")])
    assert g.native is None and g.shared_gpu


@pytest.mark.parametrize("facts, words", [
    ([F("a", True, "u0", ""), F("b", True, "u1", "")], "span 2 nodes"),
    ([F("a", True, "u0", ""), F("a", False, "", "")], "rank 1 has no CUDA device"),
    ([F("a", True, "u0", "not found"), F("a", True, "u1", "")], "rank 0 cannot load libpurlin.so (not found)"),
])
def test_agree_reasons(facts, words):
    g = rules.agree(facts)
    assert g.native is not None and words in g.native
    # every rank sees the same list, so every rank concludes the same
    assert rules.agree(list(facts)) == g


def test_fallback_backend():
    assert rules.fallback_backend(False, "") == "nccl"
    assert rules.fallback_backend(True, "") == "gloo"
    assert rules.fallback_backend(False, "GLOO") == "gloo"
    assert rules.fallback_backend(True, "nccl") == "nccl"
    with pytest.raises(ValueError, match="expected nccl or gloo"):
        rules.fallback_backend(False, "mpi")


@pytest.mark.parametrize("op, dtypes, reason", [
    ("SUM", ["float32"], None),
    ("AVG", ["bfloat16", "bfloat16"], None),
    ("MAX", ["bool"], None),
    ("AVG", ["bool"], "ReduceOp.AVG on torch.bool"),
    ("PREMUL_SUM", ["float32"], "ReduceOp.PREMUL_SUM"),
    ("BAND", ["int32"], "ReduceOp.BAND"),
    ("BOR", ["int64"], "ReduceOp.BOR"),
    ("BXOR", ["uint8"], "ReduceOp.BXOR"),
    ("SUM", ["int16"], "dtype torch.int16"),
    ("MIN", ["float32", "uint32"], "dtype torch.uint32"),
])
def test_reduce_route(op, dtypes, reason):
    assert rules.reduce_route(op, dtypes) == reason


def test_dtype_route():
    assert rules.dtype_route(["float8_e4m3fn", "int64", "bool"]) is None
    assert rules.dtype_route(["complex64"]) == "dtype torch.complex64"


def test_split_bound():
    assert rules.split_bound([]) == [0, 0]
    assert rules.split_bound([4, 1, 7]) == [7, -1]
    # agreed by a MAX over ranks: even only when every block everywhere is equal
    agreed = [max(a, b) for a, b in zip(rules.split_bound([3, 3]), rules.split_bound([3, 3]))]
    assert rules.bound_is_even(agreed)
    agreed = [max(a, b) for a, b in zip(rules.split_bound([3, 3]), rules.split_bound([5, 5]))]
    assert not rules.bound_is_even(agreed)


def test_log_levels():
    assert rules.LEVELS[rules.log_level("")] == "WARN"
    assert rules.LEVELS[rules.log_level("off")] == "OFF"
    assert rules.LEVELS[rules.log_level("TRACE")] == "TRACE"
    assert rules.LEVELS[rules.log_level("verbose")] == "WARN"
