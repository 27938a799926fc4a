"""Argument checks and the dtype/op mapping of the torch layer, on stand-in
tensors (no torch needed)."""
import pytest

import purlin
from purlin import _tensors as T


class Dev:
    def __init__(self, type_, index):
        self.type, self.index = type_, index

    def __str__(self):
        return f"{self.type}:{self.index}" if self.index is not None else self.type


class FakeTensor:
    def __init__(self, n=8, dtype="torch.float32", device=Dev("cuda", 0), contiguous=True, shape=None):
        self.n, self.dtype, self.device, self._contiguous = n, dtype, device, contiguous
        self.shape = shape if shape is not None else (n,)

    def is_contiguous(self):
        return self._contiguous

    def numel(self):
        return self.n


def test_every_torch_dtype_a_nccl_user_passes_has_a_name():
    for name in ("float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64",
                 "float8_e4m3fn", "float8_e5m2", "bool"):
        assert T.purlin_dtype_name("torch." + name)
    assert T.purlin_dtype_name("torch.bool") == "u8"


def test_unsupported_dtype_names_the_supported_ones():
    with pytest.raises(purlin.PurlinError) as e:
        T.purlin_dtype_name("torch.complex64")
    assert e.value.status == "Unsupported" and "torch.bfloat16" in e.value.message


@pytest.mark.parametrize("given,want", [("sum", "sum"), ("SUM", "sum"), ("ReduceOp.AVG", "avg"),
                                        ("product", "product"), ("max", "max"), ("min", "min")])
def test_reduce_op_names(given, want):
    assert T.reduce_op_name(given) == want


def test_reduce_op_objects_with_a_name():
    class Op:
        name = "PRODUCT"
    assert T.reduce_op_name(Op()) == "product"
    with pytest.raises(purlin.PurlinError, match="'band' is not an op name purlin takes.*SUM, AVG, PRODUCT, MIN, MAX"):
        T.reduce_op_name("band")


def test_bool_ops_are_logical():
    assert T.bool_op("sum") == "max" and T.bool_op("max") == "max"
    assert T.bool_op("product") == "min" and T.bool_op("min") == "min"
    with pytest.raises(purlin.PurlinError, match="not defined on torch.bool"):
        T.bool_op("avg")


def test_tensor_checks():
    T.check_tensor(FakeTensor(), "x", 0)
    T.check_tensor(FakeTensor(device=Dev("cuda", None)), "x", 0)  # the current device
    cases = [
        (None, "None instead of a tensor"),
        (FakeTensor(device=Dev("cpu", None)), "not on a CUDA device"),
        (FakeTensor(device=Dev("cuda", 1)), "cuda:1, but this rank's communicator is on cuda:0"),
        (FakeTensor(contiguous=False), "non-contiguous"),
        (FakeTensor(dtype="torch.complex64"), "not supported by purlin"),
    ]
    for t, msg in cases:
        with pytest.raises(purlin.PurlinError) as e:
            T.check_tensor(t, "all_reduce", 0)
        assert msg in e.value.message


def test_same_dtype_and_sizes():
    with pytest.raises(purlin.PurlinError, match="dtypes differ"):
        T.check_same(FakeTensor(dtype="torch.float16"), FakeTensor(dtype="torch.bfloat16"), "all_gather")
    with pytest.raises(purlin.PurlinError, match="7 elements, expected 8"):
        T.check_numel(FakeTensor(n=7), 8, "out")


def test_split_counts():
    assert T.split_counts(None, 12, 6, 2, "in") == [6, 6]
    assert T.split_counts([1, 5], 12, 6, 2, "in") == [2, 10]  # rows of 2 elements
    with pytest.raises(purlin.PurlinError, match="not divisible"):
        T.split_counts(None, 15, 5, 2, "in")
    with pytest.raises(purlin.PurlinError, match="do not add up"):
        T.split_counts([1, 1], 12, 6, 2, "in")
    with pytest.raises(purlin.PurlinError, match="3 split sizes for 2 ranks"):
        T.split_counts([1, 1, 4], 12, 6, 2, "in")
