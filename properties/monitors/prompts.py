"""The prompt monitor: every session/prompt is sent when it may be, gets one fitting answer, and
user messages add up.

Fires the prompt table (``model.prompt``) for each request: its forbidden cells, guards and
obligations are the prompt rules, and this module names none of them. Owns what lies outside
that table: the accounting of user messages against prompts ("2. Prompt accepted", "Prompts
that are never inserted"), which maps the wire to the ``model.between`` declarations about a
prompt's answer and its user message (USER_MESSAGE_REPORTED, OWN_USER_MESSAGE,
MESSAGE_ID_RETURNED, REPORTED_AFTER_INSERTION, DISTINCT_MESSAGE_IDS, REPLAY_KEEPS_IDS,
REJECTED_NOT_REPORTED, USER_MESSAGE_CONTENT), the content rule (CONTENT_ADVERTISED) and
prompts after a cancel (LATER_PROMPTS_UNCOVERED). Each judgement below calls the declaration's
function in ``model.between.Rules``; the rule IDs are the declarations'. A user message without a string
messageId keys nothing here (``model.fields``: the table monitor judges MSGID-01).

What the Client may send, and when ("1. User message", the introduction)
------------------------------------------------------------------------
A Client line appears when the Agent received it, and an Agent line when the Agent sent it, so a
Client request that appears *before* the Agent's answer to an earlier request was sent before
the Client could have seen that answer. Each rule is a declaration of ``model.between``:

- setup_before_prompts (INTRO-01): a ``session/prompt`` received while the Client's
  ``initialize`` is still unanswered or was answered with an error (none succeeded), or while
  a ``session/resume`` of that session is
  unanswered (setup not finished), or for a session that a later ``session/new`` response
  creates, was sent before setup completed; so was one, in a stream that shows the connection
  from its start (its first Client request is ``initialize``: ``Facts.opening``), for a session
  that nothing in it set up (not in ``Facts.set_up``: no ``session/new`` or ``session/fork`` response
  named it, no ``session/resume`` of it succeeded, no ``subagent_update`` announced it). A stream
  that starts later in the connection is unchanged: its sessions are assumed set up;
- prompt_has_content (USER-01): a ``session/prompt`` whose ``prompt`` is an empty array;
- client_sends_advertised (USER-03): a prompt block whose type the Agent's ``initialize``
  answer does not allow (judged only when that answer is in the stream; custom types only when
  the prompt capabilities carry no ``_meta`` where a custom capability could be advertised).

Tolerated permissions: a prompt in any state (ACTIVE-01), ``session/cancel`` at any time
(CANCEL-01), a ``cancelled`` permission outcome without a prior ``$/cancel_request`` (CANCEL-08):
no monitor reports any of them.

The prompt table, fired from the wire with hidden steps
-------------------------------------------------------
The wire shows a request, the Client's ``session/cancel``, ``session/close`` and
``$/cancel_request`` (triggers ``cover``, ``close``, ``cancel_request``) and the answer: a
success fires ``answer``; an error fires ``withdraw`` where the table has that row and the code
is -32800 (or -32602 for unadvertised content, where the reading ``cancelled-invalid-prompt``
allows it), else ``reject``. Holding and inserting are hidden (``MachineSpec.hidden``). So each
waiting prompt keeps the set of states it may be in (at most the table's nine; no bound is ever
hit) and every observed trigger is fired on all of them (``MachineSpec.fire_unseen``): a
finding only when none allows it, naming the rule of the state reached with the fewest hidden
steps (a prompt covered by a cancel and then refused with -32603 is the covered prompt's breach;
had it been inserted, the other rule is named in the explanation). Evidence that a prompt was
inserted comes from the accounting below: when an error removes a prompt that every way of
accounting for the session's user messages needs, only its inserted state is judged (the finding
names the reading ``unaccounted-user-message``). At the end, a prompt never answered owes the
answer of the state it may be in (``MachineSpec.eventually``): the inserted state's when an
unclaimed user message reported after its receipt exists, else the waiting state's. The guard
``own_reason`` answers for the reading ``rejected-after-cancel-request``.

What is certain in proxy order, and why
---------------------------------------
*Insertion is not on the wire.* A user message names its messageId, but the only thing that ties
a messageId to a request is that request's success response. So this monitor never guesses which
request a user message belongs to; it counts. Whether a live user message (outside a
``session/resume`` replay window) always reports the insertion of a session/prompt of the same
session is the reading ``unaccounted-user-message`` (``properties.readings``). Under
``prompt-only`` it does; the only other source the spec discusses is a delegated task in a child
session, which it discourages (SDM-05): a session that never had a prompt gets SDM-05 for a user
message, never anything stronger. Under ``other-sources`` the counting below proves nothing and
reports nothing (the findings it leads to name the reading).

A prompt can claim a user message only if it was received before the message was first reported
(no update may precede insertion, and insertion follows receipt). Keep, per session, the user
messages that no success response has claimed yet (with the line each was first seen) and the
prompts still waiting for an answer (with their receipt line). Each waiting prompt can claim at
most one of those messages, and only one first seen after its receipt: by Hall's theorem on
these nested candidate sets, the number of messages that can never be claimed is
``d = max_k (k - #waiting prompts received before the k-th oldest unclaimed message)``. ``d`` can
only grow through one of three events, and each increase is a certain breach:

- an error response removes a prompt that every complete matching needed: that prompt was
  inserted and then answered with an error (evidence for the prompt table, above);
- a new user message nobody can claim (which one is named once certain: "Naming the unclaimed
  message"): its submission was answered with an error (REJ-02) when a
  prompt of the session received before it got an error, else it is an update about a user
  message under an ID no response returned (ACC-06): ``unaccounted_user_message`` picks the
  declaration; SDM-05 in a session without prompts;
- a success response whose messageId is not among the waiting messages leaves one stranded: the
  user message was reported under another ID than the response returned (ACC-06).

Also certain (``returned_id_breach`` says which): a success response naming an ID first
reported before the request was received, or taken as the Agent's own insertion (reported while
no prompt waited, so before this one: ACC-07, the update preceded insertion); the same messageId
returned for two requests of a session, or for a prompt received after a session/resume replayed
a user message under it (ACC-09: the replayed message is an earlier submission); a success
without a string messageId (ACC-04, ``message_id_given``); a success for a prompt whose content
the Agent's initialize answer does not allow, or an error code other than -32602/-32800 for it
(USER-04).

*After a cancel.* A prompt received after a ``session/cancel`` of its session and answered
-32800 without any later cancel, close or ``$/cancel_request`` covering it breaks CANCEL-16
(``withdrawn_by_earlier_cancel``).
Which code answers a covered prompt with unadvertised content is the reading
``cancelled-invalid-prompt`` (default ``cancelled``: -32800 only; ``either``: -32800 or -32602;
``invalid``: -32602 only, USER-04 reports -32800).

*Held prompts.* The table's guard ``oldest_held`` (held prompts go in order) shows on the wire
only under the reading ``prompt-ahead-of-held=receipt-order`` (not the default): a prompt
answered with success while a prompt of the session received before it was still waiting and
not yet covered by a cancel, close or ``$/cancel_request``, when that earlier prompt is then
answered -32800 (so it was never inserted), was inserted ahead of it: the guard's rule.

*Busy-only refusals* (the prompt table's guard ``busy_only``) are not on the wire: the Agent's
reason for a refusal is its own. A well-formed prompt refused with -32600 ("not a valid
request") while the session reports running or requires_action is reported as a suspicion (kind
``suspect``, a warning) of that rule: the default of the reading ``busy-refusal``
(``may-have-other-reason``); under ``busy-refusal=invalid-request-is-busy`` it is a breach.

*Replay.* User messages inside a resume window that asked for a replay (``replayFrom``) are
replayed history, not insertions. A window that asked for none holds no replay ("following any
requested history replay", Initial state and synchronization), while a prompt received before the
resume may be held and inserted inside it ("holds it and inserts it later", Prompts during active
work): a user message under an ID the session never showed is live there (counted as below).
When the session is seen from its creation (``MonitorSet.from_start`` or a ``session/new`` response in
the stream), a replayed user message under an ID never seen in the session breaks ACC-11
(``replay_renamed``). That
is the default of the reading ``resume-replay-window`` (``whole-window``: there the first report
of a message a success response returned is history too, and its live report is still owed,
ACC-05); under ``known-ids`` a user message under an ID no user message of the session showed is
live even inside the window (judged as below; under a returned ID, it is that message's report).

*Agent-initiated user messages.* Under the reading ``unaccounted-user-message=agent-initiated``
(the default) a live user message first reported while no prompt of the session waits for its
answer is the Agent's own insertion: recorded (its ID is claimed by no prompt), never counted;
in work, also in work a prompt started once that prompt is answered, but not in a refused
prompt's hook work (reported starting while a prompt waited that was then answered with an
error, and none waiting then answered with success: ``started``, ``model.between``
refused_work, REJ-02). One reported while a prompt waits, during foreground work the Agent
started itself (reported starting while no prompt waited, and no prompt inserted while idle was
reported, with no other state reported since its receipt, awaited it: ``_Session.worked``), may
be the Agent's own or a waiting prompt's: kept apart (``optional``), never counted, and a
success response may still return it (ACC-07 if it came before that prompt's receipt); forgotten
once no waiting prompt received before it remains. One reported outside work (idle, unknown or a
custom state) while no prompt waits is the Agent's own only for work of its own reported
starting next (``own_wait``): it is a breach when the next work is a prompt's: one answered with
success while idle was reported awaited it, or one received while idle was reported still waits
at its start with no other state reported since (``_Prompt.idle_receipt``: inserted while idle,
or not yet inserted, the work is that prompt's either way, ``model.between`` own_work). The
breach is reported at the start, or, while such a prompt waits, at the answer that leaves none
to return the message's ID (one that returns it breaks ACC-07 instead). Under ``prompt-only``
every live one is counted; under ``other-sources`` nothing is.

*Naming the unclaimed message.* A growth of ``d`` at a new user message is a certain breach, but
when a waiting prompt received before it could still claim it, which message stays unclaimed
is not yet known: the growth is deferred (``deferred``), and after each answer the oldest
unclaimed message that no waiting prompt can claim any more (none received before it waits) is
named for it, at that answer's line. A growth still deferred at the end (its prompts never
answered) is reported at the line where it happened, naming the messages it is among.

*Unnamed messages.* A success without a string messageId (ACC-04) says its prompt was inserted,
but not which user message reports it: any reported after its receipt, before or after the
response (the report may follow it). So the prompt stays a claimer of one message for good
(``nameless``), counted like a waiting prompt received at its receipt line: one fault, one
finding, and the messages it may own make no other prompt's insertion certain (an error answer
to a prompt covered by a cancel is then no ACC-03 from the counting alone). Where a message is
named as unclaimed, each such prompt in receipt order is taken to own the oldest message
reported after its receipt that no other has taken (``_unnamed``): that one is not named.

*Reported before the idle* (``model.between`` USER_MESSAGE_REPORTED, the reading
``user-message-deadline``, default ``resulting-work``). The first prompt received while the
session reported idle, or the oldest one waiting at an idle (outside resume windows, with the
state seen on the wire), has, as its resulting work, the next foreground work reported active
(work starts and ends only with a report, so an unknown stretch changes nothing): when its
success response came before that work's idle and its messageId was not reported by then, the
idle breaks ACC-05. A prompt received during active work is not judged at that work's idle (its
insertion may start the next turn); an error answer ends the judgement, and so does a resume
window before that work was reported (the work may start and end unseen in it), not one after:
the work reported after the window is that work or one started in it, and ends by the next idle.
Inside a window, a state replacing an active one reported in that same window is live, not the
snapshot (``model.between`` resume_snapshot): an idle there ends the work as outside a window.
The same deadline dates a hidden insertion (``model.between`` not_inserted_by_idle): a prompt
received while idle that still waits at the idle ending its resulting work, with no user message
reported since its receipt that it could claim, was not inserted before that idle, so the states
it reached only by such an insertion are dropped (``_Prompt.unreported_idle``): a session/cancel
or session/close received before that idle stopped it, and a success answer breaks the rule of
the state left (CANCEL-02, naming the reading). A prompt received during active work keeps them:
inserted at once, it may start the next turn, which a cancel of the current work does not reach.

*Content* (``model.between`` USER_MESSAGE_CONTENT, the reading ``user-message-content``). Under
its default, ``upsert``, nothing is recorded: a user_message may carry content a later one
replaces. Under ``prompt-content`` the prompt's content blocks are kept while it waits; a live
user_message carrying content (outside resume windows) is judged at once when a success response
already returned its ID, else its blocks are kept until one does, and judged at that response: a
block the prompt lacks breaks ACC-05. Chunks are not compared (a text block may be split
anywhere), nor the Agent's own insertion (no prompt).

*Eventually.* A returned messageId never reported by a ``user_message`` or
``user_message_chunk``: ACC-05, closed sessions included (closing does not discharge it: the
same declaration).

Must not know: foreground state, tool calls, background work, files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from model import between as bw
from model import entity
from model import prompt as prm
from model.clientview_parts import ACTIVE_STATES as ACTIVE
from model.core import Context
from model.prompt import OWN_REASON
from properties.monitor import Message, Record, on, rule_group

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.monitors.facts import SessionMonitor
from properties.monitors.tables import rules_of
from properties.readings import (
    BUSY_REFUSAL,
    CANCELLED_INVALID_PROMPT,
    PROMPT_AHEAD_OF_HELD,
    RESUME_REPLAY_WINDOW,
    UNACCOUNTED_USER_MESSAGE,
    USER_MESSAGE_CONTENT,
    USER_MESSAGE_DEADLINE,
)

REQUEST_CANCELLED, INVALID_PARAMS, INVALID_REQUEST = -32800, -32602, -32600
"""The JSON-RPC error codes a prompt's answer is judged by."""
_SETUP = bw.SETUP_BEFORE_PROMPTS.rule
_NOT_EMPTY = bw.PROMPT_HAS_CONTENT.rule
_ADVERTISED = bw.CLIENT_SENDS_ADVERTISED.rule
_SENT_KEY = rule_group(_SETUP, _NOT_EMPTY)
"""Exercised by every session/prompt (what the Client may send, and when)."""
_UNACCOUNTED = (UNACCOUNTED_USER_MESSAGE,)
_DEADLINE = (USER_MESSAGE_DEADLINE,)
_NO_READINGS: tuple[str, ...] = ()
_CONTENT_READING = (USER_MESSAGE_CONTENT,)
# the rules of the ``model.between`` declarations judged here (the model states each)
REPORTED = bw.USER_MESSAGE_REPORTED.rule
SAME_ID = bw.OWN_USER_MESSAGE.rule
CONTENT = bw.CONTENT_ADVERTISED.rule
GIVEN = bw.MESSAGE_ID_RETURNED.rule
AHEAD = bw.REPORTED_AFTER_INSERTION.rule
FOREIGN = bw.USER_MESSAGE_CONTENT.rule
DISTINCT = bw.DISTINCT_MESSAGE_IDS.rule
KEEPS = bw.REPLAY_KEEPS_IDS.rule
REFUSED = bw.REJECTED_NOT_REPORTED.rule
LATER = bw.LATER_PROMPTS_UNCOVERED.rule
_BUSY = (BUSY_REFUSAL,)
BUSY_ONLY = prm.SPEC.guard_rules["busy_only"]
"""The rule the prompt table's guard ``busy_only`` states (refused only because work is
active): suspected here, never proven from the wire."""
_NO_CTX: Context = {}
_UNSEEN_EARLY = prm.SPEC.rule_of(prm.RECEIVED, "answer")
"""The rule of a success before insertion: never shown by the wire, where a hidden insertion
may always have come first (the simulated Agent's seeded bug is caught by the model)."""
OLDEST_HELD = prm.SPEC.guard_rules["oldest_held"]
"""The rule the prompt table's guard ``oldest_held`` states (held prompts go in order): shown by
the wire only under the reading ``prompt-ahead-of-held=receipt-order`` (see the docstring)."""


class _Prompt(NamedTuple):
    """A session/prompt waiting for its answer (its session record's ``pending``)."""

    line: int  # receipt line
    states: frozenset[str]  # the prompt table's states it may be in (hidden steps included)
    after_cancel: bool  # received after a session/cancel of its session
    bad: tuple[str, ...]  # content types the Agent did not advertise
    blocks: frozenset[str] | None  # its content's blocks (user-message-content=prompt-content)
    seq: int  # receipt order across sessions (prompts of one batch share a line); not in keys
    # its session's ``_Session.non_idle`` at its receipt: a state other than idle was reported
    # since (``_Session.worked``) once that count has grown; not in keys (only whether it grew is)
    non_idle: int
    # received while the session was reported idle (outside resume windows): while no other
    # state is reported since (``worked``), no work may have taken it in, so the next work
    # reported starting is its, inserted or not (``model.between`` own_work)
    idle_receipt: bool
    # under prompt-ahead-of-held=receipt-order: the later prompt answered with success while this
    # one waited, and that response's line
    overtaken: tuple[Any, int] | None = None
    # the idle ending its resulting work that found it not inserted (user-message-deadline:
    # no user message it could claim reported by then), when that ruled out a state: 0 if none
    unreported_idle: int = 0
    # the lines of the latest and the first Client stop fired on it (session/cancel,
    # session/close, $/cancel_request: 0 if none): the latest is the premise of a finding in a
    # state it stopped (``_STOPPED_BY``), a suspicion while the Agent may not have read that line
    # (``MonitorSet.unread``); a -32800 answer, which only a stop lets the Agent give (the table's
    # withdraw), shows the first read (``MonitorSet.proves_read``). Not in keys (they matter only
    # in forwarded order, which no explorer runs)
    stopped: int = 0
    first_stop: int = 0


def _blocks(content: Any) -> frozenset[str]:
    """The blocks of a content array, each as canonical JSON (comparable whatever its key order);
    none for null or a malformed content."""
    if type(content) is not list:
        return frozenset()
    return frozenset(json.dumps(b, sort_keys=True, separators=(",", ":")) for b in content)


def _beyond_text(content: Any) -> bool:
    """Whether a prompt's content holds a block of a type other than text."""
    if type(content) is list:
        for block in content:
            if type(block) is dict and block.get("type") != "text":
                return True
    return False


@dataclass(slots=True, eq=False)
class _Session(Record):
    """One session's prompt record."""

    pending: dict[Any, _Prompt] = field(default_factory=dict)  # request id -> its prompt (receipt order)
    unclaimed: dict[str, int] = field(default_factory=dict)  # user message ID -> first live line (in order)
    # under unaccounted-user-message=agent-initiated: a user message reported while a prompt
    # waited, during foreground work the Agent started itself -> its first line: a waiting
    # prompt may claim it, and none has to (see "Agent-initiated user messages")
    optional: dict[str, int] = field(default_factory=dict)
    # growths of the deficiency at a user message that a waiting prompt could still claim:
    # (line, message) each; one unclaimed message is named per entry once it is certain which
    # (see "Naming the unclaimed message"); ``named``: the messages already named
    deferred: list[tuple[int, Any]] = field(default_factory=list)
    named: set[str] = field(default_factory=set)
    # receipt lines of the prompts answered with success without a string messageId (ACC-04):
    # each may own one unclaimed user message reported after its receipt, which one the wire
    # does not say (see "Unnamed messages"), so it stays among the claimers ``settle`` counts
    nameless: list[int] = field(default_factory=list)
    # every messageId a success returned in the session -> the request id it answered;
    # kept while the session lives (ACC-09 and MSGID-01 may name any of them)
    claimed: dict[str, Any] = field(default_factory=dict)
    # claimed messageId -> response line, while no update reported it
    unreported: dict[str, int] = field(default_factory=dict)
    # under user-message-content=prompt-content only: unclaimed messageId -> (first line, the
    # blocks its user_message updates carried), and claimed messageId -> its prompt's blocks
    shown: dict[str, tuple[int, frozenset[str]]] = field(default_factory=dict)
    owned: dict[str, frozenset[str]] = field(default_factory=dict)
    reported_d: int = 0
    first_prompt: int | None = None  # line of its first session/prompt
    cancel_seen: bool = False
    first_error: int = 0  # receipt line of the earliest prompt answered with an error
    replay_unknown: set[str] = field(default_factory=set)
    # user message ID a session/resume replayed (history) -> the line of its first replay: a
    # prompt received after it cannot be that message (``Rules.returned_id_breach``)
    replayed: dict[str, int] = field(default_factory=dict)
    # the first prompt received while the session reported idle (since the last idle ending
    # work), whether its resulting work is reported active, and its returned messageId while
    # not reported (see "Reported before the idle")
    owner: Any = None
    owner_working: bool = False
    owner_fresh: bool = False  # received while idle, no work reported since
    owner_mid: str | None = None
    state_seen: bool = False
    # the work reported active since the last idle: (prompts waiting at its start and not
    # answered since, whether a prompt awaited it: one received while idle was answered with
    # success just before it, or one received while idle was reported waited at its start with
    # no other state reported since (``_Prompt.idle_receipt``), whether one waiting at its
    # start was then answered with an error, so it waited uninserted, whether any prompt
    # waited at its start: then, while a prompt waits, the work is no work the Agent started
    # itself, whether one waiting at its start was then answered with success, so the work is
    # no refused prompt's hook work alone: ``model.between`` refused_work); a user message
    # reported outside work that may be the Agent's own for work starting next: (messageId,
    # line, rule, why, message)
    started: tuple[frozenset[Any], bool, bool, bool, bool] | None = None
    # a prompt answered with success since the last start, while idle was reported
    inserted_idle: bool = False
    own_wait: tuple[str, int, str, str, Any, frozenset[Any] | None, bool] | None = None
    """(..., None until work starts; then the prompts waiting at that start, not yet
    answered: the message is judged when they are; whether one of them awaited that work, so
    it was no work of the Agent's own: then the message is a breach unless one of them returns
    its ID, a breach of its own: reported before insertion)"""

    def _started_key(self) -> tuple[Any, ...] | None:
        """``started`` as far as later judgements read it: whether the work is the Agent's own
        (decided once a prompt awaited it or one waiting at its start was refused), whether it is
        a refused prompt's hook work (``model.between`` refused_work), and the prompts waiting
        at its start while an answer of one of them may still change either."""
        st = self.started
        if st is None:
            return None
        waited = frozenset(map(repr, st[0]))
        refused = bw.Rules.refused_work(st[2], st[4])
        if any(st[1:3]):
            return (st[1], st[2], refused, waited if waited and not st[4] else None)
        return (st[3], waited, st[4] and bool(waited))

    non_idle: int = 0  # states other than idle reported so far (see ``worked``); not in keys

    def worked(self, prompt: _Prompt) -> bool:
        """Whether a state other than idle was reported since ``prompt``'s receipt."""
        return prompt.non_idle < self.non_idle

    def drop_owner(self) -> None:
        self.owner, self.owner_working, self.owner_mid, self.owner_fresh = None, False, None, False

    def key(self, from_start: bool = False) -> tuple[Any, ...]:
        """Relative form: waiting prompts and unclaimed messages merged in line order (all the
        checks compare), no line numbers; ``from_start``: the session is seen from its creation
        (then whether a state was seen changes nothing, nor does an owner's freshness once its
        work runs)."""
        merged = sorted(
            [(p.line, 0, repr(rid)) for rid, p in self.pending.items()]
            + [(line, 1, mid) for mid, line in self.unclaimed.items()]
            + [(line, 2, mid) for mid, line in self.optional.items()]
            + [(line, 3, mid) for mid, line in self.replayed.items()]
            + [(line, 4, "") for line in self.nameless]
        )
        return (
            tuple((kind, name) for _, kind, name in merged),
            frozenset(
                (
                    rid,
                    (
                        p.states,
                        p.after_cancel,
                        p.bad,
                        p.blocks,
                        p.overtaken and p.overtaken[0],
                        self.worked(p),
                        p.idle_receipt and not self.worked(p),
                        p.unreported_idle != 0,
                    ),
                )
                for rid, p in self.pending.items()
            ),
            frozenset(self.claimed),
            frozenset(self.unreported),
            frozenset((mid, blocks) for mid, (_, blocks) in self.shown.items()),
            frozenset(self.owned.items()),
            self.reported_d,
            self.first_prompt is not None,
            self.cancel_seen,
            bool(self.first_error),
            frozenset(self.replay_unknown),
            None
            if self.owner is None
            else (
                repr(self.owner),
                self.owner_working,
                self.owner_mid,
                self.owner_fresh and not self.owner_working,
            ),
            self.state_seen or from_start,
            self._started_key(),
            self.inserted_idle,
            len(self.deferred),
            frozenset(self.named),
            None
            if self.own_wait is None
            else (
                self.own_wait[0],
                self.own_wait[2],
                None if self.own_wait[5] is None else frozenset(map(repr, self.own_wait[5])),
                self.own_wait[6],
            ),
        )

    def settle(self) -> bool:
        """Update the deficiency: how many unclaimed user messages no waiting prompt can ever
        claim (see the module docstring); whether it grew (a breach of the caller's rule)."""
        # the docstring's max_k: at the k-th oldest unclaimed message, surplus is k minus the
        # waiting prompts received before it (both walked in line order)
        # (the prompts answered without a messageId count as waiting ones: see "Unnamed messages")
        worst = surplus = 0
        if self.unclaimed:
            lines = (p.line for p in self.pending.values())
            waiting = iter(sorted((*lines, *self.nameless)) if self.nameless else lines)
            received = next(waiting, None)
            for first_seen in self.unclaimed.values():
                while received is not None and received < first_seen:
                    surplus -= 1
                    received = next(waiting, None)
                surplus += 1
                if surplus > worst:
                    worst = surplus
        grew = worst > self.reported_d
        self.reported_d = worst
        return grew


def _replay_note(ps: _Session, mid: str) -> tuple[str, tuple[str, ...]]:
    """What an ACC-05 finding about the returned messageId ``mid`` adds when a user message under
    it came only inside a resume window, taken as replayed history there (ACC-11 judged it), and
    the reading that made it history."""
    if mid in ps.replay_unknown:
        return " live (one under that ID came only inside a resume window: replayed history)", (
            RESUME_REPLAY_WINDOW,
        )
    return "", ()


class PromptMonitor(SessionMonitor["_Session"]):
    """Answers to session/prompt and the accounting of user messages (see module docstring)."""

    RULES = (
        GIVEN,
        REPORTED,
        SAME_ID,
        AHEAD,
        DISTINCT,
        KEEPS,
        REFUSED,
        LATER,
        CONTENT,
        "SDM-05",
        entity.KEYED_BY_ID,
        *(rule for rule in rules_of((prm.SPEC,)) if rule != _UNSEEN_EARLY),
        _SETUP,
        _NOT_EMPTY,
        _ADVERTISED,
    )
    TABLES = (prm.SPEC,)
    TOLERATES = ("USER-02", "ACTIVE-01", "CANCEL-01", "CANCEL-08")
    SESSION = _Session

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.fired: frozenset[str] = frozenset()
        """The states the last trigger fired left its prompt in (an answered prompt's final
        states, which ``diagrams.html`` shows)."""
        self.received = 0
        """Prompts received so far (their ``seq``: the order ``waiting`` reports them in)."""
        self.spec = self.table(prm.SPEC)
        """The prompt table in force (the variant's, else the model's)."""
        self.content_free = self.between.user_content_replaceable(self.reading(USER_MESSAGE_CONTENT))
        """Whether the reading user-message-content lets an update about a submission's user
        message carry content its prompt lacks (``model.between`` USER_MESSAGE_CONTENT): then
        nothing is recorded for it."""

    # -- requests ------------------------------------------------------------------------
    @on("client-request", "session/prompt")
    def _prompt(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        # what the Client may send, and when (see the module docstring)
        facts = self.facts
        content = params.get("prompt")
        allowed = facts.prompt_types  # None before the Agent's initialize answer
        bad: tuple[str, ...] = ()
        if allowed is not None and type(content) is list:  # the types it does not allow
            types = (block.get("type") if type(block) is dict else None for block in content)
            bad = self.between.unadvertised(types, allowed, facts.custom_prompt_ok)
        self._gx[_SENT_KEY] += 1
        fs = facts.sessions.get(sid) if sid is not None else None
        missing = self.between.setup_missing(
            facts.init_pending,
            fs is not None and fs.resuming > 0,  # (in its session's resume window)
            facts.opening is True and sid is not None and sid not in facts.set_up,  # nothing set it up
        )
        if missing is not None:
            self.breach(_SETUP, line, sid, f"session/prompt sent before {missing}", msg)
        if self.between.empty_prompt(content):
            self.breach(_NOT_EMPTY, line, sid, "session/prompt with an empty prompt array", msg)
        if allowed is not None:
            self._ex[_ADVERTISED] += 1
            if bad:
                self.breach(
                    _ADVERTISED,
                    line,
                    sid,
                    f"prompt content of type {', '.join(sorted(set(bad)))} was not allowed by the "
                    "Agent's prompt capabilities",
                    msg,
                )
        if sid is None:
            return
        ps = self.sessions.get(sid) or self._session(sid)
        if ps.first_prompt is None:
            ps.first_prompt = line
        rid = msg["id"]
        if type(rid) is not int and type(rid) is not str:
            return
        if not bad and _beyond_text(content):
            self._ex[CONTENT] += 1  # content other than text, of a type the Agent accepts
        blocks = None if self.content_free else _blocks(content)
        self.received += 1
        # received while idle is reported (the state seen, outside resume windows)
        idle = (ps.state_seen or facts.from_start(sid)) and (
            fs is None or (fs.state == "idle" and not fs.resuming)
        )
        ps.pending[rid] = _Prompt(
            line, self.spec.start, ps.cancel_seen, bad, blocks, self.received, ps.non_idle, idle
        )  # (positional: keywords cost more)
        if ps.owner is None and idle:
            ps.owner, ps.owner_fresh = rid, True  # its resulting work is the next one reported

    @on("agent-response", "session/new")
    def _created(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        result = msg.get("result")
        new_sid = result.get("sessionId") if type(result) is dict else None
        ps = self.sessions.get(new_sid) if type(new_sid) is str else None
        # (a stream that shows the connection from its start judged that prompt at its line)
        if ps is not None and ps.first_prompt is not None and not self.facts.opening:
            self.breach(
                _SETUP,
                line,
                new_sid,
                f"session/prompt for this session was received at line {ps.first_prompt}, "
                "before session/new created it",
                msg,
            )

    def _fire(
        self,
        sid: str,
        rid: Any,
        rec: _Prompt,
        trigger: str | Callable[[str], str],
        line: int,
        msg: Message,
        ctx: Context = _NO_CTX,
        why: str = "",
        readings: tuple[str, ...] = (),
    ) -> frozenset[str]:
        """Fire an observed trigger of the prompt table on every state the prompt may be in
        (hidden holds and insertions included); a breach when none allows it, naming the rule
        of the state reached with the fewest hidden steps. Returns the states left."""
        after, refused, rules = self.spec.fire_unseen(rec.states, trigger, ctx)
        for rule in rules:
            if rule in _REPORTED:  # (the wire never shows some cells: _UNSEEN_EARLY)
                self._ex[rule] += 1
        self.fired = after
        if not after and refused:
            first = refused[0]
            stopped = _STOPPED_BY.get(first.state, "")
            others = "".join(f"; had it been {v.state}, {v.rule}" for v in refused[1:])
            self.breach(
                first.rule, line, sid,
                f"prompt {rid!r} (received at line {rec.line}) is {first.state}{stopped}{why}: the "
                f"prompt table has no {first.event!r} there ({first.actor} broke {first.rule}{others})",
                msg, readings, premise=rec.stopped if stopped else 0,
            )  # fmt: skip
        return after

    def _client(
        self, sid: str, ps: _Session, rids: Iterable[Any], trigger: str, line: int, msg: Message
    ) -> None:
        pending = ps.pending
        for rid in rids:
            rec = pending[rid]
            states = self._fire(sid, rid, rec, trigger, line, msg) or rec.states
            pending[rid] = rec._replace(states=states, stopped=line, first_stop=rec.first_stop or line)

    @on("client-notification", "session/cancel")
    @on("client-request", "session/close")
    def _cancel(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is not None:
            ps = self._session(sid)
            cancel = msg["method"] == "session/cancel"
            ps.cancel_seen = ps.cancel_seen or cancel
            self._client(sid, ps, ps.pending, "cover" if cancel else "close", line, msg)

    @on("client-notification", "$/cancel_request")
    def _cancel_request(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        rid = params.get("requestId")
        if type(rid) is not int and type(rid) is not str:
            return
        for prompted, ps in self.sessions.items():
            if rid in ps.pending:
                self._client(prompted, ps, (rid,), "cancel_request", line, msg)
                return

    # -- answers -------------------------------------------------------------------------
    @on("agent-response", "session/prompt")
    def _answer(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        if sid is None:
            return
        ps = self.sessions.get(sid)
        if ps is None:
            return
        rid = msg["id"]
        rec = ps.pending.pop(rid, None)
        if rec is None:
            return
        error = "error" in msg
        st = ps.started
        if st is not None and rid in st[0]:  # (an error: it waited uninserted then; a success:
            # it was inserted, the work is its work too)
            ps.started = (st[0] - {rid}, st[1], st[2] or error, st[3], st[4] or not error)
        if error:
            self._gx[_ANSWERED_KEY] += 1
            if ps.own_wait is not None and ps.own_wait[5] and rid in ps.own_wait[5]:
                self._own_breach(ps, sid, line, False, False)  # it waited uninserted at the start
            if ps.owner == rid:
                ps.drop_owner()
            self._error(ps, sid, rid, rec, line, msg)
            if ps.optional or ps.deferred:
                self._settled(ps, sid, line, msg)
            return
        mid = self._success(ps, sid, rid, rec, line, msg)
        if ps.optional or ps.deferred:
            self._settled(ps, sid, line, msg)
        if rec.blocks is not None and type(mid) is str and ps.claimed.get(mid) == rid:
            ps.owned[mid] = rec.blocks
            first, shown = ps.shown.pop(mid, (0, frozenset()))
            self._foreign(sid, mid, rid, shown, rec.blocks, line, msg, first)
        if ps.own_wait is not None and ps.own_wait[5] and rid in ps.own_wait[5]:
            left = ps.own_wait[5] - {rid}
            if left:
                ps.own_wait = (*ps.own_wait[:5], left, ps.own_wait[6])
            elif ps.own_wait[6]:  # none returned the message's ID, and the work was a prompt's
                self._own_breach(ps, sid, line, False, False)
            else:  # every prompt waiting at the start inserted: the work may have been its own
                ps.own_wait = None
        fs = self.facts.sessions.get(sid)
        if (ps.owner == rid and ps.owner_fresh and not ps.owner_working) or (
            fs is not None and fs.state == "idle" and not fs.resuming and ps.state_seen and not ps.worked(rec)
        ):
            # received and inserted while idle, or inserted while idle is reported with no other
            # state reported since its receipt (a resume window may have dropped its ownership):
            # the next work is its
            ps.inserted_idle = True
        if ps.owner == rid and type(mid) is str and mid in ps.unreported:
            ps.owner_mid = mid

    def _settled(self, ps: _Session, sid: str, line: int, msg: Message) -> None:
        """After an answer: name the unclaimed messages now certain, one per deferred growth of
        the deficiency (see "Naming the unclaimed message"); forget the optional messages no
        waiting prompt can claim any more."""
        first_wait = min((p.line for p in ps.pending.values()), default=None)
        if ps.optional:
            ps.optional = {m: f for m, f in ps.optional.items() if first_wait is not None and f > first_wait}
        if not ps.deferred:
            return
        unnamed = _unnamed(ps)
        for mid, first in ps.unclaimed.items():
            if first_wait is not None and first > first_wait:
                break  # (in line order) a waiting prompt may still claim this one and the later ones
            if mid in ps.named or mid in unnamed:
                continue
            ps.named.add(mid)
            ps.deferred.pop(0)
            rule = self.between.unaccounted_user_message(0 < ps.first_error < first).rule
            self.breach(
                rule, line, sid,
                f"user message {mid!r} (line {first}) was reported {_UNACCOUNTED_WHY[rule]}: no "
                "prompt that was waiting when it was reported can claim it any more",
                msg, _UNACCOUNTED,
            )  # fmt: skip
            if not ps.deferred:
                return

    def _error(self, ps: _Session, sid: str, rid: Any, rec: _Prompt, line: int, msg: Message) -> None:
        err = msg.get("error")
        code = err.get("code") if type(err) is dict else None
        waiting = _waiting(rec.states)
        if code == REQUEST_CANCELLED and rec.first_stop:
            self._owner.proves_read(rec.first_stop)  # (the table withdraws only a stopped prompt)
        invalid = bool(rec.bad) and waiting == prm.COVERED
        alt = self.reading(CANCELLED_INVALID_PROMPT) if invalid else "cancelled"
        ahead = rec.overtaken
        if ahead is not None and code == REQUEST_CANCELLED:
            self._ex[OLDEST_HELD] += 1
            self.breach(
                OLDEST_HELD,
                line,
                sid,
                f"prompt {rid!r} was never inserted (answered -32800), yet prompt {ahead[0]!r} "
                f"received after it was inserted while it waited (success at line {ahead[1]})",
                msg,
                (PROMPT_AHEAD_OF_HELD,),
            )
        if rec.after_cancel:  # received after a session/cancel of its session
            still = waiting in _UNSTOPPED  # nothing received since stopped it
            if still:
                self._ex[LATER] += 1
            if self.between.withdrawn_by_earlier_cancel(still, code == REQUEST_CANCELLED):
                self.breach(
                    LATER,
                    line,
                    sid,
                    f"prompt {rid!r} reached the Agent after a session/cancel and nothing later "
                    "cancelled it, yet it was answered -32800",
                    msg,
                )
        if rec.bad:
            self._ex[CONTENT] += 1
            if code != INVALID_PARAMS and (
                code != REQUEST_CANCELLED or "cancelled" not in self.between.covered_invalid_answers(alt)
            ):
                self.breach(
                    CONTENT,
                    line,
                    sid,
                    f"prompt {rid!r} carries content the Agent did not advertise "
                    f"({', '.join(rec.bad)}) and was refused with {code}, not -32602",
                    msg,
                    (CANCELLED_INVALID_PROMPT,) if invalid else (),
                )
        busy = self.facts.active(sid) and not rec.bad
        if busy:
            self._ex[BUSY_ONLY] += 1  # a refusal while work is active: the suspicion's case
        if busy and code == INVALID_REQUEST:
            certain = self.reading(BUSY_REFUSAL) == "invalid-request-is-busy"
            self.breach(
                BUSY_ONLY, line, sid,
                f"prompt {rid!r} is a well-formed request, yet it was refused with -32600 (not a "
                "valid request) while the session reported active work: "
                + ("a refusal only because work is active" if certain else "this looks like a refusal "
                   "only because work is active, which the wire cannot prove (the Agent's reason is "
                   "not on it)"),
                msg, _BUSY, "rule" if certain else "suspect",
            )  # fmt: skip
        if not ps.first_error or rec.line < ps.first_error:
            ps.first_error = rec.line
        # The answer that withdraws a prompt the Client stopped: -32800, or -32602 for content
        # the Agent did not advertise where the reading cancelled-invalid-prompt allows it.
        withdraws = code == REQUEST_CANCELLED or (alt != "cancelled" and code == INVALID_PARAMS)
        cells = self.spec.cells

        def trigger(state: str) -> str:
            return "withdraw" if withdraws and (state, "withdraw") in cells else "reject"

        requested = waiting == prm.CANCEL_REQUESTED
        readings = (CANCELLED_INVALID_PROMPT,) if invalid else (OWN_REASON,) if requested else ()
        cands = rec.states
        why = f" and was answered with error {code}"
        if ps.settle() and self._counting() and prm.INSERTED in cands:
            # every way to account for the session's user messages needs this prompt inserted
            cands, readings = _INSERTED, _UNACCOUNTED
            why = (
                " (a user message reported after it was received can be claimed by no other "
                f"prompt that may still succeed){why}"
            )
        own = self.reading(OWN_REASON) == "own-reason"
        ctx = {"own_reason": own, OWN_REASON: own} if requested else _NO_CTX
        self._fire(sid, rid, rec._replace(states=cands), trigger, line, msg, ctx, why, readings)

    def _success(self, ps: _Session, sid: str, rid: Any, rec: _Prompt, line: int, msg: Message) -> Any:
        """A success response; returns the messageId it carries (None without one)."""
        if ps.pending and not self.between.may_overtake_held(self.reading(PROMPT_AHEAD_OF_HELD)):
            for earlier, held in ps.pending.items():
                if held.line < rec.line and _waiting(held.states) in _UNSTOPPED:
                    self._ex[OLDEST_HELD] += 1  # judged when the earlier one is answered
                    if held.overtaken is None:
                        ps.pending[earlier] = held._replace(overtaken=(rid, line))
        result = msg.get("result")
        mid = result.get("messageId") if type(result) is dict else None
        why, readings = " and was answered with success", _NO_READINGS
        if rec.unreported_idle:
            why = (
                " (no user message it could claim was reported before the idle at line "
                f"{rec.unreported_idle} that ended its resulting work, so it was not inserted "
                f"before that idle){why}"
            )
            readings = _DEADLINE
        self._fire(sid, rid, rec, "answer", line, msg, _NO_CTX, why, readings)
        if rec.bad:
            self._ex[CONTENT] += 1
            self.breach(
                CONTENT,
                line,
                sid,
                f"prompt {rid!r} carries content the Agent did not advertise ({', '.join(rec.bad)}) "
                "but was accepted",
                msg,
            )
        if not self.between.message_id_given(mid):
            self._gx[_SUCCESS_KEY] += 1
            self.breach(
                GIVEN,
                line,
                sid,
                f"success response to prompt {rid!r} has no string messageId ({mid!r})",
                msg,
            )
            # one fault, one finding: the success says the prompt was inserted, so one user
            # message reported after its receipt, already or later, is the one it failed to
            # name: it stays a claimer (see "Unnamed messages")
            ps.nameless.append(rec.line)
        else:
            other = self.between.earlier_submission(mid, ps.claimed)
            own = other is None and mid in ps.claimed  # taken as the Agent's own insertion
            first = 0 if other is not None else ps.unclaimed.pop(mid, 0) or ps.optional.pop(mid, 0)
            self._gx[_RETURNED_AHEAD_KEY if first or own else _RETURNED_KEY] += 1
            # (insertion follows receipt: a hidden one may have come before a later report)
            replayed = ps.replayed.get(mid, 0)
            found = self.between.returned_id_breach(mid, ps.claimed, first, rec.line, replayed)
            if found is not None:
                why = _returned_text(mid, rid, rec.line, other, own, first, replayed)
                self.breach(found.rule, line, sid, why, msg)
            if other is None:
                ps.claimed[mid] = rid
                if own and ps.own_wait is not None and ps.own_wait[0] == mid:
                    ps.own_wait = None  # the prompt's message after all, not the Agent's own
                if not first and not own:
                    ps.unreported[mid] = line
        if ps.settle() and self._counting():
            self.breach(
                SAME_ID,
                line,
                sid,
                f"prompt {rid!r} returned messageId {mid!r}, but a user message reported after it "
                "was received is under another ID that no waiting prompt can claim",
                msg,
                _UNACCOUNTED,
            )
        return mid

    # -- user messages -------------------------------------------------------------------
    @on("update", "user_message", "user_message_chunk")
    def _user(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        mid = upd.get("messageId")
        if not entity.keyed(mid):  # it keys no message (the table monitor judges model.fields)
            return
        self._ex[entity.KEYED_BY_ID] += 1
        ps = self.sessions.get(sid) or self._session(sid)
        if mid == ps.owner_mid:
            ps.owner_mid = None  # reported
        if not self.content_free and "content" in upd and upd.get("sessionUpdate") == "user_message":
            self._content(ps, sid, mid, _blocks(upd["content"]), line, msg)
        # (never two of them; only claimed ones are unreported)
        known = mid in ps.unclaimed or mid in ps.claimed or mid in ps.optional
        fs = self.facts.sessions.get(sid)
        replaying = self.facts.replaying(sid)
        if known or (
            replaying
            and (not self.facts.from_start(sid) or self.reading(RESUME_REPLAY_WINDOW) == "whole-window")
        ):
            if replaying and self._history(ps, mid):
                self._replayed(ps, sid, mid, known, line, msg)
            elif ps.unreported:
                ps.unreported.pop(mid, None)
            return
        if ps.first_prompt is None:
            rule, why = "SDM-05", "in a session that never received a session/prompt (a delegated task?)"
        else:  # (refused before it: a prompt received before it was answered with an error)
            rule = self.between.unaccounted_user_message(0 < ps.first_error < line).rule
            why = _UNACCOUNTED_WHY[rule]
        started = ps.started  # (with a prompt waiting, only work under way may be the Agent's own)
        delegated = ps.first_prompt is None and fs is not None and fs.child  # (a subagent's task)
        if (not ps.pending or (started is not None and not started[3])) and self.reading(
            UNACCOUNTED_USER_MESSAGE
        ) == "agent-initiated":
            shown = fs is not None and (ps.state_seen or self.facts.from_start(sid))
            state = _PLACED.get(fs.state, "other") if shown and fs is not None else "other"
            # (a session whose state the wire never showed: any work may be going on, while no
            # prompt waits; the work reported active may be the Agent's own if no prompt waiting
            # at its start was then refused, so it waited uninserted, and none was inserted while
            # idle was reported just before it: model.between OWN_USER_MESSAGE; while a prompt
            # waits, only if no prompt waited at its start at all)
            waits = bool(ps.pending)
            own_work = (
                started is not None
                and not (waits and started[3])
                and self.between.own_work(started[2], started[1])
            )
            # (a refused prompt's hook work, none waiting at its start inserted)
            refused = started is not None and self.between.refused_work(started[2], started[4])
            own = self.between.own_user_message(
                state, own_work or not (shown or waits), waits, refused, delegated
            )
            if own and waits:  # the Agent's own, or a waiting prompt's: none need claim it
                ps.optional[mid] = line
                self._ex[rule] += 1
                return
            if own is not False and not waits:  # the Agent's own insertion (or, while idle,
                # maybe: see _state)
                ps.claimed[mid] = None
                if own is None and ps.own_wait is None:
                    self._ex[rule] += 1
                    ps.own_wait = (mid, line, rule, why, msg, None, False)
                return
        if delegated:
            why = "in a subagent's session that never received a session/prompt (its task: a session message)"
        elif not ps.pending and self.reading(UNACCOUNTED_USER_MESSAGE) == "agent-initiated":
            why += (
                " (no prompt waited, but the work it came in started while a prompt waited that was "
                "then refused: that prompt's hook work)"
            )
        ps.unclaimed[mid] = line
        self._ex[rule] += 1
        if rule == SAME_ID:
            why = _UNACCOUNTED_WHY[SAME_ID]  # (its finding leaves out the note on the work)
        if ps.settle() and self._counting():
            if any(p.line < line for p in ps.pending.values()):  # a waiting prompt may claim it
                ps.deferred.append((line, msg))
            else:
                ps.named.add(mid)
                self.breach(rule, line, sid, f"user message {mid!r} reported {why}", msg, _UNACCOUNTED)

    def _content(
        self, ps: _Session, sid: str, mid: str, blocks: frozenset[str], line: int, msg: Message
    ) -> None:
        """A live user_message carrying content (``blocks``), outside replay windows (replayed
        history is not the report): judged against its prompt's content when a success response
        returned its ID, else kept until one does (the Agent's own insertion has no prompt)."""
        if self.facts.replaying(sid) and self._history(ps, mid):
            return
        owned = ps.owned.get(mid)
        if owned is not None:
            self._foreign(sid, mid, ps.claimed[mid], blocks, owned, line, msg, line)
        elif mid not in ps.claimed:
            first, shown = ps.shown.get(mid, (line, frozenset()))
            ps.shown[mid] = (first, shown | blocks)

    def _foreign(
        self,
        sid: str,
        mid: str,
        rid: Any,
        blocks: frozenset[str],
        prompt: frozenset[str],
        line: int,
        msg: Message,
        first: int,
    ) -> None:
        """USER_MESSAGE_CONTENT: the blocks a user_message about prompt ``rid``'s message carried
        (first at line ``first``) against the prompt's."""
        if not blocks and not first:
            return
        self._ex[FOREIGN] += 1
        bad = self.between.content_outside_prompt(self.reading(USER_MESSAGE_CONTENT), sorted(blocks), prompt)
        if bad:
            self.breach(
                FOREIGN, line, sid,
                f"user message {mid!r} (prompt {rid!r}) was reported at line {first} with content its "
                f"prompt does not carry ({', '.join(map(str, bad))}): the user message's content is "
                "the prompt's",
                msg, _CONTENT_READING,
            )  # fmt: skip

    @on("agent-response", "session/close")
    def _closed(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        """The session closed while a user message taken as the Agent's own waited for its work
        to start: it never started."""
        ps = self.sessions.get(sid) if sid is not None and "result" in msg else None
        if ps is not None and sid is not None and ps.own_wait is not None and ps.own_wait[5] is None:
            self._own_breach(ps, sid, line, False, False)

    def _own_breach(
        self, ps: _Session, sid: str, line: int | None, eventually: bool, quiescent: bool
    ) -> None:
        """A user message reported while idle, taken as the Agent's own, whose work never started
        (``model.between`` OWN_USER_MESSAGE)."""
        assert ps.own_wait is not None
        mid, first, rule, why, msg, waiting, awaited = ps.own_wait
        ps.own_wait = None
        if self._counting():
            how = (
                "the work that started next began while a prompt received while idle was reported "
                "waited, inserted or not, so it was that prompt's work"
                if awaited
                else "the work that started next began while a prompt waited that was never inserted "
                "(it was answered with an error), so it was that prompt's work"
                if waiting
                else "no foreground work of the Agent's own started next"
            )
            text = (
                f"user message {mid!r} (line {first}) reported {why}: reported outside work with "
                f"no prompt waiting, and {how}: it is no insertion of the Agent's own"
            )
            if eventually:
                self.eventually(rule, quiescent, first, sid, text, _UNACCOUNTED)
            else:
                self.breach(rule, line, sid, text, msg, _UNACCOUNTED)

    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """The idle ending the resulting work of the first prompt received while idle: its user
        message was owed before it (see "Reported before the idle")."""
        ps = self.sessions.get(sid) or self._session(sid)
        ps.state_seen = True
        fs = self.facts.sessions.get(sid)
        before = "idle" if fs is None else fs.state  # (the facts as they stood before this line)
        new = upd.get("state")
        if type(new) is not str:
            new = "?"  # (a malformed state places no work)
        resuming = fs is not None and fs.resuming
        active = new in ACTIVE
        if new == "idle":
            ps.started = None
            if ps.own_wait is not None and not resuming and ps.own_wait[5] is None:
                self._own_breach(ps, sid, line, False, False)
            if ps.inserted_idle and not resuming:
                ps.inserted_idle = self.between.awaits_work_after_idle(True, before not in _PLACED)
        else:
            if active:
                if before not in ACTIVE and ps.started is None:
                    # a prompt waiting since it was received while idle was reported: inserted
                    # while idle (awaiting this work) or still uninserted, the work is not the
                    # Agent's own
                    bound = False
                    for p in ps.pending.values():
                        if p.idle_receipt and not ps.worked(p):
                            bound = True
                            break
                    awaited = ps.inserted_idle or bound
                    ps.started = (frozenset(ps.pending), awaited, False, bool(ps.pending), False)  # a start
                    if ps.own_wait is not None and not resuming:
                        if not self.between.own_work(False, ps.inserted_idle):  # a prompt's work
                            self._own_breach(ps, sid, line, False, False)
                        elif ps.pending:  # its own unless a prompt waiting now was never inserted,
                            # or awaited this work (then a breach unless that prompt returns its
                            # ID: ACC-07)
                            ps.own_wait = (*ps.own_wait[:5], frozenset(ps.pending), bound)
                        else:  # the Agent's own work starts: the message was its insertion
                            ps.own_wait = None
                ps.inserted_idle = False
            ps.non_idle += 1  # every prompt waiting now has worked
        if resuming and self.between.resume_snapshot(True, fs is not None and fs.shown and before in ACTIVE):
            if not ps.owner_working:
                ps.drop_owner()
            return  # (a state replacing an active one reported in the same window is live)
        if ps.owner is None:
            pass
        elif active:
            ps.owner_working = True  # its resulting work (also when reported after unknown)
        elif new == "idle" and ps.owner_working:
            self._ex[REPORTED] += 1
            rec = ps.pending.get(ps.owner) if ps.owner_fresh else None
            if rec is not None:  # (still waiting for its answer)
                self._not_inserted(ps, ps.owner, rec, line)
            mid = ps.owner_mid
            if (
                mid is not None
                and self.between.user_messages_owed((mid,))
                and self.reading(USER_MESSAGE_DEADLINE) == "resulting-work"
            ):
                ps.unreported.pop(mid, None)  # judged here, not again at the end
                note, window = _replay_note(ps, mid)
                self.breach(
                    REPORTED, line, sid,
                    f"prompt {ps.owner!r}, waiting while the session was idle, was answered "
                    f"with messageId {mid!r} and its resulting work now ends, but no "
                    f"user_message or user_message_chunk reported that message{note} before this "
                    "idle (a pending update of the work: 4. Report completion)",
                    msg, _DEADLINE + window,
                )  # fmt: skip
            ps.drop_owner()
        # (other states: the same stretch; work starts and ends only with a report)
        if new == "idle" and ps.owner is None and ps.pending:
            ps.owner = next(iter(ps.pending))  # the oldest waiting: the next work is its

    def _not_inserted(self, ps: _Session, rid: Any, rec: _Prompt, line: int) -> None:
        """The idle ending the resulting work of prompt ``rid``, received while idle was reported
        and still waiting for its answer: with no user message it could claim reported since its
        receipt, it was not inserted before this idle (``model.between`` not_inserted_by_idle,
        the reading ``user-message-deadline``): a state it reached only by an insertion before
        now (inserted ahead of the session/cancel or session/close that stopped it) is ruled out."""
        claimable = any(first > rec.line for first in (*ps.unclaimed.values(), *ps.optional.values()))
        if not self.between.not_inserted_by_idle(self.reading(USER_MESSAGE_DEADLINE), claimable):
            return
        uninserted = rec.states - _INSERTED
        states = self.spec.unseen(uninserted) if uninserted else rec.states
        if states != rec.states:  # (an insertion still open later is no state ruled out)
            ps.pending[rid] = rec._replace(states=states, unreported_idle=line)

    @on("update", "session_message")
    def _delegated(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """A session-directed message in a session that never received a session/prompt: a
        delegated task reported as the spec asks, not as a user_message (SDM-05 judged, and
        held)."""
        ps = self.sessions.get(sid)
        if ps is None or ps.first_prompt is None:
            self._ex["SDM-05"] += 1

    def _history(self, ps: _Session, mid: str) -> bool:
        """Whether a user message under ``mid`` inside a window that asked for a replay is
        replayed history (see "Replay"): under ``resume-replay-window=known-ids`` not one under an
        ID a success response returned that no user message has reported yet: that is its live
        report (replayed updates are told apart by their IDs, and the report has no fixed order)."""
        return mid not in ps.unreported or self.reading(RESUME_REPLAY_WINDOW) == "whole-window"

    def _replayed(self, ps: _Session, sid: str, mid: str, known: bool, line: int, msg: Message) -> None:
        """A user message inside a resume window: replayed history, not the live report. One
        under an ID the session already used (``known``) kept its ID (ACC-11 judged, and held);
        judged only when the session is seen from its creation. Its ID is used in any session: a
        prompt received after the replay that returns it reuses it (ACC-09); one the session
        already used is recorded there (``claimed``, ``unclaimed``, ``optional``), so only an ID
        new to the session is recorded as replayed."""
        if not known:
            ps.replayed.setdefault(mid, line)
        if not self.facts.from_start(sid):
            return
        self._ex[KEEPS] += 1
        if known:
            return
        live = ps.claimed.keys() | ps.unclaimed.keys()
        if mid not in ps.replay_unknown and self.between.replay_renamed(mid, live):
            ps.replay_unknown.add(mid)
            self.breach(
                KEEPS,
                line,
                sid,
                f"session/resume replays user message {mid!r}, an ID never used live in this "
                "session: a replayed message must keep its ID",
                msg,
                (RESUME_REPLAY_WINDOW,),
            )

    def _counting(self) -> bool:
        """Whether an unclaimed user message is a breach (reading ``unaccounted-user-message``:
        under ``agent-initiated`` only those reported while a prompt waited were recorded as
        unclaimed)."""
        return self.reading(UNACCOUNTED_USER_MESSAGE) != "other-sources"

    # -- end -----------------------------------------------------------------------------
    def at_end(self, quiescent: bool) -> None:
        for sid, ps in self.sessions.items():
            for grew, msg in ps.deferred:  # prompts still waiting: which message is not certain
                later = [m for m, f in ps.unclaimed.items() if f <= grew and m not in ps.named]
                self.breach(
                    self.between.unaccounted_user_message(0 < ps.first_error < grew).rule,
                    grew, sid,
                    f"user messages {', '.join(map(repr, later))}, reported by line {grew}, outnumber "
                    "the prompts waiting then that may still claim them: one of them is under an ID "
                    "that no prompt response returned or can still return",
                    msg, _UNACCOUNTED,
                )  # fmt: skip
            ps.deferred.clear()
            if ps.own_wait is not None and ps.own_wait[5] is None:
                self._own_breach(ps, sid, None, True, quiescent)
        spec = self.spec
        for sid, rid, rec in self.waiting():
            ps, received = self.sessions[sid], rec.line
            owed = [state for state in spec.states if state in rec.states and state in spec.eventually]
            if not owed or spec.eventually[owed[0]] in spec.relaxed:
                continue
            # a user message reported after its receipt, that no response claimed: probably its own
            # (also one that may be the Agent's own)
            inserted = prm.INSERTED in owed and any(
                first > received for first in (*ps.unclaimed.values(), *ps.optional.values())
            )
            state = prm.INSERTED if inserted else owed[0]
            self.eventually(
                spec.eventually[state], quiescent, received, sid,
                f"prompt {rid!r} was never answered (it may be {state}: the prompt table requires "
                "an answer from there)",
            )  # fmt: skip
        for sid, ps in self.sessions.items():
            # closed sessions too: closing does not discharge the report (model.between
            # USER_MESSAGE_REPORTED)
            for mid, line in ps.unreported.items():
                note, window = _replay_note(ps, mid)
                self.eventually(
                    REPORTED,
                    quiescent,
                    line,
                    sid,
                    f"messageId {mid!r} was returned, but no user_message or user_message_chunk "
                    f"reported it{note}",
                    window,
                )

    def waiting(self) -> list[tuple[str, Any, _Prompt]]:
        """Every prompt waiting for its answer: (session, request id, record), in receipt order."""
        found = [(sid, rid, rec) for sid, ps in self.sessions.items() for rid, rec in ps.pending.items()]
        return sorted(found, key=lambda one: (one[2].line, one[2].seq))

    # -- explorers -----------------------------------------------------------------------
    def state_key(self) -> Any:
        return tuple(sorted((k, v.key(self.facts.from_start(k))) for k, v in self.sessions.items()))


_ANSWERED = (prm.SPEC.eventually[prm.RECEIVED], prm.SPEC.eventually[prm.INSERTED])
"""Exercised by every answer: the prompt table's obligations to answer, of a prompt nothing
stopped (the obligation a close leaves is exercised by the close)."""
_SUCCESS_KEY = rule_group(*_ANSWERED, GIVEN, SAME_ID)
"""Exercised by every success response (with those of every answer)."""
_RETURNED = (*_ANSWERED, GIVEN, SAME_ID, DISTINCT, REPORTED)
_RETURNED_KEY = rule_group(*_RETURNED)
"""Exercised by a success response that returns a string messageId."""
_RETURNED_AHEAD_KEY = rule_group(*_RETURNED, AHEAD)
"""Exercised by one whose messageId was reported before it (or taken as the Agent's own)."""
_UNACCOUNTED_WHY = {
    REFUSED: "and a prompt received before it was answered with an error",
    SAME_ID: "under an ID that no prompt response returned or can still return",
}
"""How a live user message no success response can account for was reported, by the rule it
breaks (``model.between`` unaccounted_user_message)."""
_ANSWERED_KEY = rule_group(*_ANSWERED)
_STOPPED_BY = {
    prm.COVERED: " (a session/cancel reached the Agent before it was inserted)",
    prm.CLOSED_OUT: " (a session/close reached the Agent before it was inserted)",
    prm.CANCEL_REQUESTED: " (a $/cancel_request for it reached the Agent before it was inserted)",
}
_UNSTOPPED = (prm.RECEIVED, prm.HELD)
_PLACED = {**dict.fromkeys(ACTIVE, "active"), "idle": "idle"}
"""Reported foreground states that place a user message in or out of work (``own_user_message``)."""
_INSERTED = frozenset((prm.INSERTED,))


def _unnamed(ps: _Session) -> set[str]:
    """The unclaimed user messages taken as those the prompts answered without a messageId
    failed to name, where a message is named as unclaimed (see "Unnamed messages"): for each
    such prompt in receipt order, the oldest one reported after its receipt not yet taken."""
    taken: set[str] = set()
    for received in sorted(ps.nameless):
        for mid, first in ps.unclaimed.items():
            if first > received and mid not in taken and mid not in ps.named:
                taken.add(mid)
                break
    return taken


def _waiting(states: frozenset[str]) -> str | None:
    """The state of a prompt that was not inserted, among the states it may be in."""
    return next((state for state in prm.PENDING if state in states), None)


_REPORTED = frozenset(PromptMonitor.RULES)


def _returned_text(
    mid: Any, rid: Any, received: int, other: Any, own: bool, first: int, replayed: int = 0
) -> str:
    """Why a returned messageId breaks the rule ``Rules.returned_id_breach`` named."""
    if other is not None:
        return (
            f"messageId {mid!r} returned for prompt {rid!r} was already returned for "
            f"prompt {other!r}: distinct submissions need distinct IDs"
        )
    if not own and 0 < replayed < received:
        return (
            f"messageId {mid!r} returned for prompt {rid!r} (received at line {received}) is the "
            f"ID of a user message a session/resume replayed at line {replayed}, an earlier "
            "submission: distinct submissions need distinct IDs"
        )
    if own:
        return (
            f"user message {mid!r} was reported while no prompt waited (taken as the "
            f"Agent's own insertion), so before prompt {rid!r} that it answers was "
            f"received (line {received})"
        )
    return (
        f"user message {mid!r} was reported at line {first}, before prompt "
        f"{rid!r} that it answers was received (line {received})"
    )
