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
from typing import Any

from cli.main import EXIT_OK, UsageError
from properties import trace


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
    if args.map:
        return _write_map(args.out)
    if args.between:
        return _write_between(args.out)
    build, write = (
        (trace.sections, trace.write_sections) if args.sections else (trace.matrix, trace.write_matrix)
    )
    if args.out is None:
        args.out = str(trace.SECTIONS_PAGE if args.sections else trace.MATRIX)
    if args.out == "-":
        sys.stdout.write(build(seeded_bugs()))
        return EXIT_OK
    try:
        write(args.out, seeded_bugs())
    except OSError as exc:
        raise UsageError(f"{args.out}: cannot write ({exc.strerror or exc})") from None
    sys.stderr.write(f"acp-model trace: wrote {args.out}\n")
    return EXIT_OK


def _write_map(out: str | None) -> int:
    from diagrams import folder_map

    if out == "-":
        sys.stdout.write(folder_map.folder_map())
        return EXIT_OK
    path = out or str(folder_map.MAP)
    try:
        folder_map.write_map(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write ({exc.strerror or exc})") from None
    sys.stderr.write(f"acp-model trace: wrote {path}\n")
    return EXIT_OK


def _write_between(out: str | None) -> int:
    if out == "-":
        sys.stdout.write(trace.between_table())
        return EXIT_OK
    path = out or str(trace.SESSION_MODEL)
    try:
        trace.write_between(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot rewrite ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    sys.stderr.write(f"acp-model trace: wrote {path}\n")
    return EXIT_OK
