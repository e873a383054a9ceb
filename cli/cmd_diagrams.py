"""``acp-model diagrams [--out DIR]``: regenerate every diagram drawn from the model.

Writes machine pictures (PNG, SVG), Mermaid and Markdown sources, scenario sequence diagrams,
the composed state graph and the gallery README into DIR (default ``diagrams/`` under the
current folder); see ``diagrams.generate`` for the file list. Byte-identical files are left
alone; files no longer generated in DIR's generated sub-folders are removed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.main import UsageError


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "diagrams", help="draw every machine, scenario and the composed graph into a folder"
    )
    p.add_argument("--out", default="diagrams", metavar="DIR", help="output folder (default: diagrams)")
    return p


def run(args: argparse.Namespace) -> int:
    from diagrams.generate import write

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a folder")
    try:
        report = write(out)
    except OSError as exc:
        raise UsageError(f"{exc.filename or out}: {exc.strerror or exc}") from None
    total = len(report.written) + len(report.unchanged)
    sys.stdout.write(
        f"{out}: {total} files ({len(report.written)} written, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} stale removed)\n"
    )
    for rel in report.written:
        sys.stdout.write(f"  wrote {rel}\n")
    for rel in report.removed:
        sys.stdout.write(f"  removed {rel}\n")
    return 0
