"""The field monitor: required fields of notices, usage updates, session-directed messages and
compaction updates ("Session notices", "Session usage updates", "Session-directed messages",
"Session compaction").

Each check looks at one message alone, so each breach is certain at its line:

- NOTICE-02: ``severity`` is a string (present, not null); ``title`` a non-empty string.
- USAGE-02: ``used`` and ``size`` are non-negative integers (present, not null); a ``cost`` that is
  present and not null has a numeric ``amount`` and a string ``currency``.
- SDM-01: ``session_message`` and ``session_message_chunk`` carry a string ``messageId``.
- COMPACT-02: ``compactionId`` and ``status`` are strings on every ``compaction_update``;
  ``compactionId`` a string and ``content`` an object on every ``compaction_summary_chunk``.

A compaction's lifecycle (COMPACT-03, COMPACT-05) and a terminal's (ENT-01: an exited terminal's
ID never live again) are the tables' of ``model.compaction`` and ``model.terminal``, fired by the
table monitor.

Tolerated: notices at any time a session exists (NOTICE-01), usage updates at any time
(USAGE-01), one compaction_update with ``completed`` and nothing else (COMPACT-01). Whether a
notice is replayed on resume cannot be told from the wire (a notice has no ID; NOTICE-06 is not
checkable), so nothing here judges it.

Must not know: any state across messages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from properties.monitor import Handler, Message, Monitor


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


class FieldMonitor(Monitor):
    """Per-message required fields (see module docstring)."""

    RULES = ("NOTICE-02", "USAGE-02", "SDM-01", "COMPACT-02")
    TOLERATES = ("NOTICE-01", "USAGE-01", "COMPACT-01")

    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        return (
            ("update", "notice", self._notice),
            ("update", "usage_update", self._usage),
            ("update", "session_message", self._session_message),
            ("update", "session_message_chunk", self._session_message),
            ("update", "compaction_update", self._compaction),
            ("update", "compaction_summary_chunk", self._compaction_chunk),
        )

    def _notice(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        self._ex["NOTICE-02"] += 1
        severity, title = upd.get("severity"), upd.get("title")
        if type(severity) is not str:
            self.breach("NOTICE-02", line, sid, f"notice severity is {severity!r}, not a string", msg)
        if type(title) is not str or not title:
            self.breach("NOTICE-02", line, sid, f"notice title is {title!r}, not a non-empty string", msg)

    def _usage(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        self._ex["USAGE-02"] += 1
        used, size = upd.get("used"), upd.get("size")
        if not _count(used) or not _count(size):
            self.breach(
                "USAGE-02",
                line,
                sid,
                f"usage_update needs token counts used and size (got {used!r}, {size!r})",
                msg,
            )
        cost = upd.get("cost")
        if cost is not None:
            amount = cost.get("amount") if type(cost) is dict else None
            currency = cost.get("currency") if type(cost) is dict else None
            if type(amount) not in (int, float) or type(currency) is not str:
                self.breach(
                    "USAGE-02", line, sid, f"usage_update cost {cost!r} lacks amount or currency", msg
                )

    def _session_message(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        self._ex["SDM-01"] += 1
        if type(upd.get("messageId")) is not str:
            self.breach("SDM-01", line, sid, f"{upd['sessionUpdate']} without a string messageId", msg)

    def _compaction(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        self._ex["COMPACT-02"] += 1
        cid, status = upd.get("compactionId"), upd.get("status")
        if type(cid) is not str or type(status) is not str:
            self.breach(
                "COMPACT-02",
                line,
                sid,
                f"compaction_update needs string compactionId and status (got {cid!r}, {status!r})",
                msg,
            )

    def _compaction_chunk(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        self._ex["COMPACT-02"] += 1
        if type(upd.get("compactionId")) is not str or type(upd.get("content")) is not dict:
            self.breach(
                "COMPACT-02",
                line,
                sid,
                "compaction_summary_chunk needs a string compactionId and a content block",
                msg,
            )

    def clone(self, owner: Any) -> FieldMonitor:
        new = FieldMonitor.__new__(FieldMonitor)
        new._attach(owner)
        return new

    def state_key(self) -> Any:
        return ()
