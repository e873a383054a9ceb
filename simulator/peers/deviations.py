"""How the simulated peers apply their seeded bugs' deviations (``properties.bugs``).

Theory of operation
-------------------
The seeded bugs are declared in ``properties.seeded`` (one registry: name, side, what each
deviates, the rule it breaks); their kinds in ``properties.bugs``. This module gives the peers
what they ask of the deviations they run with: ``of`` picks a peer's among the faults switched
on; ``matching`` those of one kind about one machine, state, move or type (the forbidden cells
of a state, the rewrites or added updates of a move, the IDs given again...); ``withheld`` the
triggers the Agent never takes, per machine; ``offered`` the extra moves from a session state;
``rewrite`` applies a message edit, ``copied`` the messages silenced or repeated (the rule each
breaks is ``properties.bugs.rule_of``'s).

Must not know: the peers' records, monitors.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from model.core import Actor
from properties.bugs import DROP, Again, Copies, Misview
from properties.bugs import Also as Also
from properties.bugs import Deviation as Deviation
from properties.bugs import Forbidden as Forbidden
from properties.bugs import Misread as Misread
from properties.bugs import Offer as Offer
from properties.bugs import Reuse as Reuse
from properties.bugs import Rewrite as Rewrite
from properties.bugs import Stretch as Stretch
from properties.bugs import Unchecked as Unchecked
from properties.bugs import Withhold as Withhold
from properties.seeded import SEEDED

DEVIATIONS: tuple[Deviation, ...] = tuple(s.bug for s in SEEDED if not isinstance(s.bug, Misview | Again))
"""The seeded bugs that deviate a peer's moves or messages, in the registry's order (not the
faulty views, nor a bug that runs another's deviation)."""


D = TypeVar("D", bound=Deviation)


def of(faults: Iterable[str], side: Actor = "agent") -> tuple[Deviation, ...]:
    """``side``'s deviations among ``faults``, in this module's order."""
    names = set(faults)
    return tuple(d for d in DEVIATIONS if d.name in names and d.side == side) if names else ()


def matching(deviations: Iterable[Deviation], cls: type[D], /, **fields: object) -> tuple[D, ...]:
    """The deviations of type ``cls`` whose ``fields`` have the values given (``Forbidden``
    cells of a machine's state, ``Rewrite`` and ``Also`` of a move's ``action``, ``Reuse`` of an
    entity type's IDs, ``Stretch`` of a machine, every ``Unchecked``, ``Misread``...)."""
    return tuple(
        d for d in deviations if isinstance(d, cls) and all(getattr(d, k) == v for k, v in fields.items())
    )


def offered(deviations: Iterable[Deviation], event: str, state: str) -> tuple[Offer, ...]:
    """The deviations that offer ``event`` from session ``state``."""
    return tuple(d for d in matching(deviations, Offer, event=event) if state in d.states)


def withheld(deviations: Iterable[Deviation], machine: str) -> frozenset[str]:
    """Triggers of ``machine`` the Agent never takes."""
    return frozenset().union(*(d.triggers for d in matching(deviations, Withhold, machine=machine)))


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
