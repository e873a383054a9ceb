"""The stop-reason monitor: does the stop reason of the idle that ends work match how it ended
("Stop reasons")?

The idle that ends foreground work should name the corresponding stop reason (FG-06, with the
other statements of the group ``stop-reason-on-ending-idle``). That one is given at all is the
foreground monitor's. That a confirmed cancellation says ``cancelled`` is ``model.between``
``cancel_confirmed`` (``cancel_not_error`` when it says ``error``), judged here at the idle its
``confirming_idle`` names: the first idle after a ``session/cancel`` or ``session/close``
received while work was reported active (the shared ``Facts``: ``cancel_line``), whether it
follows the active state or an unknown or unrecognized state reported since, unless it is a
resume snapshot. Under ``cancel-takes-effect=when-acted`` the work may have ended on its own
before the Agent acted on the cancel, so its stop reason is not judged. What else of
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

from typing import TYPE_CHECKING, Any

from model import between as bw
from model import foreground as fgm
from properties.catalogue import RESTATED
from properties.monitor import Message, on, rule_group

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.monitors.common import ACTIVE
from properties.monitors.facts import FactsMonitor, SessionFacts
from properties.readings import CANCEL_TAKES_EFFECT

_STOP_GROUP = RESTATED["stop-reason-on-ending-idle"]
_RULE = _STOP_GROUP[0]
"""The group's first ID (FG-06), under which the group's findings are reported."""
_CANCEL_GROUP_KEY = rule_group(*RESTATED["cancelled-stop-reason"])
"""Exercised by every idle that ends cancelled work (the statements of the cancelled stop reason)."""


class StopReasonMonitor(FactsMonitor):
    """A ``cancelled`` stop reason no choice of the Client explains (see module docstring)."""

    RULES = (_RULE, bw.CANCEL_CONFIRMED.rule, bw.CANCEL_NOT_ERROR.rule)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.answered: dict[str, int] = {}
        """Session -> the interval of active work in which the Client last answered a request."""
        self.stopped: set[str] = set()
        """Sessions where the Client sent session/cancel or session/close since the last idle
        (while the reported state was not idle)."""

    @on("client-notification", "session/cancel")
    @on("client-request", "session/close")
    def _stop(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        fs = self.facts.sessions.get(sid) if sid is not None else None
        if sid is not None and fs is not None and fs.state != "idle":
            self.stopped.add(sid)

    @on("client-response", "session/request_permission")
    def _answered(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        fs = self.facts.sessions.get(sid) if sid is not None else None
        if sid is not None and fs is not None and fs.state in ACTIVE:
            self.answered[sid] = fs.interval

    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        if upd.get("state") != "idle":
            return
        stopped = sid in self.stopped
        self.stopped.discard(sid)
        fs = self.facts.sessions.get(sid)
        if fs is not None and self.between.confirming_idle(bool(fs.cancel_line), fs.resuming > 0):
            self._confirmation(fs, upd, sid, line, msg)
        if upd.get("stopReason") != fgm.CANCELLED:
            return
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

    def _confirmation(self, fs: SessionFacts, upd: dict[str, Any], sid: str, line: int, msg: Message) -> None:
        """The idle that ends the work a cancel covered (``model.between`` ``confirming_idle``):
        its stop reason confirms the cancellation (``confirmation_breach``)."""
        self._gx[_CANCEL_GROUP_KEY] += 1
        if self.between.own_end_after_cancel(self.reading(CANCEL_TAKES_EFFECT)):
            return  # the work may have ended on its own before the Agent acted on the cancel
        reason = upd.get("stopReason")
        broken = self.between.confirmation_breach(reason)
        if broken is None:
            return
        after = (
            ""
            if fs.state in ACTIVE
            else f" (reported after {fs.state!r}, which is no outcome and no cancellation: the "
            "cancelled work still owed this confirmation)"
        )
        self.breach(
            broken.rule,
            line,
            sid,
            f"the idle that ends work after the cancellation received at line {fs.cancel_line} has "
            f"stop reason {reason!r}, not {self.between.confirming_reasons()[0]!r}{after}",
            msg,
            (CANCEL_TAKES_EFFECT,),
        )

    def state_key(self) -> Any:
        out = []
        for sid, interval in self.answered.items():
            fs = self.facts.sessions.get(sid)
            out.append((sid, fs is not None and interval == fs.interval))
        return frozenset(out), frozenset(self.stopped)
