"""``acp-model view FILE [--json]``: what a spec-conforming client shows for a transcript.

Owns: reading a transcript into ``model.clientview.ClientView`` and presenting the result,
either as the client view format (``--json``: sorted keys, deterministic) or as a short
human-readable summary per session (state, background, completions, usage, then the timeline
with each entity's type, ID and a content summary). Unusable lines are skipped and listed on
stderr with their numbers (the first ``SKIPPED_SHOWN``; the rest are counted, not kept, so
memory does not grow with them); they do not change the exit code (this command shows, it does not
judge), but an input whose lines are all unusable is unusable (exit 2). An input with no message
line at all (empty, or blank lines only) is a recording of nothing, as ``check`` and ``replay``
take it (nothing to judge, exit 0): its view has no sessions (exit 0, a note on stderr).

The view is built by ``properties.clientview.view_transcript`` (the shared reader and the
reference view).

Must not know: the rule catalogue, monitors, or how the view is computed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from cli.main import EXIT_OK, UsageError, stdin_bytes
from cli.options import add_json_option, add_reading_option, chosen_readings
from properties.clientview import ViewedTranscript, view_transcript
from properties.clientview_text import render_text
from properties.outputs import unreadable
from properties.readings import describe, non_default, resolve


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "view",
        help="show the client view a conforming client derives from a transcript",
        description=(
            "Apply every message of a transcript (NDJSON, one {from, message} object per line) "
            "the way the spec requires a client to, and print the resulting view per session. "
            "Use - to read standard input."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="transcript file (NDJSON), or - for stdin")
    add_json_option(parser, "the client view format as JSON")
    add_reading_option(parser)
    return parser


# -- reading -------------------------------------------------------------------------------------
SKIPPED_SHOWN = 20
"""Skipped lines listed on stderr one by one; the rest are counted."""


def _read(path: str, readings: dict[str, str] | None = None) -> ViewedTranscript:
    """The transcript at ``path`` viewed, keeping only the skipped lines listed (memory does not
    grow with the number of unusable lines, as ``check``'s does not with its findings)."""
    if path == "-":
        return view_transcript(stdin_bytes(), readings=readings, keep=SKIPPED_SHOWN)
    try:
        with open(path, "rb") as fh:
            return view_transcript(fh, readings=readings, keep=SKIPPED_SHOWN)
    except OSError as exc:
        raise UsageError(unreadable(path, exc, "is a directory, not a transcript file")) from None


def _skipped_lines(name: str, read: ViewedTranscript) -> Iterator[str]:
    for finding in read.skipped[:SKIPPED_SHOWN]:
        yield f"acp-model view: {name}:{finding.line}: skipped ({finding.rule}: {finding.explanation})\n"
    if read.unusable > SKIPPED_SHOWN:
        yield f"acp-model view: {name}: ... and {read.unusable - SKIPPED_SHOWN} more skipped line(s)\n"


def run(args: argparse.Namespace) -> int:
    chosen = chosen_readings(args)
    read = _read(args.file, chosen)
    name = "<stdin>" if args.file == "-" else args.file
    for text in _skipped_lines(name, read):
        sys.stderr.write(text)
    if not read.messages and not read.unusable:
        sys.stderr.write(f"acp-model view: {name}: nothing to view: the input holds no message\n")
    elif not read.messages:
        raise UsageError(
            f"{name}: nothing to view: no line holds a usable JSON-RPC message "
            f"({read.unusable} line(s) skipped)"
        )
    data = read.view.to_json()
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        # the client view format is keyed by session: chosen readings go to standard error
        if non_default(resolve(chosen)):
            sys.stderr.write(f"acp-model view: {describe(resolve(chosen))}\n")
    else:
        sys.stdout.write(render_text(data))
        sys.stdout.write(describe(resolve(chosen)) + "\n")
    if read.unusable:
        sys.stderr.write(f"acp-model view: {name}: skipped {read.unusable} unusable line(s)\n")
    return EXIT_OK
