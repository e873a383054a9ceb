"""``acp-model diagrams [--out DIR]``: regenerate every diagram drawn from the model.

Writes machine pictures (PNG, SVG), Mermaid and Markdown sources, scenario sequence diagrams,
the composed state graph and the gallery README into DIR (default: the project's own
``diagrams/`` folder, wherever the command runs from, as ``trace`` writes the project's matrix;
the summary names the folder); see ``diagrams.generate`` for the file list. Byte-identical files are left
alone; files no longer generated in DIR's generated sub-folders are removed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cli.main import UsageError
from cli.options import add_quiet_option
from cli.outputs import check_folder, show
from cli.progress import shown

PROJECT_DIAGRAMS = Path(__file__).resolve().parents[1] / "diagrams"
"""The project's gallery (committed; ``tests/test_diagrams.py`` holds it fresh)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "diagrams",
        help="draw every machine, scenario and the composed graph into a folder",
        description="Draw every diagram from the model itself: a picture (PNG, SVG), a Mermaid "
        "source and a Markdown table for each state machine, a Mermaid sequence diagram for each "
        "named scenario, the composed state graph, and a gallery README linking them. Files "
        "whose bytes are unchanged are left alone; stale generated files are removed.",
    )
    p.add_argument(
        "--out",
        default=str(PROJECT_DIAGRAMS),
        metavar="DIR",
        help="output folder (default: the project's diagrams folder, %(default)s)",
    )
    add_quiet_option(p)
    return p


def run(args: argparse.Namespace) -> int:
    from diagrams.generate import write

    check_folder(args.out, "--out")
    out = Path(args.out)
    try:
        with shown(args.quiet) as progress:
            report = write(out, progress=progress)
    except OSError as exc:
        raise UsageError(f"{exc.filename or out}: {exc.strerror or exc}") from None
    total = len(report.written) + len(report.unchanged)
    show(
        f"{out}: {total} files ({len(report.written)} written, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} stale removed)\n"
        + "".join(f"  wrote {rel}\n" for rel in report.written)
        + "".join(f"  removed {rel}\n" for rel in report.removed)
    )
    return 0
