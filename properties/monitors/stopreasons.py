"""The stop-reason monitor: does the stop reason of the idle that ends work match how it ended
("Stop reasons")?

The idle that ends foreground work should name the corresponding stop reason (FG-06, with the
other statements of the group ``stop-reason-on-ending-idle``). That one is given at all is the
foreground monitor's; that a confirmed cancellation says ``cancelled`` is TRANS-04. What else of
"corresponding" the wire shows: ``cancelled`` means the user or Client chose to stop the work,
with ``session/cancel``, by closing the session, or through an interaction the Agent offers (a
permission option that tells it to stop), not that the Agent hit a limit or failed. An idle that
ends active work with ``cancelled`` when, during that work, the Client neither cancelled nor
closed the session (the shared ``Facts``: ``cancel_line``) nor answered a permission request of
the Agent is a suspect of FG-06 (a warning: an interaction the Agent offers need not be a
request on the wire). A cancel or close received while a custom or unknown state was reported
counts too (that state may have replaced running: the work it cancelled may be the one that
ends). The other stop reasons name the Agent's own reasons, which the wire does
not show.

Gate: none; the record is one interval number per session that answered a request.

Must not know: tool calls, prompts, messages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from model import foreground as fgm
from properties.catalogue import RESTATED
from properties.monitor import Handler, Message, Monitor

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.monitors.common import ACTIVE
from properties.monitors.facts import Facts

_STOP_GROUP = RESTATED["stop-reason-on-ending-idle"]
_RULE = _STOP_GROUP[0]
"""The group's first ID (FG-06), under which the group's findings are reported."""


class StopReasonMonitor(Monitor):
    """A ``cancelled`` stop reason no choice of the Client explains (see module docstring)."""

    RULES = (_RULE,)
    REQUIRES = (Facts,)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.facts = owner.get(Facts)
        self.answered: dict[str, int] = {}
        """Session -> the interval of active work in which the Client last answered a request."""
        self.stopped: set[str] = set()
        """Sessions where the Client sent session/cancel or session/close since the last idle
        (while the reported state was not idle)."""

    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        return (
            ("update", "state_update", self._state),
            ("client-response", "session/request_permission", self._answered),
            ("client-notification", "session/cancel", self._stop),
            ("client-request", "session/close", self._stop),
        )

    def _stop(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        fs = self.facts.sessions.get(sid) if sid is not None else None
        if sid is not None and fs is not None and fs.state != "idle":
            self.stopped.add(sid)

    def _answered(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        fs = self.facts.sessions.get(sid) if sid is not None else None
        if sid is not None and fs is not None and fs.state in ACTIVE:
            self.answered[sid] = fs.interval

    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        if upd.get("state") != "idle":
            return
        stopped = sid in self.stopped
        self.stopped.discard(sid)
        if upd.get("stopReason") != fgm.CANCELLED:
            return
        fs = self.facts.sessions.get(sid)
        if fs is None or fs.state not in ACTIVE or fs.resuming:
            return  # no work ends here
        self._ex[_RULE] += 1
        if fs.cancel_line or stopped or self.answered.get(sid) == fs.interval:
            return
        self.suspect(
            _RULE,
            line,
            sid,
            "the idle ends the work with stop reason 'cancelled', but during that work the Client "
            "neither sent session/cancel nor closed the session nor answered a permission request: "
            "cancelled means the user or Client chose to stop the work (the Agent's own reasons "
            "are a limit, refusal or error)",
            msg,
        )

    def clone(self, owner: MonitorSet) -> StopReasonMonitor:
        new = StopReasonMonitor.__new__(StopReasonMonitor)
        new._attach(owner)
        new.facts = owner.get(Facts)
        new.answered = dict(self.answered)
        new.stopped = set(self.stopped)
        return new

    def state_key(self) -> Any:
        out = []
        for sid, interval in self.answered.items():
            fs = self.facts.sessions.get(sid)
            out.append((sid, fs is not None and interval == fs.interval))
        return frozenset(out), frozenset(self.stopped)
