"""``acp-model trace [--sections | --between | --map] [--out PATH]``: regenerate the traceability
matrix (docs/traceability.md), or with ``--sections`` the spec by section (docs/spec-sections.md),
with ``--between`` the table of the rules between machines in docs/session-model.md, or with
``--map`` the map of the folders (docs/map.md, ``diagrams.folder_map``).

Owns: gathering the seeded bugs of ``simulator.analysis.mutants`` by the rule each is meant to break and
handing them to ``properties.trace``, which builds the matrix and the page.

Must not know: how the matrix is laid out.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli.main import EXIT_OK, UsageError
from cli.outputs import check_file
from properties import trace
from properties.outputs import write_atomic


def seeded_bugs() -> dict[str, list[str]]:
    """rule ID -> ``mutant NAME (side)`` for every seeded bug meant to break it."""
    from simulator.analysis.mutants import MUTANTS

    out: dict[str, list[str]] = {}
    for mutant in MUTANTS:
        out.setdefault(mutant.intended_rule, []).append(f"mutant {mutant.name} ({mutant.side})")
    return out


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "trace",
        help="regenerate the traceability matrix (rule -> checks, tests, seeded bugs)",
        description="Write the traceability matrix: for every catalogued rule, what checks it "
        "and which tests and seeded bugs exercise it.",
    )
    p.add_argument(
        "--out",
        metavar="PATH",
        default=None,
        help=f"where to write it; - for standard output (default: {trace.MATRIX}, with --sections "
        f"{trace.SECTIONS_PAGE}, with --map docs/map.md)",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--sections",
        action="store_true",
        help="write the spec by section instead: per section heading, its rules, the readings "
        "that cite it and the seeded bugs of its rules (default: off)",
    )
    what.add_argument(
        "--between",
        action="store_true",
        help=f"rewrite the table of the rules between machines (model/between.py) in {trace.SESSION_MODEL} "
        "instead (default: off)",
    )
    what.add_argument(
        "--map",
        action="store_true",
        help="write the map of the folders instead: every folder and module with its header's "
        "first sentence (default: off)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    text, write, default, verb = _page(args)
    if args.out == "-":
        sys.stdout.write(text())
        return EXIT_OK
    if args.out == "":
        raise UsageError("--out: an empty path (give a file, or - for standard output)")
    path = args.out or str(default)
    if args.between and not Path(path).is_file():  # it rewrites a table inside an existing page
        what = "is a folder" if Path(path).is_dir() else "does not exist"
        raise UsageError(
            f"{path}: {what}: --between rewrites the table in an existing page (such as {default})"
        )
    check_file(path, "--out")  # a path under a file: said as every command says it
    try:
        write(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot {verb} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:  # --between: the page to rewrite is not text
        raise UsageError(f"{path}: cannot {verb} (not UTF-8 text)") from None
    except ValueError as exc:  # --between: the page lacks the markers of the table
        raise UsageError(str(exc)) from None
    sys.stderr.write(f"acp-model trace: wrote {path}\n")
    return EXIT_OK


def _page(args: argparse.Namespace) -> tuple[Callable[[], str], Callable[[str], None], Any, str]:
    """The page the options ask for: (its text, writing it to a path, its default path, what a
    failed write could not do)."""
    if args.map:
        from diagrams import folder_map

        return folder_map.folder_map, folder_map.write_map, folder_map.MAP, "write"
    if args.between:
        return trace.between_table, trace.write_between, trace.SESSION_MODEL, "rewrite"
    build, default = (trace.sections, trace.SECTIONS_PAGE) if args.sections else (trace.matrix, trace.MATRIX)
    return (
        (lambda: build(seeded_bugs())),
        (lambda path: write_atomic(path, build(seeded_bugs()))),
        default,
        "write",
    )
