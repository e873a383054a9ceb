"""Output files and stable JSON printing, for every layer that writes (commands, diagrams, the
explorer's reports, the traceability matrix).

Owns: how outputs reach the disk (write to a temporary file in the same folder, then rename),
so a crash never leaves a half-written file behind; how a set of generated files is written
into a folder, leaving files whose bytes are already there alone and removing the files of
its generated sub-folders no longer in the set (``write_folder``); the JSON text commands
print; and how a long text is cut to a width for display (``clip``).

Must not know: what is written, or which command writes it.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (same-folder temporary file, then ``os.replace``).
    The temporary file's name is chosen before the file is made, so an interrupt at any moment
    (Ctrl-C) removes it; its mode is an ordinary file's (0666 less the umask)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = ""
    try:
        while True:
            tmp = str(target.parent / f".{target.name}.{secrets.token_hex(6)}")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                tmp = ""  # (another's: never removed here)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, target)
    except BaseException:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        raise


@dataclass
class FolderWrite:
    """What ``write_folder`` did, by path relative to the folder."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def write_folder(
    out: Path,
    files: Mapping[str, str | bytes],
    folders: Iterable[str],
    each: Callable[[], None] = lambda: None,
) -> FolderWrite:
    """Write ``files`` (path relative to ``out`` -> contents) into ``out``, each atomically and only
    when its bytes differ from the file there (``each`` is called once per file), then remove the
    ``stale`` files of the sub-folders ``folders``."""
    done = FolderWrite()
    for rel, data in files.items():
        each()
        raw = data.encode("utf-8") if isinstance(data, str) else data
        target = out / rel
        if target.is_file() and target.read_bytes() == raw:
            done.unchanged.append(rel)
            continue
        write_atomic(target, raw)
        done.written.append(rel)
    done.removed = stale(out, files, folders)
    for rel in done.removed:
        (out / rel).unlink()
    return done


def stale(out: Path, files: Collection[str], folders: Iterable[str]) -> list[str]:
    """Files at any depth in the sub-folders ``folders`` of ``out`` that ``files`` (paths relative
    to ``out``) does not name."""
    return [
        rel
        for sub in folders
        for path in sorted((out / sub).rglob("*"))
        if path.is_file() and (rel := path.relative_to(out).as_posix()) not in files
    ]


def clip(text: str, limit: int, *, one_line: bool = False) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when it is cut; with
    ``one_line``, every run of whitespace first becomes one space."""
    if one_line:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dumps(obj: Any) -> str:
    """Deterministic, human-friendly JSON for command output."""
    return json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def unreadable(path: str, exc: OSError, directory: str = "is a directory", verb: str = "read") -> str:
    """The one-line error for an input file that cannot be read (``path: what is wrong``)."""
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file"
    if isinstance(exc, IsADirectoryError):
        return f"{path}: {directory}"
    if isinstance(exc, PermissionError):
        return f"{path}: permission denied"
    return f"{path}: cannot {verb} ({exc.strerror or exc})"
