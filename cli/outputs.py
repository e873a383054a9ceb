"""Output paths of the commands that write files: checked before any work starts, and ``-``.

Owns: what ``-`` means for an output option (standard output, where the output is one file;
a usage error where it is a folder of files, which standard output cannot hold) and the check
that an output path can be written, made before a long run rather than after it. The check has
no side effects: it creates (and removes) one empty temporary file in the nearest folder that
exists, and creates no folder. ``write``: a file written atomically (``properties.outputs.write_atomic``),
a failure a one-line usage error naming it; ``show``: a report printed on standard output.

Must not know: what is written.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from cli.main import UsageError
from properties.outputs import write_atomic

STDOUT = "-"


def check_file(path: str, option: str) -> None:
    """A ``UsageError`` (one line naming ``path``, or the option ``option`` for an empty path)
    unless a file can be written at ``path``; ``-`` (standard output) always can."""
    if path == STDOUT:
        return
    if not path:
        raise UsageError(f"{option}: an empty path (give a file name)")
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{path}: is a folder, not a file")
    _probe(target.parent, path)


def check_folder(path: str, option: str) -> None:
    """A ``UsageError`` unless files can be written into the folder ``path`` (made if missing)."""
    if path == STDOUT:
        raise UsageError(f"{option} -: {option} is a folder of files; standard output cannot hold them")
    if not path:  # Path("") is the current folder
        raise UsageError(f"{option}: an empty path (give a folder)")
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{path}: is a file, not a folder")
    _probe(target, path)


def _probe(folder: Path, shown: str) -> None:
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{shown}: cannot write ({existing} is not a folder)")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".acp-model-probe.", dir=existing)
    except OSError as exc:
        raise UsageError(f"{shown}: cannot write ({exc.strerror or exc})") from None
    try:
        os.close(fd)
    finally:  # (an interrupt here must not leave the probe behind)
        os.unlink(tmp)


def write(
    path: str | os.PathLike[str], data: str | bytes, shown: str | None = None, verb: str = "write"
) -> None:
    """``data`` written to ``path`` atomically; a failure is a ``UsageError`` naming ``shown``
    (default: the path)."""
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise UsageError(f"{shown or path}: cannot {verb} ({exc.strerror or exc})") from None


def show(text: str) -> None:
    """A command's report on standard output, flushed."""
    sys.stdout.write(text)
    sys.stdout.flush()
