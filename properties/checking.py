"""One pass of the rule monitors (and optionally the schema) over one recorded transcript.

Owns: ``check_stream`` (what ``acp-model check`` and ``acp-model replay`` run per input, and what
tests, benchmarks and the live recorder call), the per-file ``FileReport`` it fills in, and the
cap on findings kept (``max_findings``: the rest are counted by severity, never lost from the
exit code).

Failing levels: ``must`` fails on errors (MUST / MUST NOT breaches, input findings that lose a
line, schema findings); ``should`` fails on warnings too. Obligations still open at the end of
the input, and input the reader tolerated, are information and never fail a check, unless the
input is declared complete (``complete``): then an open obligation is a breach at the last line.

While a transcript is judged, CPython's full collections wait (``full_collections_paused``).

Must not know: how lines are split and decoded, what any monitor checks, how reports are
rendered, or the command line. Under a variant the monitor set has already set aside the
findings of dropped rules; the report carries their count (``set_aside``).
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from properties.engine import MonitorSet
from properties.findings import Finding
from properties.live import LiveCheck
from properties.live import MessageHook as MessageHook  # (the hook check_stream takes)
from properties.transcript import DEFAULT_MAX_LINE_BYTES, TranscriptStats, stream_read
from properties.variants import Variant

if TYPE_CHECKING:  # the schema checker (and jsonschema) is imported only when a schema is given
    from properties.schema_check import SchemaChecker

FAIL_SEVERITIES = {"must": frozenset({"error"}), "should": frozenset({"error", "warning"})}
SEVERITIES = ("error", "warning", "info")
DEFAULT_MAX_FINDINGS = 1000
"""Findings kept per input by default; the rest are counted (``FileReport.cut``)."""

_NEVER = 10**9
"""A full-collection threshold no check reaches (young collections between full ones)."""


@contextmanager
def full_collections_paused() -> Iterator[None]:
    """Postpone CPython's full (oldest-generation) collections. What a check keeps (each
    session's records, every message ID the rules may ask about) is long-lived and grows with the
    input; a full collection scans all of it and frees nothing: 2.3 s of 8.6 s checking 10^6
    messages over 166,667 sessions, the same peak memory without them. Young collections still
    free short-lived cycles; the thresholds are restored afterwards."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)


@dataclass
class FileReport:
    """Everything a check has to say about one input."""

    path: str
    stats: TranscriptStats
    findings: list[Finding] = field(default_factory=list)
    """Breaches, schema and input findings (kinds "rule" and "input"), in the order found."""
    open: list[Finding] = field(default_factory=list)
    """Obligations still open at the end of the input (kind "open")."""
    exercised: Counter[str] = field(default_factory=Counter)
    schema: bool = False
    cut: Counter[str] = field(default_factory=Counter)
    """Findings not kept because ``max_findings`` was reached, by severity."""
    max_findings: int | None = None
    readings: dict[str, str] = field(default_factory=dict)
    """Every reading's alternative in force for this check (``properties.readings``)."""
    variant: Variant | None = None
    """The variant in force (``properties.variants``), or None: the spec as written."""
    set_aside: Counter[str] = field(default_factory=Counter)
    """Findings of rules the variant dropped, by rule: not findings, not failures."""
    complete: bool = False
    """The input was declared complete: open obligations were judged as breaches."""

    def severities(self) -> Counter[str]:
        counts: Counter[str] = Counter(f.severity for f in (*self.findings, *self.open))
        counts.update(self.cut)
        return counts

    def levels(self) -> Counter[str]:
        return Counter(f.level for f in self.findings)

    def failing(self, fail_on: str) -> bool:
        bad = FAIL_SEVERITIES[fail_on]
        return any(f.severity in bad for f in self.findings) or any(self.cut[s] for s in bad)

    @property
    def judged(self) -> bool:
        """Whether the input held anything to judge (at least one message)."""
        return self.stats.messages > 0


def check_stream(
    stream: BinaryIO,
    path: str,
    *,
    monitors: MonitorSet | None = None,
    schema: SchemaChecker | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    on_message: MessageHook | None = None,
    max_findings: int | None = None,
    complete: bool = False,
) -> FileReport:
    """Read one transcript and judge it (``properties.live.LiveCheck``, reading ``stream`` to its
    end); ``on_message`` sees every message that was used.

    Findings are kept in the order they were made, up to ``max_findings`` (None: all).
    ``complete``: the user declares that the transcript holds everything the peers will ever
    send (``check --complete``): obligations still open at its end are breaches at its last
    line instead of information."""
    monitor_set = monitors if monitors is not None else MonitorSet()
    if schema is not None:
        schema.reset()
    live = LiveCheck(
        monitors=monitor_set,
        max_line_bytes=max_line_bytes,
        read=stream_read(stream),
        schema=schema,
        on_message=on_message,
        max_findings=max_findings,
    )
    with full_collections_paused():
        live.close(complete=complete)
    if live.error is not None:
        raise live.error
    return live_report(path, live)


def live_report(path: str, live: LiveCheck) -> FileReport:
    """What ``live`` has judged of the input ``path`` so far, with the configuration of the check
    (schema, ``max_findings``, completeness) and of its monitor set (readings, variant):
    ``check_stream``'s report, and ``record``'s summary."""
    findings, still_open = live.snapshot()
    monitors = live.monitors
    return FileReport(
        path,
        live.stats,
        findings=findings,
        open=still_open,
        exercised=Counter(monitors.exercised),
        schema=live.schema is not None,
        cut=live.cut,
        max_findings=live.max_findings,
        readings=dict(monitors.readings),
        variant=monitors.variant,
        set_aside=Counter(monitors.set_aside),
        complete=live.complete,
    )
