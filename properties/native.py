"""Which transcript reader runs: the mypyc-compiled ``properties.transcript`` or its source.

setup.py compiles properties/transcript.py with mypyc at install time where it can. Python
imports an extension module in preference to the .py beside it, so an edit to the source would
be ignored until the next build. This module, called when the ``properties`` package is
imported, prevents that: for each compiled module it compares the digest of the source with the
one setup.py recorded when it compiled it (``properties/_native_build.py``, generated), and the
extension files with the sizes recorded. When they differ, when there is no record, when the
extension does not load, or when ``ACP_MODEL_PURE_PYTHON`` is set in the environment, it loads
the source under the module's own name before anything imports it.

Not covered: ``importlib.reload`` of a module that fell back goes through the import system
again, which prefers the extension.

``STATUS`` says, per module, which one is in use and why (the benchmarks print it).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
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
    """Execute the Python source ``path`` as module ``qualified``, register it in
    ``sys.modules`` and bind it in its parent package, as an import would (so that later
    imports of that name, and ``package.name``, get it)."""
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
    parent, _, child = qualified.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return module


@dataclass(frozen=True)
class BuildRecord:
    """What setup.py's last build wrote to ``_native_build.py`` (see setup.py)."""

    outcome: str
    """"compiled", "skipped: ..." or "failed: ..."."""
    sources: Mapping[str, str]
    """Module name -> ``source_digest`` of the source compiled."""
    files: Mapping[str, int]
    """Extension file name -> its size in bytes, as built."""


def read_record(package: str) -> BuildRecord | None:
    """The package's build record, or None where there is none or it cannot be read (a
    truncated or hand-edited file counts as none: the sources run)."""
    try:
        module = importlib.import_module(f"{package}._native_build")
        record = BuildRecord(module.OUTCOME, module.SOURCES, module.FILES)
    except Exception:
        return None
    if not (
        type(record.outcome) is str
        and isinstance(record.sources, dict)
        and all(type(k) is str and type(v) is str for k, v in record.sources.items())
        and isinstance(record.files, dict)
        and all(type(k) is str and type(v) is int for k, v in record.files.items())
    ):
        return None
    return record


def _load_compiled(qualified: str) -> str | None:
    """Import the extension module now (None), or say why it does not load (a runtime library
    missing, an interpreter it was not built for)."""
    try:
        importlib.import_module(qualified)
    except ImportError as exc:
        sys.modules.pop(qualified, None)
        return f"source (the compiled module does not load: {exc})"
    return None


def _files_match(extension: Path, record: BuildRecord) -> bool:
    """The extension found is one the record lists, and every listed file is there beside it,
    with the size it had when built (so the record and the binaries come from the same build)."""
    if extension.name not in record.files:
        return False
    for name, size in record.files.items():
        path = extension.parent / name
        if not path.is_file() or path.stat().st_size != size:
            return False
    return True


def _refusal(
    name: str, extension: Path, source: Path | None, record: BuildRecord | None, pure: bool
) -> str | None:
    """Why the extension module ``name`` must not run (the status to report), or None.
    ``source`` is its source file, None where there is none to compare."""
    if pure:
        return f"source ({PURE_ENV} is set)"
    if record is None or name not in record.sources:
        return "source (no build record for the compiled module)"
    if not _files_match(extension, record):
        return "source (the compiled files are not the ones the build record lists)"
    if source is not None and record.sources[name] != source_digest(source):
        return "source (changed since it was compiled)"
    return None


def choose(
    package: str,
    package_dir: Path,
    names: tuple[str, ...],
    record: BuildRecord | None,
    pure: bool,
) -> dict[str, str]:
    """Decide, for each module in ``names``, between its extension module and its source, and
    load the source wherever the extension must not be used. ``record`` is the build record
    (None: none). A current extension module is imported here, so that one that does not load
    falls back to the source too. Returns the status of each: "compiled..." or "source (why)"."""
    status: dict[str, str] = {}
    for name in names:
        extension = compiled_file(package_dir, name)
        if extension is None:
            status[name] = "source (not compiled)"
            continue
        path = package_dir / (name + ".py")
        source = path if path.is_file() else None
        qualified = f"{package}.{name}"
        reason = _refusal(name, extension, source, record, pure) or _load_compiled(qualified)
        if reason is None:
            status[name] = "compiled" if source is not None else "compiled (no source beside it)"
        elif source is None:  # nothing else to run: the import system takes the extension
            status[name] = f"compiled, although it should not run: {reason}"
        else:
            status[name] = reason
            if qualified not in sys.modules:
                load_source(qualified, source)
    return status


RECORD: BuildRecord | None = None
"""The build record read by ``setup_package``."""


def setup_package(package: str, package_dir: Path) -> None:
    """Called by ``properties/__init__.py``: fill ``STATUS`` and load stale modules' sources."""
    global RECORD
    RECORD = read_record(package)
    STATUS.update(choose(package, package_dir, COMPILED, RECORD, bool(os.environ.get(PURE_ENV))))


def describe() -> str:
    """One line for reports: which reader runs."""
    return ", ".join(f"{name}: {how}" for name, how in sorted(STATUS.items())) or "nothing compiled"
