"""``acp-model check``: judge recorded transcripts against the rule monitors (and the schema).

Owns: opening the inputs (every path is checked before anything is read), one pass per file
(``properties.checking.check_stream``) with a fresh ``MonitorSet``, the human and JSON
renderings of the per-file reports, and the exit code (0: nothing at the failing level,
1: findings, 2: unusable input or options). ``acp-model replay`` reuses the renderings.

Failing levels: ``--fail-on must`` (default) fails on errors (MUST / MUST NOT breaches, input
findings that lose a line, schema findings); ``--fail-on should`` fails on warnings too.
Obligations still open at the end of the input, and tolerated input (a blank line, a
byte-order mark, CRLF line ends), are information and never fail a check; under ``--complete``
(the user declares each transcript complete) an open obligation is a breach at the last line.

Must not know: what any monitor checks, how lines are split and decoded, or the schema's
layout.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, BinaryIO

from cli.main import EXIT_FINDINGS, EXIT_OK, UsageError, stdin_bytes
from cli.outputs import STDOUT, check_file
from cli.readings_option import add_reading_option
from cli.util import dumps
from cli.variant_option import add_variant_options, variant_and_readings
from properties.check_report import plural, render_text, report_json, summary_json
from properties.checking import (
    DEFAULT_MAX_FINDINGS,
    FAIL_SEVERITIES,
    FileReport,
    MessageHook,
    check_stream,
)
from properties.engine import MonitorSet
from properties.outputs import unreadable
from properties.readings import resolve
from properties.shared import ENV, SCHEMA, schema_from_env
from properties.transcript import DEFAULT_MAX_LINE_BYTES
from properties.variants import Variant

if TYPE_CHECKING:  # the schema checker (and jsonschema) is imported only when --schema is given
    from properties.schema_check import SchemaChecker

__all__ = ["FileReport", "check_stream", "new_monitor_set"]

STDIN = "-"


def new_monitor_set(readings: Mapping[str, str] | None = None, variant: Variant | None = None) -> MonitorSet:
    """A fresh set of every monitor under these readings and this variant (None: the spec as
    written; tests may replace this function)."""
    return MonitorSet(readings=readings, variant=variant)


def exit_code(reports: Sequence[FileReport], fail_on: str) -> int:
    return EXIT_FINDINGS if any(r.failing(fail_on) for r in reports) else EXIT_OK


# -- inputs and options ------------------------------------------------------------------------


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def open_inputs(paths: Sequence[str], stack: ExitStack) -> list[tuple[str, BinaryIO]]:
    """Open every input before any is read; an unusable one is a UsageError naming it."""
    if sum(1 for p in paths if p == STDIN) > 1:
        raise UsageError("-: standard input given more than once")
    opened: list[tuple[str, BinaryIO]] = []
    for path in paths:
        if path == STDIN:
            opened.append(("<stdin>", stdin_bytes()))
            continue
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a directory")
        try:
            stream = stack.enter_context(open(path, "rb"))  # noqa: SIM115 - closed by the stack
        except OSError as exc:
            raise UsageError(unreadable(path, exc, verb="open")) from None
        opened.append((path, stream))
    return opened


def load_schema(path: str | None) -> SchemaChecker | None:
    if path is None:
        return None
    from properties.schema_check import SchemaChecker, SchemaError

    try:
        return SchemaChecker(path)
    except SchemaError as exc:
        raise UsageError(str(exc)) from None


def run_files(
    paths: Sequence[str],
    *,
    schema: SchemaChecker | None,
    max_line_bytes: int,
    on_message: Callable[[str], MessageHook] | None = None,
    max_findings: int | None = DEFAULT_MAX_FINDINGS,
    readings: Mapping[str, str] | None = None,
    variant: Variant | None = None,
    complete: bool = False,
    check: Callable[..., FileReport] = check_stream,
) -> list[FileReport]:
    """Check each input with its own fresh monitors (under ``readings``: the ``--reading``
    choices, and ``variant``: ``--variant``/``--drop``; ``complete``: ``--complete``, every
    input holds all its peers will send); reading errors are UsageErrors. ``check``: what
    checks one input (``check_stream``, or a recording of it for ``--html``)."""
    reports: list[FileReport] = []
    with ExitStack() as stack:
        for path, stream in open_inputs(paths, stack):
            hook = on_message(path) if on_message is not None else None
            try:
                reports.append(
                    check(
                        stream,
                        path,
                        monitors=(
                            new_monitor_set(readings, variant)
                            if readings or variant is not None
                            else new_monitor_set()
                        ),
                        schema=schema,
                        max_line_bytes=max_line_bytes,
                        on_message=hook,
                        max_findings=max_findings,
                        complete=complete,
                    )
                )
            except OSError as exc:
                raise UsageError(f"{path}: read error ({exc.strerror or exc})") from None
    return reports


def write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# -- the subcommand ----------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="check recorded transcripts (NDJSON) against the rule monitors",
        description="Check ACP transcripts: one JSON object per line, "
        '{"from": "client"|"agent", "message": <JSON-RPC 2.0 message>}, in the order a proxy '
        "saw them (a message may be a batch, an array: each element is judged as a message of "
        "its own, at that line). Exit 0: no findings at the failing level; 1: findings; 2: unusable input.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="transcript files, or - for standard input")
    p.add_argument("--json", action="store_true", help="print a JSON report instead of text (default: text)")
    p.add_argument(
        "--schema",
        metavar="PATH",
        default=schema_from_env(),
        help="also validate every message against this JSON Schema (default: "
        f"${ENV}/{'/'.join(SCHEMA)} when that variable is set, else no schema validation)",
    )
    p.add_argument(
        "--fail-on",
        choices=sorted(FAIL_SEVERITIES),
        default="must",
        help="must: fail on errors; should: fail on warnings too (default: %(default)s)",
    )
    p.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=DEFAULT_MAX_LINE_BYTES,
        metavar="N",
        help="longest accepted line in bytes (default: %(default)s)",
    )
    p.add_argument(
        "--complete",
        action="store_true",
        help="the transcripts are complete (the session ended, nothing more will come): an "
        "obligation still open at the end (an idle for every start, an answer for every prompt, "
        "a report of every inserted message, an end for every compaction) is a breach at the "
        "last line (default: such obligations are information)",
    )
    add_max_findings(p)
    add_html_option(p)
    add_reading_option(p)
    add_variant_options(p, "judge")
    return p


def add_html_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write one self-contained HTML page of the input (one FILE only): the messages as "
        "a sequence diagram, each finding at its line with its spec sentence, the machines' state "
        "and the client view after any line (default: no page)",
    )


def html_page(args: argparse.Namespace) -> Any:
    """The page recorder for ``--html`` (None without it), after checking the option: one
    input, and an output that can be written (before any work)."""
    if getattr(args, "html", None) is None:
        return None
    files = args.files if hasattr(args, "files") else [args.file]
    if len(files) != 1:
        raise UsageError(f"--html: a page shows one input; {len(files)} files given")
    if args.html == STDOUT:
        raise UsageError("--html -: standard output carries the report; give a file name")
    check_file(args.html)
    from diagrams.html import CheckPage

    return CheckPage(args.command if isinstance(getattr(args, "command", None), str) else "check")


def add_max_findings(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-findings",
        type=positive_int,
        default=DEFAULT_MAX_FINDINGS,
        metavar="N",
        help="findings kept per file; the rest are counted in the summary and still set the exit "
        "code (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    variant, readings = variant_and_readings(args)
    page = html_page(args)
    schema = load_schema(args.schema)
    reports = run_files(
        args.files,
        schema=schema,
        max_line_bytes=args.max_line_bytes,
        max_findings=args.max_findings,
        readings=readings,
        variant=variant,
        complete=args.complete,
        check=check_stream if page is None else page.check,
    )
    if page is not None:
        page.write(args.html, reports[0])
    code = exit_code(reports, args.fail_on)
    if args.json:
        body: dict[str, Any] = {
            "files": [report_json(r) for r in reports],
            "summary": summary_json(reports, args.fail_on, code),
            "readings": resolve(readings),
        }
        if variant is not None:
            aside: Counter[str] = Counter()
            for r in reports:
                aside.update(r.set_aside)
            body["variant"] = {**variant.to_json(), "set_aside": {k: aside[k] for k in sorted(aside)}}
        write(dumps(body))
        return code
    out: list[str] = []
    if variant is not None:
        out.extend(variant.describe())
    for report in reports:
        out.extend(render_text(report))
    if len(reports) > 1:
        total = summary_json(reports, args.fail_on, code)
        out.append(
            f"total: {plural(total['files'], 'file')}, {plural(total['messages'], 'message')}, "
            f"{plural(total['findings']['error'], 'error')}, "
            f"{plural(total['findings']['warning'], 'warning')}"
        )
    write("\n".join(out) + "\n")
    return code
