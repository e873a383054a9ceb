"""Which transcript reader runs: the mypyc-compiled ``properties.transcript`` or its source.

setup.py compiles properties/transcript.py with mypyc at install time where it can. Python
imports an extension module in preference to the .py beside it, so an edit to the source would
be ignored until the next build. This module, called when the ``properties`` package is
imported, prevents that: for each compiled module it compares the digest of the source with the
one setup.py recorded when it compiled it (``properties/_native_build.py``, generated) and,
when they differ, when no digest was recorded, or when ``ACP_MODEL_PURE_PYTHON`` is set in the
environment, loads the source under the module's own name before anything imports it.

``STATUS`` says, per module, which one is in use and why (the benchmarks print it).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import zlib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

COMPILED = ("transcript",)
"""Modules of the ``properties`` package that setup.py compiles."""

PURE_ENV = "ACP_MODEL_PURE_PYTHON"
"""Set (to anything but the empty string) to run every module from its source."""

STATUS: dict[str, str] = {}
"""Module name -> "compiled", or "source" and the reason."""


def compiled_file(package_dir: Path, name: str) -> Path | None:
    """The extension module ``name`` in ``package_dir``, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = package_dir / (name + suffix)
        if path.is_file():
            return path
    return None


def source_digest(path: Path) -> str:
    """What setup.py records of a source it compiled: its length and CRC-32 (enough to tell an
    edited file, and zlib is light to import where hashlib loads OpenSSL, about 4 MB)."""
    data = path.read_bytes()
    return f"{len(data)}-{zlib.crc32(data):08x}"


def load_source(qualified: str, path: Path) -> ModuleType:
    """Execute the Python source ``path`` as module ``qualified`` and register it in
    ``sys.modules`` (so that later imports of that name get it)."""
    spec = importlib.util.spec_from_file_location(qualified, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has a loader
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[qualified]
        raise
    return module


def _load_compiled(qualified: str) -> str | None:
    """Import the extension module now (None), or say why it does not load (a runtime library
    missing, an interpreter it was not built for)."""
    try:
        importlib.import_module(qualified)
    except ImportError as exc:
        sys.modules.pop(qualified, None)
        return f"source (the compiled module does not load: {exc})"
    return None


def choose(
    package: str,
    package_dir: Path,
    names: tuple[str, ...],
    built: Mapping[str, str] | None,
    pure: bool,
) -> dict[str, str]:
    """Decide, for each module in ``names``, between its extension module and its source, and
    load the source wherever the extension must not be used. ``built`` maps module names to
    the source digests recorded at build time (None: no record). A current extension module is
    imported here, so that one that does not load falls back to the source too. Returns the
    status of each."""
    status: dict[str, str] = {}
    for name in names:
        source = package_dir / (name + ".py")
        if compiled_file(package_dir, name) is None:
            status[name] = "source (not compiled)"
            continue
        reason: str | None
        if pure:
            reason = f"source ({PURE_ENV} is set)"
        elif built is None or name not in built:
            reason = "source (no build record for the compiled module)"
        elif not source.is_file() or built[name] != source_digest(source):
            reason = "source (changed since it was compiled)"
        else:
            reason = _load_compiled(f"{package}.{name}")
            if reason is None:
                status[name] = "compiled"
                continue
        status[name] = reason
        qualified = f"{package}.{name}"
        if qualified not in sys.modules and source.is_file():
            load_source(qualified, source)
    return status


def setup_package(package: str, package_dir: Path) -> None:
    """Called by ``properties/__init__.py``: fill ``STATUS`` and load stale modules' sources."""
    built: Mapping[str, str] | None
    try:
        record = importlib.import_module(f"{package}._native_build")
        built = record.SOURCES
    except ImportError:
        built = None
    STATUS.update(choose(package, package_dir, COMPILED, built, bool(os.environ.get(PURE_ENV))))


def describe() -> str:
    """One line for reports: which reader runs."""
    return ", ".join(f"{name}: {how}" for name, how in sorted(STATUS.items())) or "nothing compiled"
