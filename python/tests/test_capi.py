"""The C ABI through ctypes, on a machine without a GPU: loading, the
vocabulary, options, unique ids and the error path of every kind of call."""
import ctypes
import os
import threading

import pytest

import purlin
from purlin import _capi, _core


def test_library_is_the_build_one(lib):
    want = os.environ.get("PURLIN_LIBRARY")
    if want:
        assert os.path.samefile(purlin.library_path(), want)
    assert purlin.version().count(".") == 2


def test_missing_library_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setattr(_capi, "_lib", None)
    monkeypatch.setenv("PURLIN_LIBRARY", str(tmp_path / "nope.so"))
    with pytest.raises(purlin.PurlinError) as e:
        _capi.load()
    assert e.value.status == "LibraryNotFound"
    assert "nope.so" in str(e.value) and "PURLIN_LIBRARY" in str(e.value)


def test_vocabulary_comes_from_the_library(lib):
    d = purlin.dtypes()
    assert d["f32"].size == 4 and d["f16"].size == 2 and d["bf16"].size == 2
    # every torch dtype the torch layer maps has a library name (purlin/types.def)
    from purlin import _tensors
    assert set(_tensors.TORCH_DTYPE_NAMES.values()) <= set(d)
    assert d["i8"].size == 1 and d["i64"].size == 8 and d["f64"].size == 8 and d["f8e4m3"].size == 1
    assert [x.code for x in d.values()] == list(range(len(d)))
    o = purlin.ops()
    assert {"sum", "max", "min"} <= set(o)
    assert lib.purlin_dtype_name(len(d)) is None
    assert lib.purlin_dtype_size(-1) == 0
    assert lib.purlin_redop_name(len(o)) is None


def test_unknown_dtype_and_op_are_clear_errors(lib):
    with pytest.raises(purlin.PurlinError) as e:
        _core.dtype_code("complex64")
    assert e.value.status == "Unsupported" and "bf16" in e.value.message
    with pytest.raises(purlin.PurlinError) as e:
        _core.op_code("xor")
    assert e.value.status == "Unsupported" and "sum" in e.value.message


def test_options_defaults_and_overrides(lib):
    o = purlin.default_options()
    assert o.checked == 0 and o.direct == 1 and o.wait_timeout_us > 0 and o.staging_half_bytes > 0
    o = purlin.default_options(checked=True, wait_timeout_us=5)
    assert o.checked == 1 and o.wait_timeout_us == 5
    with pytest.raises(TypeError, match="unknown communicator option 'chekced'"):
        purlin.default_options(chekced=1)


def test_unique_ids_are_fresh_and_well_formed(lib):
    a, b = purlin.get_unique_id(), purlin.get_unique_id()
    assert len(a) == _capi.UNIQUE_ID_BYTES and a != b
    text = a.rstrip(b"\0").decode()
    tag, path, cookie = text.split(" ")
    assert tag == "purlin-id-1" and path.startswith("@purlin-") and len(cookie) == 32


def test_damaged_unique_id_is_refused(lib):
    uid = bytearray(purlin.get_unique_id())
    uid[20] = ord(" ")  # splits the socket name: no longer the form purlin_get_unique_id writes
    with pytest.raises(purlin.PurlinError) as e:
        purlin.Comm.from_unique_id(bytes(uid), 0, 1, 0)
    assert e.value.status == "InvalidArgument" and "not one purlin_get_unique_id made" in e.value.message
    with pytest.raises(ValueError, match="128 bytes"):
        purlin.Comm.from_unique_id(b"short", 0, 1, 0)


def test_group_sizes_are_checked(lib):
    for bad in (0, -1, 9):
        with pytest.raises(purlin.PurlinError) as e:
            purlin.InProcessGroup(bad)
        assert e.value.status == "InvalidArgument" and "outside [1, 8]" in e.value.message
    purlin.InProcessGroup(2).close()


def test_null_handles_give_invalid_argument(lib):
    call = _capi.call
    assert call("purlin_comm_rank")(None) == -1
    assert call("purlin_comm_device")(None) == -1
    code = call("purlin_allReduce")(None, None, None, 4, 0, 0, None)
    assert _capi.status_name(code) == "InvalidArgument"
    with pytest.raises(purlin.PurlinError) as e:
        _capi.check(code)
    assert e.value.status == "InvalidArgument" and e.value.message
    code = call("purlin_comm_create_in_group")(None, 0, 0, None, ctypes.byref(ctypes.c_void_p()))
    assert _capi.status_name(code) == "InvalidArgument"
    assert "null group" in _capi.last_error()


def test_errors_are_per_thread(lib):
    """purlin_last_error is thread-local: another thread's failure does not
    replace this thread's message."""
    _capi.call("purlin_comm_abort")(None)
    mine = _capi.last_error()
    other = []

    def fail_elsewhere():
        _capi.call("purlin_group_create")(0, ctypes.byref(ctypes.c_void_p()))
        other.append(_capi.last_error())

    t = threading.Thread(target=fail_elsewhere)
    t.start()
    t.join()
    assert "outside [1, 8]" in other[0]
    assert _capi.last_error() == mine and "abort" in mine


def test_world_of_one_is_created_or_the_reason_is_given(lib):
    """With a GPU: a world of one rank is a communicator (rank 0 of 1);
    without one: a CudaError whose message says what CUDA said."""
    try:
        comm = purlin.Comm.from_unique_id(purlin.get_unique_id(), 0, 1, 0)
    except purlin.PurlinError as e:
        assert e.status == "CudaError", e
        assert "cuda" in e.message.lower()
        return
    try:
        assert (comm.rank, comm.size, comm.device) == (0, 1, 0)
        assert comm.async_error() is None
    finally:
        comm.destroy()
    with pytest.raises(purlin.PurlinError, match="destroyed"):
        comm.all_reduce(0, 0, 1, "f32", "sum", 0)


def test_library_needs_no_nccl_or_dynamic_cudart(lib):
    """libpurlin.so must not load a libnccl or libcudart of its own: a
    process (PyTorch) brings its own, and one soname cannot be two versions
    (loading ours first broke `import torch`: undefined ncclCommResume)."""
    import shutil
    import subprocess
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run([readelf, "-d", purlin.library_path()], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert needed, out
    assert not [n for n in needed if "nccl" in n or "cudart" in n], needed


def test_negative_device_is_refused(lib):
    with pytest.raises(purlin.PurlinError) as e:
        purlin.Comm.from_unique_id(purlin.get_unique_id(), 0, 1, -1)
    assert e.value.status == "InvalidArgument" and "negative device" in e.value.message


def test_collective_signatures_come_from_the_library_table(lib):
    # purlin_collective lists the runtime's collectives (collectives.def);
    # each C function's argtypes are built from its row, none listed here.
    table = _capi.collectives()
    assert set(table) == {"purlin_allGather", "purlin_reduceScatter", "purlin_allReduce", "purlin_allToAll",
                          "purlin_allGatherV", "purlin_reduceScatterV", "purlin_allToAllV", "purlin_broadcast",
                          "purlin_reduce", "purlin_scatter", "purlin_gather",
                          # the V collectives' forms with counts in device memory (docs/device-counts.md)
                          "purlin_allGatherVDevice", "purlin_reduceScatterVDevice", "purlin_allToAllVDevice"}
    ar, a2av, red, rsv = (table[n] for n in ("purlin_allReduce", "purlin_allToAllV", "purlin_reduce",
                                             "purlin_reduceScatterV"))
    assert (ar.sizes, ar.reduces, ar.rooted) == (0, 1, 0)
    assert (a2av.sizes, a2av.reduces, a2av.rooted) == (2, 0, 0)
    assert (red.sizes, red.reduces, red.rooted) == (0, 1, 1)
    assert (rsv.sizes, rsv.reduces, rsv.rooted) == (1, 1, 0)
    rsvd, a2avd = table["purlin_reduceScatterVDevice"], table["purlin_allToAllVDevice"]
    assert (rsvd.sizes, rsvd.reduces, rsvd.rooted) == (3, 1, 0)
    assert (a2avd.sizes, a2avd.reduces, a2avd.rooted) == (4, 0, 0)
    # comm, in, out, counts (device), maxCount, dtype, op, stream
    assert len(lib.purlin_reduceScatterVDevice.argtypes) == 8
    # comm, in, out, 4 count/displacement arrays, maxCount, dtype, stream
    assert len(lib.purlin_allToAllV.argtypes) == 10
    # comm, in, out, count, dtype, op, root, stream
    assert len(lib.purlin_reduce.argtypes) == 8
    assert lib.purlin_collective(len(table)) is None
    with pytest.raises(purlin.PurlinError):
        _capi.collective_signature(_capi.CollectiveInfo(b"purlin_x", 7, 0, 0))


def test_comm_methods_come_from_the_library_table(lib):
    # Comm's collective methods are the table's rows (snake case of the C
    # function); its arguments follow the row (sizes, op, root).
    from purlin import _core
    methods = _core._collective_functions()
    assert set(methods.values()) == set(_capi.collectives())
    assert methods["all_gather_v"] == "purlin_allGatherV" and methods["reduce"] == "purlin_reduce"
    assert methods["all_to_all_v"] == "purlin_allToAllV"
    assert methods["all_to_all_v_device"] == "purlin_allToAllVDevice"
    comm = purlin.Comm.__new__(purlin.Comm)  # no communicator: argument checks come first
    comm._handle, comm.rank, comm.size, comm.device = None, 0, 2, 0
    assert callable(comm.reduce_scatter_v)
    with pytest.raises(AttributeError):
        comm.all_to_some
    with pytest.raises(purlin.PurlinError, match="reduce takes 5 arguments after inp, out"):
        comm.reduce(0, 0, 4, "f32", "sum", 0)  # the root is missing
    with pytest.raises(purlin.PurlinError, match="counts has 3 entries; the world has 2"):
        comm.all_gather_v(0, 0, [1, 2, 3], "f32", 0)
    with pytest.raises(purlin.PurlinError, match="all_gather_v_device takes 4 arguments after inp, out"):
        comm.all_gather_v_device(0, 0, [1, 2], "f32", 0)  # a device address and max_count, not a list
    with pytest.raises(purlin.PurlinError, match="no collective purlin_nothing"):
        comm.collective("purlin_nothing", 0, 0, 1, "f32", 0)


def test_refuse_call_needs_a_handle(lib):
    """purlin_comm_refuse_call (a binding's own refusal, told to every rank) refuses a null handle."""
    assert _capi.call("purlin_comm_refuse_call")(None, None, 1, b"why") == 1
    assert "null handle" in _capi.last_error()


def _queues_after_import(env: dict, prelude: str = "") -> str:
    """CUDA_DEVICE_MAX_CONNECTIONS after `import purlin` in a fresh
    interpreter, and whether PURLIN_CUDA_STARTED_PID names that process."""
    import subprocess
    import sys
    code = prelude + ("import purlin, os; print(os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS'), "
                      "os.environ.get('PURLIN_CUDA_STARTED_PID') == str(os.getpid()))")
    pkg = os.path.join(os.path.dirname(__file__), "..")
    out = subprocess.run([sys.executable, "-c", code], env={**env, "PYTHONPATH": pkg}, capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_import_sets_the_device_queues_for_ranks_sharing_a_gpu():
    """docs/runtime.md "Hardware queues": 32 where unset or empty; the
    user's value kept; where torch has started CUDA already, 32 for the
    children and this process named as one that runs with CUDA's 8."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_DEVICE_MAX_CONNECTIONS", "PURLIN_CUDA_STARTED_PID")}
    assert _queues_after_import(env) == "32 False"
    assert _queues_after_import({**env, "CUDA_DEVICE_MAX_CONNECTIONS": ""}) == "32 False"
    assert _queues_after_import({**env, "CUDA_DEVICE_MAX_CONNECTIONS": "16"}) == "16 False"
    started = ("import sys, types; t = types.ModuleType('torch'); "
               "t.cuda = types.SimpleNamespace(is_initialized=lambda: True); sys.modules['torch'] = t; ")
    assert _queues_after_import(env, started) == "32 True"


def test_comm_from_env_reads_torchrun_variables(lib, monkeypatch):
    """docs/bootstrap.md "torchrun": RANK and WORLD_SIZE where purlin-launch's
    variables are absent; two nodes and a missing secret refused before any
    CUDA call; a world of one is a communicator (or, without a GPU, a
    CudaError)."""
    for v in ("PURLIN_RANK", "PURLIN_WORLD_SIZE", "PURLIN_BOOTSTRAP", "PURLIN_BOOTSTRAP_COOKIE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29511")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    with pytest.raises(purlin.PurlinError, match="PURLIN_BOOTSTRAP_COOKIE is not set") as e:
        purlin.Comm.from_env()
    assert e.value.status == "InvalidArgument"
    monkeypatch.setenv("PURLIN_BOOTSTRAP_COOKIE", "00112233445566778899aabbccddeeff")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    with pytest.raises(purlin.PurlinError, match="span several nodes") as e:
        purlin.Comm.from_env()
    assert e.value.status == "Unsupported"
    monkeypatch.setenv("WORLD_SIZE", "1")
    try:
        comm = purlin.Comm.from_env(0)
    except purlin.PurlinError as err:
        assert err.status == "CudaError", err
        return
    try:
        assert (comm.rank, comm.size) == (0, 1)
    finally:
        comm.destroy()


def test_fused_rms_norm_binding_has_its_c_signature(lib):
    """purlin_allReduceAddRmsNorm (the device API's example, in libpurlin.so):
    bound with its argtypes, so Python floats and ints convert; a NULL
    communicator is refused with the function's own message."""
    fn = _capi.fused_rms_norm()
    assert len(fn.argtypes) == 14
    assert fn.argtypes[7] is ctypes.c_float and fn.argtypes[10] is ctypes.c_float  # scale, eps
    assert fn.argtypes[8] is ctypes.c_size_t and fn.argtypes[9] is ctypes.c_size_t  # tokens, hidden
    code = fn(None, 0, 0, 0, 0, 0, 0, 1.0, 1, 8, 1e-6, None, 0, None)
    assert _capi.status_name(code) == "InvalidArgument"
    assert "communicator is NULL" in _capi.last_error()
