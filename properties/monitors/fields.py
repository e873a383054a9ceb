"""The field monitor: every session update against the fields ``model.fields`` requires of it
("Session notices", "Session usage updates", "Session-directed messages", "Session compaction").

It judges the messageId of user, agent and thought messages too ("Message IDs"). Each check
looks at one message alone, so each breach is certain at its line. Which variant
must carry which field, of which kind, under which rule, is the table ``model.fields.REQUIRED``;
this monitor names no rule: it reports each requirement a message misses, with the value found.

A compaction's lifecycle (COMPACT-03, COMPACT-05) and a terminal's (ENT-01) are the tables' of
``model.compaction`` and ``model.terminal``, fired by the table monitor.

Tolerated: notices at any time a session exists (NOTICE-01), usage updates at any time
(USAGE-01), one compaction_update with ``completed`` and nothing else (COMPACT-01). Whether a
notice is replayed on resume cannot be told from the wire (a notice has no ID; NOTICE-06 is not
checkable), so nothing here judges it.

Must not know: any state across messages.
"""

from __future__ import annotations

from typing import Any

from model import fields
from properties.monitor import Message, Monitor, on

_KIND_TEXT = {
    "string": "a string",
    "text": "a non-empty string",
    "count": "a non-negative integer",
    "object": "an object",
    "cost": "an object with a numeric amount and a string currency",
}


_RULES_OF: dict[str, tuple[str, ...]] = {
    variant: tuple(dict.fromkeys(req.rule for req in reqs)) for variant, reqs in fields.BY_VARIANT.items()
}
"""Per update variant, the rules its requirements state (each exercised by every such update)."""


class FieldMonitor(Monitor):
    """Per-message required fields (see module docstring)."""

    RULES = tuple(dict.fromkeys(r.rule for r in fields.REQUIRED))
    TOLERATES = ("NOTICE-01", "USAGE-01", "COMPACT-01")

    @on("update", *fields.BY_VARIANT)
    def _update(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        for rule in _RULES_OF[upd["sessionUpdate"]]:
            self._ex[rule] += 1
        for req in fields.missing(upd):
            found = repr(upd[req.field]) if req.field in upd else "missing"
            self.breach(
                req.rule,
                line,
                sid,
                f"{req.variant} needs {req.field} to be {_KIND_TEXT[req.kind]} (found {found})",
                msg,
            )

    def state_key(self) -> Any:
        return ()
