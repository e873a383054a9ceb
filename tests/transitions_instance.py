"""A second execution of the model's tables, for tests and benchmarks: a live object stepped
through the ``transitions`` library, which the tests keep in agreement with ``MachineSpec.fire``.

``auto_transitions`` off; a trigger whose guards all fail is turned into the spec's violation,
never a silent ``False``. It runs the rows as they are: a variant's relaxed rules are known to
``fire`` only.
"""

from __future__ import annotations

from typing import Any

from transitions import Machine, MachineError

from model.core import MachineSpec, SpecError


class Instance:
    """A live object of one machine, stepped through the ``transitions`` library."""

    state: str

    def __init__(self, spec: MachineSpec) -> None:
        self.spec = spec
        transitions: list[dict[str, Any]] = []
        for row in spec.rows:
            entry: dict[str, Any] = {"trigger": row.trigger, "source": row.source, "dest": row.dest}
            if row.guard is not None:
                guard = spec.guards[row.guard_name]  # type: ignore[index]
                entry["unless" if row.negated else "conditions"] = [guard]
            transitions.append(entry)
        self.machine = Machine(
            model=self,
            states=list(spec.states),
            transitions=transitions,
            initial=spec.initial,
            auto_transitions=False,
            ignore_invalid_triggers=False,
            send_event=False,  # a guard is called with the trigger's argument, the context
            name=spec.name,
        )

    def fire(self, trigger: str, ctx: dict[str, Any] | None = None) -> str:
        before, ctx = self.state, ctx or {}
        if trigger not in self.spec.actor_of:
            raise SpecError(f"{self.spec.name}: unknown trigger {trigger!r}")
        try:
            moved = self.machine.events[trigger].trigger(self, ctx)
        except MachineError:
            moved = False
        if not moved:  # a trigger whose guards all fail is a violation, never a silent False
            raise self.spec._refused(before, trigger, ctx)
        return self.state
