"""The monitor engine: one online pass over a stream of wire messages.

Owns: the ``Monitor`` base class, the ``MonitorSet`` that feeds every monitor one message at a
time, the count of how often each rule's check was exercised, and the split between
"certain now" breaches (reported by ``feed``) and "eventually" obligations (reported by
``finish``). The same code serves recorded transcripts (``acp-model check``) and simulated runs.

Proxy-view semantics: lines arrive in the order a proxy between the peers saw them (agent lines
in the agent's send order, client lines in the agent's receive order). A monitor flags only what
is certain from that order.

Must not know: files, JSON decoding, or how the messages were produced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, ClassVar

from properties.findings import Finding

Message = dict[str, Any]


class Monitor:
    """Base class of every monitor.

    Subclasses list the rule IDs they implement in ``RULES`` and override ``on_message`` (and
    ``at_end`` for "eventually" rules). They report through ``self.breach`` / ``self.open`` and
    count a rule as exercised with ``self.exercise`` whenever its trigger condition is met.
    """

    RULES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, owner: MonitorSet) -> None:
        self._owner = owner

    # -- hooks ---------------------------------------------------------------------------
    def on_message(self, sender: str, msg: Message, line: int) -> None:
        """Called for every decoded JSON-RPC message, ``sender`` is "client" or "agent"."""

    def at_end(self, quiescent: bool) -> None:
        """Judge "eventually" rules. ``quiescent``: the simulator proved nothing more can happen
        (open obligations are breaches); otherwise the input merely ended (they are ``open``)."""

    # -- reporting -----------------------------------------------------------------------
    def exercise(self, rule: str) -> None:
        self._owner.exercised[rule] += 1

    def breach(
        self, rule: str, line: int | None, session: str | None, explanation: str, message: Any = None
    ) -> None:
        self._owner.add(
            Finding(rule, self._owner.level_of(rule), line, session, explanation, "rule", message)
        )

    def eventually(
        self,
        rule: str,
        quiescent: bool,
        line: int | None,
        session: str | None,
        explanation: str,
        message: Any = None,
    ) -> None:
        """Report an obligation still open: a breach at quiescence, information at end of input."""
        if quiescent:
            self.breach(rule, line, session, explanation + " (still open at quiescence)", message)
        else:
            self._owner.add(
                Finding(
                    rule,
                    self._owner.level_of(rule),
                    line,
                    session,
                    explanation + " (open at end of input)",
                    "open",
                    message,
                )
            )


class MonitorSet:
    """Runs a set of monitors over one stream of messages."""

    def __init__(self, monitors: Iterable[type[Monitor]] | None = None) -> None:
        if monitors is None:
            from properties.monitors import ALL_MONITORS

            monitors = ALL_MONITORS
        self.exercised: Counter[str] = Counter()
        self.findings: list[Finding] = []
        self._new: list[Finding] = []
        self.monitors: list[Monitor] = [m(self) for m in monitors]
        self._levels: dict[str, str] = {}

    def level_of(self, rule: str) -> str:
        level = self._levels.get(rule)
        if level is None:
            from properties.catalogue import RULES_BY_ID

            entry = RULES_BY_ID.get(rule)
            level = entry.level if entry is not None else "MUST"
            self._levels[rule] = level
        return level

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)
        self._new.append(finding)

    def feed(self, sender: str, msg: Message, line: int) -> list[Finding]:
        """Feed one message; returns the findings it made certain (possibly none)."""
        for monitor in self.monitors:
            monitor.on_message(sender, msg, line)
        if not self._new:
            return []
        new, self._new = self._new, []
        return new

    def finish(self, quiescent: bool = False) -> list[Finding]:
        """Judge the "eventually" rules; returns the findings this produced."""
        for monitor in self.monitors:
            monitor.at_end(quiescent)
        new, self._new = self._new, []
        return new
