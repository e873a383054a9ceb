"""Self-contained HTML pages of judged runs (issue 34): see a run instead of reading JSON.

Owns: ``CheckPage``, what ``acp-model check --html`` and ``replay --html`` use: it runs the check
of one input with a recording (``diagrams.html.record``) and writes its page
(``diagrams.html.page``) atomically; and ``spec_text``, the spec text a page embeds (None when
``../shared`` is absent: the page then says so and has no spec links).

The modules: ``states`` (the machines' state and the client view as rows), ``record`` (the
deltas after each message), ``page`` (the HTML, with the style
and script it inlines: ``page.css``, ``page.js``).

Must not know: the command line (``cli`` parses the option and calls ``CheckPage``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from diagrams.html.page import Page, render
from diagrams.html.record import Recording, recorded_check
from properties.checking import FileReport
from properties.outputs import write_atomic
from properties.readings import describe, resolve
from properties.speclines import default_spec

__all__ = ["CheckPage", "Page", "Recording", "page_of", "recorded_check", "render", "spec_text"]


def spec_text(path: Path | None = None) -> str | None:
    """The spec text (default: ``../shared``), or None when it cannot be read."""
    try:
        return (path or default_spec()).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def page_of(report: FileReport, recording: Recording, title: str) -> Page:
    """The page of a checked input."""
    st, sev = report.stats, report.severities()
    summary = (
        f"{st.messages} messages on {st.lines} lines; {len(st.sessions)} sessions; findings: "
        f"{sev.get('error', 0)} errors, {sev.get('warning', 0)} warnings, "
        f"{sev.get('info', 0)} information; open at end: {len(report.open)}"
    )
    extra = []
    if report.cut:
        extra.append(
            f"{sum(report.cut.values())} more findings not shown (--max-findings {report.max_findings})"
        )
    if report.variant is not None:
        extra.append(
            f"variant {report.variant.name}: rules dropped: {', '.join(report.variant.drop) or 'none'}"
        )
    return Page(
        title=title,
        summary=summary,
        recording=recording,
        findings=[*report.findings, *report.open],
        readings=describe(report.readings or resolve({})),
        chosen=report.readings or resolve({}),
        extra=extra,
    )


class CheckPage:
    """Records the check of one input (``check``: the signature of ``check_stream``) and
    writes its page (``write``)."""

    def __init__(self, command: str = "check") -> None:
        self.command = command
        self.recording: Recording | None = None

    def check(self, stream: BinaryIO, path: str, **options: Any) -> FileReport:
        report, self.recording = recorded_check(stream, path, **options)
        return report

    def write(self, out: str, report: FileReport) -> None:
        assert self.recording is not None, "check() first"
        page = page_of(report, self.recording, f"acp-model {self.command}: {report.path}")
        write_atomic(out, render(page, spec_text()))
