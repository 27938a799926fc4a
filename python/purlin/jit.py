"""purlin.jit: a user's collective declarations (.pl), built at run time.

    lib = purlin.jit.load("using myGather = SNAC<Atom, Policy, copy, packed, scattered>;")
    lib.my_gather(comm, inp, out, count, "bf16", stream)

load() runs purlinc (the declarations and the policy into CUDA) and nvcc
(the kernel units in parallel, linked against the loaded libpurlin.so),
caches the library by a hash of everything that went into it, loads it
and returns a Library whose methods are the declarations' C functions
(purlin_myGather -> my_gather), taking what purlin.Comm's methods take.
purlinc's diagnostics become the PurlinError's message. One build per
cache entry per node: concurrent loads (every rank of a job at once) wait
on a file lock, and all but the first find the library built.

Where things are found (first match wins):
- purlinc: $PURLINC; purlin/bin/purlinc beside this package; the
  repository's build/bin/purlinc; PATH;
- nvcc: $NVCC; $CUDA_HOME/bin/nvcc; /usr/local/cuda/bin/nvcc; PATH;
- the runtime headers: $PURLIN_INCLUDE; purlin/include beside this
  package; the repository's runtime/include;
- the cache: $PURLIN_JIT_CACHE; $XDG_CACHE_HOME/purlin/jit; ~/.cache/purlin/jit.
"""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Optional, Union

from . import _capi
from ._capi import PurlinError

__all__ = ["load", "Library", "cache_dir", "API_FORMAT"]

#: The format of purlinc --emit=api this module reads (codegen/EmitApi.h).
API_FORMAT = "purlin-api-1"

#: The architectures purlinc has policies for (purlinc --arch).
_PURLINC_ARCHS = {8: "sm_80", 9: "sm_90", 10: "sm_100"}

#: The C parameter types of a generated collective function, as ctypes.
_C_TYPES = {
    "purlin_comm_t": ctypes.c_void_p, "const void *": ctypes.c_void_p, "void *": ctypes.c_void_p,
    "size_t": ctypes.c_size_t, "const size_t *": ctypes.POINTER(ctypes.c_size_t), "purlin_dtype_t": ctypes.c_int,
    "purlin_redop_t": ctypes.c_int, "int": ctypes.c_int, "cudaStream_t": ctypes.c_void_p,
}

_REPO = Path(__file__).resolve().parent.parent.parent  # a checkout: python/purlin/jit.py
_HERE = Path(__file__).resolve().parent


def _compile_error(message: str) -> PurlinError:
    return PurlinError("CompileError", -1, message)


def _find_tool(env: str, candidates: list, name: str, what: str) -> str:
    value = os.environ.get(env)
    if value:
        if not os.access(value, os.X_OK):
            raise _compile_error(f"${env}={value} is not an executable {what}")
        return value
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which(name)
    if found:
        return found
    raise _compile_error(f"{what} not found (set ${env}; looked in " + ", ".join(str(c) for c in candidates if c)
                         + " and PATH)")


def _purlinc() -> str:
    return _find_tool("PURLINC", [_HERE / "bin" / "purlinc", _REPO / "build" / "bin" / "purlinc"], "purlinc",
                      "purlinc (the Purlin compiler)")


def _nvcc() -> str:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    return _find_tool("NVCC", [Path(home) / "bin" / "nvcc" if home else None, Path("/usr/local/cuda/bin/nvcc")],
                      "nvcc", "nvcc (the CUDA compiler)")


def _include_dir() -> str:
    env = os.environ.get("PURLIN_INCLUDE")
    for c in ([env] if env else []) + [str(_HERE / "include"), str(_REPO / "runtime" / "include")]:
        if c and os.path.isfile(os.path.join(c, "purlin", "purlin.h")):
            return c
    raise _compile_error("Purlin's runtime headers (purlin/purlin.h) not found: set $PURLIN_INCLUDE")


def cache_dir() -> Path:
    """Where built libraries are kept (one folder per cache key)."""
    env = os.environ.get("PURLIN_JIT_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "purlin" / "jit"


def _device_arch(device: int) -> tuple:
    """(major, minor) of CUDA device `device`, from the driver (cuInit
    creates no context)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        raise _compile_error("arch='auto' needs the CUDA driver (libcuda.so.1), which is not loadable here; "
                             "pass arch='sm_90' (or sm_80, sm_100)") from None
    dev = ctypes.c_int()
    major, minor = ctypes.c_int(), ctypes.c_int()
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGet(ctypes.byref(dev), int(device)) != 0 or \
            cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) != 0 or \
            cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) != 0:
        raise _compile_error("arch='auto': no CUDA device answered; pass arch='sm_90' (or sm_80, sm_100)")
    return major.value, minor.value


def _current_device() -> int:
    """torch's current device where torch has started CUDA, else 0."""
    import sys
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return int(torch.cuda.current_device())
    except Exception:  # a torch without CUDA
        pass
    return 0


def _arches(arch: str, device: Optional[int] = None) -> tuple:
    """(purlinc's --arch, nvcc's sm_XY) for `arch`: "auto" (the architecture
    of `device`, else of the current device) or "sm_XY"."""
    if arch == "auto":
        major, minor = _device_arch(_current_device() if device is None else device)
    else:
        m = re.fullmatch(r"sm_(\d+)(\d)", arch or "")
        if not m:
            raise PurlinError("InvalidArgument", 1, f"arch {arch!r}: expected 'auto' or 'sm_XY' (e.g. 'sm_90')")
        major, minor = int(m.group(1)), int(m.group(2))
    family = _PURLINC_ARCHS.get(major)
    if family is None:
        raise PurlinError("Unsupported", 2, f"arch sm_{major}{minor}: purlinc has policies for "
                          + ", ".join(_PURLINC_ARCHS.values()) + " only")
    return family, f"sm_{major}{minor}"


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def _libpurlin_file() -> str:
    """The file of the loaded libpurlin.so (dladdr on one of its functions:
    $PURLIN_LIBRARY or the loader may have named it relatively or bare)."""
    fn = _capi.load().purlin_version
    info = _DlInfo()
    libc = ctypes.CDLL(None)
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    if libc.dladdr(ctypes.cast(fn, ctypes.c_void_p), ctypes.byref(info)) and info.dli_fname:
        path = os.path.realpath(info.dli_fname.decode())
        if os.path.isfile(path):
            return path
    raise _compile_error("cannot find the file of the loaded libpurlin.so (dladdr)")


def _identity(path: str) -> str:
    st = os.stat(path)
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"


def _headers_identity(include: str) -> str:
    h = hashlib.sha256()
    for root, _, files in sorted(os.walk(include)):
        for f in sorted(files):
            h.update(_identity(os.path.join(root, f)).encode())
    return h.hexdigest()


def _run(cmd: list, what: str, cwd: Optional[str] = None) -> str:
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise _compile_error(f"{what} could not run ({cmd[0]}): {e}") from None
    if p.returncode != 0:
        text = (p.stderr or p.stdout).strip()
        raise _compile_error(f"{what} failed (exit {p.returncode}):\n{text}")
    return p.stdout


def _stem(name: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_]", "_", name) or "collectives"
    return stem if not stem[0].isdigit() else "c_" + stem


class Library:
    """A loaded purlin.jit library: `path` (the .so), `key` (its cache key),
    `api` (purlinc's --emit=api document) and one method per declared
    collective, named after its C function in snake case (purlin_myGather
    -> my_gather), taking (comm, inp, out, <sizes>, dtype, [op], [root],
    stream) as purlin.Comm's methods do. Pointers and streams are ints; a
    torch tensor may stand for a pointer (its data_ptr()) and a torch
    dtype for a dtype name."""

    def __init__(self, path: str, key: str, api: dict):
        self.path, self.key, self.api = path, key, api
        self._lib = ctypes.CDLL(path)
        self._functions: Dict[str, tuple] = {}
        from ._core import _method_name
        for c in api["collectives"]:
            info = _capi.CollectiveInfo(c["function"].encode(), int(c["sizes"]), int(bool(c["reduces"])),
                                        int(bool(c["rooted"])))
            argtypes = _capi.collective_signature(info)
            declared = []
            for p in c["params"]:
                if p["c_type"] not in _C_TYPES:
                    raise _compile_error(f"{c['function']}: parameter {p['name']} of C type {p['c_type']!r}, "
                                         "which purlin.jit does not know (a newer purlinc?)")
                # A device-count form's count arrays are device addresses (docs/device-counts.md).
                device_array = _capi.is_device_form(info.sizes) and p["c_type"] == "const size_t *"
                declared.append(ctypes.c_void_p if device_array else _C_TYPES[p["c_type"]])
            if [getattr(t, "__name__", str(t)) for t in declared] != [getattr(t, "__name__", str(t)) for t in argtypes]:
                raise _compile_error(f"{c['function']}: purlinc's parameters {[p['c_type'] for p in c['params']]} "
                                     "differ from the C ABI's rule (purlin.h purlin_collective_t)")
            try:
                fn = getattr(self._lib, c["function"])
            except AttributeError:
                raise _compile_error(f"{path} lacks {c['function']}, which its API document names") from None
            fn.restype = ctypes.c_int
            fn.argtypes = argtypes
            self._functions[_method_name(c["function"])] = (c["function"], info, fn)

    @property
    def collectives(self) -> Dict[str, str]:
        """Method name -> C function, for every collective of the library."""
        return {m: f for m, (f, _, _) in self._functions.items()}

    def preload(self, device: int = -1) -> None:
        """Loads this library's kernels on `device` (-1: the current one).
        Communicators created after load() do it themselves; call it on
        every rank before the first call where a communicator already
        existed and ranks share a process (purlin_preload_kernels)."""
        _capi.check(_capi.call("purlin_preload_kernels")(int(device)))

    def call(self, method: str, comm, inp, out, *args) -> None:
        if method not in self._functions:
            raise PurlinError("InvalidArgument", 1, f"the library has no collective {method!r} (it has "
                              + ", ".join(sorted(self._functions)) + ")")
        function, info, fn = self._functions[method]
        comm = getattr(comm, "_comm", comm)  # purlin.torch.Communicator holds a purlin.Comm
        args = list(args)
        if args and not isinstance(args[-1], int) and args[-1] is not None and hasattr(args[-1], "cuda_stream"):
            args[-1] = args[-1].cuda_stream  # a torch.cuda.Stream
        if args and args[-1] is None:
            import torch
            args[-1] = torch.cuda.current_stream(comm.device).cuda_stream
        dtype_at = _capi.size_arg_count(info.sizes)
        if len(args) > dtype_at and not isinstance(args[dtype_at], str):
            from ._tensors import purlin_dtype_name
            args[dtype_at] = purlin_dtype_name(args[dtype_at])
        ptr = lambda x: x.data_ptr() if hasattr(x, "data_ptr") else int(x)
        comm.call_c(fn, function, info, ptr(inp), ptr(out), *args)

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self.__dict__.get("_functions", {}):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return lambda comm, inp, out, *args: self.call(name, comm, inp, out, *args)


def _policy_text(policy: Any) -> Optional[str]:
    if policy is None:
        return None
    if isinstance(policy, dict):
        return json.dumps(policy, sort_keys=True)
    if isinstance(policy, os.PathLike) or (isinstance(policy, str) and os.path.isfile(policy)):
        return Path(policy).read_text()
    if isinstance(policy, str) and policy.lstrip().startswith("{"):
        return policy
    raise PurlinError("InvalidArgument", 1, f"policy {policy!r}: expected None, a dict, JSON text or a file")


def _source_path(source: Union[str, os.PathLike], name: Optional[str], root: Path) -> tuple:
    """(path to compile, stem): a file as it is (its #includes resolve
    beside it); text written once under the cache, named by its hash."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and os.path.isfile(source)):
        path = Path(source)
        if not path.is_file():
            raise PurlinError("InvalidArgument", 1, f"{source}: no such .pl file")
        return str(path.resolve()), _stem(name or path.stem)
    if isinstance(source, str) and "\n" not in source and source.rstrip().endswith(".pl"):
        raise PurlinError("InvalidArgument", 1, f"{source}: no such .pl file")
    if not isinstance(source, str):
        raise PurlinError("InvalidArgument", 1, "source: expected .pl text or a path")
    text_dir = root / "sources"
    text_dir.mkdir(parents=True, exist_ok=True)
    path = text_dir / (hashlib.sha256(source.encode()).hexdigest()[:32] + ".pl")
    if not path.is_file() or path.read_text() != source:
        fd, tmp = tempfile.mkstemp(dir=text_dir, suffix=".tmp")  # ranks as threads write at once
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    return str(path), _stem(name or "jit_collectives")


def load(source: Union[str, os.PathLike], policy: Any = None, arch: str = "auto", *, name: Optional[str] = None,
         device: Optional[int] = None, verbose: bool = False) -> Library:
    """Builds (or finds in the cache) and loads the collectives declared in
    `source` (a .pl path, or the declarations' text) under `policy` (None:
    purlinc's built-in policies of the architecture; a dict, JSON text or a
    file), for `arch` ("auto": the current device's; or "sm_90", ...).
    `device`: also load the kernels on that device (Library.preload).
    Raises PurlinError: "CompileError" with purlinc's diagnostics or the
    compiler's output, "InvalidArgument" or "Unsupported" for the arguments."""
    lib_purlin = _libpurlin_file()
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    src, stem = _source_path(source, name, root)
    policy_text = _policy_text(policy)
    family, sm = _arches(arch, device)
    purlinc, include = _purlinc(), _include_dir()
    key = _cache_key(src, stem, policy_text, family, sm, purlinc, include, lib_purlin)
    entry = root / key
    so = entry / f"lib{stem}.so"
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per node; the others wait and find it built
        if not (entry / "complete").is_file():
            _build(src, stem, policy_text, family, sm, purlinc, include, lib_purlin, root, entry, verbose)
    api = json.loads((entry / "api.json").read_text())
    if api.get("format") != API_FORMAT:
        raise _compile_error(f"{entry / 'api.json'}: format {api.get('format')!r}, expected {API_FORMAT!r}")
    library = Library(str(so), key, api)
    if device is not None:
        library.preload(device)
    return library


def _compile_flags(sm: str, include: str) -> list:
    """nvcc's flags for one kernel unit (the generated files include each
    other with quotes, so their folder needs no -I)."""
    return ["-O3", "-DNDEBUG", "-std=c++20", "-Xcompiler=-fPIC",
            f"--generate-code=arch=compute_{sm[3:]},code=[compute_{sm[3:]},{sm}]", f"-I{include}"]


def _cache_key(src, stem, policy_text, family, sm, purlinc, include, lib_purlin) -> str:
    """What the library depends on: the declarations as purlinc reads them
    (its AST: includes resolved), the policy, the architectures, the build
    recipe (flags, nvcc's environment) and the tools' and libpurlin's
    identities (path, size, mtime)."""
    ast = _run([purlinc, src, "--emit=ast", f"--arch={family}"], "purlinc")
    recipe = " ".join(_compile_flags(sm, include)) + "|-Bsymbolic --exclude-libs,ALL|" + \
        os.environ.get("NVCC_PREPEND_FLAGS", "") + "|" + os.environ.get("NVCC_APPEND_FLAGS", "")
    h = hashlib.sha256()
    for part in (API_FORMAT, ast, policy_text or "", family, sm, stem, recipe, _identity(purlinc),
                 _identity(lib_purlin), _headers_identity(include), _identity(_nvcc())):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _build(src, stem, policy_text, family, sm, purlinc, include, lib_purlin, root, entry, verbose) -> None:
    start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=f"build-{entry.name}-", dir=root))
    try:
        args = [f"--arch={family}"]
        if policy_text is not None:
            (work / "policy.json").write_text(policy_text)
            args.append(f"--policy={work / 'policy.json'}")
        cu = work / f"{stem}.cu"
        _run([purlinc, src, "--emit=cuda", *args, "-o", str(cu)], "purlinc")
        _run([purlinc, src, "--emit=api", *args, "-o", str(work / "api.json")], "purlinc --emit=api")
        units = sorted(work.glob(f"{stem}*.cu"))
        nvcc = _nvcc()
        flags = _compile_flags(sm, include)
        jobs = max(1, min(len(units), os.cpu_count() or 1))
        with ThreadPoolExecutor(jobs) as pool:
            outs = list(pool.map(lambda u: _run([nvcc, *flags, "-c", str(u), "-o", str(u) + ".o"], f"nvcc {u.name}"),
                                 units))
        del outs
        lib_dir = os.path.dirname(os.path.realpath(lib_purlin))
        # The library binds its own symbols first (-Bsymbolic: a declaration
        # named like one of libpurlin.so's), keeps its static CUDA runtime
        # private (--exclude-libs) and finds libpurlin.so where it was loaded.
        _run([nvcc, "-shared", "-o", str(work / f"lib{stem}.so"), *[str(u) + ".o" for u in units],
              os.path.realpath(lib_purlin), "-Xlinker", "-Bsymbolic", "-Xlinker", "--exclude-libs,ALL",
              "-Xlinker", f"-rpath={lib_dir}"], "linking")
        for o in work.glob("*.o"):
            o.unlink()
        (work / "build.json").write_text(json.dumps({"source": src, "arch": sm, "purlinc_arch": family,
                                                     "seconds": round(time.monotonic() - start, 2)}))
        (work / "complete").write_text("")
        if entry.exists():  # an incomplete entry left by a killed build
            shutil.rmtree(entry)
        os.replace(work, entry)
        if verbose:
            print(f"purlin.jit: built {entry / f'lib{stem}.so'} in {time.monotonic() - start:.1f} s")
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
