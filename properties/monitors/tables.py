"""The table monitor: fires the model's machine tables with what the observer layer sees.

Owns: the state of every observed entity per session (``properties.observe.OBSERVED``), and
turning a forbidden cell of a table into a finding that names the cell's rule, the machine,
the state and the trigger. Nothing here states a rule: the tables in ``model/`` do.

A rule is exercised each time one of its cells is consulted. Inside a ``session/resume``
window the Agent replays history: re-sent updates of known entities are not transitions and
are not judged (entities first seen there are recorded).

Under a variant (``properties.variants``) the monitor fires the variant's tables
(``MonitorSet.tables``): rows added or removed there change the verdicts here, and a forbidden
cell of a dropped rule leaves the state as it is.

Must not know: any rule ID, status or state name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from model.core import MachineSpec, ProtocolViolation
from properties.engine import Handler, Message, MonitorSet
from properties.monitors.facts import Facts, SessionMonitor
from properties.observe import OBSERVED, UPDATES, observe


def _rules(specs: Iterable[MachineSpec]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for spec in specs:
        for rule in (*spec.forbidden.values(), *spec.guard_rules.values()):
            found.setdefault(rule, None)
    return tuple(found)


class _Session:
    """(machine name, entity key) -> state."""

    __slots__ = ("states",)

    def __init__(self) -> None:
        self.states: dict[tuple[str, str], str] = {}


class TableMonitor(SessionMonitor["_Session"]):
    """Executes the observed machines' tables (see module docstring)."""

    RULES = _rules(OBSERVED)
    SESSION = _Session
    REQUIRES = (Facts,)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)

    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        return tuple(("update", variant, self._update) for variant in UPDATES)

    def _update(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        states = self._session(sid).states
        replaying = self.facts.replaying(sid)
        tables = self._owner.tables

        def state_of(spec: MachineSpec, key: str) -> str:
            return states.get((spec.name, key), spec.initial)

        for spec, key, trigger in list(observe(upd, state_of)):
            where = (spec.name, key)
            if replaying and where in states:
                return
            state = states.get(where, spec.initial)
            if tables:
                spec = tables.get(spec.name, spec)
            self._ex[spec.violation(state, trigger).rule] += 1
            try:
                states[where] = spec.fire(state, trigger)
            except ProtocolViolation as broke:
                self.breach(
                    broke.rule, line, sid,
                    f"{spec.title.lower()} {key!r} is {state}: the model has no {trigger!r} there "
                    f"({broke.actor} broke {broke.rule})",
                    msg,
                )  # fmt: skip

    def clone(self, owner: MonitorSet) -> TableMonitor:
        new = TableMonitor.__new__(TableMonitor)
        new._attach(owner)
        new.facts = owner.get(Facts)
        new.sessions = {}
        for sid, record in self.sessions.items():
            copy = _Session()
            copy.states = dict(record.states)
            new.sessions[sid] = copy
        return new

    def state_key(self) -> Any:
        return frozenset((sid, frozenset(s.states.items())) for sid, s in self.sessions.items())
