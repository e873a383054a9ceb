"""The registry of seeded bugs: every faulty Agent and Client, each declared once.

Theory of operation
-------------------
A seeded bug is one ``Seeded`` entry of ``SEEDED``: what it deviates (``bug``, a kind of
``properties.bugs``: a move withheld or forbidden, a message rewritten, a view that folds updates
wrongly ...), whose it is (``side``: agent or client), the rule it is meant to break (``rule``:
named in the bug, or the one its table cell or obligation states), what it does in a sentence
(``does``), the bounds its runs take (``walks``) and, for a bug no proxy can see, why
(``off_wire``). Everything that knows seeded bugs reads them from here: the simulated Agent
and Client (``simulator.peers.deviations``), the faulty client views (``properties.clientview``) and
the rule each breaks (``properties.viewcheck``), ``acp-model mutants`` (``simulator.analysis.mutants``),
``acp-model agent --fault`` and ``drive``, the decidability search and variants that drop a rule
(the bug that breaks it).

To add a seeded bug: add one entry to its group below (agent deviations by kind, then what the
Client sends, then the Client's view), and, for a new kind of deviation, the code that applies
it (``simulator.peers.deviations`` for the peers, a branch of ``properties.clientview`` for a view
testing ``seeded.NAME.name``). ``acp-model mutants`` must then catch it by its rule.

Must not know: the simulator, monitors, how a run is judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import UnionType
from typing import Final

from model.core import Actor
from model.foreground import CANCELLED, STOP_REASONS
from properties.bugs import (
    Again,
    Also,
    Bug,
    Copies,
    Forbidden,
    Misread,
    Misview,
    Offer,
    Reuse,
    Rewrite,
    Stretch,
    Unchecked,
    Withhold,
    rule_of,
)


@dataclass(frozen=True, slots=True)
class Walks:
    """The bounds of a seeded bug's runs, as fields of ``simulator.peers.config.Config``: the features
    walked (``features``; None: the default features less the freedoms that are bugs of their own,
    ``simulator.peers.config.FOCUSED``), those left out of or added to that default (``without``,
    ``plus``) and other bounds (``bounds``: (field, value) pairs)."""

    features: frozenset[str] | None = None
    without: frozenset[str] = frozenset()
    plus: frozenset[str] = frozenset()
    """Features added to that default (a freedom that is no bug here)."""
    bounds: tuple[tuple[str, int], ...] = ()


def walks(*features: str, without: tuple[str, ...] = (), plus: tuple[str, ...] = (), **bounds: int) -> Walks:
    """``Walks`` written short: ``walks("cancel", "thought", prompts=1)``."""
    return Walks(
        frozenset(features) or None, frozenset(without), frozenset(plus), tuple(sorted(bounds.items()))
    )


FOCUSED: Final = Walks()


@dataclass(frozen=True, slots=True)
class Seeded:
    bug: Bug
    does: str
    """What the faulty peer does, in a sentence."""
    walks: Walks = FOCUSED
    also: tuple[str, ...] = ()
    """Other seeded bugs switched on with this one (a client sending what the Agent then
    mishandles)."""
    off_wire: str = ""
    """Why this bug never shows on the wire, so that ``acp-model drive`` cannot find it in
    ``acp-model agent --fault NAME`` (empty: it shows)."""

    @property
    def name(self) -> str:
        return self.bug.name

    @property
    def side(self) -> Actor:
        return self.bug.side

    @property
    def rule(self) -> str:
        """The rule it is meant to break, judged by the spec as written (``bugs.rule_of``)."""
        return rule_of(self.bug)

    @property
    def faults(self) -> tuple[str, ...]:
        """The faults a run of it switches on: its own deviation's (another bug's, for ``Again``)
        and those of ``also``."""
        own = self.bug.of if isinstance(self.bug, Again) else self.name
        return (own, *self.also)


_STATE = {"sessionUpdate": "state_update"}
_RUNNING = {**_STATE, "state": "running"}
_ENDED = frozenset(STOP_REASONS) - {CANCELLED}
_UPDATE = ("params", "update")
_HI = {"type": "text", "text": "hi"}
_IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}

_RACE = walks(
    "permission",
    "cancel",
    prompts=1,
    tool_calls=2,
    permissions=2,
    outputs=0,
    cancel_requests=0,
    closes=0,
    resumes=0,
    reattaches=0,
    losses=0,
    futures=0,
    hooks=0,
    reruns=0,
    notices=0,
    usages=0,
    compactions=0,
    background=0,
)
"""A race (the approval must reach the Agent after its cancelled idle): few other moves, two tool
calls that ask (a second chance at the race)."""
_ELICIT_THEN_CANCEL = walks("elicitation", "cancel", cancels=2, outputs=0)
"""A second cancel (the first is often spent before any elicitation is pending), and no output to
choose instead of eliciting."""
_PERMISSION_AT_CANCEL = walks("permission", "cancel", cancels=3, outputs=0, permissions=2)
"""A permission request pending when a cancel comes: no output to choose instead of asking, a
second and third cancel (the first is often spent before any request is pending)."""
_PENDING_AT_CANCEL = walks("elicitation", "cancel", cancels=3, outputs=0, elicitations=2)
"""As ``_ELICIT_THEN_CANCEL``, with a third cancel and a second elicitation: an elicitation still
unanswered when a cancel arrives (the Client often answers the first one before)."""

# -- the Agent ------------------------------------------------------------------------------------
_AGENT: tuple[Seeded, ...] = (
    # moves withheld (an obligation skipped)
    Seeded(
        Withhold(
            "compaction-never-ends", "compaction", frozenset({"complete", "fail", "cancel"}), "COMPACT-05"
        ),
        "leaves a reported compaction in progress",
    ),
    Seeded(
        Withhold("never-answer-inserted", "prompt", frozenset({"answer"})), "never answers an inserted prompt"
    ),
    Seeded(
        Withhold("prompt-without-work", "foreground", frozenset({"start", "start_blocked"}), "BOUND-02"),
        "accepts prompts but never runs foreground work",
    ),
    Seeded(
        Withhold("cancel-leaves-tool-open", "tool_call", frozenset({"cancel"}), "CANCEL-17"),
        "confirms a cancellation while a tool call of the cancelled work has no final status",
        walks("cancel", "thought", prompts=1),
    ),
    Seeded(
        Withhold("error-with-live-tools", "tool_call", frozenset({"fail"}), "FAIL-04"),
        "reports idle error while a tool call is unfinished",
        walks("fail", "thought"),
    ),
    # forbidden cells fired
    Seeded(
        Forbidden("error-after-insert", "prompt", "inserted", "reject", "rejected"),
        "answers an inserted prompt with an error response",
    ),
    Seeded(
        Forbidden("withdraw-wrong-code", "prompt", "cancel_requested", "reject", "rejected"),
        "answers a prompt withdrawn by $/cancel_request with an error other than -32800",
    ),
    Seeded(
        Forbidden("close-withdraw-wrong-code", "prompt", "closed_out", "reject", "rejected"),
        "answers a prompt stopped by session/close with an error other than -32800",
    ),
    Seeded(
        Forbidden("list-before-announce", "background_item", "unannounced", "list", "listed"),
        "lists a terminal it has not announced",
    ),
    Seeded(
        Forbidden("list-twice", "background_item", "listed", "list", "listed"),
        "names an item it already lists a second time in a background list",
        walks("terminal", "bg_tool", "thought"),
    ),
    Seeded(
        Forbidden("remove-before-exit", "background_item", "listed", "unlist", "done"),
        "removes an item from the background list before it finished",
        walks("terminal", "bg_tool", "cancel", "thought"),
    ),
    Seeded(
        Forbidden("reuse-compaction-id", "compaction", "completed", "progress", "in_progress"),
        "reuses a finished compaction's ID",
    ),
    Seeded(
        Forbidden("reopen-tool-call", "tool_call", "completed", "run", "in_progress"),
        "reports in_progress on a completed tool call",
    ),
    Seeded(
        Forbidden(
            "busy-refusal", "prompt", "held", "reject", "rejected", wire=False, ctx={"busy_only": True}
        ),
        "refuses a held prompt only because foreground work is active",
        off_wire="the Agent's reason for a refusal is not on the wire: acp-model check reports a -32600 "
        "refusal while work is active as a suspicion (a warning, which drive does not count), and only the "
        "model, which knows why the simulated Agent refused, proves the breach (the prompt table's guard "
        "busy_only); acp-model decidability rates this bug not decidable",
    ),
    Seeded(
        Forbidden("held-not-withdrawn", "prompt", "covered", "insert", "inserted", wire=False),
        "inserts a prompt that a session/cancel covered",
        walks("hold", "cancel", prompts=2),
        off_wire="the model's prompt table refuses to insert a prompt that a session/cancel covered, so the "
        "simulated Agent never sends that insertion (acp-model agent notes the refusal on standard error); "
        "and were it sent, its user message and success answer after the cancel are what an Agent that "
        "inserted the prompt before the cancel arrived sends too, which conforms (a proxy cannot see when a "
        "prompt was inserted): CANCEL-02 is broken on the wire only by an error answer other than -32800, "
        "and acp-model decidability rates this bug not decidable",
    ),
    Seeded(
        Forbidden("response-before-snapshot", "session", "resuming", "resumed", "open"),
        "answers session/resume before the state snapshot",
    ),
    Seeded(
        Forbidden("answer-on-receipt", "prompt", "received", "answer", "answered", wire=False),
        "answers a prompt successfully as soon as it is received, before inserting it",
        off_wire="the model's prompt table refuses to answer a prompt that is not inserted, so the "
        "simulated Agent never sends that answer (acp-model agent notes the refusal on standard error); and "
        "were it sent, a success response says nothing of when the message was inserted (a proxy cannot see "
        "insertion): acp-model decidability rates this bug not decidable",
    ),
    Seeded(
        Forbidden(
            "insert-out-of-order",
            "prompt",
            "held",
            "insert",
            "inserted",
            wire=False,
            when={"oldest_held": False},
        ),
        "inserts a held prompt ahead of one it received earlier and holds",
        walks("hold", "thought", prompts=3),
        off_wire="the model's prompt table refuses to insert a waiting prompt ahead of an older one it "
        "holds, so the simulated Agent never sends that insertion (acp-model agent notes the refusal on "
        "standard error); and were it sent, which prompts were held is not on the wire (under the default "
        "reading prompt-ahead-of-held=held-only a prompt received later may be inserted at once, ahead of "
        "held ones): acp-model decidability rates this bug not decidable",
    ),
    # a field of a move's messages rewritten
    Seeded(
        Rewrite("usage-no-size", "USAGE-02", "usage", (*_UPDATE, "size")), "sends a usage_update without size"
    ),
    Seeded(
        Rewrite("notice-empty-title", "NOTICE-02", "notice", (*_UPDATE, "title"), value=""),
        "sends a notice with an empty title",
    ),
    Seeded(
        Rewrite("drop-background-field", "BG-07", "end", (*_UPDATE, "background"), _STATE),
        "ends work with an idle without the background list",
    ),
    Seeded(
        Rewrite("compaction-no-status", "COMPACT-02", "compact_start", (*_UPDATE, "status")),
        "starts a compaction with no status",
    ),
    Seeded(
        Rewrite(
            "session-message-no-id",
            "SDM-01",
            "bg_start",
            (*_UPDATE, "messageId"),
            {"sessionUpdate": "session_message"},
        ),
        "sends a session_message without messageId",
    ),
    Seeded(
        Rewrite(
            "chunk-no-message-id",
            "MSGID-01",
            "say",
            (*_UPDATE, "messageId"),
            {"sessionUpdate": "agent_message_chunk"},
        ),
        "sends an agent message chunk without messageId",
    ),
    Seeded(
        Rewrite("response-without-message-id", "ACC-04", "answer", ("result", "messageId")),
        "answers a prompt without messageId",
    ),
    Seeded(
        Rewrite(
            "user-message-wrong-id",
            "ACC-06",
            "user_message",
            (*_UPDATE, "messageId"),
            value=lambda m: f"{m}_x",
        ),
        "reports the user message under another ID",
    ),
    Seeded(
        Rewrite(  # the retained user message keeps its ID
            "replay-new-ids",
            "ACC-11",
            "replay",
            (*_UPDATE, "messageId"),
            {"sessionUpdate": "user_message"},
            lambda mid: f"{mid}_r",
        ),
        "replays retained user messages under new message IDs",
    ),
    Seeded(
        Rewrite(
            "cancel-as-end-turn",
            "TRANS-04",
            "end",
            (*_UPDATE, "stopReason"),
            {"stopReason": "cancelled"},
            "end_turn",
        ),
        "confirms a cancellation with end_turn",
    ),
    Seeded(
        Rewrite(
            "cancel-as-error",
            "CANCEL-12",
            "end",
            (*_UPDATE, "stopReason"),
            {"stopReason": "cancelled"},
            "error",
        ),
        "reports a cancellation as an error (the abort's exception surfaced as a failure)",
    ),
    Seeded(
        Rewrite(
            "custom-stop-reason-no-underscore",
            "STOP-03",
            "end",
            (*_UPDATE, "stopReason"),
            {"stopReason": "end_turn"},
            "paused",
        ),
        "ends with an unknown stop reason without `_`",
    ),
    Seeded(
        Rewrite(
            "custom-running-state",
            "STATE-04",
            "start",
            (*_UPDATE, "state"),
            _RUNNING,
            "_busy",
            unless="future",  # the Client advertised custom states
        ),
        "reports a custom state where running is required (the Client advertised no custom states)",
        walks(without=("future",)),
    ),
    # messages of a move silenced or repeated
    Seeded(
        Copies("no-running-on-start", "FG-02", "start", 0, _RUNNING),
        "starts foreground work without reporting running",
        walks(without=("compaction", "notice")),
    ),
    Seeded(
        Copies("own-work-unreported", "FG-01", "start_goal", 0, _RUNNING),
        "starts work of its own (pursuing a goal) without reporting running",
        walks(plus=("goal",), without=("compaction", "notice")),
    ),
    Seeded(
        Copies("no-resume-running", "FG-04", "resume", 0, _RUNNING),
        "resumes blocked work without reporting running",
    ),
    Seeded(
        Copies("no-idle-at-end", "FG-05", "end", 0, {**_STATE, "state": "idle", "stopReason": _ENDED}),
        "ends foreground work without reporting idle",
    ),
    Seeded(
        Copies(
            "no-idle-after-cancel",
            "CANCEL-11",
            "end",
            0,
            {**_STATE, "state": "idle", "stopReason": "cancelled"},
        ),
        "never reports idle after cancelling active work",
    ),
    Seeded(Copies("silent-reject", "REJ-01", "reject", 0), "rejects a prompt without sending any response"),
    Seeded(
        Copies("answer-before-insert", "ACC-05", ("user_message", "user_chunks"), 0),
        "answers a prompt but never reports the user message",
    ),
    Seeded(Copies("answer-twice", "INTRO-02", "answer", 2), "sends two success responses to one prompt"),
    # an update added
    Seeded(
        Also(
            "user-message-after-reject",
            "REJ-02",
            "reject",
            {"sessionUpdate": "user_message", "messageId": "msg_u_refused", "content": [_HI]},
        ),
        "reports a user message for a rejected prompt",
    ),
    Seeded(
        Also(
            "user-message-ahead",
            "ACC-07",
            "insert",
            {"sessionUpdate": "user_message", "content": [{"type": "text", "text": "ahead"}]},
            reserve="user_message",
        ),
        "reports a user message before the prompt it is later returned for was received",
        walks(prompts=2),
    ),
    # IDs given again
    Seeded(
        Reuse("reuse-message-id", "ACC-09", "user_message"), "gives two inserted prompts the same messageId"
    ),
    Seeded(
        Reuse("terminal-reused", "ENT-01", "terminal", {"exitStatus": None}),
        "starts a second terminal under an exited terminal's ID",
        walks(without=("bg_tool", "subagent", "fail", "pause", "compaction"), background=2, prompts=3),
    ),
    # a Client trigger applied too widely, a rule left unapplied, a reading misread
    Seeded(
        Stretch("cancel-covers-later-prompts", "CANCEL-16", "prompt", "cover"),
        "withdraws prompts that arrived after a cancel",
        walks("cancel", "hold", "thought"),
    ),
    Seeded(
        Unchecked("accept-unadvertised-content", "USER-04"),
        "inserts a prompt with content it did not advertise",
        also=("image-without-capability",),
    ),
    Seeded(
        Unchecked("late-approval-runs", "CANCEL-06"),
        "leaves a tool call waiting on its permission pending when its work is cancelled, or gives it "
        "its cancelled status while the request is still open, and runs it (reopened) when that "
        "permission is approved late, withdrawn or not",
        _RACE,
    ),
    Seeded(
        Withhold("permission-not-withdrawn", "permission", frozenset({"withdraw"}), "CANCEL-07"),
        "never withdraws the permission requests of cancelled work with $/cancel_request",
        _PERMISSION_AT_CANCEL,
    ),
    Seeded(
        Unchecked("requires-action-unasked", "TRANS-05"),
        "reports requires_action while no permission request or elicitation is outstanding",
        walks("thought"),
    ),
    Seeded(
        Unchecked("elicit-unadvertised", "TOOL-07"),
        "elicits in modes the Client did not advertise",
        walks("cancel", "thought"),
    ),
    # elicitations
    Seeded(
        Forbidden("complete-twice", "elicitation", "completed", "complete", "completed"),
        "reports a URL elicitation completed a second time",
        walks("elicitation", "thought"),
    ),
    Seeded(
        Withhold("elicitation-not-withdrawn", "elicitation", frozenset({"withdraw"}), "CANCEL-19"),
        "never withdraws the elicitations of cancelled work",
        _PENDING_AT_CANCEL,
    ),
    Seeded(
        Unchecked("late-elicitation-runs", "CANCEL-10"),
        "elicits for a tool call, leaves that call pending when its work is cancelled, and runs it "
        "when a late accept or external completion arrives",
        _ELICIT_THEN_CANCEL,
    ),
    Seeded(
        Misread("list-tool-and-terminal", "BG-13", "tool-with-listed-terminal", "may-have-other-work"),
        "lists a tool call whose only live work is a listed terminal",
        walks("terminal", "thought"),
    ),
    # moves offered where the conforming Agent makes none
    Seeded(
        Offer("update-after-idle", "DONE-03", "late_output", ("open", "closing"), side="agent"),
        "sends output of the ended work after its idle (message content, or content of a tool call "
        "the work had finished)",
    ),
    Seeded(
        Again("update-after-cancelled-idle", "CANCEL-14", "update-after-idle"),
        "sends output after the idle that confirms a cancel",
        walks("cancel", "thought", "chunks", "plan"),
    ),
)

# -- what the Client sends ------------------------------------------------------------------------
_CLIENT_SENDS: tuple[Seeded, ...] = (
    Seeded(
        Rewrite("empty-prompt", "USER-01", "prompt", ("params", "prompt"), value=[], side="client"),
        "sends a session/prompt with an empty prompt array",
    ),
    Seeded(
        Rewrite(
            "image-without-capability",
            "USER-03",
            "prompt",
            ("params", "prompt"),
            value=[_IMAGE],
            side="client",
        ),
        "sends an image the Agent did not advertise",
    ),
    Seeded(
        Offer("prompt-during-resume", "INTRO-01", "prompt", ("resuming",)),
        "sends a prompt before session/resume was answered",
    ),
)

# -- the Client's view ----------------------------------------------------------------------------
_CLIENT_VIEWS: list[Seeded] = []


def _view(name: str, rule: str, does: str, runs: Walks = FOCUSED) -> Seeded:
    """A faulty client view (``Misview``), added to the registry in the order written."""
    seeded = Seeded(Misview(name, rule), does, runs)
    _CLIENT_VIEWS.append(seeded)
    return seeded


OMITTED_BACKGROUND_IS_EMPTY: Final = _view(
    "omitted-background-is-empty", "BG-08", "treats an omitted background list as []"
)
MOVE_ON_UPDATE: Final = _view(
    "move-on-update", "ENT-04", "moves an entity to the end of the timeline on update"
)
DROP_UNSEEN_CHUNK: Final = _view("drop-unseen-chunk", "ENT-03", "drops a chunk for an ID it has not seen")
KEY_BY_ID_ONLY: Final = _view(
    "key-by-id-only", "ENT-02", "keys entities by ID alone", walks("thought", "chunks")
)
UNKNOWN_STATE_IS_IDLE: Final = _view(
    "unknown-state-is-idle", "STATE-05", "treats unknown or unrecognized states as idle"
)
REPEAT_IDLE_COUNTS: Final = _view(
    "repeat-idle-counts", "TRANS-02", "counts every repeated idle as a completion"
)
RESPONSE_OVERWRITES_STATE: Final = _view(
    "response-overwrites-state",
    "SYNC-01",
    "takes a session/new or session/resume response as idle, overwriting a state already reported",
)
SYNTHESIZE_INCOMING: Final = _view(
    "synthesize-incoming",
    "SDM-03",
    "makes an incoming entry in the recipient's session from an outgoing session message",
)
LINK_BY_EQUAL_ID: Final = _view(
    "link-by-equal-id",
    "SDM-02",
    "links the outgoing and incoming views of a session message because their IDs are equal",
)
SILENT_TERMINAL_EXITED: Final = _view(
    "silent-terminal-exited",
    "BG-02",
    "takes a live terminal that has sent no output as exited when the session goes idle",
    walks("terminal", "thought"),
)
UNREPORTED_BACKGROUND_ABANDONS: Final = _view(
    "unreported-background-abandons",
    "BG-16",
    "treats unfinished work as abandoned at an idle whose background is not reported",
    walks("terminal", "bg_tool", "thought"),
)
IDLE_WAITS_FOR_ANSWER: Final = _view(
    "idle-waits-for-answer",
    "ACC-12",
    "holds an idle that arrives before a prompt's response back until that response",
)
RUNNING_MEANS_INSERTED: Final = _view(
    "running-means-inserted",
    "INS-01",
    "takes a running report as the insertion of every prompt still unanswered",
)
REPLAY_INFERS_ACTIVITY: Final = _view(
    "replay-infers-activity",
    "SYNC-03",
    "shows running when content is replayed during a resume, before the snapshot",
)
LOCAL_ECHO: Final = _view(
    "local-echo", "ACC-08", "shows its own prompt as a user message of its own, never merged with the Agent's"
)
ASSOCIATE_BY_ORDER: Final = _view(
    "associate-by-order",
    "ACC-10",
    "ties a prompt to the first user message that arrives after it, not to the response's",
)
MESSAGE_CHUNK_REPLACES: Final = _view(
    "message-chunk-replaces",
    "MSGID-02",
    "replaces an agent message's content with each chunk instead of appending it",
    walks("chunks", "thought"),
)
TOOL_CHUNK_REPLACES: Final = _view(
    "tool-chunk-replaces",
    "TOOL-06",
    "replaces a tool call's content with each content chunk instead of appending it",
    walks(plus=("pause",), tool_updates=2),
)
SUMMARY_CHUNK_REPLACES: Final = _view(
    "summary-chunk-replaces",
    "COMPACT-04",
    "replaces a compaction's summary with each summary chunk instead of appending it",
)
IDLE_NEEDS_KNOWN_REASON: Final = _view(
    "idle-needs-known-stop-reason",
    "STOP-02",
    "does not take an idle without a known stop reason as the end of the work",
    walks(plus=("custom_stop",)),
)
UNKNOWN_KEEPS_ACTIVITY: Final = _view(
    "unknown-keeps-activity",
    "STATE-02",
    "keeps showing running or requires_action as live after the Agent reports unknown",
)

SEEDED: Final[tuple[Seeded, ...]] = (*_AGENT, *_CLIENT_SENDS, *_CLIENT_VIEWS)
"""Every seeded bug: the Agent's, then what the Client sends, then the Client's view."""
BY_NAME: Final[dict[str, Seeded]] = {s.name: s for s in SEEDED}


def names(side: Actor | None = None, kind: type | UnionType | None = None) -> tuple[str, ...]:
    """The names of the seeded bugs of ``side`` (None: both) whose bug is of ``kind`` (None: any)."""
    return tuple(
        s.name
        for s in SEEDED
        if (side is None or s.side == side) and (kind is None or isinstance(s.bug, kind))
    )
