"""The human and JSON renderings of check reports (``acp-model check``, ``replay``, ``record``
and ``drive`` print them alike).

Owns: the findings of one report grouped by rule with their paraphrase and section
(``render_findings``), the summary line, the variant's set-aside line, the per-file JSON
(``report_json``) and the summary JSON over several files (``summary_json``); and the live
forms ``record --check`` and ``drive`` show: one line per finding as it is made
(``finding_text``) and the end-of-session summary built from the same report (``summary_text``),
so a live session reads like a checked file.

Must not know: how a transcript is read or judged, exit codes, argument parsing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from properties.checking import SEVERITIES, FileReport, live_report
from properties.findings import Finding
from properties.live import LiveCheck
from properties.outputs import clip
from properties.readings import describe, resolve
from properties.transcript import TOLERATED
from properties.variants import Variant

MESSAGE_WIDTH = 120


def _compact(value: Any) -> str:
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, ValueError, RecursionError):
        return "(message not printable)"


def paraphrase(rule: str) -> str:
    """Our words for a rule with its section, or what an input or schema finding means."""
    if rule in TOLERATED:
        return "transcript line tolerated as it is (information)"
    if rule.startswith("input."):
        return "transcript line that could not be used as it stands"
    if rule.startswith("schema."):
        return f"{rule[7:]} message does not match the official ACP JSON Schema"
    from properties.catalogue import RULES_BY_ID

    entry = RULES_BY_ID.get(rule)
    if entry is None:
        return "(not in the rule catalogue)"
    return f"{entry.paraphrase} [{entry.section}]" if entry.section else entry.paraphrase


def _where(path: str, f: Finding) -> str:
    """``PATH:LINE`` (``end`` for no line) and `` session SID`` when the finding names one."""
    session = f" session {f.session}" if f.session is not None else ""
    return f"{path}:{'end' if f.line is None else f.line}{session}"


def _tag(f: Finding) -> str:
    return f"suspected, {f.severity}" if f.kind == "suspect" else f.severity


def _line_key(finding: Finding) -> tuple[int, int]:
    return (1, 0) if finding.line is None else (0, finding.line)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _sorted(counter: Counter[str]) -> dict[str, int]:
    """``counter`` as a dict in key order (how every count is shown)."""
    return {key: counter[key] for key in sorted(counter)}


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{key} {n}" for key, n in _sorted(counter).items()) or "none"


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
        yield f"  {rule} ({items[0].level}, {plural(len(items), 'finding')}): {paraphrase(rule)}"
        for f in items:
            yield f"    {_where(report.path, f)} [{_tag(f)}] {f.explanation}{_readings(report, f)}"
            if f.message is not None:
                yield f"      {clip(_compact(f.message), MESSAGE_WIDTH)}"
    if report.cut:
        yield (
            f"  ... {plural(sum(report.cut.values()), 'more finding')} not shown "
            f"(--max-findings {report.max_findings}; {_counts(report.cut)})"
        )
    if report.open:
        yield "  open at end of input (information only, not breaches):"
        for f in sorted(report.open, key=lambda f: (f.rule, *_line_key(f))):
            yield f"    {_where(report.path, f)} {f.rule} ({f.level}): {f.explanation}{_readings(report, f)}"


def summary_line(report: FileReport) -> str:
    st, sev = report.stats, report.severities()
    parts = [
        f"{plural(st.messages, 'message')} on {plural(st.lines, 'line')}",
        plural(len(st.sessions), "session"),
        f"findings: {plural(sev['error'], 'error')}, {plural(sev['warning'], 'warning')}, "
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
    if report.variant is not None:  # what the variant in force set aside
        n = sum(report.set_aside.values())
        which = f" ({_counts(report.set_aside)})" if n else ""
        yield (
            f"  variant {report.variant.name}: {plural(n, 'finding')} of dropped rules set aside{which}; "
            f"rules dropped: {', '.join(report.variant.drop) or 'none'}"
        )
    if report.exercised:
        yield "  exercised: " + ", ".join(f"{r}×{n}" for r, n in _sorted(report.exercised).items())
    if report.stats.preserved:
        yield "  preserved: " + _counts(report.stats.preserved)


def report_json(report: FileReport) -> dict[str, Any]:
    st, sev = report.stats, report.severities()
    extra: dict[str, Any] = {}
    if report.variant is not None:
        extra["set_aside"] = _sorted(report.set_aside)
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
        "by_level": _sorted(report.levels()),
        "open": len(report.open),
        "exercised": _sorted(report.exercised),
        "preserved": _sorted(st.preserved),
        "schema": "validated" if report.schema else "skipped",
        "judged": report.judged,
        "cut": {s: report.cut[s] for s in SEVERITIES if report.cut[s]},
    }


def summary_json(reports: Sequence[FileReport], fail_on: str, exit_code: int) -> dict[str, Any]:
    sev: Counter[str] = sum((r.severities() for r in reports), Counter())
    return {
        "files": len(reports),
        "messages": sum(r.stats.messages for r in reports),
        "sessions": sum(len(r.stats.sessions) for r in reports),
        "findings": {s: sev[s] for s in SEVERITIES},
        "by_level": _sorted(sum((r.levels() for r in reports), Counter())),
        "rules_exercised": len(set().union(*(r.exercised for r in reports))),
        "preserved": sum(r.stats.preserved.total() for r in reports),
        "schema": "validated" if reports and reports[0].schema else "skipped",
        "fail_on": fail_on,
        "exit_code": exit_code,
    }


# -- live sessions (record --check, drive) --------------------------------------------------------


def finding_text(path: str, f: Finding) -> str:
    """``PATH:LINE RULE (LEVEL) [severity] explanation`` (a line recorded as ``unparsed`` says so
    in its explanation: ``properties.transcript.UNPARSED_NOTE``)."""
    return f"{_where(path, f)} {f.rule} ({f.level}) [{_tag(f)}] {f.explanation}"


def summary_text(path: str, live: LiveCheck) -> str:
    """A live session's findings and summary line, as ``check`` prints a file's."""
    report = live_report(path, live)
    return "\n".join([f"{path}:", *render_findings(report), f"  summary: {summary_line(report)}"])


# -- a run over several files -------------------------------------------------------------------


def check_json(
    reports: Sequence[FileReport],
    fail_on: str,
    exit_code: int,
    readings: dict[str, str],
    variant: Variant | None,
) -> dict[str, Any]:
    """``acp-model check --json``: each file's report, the summary, the readings in force and,
    under a variant, what it set aside over all the files."""
    body: dict[str, Any] = {
        "files": [report_json(r) for r in reports],
        "summary": summary_json(reports, fail_on, exit_code),
        "readings": readings,
    }
    if variant is not None:
        aside = _sorted(sum((r.set_aside for r in reports), Counter()))
        body["variant"] = {**variant.to_json(), "set_aside": aside}
    return body


def check_text(reports: Sequence[FileReport], fail_on: str, exit_code: int, variant: Variant | None) -> str:
    """``acp-model check``'s text: the variant, each file's findings and summary, and a total
    line over several files."""
    out: list[str] = list(variant.describe()) if variant is not None else []
    for report in reports:
        out.extend(render_text(report))
    if len(reports) > 1:
        total = summary_json(reports, fail_on, exit_code)
        out.append(
            f"total: {plural(total['files'], 'file')}, {plural(total['messages'], 'message')}, "
            f"{plural(total['findings']['error'], 'error')}, "
            f"{plural(total['findings']['warning'], 'warning')}"
        )
    return "\n".join(out) + "\n"
