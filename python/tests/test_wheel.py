"""`pip wheel ./python` (issue 36 item 4): a platform wheel (py3-none-
<platform>) that carries libpurlin.so, built through the package's own
build backend (python/build_backend/purlin_build.py) from the build's
library; installed into an empty directory, `import purlin` loads the
library from inside the package. Skipped, with the reason, where pip,
setuptools or wheel is missing (scripts/install-deps.sh installs them)."""
import importlib.util
import os
import subprocess
import sys
import zipfile

import pytest

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _need(module):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed for {sys.executable} (scripts/install-deps.sh installs it)")


def test_platform_wheel_carries_the_library(lib, tmp_path):
    for module in ("pip", "setuptools", "wheel"):
        _need(module)
    from purlin import _capi
    built = os.path.abspath(_capi.library_path())
    staged = os.path.join(PYTHON_DIR, "purlin", "libpurlin.so")
    before = os.path.exists(staged) and os.path.getmtime(staged)
    env = dict(os.environ, PURLIN_WHEEL_LIBRARY=built)
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
                        "-w", str(tmp_path / "dist"), PYTHON_DIR], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-4000:]
    wheels = os.listdir(tmp_path / "dist")
    assert len(wheels) == 1, wheels
    name = wheels[0]
    assert name.startswith("purlin-") and name.endswith(".whl") and "-py3-none-linux_" in name, name
    with zipfile.ZipFile(tmp_path / "dist" / name) as z:
        libs = [n for n in z.namelist() if n.endswith("purlin/libpurlin.so")]
        assert len(libs) == 1, z.namelist()
        assert z.getinfo(libs[0]).file_size > 1 << 20
        assert any(n.endswith("purlin/distributed.py") for n in z.namelist())
        wheel_meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))).decode()
        assert "Root-Is-Purelib: false" in wheel_meta, wheel_meta
        z.extractall(tmp_path / "unpacked")
    # the package's files sit under purlin-<v>.data/purelib/ in the archive; pip puts them in site-packages
    site = tmp_path / "site"
    purelib = next((tmp_path / "unpacked").glob("purlin-*.data/purelib"))
    purelib.rename(site)
    env = {k: v for k, v in os.environ.items() if k not in ("PURLIN_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    q = subprocess.run([sys.executable, "-c", "import purlin; print(purlin.library_path()); print(purlin.version())"],
                       env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=60)
    assert q.returncode == 0, q.stdout
    where, version = q.stdout.split()[:2]
    assert where == str(site / "purlin" / "libpurlin.so"), q.stdout
    assert version
    # the checkout is left as it was (a library `make python` put there comes back)
    assert (os.path.exists(staged) and os.path.getmtime(staged)) == before
