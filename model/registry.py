"""Every machine of the model, in the order ``acp-model machines`` lists them.

Owns: the list and its JSON form (the ``machines --json`` contract: name, states, initial,
final, transitions with trigger, source, dest, guard, section; the hidden triggers and the
states an instance must leave, with their rules).
Must not know: how any machine is executed.
"""

from __future__ import annotations

from typing import Any

from model import (
    background,
    compaction,
    elicitation,
    entity,
    foreground,
    permission,
    prompt,
    session,
    terminal,
    toolcall,
)
from model.core import MachineSpec

MACHINES: tuple[MachineSpec, ...] = (
    foreground.SPEC,
    prompt.SPEC,
    toolcall.SPEC,
    permission.SPEC,
    elicitation.SPEC,
    compaction.SPEC,
    terminal.SPEC,
    background.SPEC,
    entity.SPEC,
    session.SPEC,
)
BY_NAME: dict[str, MachineSpec] = {m.name: m for m in MACHINES}
_ROW_KEYS = ("trigger", "source", "dest", "guard", "section", "actor", "note")
"""The fields of a row in ``to_json``, in the contract's order."""


def to_json(spec: MachineSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "title": spec.title,
        "per": spec.per,
        "description": spec.description,
        "states": list(spec.states),
        "initial": spec.initial,
        "final": list(spec.final),
        "transitions": [{key: getattr(r, key) for key in _ROW_KEYS} for r in spec.rows],
        "forbidden": {(k if isinstance(k, str) else f"{k[0]}:{k[1]}"): v for k, v in spec.forbidden.items()},
        "hidden": list(spec.hidden),
        "eventually": dict(spec.eventually),
    }
