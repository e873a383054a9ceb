"""The simulated Agent's state, and the plumbing every one of its moves goes through.

Owns: ``AgentState``, the records the Agent keeps of its session (the prompt machine state of
each request, the foreground state it really is in and the one it last reported, its tool calls,
permission requests, elicitations, background items, compactions, counters and once-per-run
flags), copied (``clone``) and summed up (``snapshot``) for the explorers; and what every move
goes through: the triggers a table allows it (``_can``), firing one (``_fire``), the IDs it gives,
the state updates it reports, and the questions its moves ask of its records.

Must not know: which moves there are, channels, the client, monitors, or files.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field, fields
from typing import Any, Self

from model import background as bgm
from model import elicitation as em
from model import foreground as fgm
from model import permission as pm
from model import prompt as prm
from model import session as sm
from model import toolcall as tcm
from model.between import Rules
from model.core import MachineSpec
from properties.observe import entity_step
from properties.variants import rules_of, tables_of
from simulator.peers import deviations, wire
from simulator.peers.config import AGENT_BUDGETS, Config, elicitation_modes
from simulator.peers.deviations import Forbidden

MAIN = "sess_1"
_MSG_PREFIX = {"user_message": "msg_u", "agent_message": "msg_a", "agent_thought": "msg_t"}
"""The prefix of the Agent's message IDs, by entity type."""
CHILD = "sess_2"
NO_MESSAGE = "msg_a_late"
"""``AgentState.ended_output`` of work that ended without beginning an agent message: nothing of
it to patch after its idle (no message goes out under this ID)."""

Event = tuple[str, str, Any]
Msg = dict[str, Any]

BOUNDED_COMPACTION = ("summary_chunk", "summary_patch", "custom_status")
"""Compaction triggers made at most once per compaction started (each counted in ``used``)."""
CUSTOM_STOP = "_handed_off"
"""The custom stop reason the Agent may use (feature ``custom_stop``)."""
FUTURE_STOP = "handed_off"
"""A stop reason of a future ACP version the Agent may use under
``future-stop-reason=may-be-future`` (feature ``custom_stop``)."""
FUTURE_STATE = "_reviewing"
"""The custom state the Agent may report when the Client advertised custom states (``future``),
or although it advertised none (``unadvertised``)."""
_NO_CONTEXT: dict[str, Any] = {}
_INSERTABLE = Rules.waiting_states(prm.SPEC)
"""Prompt states that may still be inserted (``model.between`` held_in_order's waiting states)."""
INSERTED = (prm.INSERTED, prm.ANSWERED)
"""Prompt states of an inserted prompt (its user message is the Agent's to report)."""


def _embedding(terminal: str) -> str:
    """The ID of the tool call that embeds ``terminal`` (a listed tool call whose work is that
    terminal: tool-with-listed-terminal=may-have-other-work, or the seeded bug misreading it)."""
    return f"tc_{terminal}"


def _slot_copier(cls: type) -> Any:
    """A function ``copy(src, dst)`` assigning each slot of ``src`` to ``dst``, a copy of each
    record a move changes in place (the fields made by ``dict`` or ``list``): plain attribute
    assignments, built once, about three times faster than a getattr/setattr loop (explorers
    clone an Agent for every move they compute)."""
    made = ((f.name, getattr(f.default_factory, "__name__", "")) for f in fields(cls))
    body = "".join(f"    dst.{name} = {factory}(src.{name})\n" for name, factory in made)
    scope: dict[str, Any] = {}
    exec(f"def copy(src, dst):\n{body}", scope)  # names are this module's slot names only
    return scope["copy"]


UNSEEN = "unseen"
"""The mark of an ``end`` or ``stop`` move made unobserved: its argument is ``(reason, UNSEEN)``
(``Agent._ends_unseen``): the updates the work owes are sent, the state reported stays as it is
(no idle; the stop reason is the last one, which a later idle may restate)."""


def _seen(arg: Any) -> tuple[Any, bool]:
    """The stop reason of an ``end`` or ``stop`` move, and whether its idle is sent (``UNSEEN``)."""
    return (arg[0], False) if isinstance(arg, tuple) and arg[1:] == (UNSEEN,) else (arg, True)


def _put(table: dict[Any, tuple[Any, ...]], key: Any, i: int, value: Any) -> None:
    """Set field ``i`` of the record ``table[key]`` (records are tuples, so copies of the Agent
    share them and its snapshot holds them as they are)."""
    rec = table[key]
    table[key] = (*rec[:i], value, *rec[i + 1 :])


@dataclass(slots=True, eq=False, repr=False)
class AgentState:
    cfg: Config
    faults: InitVar[frozenset[str]] = frozenset()
    sid: str = field(default=MAIN, kw_only=True)
    """The ID of its session on the wire (``MAIN`` unless several share a connection)."""
    child: str = field(default=CHILD, kw_only=True)
    """The ID of its child session on the wire (``CHILD`` unless several share a connection)."""
    requests: str = field(default="perm_", kw_only=True)
    """The prefix of the IDs of its permission requests (JSON-RPC IDs: unique per connection)."""
    deviations: tuple[Any, ...] = field(init=False)  # seeded bugs stated as table deviations
    specs: Mapping[str, MachineSpec] = field(init=False)  # the model's tables, or the run's variant's
    between: Rules = field(init=False)  # the rules between machines (``model.between``)
    prune: bool = field(init=False)
    """The run's variant removed rows: ``Agent.choices`` leaves out the moves that need one."""
    allowed: frozenset[str] = field(init=False)  # it advertises no prompt capability
    misread: dict[str, Any] = field(init=False)
    unapplied: frozenset[str] = field(init=False)
    rd: dict[str, str] = field(init=False)
    """Every reading's alternative the Agent acts on: the run's, but where a seeded bug misreads
    it (``misread``)."""
    fg_ctx: dict[str, bool] = field(init=False)
    """The foreground table's context: custom states count as advertised when the Client may
    extend them (feature ``future``)."""
    prompt_ctx: tuple[dict[str, bool], ...] = field(init=False)
    """The prompt table's context, for a prompt that is not / is the oldest still waiting."""
    # the stop reason of the last idle that ended work
    last_stop: str | None = field(init=False, default=None)
    real: str = field(init=False, default=fgm.IDLE)  # the foreground state the agent is really in
    reported: str = field(init=False, default=fgm.IDLE)  # the foreground state it last reported
    # rid, in receive order -> (prompt state, messageId, user message reported, handled by
    #         foreground work, "" or why its content is invalid: "empty" (may be rejected) or
    #         "unadvertised", received during foreground work that has not ended since)
    prompts: dict[int, tuple[Any, ...]] = field(init=False, default_factory=dict)
    contents: dict[Any, list[Any]] | None = field(init=False, default=None)
    """The content of each prompt received, by request id, where the Agent echoes it in the
    prompt's user message (set by ``simulator.peers.stdio_agent``, and under the feature
    ``retry``); None: it writes a stand-in (``prompt N``, streamed as two chunks), as the
    simulated runs have it."""
    next_msg: int = field(init=False, default=0)
    turn_outputs: int = field(init=False, default=0)
    cur_msg: str | None = field(init=False, default=None)  # agent_message being streamed in this interval
    cur_thought: str | None = field(init=False, default=None)
    # id -> (status, background? ("carried": on past its work's idle), permission rid or None,
    #        mark or None: how its request was answered, "allowed", "denied", "raced" (an
    #        approval taken as a refusal: ``_answered``), or a seeded bug's late answer to run it
    #        with, "late" (an approval) or "ended-e" then "late-e" (an elicitation's accept))
    tools: dict[str, tuple[Any, ...]] = field(init=False, default_factory=dict)
    # rid -> permission state (its tool call names it: ``tools``, ``_tool_of``)
    perms: dict[str, str] = field(init=False, default_factory=dict)
    # rid -> (elicitation state, mode, accepted in URL mode, completion sent, tool call id or
    #         None); its elicitationId is ``f"{rid}_url"``
    elicits: dict[str, tuple[Any, ...]] = field(init=False, default_factory=dict)
    elicit_modes: tuple[str, ...] = field(init=False)
    """The elicitation modes the Client advertised (feature ``elicitation``: both; the served
    agent reads them from the Client's initialize)."""
    # (kind, id) -> background machine state
    items: dict[tuple[str, str], str] = field(init=False, default_factory=dict)
    listed: tuple[tuple[str, str], ...] = field(init=False, default=())  # last background list sent
    bg_reported: bool = field(init=False, default=False)
    compactions: dict[str, str] = field(init=False, default_factory=dict)
    # one-off updates sent (feature ``extras``)
    extras: frozenset[str] = field(init=False, default=frozenset())
    child_msg: str | None = field(init=False, default=None)  # the child's incoming session_message ID
    cancelling: bool = field(init=False, default=False)
    followup: bool = field(init=False, default=False)
    session: str = field(init=False, default=sm.OPEN)
    # session/close requests to answer once closed
    close_rids: tuple[Any, ...] = field(init=False, default=())
    resume_rid: int | None = field(init=False, default=None)
    refusing: tuple[Any, ...] = field(init=False, default=())
    """session/resume requests to refuse: a second one while one is answered, or the one a
    session/close interrupted (``_do_refuse_resume``)."""
    replay: bool = field(init=False, default=False)
    history: list[Msg] = field(init=False, default_factory=list)  # replayable updates (retained history)
    ended_output: str | None = field(init=False, default=None)
    """The agent message the last ended work began (``NO_MESSAGE``: none); None while no work ended
    since the last patch of it."""
    next_plan: int = field(init=False, default=0)
    # (type, ID) given by an update sent ahead (Also.reserve)
    ahead: tuple[str, str] | None = field(init=False, default=None)
    marks: tuple[str, ...] = field(init=False, default=())  # breach markers: rules a fault made a move break
    used: dict[str, int] = field(init=False, default_factory=dict)
    """How many of each thing the Agent started or did, by its bound (``Config``: the per-run
    budgets, ``reruns``; a compaction's summary chunks, patches and custom statuses, each
    at most one per compaction started): ``_room``, ``_use``."""
    limits: dict[str, int] = field(init=False)
    entities: dict[tuple[str, str], str] = field(init=False, default_factory=dict)
    """(session, entity key) -> entity table state of every entity the Agent sent an update
    or chunk of (``_entity_steps``; not in the snapshot: no choice reads it)."""

    def __post_init__(self, faults: frozenset[str]) -> None:
        cfg = self.cfg
        self.deviations = deviations.of(faults)
        self.specs = tables_of(cfg.variant)
        self.between = rules_of(cfg.variant)
        self.prune = any(spec.removed for spec in self.specs.values())
        self.allowed = self.between.allowed_types(())
        self.misread = {d.reading: d for d in deviations.matching(self.deviations, deviations.Misread)}
        self.unapplied = frozenset(d.rule for d in deviations.matching(self.deviations, deviations.Unchecked))
        self.rd = {**cfg.reading_map(), **{name: d.alternative for name, d in self.misread.items()}}
        self.fg_ctx = {"custom_states": "future" in cfg.features}
        own = self.rd[prm.OWN_REASON] == "own-reason"
        self.prompt_ctx = tuple({"oldest_held": oldest, "own_reason": own} for oldest in (False, True))
        self.elicit_modes = elicitation_modes(cfg)
        self.used = dict.fromkeys((*AGENT_BUDGETS, "reruns", *BOUNDED_COMPACTION), 0)
        self.limits = {bound: getattr(cfg, bound) for bound in (*AGENT_BUDGETS, "reruns")}
        if "retry" in cfg.features:  # a prompt may repeat another's content: it echoes what it got
            self.contents = {}

    def clone(self) -> Self:
        new = self.__class__.__new__(self.__class__)
        _copy_slots(self, new)
        new.contents = None if self.contents is None else dict(self.contents)
        return new

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.real,
            self.reported,
            tuple(self.used.values()),
            tuple(self.prompts.items()),  # in receive order
            self.next_msg,
            self.turn_outputs,
            self.cur_msg,
            self.cur_thought,
            tuple(sorted(self.tools.items())) if self.tools else (),
            tuple(sorted(self.perms.items())) if self.perms else (),
            tuple(sorted(self.items.items())) if self.items else (),
            self.listed,
            self.bg_reported,
            tuple(sorted(self.compactions.items())) if self.compactions else (),
            self.cancelling,
            self.followup,
            self.session,
            self.close_rids,
            self.resume_rid,
            self.replay,
            len(self.history),
            self.ended_output,
            self.ahead,
            self.extras,
            self.child_msg,
            self.marks,
            self.last_stop,
            self.refusing,
            tuple(sorted(self.elicits.items())) if self.elicits else (),
        )

    def _breach(self, rule: str) -> None:
        """A fault made the move being done break ``rule`` (a breach marker; see the docstring)."""
        if rule not in self.marks:
            self.marks = (*self.marks, rule)

    def _room(self, bound: str) -> bool:
        """One more of what ``Config.<bound>`` bounds may happen (``used``)."""
        return self.used[bound] < self.limits[bound]

    def _use(self, bound: str) -> int:
        """One more of what ``bound`` bounds happens: its number (``used``)."""
        n = self.used[bound] = self.used[bound] + 1
        return n

    def _applies(self, rule: str) -> bool:
        """The Agent applies the cross-machine rule ``rule`` at this point of its choices (it does
        not where a seeded bug leaves it unchecked: ``deviations.Unchecked``)."""
        return rule not in self.unapplied

    def _msg_id(self, prefix: str) -> str:
        self.next_msg += 1
        return f"{prefix}_{self.next_msg}"

    def _echo(self, rid: int) -> list[dict[str, Any]]:
        """Prompt ``rid``'s content as the Agent reports it in a user message: the content it
        received where it keeps it (feature ``retry``), else its usual text."""
        if self.contents is None:
            return [wire.text(f"prompt {rid}")]
        return copy.deepcopy(self.contents[rid])

    def _new_id(self, kind: str, fresh: str) -> str:
        """The ID the Agent gives a new entity of type ``kind``: ``fresh``, unless a seeded bug
        gave one already (an update sent ahead of the entity: ``Also.reserve``) or gives an
        earlier entity's (``Reuse``: marked here)."""
        if self.ahead is not None and self.ahead[0] == kind:
            given, self.ahead = self.ahead[1], None
            return given
        for reuse in deviations.matching(self.deviations, deviations.Reuse, kind=kind):
            earlier = self._done_ids(kind)
            if earlier:
                self._breach(reuse.rule)
                return earlier[0]
        return fresh

    def _done_ids(self, kind: str) -> list[str]:
        """IDs of earlier entities of type ``kind`` the Agent is done with: every user message's
        (an ID, once given, belongs to that message), the exited terminals'."""
        if kind == "user_message":
            return [p[1] for p in self.prompts.values() if p[1] is not None]
        if kind == "terminal":
            return [i for (k, i), st in self.items.items() if k == kind and st in (bgm.FINALIZED, bgm.DONE)]
        raise ValueError(f"no reusable IDs of {kind!r}")

    def _bg_list(self) -> list[dict[str, str]] | None:
        if not self.bg_reported and not self._lists_always():
            return None
        return [wire.background_item(kind, ident) for kind, ident in self.listed]

    def _lists_always(self) -> bool:
        """Where ``model.between`` ``lists_before_first`` says so (the reading
        ``state-updates-before-first-list``), an Agent that may report background work carries a
        list (maybe empty) on every state_update of the session."""
        return self.between.lists_before_first(self.rd["state-updates-before-first-list"]) and any(
            f in self.cfg.features for f in ("terminal", "bg_tool", "subagent")
        )

    def _state(self, state: str, stop: str | None = None, err: dict[str, Any] | None = None) -> Msg:
        """A state_update of ``state``; the foreground table's ``unrecognized`` is the one custom
        state this Agent reports (``FUTURE_STATE``), so a snapshot repeating it names that one."""
        wire_state = FUTURE_STATE if state == fgm.UNRECOGNIZED else state
        return wire.state_update(self.sid, wire_state, self._bg_list(), stop, err)

    def _report(self, state: str, stop: str | None = None, err: dict[str, Any] | None = None) -> Msg:
        if "unstated" in self.extras:  # a state reported since the resume's snapshot
            self.extras = self.extras - {"unstated"}
        if state == fgm.IDLE:  # the end of work that ended unseen is shown (``_ends_unseen``)
            self.extras = self.extras - {"ended_unseen"}
        trig = fgm.trigger_for(self.reported, state)
        if trig is not None:
            self.reported = self.specs["foreground"].fire(self.reported, trig)
            self.extras = self.extras - {"repeated"}  # a new stretch (``Freedoms._repeatable``)
        return self._state(state, stop, err)

    def _can(self, machine: str, state: str, ctx: Any = None) -> frozenset[str]:
        """The triggers the Agent may fire on an entity of ``machine`` in ``state``: the table's
        rows (``MachineSpec.allowed``: so a row a variant adds is a move it takes) that no seeded
        bug withholds (``simulator.peers.deviations``; the forbidden cells a seeded bug fires are
        ``_deviation_events``)."""
        found = self.specs[machine].allowed(state, "agent", ctx or _NO_CONTEXT)
        if self.deviations:
            found = found - deviations.withheld(self.deviations, machine)
        return found

    def _forced(self, machine: str, state: str) -> tuple[Forbidden, ...]:
        """The forbidden cells of ``machine`` in ``state`` a seeded bug fires."""
        if not self.deviations:  # (most runs: the shortcut saves a call on every move)
            return ()
        return deviations.matching(self.deviations, deviations.Forbidden, machine=machine, source=state)

    def _fire(self, machine: str, state: str, trigger: str, ctx: Any = None) -> str:
        """The state after the Agent fires ``trigger``: the table's, or the ``dest`` of a forbidden
        cell a seeded bug fires, marked with the rule the table refuses it under (the cell's or
        its guard's; off the wire, the table refuses). Under a variant that dropped that rule the
        move is the bug's, on the wire or not, as under the fault (``dest``: the rest of the bug's
        moves are written for it), and the breach is still marked (the checker sets it aside)."""
        spec = self.specs[machine]
        ctx = ctx or {}
        for d in self._forced(machine, state):
            if d.trigger != trigger:
                continue
            ctx = {**ctx, **d.ctx}  # the faulty Agent's reason
            rule = spec.written_refusal(state, trigger, ctx)
            if rule is not None:  # None: a row allows it here (a reading's guard, an added row)
                self._breach(rule)
                if d.wire or rule in spec.relaxed:
                    return d.dest
        return spec.fire(state, trigger, ctx)

    def _prompt_fire(self, rid: int, trigger: str, **ctx: Any) -> None:
        _put(self.prompts, rid, 0, self._fire("prompt", self.prompts[rid][0], trigger, ctx))

    def _oldest_waiting(self) -> int | None:
        """The prompt ``held_in_order`` lets go in next (``model.between``)."""
        found = self.between.oldest_waiting(r for r, p in self.prompts.items() if p[0] in _INSERTABLE)
        return found if isinstance(found, int) else None

    def _fg_tools_live(self) -> list[str]:
        return [t for t, v in self.tools.items() if not v[1] and v[0] in tcm.LIVE]

    def _blocked(self) -> bool:
        """The work waits on the user: a permission request of foreground work is pending
        (background requests never block), or an elicitation (always of foreground work here) is
        pending or, accepted in URL mode, awaits its external completion (Lifecycle examples).
        This Agent's own state, not a rule: it blocks (reports requires_action) only then, which
        ``model.between`` BLOCKED_ON_USER allows (each such request is outstanding: ``_asking``),
        and resumes only once nothing is waited on."""
        perms = self.perms
        return (
            bool(perms) and any(not t[1] and perms.get(t[2]) == pm.PENDING for t in self.tools.values())
        ) or any(e[0] in em.BLOCKING for e in self.elicits.values())

    def _tool_of(self, rid: str) -> str:
        """The tool call permission request ``rid`` is about."""
        return next(tid for tid, t in self.tools.items() if t[2] == rid)

    def _asking(self) -> list[str]:
        """The user-action requests that may justify requires_action (``model.between``
        BLOCKED_ON_USER): any asked since the last idle that ended work (``asked`` in
        ``extras``: its answer may not have reached the Agent yet), and those outstanding on the
        wire: permission requests neither answered nor withdrawn, elicitations neither answered
        nor withdrawn, and URL elicitations accepted and not yet completed."""
        found = ["asked"] if "asked" in self.extras else []
        found += [rid for rid, st in self.perms.items() if st in (pm.PENDING, pm.NOT_APPROVED)]
        found += [
            rid
            for rid, e in self.elicits.items()
            if e[0] in (em.PENDING, em.AWAITING, em.ABANDONED) or (e[2] and not e[3])
        ]
        return found

    def _cancel_seen(self) -> bool:
        """A session/cancel or session/close reached work the Agent was reporting active
        (``Agent._start_cancelling``): only a confirming idle may end it."""
        return self.cancelling and "unobserved" not in self.extras

    def _inserted_waiting(self) -> bool:
        return any(self.prompts[r][0] in INSERTED and not self.prompts[r][3] for r in self.prompts)

    def _unlisted_work(self) -> list[tuple[str, str]]:
        """Announced background work, not yet in the list (``model.between`` owed_before_idle: it
        would pass for foreground work)."""
        return [key for key, st in self.items.items() if st == bgm.ANNOUNCED]

    def _uninserted(self) -> bool:
        """A prompt waits unanswered and uninserted (``own_user_message``: work started then is
        not the Agent's own)."""
        return any(self.prompts[r][0] in prm.PENDING for r in self.prompts)

    def _unreported(self) -> list[int]:
        """Inserted prompts whose user message is not reported yet (``model.between``
        USER_MESSAGE_REPORTED: owed before the idle ending the work and before the close
        response)."""
        return [r for r, p in self.prompts.items() if p[0] in INSERTED and not p[2]]

    def initial_idle(self) -> Msg:
        """The new session's initial idle (optional; no completion), as this Agent reports it."""
        return self._state(fgm.IDLE)

    def _entity_steps(self, out: list[Msg]) -> None:
        """The entity table (``model.entity``) stepped by every entity update or chunk the Agent
        sends (``properties.observe.entity_step`` says which trigger): each (session, type, ID)
        placed on the timeline, its content set, kept, cleared or appended to. Not part of the
        snapshot: the table refuses nothing, so no choice of the Agent reads it."""
        spec = self.specs["entity"]
        for msg in out:
            if msg.get("method") != "session/update":
                continue
            params = msg["params"]
            step = entity_step(params["update"])
            if step is not None:
                key = (params["sessionId"], step[0])
                self.entities[key] = spec.fire(self.entities.get(key, spec.initial), step[1])

    def _mark_handled(self) -> None:
        for rid in self.prompts:
            if self.prompts[rid][0] in INSERTED:
                _put(self.prompts, rid, 3, True)

    def _begin(self, state: str, initiated: bool) -> None:
        """Foreground work starts in ``state``, a new interval of output; ``initiated``: work the
        Agent started itself (``model.between`` OWN_USER_MESSAGE); under feature ``own_text``
        the prompts waiting at the start are marked (``waited:<rid>``: ``Freedoms._after_answer``)."""
        kept = frozenset(e for e in self.extras if e != "initiated" and not e.startswith("waited:"))
        waited = (
            {f"waited:{r}" for r, p in self.prompts.items() if p[0] not in prm.SPEC.final}
            if "own_text" in self.cfg.features
            else set()
        )
        self.extras = kept | waited | ({"initiated"} if initiated else frozenset())
        self.real = state
        self.turn_outputs = 0
        self.cur_msg = self.cur_thought = None

    def _tool_update(self, tid: str, trigger: str, shown: str | None = None, **fields: Any) -> Msg:
        """Tool call ``tid`` moved by ``trigger``: the update reporting its new status (or
        ``shown``: a custom one, or the status a seeded bug's forbidden cell names)."""
        status = self._fire("tool_call", self.tools[tid][0], trigger)
        _put(self.tools, tid, 0, status)
        return wire.tool_call(self.sid, tid, shown or status, **fields)

    def _snapshot_now(self) -> Msg:
        """A snapshot of the state reported, with the background list. Under a custom state where
        a prompt's work may have started while it was shown (``_unseen_prompt``: running is owed),
        the real state instead: a current-state snapshot restores a known state (State
        transitions)."""
        if self.reported == fgm.UNRECOGNIZED and "unadvertised" in self.cfg.features:
            return self._report(self.real)
        return self._state(self.reported)


_copy_slots = _slot_copier(AgentState)
