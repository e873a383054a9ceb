"""``acp-model check``: judge recorded transcripts against the rule monitors (and the schema).

Owns: opening the inputs (every path is checked before anything is read), one pass per file
that feeds the transcript reader's messages to the optional schema checker and to a fresh
``MonitorSet``, the per-file report, its human and JSON renderings, and the exit code
(0: nothing at the failing level, 1: findings, 2: unusable input or options).
``acp-model replay`` reuses all of it (``check_stream``, ``render_text``, ``report_json``).

Failing levels: ``--fail-on must`` (default) fails on errors (MUST / MUST NOT breaches, input
findings, schema findings); ``--fail-on should`` fails on warnings too. Obligations still open
at the end of the input are information and never fail a check.

Must not know: what any monitor checks, how lines are split and decoded, or the schema's
layout.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from cli.main import EXIT_FINDINGS, EXIT_OK, UsageError, stdin_bytes
from cli.util import dumps
from properties.engine import MonitorSet
from properties.findings import Finding
from properties.transcript import DEFAULT_MAX_LINE_BYTES, TranscriptStats, scan_transcript

try:
    import orjson

    def _compact(value: Any) -> str:
        try:
            return orjson.dumps(value).decode("utf-8")
        except (TypeError, ValueError, RecursionError):
            return "(message not printable)"
except ImportError:  # pragma: no cover - orjson is a dependency
    import json

    def _compact(value: Any) -> str:
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return "(message not printable)"


if TYPE_CHECKING:  # the schema checker (and jsonschema) is imported only when --schema is given
    from properties.schema_check import SchemaChecker

STDIN = "-"
FAIL_SEVERITIES = {"must": frozenset({"error"}), "should": frozenset({"error", "warning"})}
MESSAGE_WIDTH = 120
SEVERITIES = ("error", "warning", "info")

MessageHook = Callable[[int, str, dict[str, Any]], None]


def new_monitor_set() -> MonitorSet:
    """A fresh set of every monitor (tests may replace this function)."""
    return MonitorSet()


@dataclass
class FileReport:
    """Everything ``check`` has to say about one input."""

    path: str
    stats: TranscriptStats
    findings: list[Finding] = field(default_factory=list)
    """Breaches, schema and input findings (kinds "rule" and "input"), in the order found."""
    open: list[Finding] = field(default_factory=list)
    """Obligations still open at the end of the input (kind "open")."""
    exercised: Counter[str] = field(default_factory=Counter)
    schema: bool = False

    def severities(self) -> Counter[str]:
        return Counter(f.severity for f in (*self.findings, *self.open))

    def levels(self) -> Counter[str]:
        return Counter(f.level for f in self.findings)

    def failing(self, fail_on: str) -> bool:
        bad = FAIL_SEVERITIES[fail_on]
        return any(f.severity in bad for f in self.findings)


# -- one pass over one input -------------------------------------------------------------------


def check_stream(
    stream: BinaryIO,
    path: str,
    *,
    monitors: MonitorSet | None = None,
    schema: SchemaChecker | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    on_message: MessageHook | None = None,
) -> FileReport:
    """Read one transcript and judge it; ``on_message`` sees every message that was used.

    Without a hook or a schema, the reader hands each message to the monitor set itself,
    straight to the handlers of the set's dispatch tables (``MonitorSet.routes``) as it
    classified the message; only input findings come out of the loop. Otherwise each message
    goes through the loop (updates taken apart to ``MonitorSet.feed_update``). Either way
    findings are kept in the order they were made: the monitors' findings wait in the set
    until the next ``feed`` returns them, or until another finding (input, schema) has to
    follow them."""
    monitor_set = monitors if monitors is not None else new_monitor_set()
    if schema is not None:
        schema.reset()
    report = FileReport(path, TranscriptStats(), schema=schema is not None)
    findings = report.findings
    opened = report.open

    def keep(new: list[Finding]) -> None:
        for finding in new:
            (opened if finding.kind == "open" else findings).append(finding)

    feed = monitor_set.feed
    feed_update = monitor_set.feed_update
    take_new = monitor_set.take_new
    routes = monitor_set.routes() if on_message is None and schema is None else None
    if routes is not None:  # the reader hands every message to the set
        for item in scan_transcript(stream, max_line_bytes, stats=report.stats, routes=routes):
            keep(take_new())
            findings.append(item)  # type: ignore[arg-type]  # only input findings are left
        keep(take_new())
        keep(monitor_set.finish(quiescent=False))
        report.exercised = Counter(monitor_set.exercised)
        return report
    for item in scan_transcript(stream, max_line_bytes, stats=report.stats):
        if type(item) is tuple:
            line, sender, msg, sid, upd = item
            if on_message is not None:
                on_message(line, sender, msg)
            if schema is not None:
                problem = schema.check(sender, msg, line)
                if problem is not None:
                    keep(take_new())
                    findings.append(problem)
            if upd is not None:
                feed_update(sid, upd, line, msg)  # type: ignore[arg-type]  # both or neither are None
            else:
                new = feed(sender, msg, line)
                if new:
                    keep(new)
        else:
            keep(take_new())
            findings.append(item)  # type: ignore[arg-type]
    keep(take_new())
    keep(monitor_set.finish(quiescent=False))
    report.exercised = Counter(monitor_set.exercised)
    return report


# -- rendering ---------------------------------------------------------------------------------


def _paraphrase(rule: str) -> str:
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


def render_findings(report: FileReport) -> Iterator[str]:
    """The findings of one report, grouped by rule, then the open obligations."""
    groups: dict[str, list[Finding]] = {}
    for finding in report.findings:
        groups.setdefault(finding.rule, []).append(finding)
    if not groups:
        yield "  no findings"
    for rule in sorted(groups):
        items = sorted(groups[rule], key=_line_key)
        yield f"  {rule} ({items[0].level}, {_plural(len(items), 'finding')}): {_paraphrase(rule)}"
        for f in items:
            session = f" session {f.session}" if f.session is not None else ""
            yield f"    {_where(report, f)}{session} [{f.severity}] {f.explanation}"
            if f.message is not None:
                yield f"      {shorten(_compact(f.message))}"
    if report.open:
        yield "  open at end of input (information only, not breaches):"
        for f in sorted(report.open, key=lambda f: (f.rule, *_line_key(f))):
            session = f" session {f.session}" if f.session is not None else ""
            yield f"    {_where(report, f)}{session} {f.rule} ({f.level}): {f.explanation}"


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
    if report.exercised:
        yield "  exercised: " + ", ".join(f"{r}×{report.exercised[r]}" for r in sorted(report.exercised))
    if report.stats.preserved:
        yield "  preserved: " + _counts(report.stats.preserved)


def report_json(report: FileReport) -> dict[str, Any]:
    st, sev = report.stats, report.severities()
    return {
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
        except FileNotFoundError:
            raise UsageError(f"{path}: no such file") from None
        except PermissionError:
            raise UsageError(f"{path}: permission denied") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot open ({exc.strerror or exc})") from None
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
) -> list[FileReport]:
    """Check each input with its own fresh monitors; reading errors are UsageErrors."""
    reports: list[FileReport] = []
    with ExitStack() as stack:
        for path, stream in open_inputs(paths, stack):
            hook = on_message(path) if on_message is not None else None
            try:
                reports.append(
                    check_stream(stream, path, schema=schema, max_line_bytes=max_line_bytes, on_message=hook)
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
        "saw them. Exit 0: no findings at the failing level; 1: findings; 2: unusable input.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="transcript files, or - for standard input")
    p.add_argument("--json", action="store_true", help="print a JSON report instead of text")
    p.add_argument("--schema", metavar="PATH", help="also validate every message against this JSON Schema")
    p.add_argument(
        "--fail-on",
        choices=sorted(FAIL_SEVERITIES),
        default="must",
        help="must (default): fail on errors; should: fail on warnings too",
    )
    p.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=DEFAULT_MAX_LINE_BYTES,
        metavar="N",
        help=f"longest accepted line in bytes (default {DEFAULT_MAX_LINE_BYTES})",
    )
    return p


def run(args: argparse.Namespace) -> int:
    schema = load_schema(args.schema)
    reports = run_files(args.files, schema=schema, max_line_bytes=args.max_line_bytes)
    code = exit_code(reports, args.fail_on)
    if args.json:
        write(
            dumps(
                {
                    "files": [report_json(r) for r in reports],
                    "summary": summary_json(reports, args.fail_on, code),
                }
            )
        )
        return code
    out: list[str] = []
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
