"""Build glue for the native confinement module (sandbox/confine.c).

Everything else lives in pyproject.toml. The extension is mandatory: a sandbox that
silently runs unconfined would be worse than none, so a failed build stops the
install with a message that names what to install.
"""

import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

try:  # setuptools >= 59 vendors distutils' errors here
    from setuptools.errors import CCompilerError, CompileError, ExecError, PlatformError
except ImportError:  # pragma: no cover - very old setuptools
    from distutils.errors import CCompilerError, CompileError, DistutilsExecError as ExecError, DistutilsPlatformError as PlatformError

_HELP = """
pairbench_async: building the sandbox's native module (sandbox/confine.c) failed.

It needs a C compiler and the Python development headers. On Debian or Ubuntu:
    apt-get install gcc python3-dev
On Fedora:
    dnf install gcc python3-devel
Then run the install again.
"""


class BuildConfine(build_ext):
    """build_ext that turns a compiler failure into an actionable message."""

    def run(self):
        try:
            super().run()
        except (CCompilerError, CompileError, ExecError, PlatformError, OSError) as exc:
            sys.stderr.write(_HELP)
            raise SystemExit(f"error: {exc}") from exc

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except (CCompilerError, CompileError, ExecError, PlatformError, OSError) as exc:
            sys.stderr.write(_HELP)
            raise SystemExit(f"error: {exc}") from exc


class BuildPyWithFixtures(build_py):
    """Ship the bundled fixtures inside the package of a regular (non-editable) install."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "pairbench_async" / "fixtures"
        target.mkdir(parents=True, exist_ok=True)
        for name in ("stdio.jsonl", "call.jsonl"):
            shutil.copyfile(Path("fixtures") / name, target / name)


if not sys.platform.startswith("linux"):
    raise SystemExit("pairbench_async's sandbox needs Linux (seccomp, namespaces, Landlock).")

setup(
    ext_modules=[
        Extension(
            "pairbench_async.sandbox.native",
            sources=["sandbox/confine.c"],
            depends=["sandbox/allowlist.h"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wstrict-prototypes", "-Wno-missing-field-initializers"],
        )
    ],
    cmdclass={"build_ext": BuildConfine, "build_py": BuildPyWithFixtures},
)
