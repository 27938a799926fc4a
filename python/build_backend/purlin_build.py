"""PEP 517 build backend of the purlin wheel: setuptools' hooks, with
libpurlin.so put inside the package before the wheel is built, so that
`pip install ./python` (or `pip wheel ./python`) gives a platform wheel
that carries the library.

Where the library comes from, first match wins:
1. $PURLIN_WHEEL_LIBRARY: a built libpurlin.so (e.g. build/lib/libpurlin.so);
2. python/purlin/libpurlin.so already there (`make python` copies it);
3. a CMake build of the repository around python/ (the target
   purlin_shared, tests off) in $PURLIN_WHEEL_BUILD_DIR or build-wheel/:
   it needs what the project's build needs (README "Requirements").
A library staged here is removed again after the wheel is built, so the
source tree is left as it was.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (get_requires_for_build_sdist, get_requires_for_build_wheel,  # noqa: F401
                                   prepare_metadata_for_build_wheel)
from setuptools.build_meta import build_sdist  # noqa: F401

PACKAGE = Path(__file__).resolve().parent.parent / "purlin"
REPO = PACKAGE.parent.parent


def _say(text: str) -> None:
    print(f"purlin wheel: {text}", file=sys.stderr, flush=True)


def _cmake_build() -> Path:
    if not (REPO / "CMakeLists.txt").is_file() or not (REPO / "generated").is_dir():
        raise RuntimeError(f"purlin wheel: no libpurlin.so to package: set PURLIN_WHEEL_LIBRARY to a built one, or "
                           f"build from the repository checkout ({REPO} is not one)")
    build = Path(os.environ.get("PURLIN_WHEEL_BUILD_DIR") or REPO / "build-wheel")
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(REPO), "-B", str(build), *gen, "-DCMAKE_BUILD_TYPE=Release",
                 "-DPURLIN_BUILD_TESTS=OFF"]
    _say("building libpurlin.so with CMake (minutes: purlinc, then nvcc on the generated collectives): "
         + " ".join(configure))
    subprocess.run(configure, check=True)
    subprocess.run(["cmake", "--build", str(build), "--target", "purlin_shared", "-j", str(os.cpu_count() or 2)],
                   check=True)
    return build / "lib" / "libpurlin.so"


def _stage_library():
    """Puts libpurlin.so into the package; returns how to undo that."""
    target = PACKAGE / "libpurlin.so"
    given = os.environ.get("PURLIN_WHEEL_LIBRARY")
    if given:
        source = Path(given)
        if not source.is_absolute() and not source.is_file():
            source = REPO / given  # pip runs this hook in python/: a path relative to the checkout
        if not source.is_file():
            raise RuntimeError(f"purlin wheel: PURLIN_WHEEL_LIBRARY={given}: no such file (relative paths are "
                               f"taken from {Path.cwd()} or {REPO})")
    elif target.is_file():
        _say(f"packaging {target} (already in the package)")
        return lambda: None
    else:
        source = _cmake_build()
    _say(f"packaging {source}")
    kept = target.with_name("libpurlin.so.kept")

    def undo():
        target.unlink(missing_ok=True)
        if kept.exists():
            kept.rename(target)
    if target.exists():
        target.rename(kept)  # `make python`'s copy comes back afterwards
    try:
        shutil.copyfile(source, target)
        if shutil.which("strip"):  # symbols for debugging stay in the build tree's copy
            subprocess.run(["strip", "--strip-unneeded", str(target)], check=True)
    except BaseException:
        undo()
        raise
    return undo


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    undo = _stage_library()
    try:
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    finally:
        undo()
