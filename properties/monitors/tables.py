"""The table monitor: fires the model's machine tables with what the observer layer sees, and
judges every session update against the fields ``model.fields`` requires of it.

Owns: the state of every observed entity per session (``properties.observe.OBSERVED``), and
turning a forbidden cell of a table into a finding that names the cell's rule, the machine,
the state and the trigger. Nothing here states a rule: the tables in ``model/`` do.

A rule is exercised each time one of its cells is consulted, and an eventual obligation of a
state (``MachineSpec.eventually``) each time an entity enters that state (or is first seen in
it); an entity still in such a state at the end is reported by ``at_end``, at the line where it
entered that state, unless the table refused one of its moves (its state no longer follows the
wire: what it would still owe is a consequence of that breach). Inside a ``session/resume``
window the Agent replays history: re-sent updates of entities known before the window are not
transitions and are not judged; an entity first seen in the window is recorded, and its later
updates there are judged as live ones (a compaction that starts and completes before the resume
response has completed); snapshots are judged as always. A
finding whose cell's guard reads a reading (the observation's context names it) names that
reading.

Under a variant (``properties.variants``) the monitor fires the variant's tables
(``MonitorSet.tables``): rows added or removed there change the verdicts here, and a forbidden
cell of a dropped rule leaves the state as it is. A move allowed only because its rule was
dropped (the same table without the drops refuses it), and an obligation of a dropped rule
left at the end, are still reported: the monitor set sets such findings aside and counts them,
so a report says how often the variant let a dropped rule be broken.

The fields ("Session notices", "Session usage updates", "Session-directed messages", "Session
compaction", "Message IDs"): which update variant must carry which field, of which kind, under
which rule, is the table ``model.fields.REQUIRED``. Each check looks at one message alone, so
each breach is certain at its line; every requirement a message misses is reported with the
value found. Tolerated: notices at any time a session exists (NOTICE-01), usage updates at any
time (USAGE-01), one compaction_update with ``completed`` and nothing else (COMPACT-01). Whether
a notice is replayed on resume cannot be told from the wire (a notice has no ID; NOTICE-06 is
not checkable), so nothing here judges it.

Must not know: any rule ID, status or state name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from model import fields
from model.core import MachineSpec, ProtocolViolation
from properties.monitor import Message, on, rule_group
from properties.monitors.facts import SessionMonitor, subject_call
from properties.observe import (
    OBSERVED,
    REPLAYED,
    SNAPSHOTS,
    TOOL_CALL_UPDATE,
    UNOBSERVED,
    VARIANTS,
    Observation,
    Seen,
    left_behind,
    observe,
    resume_answered,
    resume_requested,
    snapshot,
)
from properties.readings import BY_NAME

_NONE: Mapping[str, frozenset[str]] = {}
_STRICT: dict[int, tuple[MachineSpec, MachineSpec, frozenset[tuple[str, str]]]] = {}
"""``_strict``'s answers, made once per table (tables are not hashable: each is kept by its id,
with itself, so that a table made later under a freed id is not mistaken for it)."""


def _strict(spec: MachineSpec) -> tuple[MachineSpec, frozenset[tuple[str, str]]]:
    """``spec`` with no rule relaxed (what it refuses is what a dropped rule forbade), and the
    (state, trigger) cells where that can differ: forbidden cells of a relaxed rule, and cells
    whose guard a relaxed rule states."""
    found = _STRICT.get(id(spec))
    if found is None or found[0] is not spec:
        strict = replace(spec, relaxed=frozenset())
        cells = {cell for rule in spec.relaxed for cell in strict.relaxed_cells(rule)}
        cells |= {
            cell
            for cell, rows in strict.cells.items()
            if strict.guard_rules.get(rows[0].guard_name or "") in spec.relaxed
        }
        found = _STRICT[id(spec)] = (spec, strict, frozenset(cells))
    return found[1], found[2]


def rules_of(
    specs: Iterable[MachineSpec], unobserved: Mapping[str, frozenset[str]] = _NONE
) -> tuple[str, ...]:
    """Every rule the tables state (``MachineSpec.rules_stated``), less those of the triggers
    ``unobserved`` names per machine (never fired from the wire, so never reported)."""
    return tuple(
        dict.fromkeys(
            rule for spec in specs for rule in spec.rules_stated(unobserved.get(spec.name, frozenset()))
        )
    )


def _dropped(spec: MachineSpec, state: str, trigger: str, ctx: Mapping[str, Any]) -> ProtocolViolation | None:
    """What ``spec`` refuses of a move its variant allows only because a rule was dropped (the
    same table without the drops refuses it for that rule), else None."""
    strict, cells = _strict(spec)
    if (state, trigger) in cells:
        try:
            strict.fire(state, trigger, ctx)
        except ProtocolViolation as broke:
            if broke.rule in spec.relaxed:
                return broke
    return None


_KIND_TEXT = {
    "string": "a string",
    "text": "a non-empty string",
    "count": "a non-negative integer",
    "object": "an object",
    "cost": "an object with a numeric amount and a string currency",
}
_FIELD_RULES: dict[str, str] = {
    variant: rule_group(*dict.fromkeys(req.rule for req in reqs))
    for variant, reqs in fields.BY_VARIANT.items()
}
"""Per update variant, the rules its required fields state (a ``rule_group``: each exercised by
every such update)."""


class TableMonitor(SessionMonitor[Seen]):
    """Executes the observed machines' tables (see module docstring)."""

    RULES = (*rules_of(OBSERVED, UNOBSERVED), *dict.fromkeys(r.rule for r in fields.REQUIRED))
    TABLES = OBSERVED
    TOLERATES = ("NOTICE-01", "USAGE-01", "COMPACT-01")
    SESSION = Seen

    @on("agent-request", "session/request_permission")
    def _asked(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        """A permission request's subject tool call is applied like a ``tool_call_update``."""
        call = subject_call(params)
        if sid is not None and call is not None:
            self._update(sid, {**call, "sessionUpdate": TOOL_CALL_UPDATE}, line, msg)

    @on("client-request", "session/resume")
    def _resume(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is not None:
            seen = self._session(sid)
            seen.fresh = frozenset()  # a new window: what the last one showed is history now
            replay = params.get("replayFrom") is not None
            self._fire(sid, seen, resume_requested(msg["id"], seen, replay), line, msg)

    @on("agent-response", "session/resume")
    def _resumed(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        seen = self.sessions.get(sid) if sid is not None else None
        if sid is not None and seen is not None:
            self._fire(sid, seen, resume_answered(msg["id"], "result" in msg, seen), line, msg)

    @on("update", *sorted(SNAPSHOTS))
    def _snapshot(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """A snapshot: the tables it fires, inside a resume's replay too."""
        seen = self.sessions.get(sid) or self._session(sid)
        found = snapshot(upd, seen, self._owner.readings, self.facts.quiet, self.facts.from_start(sid))
        if found:
            self._fire(sid, seen, found, line, msg)

    @on("update", *sorted(VARIANTS | set(fields.BY_VARIANT)))
    def _update(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """The fields the update must carry (``model.fields``), then the tables it fires (one
        handler: most updates need both; a replayed one fires none)."""
        variant = upd["sessionUpdate"]
        stated = _FIELD_RULES.get(variant)
        if stated is not None:
            self._gx[stated] += 1
            for req in fields.missing(variant, upd):
                shown = repr(upd[req.field]) if req.field in upd else "missing"
                self.breach(
                    req.rule,
                    line,
                    sid,
                    f"{req.variant} needs {req.field} to be {_KIND_TEXT[req.kind]} (found {shown})",
                    msg,
                )
        if variant not in VARIANTS:
            return
        seen = self.sessions.get(sid) or self._session(sid)
        waiting = None if seen.handshake is None else lambda: self._owner.client_awaits("session/prompt", sid)
        found = observe(variant, upd, seen, self._owner.readings, waiting)
        if found:
            self._fire(sid, seen, found, line, msg, self.facts.replaying(sid))

    def _fire(
        self, sid: str, seen: Seen, found: list[Observation], line: int, msg: Message, replaying: bool = False
    ) -> None:
        states = seen.states
        for spec, key, trigger, ctx in found:
            where = (spec.name, key)
            known = states.get(where)  # (None: first seen now)
            if replaying and spec.name in REPLAYED:
                if known is None:
                    seen.fresh = seen.fresh | {where}
                elif where not in seen.fresh:
                    return
            state = spec.initial if known is None else known
            spec = self.table(spec)
            for rule in spec.consulted.get((state, trigger), ()):  # (an unknown trigger: fire raises)
                self._ex[rule] += 1
            broke: ProtocolViolation | None = None
            try:
                states[where] = after = spec.fire(state, trigger, ctx)
                if (after != state or known is None) and after in spec.eventually:
                    self._ex[spec.eventually[after]] += 1
                    seen.entered[where] = line
                if spec.relaxed:  # allowed only because the variant dropped the rule?
                    broke = _dropped(spec, state, trigger, ctx)
            except ProtocolViolation as refused:
                seen.refused = seen.refused | {where, *left_behind(spec.name, key, state, trigger)}
                broke = refused
            if broke is not None:  # (set aside by the monitor set when its rule is dropped)
                why = f" ({broke.detail})" if broke.detail else ""
                what = f"{spec.title.lower()} {key!r}" if key else spec.title.lower()
                self.breach(
                    broke.rule, line, sid,
                    f"{what} is {state}, and the spec allows no {trigger!r} from that state{why} "
                    f"({broke.actor} broke {broke.rule})",
                    msg, tuple(name for name in ctx if name in BY_NAME),
                )  # fmt: skip

    def at_end(self, quiescent: bool) -> None:
        specs = {spec.name: self.table(spec) for spec in OBSERVED}
        for sid, seen in self.sessions.items():
            # only the entities left in a state that owes something are sorted (a session keeps
            # every entity it showed: sorting them all cost more than judging them)
            owing = [
                (where, state) for where, state in seen.states.items() if state in specs[where[0]].eventually
            ]
            for (machine, key), state in sorted(owing):
                if (machine, key) in seen.refused:  # its state no longer follows the wire
                    continue
                spec = specs[machine]
                rule = spec.eventually[state]  # a dropped rule's finding is set aside by the set
                self.eventually(
                    rule, quiescent, seen.entered.get((machine, key)), sid,
                    f"{spec.title.lower()} {key!r} is still {state} at the end, and the spec "
                    f"requires it to leave that state ({rule})",
                )  # fmt: skip

    def state_key(self) -> Any:
        return frozenset((sid, seen.key()) for sid, seen in self.sessions.items())
