"""Findings: what a monitor or the transcript reader reports.

Owns: the one value type every checker returns, and the mapping from a rule's normative level
to a severity. A finding always names the rule it is about, so tools never parse text.

Kinds:
- ``rule``: a breach of a catalogued rule, certain from the order of messages seen.
- ``open``: an "eventually" obligation still open at the end of the input (information only:
  a transcript cut mid-turn is not a breach).
- ``input``: a line that could not be used (bad JSON, wrong shape, too long, ...).
- ``suspect``: a breach the messages make likely but cannot prove, because the step that
  decides it is not on the wire (the explanation says which); a warning whatever the rule's
  level, never counted as a breach by the explorers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["rule", "open", "input", "suspect"]
Severity = Literal["error", "warning", "info"]

LEVEL_SEVERITY: dict[str, Severity] = {
    "MUST": "error",
    "MUST NOT": "error",
    "SHOULD": "warning",
    "SHOULD NOT": "warning",
    "MAY": "info",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a checker has to say about a transcript or a simulated run."""

    rule: str
    """Rule ID from the catalogue (``properties.catalogue``), or ``input.<problem>`` for input."""
    level: str
    """The rule's normative level (MUST, MUST NOT, SHOULD, SHOULD NOT), or ``input``/``info``."""
    line: int | None
    """1-based transcript position where the breach became certain (None: end of input)."""
    session: str | None
    explanation: str
    kind: Kind = "rule"
    message: Any = field(default=None, compare=False)
    """The message involved (the decoded JSON-RPC object), when there is one."""
    readings: tuple[str, ...] = field(default=(), compare=False)
    """Names of the readings (``properties.readings``) the verdict depends on."""

    @property
    def severity(self) -> Severity:
        if self.kind == "input":
            return "info" if self.level == "info" else "error"
        if self.kind == "open":
            return "info"
        if self.kind == "suspect":
            return "warning"
        return LEVEL_SEVERITY.get(self.level, "info")

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "level": self.level,
            "kind": self.kind,
            "severity": self.severity,
            "line": self.line,
            "session": self.session,
            "explanation": self.explanation,
            "readings": list(self.readings),
        }
