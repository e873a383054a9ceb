"""Seeded bugs that are deviations from the machine tables, stated as data.

Theory of operation
-------------------
The simulated Agent and Client choose their moves from the tables (``MachineSpec.moves``). A
seeded bug of this module changes a peer in one named way, instead of a branch inside it:

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
  broken rule is the one the table refuses the cell under (``MachineSpec.refusal``: the cell's,
  or its guard's for a row a guard refuses), never a literal here; where a reading's guard
  allows the cell, the move breaks nothing. With ``wire`` the move goes out, so the checker
  sees the breach on the wire; without it the model refuses the move (``ProtocolViolation``)
  and the run ends there. The rule is the spec's as written (``rule``, ``MachineSpec.
  written_refusal``): under a variant that drops it, the bug (switched on for the dropped rule)
  still breaks it and its move is made, on the wire or not; the checker sets the finding aside.
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
- ``Reuse``: the Agent gives a new entity of one type (``model.entity.TYPES``) an ID it gave an
  earlier entity of that type and is done with (a user message: any earlier one, since a message
  ID is never given twice; a terminal: one that has exited), its first update carrying ``reset``
  so that the entity is seen to start over. The rule (an ID given twice) is named here; the
  Agent marks it where it gives the ID (``Agent._new_id``).
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
  with the terminal that is its only work, under ``tool-with-listed-terminal=no-other-work``).
  The Agent marks the breach where it makes such a move (``Agent._misread``).
- ``Offer``: a peer takes one of its moves from session states or at times where the conforming
  peer does not: the Client a prompt before its resume is answered (the rule named here, marked
  by ``Client.do``); the Agent output of ended work after its idle where no reading lets it patch
  the ended work's message. The Agent's move marks the rule it breaks where it is not the
  conforming move (``Agent._do_late_output``: the rule named here, or the cancellation's
  CANCEL-14 after the idle that confirms a cancel).

Every deviation says whose it is (``side``); ``of`` picks a peer's.

``withheld`` and ``forced`` are what the Agent asks, per machine, for the faults it runs with;
``rewrites`` / ``rewrite`` the message edits, ``copied`` the messages silenced or repeated and
``also`` the updates added, per move; ``reused`` the IDs given again; ``stretched`` the Client
triggers applied too widely; ``unchecked`` the rules not applied; ``offered`` the extra moves.

Must not know: the peers' records, monitors.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from model.core import Actor, MachineSpec
from model.foreground import CANCELLED, STOP_REASONS
from model.registry import BY_NAME
from simulator import wire

DROP: Final = object()
"""``Rewrite.value`` that removes the field."""


@dataclass(frozen=True, slots=True)
class Withhold:
    name: str
    machine: str
    triggers: frozenset[str]
    rule: str | None = None
    """The obligation skipped, when no ``eventually`` of the table states it."""
    side: Actor = "agent"


@dataclass(frozen=True, slots=True)
class Forbidden:
    name: str
    machine: str
    source: str
    trigger: str
    dest: str
    wire: bool = True
    side: Actor = "agent"
    ctx: Mapping[str, Any] = field(default_factory=dict)
    """The faulty Agent's reason, as the table's guards read it (a refusal only because work is
    active: ``busy_only``)."""


@dataclass(frozen=True, slots=True)
class Rewrite:
    name: str
    rule: str
    action: str
    """The peer's move (``Agent.do`` / ``Client.do`` event name) whose messages it rewrites."""
    path: tuple[str, ...]
    """Where the field is in the message (``params``, ``update``, ... or ``result``, ...)."""
    match: Mapping[str, Any] = field(default_factory=dict)
    """Fields of the session update the message must carry (empty: any message with the path)."""
    value: Any = DROP
    """The new value; a callable gets the old one (``DROP``: the field goes)."""
    side: Actor = "agent"
    unless: str = ""
    """A feature of the run under which the rewritten message breaks no rule (empty: none)."""


@dataclass(frozen=True, slots=True)
class Copies:
    name: str
    rule: str
    action: str | tuple[str, ...]
    """The peer's move (or moves) whose messages go out ``copies`` times."""
    copies: int
    match: Mapping[str, Any] = field(default_factory=dict)
    """Fields of the session update the message must carry, a frozenset for any of its values
    (empty: every message of the move)."""
    side: Actor = "agent"


@dataclass(frozen=True, slots=True)
class Also:
    name: str
    rule: str
    action: str
    update: Mapping[str, Any]
    """The session update sent after the move's messages, on the move's session."""
    side: Actor = "agent"
    reserve: str = ""
    """An entity type: the update's ``messageId`` is the ID the next entity of that type will
    get, given now (empty: the update as written)."""


@dataclass(frozen=True, slots=True)
class Reuse:
    name: str
    rule: str
    kind: str
    """The entity type (``model.entity.TYPES``) whose IDs are given again."""
    reset: Mapping[str, Any] = field(default_factory=dict)
    """Fields the reused entity's first update carries, so that it is seen to start over."""
    side: Actor = "agent"


@dataclass(frozen=True, slots=True)
class Stretch:
    name: str
    rule: str
    machine: str
    trigger: str
    """The Client's trigger (a row with ``actor="client"``) applied to later entities."""
    side: Actor = "agent"


@dataclass(frozen=True, slots=True)
class Unchecked:
    name: str
    rule: str
    """The rule the Agent does not apply (an ID its code names at the points it applies it)."""
    side: Actor = "agent"


@dataclass(frozen=True, slots=True)
class Misread:
    name: str
    rule: str
    reading: str
    alternative: str
    """The alternative the Agent acts on."""
    side: Actor = "agent"


@dataclass(frozen=True, slots=True)
class Offer:
    name: str
    rule: str
    event: str
    """The peer's event (``Client.enabled`` / ``Agent.enabled``) it also offers ..."""
    states: tuple[str, ...]
    """... from these session states (the Agent: wherever the move's own precondition holds)."""
    side: Actor = "client"


Deviation = Withhold | Forbidden | Rewrite | Copies | Also | Reuse | Stretch | Unchecked | Misread | Offer
_STATE = {"sessionUpdate": "state_update"}
_ENDED = frozenset(STOP_REASONS) - {CANCELLED}
_UPDATE = ("params", "update")

DEVIATIONS: tuple[Deviation, ...] = (
    Withhold("compaction-never-ends", "compaction", frozenset({"complete", "fail", "cancel"}), "COMPACT-05"),
    Withhold("never-answer-inserted", "prompt", frozenset({"answer"})),
    Withhold("prompt-without-work", "foreground", frozenset({"start", "start_blocked"}), "BOUND-02"),
    Withhold("cancel-leaves-tool-open", "tool_call", frozenset({"cancel"}), "CANCEL-17"),
    Withhold("error-with-live-tools", "tool_call", frozenset({"fail"}), "FAIL-04"),
    Forbidden("error-after-insert", "prompt", "inserted", "reject", "rejected"),
    Forbidden("withdraw-wrong-code", "prompt", "cancel_requested", "reject", "rejected"),
    Forbidden("close-withdraw-wrong-code", "prompt", "closed_out", "reject", "rejected"),
    Forbidden("list-before-announce", "background_item", "unannounced", "list", "listed"),
    Forbidden("list-twice", "background_item", "listed", "list", "listed"),
    Forbidden("remove-before-exit", "background_item", "listed", "unlist", "done"),
    Forbidden("reuse-compaction-id", "compaction", "completed", "progress", "in_progress"),
    Forbidden("reopen-tool-call", "tool_call", "completed", "run", "in_progress"),
    Forbidden("busy-refusal", "prompt", "held", "reject", "rejected", wire=False, ctx={"busy_only": True}),
    Forbidden("held-not-withdrawn", "prompt", "covered", "insert", "inserted", wire=False),
    Forbidden("response-before-snapshot", "session", "resuming", "resumed", "open"),
    Rewrite("usage-no-size", "USAGE-02", "usage", (*_UPDATE, "size")),
    Rewrite("notice-empty-title", "NOTICE-02", "notice", (*_UPDATE, "title"), value=""),
    Rewrite("drop-background-field", "BG-07", "end", (*_UPDATE, "background"), _STATE),
    Rewrite("compaction-no-status", "COMPACT-02", "compact_start", (*_UPDATE, "status")),
    Rewrite(
        "session-message-no-id",
        "SDM-01",
        "bg_start",
        (*_UPDATE, "messageId"),
        {"sessionUpdate": "session_message"},
    ),
    Rewrite(
        "chunk-no-message-id",
        "MSGID-01",
        "say",
        (*_UPDATE, "messageId"),
        {"sessionUpdate": "agent_message_chunk"},
    ),
    Rewrite("response-without-message-id", "ACC-04", "answer", ("result", "messageId")),
    Rewrite(
        "user-message-wrong-id",
        "ACC-06",
        "user_message",
        (*_UPDATE, "messageId"),
        value=lambda mid: f"{mid}_x",
    ),
    Rewrite(
        "replay-new-ids",
        "ACC-11",  # the retained user message keeps its ID
        "replay",
        (*_UPDATE, "messageId"),
        {"sessionUpdate": "user_message"},
        lambda mid: f"{mid}_r",
    ),
    Rewrite(
        "cancel-as-end-turn",
        "TRANS-04",
        "end",
        (*_UPDATE, "stopReason"),
        {"stopReason": "cancelled"},
        "end_turn",
    ),
    Rewrite(
        "custom-stop-reason-no-underscore",
        "STOP-03",
        "end",
        (*_UPDATE, "stopReason"),
        {"stopReason": "end_turn"},
        "paused",
    ),
    Rewrite(
        "custom-running-state",
        "STATE-04",
        "start",
        (*_UPDATE, "state"),
        {**_STATE, "state": "running"},
        "_busy",
        unless="future",  # the Client advertised custom states
    ),
    Rewrite("empty-prompt", "USER-01", "prompt", ("params", "prompt"), value=[], side="client"),
    Rewrite(
        "image-without-capability",
        "USER-03",
        "prompt",
        ("params", "prompt"),
        value=[wire.image()],
        side="client",
    ),
    Copies("no-running-on-start", "FG-02", "start", 0, {**_STATE, "state": "running"}),
    Copies("no-resume-running", "FG-04", "resume", 0, {**_STATE, "state": "running"}),
    Copies("no-idle-at-end", "FG-05", "end", 0, {**_STATE, "state": "idle", "stopReason": _ENDED}),
    Copies(
        "no-idle-after-cancel", "CANCEL-11", "end", 0, {**_STATE, "state": "idle", "stopReason": "cancelled"}
    ),
    Copies("silent-reject", "REJ-01", "reject", 0),
    Copies("answer-before-insert", "ACC-05", ("user_message", "user_chunks"), 0),
    Copies("answer-twice", "INTRO-02", "answer", 2),
    Also(
        "user-message-after-reject",
        "REJ-02",
        "reject",
        {"sessionUpdate": "user_message", "messageId": "msg_u_refused", "content": [wire.text("hi")]},
    ),
    Also(
        "user-message-ahead",
        "ACC-07",
        "insert",
        {"sessionUpdate": "user_message", "content": [wire.text("ahead")]},
        reserve="user_message",
    ),
    Reuse("reuse-message-id", "ACC-09", "user_message"),
    Reuse("terminal-reused", "ENT-01", "terminal", {"exitStatus": None}),
    Stretch("cancel-covers-later-prompts", "CANCEL-16", "prompt", "cover"),
    Unchecked("accept-unadvertised-content", "USER-04"),
    Unchecked("late-approval-runs", "CANCEL-06"),
    Forbidden("complete-before-accept", "elicitation", "pending", "complete", "completed"),
    Withhold("elicitation-not-withdrawn", "elicitation", frozenset({"withdraw"}), "CANCEL-19"),
    Unchecked("elicit-unadvertised", "TOOL-07"),
    Misread("list-tool-and-terminal", "BG-13", "tool-with-listed-terminal", "may-have-other-work"),
    Offer("prompt-during-resume", "INTRO-01", "prompt", ("resuming",)),
    Offer("update-after-idle", "DONE-03", "late_output", ("open", "closing"), side="agent"),
)


def rule(d: Deviation, specs: Mapping[str, MachineSpec] = BY_NAME) -> str:
    """The rule ``d`` breaks: the forbidden cell's rule in its table, the obligation of the states
    a withheld move is owed in (unless named), or the rule named in ``d``. A property of the
    deviation, so judged by the spec as written (``specs``' default): under a variant that drops
    the rule the deviation still breaks it (the checker sets the finding aside), and a variant
    that adds the cell as a row makes the bug's move an ordinary one, not a rule it breaks."""
    if isinstance(d, Forbidden):
        found = specs[d.machine].written_refusal(d.source, d.trigger, d.ctx)
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
