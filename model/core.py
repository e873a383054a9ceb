"""The table form every machine of the model is written in, and what can go wrong with it.

Theory of operation
-------------------
A machine is a ``MachineSpec``: a name, its states in the spec's order, one initial state, its
final states, and a total table of ``Row``s (trigger, source, dest, guard, section, actor, rule).
A (state, trigger) cell with no row is forbidden: firing it raises a ``ProtocolViolation`` that
names the rule the trigger breaks there (``MachineSpec.forbidden``) and who broke it, and the
state is left unchanged. A cell may hold two rows only when their guards are complementary
(``g`` and ``!g``), so the first passing guard can never hide another row.

A state may carry an eventual obligation (``MachineSpec.eventually``): the rule that an entity
must leave it in the end (a listed background item that finished must be removed).

Some triggers are hidden (``MachineSpec.hidden``): no message shows them, only what follows.
A checker that sees only the wire keeps the set of states an entity may be in (closed under
the hidden triggers, ``MachineSpec.unseen``) and judges each observed trigger against all of
them (``MachineSpec.fire_unseen``): the message is a breach only when no state is left, and
the rule named is that of the state reached with the fewest hidden steps. This is how trace
validation judges a log against a nondeterministic specification.

Guards are named predicates over a context mapping the caller passes with the event (for the
prompt machine: "is this the oldest held prompt?"). Their implementations live beside the
table, in ``MachineSpec.guards`` (each reads the caller's flag of its own name: ``flags``);
the table itself stays plain data that the fast explorer, the diagram code and
``acp-model machines`` read without running anything.

The same table drives two executions that tests keep in agreement:
- ``MachineSpec.fire(state, trigger, ctx)``: a pure dictionary lookup for explorers.
- ``Instance``: a live object driven by the ``transitions`` library (one shared ``Machine``
  per spec, models added with ``add_model``; ``auto_transitions`` off; a trigger whose guards
  all fail is turned into a violation, never a silent ``False``).

Variants (``properties.variants``) build changed copies of a spec with ``MachineSpec.changed``:
rows added or removed (the copy is checked like any spec), and ``relaxed`` rules, the rules a
variant dropped. In a relaxed spec, ``fire`` on a forbidden cell whose rule is relaxed no longer
raises: the state stays as it is (the event happened, the machine did not move); a guarded row
refused by a guard whose rule is relaxed is taken anyway (the guard no longer binds). A cell
emptied by a removed row raises the cell's rule with ``removed=True`` on the violation, so a
simulated peer can tell "the variant removed this move" from a seeded bug. Only ``fire`` knows
these; ``Instance`` (the transitions library) runs the rows as they are. ``written_refusal`` names
the rule a cell breaks with the relaxations ignored (a seeded bug that breaks a dropped rule
still breaks it: the simulated peers mark the breach, the checker sets it aside).

Every spec is checked when it is built (``check_graph``): one initial state, every state
reachable, no non-final trap states, and every non-final state able to reach a final state
(or the spec's ``home`` state, e.g. idle for the foreground machine). A failure names the
offending states.

Must not know: JSON-RPC, sessions, or any particular machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any, Literal

import networkx as nx
from transitions import Machine, MachineError

Actor = Literal["agent", "client"]
Context = Mapping[str, Any]
Guard = Callable[[Context], bool]

_EMPTY: Mapping[str, Any] = {}
Moves = tuple[tuple[str, str], ...]
"""(trigger, dest) pairs: what an actor may do from a state."""


class ProtocolViolation(Exception):
    """An event a machine does not allow in its current state.

    Carries fields, not only a message, so tools never parse the text.
    """

    actor: Actor = "agent"

    def __init__(self, rule: str, machine: str, state: str, event: str, detail: str = "") -> None:
        self.rule = rule
        self.machine = machine
        self.state = state
        self.event = event
        self.detail = detail
        self.removed = False
        """True when the move was refused only because a variant removed its row."""
        text = f"{self.actor} broke {rule}: {machine} cannot {event!r} in state {state!r}"
        super().__init__(f"{text} ({detail})" if detail else text)


class AgentViolation(ProtocolViolation):
    actor: Actor = "agent"


class ClientViolation(ProtocolViolation):
    actor: Actor = "client"


class SpecError(Exception):
    """A machine table that does not hold together (raised when the spec is built)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One transition of a machine table."""

    trigger: str
    source: str
    dest: str
    section: str
    """Spec section heading this row comes from."""
    actor: Actor = "agent"
    guard: str | None = None
    """Guard name, ``!name`` for its negation, or None."""
    note: str = ""

    @property
    def guard_name(self) -> str | None:
        return None if self.guard is None else self.guard.lstrip("!")

    @property
    def negated(self) -> bool:
        return self.guard is not None and self.guard.startswith("!")


Unseen = tuple[frozenset[str], tuple[ProtocolViolation, ...], tuple[str, ...]]
"""What ``MachineSpec.fire_unseen`` judged: (states after, violations, rules consulted)."""
Judged = tuple[tuple[str, Guard | None, bool], ...]
"""(dest, guard function or None, negated) of each row of a cell, in table order."""
Cells = tuple[tuple[str, Judged], ...]
"""(trigger, judged rows) of the cells of one state."""


@dataclass(frozen=True)
class MachineSpec:
    """A declarative state machine: states, initial, finals and a table of rows."""

    name: str
    title: str
    per: str
    """What one instance of the machine tracks (e.g. "session", "session/prompt request")."""
    states: tuple[str, ...]
    initial: str
    final: tuple[str, ...]
    rows: tuple[Row, ...]
    forbidden: Mapping[str | tuple[str, str], str]
    """Rule ID broken when a trigger fires where the table has no row for it: keyed by
    ``(state, trigger)`` for a cell-specific rule, else by ``trigger``."""
    guards: Mapping[str, Guard] = field(default_factory=dict)
    guard_rules: Mapping[str, str] = field(default_factory=dict)
    """guard name -> rule ID broken when a guarded row is refused by its guard."""
    home: str | None = None
    """A state every state must be able to reach (checked at build time)."""
    eventually: Mapping[str, str] = field(default_factory=dict)
    """state -> rule ID: an obligation to leave that state in the end (an entity still in it
    when the run ends breaks the rule: a breach at quiescence, an open obligation otherwise)."""
    description: str = ""
    relaxed: frozenset[str] = frozenset()
    """Rules a variant dropped: their forbidden cells leave the state as it is and their guards
    no longer refuse (see the module docstring)."""
    removed: tuple[Row, ...] = ()
    """Rows a variant removed (their cells raise with ``removed=True``)."""
    hidden: tuple[str, ...] = ()
    """Triggers no message shows: a proxy sees only what they lead to (a prompt held, or
    inserted before its user message is reported). ``unseen`` and ``fire_unseen`` judge an
    observed trigger against every state those steps may have reached."""

    def __post_init__(self) -> None:
        check_table(self)
        check_graph(self)

    # -- derived tables ------------------------------------------------------------------
    @cached_property
    def triggers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(row.trigger for row in self.rows))

    @cached_property
    def actor_of(self) -> Mapping[str, Actor]:
        return {row.trigger: row.actor for row in (*self.rows, *self.removed)}

    def changed(
        self,
        add: tuple[Row, ...] = (),
        remove: tuple[Row, ...] = (),
        relaxed: frozenset[str] = frozenset(),
    ) -> MachineSpec:
        """A copy with rows added and removed and rules relaxed, checked like any spec (a table
        that no longer holds together raises ``SpecError``)."""
        gone = set(remove)
        rows = tuple(r for r in self.rows if r not in gone) + tuple(add)
        return replace(self, rows=rows, relaxed=self.relaxed | relaxed, removed=(*self.removed, *remove))

    def relaxed_cells(self, rule: str) -> tuple[tuple[str, str], ...]:
        """The (state, trigger) cells without a row whose forbidding rule is ``rule`` (what
        dropping ``rule`` lets happen in this machine: the state then stays)."""
        return tuple(
            (state, trigger)
            for state in self.states
            for trigger in self.triggers
            if (state, trigger) not in self.cells and self.violation(state, trigger).rule == rule
        )

    def rules_stated(self, unobserved: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """Every rule the table states, in order: the forbidden entries that name a cell without
        a row (a table whose every cell has a row, like the entity table, states no rule a move
        can break), the guards of its guarded rows, its obligations; less those of the triggers
        ``unobserved`` names (never fired, so never broken)."""
        found: dict[str, None] = {}
        for key, rule in self.forbidden.items():
            trigger = key if isinstance(key, str) else key[1]
            cells = ((state, key) for state in self.states) if isinstance(key, str) else (key,)
            if trigger not in unobserved and any(cell not in self.cells for cell in cells):
                found.setdefault(rule, None)
        guarded = {
            row.guard_name for row in self.rows if row.guard is not None and row.trigger not in unobserved
        }
        for guard, rule in self.guard_rules.items():
            if guard in guarded:
                found.setdefault(rule, None)
        for rule in self.eventually.values():
            found.setdefault(rule, None)
        return tuple(found)

    @cached_property
    def consulted(self) -> Mapping[tuple[str, str], tuple[str, ...]]:
        """Per (state, trigger) cell, the rules that consulting it exercises: the cell's rule
        (``rule_of``) where the table states it or a variant relaxed it, and where its rows are
        guarded, the guard's rule (the cell's where the guard names none)."""
        stated = {*self.rules_stated(), *self.relaxed}
        found: dict[tuple[str, str], tuple[str, ...]] = {}
        for state in self.states:
            for trigger in self.actor_of:
                rule = self.rule_of(state, trigger)
                rules: tuple[str, ...] = (rule,) if rule in stated else ()
                rows = self.cells.get((state, trigger))
                if rows is not None and rows[0].guard is not None:
                    rules += (self.guard_rules.get(rows[0].guard_name or "", rule),)
                found[(state, trigger)] = rules
        return found

    @cached_property
    def cells(self) -> Mapping[tuple[str, str], tuple[Row, ...]]:
        index: dict[tuple[str, str], list[Row]] = {}
        for row in self.rows:
            index.setdefault((row.source, row.trigger), []).append(row)
        return {key: tuple(rows) for key, rows in index.items()}

    def moves(self, state: str, actor: Actor = "agent", ctx: Context = _EMPTY) -> Moves:
        """What ``actor`` may do from ``state``: ``(trigger, dest)`` of each row whose guard
        passes on ``ctx``, in table order (a relaxed cell is not a move: what a dropped rule lets
        happen is the business of the seeded bug that breaks it). A simulated peer's choices
        for an entity are these, so a row a variant adds is a move it takes."""
        plain, guarded = self._moves_from[(state, actor)]
        if guarded is None:
            return plain
        found: list[tuple[str, str]] = []
        for trigger, rows in guarded:
            for dest, guard, negated in rows:
                if guard is None or guard(ctx) != negated:
                    found.append((trigger, dest))
                    break
        return tuple(found)

    def allowed(self, state: str, actor: Actor = "agent", ctx: Context = _EMPTY) -> frozenset[str]:
        """The triggers of ``moves`` (read once per state where no row has a guard)."""
        found = self._allowed_from.get((state, actor))
        if found is None:
            found = frozenset(trigger for trigger, _ in self.moves(state, actor, ctx))
        return found

    @cached_property
    def _allowed_from(self) -> Mapping[tuple[str, str], frozenset[str]]:
        return {
            key: frozenset(trigger for trigger, _ in plain)
            for key, (plain, guarded) in self._moves_from.items()
            if guarded is None
        }

    @cached_property
    def _moves_from(self) -> Mapping[tuple[str, str], tuple[Moves, Cells | None]]:
        """Per (state, actor): the moves when no row there has a guard, else the cells to judge."""
        index: dict[tuple[str, str], tuple[Moves, Cells | None]] = {}
        for state in self.states:
            for actor in ("agent", "client"):
                cells = tuple(
                    (trigger, self._judged[(state, trigger)])
                    for trigger in self.triggers
                    if (rows := self.cells.get((state, trigger), ())) and rows[0].actor == actor
                )
                plain = tuple((trigger, rows[0][0]) for trigger, rows in cells)
                guarded = any(guard is not None for _, rows in cells for _, guard, _ in rows)
                index[(state, actor)] = (plain, cells if guarded else None)
        return index

    @cached_property
    def _judged(self) -> Mapping[tuple[str, str], Judged]:
        """Per (state, trigger) cell: each row as ``(dest, guard, negated)``, its guard's function
        looked up once (how ``successor`` and ``moves`` read a row)."""
        return {
            key: tuple(
                (row.dest, None if row.guard_name is None else self.guards[row.guard_name], row.negated)
                for row in rows
            )
            for key, rows in self.cells.items()
        }

    # -- execution -------------------------------------------------------------------------
    def violation(
        self, state: str, trigger: str, rule: str | None = None, detail: str = ""
    ) -> ProtocolViolation:
        actor = self.actor_of.get(trigger, "agent")
        cls = ClientViolation if actor == "client" else AgentViolation
        return cls(rule or self.rule_of(state, trigger), self.name, state, trigger, detail)

    def rule_of(self, state: str, trigger: str) -> str:
        """The rule of the (state, trigger) cell: the one its refusal breaks (a cell with rows
        is still "about" that rule: consulting it exercises the rule)."""
        return self.forbidden.get((state, trigger)) or self.forbidden.get(trigger, "model")

    def successor(self, state: str, trigger: str, ctx: Context = _EMPTY) -> str | None:
        """The state after ``trigger`` in ``state``, or None where ``fire`` raises (the one
        statement of how a cell is read: rows, guards, a variant's relaxed rules)."""
        rows = self._judged.get((state, trigger))
        if rows is None:
            if trigger not in self.actor_of:
                raise SpecError(f"{self.name}: unknown trigger {trigger!r}")
            return state if self.relaxed and self.rule_of(state, trigger) in self.relaxed else None
        for dest, guard, negated in rows:
            if guard is None or guard(ctx) != negated:
                return dest
        if self.relaxed:  # a guard whose rule the variant dropped no longer refuses
            first = self.cells[(state, trigger)][0]
            if self.guard_rules.get(first.guard_name or "") in self.relaxed:
                return first.dest
        return None

    def fire(self, state: str, trigger: str, ctx: Context = _EMPTY) -> str:
        """The state after ``trigger`` in ``state``; raises the named violation otherwise."""
        after = self.successor(state, trigger, ctx)
        if after is None:
            raise self._refused(state, trigger, ctx)
        return after

    def written_refusal(self, state: str, trigger: str, ctx: Context = _EMPTY) -> str | None:
        """The rule firing ``trigger`` in ``state`` breaks under ``ctx`` by the rows and guards
        as they stand, a relaxed rule included (what a variant dropped is still broken: its
        findings are set aside, the move is not conforming), or None where a row allows it."""
        rows = self._judged.get((state, trigger))
        if rows is not None and any(guard is None or guard(ctx) != negated for _, guard, negated in rows):
            return None
        if rows is None and trigger not in self.actor_of:
            raise SpecError(f"{self.name}: unknown trigger {trigger!r}")
        return self._refused(state, trigger, ctx).rule

    def _refused(self, state: str, trigger: str, ctx: Context) -> ProtocolViolation:
        """The violation of a cell ``successor`` refuses: the cell's rule, or its guard's."""
        rows = self.cells.get((state, trigger))
        if rows is None:
            refused = self.violation(state, trigger)
        else:
            failed = rows[0].guard_name or ""
            refused = self.violation(
                state, trigger, self.guard_rules.get(failed), f"guard {rows[0].guard!r} refused"
            )
        return self._mark(refused, state, trigger, ctx)

    @cached_property
    def _pure(self) -> dict[Any, Any]:
        """``unseen`` (keyed by the states) and ``fire_unseen`` (by the states and the trigger's
        name) of what was asked with an empty context: guards are pure functions of the
        context, so the answer never changes (the checker asks the same few, message after
        message)."""
        return {}

    def unseen(self, states: frozenset[str], ctx: Context = _EMPTY) -> frozenset[str]:
        """``states`` and every state the hidden triggers reach from them (their guards read
        ``ctx``; a refused hidden step is simply not taken)."""
        if not ctx:
            closed = self._pure.get(states)
            if closed is None:
                closed = self._pure[states] = self._closure(states, ctx)
            return closed
        return self._closure(states, ctx)

    def _closure(self, states: frozenset[str], ctx: Context) -> frozenset[str]:
        found = set(states)
        todo = list(states)
        while todo:
            state = todo.pop()
            for trigger in self.hidden:
                after = self.successor(state, trigger, ctx)
                if after is not None and after not in found:
                    found.add(after)
                    todo.append(after)
        return frozenset(found)

    @cached_property
    def start(self) -> frozenset[str]:
        """The states an entity may be in before its first observed trigger: the initial state
        and every state the hidden triggers reach from it (``unseen``)."""
        return self.unseen(frozenset((self.initial,)))

    def fire_unseen(
        self, states: frozenset[str], trigger: str | Callable[[str], str], ctx: Context = _EMPTY
    ) -> Unseen:
        """Judge an observed trigger when hidden steps may have happened before it.

        ``states`` are the states the entity may be in (closed under ``unseen``); ``trigger``
        names the trigger, or chooses it per state (one wire message may mean a different
        trigger in different states). Returns the states it may be in afterwards (closed again);
        when none is left (the message is a breach), the violations of the states it ruled out
        in the order of ``self.states``: the first is the one reached with the fewest hidden
        steps when the states are listed in lifecycle order; and the rule of each cell consulted
        (``rule_of``, one per state: consulting a cell exercises its rule)."""
        if ctx or not isinstance(trigger, str):
            return self._fire_unseen(states, trigger, ctx)
        found = self._pure.get((states, trigger))
        if found is None:
            found = self._pure[(states, trigger)] = self._fire_unseen(states, trigger, ctx)
        return found

    def _fire_unseen(
        self, states: frozenset[str], trigger: str | Callable[[str], str], ctx: Context
    ) -> Unseen:
        after: set[str] = set()
        ruled_out: list[tuple[str, str]] = []
        rules: list[str] = []
        for state in states:
            name = trigger if isinstance(trigger, str) else trigger(state)
            rules.append(self.rule_of(state, name))
            found = self.successor(state, name, ctx)
            if found is None:
                ruled_out.append((state, name))
            else:
                after.add(found)
        if after:
            return self.unseen(frozenset(after), ctx), (), tuple(rules)
        ruled_out.sort(key=lambda cell: self.states.index(cell[0]))
        return frozenset(), tuple(self._refused(state, name, ctx) for state, name in ruled_out), tuple(rules)

    def _mark(self, refused: ProtocolViolation, state: str, trigger: str, ctx: Context) -> ProtocolViolation:
        """Flag a refusal that a removed row would have allowed (``ProtocolViolation.removed``)."""
        for row in self.removed:
            if (
                row.source == state
                and row.trigger == trigger
                and (
                    row.guard is None or self.guards[row.guard_name](ctx) != row.negated  # type: ignore[index]
                )
            ):
                refused.removed = True
                why = "row removed by the variant"
                refused.detail = f"{refused.detail}; {why}" if refused.detail else why
                refused.args = (f"{refused.args[0]} (row removed by the variant)",)
                break
        return refused

    # -- the transitions library ---------------------------------------------------------
    @cached_property
    def machine(self) -> Machine:
        """One shared ``transitions.Machine`` for every live instance of this spec."""
        transitions: list[dict[str, Any]] = []
        for row in self.rows:
            entry: dict[str, Any] = {"trigger": row.trigger, "source": row.source, "dest": row.dest}
            if row.guard is not None:
                guard = self.guards[row.guard_name]  # type: ignore[index]
                entry["unless" if row.negated else "conditions"] = [guard]
            transitions.append(entry)
        return Machine(
            model=None,
            states=list(self.states),
            transitions=transitions,
            initial=self.initial,
            auto_transitions=False,
            ignore_invalid_triggers=False,
            send_event=False,  # a guard is called with the trigger's argument, the context
            name=self.name,
        )


class Instance:
    """A live object of one machine, stepped through the ``transitions`` library."""

    state: str

    def __init__(self, spec: MachineSpec) -> None:
        self.spec = spec
        spec.machine.add_model(self, initial=spec.initial)

    def fire(self, trigger: str, ctx: Context = _EMPTY) -> str:
        before = self.state
        if trigger not in self.spec.actor_of:
            raise SpecError(f"{self.spec.name}: unknown trigger {trigger!r}")
        try:
            moved = self.spec.machine.events[trigger].trigger(self, ctx)
        except MachineError:
            moved = False
        if not moved:  # a trigger whose guards all fail is a violation, never a silent False
            raise self.spec._refused(before, trigger, ctx)
        return self.state

    def detach(self) -> None:
        self.spec.machine.remove_model(self)


def flags(**defaults: bool) -> dict[str, Guard]:
    """Guards that each read the context flag of their own name, ``defaults`` giving its value
    when the caller passes none (``guards=flags(oldest_held=True)``)."""
    return {name: partial(_flag, name, default) for name, default in defaults.items()}


def _flag(name: str, default: bool, ctx: Context) -> bool:
    return bool(ctx.get(name, default))


# -- checks at build time ---------------------------------------------------------------------


def check_table(spec: MachineSpec) -> None:
    problems: list[str] = []
    states = set(spec.states)
    if len(states) != len(spec.states):
        problems.append("duplicate state names")
    if spec.initial not in states:
        problems.append(f"initial state {spec.initial!r} is not a state")
    for f in spec.final:
        if f not in states:
            problems.append(f"final state {f!r} is not a state")
    for state in spec.eventually:
        if state not in states:
            problems.append(f"eventually: {state!r} is not a state")
    for trigger in spec.hidden:
        if trigger not in spec.actor_of:
            problems.append(f"hidden trigger {trigger!r} is no trigger of the table")
    for row in spec.rows:
        for s in (row.source, row.dest):
            if s not in states:
                problems.append(f"row {row.trigger}: {s!r} is not a state")
        if row.guard is not None and row.guard_name not in spec.guards:
            problems.append(f"row {row.trigger}: guard {row.guard!r} has no implementation")
        if not row.section:
            problems.append(f"row {row.trigger} from {row.source}: no spec section")
        if spec.actor_of[row.trigger] != row.actor:
            problems.append(f"trigger {row.trigger!r} is fired by both agent and client")
    for (source, trigger), rows in spec.cells.items():
        if len(rows) == 1:
            continue
        guards = sorted(r.guard or "" for r in rows)
        if (
            len(rows) != 2
            or guards[0] == ""
            or guards[0].lstrip("!") != guards[1].lstrip("!")
            or (guards[0].startswith("!") == guards[1].startswith("!"))
        ):
            problems.append(f"overlapping rows for ({source}, {trigger}): guards {guards}")
    for trigger in {r.trigger for r in spec.rows}:
        if trigger not in spec.forbidden:
            problems.append(f"trigger {trigger!r} has no rule for where it is forbidden")
    if problems:
        raise SpecError(f"{spec.name}: " + "; ".join(problems))


def graph_of(spec: MachineSpec) -> nx.MultiDiGraph:
    """The machine as a networkx multigraph: nodes are states, one edge per row."""
    g = nx.MultiDiGraph(name=spec.name)
    g.add_nodes_from(spec.states)
    for i, row in enumerate(spec.rows):
        g.add_edge(row.source, row.dest, key=i, trigger=row.trigger, guard=row.guard or "")
    return g


def check_graph(spec: MachineSpec) -> None:
    g = graph_of(spec)
    problems: list[str] = []
    reachable = nx.descendants(g, spec.initial) | {spec.initial}
    unreachable = [s for s in spec.states if s not in reachable]
    if unreachable:
        problems.append(f"unreachable states {unreachable}")
    finals = set(spec.final)
    traps = [s for s in spec.states if s not in finals and g.out_degree(s) == 0]
    if traps:
        problems.append(f"non-final trap states {traps}")
    targets = set(finals)
    if spec.home is not None:
        targets.add(spec.home)
    if targets:
        stuck = [s for s in spec.states if s not in targets and not (nx.descendants(g, s) & targets)]
        if stuck:
            problems.append(f"states that can reach no final or home state {stuck}")
    if spec.home is not None:
        cut_off = [s for s in spec.states if s != spec.home and spec.home not in nx.descendants(g, s)]
        if cut_off:
            problems.append(f"{spec.home!r} is not reachable from {cut_off}")
    if problems:
        raise SpecError(f"{spec.name}: " + "; ".join(problems))
