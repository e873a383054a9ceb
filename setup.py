"""Build script: everything is declared in pyproject.toml; this file only adds the compiled reader.

The transcript reader (properties/transcript.py) is compiled with mypyc when the project is
installed, so that ``acp-model check`` spends less time outside the JSON parser. The source is
unchanged and stays the reference: ``properties/native.py`` loads it instead of the compiled
module when the two differ (the .py was edited after the build) or when ACP_MODEL_PURE_PYTHON
is set. The compilation is optional: set ACP_MODEL_PURE_PYTHON=1 at install time to skip it;
where it fails (no C compiler, no Python headers) the install goes on with a warning and the
project runs on its Python source alone.

The C code is generated only when build_ext runs (not for metadata or sdists), and the digest
of each compiled source is written to properties/_native_build.py next to the extension
(generated, not in git), which is how ``properties.native`` tells a current build from a stale one.
"""

from __future__ import annotations

import os
import sys
import zlib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = ("properties/transcript.py",)
"""Sources compiled with mypyc (paths relative to this file)."""

DIGESTS = "_native_build.py"
"""Written beside the compiled modules of the ``properties`` package."""

PURE_ENV = "ACP_MODEL_PURE_PYTHON"


def _digest(path: Path) -> str:
    """The same as ``properties.native.source_digest`` (tests/test_native.py compares them)."""
    data = path.read_bytes()
    return f"{len(data)}-{zlib.crc32(data):08x}"


def _warn(exc: BaseException) -> None:
    print(
        f"warning: compiling the transcript reader with mypyc failed ({exc}); "
        "acp-model runs on its Python source",
        file=sys.stderr,
    )


class OptionalMypycBuild(build_ext):
    """Compile COMPILED with mypyc; on any failure, warn and leave the pure-Python install."""

    _digests: dict[str, str] = {}  # noqa: RUF012 (set per build in _generate)

    def finalize_options(self) -> None:
        # The extensions must be in place before setuptools finalizes them.
        self.distribution.ext_modules = self._generate()
        super().finalize_options()

    def _generate(self) -> list[Extension]:
        if os.environ.get(PURE_ENV):
            print(f"{PURE_ENV} is set: the reader is not compiled", file=sys.stderr)
            return []
        root = Path(__file__).resolve().parent
        old = os.getcwd()
        try:
            from mypyc.build import mypycify

            os.chdir(root)
            # digests of the sources as compiled (read before the C code is generated)
            self._digests = {Path(source).stem: _digest(root / source) for source in COMPILED}
            return list(mypycify(list(COMPILED), opt_level="3", debug_level="0"))
        except (Exception, SystemExit) as exc:  # (mypyc exits on a type error)
            _warn(exc)
            return []
        finally:
            os.chdir(old)

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except (Exception, SystemExit) as exc:  # any failure leaves a working pure-Python install
            _warn(exc)
            return
        lines = [
            '"""Written by setup.py when it compiled these sources with mypyc (length, CRC-32)."""',
            "",
            "SOURCES = {",
        ]
        for name, digest in self._digests.items():
            lines.append(f"    {name!r}: {digest!r},")
        lines += ["}", ""]
        text = "\n".join(lines)
        # beside the extension modules: the source tree for in-place and editable builds, the
        # build directory (and so the wheel) otherwise
        target = Path(self.get_ext_fullpath("properties.transcript")).parent / DIGESTS
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


if __name__ == "__main__":  # (as setuptools runs it; tests import it for _digest)
    setup(
        # A placeholder: build_ext replaces it with the extensions mypycify generates.
        ext_modules=[Extension("properties.transcript", sources=[])],
        cmdclass={"build_ext": OptionalMypycBuild},
    )
