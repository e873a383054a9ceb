"""The observer layer: which trigger of which machine of the model a wire message fires.

Owns: the mapping from an Agent's ``session/update`` to ``(machine, entity key, trigger,
context)`` for the per-entity machines whose steps show on the wire (tool calls, compactions,
terminals, background items), and ``Seen``, what the wire has shown of one session's observed
entities (each entity's state, the last concrete ``background`` list, the resume handshake under
way). Each trigger is chosen by the machine's own vocabulary (``model.toolcall.STATUS_TRIGGER``,
``model.compaction.trigger_for``, ``model.terminal.triggers_for``, ``model.background``), so what
a status means is stated once, in ``model/``; the table monitor (``properties.monitors.tables``)
fires the tables with these observations, and a forbidden cell is the finding.

Tool calls: the first report of a toolCallId fires ``start``; a reported status fires its
trigger (``model.toolcall.STATUS_TRIGGER``); a live status of a call with a final status fires
what the reading ``tool-call-after-final`` says (``model.toolcall.after_final``: the status's
trigger, a reopen, or ``start``, a new call under its ID; the context names the reading); a move
from one final status to another is fired only under the reading
``final-status-change=final-is-final`` (the context names the reading), and under
``reopen-only`` the call stays final. Compactions answer the same reading in
``model.compaction.trigger_for``.

Background items: an item's own update (``terminal_update``, ``tool_call_update``,
``subagent_update``) announces it, and an exitStatus or a final status finalizes it; a
``state_update`` with a concrete list lists what the last list did not name (once more for each
repeat inside the list) and removes what it no longer names, in ID order. An unfinished item
removed while the state is running or requires_action is observed as ``adopt`` (foreground work
may be waiting on it; the guard ``becomes_foreground`` is true when the reading
``waited-on-background`` says so, and the context names that reading). A child's own idle is
reported in its own session: a child leaving the list is observed as finalized there and then
removed, and a child the list still names while its own latest state is idle with an empty list
of its own (nothing of it runs) is observed as finalized before the list names it. An item
listed before it was announced counts as listed from its announcement on: a breach of its own
(BG-10) in a session seen from its creation. In any other (``from_start`` false: resumed, or set
up before the capture) the wire does not show the session's history: an item a list names that
the wire never showed announced is observed as announced there (out of view) and then listed,
since "before the first snapshot that lists it" ("Background work") may be before the
transcript ("Initial or resume snapshots report the current state without implying a
transition", "Initial state and synchronization").

The session: the ``session/resume`` handshake of the session table (``model.session``) is
observed: the request (``resume``), every ``state_update`` until the response (``snapshot``), an
entity update the wire shows to be replayed history (``replay``, ``_replayed``) and the success
response (``resumed``). Opening and closing the session are not observed here (the prompt rules
judge what a close stops), so the session is ``open`` outside a handshake.

Entities: every update or chunk of an ID-addressed entity (messages, thoughts, session-directed
messages, tool calls, terminals, plans, compactions) fires the entity table (``model.entity``)
on ``(type, ID)``: an upsert with content, without it, clearing it, or a chunk (``entity_step``,
the one classification of those updates, which the explorers' coverage reads too). The table
refuses nothing: it places the entity on the timeline and says whether it has content, which is
what tells a replayed entity (already known) from a new one in a resume window.

Machines whose steps are partly hidden from a proxy (foreground state against a cancel's
arrival, a prompt held or decided) are not observed here yet: their rules are still judged by
the hand-written monitors.

Must not know: findings, monitors, or how the tables are executed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from model import background, compaction, entity, foreground, session, terminal, toolcall
from model.clientview_parts import ACTIVE_STATES, valid_background
from model.core import Context, MachineSpec
from properties.monitor import Record
from properties.readings import RESUME_REPLAY_WINDOW, UNACCOUNTED_USER_MESSAGE

Key = tuple[str, str]
"""A background item or entity: (type, ID)."""


def background_keys(value: Any) -> list[Key] | None:
    """The items of a ``background`` value as (type, ID) keys, in list order (duplicates kept), or
    None when background is not reported: omitted, null, or malformed ("Background work": a
    malformed list leaves background unknown until a list is reported again). Malformed is what
    the client view refuses (``model.clientview_parts.valid_background``: not a list, an item
    that is no object with a string type, or an item of a known type without its string ID).
    Items of an unknown type are skipped: they do not invalidate the list."""
    if type(value) is not list or not valid_background(value):
        return None
    return [
        (item["type"], item[background.ID_FIELD[item["type"]]])
        for item in value
        if item["type"] in background.ID_FIELD
    ]


Observation = tuple[MachineSpec, str, str, Context]
"""(machine, entity key within the session, trigger, context for the table's guards: each
guard's value under its name, and the alternative in force of each reading a guard answers
for, under the reading's name)."""

OBSERVED: tuple[MachineSpec, ...] = (
    toolcall.SPEC,
    compaction.SPEC,
    terminal.SPEC,
    background.SPEC,
    entity.SPEC,
    session.SPEC,
)
"""The machines this layer drives from the wire."""
UNOBSERVED: dict[str, frozenset[str]] = {session.SPEC.name: frozenset({"close", "closed"})}
"""Triggers of those machines this layer never fires: opening and closing a session (the prompt
rules judge what a close stops; see the module docstring)."""

_NO_CTX: Context = {}
_ENTITY: Final = entity.SPEC.name
_LISTED = frozenset({background.LISTED, background.FINALIZED})
_UNFINISHED = frozenset({background.ANNOUNCED, background.LISTED})


SESSION_KEY = ""
"""The entity key of the session machine (one instance per session record)."""


@dataclass(slots=True, eq=False)
class Seen(Record):
    """What the wire has shown of one session's observed entities."""

    states: dict[tuple[str, str], str] = field(default_factory=dict)
    """(machine name, entity key) -> state (the machine's initial state when absent)."""
    entered: dict[tuple[str, str], int] = field(default_factory=dict)
    """(machine name, entity key) -> the line on which the entity entered its current state,
    kept for the states that owe something (``MachineSpec.eventually``): an obligation left
    open is reported at the line that opened it. Not part of ``key``: lines never are."""
    refused: frozenset[tuple[str, str]] = frozenset()
    """(machine name, entity key) of the entities a move of which the table refused, and of those
    such a refusal leaves behind the wire (``left_behind``): their state is no longer what the
    wire shows, so what they would still owe is not judged (it would be a consequence of the
    breach already reported), nor is their listing."""
    listed: frozenset[tuple[str, str]] = frozenset()
    """The items of the last concrete background list, as (type, ID). (The shared facts keep
    it too, but the table monitor is dispatched after them: there it is already the new list.)"""
    handshake: tuple[Any, str, bool] | None = None
    """(request ID, session state before it, whether it asked for a history replay) of the
    session/resume being answered."""
    fresh: frozenset[tuple[str, str]] = frozenset()
    """(machine name, entity key) of the entities first seen in the current resume window:
    their later updates there are live transitions, not replayed history."""
    idle_snapshot: bool = False
    """The latest snapshot of the resume being answered reported idle."""
    late: tuple[tuple[str, str], ...] | None = None
    """The context (readings) of the first replay the wire showed after the latest snapshot
    of the resume being answered, while no snapshot has followed it: the response's refusal
    rests on them."""

    def state_of(self, spec: MachineSpec, key: str) -> str:
        return self.states.get((spec.name, key), spec.initial)

    def reported(self, key: str) -> bool:
        """Whether an update or chunk of the entity ``key`` was fired before (the entity table
        placed it, or refused its first move under a variant's rows)."""
        where = (_ENTITY, key)
        return where in self.states or where in self.refused

    def key(self) -> Any:
        return (
            frozenset(self.states.items()),
            self.listed,
            self.handshake,
            self.fresh,
            self.idle_snapshot,
            self.late,
            self.refused,
        )


Observer = Callable[[dict[str, Any], Seen, Mapping[str, str]], Iterator[Observation]]
Waiting = Callable[[], bool] | None
Quiet = Callable[[str], bool]
"""Whether nothing of a session runs: its latest state is idle and its latest background list
is empty (``Facts.quiet``)."""


def item_key(kind: str, ident: str) -> str:
    """A background item's entity key: ``"terminal term_1"``."""
    return f"{kind} {ident}"


def _item(kind: str, ident: str, seen: Seen, finished: bool) -> Iterator[Observation]:
    key = item_key(kind, ident)
    state = seen.state_of(background.SPEC, key)
    if state == background.UNANNOUNCED:
        yield background.SPEC, key, "announce", _NO_CTX
        state = background.ANNOUNCED
        if (kind, ident) in seen.listed:  # listed too early (BG-10 there): listed from now on
            yield background.SPEC, key, "list", {"child": kind == "subagent"}
            state = background.LISTED
    if finished and state in (background.ANNOUNCED, background.LISTED):
        yield background.SPEC, key, "finalize", _NO_CTX


def _tool_call(upd: dict[str, Any], seen: Seen, readings: Mapping[str, str]) -> Iterator[Observation]:
    tid = upd.get("toolCallId")
    if type(tid) is not str:
        return
    status = upd.get("status")
    trigger = toolcall.status_trigger(status) if type(status) is str else None
    if (toolcall.SPEC.name, tid) not in seen.states:
        yield toolcall.SPEC, tid, "start", _NO_CTX
    current = seen.state_of(toolcall.SPEC, tid)
    if trigger is not None and (status != current or trigger == "custom_status"):
        if current in toolcall.FINAL and status not in toolcall.FINAL:  # reopened, or a new call?
            reading = readings.get(toolcall.AFTER_FINAL, "reopened")
            yield (
                toolcall.SPEC,
                tid,
                toolcall.after_final(current, trigger, reading),
                {toolcall.AFTER_FINAL: reading},
            )
        elif current not in toolcall.FINAL or status not in toolcall.FINAL:
            yield toolcall.SPEC, tid, trigger, _NO_CTX
        elif readings.get(toolcall.FINAL_CHANGE) == "final-is-final":
            yield toolcall.SPEC, tid, trigger, {toolcall.FINAL_CHANGE: "final-is-final"}
        # else (reopen-only): a corrected outcome, no move (the call stays final)
    if "content" in upd:
        yield toolcall.SPEC, tid, "replace_content", _NO_CTX
    yield from _item("tool_call", tid, seen, trigger is not None and status in toolcall.FINAL)


def _tool_call_chunk(upd: dict[str, Any], seen: Seen, readings: Mapping[str, str]) -> Iterator[Observation]:
    tid = upd.get("toolCallId")
    if type(tid) is str:
        if (toolcall.SPEC.name, tid) not in seen.states:
            yield toolcall.SPEC, tid, "start", _NO_CTX
        yield toolcall.SPEC, tid, "append_content", _NO_CTX


def _terminal(upd: dict[str, Any], seen: Seen, readings: Mapping[str, str]) -> Iterator[Observation]:
    ident = upd.get("terminalId")
    if type(ident) is str:
        exited = upd.get("exitStatus") is not None
        known = (terminal.SPEC.name, ident) in seen.states
        state = seen.state_of(terminal.SPEC, ident)
        for trigger in terminal.triggers_for(known, state, "exitStatus" in upd, exited):
            yield terminal.SPEC, ident, trigger, _NO_CTX
        yield from _item("terminal", ident, seen, exited)


def _terminal_chunk(upd: dict[str, Any], seen: Seen, readings: Mapping[str, str]) -> Iterator[Observation]:
    """Output of a terminal not seen yet creates it live."""
    ident = upd.get("terminalId")
    if type(ident) is str and (terminal.SPEC.name, ident) not in seen.states:
        yield terminal.SPEC, ident, "start", _NO_CTX


def _subagent(upd: dict[str, Any], seen: Seen, readings: Mapping[str, str]) -> Iterator[Observation]:
    child = upd.get("sessionId")
    if type(child) is str:
        yield from _item("subagent", child, seen, False)


def snapshot(
    upd: dict[str, Any],
    seen: Seen,
    readings: Mapping[str, str],
    quiet: Quiet,
    from_start: bool,
) -> list[Observation]:
    """The observations of a state_update (a snapshot, not an entity's update): the resume
    handshake's snapshot, and what its concrete background list lists, keeps and removes. A
    child the list names while nothing of it runs (``quiet``: its own latest state is idle with
    an empty list of its own) is finished first: a detached child is listed only while something
    of it runs ("Background work"), so naming it is the table's ``keep`` of a finalized item, or a
    ``list`` of a done one that is not a child running again.
    ``from_start``: the session's history is in view from its creation; else an item the list
    names that the wire never showed announced was announced out of view (before the transcript:
    the announcement need only precede "the first snapshot that lists it", which may precede the
    transcript too), and is observed as announced first."""
    out: list[Observation] = []
    if seen.handshake is not None:
        seen.idle_snapshot = seen.handshake[2] and upd.get("state") == foreground.IDLE  # replay asked
        seen.late = None
        out.append((session.SPEC, SESSION_KEY, "snapshot", _NO_CTX))
    keys = background_keys(upd.get("background"))
    if keys is None:
        return out
    prev = seen.listed
    cur = frozenset(keys)
    spec = background.SPEC
    refused = seen.refused
    idle = frozenset(ident for kind, ident in cur if kind == "subagent" and quiet(ident))
    for ident in sorted(idle):  # (a child whose own idle the parent's list did not follow)
        key = item_key("subagent", ident)
        if seen.state_of(spec, key) in _UNFINISHED and (spec.name, key) not in refused:
            out.append((spec, key, "finalize", _NO_CTX))
    for kind, ident in sorted(cur & prev):  # named again: the table says whether it still runs
        key = item_key(kind, ident)
        if (spec.name, key) not in refused:  # (a refused one's state no longer follows the wire)
            out.append((spec, key, "keep", _NO_CTX))
    if cur == prev and len(keys) == len(cur):
        return out
    repeats = (Counter(keys) - Counter(cur)).elements()  # named again inside the same list
    first, fresh = cur - prev, not from_start
    for kind, ident in [*sorted(cur - prev), *sorted(repeats)]:
        key = item_key(kind, ident)
        if (spec.name, key) not in refused:
            if fresh and (kind, ident) in first and seen.state_of(spec, key) == background.UNANNOUNCED:
                out.append((spec, key, "announce", _NO_CTX))  # (before the transcript: out of view)
            out.append((spec, key, "list", {"child": kind == "subagent" and ident not in idle}))
    state_now = upd.get("state")
    active = type(state_now) is str and state_now in ACTIVE_STATES
    for kind, ident in sorted(prev - cur):
        key = item_key(kind, ident)
        state = seen.state_of(spec, key)
        if kind == "subagent":
            if state in _LISTED:
                if state == background.LISTED:
                    out.append((spec, key, "finalize", _NO_CTX))
                out.append((spec, key, "unlist", _NO_CTX))
        elif state == background.DONE:
            continue  # finished when it was listed (BG-17 there): the table never held it listed
        elif state == background.LISTED and active:
            reading = readings.get(background.WAITED_ON, "")
            may = reading == "becomes-foreground"  # and the state is active: this branch
            out.append((spec, key, "adopt", {"becomes_foreground": may, background.WAITED_ON: reading}))
        else:
            out.append((spec, key, "unlist", _NO_CTX))
    seen.listed = cur
    return out


_REOPENING: Final = frozenset(
    {toolcall.STATUS_TRIGGER[status] for status in toolcall.LIVE} | {"custom_status", "start"}
)
"""The tool call table's triggers to a live status, and a new call under its ID: refused from a
final one (a reopen, or a new call: the reading ``tool-call-after-final``)."""


def left_behind(machine: str, key: str, state: str, trigger: str) -> tuple[tuple[str, str], ...]:
    """The entities, besides ``(machine, key)`` itself, whose state a refused move of it from
    ``state`` by ``trigger`` leaves behind the wire: a tool call reopened after its final status
    (the tool call table's refusal) is live again on the wire, so its background item's finished
    state no longer follows the wire either (listing it again is a consequence of that one
    breach). A refusal from a live status (a variant's removed row) leaves nothing behind."""
    if machine == toolcall.SPEC.name and state in toolcall.FINAL and trigger in _REOPENING:
        return ((background.SPEC.name, item_key("tool_call", key)),)
    return ()


def resume_requested(rid: Any, seen: Seen, replay: bool = False) -> list[Observation]:
    """A ``session/resume`` request of the session (``replay``: it carries a ``replayFrom``
    cursor): the handshake starts (one at a time: a request made while another is unanswered
    is not judged)."""
    if seen.handshake is not None:
        return []
    seen.handshake = (rid, seen.state_of(session.SPEC, SESSION_KEY), replay)
    seen.idle_snapshot, seen.late = False, None
    return [(session.SPEC, SESSION_KEY, "resume", _NO_CTX)]


def resume_answered(rid: Any, success: bool, seen: Seen) -> list[Observation]:
    """The response to a ``session/resume`` request. A success ends the handshake; an error
    leaves the session as it was before the request (the table has no row for a refused resume:
    nothing happened to the session)."""
    if seen.handshake is None or seen.handshake[0] != rid:
        return []
    before, late = seen.handshake[1], seen.late
    seen.handshake = seen.late = None
    if success:
        return [(session.SPEC, SESSION_KEY, "resumed", _NO_CTX if not late else dict(late))]
    seen.states[(session.SPEC.name, SESSION_KEY)] = before
    return []


def _compaction_started(cid: str, seen: Seen) -> Iterator[Observation]:
    """The first report of a compactionId (an update or a chunk) starts it in progress."""
    if (compaction.SPEC.name, cid) not in seen.states:
        yield compaction.SPEC, cid, "start", _NO_CTX


def _compaction(upd: dict[str, Any], seen: Seen, readings: Mapping[str, str]) -> Iterator[Observation]:
    cid = upd.get("compactionId")
    if type(cid) is not str:
        return
    yield from _compaction_started(cid, seen)
    status = upd.get("status")
    if type(status) is str:
        current = seen.state_of(compaction.SPEC, cid)
        final_change = readings.get(toolcall.FINAL_CHANGE, "reopen-only")
        trigger = compaction.trigger_for(current, status, final_change)
        if trigger is not None:
            ctx = compaction.final_change_context(current, trigger, final_change)
            yield compaction.SPEC, cid, trigger, _NO_CTX if ctx is None else ctx
    if "summary" in upd:
        yield compaction.SPEC, cid, "summary_patch", _NO_CTX


def _compaction_chunk(upd: dict[str, Any], seen: Seen, readings: Mapping[str, str]) -> Iterator[Observation]:
    cid = upd.get("compactionId")
    if type(cid) is str:
        yield from _compaction_started(cid, seen)
        yield compaction.SPEC, cid, "summary_chunk", _NO_CTX


TOOL_CALL_UPDATE: Final = "tool_call_update"
"""The update variant a permission request's subject tool call is applied as."""

UPDATES: dict[str, Observer] = {
    TOOL_CALL_UPDATE: _tool_call,
    "tool_call_content_chunk": _tool_call_chunk,
    "terminal_update": _terminal,
    "terminal_output_chunk": _terminal_chunk,
    "subagent_update": _subagent,
    "compaction_update": _compaction,
    "compaction_summary_chunk": _compaction_chunk,
}
"""``sessionUpdate`` variant -> its observations, in the order they apply (a snapshot's:
``snapshot``)."""

SNAPSHOTS = frozenset({"state_update"})
"""Variants that are snapshots, not updates of an entity (``snapshot``): judged inside a resume's
replay too."""
REPLAYED = frozenset(
    {toolcall.SPEC.name, compaction.SPEC.name, terminal.SPEC.name, background.SPEC.name, entity.SPEC.name}
)
"""Machines whose entities' updates a resume's replay re-sends (not transitions there)."""


# -- entities ----------------------------------------------------------------------------------
_ENTITIES: Final = {
    **{f"{kind}_chunk": (kind, "messageId", None) for kind in entity.MESSAGE_TYPES},
    "tool_call_content_chunk": ("tool_call", "toolCallId", None),
    "terminal_output_chunk": ("terminal", "terminalId", None),
    "compaction_summary_chunk": ("compaction", "compactionId", None),
    **{kind: (kind, "messageId", "content") for kind in entity.MESSAGE_TYPES},
    TOOL_CALL_UPDATE: ("tool_call", "toolCallId", "content"),
    "terminal_update": ("terminal", "terminalId", "output"),
    "compaction_update": ("compaction", "compactionId", "summary"),
    "plan_update": ("plan", "", "plan"),
}
"""Variant -> (entity type, ID field, content field: None for a chunk); a plan's ID is inside its
content."""


VARIANTS: Final = frozenset(UPDATES) | frozenset(_ENTITIES)
"""Every ``sessionUpdate`` variant ``observe`` makes observations of (the snapshots: ``snapshot``)."""


def entity_step(upd: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(entity key, trigger)`` of the entity table an update fires (``"agent_message msg_1"``,
    ``"chunk"``), or None when the update is no entity's (or names no ID)."""
    variant = upd.get("sessionUpdate")
    found = _ENTITIES.get(variant) if type(variant) is str else None
    return None if found is None else _entity_step(found, upd)


def _entity_step(found: tuple[str, str, str | None], upd: Mapping[str, Any]) -> tuple[str, str] | None:
    """``entity_step`` for the variant ``found`` describes (its ``_ENTITIES`` entry)."""
    kind, field, content = found
    if field:
        ident = upd.get(field)
    else:
        body = upd.get("plan")
        ident = body.get("planId") if type(body) is dict else None
    if type(ident) is not str:
        return None
    if content is None:
        return f"{kind} {ident}", "chunk"
    if content not in upd:
        return f"{kind} {ident}", "upsert_keep"
    return f"{kind} {ident}", entity.upsert_trigger(upd[content])


def observe(
    variant: str,
    upd: dict[str, Any],
    seen: Seen,
    readings: Mapping[str, str],
    waiting: Waiting = None,
) -> list[Observation]:
    """The observations an Agent update of ``variant`` (its ``sessionUpdate``, one of
    ``VARIANTS``) makes, given what the session has shown so far (read before any of them is
    fired) and, inside a resume handshake, ``waiting``: whether a prompt of the session awaits its
    answer (asked only when it matters)."""
    found, found_entity = UPDATES.get(variant), _ENTITIES.get(variant)
    out = [] if found is None else list(found(upd, seen, readings))
    if found_entity is None:  # (a tool call: no entity's update)
        return out
    step = _entity_step(found_entity, upd)
    if step is not None:
        if seen.handshake is not None:
            replayed = _replayed(*step, seen, readings, waiting)
            if replayed is not None:
                out.append((session.SPEC, SESSION_KEY, "replay", replayed))
                seen.late = tuple(replayed.items())
        out.append((entity.SPEC, step[0], step[1], _NO_CTX))
    return out


_MODEL_OUTPUT: Final = ("agent_message ", "agent_thought ")


def _replayed(
    key: str, trigger: str, seen: Seen, readings: Mapping[str, str], waiting: Waiting
) -> Context | None:
    """The context of the ``replay`` an update of the entity ``key`` inside a resume handshake
    shows, or None. Only replay shown after a snapshot of a resume that asked for a replay, with
    no prompt waiting (none is left whose insertion it could report), is observed: it sends the
    session table back to replaying, so that the response needs another snapshot after it (the
    snapshot comes "following any requested history replay", "Initial state and
    synchronization"); before the first snapshot replay changes nothing. There it is

    - a user message (not a chunk: the live stream of a message may go on across a
      re-attachment) under an ID the session already reported (by a ``user_message`` or a
      ``user_message_chunk``: the entity table placed it): a user message is inserted once;
    - a user message under a new ID (under the reading ``resume-replay-window=whole-window``: a
      user message inside the window is history; not under
      ``unaccounted-user-message=other-sources``, where it may come from elsewhere);
    - an Agent message or thought under an ID the session never showed, once that snapshot
      reported idle (no work is running to produce it live)."""
    replayed: Context
    if trigger != "chunk" and key.startswith("user_message "):
        if seen.reported(key):
            return _NO_CTX
        if (
            readings.get(UNACCOUNTED_USER_MESSAGE, "") == "other-sources"
            or readings.get(RESUME_REPLAY_WINDOW) != "whole-window"
        ):
            return None
        replayed = {
            UNACCOUNTED_USER_MESSAGE: readings[UNACCOUNTED_USER_MESSAGE],
            RESUME_REPLAY_WINDOW: "whole-window",
        }
    elif seen.idle_snapshot and key.startswith(_MODEL_OUTPUT) and (_ENTITY, key) not in seen.states:
        replayed = _NO_CTX
    else:
        return None
    if (
        not seen.handshake[2]  # type: ignore[index]
        or seen.state_of(session.SPEC, SESSION_KEY) != session.SYNCED
        or (waiting is not None and waiting())
    ):
        return None
    return replayed
