"""Output files and stable JSON printing, for every layer that writes (commands, diagrams, the
explorer's reports, the traceability matrix).

Owns: how outputs reach the disk (write to a temporary file in the same folder, then rename),
so a crash never leaves a half-written file behind, the JSON text commands print, and how a
long text is cut to a width for display (``clip``).

Must not know: what is written, or which command writes it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (same-folder temporary file, then ``os.replace``)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; outputs are ordinary files
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
