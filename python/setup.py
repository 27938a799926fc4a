"""The wheel is platform-specific (it carries libpurlin.so) but not tied to
a Python version or ABI (the package loads the library with ctypes): tag
py3-none-<platform>. Everything else is in pyproject.toml."""
from setuptools import setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70
except ImportError:
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"bdist_wheel": PlatformWheel})
