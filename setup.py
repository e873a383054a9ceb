"""Build script: everything is declared in pyproject.toml; this file only adds the compiled reader.

The transcript reader (properties/transcript.py) is compiled with mypyc when the project is
built (``pip install -e .``, ``pip install .``, wheels), so that ``acp-model check`` spends less
time outside the JSON parser. The source is unchanged and stays the reference:
``properties/native.py`` loads it instead of the compiled module unless the build record says
that this very source was compiled into these very files.

The compilation is optional. Set ACP_MODEL_PURE_PYTHON=1 at build time to skip it; where it
fails (no C compiler, no Python headers, a type error mypyc refuses) the build goes on with a
warning and the project runs on its Python source (tests/test_native.py fails on a failed
compilation, so CI does not lose the compiled reader unnoticed).

Every build that compiles or skips writes the record, ``properties/_native_build.py``, where the
extension modules go (the source tree for editable and in-place builds, the build directory and
so the wheel otherwise): the outcome, each compiled source's length and CRC-32, and each
extension file's size. A build that does not compile removes the extension files an earlier
build left there. The record is generated, never copied from the source tree (build_py leaves
it out) and not in git. The C code is generated only for commands that build (not for metadata
or sdists).
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import zlib
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

COMPILED = ("properties/transcript.py",)
"""Sources compiled with mypyc (paths relative to this file)."""

RECORD = "_native_build"
"""The build record's module name in the ``properties`` package."""

PURE_ENV = "ACP_MODEL_PURE_PYTHON"

BUILDING = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install", "bdist_egg"}
"""Commands that build extensions; for any other (egg_info, dist_info, sdist) nothing is generated."""

ROOT = Path(__file__).resolve().parent


def _digest(path: Path) -> str:
    """The same as ``properties.native.source_digest`` (tests/test_native.py compares them)."""
    data = path.read_bytes()
    return f"{len(data)}-{zlib.crc32(data):08x}"


def _record_text(outcome: str, sources: dict[str, str], files: dict[str, int]) -> str:
    return "\n".join(
        [
            '"""Written by setup.py: what its last build compiled with mypyc (see properties/native.py)."""',
            "",
            f"OUTCOME = {outcome!r}",
            f"SOURCES = {sources!r}",
            f"FILES = {files!r}",
            "",
        ]
    )


class OptionalMypycBuild(build_ext):
    """Compile COMPILED with mypyc; on any failure, warn and leave a pure-Python build."""

    _digests: dict[str, str] = {}  # noqa: RUF012 (set per build in _generate)
    _outcome = "skipped: not a build command"
    _building = False  # (a command that builds runs; set in finalize_options)

    def finalize_options(self) -> None:
        self._building = bool(BUILDING & set(self.distribution.commands))
        if self._building:
            # The extensions must be in place before setuptools finalizes them. Without them
            # the placeholder stays, so that run() is still called (and writes the record).
            self.distribution.ext_modules = self._generate() or self.distribution.ext_modules
        super().finalize_options()

    def _generate(self) -> list[Extension]:
        if os.environ.get(PURE_ENV):
            self._outcome = f"skipped: {PURE_ENV} is set"
            return []
        old = os.getcwd()
        try:
            from mypyc.build import mypycify

            os.chdir(ROOT)
            # digests of the sources as compiled (read before the C code is generated)
            self._digests = {Path(source).stem: _digest(ROOT / source) for source in COMPILED}
            extensions = list(mypycify(list(COMPILED), opt_level="3", debug_level="0"))
        except (Exception, SystemExit) as exc:  # (mypyc exits on a type error)
            self._fail(exc)
            return []
        finally:
            os.chdir(old)
        self._outcome = "compiled"
        return extensions

    def _fail(self, exc: BaseException) -> None:
        self._outcome = f"failed: {exc}"
        print(
            f"warning: compiling the transcript reader with mypyc failed ({exc}); "
            "acp-model runs on its Python source",
            file=sys.stderr,
        )

    def run(self) -> None:
        if self._outcome == "compiled":
            inplace = self.inplace  # (setuptools clears it while it builds and restores it after)
            try:
                super().run()
            except (Exception, SystemExit) as exc:  # any failure leaves a working pure-Python build
                self.inplace = inplace
                self._fail(exc)
        if self._building:
            self._write_record()

    def get_outputs(self) -> list[str]:
        return list(super().get_outputs()) if self._outcome == "compiled" else []

    def _target(self) -> Path:
        """Where the ``properties`` extension modules (and the record) go in this build."""
        return Path(self.get_ext_fullpath("properties.transcript")).parent

    def _write_record(self) -> None:
        target = self._target()
        target.mkdir(parents=True, exist_ok=True)
        files: dict[str, int] = {}
        for source in COMPILED:
            stem = Path(source).stem
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                for path in (target / f"{stem}{suffix}", target / f"{stem}__mypyc{suffix}"):
                    if not path.is_file():
                        continue
                    if self._outcome == "compiled":
                        files[path.name] = path.stat().st_size
                    else:  # left by an earlier build: it must not be used, nor packed
                        path.unlink()
        sources = self._digests if self._outcome == "compiled" else {}
        (target / f"{RECORD}.py").write_text(_record_text(self._outcome, sources, files), encoding="utf-8")


class BuildPyWithoutRecord(build_py):
    """build_py that never copies a build record found in the source tree (build_ext writes it)."""

    def find_package_modules(self, package: str, package_dir: str) -> Any:
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (m[0] == "properties" and m[1] == RECORD)]


if __name__ == "__main__":  # (as setuptools runs it; tests import it for _digest)
    setup(
        # A placeholder: build_ext replaces it with the extensions mypycify generates.
        ext_modules=[Extension("properties.transcript", sources=[])],
        cmdclass={"build_ext": OptionalMypycBuild, "build_py": BuildPyWithoutRecord},
    )
