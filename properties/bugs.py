"""The kinds of seeded bug: what a faulty peer does differently, stated as data.

Theory of operation
-------------------
A seeded bug (``properties.seeded``) is one of these, with the rule it breaks. The simulated
Agent and Client choose their moves from the tables (``MachineSpec.moves``); a deviation changes
a peer in one named way, instead of a branch inside it (``simulator.peers.deviations`` applies them):

- ``Withhold``: the Agent never takes some moves of a machine, so an obligation is skipped (a
  compaction that never ends, an inserted prompt never answered, the tool calls of cancelled
  work never given their final status). The broken rule is the table's obligation for the
  state left (``MachineSpec.eventually``) or, where the obligation is judged by a monitor and
  not by the table, the rule named here. The Agent marks it where a move it must make then
  leaves the withheld one out (ending foreground work with its tool calls still live), else
  once the world is quiescent (``Agent.omitted``), when the move is certainly never going to
  happen.
- ``Forbidden``: the Agent fires one forbidden cell of a table: ``trigger`` in ``source``,
  going to ``dest`` as the faulty Agent means it to (reusing a compaction's ID reopens it in
  progress; answering a withdrawn prompt with an error other than -32800 rejects it). The
  broken rule is the one the table refuses the cell under (the cell's, or its guard's for a row
  a guard refuses), never a literal here; where a reading's guard allows the cell, the move
  breaks nothing. With ``wire`` the move goes out, so the checker sees the breach on the wire;
  without it the model refuses the move (``ProtocolViolation``) and the run ends there. The
  rule is the spec's as written (``rule``, ``MachineSpec.written_refusal``): under a variant
  that drops it, the bug (switched on for the dropped rule) still breaks it and its move is
  made, on the wire or not; the checker sets the finding aside.
- ``Rewrite``: the peer makes its moves as the tables say, but one field of the messages of one
  move is wrong on the wire: dropped (``DROP``) or given another value. Such a bug breaks a rule of the
  messages' shape, not of a lifecycle, so the rule is named here; ``rewrite`` applies it to a
  message in place (the Agent's history holds the same message, as a faulty Agent's would).
- ``Copies``: the peer makes its move as the tables say, and keeps its records as if it had
  sent the move's messages, but those that match go out ``copies`` times: none (a report the
  move owes is skipped: running at a start, idle at an end, the answer of a refusal) or twice (a
  response sent twice). The rule is named here.
- ``Also``: after the messages of one move, the Agent also sends a session update no rule lets
  that move bring (a user message for a prompt it refused), until its rule is marked; the rule
  is named here. With ``reserve`` (an entity type), the update is about the next entity of that
  type the Agent will create: its ID is given now and kept for that entity (a user message
  reported before the prompt it will belong to was received).
- ``Reuse``: the Agent gives a new entity of one type (``model.clientview_parts.ENTITY_TYPES``)
  an ID it gave an earlier entity of that type and is done with (a user message: any earlier one,
  since a message ID is never given twice; a terminal: one that has exited), its first update
  carrying ``reset`` so that the entity is seen to start over. The rule (an ID given twice) is
  named here; the Agent marks it where it gives the ID (``Agent._new_id``).
- ``Stretch``: the Agent applies a Client trigger of a table (the ``cover`` of a
  ``session/cancel``) also to entities that reach it while the work that message stopped is
  still ending, as if the message had reached them too (prompts received after a cancel taken
  as cancelled); the rule (what the message covers) is named here.
- ``Unchecked``: the Agent does not apply one rule that relates several machines and that its
  own choices enforce at points named by the rule's ID (``Agent._applies``): a prompt's content
  against the capabilities it advertised (USER-04); a permission request of cancelled work no
  longer waited on and treated as refused, its tool call given up with the work (CANCEL-06); an
  elicitation only in a mode the Client advertised (TOOL-07).
  The moves only that rule kept from it are offered; the rule is the one named.
- ``Misread``: the Agent acts on another alternative of a reading than the run's
  (``properties.readings``): the moves only that alternative gives it break the rule named
  here, which the checker, reading the spec as the run does, holds them to (a tool call listed
  with the terminal that is its only work, under ``tool-with-listed-terminal=only-live-work``).
  The Agent marks the breach where it makes such a move (its ``misread`` table).
- ``Offer``: a peer takes one of its moves from session states or at times where the conforming
  peer does not: the Client a prompt before its resume is answered (the rule named here, marked
  by ``Client.do``); the Agent output of ended work after its idle where no reading lets it patch
  the ended work's message. The Agent's move marks the rule it breaks where it is not the
  conforming move (``Agent._do_late_output``: the rule named here, or the cancellation's
  CANCEL-14 after the idle that confirms a cancel).

- ``Misview``: the Client's view departs from the normative one (``model.clientview``):
  it folds the messages it sends and receives the way the named rule forbids. Nothing changes on
  the wire; the simulator compares the faulty view with the reference view after every step
  (``properties.viewcheck``), and the rule is named here.
- ``Again``: the deviation of another seeded bug (``of``), run under bounds of its own where the
  same move breaks another rule (output after an idle that confirms a cancel: CANCEL-14).

Every kind says whose it is (``side``) and which rule it breaks (``rule``).

Must not know: the peers, monitors, the simulator's configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from model.core import Actor, MachineSpec
from model.registry import BY_NAME

DROP: Final = object()
"""``Rewrite.value`` that removes the field."""


@dataclass(frozen=True, slots=True)
class _Kind:
    """What every kind says: the seeded bug's name and whose it is (``side``, given by keyword)."""

    name: str
    side: Actor = field(default="agent", kw_only=True)


@dataclass(frozen=True, slots=True)
class _Named(_Kind):
    """A kind whose rule is named here, not read from a table."""

    rule: str


@dataclass(frozen=True, slots=True)
class Withhold(_Kind):
    machine: str
    triggers: frozenset[str]
    rule: str | None = None
    """The obligation skipped, when no ``eventually`` of the table states it."""


@dataclass(frozen=True, slots=True)
class Forbidden(_Kind):
    machine: str
    source: str
    trigger: str
    dest: str
    wire: bool = True
    ctx: Mapping[str, Any] = field(default_factory=dict)
    """The faulty Agent's reason, as the table's guards read it (a refusal only because work is
    active: ``busy_only``)."""
    when: Mapping[str, Any] = field(default_factory=dict)
    """Where the cell is forbidden, as the table's guards read the Agent's own state (not
    replaced: a held prompt inserted while it is not the oldest waiting, ``oldest_held``)."""


@dataclass(frozen=True, slots=True)
class Rewrite(_Named):
    action: str
    """The peer's move (``Agent.do`` / ``Client.do`` event name) whose messages it rewrites."""
    path: tuple[str, ...]
    """Where the field is in the message (``params``, ``update``, ... or ``result``, ...)."""
    match: Mapping[str, Any] = field(default_factory=dict)
    """Fields of the session update the message must carry (empty: any message with the path)."""
    value: Any = DROP
    """The new value; a callable gets the old one (``DROP``: the field goes)."""
    unless: str = ""
    """A feature of the run under which the rewritten message breaks no rule (empty: none)."""


@dataclass(frozen=True, slots=True)
class Copies(_Named):
    action: str | tuple[str, ...]
    """The peer's move (or moves) whose messages go out ``copies`` times."""
    copies: int
    match: Mapping[str, Any] = field(default_factory=dict)
    """Fields of the session update the message must carry, a frozenset for any of its values
    (empty: every message of the move)."""


@dataclass(frozen=True, slots=True)
class Also(_Named):
    action: str
    update: Mapping[str, Any]
    """The session update sent after the move's messages, on the move's session."""
    reserve: str = ""
    """An entity type: the update's ``messageId`` is the ID the next entity of that type will
    get, given now (empty: the update as written)."""


@dataclass(frozen=True, slots=True)
class Reuse(_Named):
    kind: str
    """The entity type (``model.clientview_parts.ENTITY_TYPES``) whose IDs are given again."""
    reset: Mapping[str, Any] = field(default_factory=dict)
    """Fields the reused entity's first update carries, so that it is seen to start over."""


@dataclass(frozen=True, slots=True)
class Stretch(_Named):
    machine: str
    trigger: str
    """The Client's trigger (a row with ``actor="client"``) applied to later entities."""


@dataclass(frozen=True, slots=True)
class Unchecked(_Named):
    """The Agent does not apply ``rule`` (an ID its code names at the points it applies it)."""


@dataclass(frozen=True, slots=True)
class Misread(_Named):
    reading: str
    alternative: str
    """The alternative the Agent acts on."""


@dataclass(frozen=True, slots=True)
class Offer(_Named):
    event: str
    """The peer's event (``Client.enabled`` / ``Agent.enabled``) it also offers ..."""
    states: tuple[str, ...]
    """... from these session states (the Agent: wherever the move's own precondition holds)."""
    side: Actor = field(default="client", kw_only=True)


Deviation = Withhold | Forbidden | Rewrite | Copies | Also | Reuse | Stretch | Unchecked | Misread | Offer
"""A deviation of a peer's moves or messages (applied by ``simulator.peers.deviations``)."""


@dataclass(frozen=True, slots=True)
class Misview(_Named):
    """The Client's view breaks the client-view rule ``rule``."""

    side: Actor = field(default="client", kw_only=True)


@dataclass(frozen=True, slots=True)
class Again(_Named):
    of: str
    """The seeded bug whose deviation this one switches on (under its own bounds)."""


Bug = Deviation | Misview | Again
"""What a seeded bug deviates (``properties.seeded.Seeded.bug``)."""


def rule_of(d: Bug, specs: Mapping[str, MachineSpec] = BY_NAME) -> str:
    """The rule ``d`` breaks: the forbidden cell's rule in its table, the obligation of the states
    a withheld move is owed in (unless named), or the rule named in ``d``. A property of the
    deviation, so judged by the spec as written (``specs``' default): under a variant that drops
    the rule the deviation still breaks it (the checker sets the finding aside), and a variant
    that adds the cell as a row makes the bug's move an ordinary one, not a rule it breaks."""
    if isinstance(d, Forbidden):
        found = specs[d.machine].written_refusal(d.source, d.trigger, {**d.when, **d.ctx})
        if found is None:
            raise ValueError(f"{d.name}: the {d.machine} table allows {d.trigger} in {d.source}")
        return found
    if isinstance(d, Withhold):
        if d.rule is not None:
            return d.rule
        spec = specs[d.machine]
        owed = {spec.eventually[s] for s in spec.states if any(m[0] in d.triggers for m in spec.moves(s))}
        if len(owed) != 1:
            raise ValueError(f"{d.name}: the moves withheld are owed under {sorted(owed)}: name the rule")
        return owed.pop()
    return d.rule
