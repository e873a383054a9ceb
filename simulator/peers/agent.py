"""The simulated Agent: every choice the spec leaves to an Agent is an enabled event.

Theory of operation
-------------------
The Agent owns one session (``MAIN``) and, when it delegates, one child session (``CHILD``);
where several Agents share one connection (``simulator.peers.stdio_agent``), each is given its own
session IDs and a prefix for its permission requests' IDs (``sid``, ``child``, ``requests``).
Its state is small and explicit: the prompt machine state of each request, the foreground
state it really is in and the one it last reported, its tool calls, permission requests,
background items, compactions and counters. ``enabled()`` lists what it may do now, as
``("agent", name, arg)`` tuples in a fixed order; ``do(event)`` performs one choice and returns
the wire messages it sends, in send order; ``receive(message)`` reacts to a delivered client
message (reactions that the spec makes immediate, e.g. a session/cancel covering held prompts,
happen here; answers are later choices).

Its choices come from the machine tables: the moves it may offer on an entity are the agent
rows from the entity's state (``_can``: ``MachineSpec.allowed`` of its ``Config``'s tables, guards
read on the context it knows: the oldest waiting prompt, the reading in force), narrowed by its
own choices and bounds, each named in the docstring of the method that offers them
(``_prompt_events``, ``_active_events``, ``_tool_events``, ``_item_events``,
``_compaction_events``). So a row a variant adds is a move it offers.

The rules between machines are not written here: the Agent asks ``model.between`` (its
``Rules``, ``self.between``), whose functions the monitors call too (what is owed before an idle,
what an ending takes with it, the stop reasons of cancelled work, how a prompt is answered, what
a permission answer allows; ``tests/test_rule_in_one_place.py`` keeps their IDs out of here).
What narrows the tables' moves beyond that is named where it is offered: a bound (``Config``
counts, a move once per run), this Agent's own behaviour (a choice a real Agent makes one way),
or a reading's freedom (``_reading``). Each step advances the model's machines through
``MachineSpec.fire``, so an agent that tried a move the tables forbid would raise the named
violation.

The tables it fires are its ``Config``'s (``Config.variant``, ``properties.variants.tables_of``):
the model's, or a variant's, where a removed row makes the move that needs it raise a violation flagged
``removed`` (the world prunes such moves) and a dropped rule's forbidden cell leaves the state.

Faults (``faults=``) turn this into one of the named seeded-bug agents used to prove that each
monitor can fail. Each is a deviation from the tables (``simulator.peers.deviations``: a move withheld,
a forbidden cell fired, a message field rewritten, messages silenced, repeated or added, an ID
given again, a cancel stretched, a cross-machine rule left unchecked, a reading misread, a move
offered), applied by ``_can``, ``_deviation_events``, ``_fire``, ``_settle_end`` (a final status
withheld), ``_new_id``, ``receive``, ``_applies``, ``_misread`` and ``do``; no code here tests a
fault's name. Where a fault actually makes a
move differ from what the conforming Agent would do, ``_breach(RULE)``
leaves a breach marker, not a wire message, naming the rule the move breaks (``marks``, first
breach of each rule, in order; part of the snapshot, so the exhaustive search keeps breaching
paths apart). The World turns new marks into hidden steps beside the transcript. Faults that
only leave a move out are marked when the world is quiescent (``omitted``): only then is the
move never going to happen.

Readings (``cfg.readings``, ``properties.readings``): where the alternatives of a reading give an
Agent different freedoms, the Agent takes those of the alternative in force, so exploring under a
reading explores that reading's protocol (``_reading``; each use is marked with the reading's
name): a prompt inserted at once ahead of a held one (``prompt-ahead-of-held=held-only``); an
end with the work's own stop reason after a cancel arrived (``cancel-takes-effect=when-acted``);
a chunk patching the ended work's message while idle (``patch-after-idle=patch-in-place``); a
user message no prompt accounts for (``unaccounted-user-message=other-sources``, or
``agent-initiated`` in work it started itself, a follow-up, while no prompt waits); an approval
that raced the cancel of its work used to run the tool (``approval-racing-cancel=may-be-used``,
the default; under ``not-approved`` it is taken as a refusal); a chunk of the current message sent
while requires_action is reported (``output-while-requires-action=pending-output``); an end with a
stop reason of a future version (``future-stop-reason=may-be-future``); a background
list on every state_update from the first (``state-updates-before-first-list=every``); a listed
background tool call that foreground work takes over, dropped unfinished from the list
(``waited-on-background=becomes-foreground``); a covered prompt with unadvertised content
answered -32602 (``cancelled-invalid-prompt=invalid`` or ``either``); a foreground tool call that
carries on after an end_turn idle (``tool-updates-after-idle=background``); a tool call listed
with the terminal it embeds (``tool-with-listed-terminal=may-have-other-work``; under the default
reading, feature ``embed``: such a tool call, not listed); a repeated idle
with a new stop reason (``repeated-idle-new-stop-reason=snapshot``).

Must not know: channels, the client, monitors, or files.
"""

from __future__ import annotations

import copy
from functools import partialmethod
from typing import Any

from model import background as bgm
from model import between as bw
from model import compaction as cm
from model import elicitation as em
from model import foreground as fgm
from model import permission as pm
from model import prompt as prm
from model import session as sm
from model import terminal as tm
from model import toolcall as tcm
from properties import seeded
from properties.observe import entity_step
from properties.readings import BUSY_REFUSAL, TOOL_WITH_LISTED_TERMINAL
from properties.variants import rules_of, tables_of
from simulator.peers import deviations, wire
from simulator.peers.config import Config, elicitation_modes

MAIN = "sess_1"
_MSG_PREFIX = {"user_message": "msg_u", "agent_message": "msg_a", "agent_thought": "msg_t"}
"""The prefix of the Agent's message IDs, by entity type."""
CHILD = "sess_2"

Event = tuple[str, str, Any]
Msg = dict[str, Any]

AGENT_FAULTS = seeded.names("agent", deviations.Deviation)
"""The Agent's seeded bugs that it runs itself (``properties.seeded``): every agent deviation."""


CUSTOM_STOP = "_handed_off"
"""The custom stop reason the Agent may use (feature ``custom_stop``)."""
FUTURE_STOP = "handed_off"
"""A stop reason of a future ACP version the Agent may use under
``future-stop-reason=may-be-future`` (feature ``custom_stop``)."""
FUTURE_STATE = "_reviewing"
"""The custom state the Agent may report when the Client advertised custom states (``future``),
or although it advertised none (``unadvertised``)."""
CUSTOM_COMPACTION = "_deferred"
"""The custom compaction status the Agent may report (feature ``compaction``)."""
_PLAIN_MOVES = {(tcm.PENDING, tcm.IN_PROGRESS), (tcm.IN_PROGRESS, tcm.COMPLETED)}
"""Tool-call moves the plain events ``tool_run`` and ``tool_done`` already make."""
_PROMPT_TRIGGERS = ("hold", "insert", "reject", "withdraw", "answer")
_INSERTABLE = frozenset(row.source for row in prm.ROWS if row.trigger == "insert")
"""Prompt states that may still be inserted: those the prompt table has an ``insert`` row from."""
"""The order the Agent offers its moves on a prompt in; which it may take is the prompt table's."""
_NO_CONTEXT: dict[str, Any] = {}
_RESTATED = (fgm.END_TURN, fgm.MAX_TOKENS)
"""Stop reasons the Agent may repeat on an idle of its own (the ones it restates as new)."""
_RESTORES = ("restore_idle", "restore_running", "restore_requires_action")
"""Foreground triggers that report a known state again after unknown or unrecognized."""
_BACKGROUND_TRIGGERS = ("list", "finalize", "adopt", "unlist")
"""The order the Agent offers its moves on a background item in; which it may take is the
background table's."""
_COMPACTION_ACTIONS = {
    "compact_chunk": "summary_chunk",
    "compact_patch": "summary_patch",
    "compact_end": "complete",
    "compact_fail": "fail",
    "compact_cancel": "cancel",
    "compact_custom": "custom_status",
    "compact_progress": "progress",
}
"""The Agent's move making each compaction trigger (in the order it offers them; ``_compact``);
which ones it may take is the compaction table's (``_can``)."""
_COMPACTION_MOVE = {trigger: move for move, trigger in _COMPACTION_ACTIONS.items()}
_COMPACTION_BOUNDS = {
    "summary_chunk": "comp_chunks",
    "summary_patch": "comp_patches",
    "custom_status": "comp_customs",
}
"""Triggers made at most once per compaction started, and the counter of each."""
_COMPACTION_STATUS = {
    "complete": cm.COMPLETED,
    "fail": cm.FAILED,
    "cancel": cm.CANCELLED,
    "custom_status": CUSTOM_COMPACTION,
    "progress": cm.IN_PROGRESS,
}
"""The status each compaction trigger reports."""
_ENDS_COMPACTION = ("complete", "fail", "cancel")


def _embedding(terminal: str) -> str:
    """The ID of the tool call that embeds ``terminal`` (a listed tool call whose work is that
    terminal: tool-with-listed-terminal=may-have-other-work, or the seeded bug misreading it)."""
    return f"tc_{terminal}"


def _slot_copier(names: tuple[str, ...]) -> Any:
    """A function ``copy(src, dst)`` assigning each named slot of ``src`` to ``dst``: plain
    attribute assignments, built once, about three times faster than a getattr/setattr loop
    (explorers clone an Agent for every move they compute)."""
    body = "".join(f"    dst.{name} = src.{name}\n" for name in names)
    scope: dict[str, Any] = {}
    exec(f"def copy(src, dst):\n{body}", scope)  # names are this module's slot names only
    return scope["copy"]


def _unapproved(tool: tuple[Any, ...]) -> bool:
    """A foreground tool call that asked for permission, never ran, and was not approved (its
    request still pending, or declined, or an approval taken as a refusal): work that stops on
    its own gives it up (``Agent._stop_events``)."""
    return (
        not tool[1]
        and tool[2] is not None
        and tool[0] == tcm.PENDING
        and (len(tool) == 3 or tool[3] in ("denied", "raced"))
    )


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


class Agent:
    __slots__ = (
        "ahead",
        "allowed",
        "between",
        "bg_reported",
        "bg_started",
        "cancelling",
        "cfg",
        "child",
        "child_msg",
        "close_rids",
        "comp_chunks",
        "comp_customs",
        "comp_patches",
        "comp_started",
        "compactions",
        "cur_msg",
        "cur_thought",
        "deviations",
        "elicit_modes",
        "elicits",
        "elicits_started",
        "ended_output",
        "entities",
        "extras",
        "fg_ctx",
        "followup",
        "futures",
        "history",
        "hooks_run",
        "items",
        "last_stop",
        "listed",
        "losses",
        "marks",
        "misread",
        "next_msg",
        "next_plan",
        "notices",
        "order",
        "perms",
        "perms_started",
        "prompt_ctx",
        "prompts",
        "rd",
        "real",
        "refusing",
        "replay",
        "reported",
        "requests",
        "reruns",
        "resume_rid",
        "session",
        "sid",
        "specs",
        "tool_updates",
        "tools",
        "tools_started",
        "turn_outputs",
        "unapplied",
        "usages",
    )

    def __init__(
        self,
        cfg: Config,
        faults: frozenset[str] = frozenset(),
        *,
        session: str = MAIN,
        child: str = CHILD,
        requests: str = "perm_",
    ) -> None:
        self.cfg = cfg
        self.sid = session
        """The ID of its session on the wire (``MAIN`` unless several share a connection)."""
        self.child = child
        """The ID of its child session on the wire (``CHILD`` unless several share a connection)."""
        self.requests = requests
        """The prefix of the IDs of its permission requests (JSON-RPC IDs: unique per connection)."""
        self.deviations = deviations.of(faults)  # seeded bugs stated as table deviations
        self.specs = tables_of(cfg.variant)  # the model's tables, or the run's variant's
        self.between = rules_of(cfg.variant)  # the rules between machines (``model.between``)
        self.allowed = self.between.allowed_types(())  # it advertises no prompt capability
        self.misread = deviations.misreads(self.deviations)
        self.unapplied = deviations.unchecked(self.deviations)
        self.rd: dict[str, str] = {
            **cfg.reading_map(),
            **{name: d.alternative for name, d in self.misread.items()},
        }
        """Every reading's alternative the Agent acts on (``_reading``): the run's, but where a
        seeded bug misreads it (``_misread``)."""
        self.fg_ctx = {"custom_states": "future" in cfg.features}
        """The foreground table's context: custom states count as advertised when the Client may
        extend them (feature ``future``)."""
        own = self.rd[prm.OWN_REASON] == "own-reason"
        self.prompt_ctx = tuple({"oldest_held": oldest, "own_reason": own} for oldest in (False, True))
        """The prompt table's context, for a prompt that is not / is the oldest still waiting."""
        self.last_stop: str | None = None  # the stop reason of the last idle that ended work
        self.real = fgm.IDLE  # the foreground state the agent is really in
        self.reported = fgm.IDLE  # the foreground state it last reported
        # rid -> (prompt state, messageId, user message reported, handled by foreground work,
        #         "" or why its content is invalid: "empty" (may be rejected) or "unadvertised",
        #         received during foreground work that has not ended since)
        self.prompts: dict[int, tuple[Any, ...]] = {}
        self.order: list[int] = []  # rids in receive order
        self.next_msg = 0
        self.turn_outputs = 0
        self.cur_msg: str | None = None  # agent_message being streamed in this interval
        self.cur_thought: str | None = None
        self.tools: dict[str, tuple[Any, ...]] = {}  # id -> (status, background?, permission rid)
        self.tools_started = 0
        self.perms: dict[str, tuple[Any, ...]] = {}  # rid -> (permission state, tool call id)
        self.perms_started = 0
        # rid -> (elicitation state, mode, elicitationId, accepted in URL mode, completion sent)
        self.elicits: dict[str, tuple[Any, ...]] = {}
        self.elicits_started = 0
        self.elicit_modes: tuple[str, ...] = elicitation_modes(cfg)
        """The elicitation modes the Client advertised (feature ``elicitation``: both; the served
        agent reads them from the Client's initialize)."""
        self.items: dict[tuple[str, str], str] = {}  # (kind, id) -> background machine state
        self.listed: tuple[tuple[str, str], ...] = ()  # last background list sent
        self.bg_reported = False
        self.bg_started = 0
        self.reruns = 0  # times a finished child got new work
        self.compactions: dict[str, str] = {}
        self.comp_started = 0
        self.comp_chunks = 0
        self.comp_patches = 0
        self.comp_customs = 0
        self.futures = 0
        self.tool_updates = 0
        self.extras: frozenset[str] = frozenset()  # one-off updates sent (feature ``extras``)
        self.child_msg: str | None = None  # the child's incoming session_message ID
        self.notices = 0
        self.usages = 0
        self.losses = 0
        self.cancelling = False
        self.followup = False
        self.hooks_run = 0  # foreground intervals started for hook work (bounded by cfg.hooks)
        self.session = sm.OPEN
        self.close_rids: tuple[Any, ...] = ()  # session/close requests to answer once closed
        self.resume_rid: int | None = None
        self.refusing: tuple[Any, ...] = ()
        """session/resume requests to refuse: a second one while one is answered, or the one a
        session/close interrupted (``_do_refuse_resume``)."""
        self.replay = False
        self.history: list[Msg] = []  # replayable updates (retained history)
        self.ended_output: str | None = None
        self.next_plan = 0
        self.ahead: tuple[str, str] | None = None  # (type, ID) given by an update sent ahead (Also.reserve)
        self.marks: tuple[str, ...] = ()  # breach markers: rules a fault made a move break
        self.entities: dict[tuple[str, str], str] = {}
        """(session, entity key) -> entity table state of every entity the Agent sent an update
        or chunk of (``_entity_steps``; not in the snapshot: no choice reads it)."""

    # -- copying for explorers ----------------------------------------------------------------
    def clone(self) -> Agent:
        new = Agent.__new__(Agent)
        _copy_slots(self, new)
        new.prompts = dict(self.prompts)
        new.order = list(self.order)
        new.tools = dict(self.tools)
        new.perms = dict(self.perms)
        new.elicits = dict(self.elicits)
        new.items = dict(self.items)
        new.compactions = dict(self.compactions)
        new.history = list(self.history)
        new.entities = dict(self.entities)
        return new

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.real,
            self.reported,
            tuple(self.prompts.items()),  # in receive order (``order``)
            self.next_msg,
            self.turn_outputs,
            self.cur_msg,
            self.cur_thought,
            tuple(sorted(self.tools.items())) if self.tools else (),
            self.tools_started,
            tuple(sorted(self.perms.items())) if self.perms else (),
            self.perms_started,
            tuple(sorted(self.items.items())) if self.items else (),
            self.listed,
            self.bg_reported,
            self.bg_started,
            self.reruns,
            tuple(sorted(self.compactions.items())) if self.compactions else (),
            self.comp_started,
            self.comp_chunks,
            self.notices,
            self.usages,
            self.losses,
            self.cancelling,
            self.followup,
            self.session,
            self.close_rids,
            self.resume_rid,
            self.replay,
            len(self.history),
            self.ended_output,
            self.hooks_run,
            self.ahead,
            self.comp_patches,
            self.comp_customs,
            self.futures,
            self.tool_updates,
            self.extras,
            self.child_msg,
            self.marks,
            self.last_stop,
            self.refusing,
            tuple(sorted(self.elicits.items())) if self.elicits else (),
            self.elicits_started,
        )

    # -- helpers -------------------------------------------------------------------------------
    def _breach(self, rule: str) -> None:
        """A fault made the move being done break ``rule`` (a breach marker; see the docstring)."""
        if rule not in self.marks:
            self.marks = (*self.marks, rule)

    def omitted(self) -> tuple[str, ...]:
        """Rules broken by a move a fault leaves out and that is owed now: at quiescence, the move
        will never happen (never answering an inserted prompt, never running its work, never
        ending a compaction)."""
        out: list[str] = []
        for d in self.deviations:
            if isinstance(d, deviations.Withhold):
                spec = self.specs[d.machine]
                for _, st in self._entities(d.machine):
                    if any(m[0] in d.triggers for m in spec.moves(st)):  # owed, and withheld
                        out.append(d.rule or spec.eventually[st])
                        break
        out = [rule for rule in out if rule not in self.marks]  # marked when it was skipped
        return tuple(sorted(set(out), key=out.index))

    def _entities(self, machine: str) -> list[tuple[Any, str]]:
        """(key, state) of the Agent's entities of ``machine`` (those a deviation can touch)."""
        if machine == "prompt":
            return [(r, self.prompts[r][0]) for r in self.order]
        if machine == "compaction":
            return list(self.compactions.items())
        if machine == "elicitation":
            return [(rid, e[0]) for rid, e in self.elicits.items()]
        if machine == "tool_call":
            return [(tid, t[0]) for tid, t in self.tools.items()]
        if machine == "session":
            return [(self.sid, self.session)]  # its own moves are made in the resume handshake
        if machine == "foreground":  # owed only while inserted prompts wait for their work
            return [(self.sid, self.real)] if self._open() and self._inserted_waiting() else []
        if machine == "background_item":
            # not the subagent child (its list follows its state), and the next terminal while
            # one may start: unannounced
            found = [(key, st) for key, st in self.items.items() if key[0] != "subagent"]
            if self.bg_started < self.cfg.background and "terminal" in self.cfg.features:
                found.append((("terminal", f"term_{self.bg_started + 1}"), bgm.UNANNOUNCED))
            return found
        raise ValueError(f"no entities of {machine!r}")

    def _has(self, feature: str) -> bool:
        return feature in self.cfg.features

    def _applies(self, rule: str) -> bool:
        """The Agent applies the cross-machine rule ``rule`` at this point of its choices (it does
        not where a seeded bug leaves it unchecked: ``deviations.Unchecked``)."""
        return rule not in self.unapplied

    def _misread(self, name: str) -> bool:
        """The Agent acts on another alternative of reading ``name`` than the run's (a seeded bug):
        a move only that alternative gives breaks a rule."""
        return name in self.misread

    def _reading(self, name: str, alternative: str) -> bool:
        """The reading ``name`` is read as ``alternative`` in this run (``cfg.readings``)."""
        return self.rd[name] == alternative

    def _msg_id(self, prefix: str) -> str:
        self.next_msg += 1
        return f"{prefix}_{self.next_msg}"

    def _new_id(self, kind: str, fresh: str) -> str:
        """The ID the Agent gives a new entity of type ``kind``: ``fresh``, unless a seeded bug
        gave one already (an update sent ahead of the entity: ``Also.reserve``) or gives an
        earlier entity's (``Reuse``: marked here)."""
        if self.ahead is not None and self.ahead[0] == kind:
            given, self.ahead = self.ahead[1], None
            return given
        reuse = deviations.reused(self.deviations, kind) if self.deviations else None
        if reuse is not None:
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
            self._has(f) for f in ("terminal", "bg_tool", "subagent")
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

    def _deviation_events(self, add: Any) -> None:
        """The forbidden cells the seeded bugs of ``simulator.peers.deviations`` fire: wherever an
        entity is in the cell's state while the session is open or closing, made as the Agent makes that
        trigger (``_fire`` marks the cell's rule), until the rule is marked: a bug that broke it
        once and again would only make the search longer (a reopened tool call, completed and
        reopened forever)."""
        for d in self.deviations:
            if not isinstance(d, deviations.Forbidden) or self.session not in (sm.OPEN, sm.CLOSING):
                continue
            if deviations.rule(d) in self.marks:
                continue
            for key, state in self._entities(d.machine):
                if state != d.source:
                    continue
                own = {"oldest_held": self._oldest_waiting() == key} if d.machine == "prompt" else {}
                if any(own.get(k) != v for k, v in d.when.items()):
                    continue  # not where the cell is forbidden
                if self.specs[d.machine].written_refusal(d.source, d.trigger, {**own, **d.ctx}) is None:
                    continue  # a variant's added row allows the cell: an ordinary move (``_can``)
                if d.machine == "tool_call":
                    add(("agent", "tool_status", (key, d.dest)))
                elif d.machine == "compaction":
                    add(("agent", _COMPACTION_MOVE[d.trigger], key))
                elif d.machine == "background_item":
                    add(("agent", f"bg_{d.trigger}", key))
                elif d.machine == "elicitation":
                    if self.elicits[key][1] == "url":  # a completion names a URL elicitation
                        add(("agent", f"elicit_{d.trigger}", key))
                else:
                    add(("agent", d.trigger, key))  # the prompt's moves are named as its triggers

    def _fire(self, machine: str, state: str, trigger: str, ctx: Any = None) -> str:
        """The state after the Agent fires ``trigger``: the table's, or the ``dest`` of a forbidden
        cell a seeded bug fires, marked with the rule the table refuses it under (the cell's or
        its guard's; off the wire, the table refuses). Under a variant that dropped that rule the
        move is the bug's, on the wire or not, as under the fault (``dest``: the rest of the bug's
        moves are written for it), and the breach is still marked (the checker sets it aside)."""
        spec = self.specs[machine]
        ctx = ctx or {}
        for d in deviations.forced(self.deviations, machine, state) if self.deviations else ():
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
        waiting = (r for r in self.order if self.prompts[r][0] in _INSERTABLE)
        found = self.between.oldest_waiting(waiting)
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
        return any(v[0] == pm.PENDING and not self.tools[v[1]][1] for v in self.perms.values()) or any(
            e[0] in em.BLOCKING for e in self.elicits.values()
        )

    def _asking(self) -> list[str]:
        """The user-action requests that may justify requires_action (``model.between``
        BLOCKED_ON_USER): any asked since the last idle that ended work (``asked`` in
        ``extras``: its answer may not have reached the Agent yet), and those outstanding on the
        wire: permission requests neither answered nor withdrawn, elicitations neither answered
        nor withdrawn, and URL elicitations accepted and not yet completed."""
        found = ["asked"] if "asked" in self.extras else []
        found += [rid for rid, v in self.perms.items() if v[0] in (pm.PENDING, pm.NOT_APPROVED)]
        found += [
            rid
            for rid, e in self.elicits.items()
            if e[0] in (em.PENDING, em.AWAITING, em.ABANDONED) or (e[3] and not e[4])
        ]
        return found

    def _open(self) -> bool:
        return self.session == "open"

    # -- receiving -----------------------------------------------------------------------------
    def _start_cancelling(self, trigger: str) -> None:
        """A session/cancel (``trigger`` cover) or session/close (close) reached the prompts (the
        prompt table says what it means in each state) and any active work. When it came while the
        reported state was unknown or unrecognized (``unobserved``), the Agent could not see the
        work at the time: it may have ended on its own, unobserved, before the cancel took effect
        (unknown: "actual loss of observability", Session states), so the work may still end with
        its own stop reason (``model.between`` confirming_idle asks for cancelled only after a
        cancel received while work was reported active)."""
        for rid in self.order:
            self._prompt_fire(rid, trigger)
        if self.real == fgm.IDLE:
            return
        if self.reported in (fgm.RUNNING, fgm.REQUIRES_ACTION):  # this one covers work it saw
            self.extras = self.extras - {"unobserved"}
        elif not self.cancelling:
            self.extras = self.extras | {"unobserved"}
        self.cancelling = True

    def receive(self, msg: Msg) -> None:
        method = msg.get("method")
        if method == "session/prompt":
            rid = msg["id"]
            content = msg["params"].get("prompt")
            # "empty": the Agent may reject it (-32602) or insert it; "unadvertised": it must reject
            invalid = "" if content else "empty"
            if content and self.between.unadvertised((b.get("type") for b in content), self.allowed):
                invalid = "unadvertised"
            # (whether it came during active work matters only where steering is not allowed)
            during = self.real != fgm.IDLE and not self.between.steer
            self.prompts[rid] = (prm.RECEIVED, None, False, False, invalid, during)
            self.order.append(rid)
            for d in deviations.stretched(self.deviations, "prompt") if self.cancelling else ():
                self._breach(d.rule)  # taken as covered by the cancel still being carried out
                self._prompt_fire(rid, d.trigger)
        elif method == "session/cancel":
            self._start_cancelling("cover")
        elif method == "$/cancel_request":
            rid = msg["params"]["requestId"]
            if rid in self.prompts:
                self._prompt_fire(rid, "cancel_request")
        elif method == "session/close":
            self.close_rids = (*self.close_rids, msg["id"])
            self.session = self.specs["session"].fire(self.session, "close")
            if self.resume_rid is not None:  # closed during the resume: it cannot succeed now
                self.refusing, self.resume_rid = (*self.refusing, self.resume_rid), None
            self._start_cancelling("close")
        elif method == "session/resume":
            self.session = self.specs["session"].fire(self.session, "resume")
            if self.resume_rid is not None:  # a second resume: this handshake goes on
                self.refusing = (*self.refusing, msg["id"])
            else:
                self.resume_rid = msg["id"]
                self.replay = "replayFrom" in msg["params"]
        elif "id" in msg and "method" not in msg:
            rid = msg["id"]
            if rid in self.elicits:
                self._elicit_answered(rid, msg)
                return
            perm = self.perms.get(rid)
            if perm is None:
                return
            outcome = msg.get("result", {}).get("outcome", {})
            trig = "select" if outcome.get("outcome") == "selected" else "answer_cancelled"
            if "error" in msg:  # no outcome at all: nothing approved
                trig = "error"
            was = perm[0]
            _put(self.perms, rid, 0, self.specs["permission"].fire(was, trig))
            if was == pm.PENDING:
                tid = perm[1]
                raced = (  # an approval after the cancel of its work (``model.between``)
                    self.cancelling
                    and not self.tools[tid][1]
                    and not self.between.racing_approval_used(self.rd["approval-racing-cancel"])
                )
                allow = outcome.get("optionId") == "allow"
                mark = "raced" if allow and raced else "allowed" if allow else "denied"
                self.tools[tid] = (*self.tools[tid], mark)
            elif (
                was == pm.NOT_APPROVED
                and not self._applies(bw.CANCELLED_PERMISSIONS.rule)
                and outcome.get("optionId") == "allow"
                and self.tools[perm[1]][0] == tcm.PENDING
            ):
                self.tools[perm[1]] = (*self.tools[perm[1]], "late")  # not treated as refused: used

    # -- choices -------------------------------------------------------------------------------
    def enabled(self) -> list[Event]:
        ev: list[Event] = []
        add = ev.append
        cfg = self.cfg
        if self.refusing:  # answered before anything else: the window of a refused resume
            add(("agent", "refuse_resume", None))  # holds no other message (``_do_refuse_resume``)
            return ev
        if self.session == sm.RESUMING:
            return self._resume_events()
        if self.session == "closed":
            if self.close_rids:  # a session/close that reached the closed session
                add(("agent", "close_response", None))
            self._closed_out_events(add)
            return ev
        if "announced" in self.extras:  # its own user message sent: its own work starts next
            return [("agent", "start_goal", None)] if self._may_start_goal() else []
        waiting = self._oldest_waiting()
        active = self.real != fgm.IDLE
        features = cfg.features
        open_ = self._open()
        for rid in self.order:
            p = self.prompts[rid]
            st = p[0]
            self._prompt_events(add, rid, waiting, open_)
            if self.between.user_message_reportable(st in (prm.INSERTED, prm.ANSWERED)) and not p[2]:
                add(("agent", "user_message", rid))
                if "chunks" in features:
                    add(("agent", "user_chunks", rid))
        # the close response, once the session table allows it; that everything else is settled
        # first (work ended and reported idle, prompts answered or stopped, compactions ended,
        # background work finished and unlisted) is this Agent's own behaviour (closing stops
        # its work), not a rule: only the prompts' answers are ACC-13's (the prompt table)
        if (
            not active
            and self._closes_as_reported()
            and "closed" in self._can("session", self.session)
            and all(self.prompts[r][0] in (*prm.SPEC.final, prm.CLOSED_OUT) for r in self.order)
            and (
                all(st in cm.TERMINAL for st in self.compactions.values())
                or "complete" in deviations.withheld(self.deviations, "compaction")
            )
            and all(st == bgm.DONE for st in self.items.values())
            and not self.between.user_messages_owed(self._unreported())  # closing discharges no report
        ):
            add(("agent", "close_response", None))
        doing = self._can("foreground", self.real, self.fg_ctx)  # what the work really in it may do
        if not active:
            if open_ and "start" in doing:
                work = self._work_waiting()
                if work or self.followup:
                    add(("agent", "start", None))
                    if work and self._unseen_prompt():
                        add(("agent", "start", "unseen"))
                    if (
                        work
                        and "start_blocked" in doing
                        and "permission" in features
                        and self.perms_started < cfg.permissions
                    ):
                        add(("agent", "start_blocked", None))
        else:
            self._active_events(add, doing)
            if self._ends_unseen():  # each end offered, also unobserved
                for e in [e for e in ev if e[:2] in (("agent", "end"), ("agent", "stop"))]:
                    add((*e[:2], (e[2], UNSEEN)))
            self._declined_events(add)
        self._background_events(add, active)
        if "compaction" in features and self.session in ("open", "closing"):
            self._compaction_events(add)
        if (
            self.real == fgm.RUNNING
            and self.turn_outputs == 0  # as the work's first output
            and "synthetic" not in self.extras
            and open_
            and (
                self._reading("unaccounted-user-message", "other-sources")
                or (
                    self._reading("unaccounted-user-message", "agent-initiated")
                    # work the Agent started itself (model.between OWN_USER_MESSAGE), as the wire
                    # shows it: the start of work begun unseen (``_unseen``) was never reported
                    and self.between.own_user_message(
                        "active" if self.reported in (fgm.RUNNING, fgm.REQUIRES_ACTION) else "other",
                        "initiated" in self.extras and "unseen" not in self.extras,
                    )
                    and all(p[0] in prm.SPEC.final for p in self.prompts.values())
                )
            )
        ):
            add(("agent", "synthetic_user", None))  # once per run
        if "notice" in features and self.notices < cfg.notices and open_:
            add(("agent", "notice", None))
        if "usage" in features and self.usages < cfg.usages and open_:
            add(("agent", "usage", None))
        # what the state reported may become (what the real one may, when they are the same)
        shown = doing if self.reported == self.real else self._can("foreground", self.reported, self.fg_ctx)
        if open_ and "unknown" in features and self.losses < cfg.losses and "lose" in shown:
            add(("agent", "lose", None))
        custom = "future" in features or "unadvertised" in features
        future = open_ and custom and self.futures < cfg.futures
        if future and "future_state" in shown:
            add(("agent", "future_state", None))
        if self.reported != self.real:  # reporting the real state again
            restore = fgm.trigger_for(self.reported, self.real)
            if restore in _RESTORES and self.session in ("open", "closing") and restore in shown:
                add(("agent", "restore", None))  # also before answering a close: a known state
        if self.ended_output is not None and (
            self._may_patch_ended()
            or (
                # the seeded bug sends it where updates_before_idle forbids it: after the idle,
                # while the session is still reported idle (not once unknown or new work is shown)
                self.deviations
                and self.reported == fgm.IDLE
                and deviations.offered(self.deviations, "late_output", self.session)
            )
        ):
            add(("agent", "late_output", None))  # a patch of the ended work's message
        if not active and open_:
            self._idle_reading_events(add)
            self._meta_patch_events(add)
        if self.session in ("open", "closing"):
            self._carried_events(add)
        self._own_events(add, active, ev)
        if self.deviations:
            self._deviation_events(add)
        return ev

    def _prompt_events(self, add: Any, rid: int, waiting: int | None, open_: bool) -> None:
        """The Agent's answers to one prompt: the prompt table's rows from its state
        (``_can``; guard ``oldest_held``: it is the oldest prompt still waiting; ``own_reason``:
        the reading ``rejected-after-cancel-request``), in the order ``_PROMPT_TRIGGERS``, and
        within the Agent's own choices:

        - it holds a prompt only when every prompt received before it and still waiting is held
          (feature ``hold``);
        - it refuses a prompt not yet asked to stop (received or held) only with feature
          ``fail`` (the oldest held one) or when the prompt's content is invalid;
        - it inserts a received prompt only when it is the oldest waiting, or under
          ``prompt-ahead-of-held=held-only`` ahead of held ones, never while the session is not
          open, and never one whose content it did not advertise;
        - a covered prompt with unadvertised content is answered -32602 or -32800 as
          ``model.between`` says under the reading ``cancelled-invalid-prompt``
          (``covered_invalid_answers``: ``withdraw_invalid`` / ``withdraw``).
        """
        p = self.prompts[rid]
        st = p[0]
        allowed = self._can("prompt", st, self.prompt_ctx[rid == waiting])
        if not allowed:
            return
        # how a covered prompt with unadvertised content may be answered (``model.between``)
        answers = self.between.covered_invalid_answers(self.rd["cancelled-invalid-prompt"])
        unadvertised = p[4] == "unadvertised"
        for trigger in _PROMPT_TRIGGERS:
            if trigger not in allowed:
                continue
            if trigger == "hold":
                if "hold" in self.cfg.features and self._holds_in_order(rid):
                    add(("agent", "hold", rid))
            elif trigger == "reject":
                if (
                    self._has("hook_refusal")
                    and not p[4]
                    and (st == prm.RECEIVED or rid == waiting)
                    and self.real != fgm.IDLE
                    and "hook_refused" not in self.extras
                    and self._reading(BUSY_REFUSAL, "may-have-other-reason")
                ):
                    add(("agent", "reject_hook", rid))  # -32600, for a reason of its own
                fail = "fail" in self.cfg.features
                if st == prm.RECEIVED and not (fail or p[4]):
                    continue
                if st == prm.HELD and not ((fail and rid == waiting) or p[4]):
                    continue
                add(("agent", "reject", rid))
            elif trigger == "insert":
                if (
                    open_
                    and (st != prm.RECEIVED or rid == waiting or self._may_overtake(rid))
                    and (not unadvertised or not self._applies(bw.CONTENT_ADVERTISED.rule))
                    and self.between.may_insert_now(p[5], self.real != fgm.IDLE)
                ):
                    add(("agent", "insert", rid))
            elif trigger == "withdraw":
                if st == prm.COVERED and unadvertised and "invalid" in answers:
                    add(("agent", "withdraw_invalid", rid))  # -32602
                if not (st == prm.COVERED and unadvertised and "cancelled" not in answers):
                    add(("agent", "withdraw", rid))
            else:
                add(("agent", trigger, rid))

    def _holds_in_order(self, rid: int) -> bool:
        """Every prompt received before ``rid`` and still waiting is held: the Agent may hold it
        too. This Agent's own behaviour (it decides on its prompts in the order they came), not a
        rule: the order of insertion is ``model.between`` HELD_IN_ORDER's, which the prompt table's
        guard ``oldest_held`` states."""
        before = self.order[: self.order.index(rid)]
        return all(self.prompts[r][0] not in (prm.RECEIVED, prm.CANCEL_REQUESTED) for r in before)

    def _may_overtake(self, rid: int) -> bool:
        """A newly received prompt may be inserted at once ahead of held ones where
        ``model.between`` says so (``may_overtake_held``: the reading ``prompt-ahead-of-held``);
        every prompt received before it and still waiting is held."""
        if not self.between.may_overtake_held(self.rd["prompt-ahead-of-held"]):
            return False
        before = self.order[: self.order.index(rid)]
        waiting = [r for r in before if self.prompts[r][0] in _INSERTABLE]
        return bool(waiting) and all(self.prompts[r][0] != prm.RECEIVED for r in waiting)

    def _idle_reading_events(self, add: Any) -> None:
        """A repeated idle, once per run, where the reading lets a repeat bring a stop reason
        (``repeated-idle-new-stop-reason=snapshot``): a new one, or the last one again where the
        resume's snapshot left it out (``unstated``: within this Agent's bounds, the one place a
        repeat tells the Client something). Under ``completion`` a stop reason the idle before
        it did not carry completes work, so the Agent never sends one there: it would report
        running first."""
        if self.last_stop is None or self.reported != fgm.IDLE or "restated" in self.extras:
            return
        if not self._reading("repeated-idle-new-stop-reason", "snapshot"):
            return
        if "unstated" in self.extras and self.last_stop in _RESTATED:
            add(("agent", "restate_idle", self.last_stop))
        if self._restated_reason() is not None:
            add(("agent", "restate_idle", None))

    def _carried_events(self, add: Any) -> None:
        for tid, t in self.tools.items():
            if t[1] == "carried" and t[0] in tcm.LIVE:
                add(("agent", "carried_done", tid))
        if (
            "correct" in self.cfg.features
            and "corrected" not in self.extras
            and self._reading(tcm.FINAL_CHANGE, "reopen-only")
        ):
            for tid, t in self.tools.items():
                if t[0] in tcm.FINAL:
                    add(("agent", "tool_correct", tid))

    def _do_tool_correct(self, tid: str) -> list[Msg]:
        """``final-status-change=reopen-only``: a finished tool call's outcome is corrected to
        another final status (completed to failed, failed or cancelled to completed), once per run
        (feature ``correct``). It starts no work: no move of the tool-call
        table, whose call stays final."""
        self.extras = self.extras | {"corrected"}
        status = tcm.FAILED if self.tools[tid][0] == tcm.COMPLETED else tcm.COMPLETED
        _put(self.tools, tid, 0, status)
        return [wire.tool_call(self.sid, tid, status)]

    def _restated_reason(self) -> str | None:
        if self.last_stop != fgm.END_TURN:
            return fgm.END_TURN
        return fgm.MAX_TOKENS if self._has("limits") else None

    def _work_waiting(self) -> bool:
        return self._inserted_waiting() or self._hook_possible()

    def _inserted_waiting(self) -> bool:
        return any(
            self.prompts[r][0] in (prm.INSERTED, prm.ANSWERED) and not self.prompts[r][3] for r in self.order
        )

    def _hook_possible(self) -> bool:
        """Hook work may start: a prompt waits for insertion, within the ``hooks`` bound."""
        return self._has("hook") and self.hooks_run < self.cfg.hooks and self._oldest_waiting() is not None

    def _count_hook(self, followup_may_start: bool) -> None:
        """Called as foreground work starts: count it as hook work when only a waiting prompt
        justifies it (``followup_may_start``: pending follow-up work would justify this start
        too; it does ``start`` but not ``start_blocked``)."""
        if followup_may_start and self.followup:
            return
        if not self._inserted_waiting() and self._hook_possible():
            self.hooks_run += 1

    def _active_events(self, add: Any, doing: frozenset[str]) -> None:
        """Active work's moves: the foreground table's rows from the state the work is really in
        (``output`` where model output is progress; ``block``, ``resume``, ``end``), within
        the Agent's bounds (``Config.outputs``, ``tool_calls``, ``permissions``, ``elicitations``)
        and the rules between machines it asks ``model.between`` (the stop reasons of work a
        cancel reached; ``_can_end``: what is owed before the idle). Its own behaviour, not rules:
        it blocks only while the work waits on the user and resumes only once nothing is waited
        on (``_blocked``), and work it is cancelling starts no new output, tool call, background
        work or elicitation (a freedom CANCEL-13 gives that it does not take).
        ``doing``: the foreground table's agent triggers from the state the work is in."""
        cfg = self.cfg
        features = cfg.features
        blocked = self._blocked()
        producing = "output" in doing
        if (
            self.real == fgm.REQUIRES_ACTION
            and self.reported == fgm.REQUIRES_ACTION
            and self.cur_msg is not None
            and "pending_out" not in self.extras
            and not self.between.blocked_output_is_progress(self.rd["output-while-requires-action"])
        ):
            add(("agent", "pending_say", None))  # once per run
        if producing and not self.cancelling:
            if self.turn_outputs < cfg.outputs:
                add(("agent", "say", None))
                if "thought" in features:
                    add(("agent", "think", None))
                if "plan" in features:
                    add(("agent", "plan", None))
            if self.tools_started < cfg.tool_calls:
                add(("agent", "tool", None))
                if "permission" in features and self.perms_started < cfg.permissions:
                    add(("agent", "tool_ask", None))
                    if "multi_request" in features:
                        add(("agent", "tool_ask_running", None))
            if "plan" in self.extras and "plan_removed" not in self.extras:
                add(("agent", "plan_removed", None))
            if self.elicits_started < cfg.elicitations:
                for mode in em.MODES:  # ``model.between`` ADVERTISED_MODES
                    if self.between.mode_advertised(mode, self.elicit_modes) or not self._applies(
                        bw.ADVERTISED_MODES.rule
                    ):
                        add(("agent", "elicit", mode))
        if "block" in doing and not self.cancelling:
            # ``model.between`` BLOCKED_ON_USER: requires_action needs a request outstanding; this
            # Agent blocks when its work waits on one (``blocked``), a seeded bug with none
            justified = self.between.blocked_on_user(self._asking())
            if blocked if justified else not self._applies(bw.BLOCKED_ON_USER.rule):
                add(("agent", "block", None))
        if producing:
            self._tool_events(add, "pause" in features)
        if self.real != fgm.IDLE and "pause" in features and self.tool_updates < cfg.tool_updates:
            for tid, t in self.tools.items():
                if not t[1]:
                    add(("agent", "tool_content", (tid, True)))
                    add(("agent", "tool_content", (tid, False)))
        if not blocked and "resume" in doing:
            add(("agent", "resume", None))
        if "end" not in doing or self.between.user_messages_owed(self._unreported()):
            return  # (every end: the user messages of inserted prompts go before its idle)
        if self.cancelling:  # ``model.between`` CANCEL_CONFIRMED: the confirming stop reasons
            for reason in self.between.confirming_reasons():
                add(("agent", "end", reason))
            if (
                not self.between.own_end_after_cancel(self.rd["cancel-takes-effect"])
                and "unobserved" not in self.extras
            ):
                return
            # own_end_after_cancel (when-acted): the work may have ended before the Agent acted on
            # the cancel; unobserved: before the cancel came (``_start_cancelling``)
        self._stop_events(add)
        if self._can_end():
            add(("agent", "end", fgm.END_TURN))
            if "limits" in features:
                add(("agent", "end", fgm.MAX_TOKENS))
                add(("agent", "end", fgm.MAX_TURN_REQUESTS))
                add(("agent", "end", fgm.REFUSAL))
            if "custom_stop" in features:
                add(("agent", "end", CUSTOM_STOP))
                if self.between.future_reason_possible(self.rd["future-stop-reason"]):
                    add(("agent", "end", FUTURE_STOP))
            if "omit_stop" in features:
                add(("agent", "end", None))
        if "fail" in features and not self.between.owed_before_idle((), (), self._unlisted_work()):
            add(("agent", "end", fgm.ERROR))  # failing work owes no tool result (``_settle_end``)

    def _tool_events(self, add: Any, pause: bool) -> None:
        """Status moves of foreground tool calls: the tool-call table's rows from each call's
        status (``_can``), made as ``tool_run`` / ``tool_done`` (pending -> in_progress ->
        completed, with content) or, with feature ``pause``, as a bare status update
        (``tool_status``, ``_offers_status``)."""
        waiting = self._elicited_tools() if self.elicits else frozenset()
        for tid, t in self.tools.items():
            if (
                t[1]
                or (t[2] is not None and self.perms[t[2]][0] == pm.PENDING)
                or tid in waiting
                or t[-1] in ("ended-e", "late-e")
            ):
                continue
            allowed = self._can("tool_call", t[0])
            if t[0] == tcm.PENDING and "run" in allowed:
                add(("agent", "tool_run", tid))
            elif t[0] == tcm.IN_PROGRESS and "complete" in allowed:
                add(("agent", "tool_done", tid))
            if not pause:
                continue
            for status, trigger in (*tcm.STATUS_TRIGGER.items(), (tcm.CUSTOM_STATUS, "custom_status")):
                plain = (t[0], status) in _PLAIN_MOVES
                if not plain and self._offers_status(t, status) and trigger in allowed:
                    add(("agent", "tool_status", (tid, status)))

    def _offers_status(self, tool: tuple[Any, ...], status: str) -> bool:
        """Whether the Agent offers ``status`` as a bare status update of a foreground tool call:
        not where ``model.between`` APPROVED_RUNS forbids it (a granted call completing before it
        ran), and, a bound of this Agent rather than a rule, on a call with a permission request
        only failed or cancelled: such a call runs and completes by ``tool_run`` and
        ``tool_done`` (which also fail a refused call), so bare moves would only repeat them."""
        granted = len(tool) > 3 and tool[3] == "allowed" and tool[0] == tcm.PENDING
        if self.between.completes_unrun(granted, status):
            return False
        return tool[2] is None or status in (tcm.FAILED, tcm.CANCELLED)

    def _unlisted_work(self) -> list[tuple[str, str]]:
        """Announced background work not yet in the list (``model.between`` owed_before_idle: it
        would pass for foreground work)."""
        return [key for key, st in self.items.items() if st == bgm.ANNOUNCED and key not in self.listed]

    def _can_end(self) -> bool:
        """Whether the work may end on its own (a stop reason of its own, not error): nothing is
        owed before the idle (``model.between`` UPDATES_BEFORE_IDLE, ``owed_before_idle``: tool
        results, user messages, unlisted background work; ``may_carry_on``: an in_progress tool
        call that may go on after the idle). Not a rule but this Agent's own behaviour: work that
        waits on the user's answer (``_blocked``) does not end on its own; it may fail or be
        cancelled."""
        return not self._owes_before_idle(stopping=False) and not self._blocked()

    def _owes_before_idle(self, stopping: bool) -> bool:
        """``model.between`` owed_before_idle for an end_turn idle now: the live tool calls that
        may not carry on past it (``may_carry_on``), besides the unapproved ones a ``stop``
        cancels (``stopping``), the unreported user messages, the unlisted background work."""
        carry = self.rd["tool-updates-after-idle"]
        live = [
            t
            for t in self._fg_tools_live()
            if not (stopping and _unapproved(self.tools[t]))
            and not self.between.may_carry_on(self.tools[t][0], fgm.END_TURN, self.cancelling, carry)
        ]
        return self.between.owed_before_idle(live, self._unreported(), self._unlisted_work())

    def _stop_events(self, add: Any) -> None:
        """The Agent stops its work on its own while it waits on the user or after a refusal:
        "Agents MAY stop foreground work at any point" (4.), "or idle if the work ends without
        resuming" (5.). The tool calls that asked and were not approved (``_unapproved``) are
        cancelled, "cancelled before it completed" (the schema's ToolCallStatus), as the pending
        updates owed before the idle; the requests it waited on are no longer waited on
        (``_settle_end``), their late answers ignored (Waiting for user action). The idle says
        the work finished (end_turn), or, with ``fail``, that it then failed. Within this
        Agent's bounds: only where nothing else is owed or waited on (an elicitation); with
        feature ``stop``."""
        if (
            "stop" not in self.cfg.features
            or not any(_unapproved(t) for t in self.tools.values())
            or any(e[0] in em.BLOCKING for e in self.elicits.values())
            or self._owes_before_idle(stopping=True)
        ):
            return
        add(("agent", "stop", fgm.END_TURN))
        if "fail" in self.cfg.features:
            add(("agent", "stop", fgm.ERROR))

    def _do_stop(self, reason: Any) -> list[Msg]:
        reason, seen = _seen(reason)
        out: list[Msg] = []
        for tid, t in self.tools.items():
            if _unapproved(t):
                out.append(self._tool_update(tid, "cancel"))
        return out + self._settle_end(reason, seen=seen)

    def _ends_unseen(self) -> bool:
        """Feature ``unseen_end``: while the state reported owes no idle (the foreground table's
        ``eventually``: unknown, an unrecognized state; not idle, where no work is shown to hide),
        the work may end unobserved: unknown is an "actual loss of observability" (Session
        states), and "a later current-state snapshot restores a known state without implying
        that work started or ended while it was unobservable" (Initial state and
        synchronization). It settles what the work owes as its idle would (``_settle_end``), but
        reports nothing for the end itself; not work a session/cancel or session/close reached
        while it was reported active, whose confirming idle no later message could stand in for
        (``model.between`` snapshot_leaves_cancel, asked of the resume snapshot that would
        follow)."""
        if "unseen_end" not in self.cfg.features or self.reported == fgm.IDLE:
            return False
        if self.specs["foreground"].eventually.get(self.reported) is not None:
            return False
        pending = self.cancelling and "unobserved" not in self.extras
        return not self.between.snapshot_leaves_cancel(pending, resume_snapshot=True)

    def _closes_as_reported(self) -> bool:
        """Whether the session/close response may come with the state reported now (the work
        really over, ``enabled``): idle; with feature ``unseen_end``, any state that
        ``model.between`` close_leaves_work lets a close response leave (unknown, an unrecognized
        state: the work ended unseen, ``_ends_unseen``), as the foreground table's obligation on
        it says (``eventually``)."""
        if self.reported == fgm.IDLE:
            return True
        if "unseen_end" not in self.cfg.features:
            return False
        owed = self.specs["foreground"].eventually.get(self.reported)
        pending = self.cancelling and "unobserved" not in self.extras
        active = self.reported in (fgm.RUNNING, fgm.REQUIRES_ACTION)
        return owed is None or self.between.close_leaves_work(active, pending, owed) is None

    def _uninserted(self) -> bool:
        """A prompt waits unanswered and uninserted (``own_user_message``: work started then is
        not the Agent's own)."""
        return any(self.prompts[r][0] in prm.PENDING for r in self.order)

    def _unreported(self) -> list[int]:
        """Inserted prompts whose user message is not reported yet (``model.between``
        USER_MESSAGE_REPORTED: owed before the idle ending the work and before the close
        response)."""
        p = self.prompts
        return [r for r in self.order if p[r][0] in (prm.INSERTED, prm.ANSWERED) and not p[r][2]]

    def _background_events(self, add: Any, active: bool) -> None:
        """Background work: start (from running foreground work), list, finalize, remove.
        While the session is closing, live items are finalized and removed (closing stops them)."""
        cfg = self.cfg
        features = cfg.features
        if self.session not in ("open", "closing"):
            return
        if (
            self.session == "open"
            and active
            and self.real == fgm.RUNNING
            and not self.cancelling
            and self.bg_started < cfg.background
        ):
            if "terminal" in features:
                add(("agent", "bg_start", "terminal"))
                if (
                    not self.between.terminal_alone_binds(self.rd[TOOL_WITH_LISTED_TERMINAL])
                    or "embed" in features
                ):
                    add(("agent", "bg_start", "terminal+tool"))
            if "bg_tool" in features:
                add(("agent", "bg_start", "tool_call"))
            if "subagent" in features and ("subagent", self.child) not in self.items:
                add(("agent", "bg_start", "subagent"))  # one child; a finished one runs again
        for key, st in self.items.items():
            if key[0] == "tool_call" and key[1].startswith("tc_term"):
                continue  # a tool call embedding a terminal lives and is listed with it
            self._item_events(add, key, st, active)
        if not self._applies(bw.CANCELLED_PERMISSIONS.rule) or not self._applies(
            bw.LATE_ANSWERS_IGNORED.rule
        ):  # a late approval, accept or completion of cancelled work runs its tool call
            for tid, t in self.tools.items():
                if t[-1] in ("late", "late-e") and t[0] == tcm.PENDING:
                    add(("agent", "late_run", tid))
        self._elicitation_events(add)
        for rid, perm in self.perms.items():
            # the permission table's withdraw; a pending request of foreground work is not
            # withdrawn while its work goes on (cancelling the work abandons it first)
            background = perm[0] != pm.PENDING or self.tools[perm[1]][1]
            if background and "withdraw" in self._can("permission", perm[0]):
                add(("agent", "perm_withdraw", rid))

    def _elicitation_events(self, add: Any) -> None:
        """The Agent's moves on its elicitations: the elicitation table's agent rows from each
        one's state (``_can``), within its own choices: the external completion of an accepted
        URL elicitation (``elicit_complete``; once more after its work ended, then ignored), and
        the withdrawal (``elicit_withdraw``) of one abandoned with cancelled work (also while it
        carries the cancel out, before its idle: it stops waiting for it, the table's abandon,
        then withdraws it: Cancellation, "It SHOULD cancel each of them with $/cancel_request",
        and "The same rules apply to permissions and both elicitation modes", Lifecycle
        examples), or of a pending one it no longer needs while its work goes on."""
        if self.session not in (sm.OPEN, sm.CLOSING):
            return
        for rid, e in self.elicits.items():
            allowed = self._can("elicitation", e[0])
            if "complete" in allowed and e[3] and not e[4]:
                add(("agent", "elicit_complete", rid))
            if "withdraw" in allowed:
                add(("agent", "elicit_withdraw", rid))

    def _item_events(self, add: Any, key: tuple[str, str], st: str, active: bool) -> None:
        """The Agent's moves on one background item: the background table's rows from its state
        (``_can``; guard ``child``: it is the subagent child; ``becomes_foreground``: the
        reading ``waited-on-background`` is ``becomes-foreground``), in the order
        ``_BACKGROUND_TRIGGERS``, within its own choices:

        - ``list``: a snapshot naming an announced item (``bg_list``), or a finished child
          given new work, at most ``Config.reruns`` times while the session is open
          (``bg_rerun``);
        - ``finalize``: the item finishes (``bg_finish``), unless it waits on a permission
          request; besides finishing, a live item may ask and stream (``_live_item_events``);
        - ``adopt``: foreground work that really runs, reported so, not being cancelled, starts
          waiting on a listed background tool call (``bg_adopt``);
        - ``unlist``: a snapshot removing a finished item (``bg_unlist``), with known follow-up
          work reported in it when the session is idle (``bg_unlist_followup``, feature
          ``followup``)."""
        ctx = {
            "child": key[0] == "subagent",
            "becomes_foreground": self.rd[bgm.WAITED_ON] == "becomes-foreground",
        }
        allowed = self._can("background_item", st, ctx)
        for trigger in _BACKGROUND_TRIGGERS:
            if trigger not in allowed:
                continue
            if trigger == "list":
                if st != bgm.DONE and key not in self.listed:
                    add(("agent", "bg_list", key))
                elif st == bgm.DONE and self._open() and self.reruns < self.cfg.reruns:
                    add(("agent", "bg_rerun", key))  # a detached child gets work again
            elif trigger == "finalize":
                if not self._awaits_permission(key):
                    add(("agent", "bg_finish", key))
                self._live_item_events(add, key)
            elif trigger == "adopt":
                if (
                    key[0] == "tool_call"
                    and self.real == self.reported
                    and self.real in (fgm.RUNNING, fgm.REQUIRES_ACTION)
                    and not self.cancelling
                    and self._open()
                ):
                    add(("agent", "bg_adopt", key))
            elif trigger == "unlist":
                add(("agent", "bg_unlist", key))
                if "followup" in self.cfg.features and not active and self._open():
                    add(("agent", "bg_unlist_followup", key))

    def _awaits_permission(self, key: tuple[str, str]) -> bool:
        if key[0] != "tool_call" or key[1] not in self.tools:
            return False
        rid = self.tools[key[1]][2]
        return rid is not None and self.perms[rid][0] == pm.PENDING

    def _live_item_events(self, add: Any, key: tuple[str, str]) -> None:
        """What a live background item may do besides finishing: ask permission (a background
        tool call, even while idle: Foreground and background work), stream output (a
        terminal's ``terminal_output_chunk``, a child's ``session_message_chunk``)."""
        kind, ident = key
        features = self.cfg.features
        if (
            kind == "tool_call"
            and "bg_permission" in features
            and self.perms_started < self.cfg.permissions
            and ident in self.tools
            and self.tools[ident][2] is None
            and self.session == "open"
        ):
            add(("agent", "bg_ask", ident))
        if "extras" in features and "out:" + ident not in self.extras and self.session == "open":
            if kind == "terminal":
                add(("agent", "terminal_output", ident))
            elif kind == "subagent" and self.child_msg is not None:
                add(("agent", "child_chunk", ident))

    def _compaction_events(self, add: Any) -> None:
        """Compaction, also while idle: it ends completed, failed, cancelled; a custom status
        (``_``) before or after its end implies no lifecycle; its summary is patched and
        streamed in any status (Session compaction)."""
        cfg = self.cfg
        if self.comp_started < cfg.compactions and self._open():
            add(("agent", "compact_start", None))
        if not self.compactions:
            return
        spent = {t: getattr(self, n) >= self.comp_started for t, n in _COMPACTION_BOUNDS.items()}
        for cid, st in self.compactions.items():
            allowed = self._can("compaction", st)
            for move, trigger in _COMPACTION_ACTIONS.items():
                if trigger in allowed and not spent.get(trigger):
                    add(("agent", move, cid))

    def _resume_events(self) -> list[Event]:
        """The resume handshake, one step along the session table's rows: the history replay
        when the Client asked for it and there is history (``replay``: resuming, then replaying
        for every further update), the snapshot (``resync`` without a replay), the snapshot
        repeated where the table lets a synced session take another (``again``), the response;
        or the response before any snapshot where the table has that row (a variant's; the
        seeded bug response-before-snapshot fires that forbidden cell: ``_fire``)."""
        ev: list[Event] = []
        can = self._can
        if self.replay and self.history:
            move = "replay"
            replaying = can("session", sm.REPLAYING)
            more = len(self.history) == 1 or "replay" in replaying
            ready = "replay" in can("session", sm.RESUMING) and more and "snapshot" in replaying
        else:
            move, ready = "resync", "snapshot" in can("session", sm.RESUMING)
        synced = can("session", sm.SYNCED)
        if ready and "resumed" in synced:
            ev.append(("agent", move, None))
            if "snapshot" in synced:
                ev.append(("agent", move, "again"))  # the snapshot repeated before the response
        early = deviations.forced(self.deviations, "session", sm.RESUMING)
        if early or "resumed" in can("session", sm.RESUMING):
            ev.append(("agent", "resume_early", None))
        return ev

    def initial_idle(self) -> Msg:
        """The new session's initial idle (optional; no completion), as this Agent reports it."""
        return self._state(fgm.IDLE)

    def _closed_out_events(self, add: Any) -> None:
        """Prompts a session/close stopped may be answered -32800 after the close response (no
        order binds the two responses)."""
        for rid in self.order:
            if self.prompts[rid][0] == prm.CLOSED_OUT and "withdraw" in self._can("prompt", prm.CLOSED_OUT):
                add(("agent", "withdraw", rid))

    def _own_events(self, add: Any, active: bool, ev: list[Event]) -> None:
        """Freedoms of the Agent no table row is about, each once per run:
        - ``goal``: foreground work it starts itself while idle, no prompt waiting (pursuing a
          goal: StateUpdate, "foreground work ... can start with a prompt or be agent-initiated");
        - ``commands``: an ``available_commands_update``;
        - ``bare_error``: ending (or stopping) work with the error stop reason and no ``error``
          field;
        - (any run with ``fail``) ending work with the error stop reason while an in_progress tool
          call carries on past it (``_may_carry_past_error``);
        - ``stop_unlisted``: while it carries out a cancel, stopping a terminal it does not list."""
        features = self.cfg.features
        if self.cancelling and "stop_unlisted" in features and self.session in (sm.OPEN, sm.CLOSING):
            self._stop_unlisted_events(add)
        if active and "bare_error" in features and "fail" in features:  # a closing session's work too
            if ("agent", "end", "error") in ev:
                add(("agent", "end_bare_error", None))
            if ("agent", "stop", "error") in ev:
                add(("agent", "end_bare_error", "stop"))
        if not self._open():
            return
        if not active and "goal" in features and self._may_start_goal():
            add(("agent", "start_goal", None))
            if self._unseen():
                add(("agent", "start_goal", "unseen"))
            if self._may_announce():
                add(("agent", "synthetic_user", "announce"))
        if "commands" in features and "commands" not in self.extras:
            add(("agent", "commands", None))
        if active and ("agent", "end", "error") in ev and self._may_carry_past_error():
            add(("agent", "end_error_carrying", None))

    def _stop_unlisted_events(self, add: Any) -> None:
        """Cancellation: "The Agent MAY stop background activity it does not list". While it
        carries out a cancel, a terminal it announced and never listed may be stopped (killed:
        it exits with a signal)."""
        for key, st in self.items.items():
            if key[0] == "terminal" and st == bgm.ANNOUNCED and key not in self.listed:
                add(("agent", "bg_stop", key))

    def _do_bg_stop(self, key: tuple[str, str]) -> list[Msg]:
        out = self._do_bg_finish(key)
        out[0]["params"]["update"]["exitStatus"] = {"signal": "SIGTERM"}
        return out

    def _may_start_goal(self) -> bool:
        return (
            "goal" not in self.extras
            and "start" in self._can("foreground", self.real, self.fg_ctx)
            and self._oldest_waiting() is None
            and not self._inserted_waiting()
        )

    def _may_announce(self) -> bool:
        """Feature ``announce``: before starting work of its own (``start_goal``) from idle, the
        Agent reports its own user message for it (``synthetic_user``), outside work, and then
        reports that work starting next (model.between OWN_USER_MESSAGE: not yet known at the
        message, allowed when the Agent's own work is reported starting next, which it then
        must)."""
        return (
            "announce" in self.cfg.features
            and "synthetic" not in self.extras
            and self.reported == fgm.IDLE
            and self._reading("unaccounted-user-message", "agent-initiated")
            and self.between.own_user_message("idle", False) is None
        )

    def _do_start_goal(self, unseen: str | None) -> list[Msg]:
        self.extras = (self.extras - {"announced"}) | {"goal"}
        self.followup = True  # work of its own, as after a background task finished
        return self._do_start(unseen)

    def _do_commands(self, _: Any) -> list[Msg]:
        self.extras = self.extras | {"commands"}
        command = {"type": "command", "name": "review", "description": "Review the open changes"}
        return [
            wire.update(
                self.sid, {"sessionUpdate": "available_commands_update", "availableCommands": [command]}
            )
        ]

    def _do_end_bare_error(self, move: str | None) -> list[Msg]:
        """An error idle without its ``error`` field: of ``end``, or (``move`` "stop") of ``stop``."""
        out = self._do_stop(fgm.ERROR) if move == "stop" else self._settle_end(fgm.ERROR)
        out[-1]["params"]["update"].pop("error", None)  # the error stop reason alone
        return out

    def _declined_events(self, add: Any) -> None:
        """Waiting for user action: "declining or cancelling a request may lead to resumed work, a
        fallback, or completion". While requires_action is reported, a tool call whose request
        was declined (or failed) may be given up as failed without the work resuming: no
        progress, so running is not owed (the work may then end from requires_action)."""
        if self.real != fgm.REQUIRES_ACTION or self._blocked():
            return
        for tid, t in self.tools.items():
            if (
                not t[1]
                and len(t) > 3
                and t[3] == "denied"
                and t[0] in tcm.LIVE
                and "fail" in self._can("tool_call", t[0])
            ):
                add(("agent", "tool_status", (tid, tcm.FAILED)))

    def _meta_patch_events(self, add: Any) -> None:
        """Feature ``meta``: once per run, while idle after work that sent a message, a patch of
        that message's metadata only (Entity IDs: later updates patch an entity in place, after
        idle too; no content, so nothing the ended work owed comes after its idle)."""
        if (
            "meta" in self.cfg.features
            and "meta" not in self.extras
            and self.real == self.reported == fgm.IDLE
            and self.ended_output not in (None, "msg_a_late")
        ):
            add(("agent", "meta_patch", None))

    def _do_meta_patch(self, _: Any) -> list[Msg]:
        self.extras = self.extras | {"meta"}
        mid = self.ended_output
        assert mid is not None
        upd = {"sessionUpdate": "agent_message", "messageId": mid, "_meta": {"acp-model/rated": "helpful"}}
        return [wire.update(self.sid, upd)]

    def _do_refuse_resume(self, _: Any) -> list[Msg]:
        """Answering a session/resume that cannot succeed (``refusing``): a second one received
        while one is answered, or one a session/close interrupted; an error response, in the
        order they came (it changes no machine: a refused resume leaves the session as it is)."""
        rid, self.refusing = self.refusing[0], self.refusing[1:]
        return [wire.error(rid, wire.INVALID_REQUEST, "session is being resumed or closed")]

    # -- doing ---------------------------------------------------------------------------------
    def do(self, name: str, arg: Any) -> list[Msg]:
        out: list[Msg] = getattr(self, "_do_" + name)(arg)
        if self.deviations:
            out = self._deviate(name, out)
        if name != "replay":  # replayed history re-sends known entities: no transition
            self._entity_steps(out)
        return out

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

    def _deviate(self, name: str, out: list[Msg]) -> list[Msg]:
        """The seeded bugs' changes to what move ``name`` sends (rewritten, copied, added)."""
        for r in deviations.rewrites(self.deviations, name):
            for msg in out:
                if deviations.rewrite(msg, r) and not (r.unless and self._has(r.unless)):
                    self._breach(r.rule)
        out, broken = deviations.copied(self.deviations, name, out)
        for rule in broken:
            self._breach(rule)
        for a in deviations.also(self.deviations, name):
            if a.rule not in self.marks:
                self._breach(a.rule)
                update = copy.deepcopy(dict(a.update))
                if a.reserve:  # about the next entity of that type: its ID is given now
                    self.ahead = (a.reserve, self._msg_id(_MSG_PREFIX[a.reserve]))
                    update["messageId"] = self.ahead[1]
                out.append(wire.update(self.sid, update))
        return out

    def _do_hold(self, rid: int) -> list[Msg]:
        self._prompt_fire(rid, "hold")
        return []

    def _do_insert(self, rid: int) -> list[Msg]:
        p = self.prompts[rid]
        if p[4] == "unadvertised":  # content_advertised not applied (a seeded bug: Unchecked)
            self._breach(bw.CONTENT_ADVERTISED.rule)
        # A seeded bug that inserts a covered prompt (a forbidden cell): the prompt machine
        # refuses it with the cell's violation, as it would any agent (``_fire``).
        self._prompt_fire(rid, "insert", oldest_held=self._oldest_waiting() == rid)
        _put(self.prompts, rid, 1, self._new_id("user_message", self._msg_id("msg_u")))
        return []

    def _do_answer(self, rid: int) -> list[Msg]:
        self._prompt_fire(rid, "answer")
        p = self.prompts[rid]
        return [wire.result(rid, {"messageId": p[1]})]

    def _refuse(self, rid: int, trigger: str, code: int, text: str) -> list[Msg]:
        """An error answer to prompt ``rid``: the prompt table's ``reject`` (never only because
        work is active: guard ``busy_only`` false; ``own_reason``: the reading
        ``rejected-after-cancel-request``) or ``withdraw``."""
        own = self.prompt_ctx[0]["own_reason"]
        self._prompt_fire(
            rid, trigger, **{"busy_only": False, "own_reason": own} if trigger == "reject" else {}
        )
        return [wire.error(rid, code, text)]

    def _do_reject(self, rid: int) -> list[Msg]:
        return self._refuse(rid, "reject", wire.INVALID_PARAMS, "prompt rejected")

    def _do_reject_hook(self, rid: int) -> list[Msg]:
        """``busy-refusal=may-have-other-reason``: while work is active, a hook of the Agent refuses
        a well-formed prompt with -32600 (feature ``hook_refusal``, once per run): a reason of its own, not
        the active work (the prompt table's guard busy_only is false)."""
        self.extras = self.extras | {"hook_refused"}
        return self._refuse(rid, "reject", wire.INVALID_REQUEST, "refused by a hook")

    def _do_withdraw_invalid(self, rid: int) -> list[Msg]:
        """``cancelled-invalid-prompt=invalid`` or ``either``: the content rule decides the
        answer of a covered prompt with unadvertised content (-32602)."""
        return self._refuse(rid, "withdraw", wire.INVALID_PARAMS, "unsupported prompt content")

    def _do_synthetic_user(self, announce: str | None) -> list[Msg]:
        """``unaccounted-user-message=other-sources`` (or ``agent-initiated``, in a follow-up the
        Agent started itself while no prompt waits for its answer): a user message of the Agent's
        own running work (an Agent-side insertion), which no session/prompt accounts for; once per
        run, before the work's other output. ``announce`` (``_may_announce``): sent from idle,
        its own work to start next, under an ID of its own that takes no number from the message
        IDs of prompts (it mints IDs as it likes)."""
        self.extras = self.extras | ({"synthetic", "announced"} if announce else {"synthetic"})
        mid = "msg_x_own" if announce else self._msg_id("msg_x")
        msg = wire.message("user_message", self.sid, mid, [wire.text("continue")])
        self.history.append(msg)
        return [msg]

    def _do_restate_idle(self, same: str | None) -> list[Msg]:
        """A repeated idle: the last stop reason again (``same``), or
        (``repeated-idle-new-stop-reason=snapshot``) with updated information, a new one."""
        self.extras = (self.extras - {"unstated"}) | {"restated"}
        reason = same or self._restated_reason()
        self.last_stop = reason
        return [self._state(fgm.IDLE, reason)]

    def _do_carried_done(self, tid: str) -> list[Msg]:
        """``tool-updates-after-idle=background``: a tool call that carried on after the idle
        ends as independent work."""
        return [self._tool_update(tid, "complete")]

    def _do_bg_adopt(self, key: tuple[str, str]) -> list[Msg]:
        """``waited-on-background=becomes-foreground``: foreground work starts waiting on a listed
        background tool call, which becomes foreground work and leaves the list unfinished (the
        table's ``adopt`` row). From then on this Agent runs it as foreground work only."""
        self._fire("background_item", self.items[key], "adopt", {"becomes_foreground": True})
        del self.items[key]
        self.listed = tuple(k for k in self.listed if k != key)
        _put(self.tools, key[1], 1, False)
        return [self._snapshot_now()]

    def _do_withdraw(self, rid: int) -> list[Msg]:
        return self._refuse(rid, "withdraw", wire.REQUEST_CANCELLED, "request cancelled")

    def _do_user_message(self, rid: int) -> list[Msg]:
        _put(self.prompts, rid, 2, True)
        mid = self.prompts[rid][1]
        msg = wire.message("user_message", self.sid, mid, [wire.text(f"prompt {rid}")])
        self.history.append(msg)
        return [msg]

    def _do_user_chunks(self, rid: int) -> list[Msg]:
        self._do_user_message(rid)  # reported, and retained whole
        mid = self.prompts[rid][1]
        return [wire.chunk("user_message_chunk", self.sid, mid, wire.text(t)) for t in ("prompt ", str(rid))]

    def _mark_handled(self) -> None:
        for rid in self.order:
            if self.prompts[rid][0] in (prm.INSERTED, prm.ANSWERED):
                _put(self.prompts, rid, 3, True)

    def _unseen(self) -> bool:
        """Feature ``unseen``: while the state reported is unknown or unrecognized, work may start
        without running being reported (unknown is an "actual loss of observability", Session
        states): the report stays as it is until the Agent reports the real state (``restore``)
        or the work's idle. Within this Agent's bounds, only work it starts itself
        (``start_goal``): a prompt's work started unseen and ended (end_turn) leaves the prompt
        monitor counting the prompt as still awaiting its work, so that the Agent's own user
        message in its next work is taken for ACC-06 (an open question for the checker, not a
        rule of this Agent)."""
        return "unseen" in self.cfg.features and self.reported in (fgm.UNKNOWN, fgm.UNRECOGNIZED)

    def _unseen_prompt(self) -> bool:
        """Feature ``unadvertised``: while a custom state is reported, a prompt's work may start
        without running being reported at once. Session states leaves custom states to the
        Agent, advertised or not ("Unless the Client has advertised support for a custom or
        future state, Agents MUST still report running ... where the state transitions require
        them": still, beside them); the Client shows generic busy until a known state arrives,
        and this Agent reports running later (``restore``) or the work's idle."""
        return "unadvertised" in self.cfg.features and self.reported == fgm.UNRECOGNIZED

    def _do_start(self, unseen: str | None) -> list[Msg]:
        # started by the Agent itself (model.between OWN_USER_MESSAGE)
        initiated = self.followup and self.between.own_work(self._uninserted(), self._inserted_waiting())
        self._count_hook(followup_may_start=True)
        self._begin(fgm.RUNNING, initiated)
        self.followup = False
        self._mark_handled()
        if unseen is not None:  # not observed: the state reported stays as it is (``_unseen``)
            self.extras = self.extras | {"unseen"}
            return []
        if "ended_unseen" in self.extras:  # running after the unknown reads as restored, no start
            self.extras = self.extras | {"unseen"}
        return [self._report(fgm.RUNNING)]

    def _do_start_blocked(self, _: Any) -> list[Msg]:
        self._count_hook(followup_may_start=False)
        self._begin(fgm.REQUIRES_ACTION, initiated=False)
        self._mark_handled()
        return self._do_tool_ask(None)

    def _begin(self, state: str, initiated: bool) -> None:
        """Foreground work starts in ``state``, a new interval of output; ``initiated``: work the
        Agent started itself (``model.between`` OWN_USER_MESSAGE)."""
        self.extras = (self.extras - {"initiated"}) | ({"initiated"} if initiated else frozenset())
        self.real = state
        self.turn_outputs = 0
        self.cur_msg = self.cur_thought = None

    def _output(self) -> None:
        """Model output: the foreground table's ``output`` from the reported state (custom states
        count as advertised when the Client may extend them, feature ``future``). A seeded bug
        that left running unreported sends its output anyway: its breach is already marked."""
        self.specs["foreground"].fire(self.reported, "output", self.fg_ctx)

    def _do_say(self, _: Any) -> list[Msg]:
        self._output()
        self.turn_outputs += 1
        if self.cur_msg is None and self.cur_thought is not None and self._has("chunks"):
            # the message derived from the same model output as the thought streams under its
            # messageId: one ID, thought chunks and message chunks (Entity IDs: two entities)
            self.cur_msg = self.cur_thought
            msg = wire.chunk("agent_message_chunk", self.sid, self.cur_msg, wire.text("Hello"))
        elif self.cur_msg is None or not self._has("chunks"):
            self.cur_msg = self._msg_id("msg_a")
            msg = wire.message("agent_message", self.sid, self.cur_msg, [wire.text("Hello")])
        else:
            msg = wire.chunk("agent_message_chunk", self.sid, self.cur_msg, wire.text(" more"))
        self.history.append(msg)
        return [msg]

    def _do_pending_say(self, _: Any) -> list[Msg]:
        """``output-while-requires-action=pending-output``: a chunk of the current message that
        the work produced before it blocked, sent while requires_action is reported (no progress:
        the foreground table's ``output`` is not fired); once per run."""
        self.extras = self.extras | {"pending_out"}
        assert self.cur_msg is not None
        msg = wire.chunk("agent_message_chunk", self.sid, self.cur_msg, wire.text(" (sent late)"))
        self.history.append(msg)
        return [msg]

    def _do_think(self, _: Any) -> list[Msg]:
        self._output()
        self.turn_outputs += 1
        if self.cur_thought is None:
            # A thought derived from the same model output as the current message may share
            # its messageId: it is still a separate entity (Entity IDs).
            self.cur_thought = self.cur_msg or self._msg_id("msg_t")
            return [wire.chunk("agent_thought_chunk", self.sid, self.cur_thought, wire.text("hmm"))]
        return [wire.message("agent_thought", self.sid, self.cur_thought, [wire.text("hmm, yes")])]

    def _do_plan(self, _: Any) -> list[Msg]:
        self.turn_outputs += 1
        self.next_plan += 1
        if self._has("extras"):
            self.extras = self.extras | {"plan"}  # a plan exists that can be removed
        return [wire.plan(self.sid, "plan_1", self.next_plan)]

    def _new_tool(self, ask: bool) -> list[Msg]:
        self.tools_started += 1
        tid = f"tc_{self.tools_started}"
        out = [wire.tool_call(self.sid, tid, "pending", title="Edit file", kind="edit")]
        self.tools[tid] = (tcm.PENDING, False, None)
        self.history.append(out[0])
        return [*out, *self._do_bg_ask(tid)] if ask else out

    def _do_tool(self, _: Any) -> list[Msg]:
        return self._new_tool(ask=False)

    def _do_tool_ask(self, _: Any) -> list[Msg]:
        out = self._new_tool(ask=True)
        self.real = fgm.REQUIRES_ACTION
        out.append(self._report(fgm.REQUIRES_ACTION))
        return out

    def _do_tool_ask_running(self, _: Any) -> list[Msg]:
        """Ask permission and keep running: other foreground work still progresses (Waiting for
        user action), so several requests can be outstanding."""
        return self._new_tool(ask=True)

    def _do_block(self, _: Any) -> list[Msg]:
        if not self.between.blocked_on_user(self._asking()):
            self._breach(bw.BLOCKED_ON_USER.rule)  # blocked on no request (a seeded bug: Unchecked)
        self.real = fgm.REQUIRES_ACTION
        return [self._report(fgm.REQUIRES_ACTION)]

    def _do_tool_status(self, arg: tuple[str, str]) -> list[Msg]:
        """A tool call pauses, goes back to pending, resumes, or ends (5. Tool invocation and
        status reporting; Background work: pending and paused calls are live)."""
        tid, status = arg
        _put(
            self.tools, tid, 0, self._fire("tool_call", self.tools[tid][0], tcm.status_trigger(status) or "")
        )
        return [wire.tool_call(self.sid, tid, status)]

    def _do_tool_content(self, arg: tuple[str, bool]) -> list[Msg]:
        """Content of a tool call, live or final: replaced by an update, appended by a chunk."""
        tid, replace = arg
        self.tool_updates += 1
        status = self.tools[tid][0]
        if replace:
            _put(self.tools, tid, 0, self.specs["tool_call"].fire(status, "replace_content"))
            return [
                wire.tool_call(self.sid, tid, content=[{"type": "content", "content": wire.text("diff")}])
            ]
        _put(self.tools, tid, 0, self.specs["tool_call"].fire(status, "append_content"))
        return [wire.tool_content_chunk(self.sid, tid, "more")]

    def _do_plan_removed(self, _: Any) -> list[Msg]:
        self.extras = self.extras | {"plan_removed"}
        return [wire.update(self.sid, {"sessionUpdate": "plan_removed", "planId": "plan_1"})]

    def _do_bg_ask(self, tid: str) -> list[Msg]:
        """A permission request for tool call ``tid`` (the move: of background work, the
        foreground state does not change)."""
        self.perms_started += 1
        self.extras = self.extras | {"asked"}
        rid = f"{self.requests}{self.perms_started}"
        self.perms[rid] = (pm.PENDING, tid)
        _put(self.tools, tid, 2, rid)
        return [wire.request_permission(rid, self.sid, tid)]

    def _do_perm_withdraw(self, rid: str) -> list[Msg]:
        _put(self.perms, rid, 0, self._fire("permission", self.perms[rid][0], "withdraw"))
        return [wire.cancel_request(rid)]

    # -- elicitations ----------------------------------------------------------------------------
    def _do_elicit(self, mode: str) -> list[Msg]:
        """Ask the user for input (form or URL mode): the request alone does not change the
        foreground state; the work is blocked from now on (``_blocked``: ``block`` reports it)."""
        if not self.between.mode_advertised(mode, self.elicit_modes):  # a seeded bug: Unchecked
            self._breach(bw.ADVERTISED_MODES.rule)
        self.elicits_started += 1
        self.extras = self.extras | {"asked"}
        rid = f"{self.requests.replace('perm_', 'elicit_', 1)}{self.elicits_started}"
        eid = f"{rid}_url"
        out: list[Msg] = []
        tid = None
        if not self._applies(bw.LATE_ANSWERS_IGNORED.rule):  # (a seeded bug: for a tool call it runs late)
            out = self._new_tool(ask=False)
            tid = f"tc_{self.tools_started}"
        self.elicits[rid] = (em.PENDING, mode, eid, False, False, tid)
        return [*out, wire.elicitation_create(rid, self.sid, mode, eid, tid)]

    def _elicit_answered(self, rid: str, msg: Msg) -> None:
        """The Client's answer: the elicitation table's row for it (an action the schema does not
        name is handled as cancel); an answer after the work ended is late, and ignored."""
        e = self.elicits[rid]
        result = msg.get("result")
        action = result.get("action") if isinstance(result, dict) else None
        trigger = action if action in ("accept", "decline") else "cancel"
        url = e[1] == "url"
        spec = self.specs["elicitation"]
        if spec.successor(e[0], trigger, {"url": url}) is None:
            return  # only after a seeded bug's move (a completion before the accept): done with it
        after = spec.fire(e[0], trigger, {"url": url})
        outside = url and trigger == "accept"  # the user goes on to the URL
        self.elicits[rid] = (after, e[1], e[2], outside, e[4], *e[5:])
        if trigger == "accept" and after == em.LATE:
            self._late_elicitation(e)

    def _do_elicit_complete(self, rid: str) -> list[Msg]:
        """The user finished a URL elicitation outside the Client (after the work ended: late, and
        the work is not resumed)."""
        e = self.elicits[rid]
        after = self._fire("elicitation", e[0], "complete", {"url": e[1] == "url"})
        self.elicits[rid] = (after, e[1], e[2], e[3], True, *e[5:])
        if after == em.LATE:
            self._late_elicitation(e)
        return [wire.elicitation_complete(e[2])]

    def _late_elicitation(self, e: tuple[Any, ...]) -> None:
        """A late accept or external completion of an elicitation of cancelled work: ignored,
        unless a seeded bug left its tool call pending to run it now (``late_run``)."""
        tid = e[5] if len(e) > 5 else None
        if tid is not None and self.tools[tid][0] == tcm.PENDING and self.tools[tid][-1] == "ended-e":
            self.tools[tid] = (*self.tools[tid][:-1], "late-e")

    def _elicited_tools(self) -> frozenset[str]:
        """Tool calls an elicitation still blocks (only a seeded bug ties them: the tool waits)."""
        return frozenset(e[5] for e in self.elicits.values() if len(e) > 5 and e[5] and e[0] in em.BLOCKING)

    def _do_elicit_withdraw(self, rid: str) -> list[Msg]:
        e = self.elicits[rid]
        state = e[0]
        if state == em.PENDING and self.cancelling:  # the cancelled work's: no longer waited on
            state = self._fire("elicitation", state, "abandon")
        _put(self.elicits, rid, 0, self._fire("elicitation", state, "withdraw"))
        return [wire.cancel_request(rid)]

    def _do_terminal_output(self, ident: str) -> list[Msg]:
        self.extras = self.extras | {"out:" + ident}
        return [
            wire.update(
                self.sid, {"sessionUpdate": "terminal_output_chunk", "terminalId": ident, "data": "b2sK"}
            )
        ]

    def _do_child_chunk(self, ident: str) -> list[Msg]:
        self.extras = self.extras | {"out:" + ident}
        assert self.child_msg is not None
        return [
            wire.chunk("session_message_chunk", self.child, self.child_msg, wire.text(" and report back"))
        ]

    def _do_future_state(self, _: Any) -> list[Msg]:
        self.futures += 1
        return [self._report(FUTURE_STATE)]

    def _do_resume(self, _: Any) -> list[Msg]:
        self.real = fgm.RUNNING
        return [self._report(fgm.RUNNING)]

    def _do_tool_run(self, tid: str) -> list[Msg]:
        """Run the tool; a refused call (or one whose approval raced the cancel, taken as not
        approved: ``receive``) fails instead, this Agent's fallback."""
        t = self.tools[tid]
        if len(t) > 3 and t[3] in ("denied", "raced"):  # raced: an approval taken as a refusal
            return [self._tool_update(tid, "fail")]
        return [self._tool_update(tid, "run"), wire.tool_content_chunk(self.sid, tid, "working")]

    def _do_late_run(self, tid: str) -> list[Msg]:
        """A late approval of a request of cancelled work runs its tool call (offered only where
        the Agent does not apply ``cancelled_permissions``)."""
        self._breach(
            self.between.late_answer("elicitation" if self.tools[tid][-1] == "late-e" else "permission").rule
        )
        self.tools[tid] = self.tools[tid][:-1]
        return [self._tool_update(tid, "run")]

    def _do_tool_done(self, tid: str) -> list[Msg]:
        return [
            self._tool_update(tid, "complete", content=[{"type": "content", "content": wire.text("done")}])
        ]

    def _tool_update(self, tid: str, trigger: str, **fields: Any) -> Msg:
        """Tool call ``tid`` moved by ``trigger``: the update reporting its new status."""
        status = self._fire("tool_call", self.tools[tid][0], trigger)
        _put(self.tools, tid, 0, status)
        return wire.tool_call(self.sid, tid, status, **fields)

    def _do_end(self, reason: Any) -> list[Msg]:
        reason, seen = _seen(reason)
        return self._settle_end(reason, seen=seen)

    def _may_carry_past_error(self) -> bool:
        """``tool-updates-after-idle=background``: an in_progress tool call of the failing work may
        carry on past its error idle as independent work, where no background list would leave it
        out (``model.between`` FAILED_TOOLS_FINAL: the Agent reports no list)."""
        return (
            self.between.carries_on_after_idle(self.rd["tool-updates-after-idle"])
            and not self.between.failed_work_tool(self._bg_list() is not None)
            and any(self.tools[t][0] == tcm.IN_PROGRESS for t in self._fg_tools_live())
        )

    def _do_end_error_carrying(self, _: Any) -> list[Msg]:
        """The error idle, an in_progress tool call carrying on past it (``_may_carry_past_error``)."""
        return self._settle_end(fgm.ERROR, carry_past_error=True)

    def _settle_end(self, reason: str, carry_past_error: bool = False, seen: bool = True) -> list[Msg]:
        """End foreground work as ``model.between`` says what it owes and takes with it: its live
        tool calls get a final status before the idle (CANCELLED_TOOLS_FINAL, UPDATES_BEFORE_IDLE;
        ``may_carry_on``: one may carry on after it; past an error idle only in the move that
        chooses it, ``carry_past_error``), the Agent stops waiting on the permission requests of
        the work it ends (``ends_with_work``, CANCELLED_PERMISSIONS: the permission table's
        abandon) and stops the listed work a cancel covers (CANCEL_COVERS), then idles (not
        ``seen``: the work ends unobserved, the state reported stays as it is, ``_ends_unseen``)."""
        out: list[Msg] = []
        confirms = reason in self.between.confirming_reasons()
        carry = self.rd["tool-updates-after-idle"]
        trigger = "cancel" if confirms else "fail"
        # a seeded bug that withholds the failed status deviates at an error idle (FAIL-04's), not at
        # an idle that ends work for another reason (its tool calls may carry on, or are owed anyway)
        withheld = (
            deviations.withholding(self.deviations, "tool_call", trigger)
            if self.deviations and (confirms or reason == fgm.ERROR)
            else None
        )
        elicited = self._elicited_tools() if self.elicits else frozenset()
        for tid in self._fg_tools_live():
            if withheld:  # a seeded bug never gives the work's tool calls this final status
                self._breach(deviations.rule(withheld))
                continue
            t = self.tools[tid]
            if (
                confirms
                and t[2] is not None
                and self.perms[t[2]][0] == pm.PENDING
                and not self._applies(bw.CANCELLED_PERMISSIONS.rule)
            ):
                self._breach(bw.CANCELLED_TOOLS_FINAL.rule)  # waiting on its permission request: left pending
                continue
            if confirms and tid in elicited and not self._applies(bw.LATE_ANSWERS_IGNORED.rule):
                self._breach(bw.CANCELLED_TOOLS_FINAL.rule)  # waiting on its elicitation: left pending
                self.tools[tid] = (*t, "ended-e")
                continue
            if self.between.may_carry_on(t[0], reason, confirms, carry, carry_past_error):
                _put(self.tools, tid, 1, "carried")  # it carries on after the idle as independent work
                continue
            out.append(self._tool_update(tid, trigger))
        for rid, perm in self.perms.items():
            if perm[0] == pm.PENDING and self.between.ends_with_work(bool(self.tools[perm[1]][1]), confirms):
                # not approved now; the $/cancel_request that lets the Client dismiss it is a
                # later choice (``perm_withdraw``), and the Client may answer first
                _put(self.perms, rid, 0, self.specs["permission"].fire(perm[0], "abandon"))
        if self.between.ends_with_work(listed=True, cancelled=confirms):  # a cancel covering listed work
            for key in [k for k in self.listed if self.items.get(k) == bgm.LISTED]:
                if self.items.get(key) == bgm.LISTED:  # (an embedding tool call ends with its terminal)
                    out += self._do_bg_finish(key)
            for key in [k for k in self.listed if self.items.get(k) == bgm.FINALIZED]:
                self._unlist(key)  # the idle's own list removes it
        for n in self.order:  # the work the waiting prompts were received in ends
            if self.prompts[n][5]:
                _put(self.prompts, n, 5, False)
        for rid, e in self.elicits.items():
            if e[0] in em.BLOCKING:  # no longer waited on: withdrawn later (``elicit_withdraw``)
                _put(self.elicits, rid, 0, self.specs["elicitation"].fire(e[0], "abandon"))
        err = (
            {"code": wire.INTERNAL_ERROR, "message": "model request failed"} if reason == fgm.ERROR else None
        )
        self.real = fgm.IDLE
        self.cancelling = False
        self.extras = self.extras - {
            "asked",
            "unobserved",
            "unseen",
        }  # (BLOCKED_ON_USER: a new stretch of asking)
        self.last_stop = reason
        if seen:
            out.append(self._report(fgm.IDLE, reason, err))
        else:  # work started next is shown as running after the unknown: no start (``_do_start``)
            self.extras = self.extras | {"ended_unseen"}
        self.ended_output = self.cur_msg or "msg_a_late"
        self.cur_msg = self.cur_thought = None
        self.turn_outputs = 0
        return out

    def _may_patch_ended(self) -> bool:
        """While idle, a chunk may patch the ended work's agent message where ``model.between``
        says so (``patch_allowed``: the reading ``patch-after-idle``)."""
        return (
            self.between.patch_allowed(self.rd["patch-after-idle"])
            and self.ended_output not in (None, "msg_a_late")
            and self.real == self.reported == fgm.IDLE
            and self._open()
        )

    def _do_late_output(self, _: Any) -> list[Msg]:
        """Output of the ended work after its idle: a patch the reading allows, else (a seeded
        bug's ``Offer``: any output of the ended work, a message it had not begun included) the
        breach ``model.between`` names (``Rules.late_update``)."""
        mid = self.ended_output or "msg_a_late"
        if not self._may_patch_ended():
            self._breach(self.between.late_update(self.last_stop in self.between.confirming_reasons()).rule)
        self.ended_output = None
        return [wire.chunk("agent_message_chunk", self.sid, mid, wire.text(" (late)"))]

    # background work
    def _do_bg_start(self, kind: str) -> list[Msg]:
        self.bg_started += 1
        with_tool = kind == "terminal+tool"  # tool-with-listed-terminal=may-have-other-work
        if with_tool:
            kind = "terminal"
        if kind == "terminal":
            fresh = f"term_{self.bg_started}"
            ident = self._new_id("terminal", fresh)
            msgs = [wire.terminal(self.sid, ident)]
            reuse = deviations.reused(self.deviations, "terminal")
            if ident != fresh and reuse is not None:  # an exited terminal's ID: it starts over
                msgs[0]["params"]["update"].update(copy.deepcopy(dict(reuse.reset)))
            else:
                self._fire("terminal", tm.LIVE, "start")  # a fresh terminal is live
        elif kind == "tool_call":
            self.tools_started += 1
            ident = f"tc_bg_{self.bg_started}"
            self.tools[ident] = (tcm.IN_PROGRESS, True, None)
            msgs = [wire.tool_call(self.sid, ident, "in_progress", title="Watch files", kind="execute")]
        else:
            ident = self.child
            msgs = [wire.subagent(self.sid, self.child), *self._task("Summarize the logs")]
        key = (kind, ident)
        self.items[key] = self.specs["background_item"].fire(bgm.UNANNOUNCED, "announce")
        if with_tool and kind == "terminal":
            self.tools_started += 1
            tid = _embedding(ident)
            self.tools[tid] = (tcm.IN_PROGRESS, True, None)
            msgs.insert(
                0,
                wire.tool_call(
                    self.sid, tid, "in_progress", content=[{"type": "terminal", "terminalId": ident}]
                ),
            )
            if not self.between.terminal_alone_binds(self.rd[TOOL_WITH_LISTED_TERMINAL]):
                self.items[("tool_call", tid)] = bgm.ANNOUNCED  # listed with its terminal
            # else (feature ``embed``): the terminal is all that keeps it alive, so only the
            # terminal is listed; it ends with the terminal (``_do_bg_finish``)
        return msgs

    def _snapshot_now(self) -> Msg:
        """A snapshot of the state reported, with the background list. Under a custom state where
        a prompt's work may have started while it was shown (``_unseen_prompt``: running is owed),
        the real state instead: a current-state snapshot restores a known state (State
        transitions)."""
        if self.reported == fgm.UNRECOGNIZED and "unadvertised" in self.cfg.features:
            return self._report(self.real)
        return self._state(self.reported)

    def _do_bg_list(self, key: tuple[str, str]) -> list[Msg]:
        """A snapshot naming the item (an item not yet started only for a seeded bug that lists
        before announcing: its ID is then taken; one already listed, named twice)."""
        child = {"child": key[0] == "subagent"}
        was = self.items.get(key, bgm.UNANNOUNCED)
        if was == bgm.UNANNOUNCED:
            self.bg_started += 1
        self.items[key] = self._fire("background_item", was, "list", child)
        self.bg_reported = True
        extra: list[tuple[str, str]] = [key]
        tc = ("tool_call", _embedding(key[1]))
        if key[0] == "terminal" and self.items.get(tc) == bgm.ANNOUNCED:
            if self._misread(TOOL_WITH_LISTED_TERMINAL):
                self._breach(self.misread[TOOL_WITH_LISTED_TERMINAL].rule)
            self.items[tc] = bgm.LISTED
            extra.append(tc)
        self.listed = (*self.listed, *extra)
        return [self._snapshot_now()]

    def _do_bg_rerun(self, key: tuple[str, str]) -> list[Msg]:
        """A child that finished gets a new task: it reports running, and is listed while it runs."""
        self.reruns += 1
        return self._task("Check the logs again") + self._do_bg_list(key)

    def _task(self, text: str) -> list[Msg]:
        """A task given to the child, which runs it: the outgoing view in this session and the
        incoming view in the child's, independent messages the Agent gives the same new ID (IDs
        are scoped to a session); the child running; then the two views linked, each naming the
        other's messageId."""
        mid = self.child_msg = self._msg_id("msg_s")
        content = [wire.text(text)]
        return [
            wire.session_message(self.sid, mid, None, content, recipient=self.child),
            wire.session_message(self.child, mid, self.sid, content),
            wire.state_update(self.child, "running", []),
            wire.subagent(self.sid, self.child, {"state": "running", "background": []}),
            wire.link(self.sid, mid, "recipientMessageId", mid),
            wire.link(self.child, mid, "senderMessageId", mid),
        ]

    def _do_bg_finish(self, key: tuple[str, str]) -> list[Msg]:
        kind, ident = key
        self.items[key] = self._fire("background_item", self.items[key], "finalize")
        if kind == "terminal":
            self._fire("terminal", tm.LIVE, "exit")
            out = [wire.terminal(self.sid, ident, exit_code=0)]
        elif kind == "tool_call":
            out = [self._tool_update(ident, "complete")]
        else:
            idle = {"state": "idle", "stopReason": "end_turn", "background": []}
            out = [
                wire.state_update(self.child, "idle", [], "end_turn"),
                wire.subagent(self.sid, self.child, idle),
            ]
        tc = ("tool_call", _embedding(ident))
        embedding = self.tools.get(tc[1]) if kind == "terminal" else None
        if embedding is not None and embedding[0] in tcm.LIVE:
            # the tool call that embeds the terminal ends with it
            out.append(self._tool_update(tc[1], "complete"))
            if tc in self.items:  # listed with its terminal (may-have-other-work)
                self.items[tc] = bgm.FINALIZED if tc in self.listed else bgm.DONE
        if self.items[key] == bgm.DONE:
            self.followup = self._has("followup") and self.real == fgm.IDLE
        return out

    def _unlist(self, key: tuple[str, str]) -> None:
        self.items[key] = self._fire("background_item", self.items[key], "unlist")
        drop = {key}
        tc = ("tool_call", _embedding(key[1]))
        if key[0] == "terminal" and self.items.get(tc) == bgm.FINALIZED:
            drop.add(tc)  # the embedding tool call leaves the list with its terminal
            self.items[tc] = bgm.DONE
        self.listed = tuple(k for k in self.listed if k not in drop)

    def _do_bg_unlist(self, key: tuple[str, str]) -> list[Msg]:
        self._unlist(key)
        return [self._snapshot_now()]

    def _do_bg_unlist_followup(self, key: tuple[str, str]) -> list[Msg]:
        """Known follow-up work is reported with the removal: running in the same snapshot."""
        self._unlist(key)
        self._begin(fgm.RUNNING, self.between.own_work(self._uninserted(), self._inserted_waiting()))
        return [self._report(fgm.RUNNING)]

    # compaction
    def _do_compact_start(self, _: Any) -> list[Msg]:
        self.comp_started += 1
        cid = f"cmp_{self.comp_started}"
        self.compactions[cid] = self._fire("compaction", cm.IN_PROGRESS, "start")
        return [wire.compaction(self.sid, cid, "in_progress", summary=[])]  # no summary yet

    def _compact(self, cid: str, trigger: str) -> list[Msg]:
        """A compaction move (``_COMPACTION_ACTIONS``): a summary chunk, a summary patch
        (``summary: []`` clears what was streamed, also after the end), or a status (the
        ended ones are retained history)."""
        bound = _COMPACTION_BOUNDS.get(trigger)
        if bound is not None:
            setattr(self, bound, getattr(self, bound) + 1)
        st = self.compactions[cid] = self._fire("compaction", self.compactions[cid], trigger)
        if trigger == "summary_chunk":
            return [wire.compaction_chunk(self.sid, cid, "Kept: the plan. ")]
        if trigger == "summary_patch":
            return [wire.compaction(self.sid, cid, CUSTOM_COMPACTION if st == cm.CUSTOM else st, [])]
        summary = [wire.text("Summary of earlier turns")] if trigger == "complete" else None
        msg = wire.compaction(self.sid, cid, _COMPACTION_STATUS[trigger], summary)
        if trigger in _ENDS_COMPACTION:
            self.history.append(msg)
        return [msg]

    def _do_notice(self, _: Any) -> list[Msg]:
        self.notices += 1
        return [wire.notice(self.sid, "warning", "Model request retried")]

    def _do_usage(self, _: Any) -> list[Msg]:
        self.usages += 1
        return [wire.usage(self.sid, 1200, 200000, 0.01)]

    def _do_lose(self, _: Any) -> list[Msg]:
        self.losses += 1
        return [self._report(fgm.UNKNOWN)]

    def _do_restore(self, _: Any) -> list[Msg]:
        return [self._report(self.real)]

    # close and resume
    def _do_close_response(self, _: Any) -> list[Msg]:
        """Closed: every session/close received while closing is answered, in order."""
        self.session = self.specs["session"].fire(self.session, "closed")
        rids, self.close_rids = self.close_rids, ()
        return [wire.result(rid, {}) for rid in rids]

    def _replayed(self) -> list[Msg]:
        """The retained history: the messages themselves, or copies when a seeded bug rewrites the
        replay's messages (the live ones stay as they were sent)."""
        if self.deviations and deviations.rewrites(self.deviations, "replay"):
            return copy.deepcopy(self.history)
        return list(self.history)

    def _finish_resume(self, out: list[Msg], again: bool = False) -> list[Msg]:
        """The history replay, then the snapshot (``again``: sent twice, a repeated snapshot is
        no transition), then the response: one step."""
        rid = self.resume_rid
        assert rid is not None
        self.resume_rid = None
        session = self.specs["session"]
        for _ in out:  # each replayed update: the first starts the replay, the others go on
            self.session = session.fire(self.session, "replay")
        synced = session.fire(self.session, "snapshot")
        # with a repeated snapshot, both carry the last stop reason (a resume or repeated idle
        # may carry it for context, creating no completion)
        stop = self.last_stop if again and self.real == fgm.IDLE else None
        out.append(self._state(self.real, stop))
        if stop is None and self.real == fgm.IDLE and self.last_stop is not None:
            self.extras = self.extras | {"unstated"}  # the snapshot left the last stop reason out
        if again:
            synced = session.fire(synced, "snapshot")
            out.append(self._state(self.real, stop))
        self.session = session.fire(synced, "resumed")
        self.reported = self.real
        if self.real == fgm.IDLE:  # the snapshot shows the end of work that ended unseen
            self.extras = self.extras - {"ended_unseen"}
        out.append(wire.result(rid, {}))
        return out

    def _do_replay(self, again: str | None) -> list[Msg]:
        return self._finish_resume(self._replayed(), again is not None)

    def _do_resync(self, again: str | None) -> list[Msg]:
        return self._finish_resume([], again is not None)

    def _do_resume_early(self, _: Any) -> list[Msg]:
        """The response before the snapshot, then the state (a variant's row, or the seeded bug
        response-before-snapshot firing the forbidden cell)."""
        rid = self.resume_rid
        assert rid is not None
        self.resume_rid = None
        self.session = self._fire("session", self.session, "resumed")
        return [wire.result(rid, {}), self._state(self.real)]


_copy_slots = _slot_copier(Agent.__slots__)
for _move, _trigger in _COMPACTION_ACTIONS.items():  # ``_do_compact_chunk`` ... : ``_compact``
    setattr(Agent, f"_do_{_move}", partialmethod(Agent._compact, trigger=_trigger))
