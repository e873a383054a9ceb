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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from cli.main import EXIT_FINDINGS, EXIT_OK, UsageError, stdin_bytes
from cli.outputs import STDOUT, check_file
from cli.readings_option import add_reading_option
from cli.util import dumps
from cli.variant_option import add_variant_options, variant_and_readings
from properties.checking import (
    DEFAULT_MAX_FINDINGS,
    FAIL_SEVERITIES,
    SEVERITIES,
    FileReport,
    MessageHook,
    check_stream,
)
from properties.engine import MonitorSet
from properties.findings import Finding
from properties.outputs import unreadable
from properties.readings import describe, resolve
from properties.shared import ENV, SCHEMA, schema_from_env
from properties.transcript import DEFAULT_MAX_LINE_BYTES
from properties.variants import Variant


def _compact(value: Any) -> str:
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, ValueError, RecursionError):
        return "(message not printable)"


if TYPE_CHECKING:  # the schema checker (and jsonschema) is imported only when --schema is given
    from properties.schema_check import SchemaChecker

__all__ = ["FileReport", "check_stream", "new_monitor_set"]

STDIN = "-"
MESSAGE_WIDTH = 120


def new_monitor_set(readings: Mapping[str, str] | None = None, variant: Variant | None = None) -> MonitorSet:
    """A fresh set of every monitor under these readings and this variant (None: the spec as
    written; tests may replace this function)."""
    return MonitorSet(readings=readings, variant=variant)


# -- rendering ---------------------------------------------------------------------------------


TOLERATED = frozenset({"input.blank-line", "input.bom", "input.crlf"})
"""Input the reader accepts as it is (information, never a failure)."""


def _paraphrase(rule: str) -> str:
    if rule in TOLERATED:
        return "transcript line tolerated as it is (information)"
    if rule.startswith("input."):
        return "transcript line that could not be used as it stands"
    if rule.startswith("schema."):
        return f"{rule[7:]} message does not match the official ACP JSON Schema"
    try:
        from properties.catalogue import RULES_BY_ID
    except ImportError:
        return "(rule catalogue unavailable)"
    entry = RULES_BY_ID.get(rule)
    if entry is None:
        return "(not in the rule catalogue)"
    text = str(getattr(entry, "paraphrase", "") or "")
    section = str(getattr(entry, "section", "") or "")
    return f"{text} [{section}]" if section else text


def shorten(text: str, width: int = MESSAGE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _where(report: FileReport, finding: Finding) -> str:
    line = "end" if finding.line is None else str(finding.line)
    return f"{report.path}:{line}"


def _line_key(finding: Finding) -> tuple[int, int]:
    return (1, 0) if finding.line is None else (0, finding.line)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{key} {counter[key]}" for key in sorted(counter)) or "none"


def _readings(report: FileReport, finding: Finding) -> str:
    """ " (reading NAME=ALT, ...)" for a finding whose verdict depends on readings."""
    if not finding.readings:
        return ""
    chosen = report.readings or resolve({})
    return " (reading " + ", ".join(f"{n}={chosen.get(n, '?')}" for n in finding.readings) + ")"


def render_findings(report: FileReport) -> Iterator[str]:
    """The findings of one report, grouped by rule, then the open obligations."""
    groups: dict[str, list[Finding]] = {}
    for finding in report.findings:
        groups.setdefault(finding.rule, []).append(finding)
    if not groups:
        yield "  no findings" if report.judged else "  nothing to judge: the input holds no JSON-RPC message"
    for rule in sorted(groups):
        items = sorted(groups[rule], key=_line_key)
        yield f"  {rule} ({items[0].level}, {_plural(len(items), 'finding')}): {_paraphrase(rule)}"
        for f in items:
            session = f" session {f.session}" if f.session is not None else ""
            tag = f"suspected, {f.severity}" if f.kind == "suspect" else f.severity
            yield f"    {_where(report, f)}{session} [{tag}] {f.explanation}{_readings(report, f)}"
            if f.message is not None:
                yield f"      {shorten(_compact(f.message))}"
    if report.cut:
        yield (
            f"  ... {_plural(sum(report.cut.values()), 'more finding')} not shown "
            f"(--max-findings {report.max_findings}; {_counts(report.cut)})"
        )
    if report.open:
        yield "  open at end of input (information only, not breaches):"
        for f in sorted(report.open, key=lambda f: (f.rule, *_line_key(f))):
            session = f" session {f.session}" if f.session is not None else ""
            why = f"{f.explanation}{_readings(report, f)}"
            yield f"    {_where(report, f)}{session} {f.rule} ({f.level}): {why}"


def summary_line(report: FileReport) -> str:
    st, sev = report.stats, report.severities()
    parts = [
        f"{_plural(st.messages, 'message')} on {_plural(st.lines, 'line')}",
        _plural(len(st.sessions), "session"),
        f"findings: {_plural(sev['error'], 'error')}, {_plural(sev['warning'], 'warning')}, "
        f"{sev['info']} information (by level: {_counts(report.levels())}; open: {len(report.open)})",
        f"rules exercised: {len(report.exercised)}",
        f"unknown/custom variants preserved: {sum(st.preserved.values())}",
        "schema validated" if report.schema else "schema validation skipped (no --schema)",
    ]
    return "; ".join(parts)


def render_text(report: FileReport) -> Iterator[str]:
    yield f"{report.path}:"
    yield from render_findings(report)
    yield f"  summary: {summary_line(report)}"
    if report.complete:
        yield "  judged complete (--complete): obligations open at the end are breaches at the last line"
    yield f"  {describe(report.readings or resolve({}))}"
    if report.variant is not None:
        yield f"  {set_aside_line(report)}"
    if report.exercised:
        yield "  exercised: " + ", ".join(f"{r}×{report.exercised[r]}" for r in sorted(report.exercised))
    if report.stats.preserved:
        yield "  preserved: " + _counts(report.stats.preserved)


def set_aside_line(report: FileReport) -> str:
    """What the variant in force set aside in one report (one line)."""
    v = report.variant
    assert v is not None
    n = sum(report.set_aside.values())
    which = f" ({_counts(report.set_aside)})" if n else ""
    dropped = ", ".join(v.drop) or "none"
    return (
        f"variant {v.name}: {_plural(n, 'finding')} of dropped rules set aside{which}; "
        f"rules dropped: {dropped}"
    )


def report_json(report: FileReport) -> dict[str, Any]:
    st, sev = report.stats, report.severities()
    extra: dict[str, Any] = {}
    if report.variant is not None:
        extra["set_aside"] = {r: report.set_aside[r] for r in sorted(report.set_aside)}
    if report.complete:
        extra["complete"] = True
    return {
        **extra,
        "path": report.path,
        "lines": st.lines,
        "messages": st.messages,
        "sessions": len(st.sessions),
        "findings": [f.to_json() for f in (*report.findings, *report.open)],
        "counts": {s: sev[s] for s in SEVERITIES},
        "by_level": {k: v for k, v in sorted(report.levels().items())},
        "open": len(report.open),
        "exercised": {r: report.exercised[r] for r in sorted(report.exercised)},
        "preserved": {k: st.preserved[k] for k in sorted(st.preserved)},
        "schema": "validated" if report.schema else "skipped",
        "judged": report.judged,
        "cut": {s: report.cut[s] for s in SEVERITIES if report.cut[s]},
    }


def summary_json(reports: Sequence[FileReport], fail_on: str, exit_code: int) -> dict[str, Any]:
    sev: Counter[str] = Counter()
    levels: Counter[str] = Counter()
    exercised: Counter[str] = Counter()
    preserved = 0
    for r in reports:
        sev.update(r.severities())
        levels.update(r.levels())
        exercised.update(r.exercised)
        preserved += sum(r.stats.preserved.values())
    return {
        "files": len(reports),
        "messages": sum(r.stats.messages for r in reports),
        "sessions": sum(len(r.stats.sessions) for r in reports),
        "findings": {s: sev[s] for s in SEVERITIES},
        "by_level": {k: v for k, v in sorted(levels.items())},
        "rules_exercised": len(exercised),
        "preserved": preserved,
        "schema": "validated" if reports and reports[0].schema else "skipped",
        "fail_on": fail_on,
        "exit_code": exit_code,
    }


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
            f"total: {_plural(total['files'], 'file')}, {_plural(total['messages'], 'message')}, "
            f"{_plural(total['findings']['error'], 'error')}, "
            f"{_plural(total['findings']['warning'], 'warning')}"
        )
    write("\n".join(out) + "\n")
    return code
