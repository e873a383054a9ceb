"""How live findings are shown: one line per finding as it is made, and the summary at the end.

Owns: the text of a live finding and the end-of-session summary of ``acp-model record --check``
and ``acp-model drive``, built from ``acp-model check``'s own report (``FileReport``) and
renderers, so a live session reads like a checked file. This is the one module that imports
them from ``cli.cmd_check``.

Must not know: processes, how the lines were made.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from properties.check_report import render_findings, report_json, summary_line
from properties.checking import FileReport
from properties.findings import Finding
from properties.live import LiveCheck


def file_report(path: str, live: LiveCheck) -> FileReport:
    findings, opened = live.snapshot()
    return FileReport(path, live.stats, findings, opened, live.exercised)


UNPARSED_NOTE = " (a line that is not JSON, recorded as unparsed)"


def finding_text(path: str, f: Finding, unparsed: Sequence[int] = ()) -> str:
    """``PATH:LINE RULE (LEVEL) [severity] explanation``; a line recorded as ``unparsed`` says so."""
    where = "end" if f.line is None else str(f.line)
    session = f" session {f.session}" if f.session is not None else ""
    tag = f"suspected, {f.severity}" if f.kind == "suspect" else f.severity
    text = f"{path}:{where}{session} {f.rule} ({f.level}) [{tag}] {f.explanation}"
    if f.kind == "input" and f.line in unparsed:
        text += UNPARSED_NOTE
    return text


def summary_lines(path: str, live: LiveCheck) -> Iterator[str]:
    report = file_report(path, live)
    yield f"{path}:"
    yield from render_findings(report)
    yield f"  summary: {summary_line(report)}"


def summary_text(path: str, live: LiveCheck) -> str:
    return "\n".join(summary_lines(path, live))


def summary_json(path: str, live: LiveCheck) -> dict[str, Any]:
    return report_json(file_report(path, live))
