"""How the simulated peers apply their seeded bugs' deviations (``properties.bugs``).

Theory of operation
-------------------
The seeded bugs are declared in ``properties.seeded`` (one registry: name, side, what each
deviates, the rule it breaks); their kinds in ``properties.bugs``. This module gives the peers
what they ask of the deviations they run with: ``of`` picks a peer's among the faults switched
on; ``withheld`` and ``forced`` are what the Agent asks, per machine; ``rewrites`` / ``rewrite``
the message edits, ``copied`` the messages silenced or repeated and ``also`` the updates added,
per move; ``reused`` the IDs given again; ``stretched`` the Client triggers applied too widely;
``unchecked`` the rules not applied; ``offered`` the extra moves; ``rule`` the rule each breaks.

Must not know: the peers' records, monitors.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from model.core import Actor
from properties.bugs import (
    DROP,
    Again,
    Also,
    Copies,
    Deviation,
    Forbidden,
    Misread,
    Misview,
    Offer,
    Reuse,
    Rewrite,
    Stretch,
    Unchecked,
    Withhold,
)
from properties.bugs import rule_of as rule
from properties.seeded import SEEDED

__all__ = [
    "DEVIATIONS",
    "DROP",
    "Also",
    "Copies",
    "Deviation",
    "Forbidden",
    "Misread",
    "Offer",
    "Reuse",
    "Rewrite",
    "Stretch",
    "Unchecked",
    "Withhold",
    "rule",
]

DEVIATIONS: tuple[Deviation, ...] = tuple(s.bug for s in SEEDED if not isinstance(s.bug, Misview | Again))
"""The seeded bugs that deviate a peer's moves or messages, in the registry's order (not the
faulty views, nor a bug that runs another's deviation)."""


def of(faults: Iterable[str], side: Actor = "agent") -> tuple[Deviation, ...]:
    """``side``'s deviations among ``faults``, in this module's order."""
    names = set(faults)
    return tuple(d for d in DEVIATIONS if d.name in names and d.side == side)


def offered(deviations: Iterable[Deviation], event: str, state: str) -> tuple[Offer, ...]:
    """The Client's deviations that offer ``event`` from session ``state``."""
    return tuple(d for d in deviations if isinstance(d, Offer) and d.event == event and state in d.states)


def withheld(deviations: Iterable[Deviation], machine: str) -> frozenset[str]:
    """Triggers of ``machine`` the Agent never takes."""
    out: set[str] = set()
    for d in deviations:
        if isinstance(d, Withhold) and d.machine == machine:
            out |= d.triggers
    return frozenset(out)


def withholding(deviations: Iterable[Deviation], machine: str, trigger: str) -> Withhold | None:
    """The deviation that withholds ``trigger`` of ``machine``, if any."""
    return next(
        (d for d in deviations if isinstance(d, Withhold) and d.machine == machine and trigger in d.triggers),
        None,
    )


def forced(deviations: Iterable[Deviation], machine: str, state: str) -> tuple[Forbidden, ...]:
    """Forbidden cells of ``machine`` in ``state`` the Agent may fire."""
    return tuple(
        d for d in deviations if isinstance(d, Forbidden) and d.machine == machine and d.source == state
    )


def rewrites(deviations: Iterable[Deviation], action: str) -> tuple[Rewrite, ...]:
    """The rewrites of the messages of move ``action``."""
    return tuple(d for d in deviations if isinstance(d, Rewrite) and d.action == action)


def _matches(message: dict[str, Any], match: Mapping[str, Any]) -> bool:
    """The session update of ``message`` has the fields of ``match`` (a frozenset: one of them)."""
    upd = message.get("params", {}).get("update", {})
    return all(upd.get(k) in v if isinstance(v, frozenset) else upd.get(k) == v for k, v in match.items())


def rewrite(message: dict[str, Any], r: Rewrite) -> bool:
    """Apply ``r`` to ``message`` in place; True when it changed the message."""
    *where, name = r.path
    node: Any = message
    for key in where:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict) or name not in node or not _matches(message, r.match):
        return False
    if r.value is DROP:
        del node[name]
    elif callable(r.value):
        node[name] = r.value(node[name])
    else:
        node[name] = copy.deepcopy(r.value)
    return True


def misreads(deviations: Iterable[Deviation]) -> dict[str, Misread]:
    """The readings the Agent acts on another alternative of, by reading."""
    return {d.reading: d for d in deviations if isinstance(d, Misread)}


def also(deviations: Iterable[Deviation], action: str) -> tuple[Also, ...]:
    """The updates sent after the messages of move ``action``."""
    return tuple(d for d in deviations if isinstance(d, Also) and d.action == action)


def reused(deviations: Iterable[Deviation], kind: str) -> Reuse | None:
    """The deviation that gives new entities of type ``kind`` earlier IDs, if any."""
    return next((d for d in deviations if isinstance(d, Reuse) and d.kind == kind), None)


def stretched(deviations: Iterable[Deviation], machine: str) -> tuple[Stretch, ...]:
    """The Client triggers of ``machine`` the Agent applies to entities that arrive later."""
    return tuple(d for d in deviations if isinstance(d, Stretch) and d.machine == machine)


def unchecked(deviations: Iterable[Deviation]) -> frozenset[str]:
    """The rules the Agent does not apply."""
    return frozenset(d.rule for d in deviations if isinstance(d, Unchecked))


def copied(
    deviations: Iterable[Deviation], action: str, messages: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The messages move ``action`` sends under the ``Copies`` among ``deviations``, and the rules
    broken (those of the deviations whose messages matched)."""
    rules: list[str] = []
    for c in deviations:
        if not isinstance(c, Copies):
            continue
        if action not in (c.action if isinstance(c.action, tuple) else (c.action,)):
            continue
        out: list[dict[str, Any]] = []
        for msg in messages:
            if _matches(msg, c.match):
                out.extend(msg if i == 0 else copy.deepcopy(msg) for i in range(c.copies))
                rules.append(c.rule)
            else:
                out.append(msg)
        messages = out
    return messages, tuple(rules)
