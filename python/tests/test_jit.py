"""purlin.jit without a GPU: purlinc's diagnostics as the Python error, the
arguments refused, one build shared by concurrent loads (a file lock) and
the cache found again; the built library's collectives and signatures.
Needs purlinc and nvcc (skipped, with the reason, where either is missing:
`make test` has both). The GPU half is test_gpu.py::test_jit_all_gather."""
import ctypes
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

import purlin
from purlin import jit

GATHER = "using myGather = SNAC<Atom, Policy, copy, packed, scattered>;\n"


def _tools_or_skip():
    try:
        return jit._purlinc(), jit._nvcc()
    except purlin.PurlinError as e:
        pytest.skip(f"purlin.jit needs purlinc and nvcc: {e}")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PURLIN_JIT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_diagnostics_are_the_error(lib, cache):
    _tools_or_skip()
    with pytest.raises(purlin.PurlinError) as e:
        jit.load("using bad = SNAC<Atom, Policy, copy, packed, sideways>;\n", arch="sm_90")
    assert e.value.status == "CompileError"
    assert "sideways" in e.value.message and "error" in e.value.message


def test_policy_errors_are_the_error(lib, cache):
    _tools_or_skip()
    with pytest.raises(purlin.PurlinError) as e:
        jit.load(GATHER, policy={"policies": {"Policy": {"latency": {"ctas": "many"}}}}, arch="sm_90")
    assert e.value.status == "CompileError" and "ctas" in e.value.message
    assert not any(p.name.startswith("build-") for p in cache.iterdir()), "a failed build left its folder"


def test_arguments_refused(lib, cache, tmp_path):
    _tools_or_skip()
    with pytest.raises(purlin.PurlinError) as e:
        jit.load(GATHER, arch="sm_75")
    assert e.value.status == "Unsupported" and "sm_80" in e.value.message
    with pytest.raises(purlin.PurlinError) as e:
        jit.load(GATHER, arch="hopper")
    assert e.value.status == "InvalidArgument"
    with pytest.raises(purlin.PurlinError) as e:
        jit.load(str(tmp_path / "missing.pl"), arch="sm_90")
    assert e.value.status == "InvalidArgument" and "missing.pl" in e.value.message
    with pytest.raises(purlin.PurlinError) as e:
        jit.load(GATHER, policy=42, arch="sm_90")
    assert e.value.status == "InvalidArgument"


LOADER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {python!r})
    from purlin import jit
    t = time.monotonic()
    lib = jit.load({source!r}, arch="sm_90", name="gather", verbose=True)
    print("key", lib.key, "collectives", sorted(lib.collectives.items()), "seconds", time.monotonic() - t)
""")


def test_one_build_for_concurrent_loads_then_cached(lib, cache):
    _tools_or_skip()
    python_dir = os.path.join(os.path.dirname(__file__), "..")
    code = LOADER.format(python=python_dir, source=GATHER)
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    built = sum(out.count("purlin.jit: built") for out, _ in outs)
    assert built == 1, [o for o, _ in outs]
    keys = {line.split()[1] for out, _ in outs for line in out.splitlines() if line.startswith("key ")}
    assert len(keys) == 1
    key = keys.pop()
    entry = cache / key
    assert (entry / "complete").is_file() and (entry / "libgather.so").is_file()
    assert not list(entry.glob("*.o")), "object files kept in the cache"
    # Warm: found again, no build, in under a second.
    stamp = (entry / "build.json").stat().st_mtime_ns
    warm = []
    for _ in range(2):  # the faster of two: a 2-core machine may be busy
        t = time.monotonic()
        library = jit.load(GATHER, arch="sm_90", name="gather")
        warm.append(time.monotonic() - t)
    assert min(warm) < 1.0, warm
    assert library.key == key and (entry / "build.json").stat().st_mtime_ns == stamp
    # The declaration's C function, its signature from purlinc's API document.
    assert library.collectives == {"my_gather": "purlin_myGather"}
    api = json.loads((entry / "api.json").read_text())
    assert [p["c_type"] for p in api["collectives"][0]["params"]] == [
        "purlin_comm_t", "const void *", "void *", "size_t", "purlin_dtype_t", "cudaStream_t"]
    fn = library._functions["my_gather"][2]
    assert fn.argtypes == [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                           ctypes.c_void_p]
    # The library needs the libpurlin.so it was built against, by soname.
    needed = subprocess.run(["readelf", "-d", library.path], stdout=subprocess.PIPE, text=True).stdout
    assert "[libpurlin.so]" in needed
    with pytest.raises(AttributeError):
        library.all_reduce


def test_cache_key_follows_every_input(lib, cache, tmp_path):
    """The key changes with the declarations, the policy, the architecture,
    the name and the build recipe."""
    purlinc, _ = _tools_or_skip()
    include, lib_file = jit._include_dir(), jit._libpurlin_file()
    assert os.path.isabs(lib_file) and os.path.isfile(lib_file)

    def key(source=GATHER, policy=None, arch="sm_90", name="gather"):
        src, stem = jit._source_path(source, name, cache)
        family, sm = jit._arches(arch)
        return jit._cache_key(src, stem, jit._policy_text(policy), family, sm, purlinc, include, lib_file)

    base = key()
    assert key() == base
    assert key(source="using myGather = SNAC<Atom, Policy, copy, packed, scattered>;\n"
                      "using myA2A = SNAC<Atom, Policy, copy, scattered, transposed>;\n") != base
    assert key(policy={"policies": {}}) != base
    assert key(arch="sm_80") != base
    assert key(name="other") != base
    os.environ["NVCC_APPEND_FLAGS"] = "-lineinfo"
    try:
        assert key() != base
    finally:
        del os.environ["NVCC_APPEND_FLAGS"]
    # A file source: its includes resolve beside it; a missing one is refused.
    f = tmp_path / "mine.pl"
    f.write_text(GATHER)
    assert jit._source_path(str(f), None, cache) == (str(f.resolve()), "mine")
    with pytest.raises(purlin.PurlinError):
        jit._source_path(str(tmp_path / "nope.pl"), None, cache)


def test_a_v_collective_library_loads_with_its_device_form(lib, tmp_path):
    # purlinc's API document of a V collective lists its form with the counts
    # in device memory (docs/device-counts.md, sizes 3 / 4): purlin.jit takes
    # their count arrays as device addresses. The library is libpurlin.so,
    # which has the generated allGatherV and allToAllV functions of dsl_examples/.
    purlinc, _ = _tools_or_skip()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for stem in ("allgatherv", "alltoallv"):
        out = tmp_path / f"{stem}.json"
        subprocess.run([purlinc, os.path.join(repo, "dsl_examples", f"{stem}.pl"), "--emit=api", "-o", str(out)],
                       check=True)
        api = json.loads(out.read_text())
        loaded = jit.Library(lib._name, "test", api)
        device = {"allgatherv": "all_gather_v_device", "alltoallv": "all_to_all_v_device"}[stem]
        assert device in loaded.collectives
        _, info, fn = loaded._functions[device]
        assert info.sizes == (3 if stem == "allgatherv" else 4)
        assert fn.argtypes[3] is ctypes.c_void_p  # the counts: a device address
