"""The rule catalogue: every normative statement of the ACP v2 prompt-lifecycle spec, as data.

Owns: the ``Rule`` value type, the stable rule IDs (``<CODE>-<NN>``), the mapping from the spec's
section headings to their codes, and ``keyword_occurrences`` which finds the uppercase normative
keywords in the spec text, so a test can prove the catalogue accounts for each of them exactly once.

IDs: CODE comes from the section heading (``SECTION_CODES``); NN numbers the entries of a section in
spec order. An ID never changes once committed; later additions are appended with the next free
number of their section, even if that breaks spec order.

Entries:
- one per uppercase keyword occurrence (``occurrences`` lists the 1-based global indices of the
  keyword tokens it accounts for; its level equals their keyword);
- informal entries (``informal``, ``occurrences=()``: those ``INFORMAL_WORDING`` names, with the
  words of their sentence) for obligations the spec states without an uppercase keyword: a
  lowercase "must"/"must not", or a plain statement of what a peer does or a message requires
  ("is required", "uses -32800", "does not reopen"). Their level is the one the wording implies.
  They exist so monitors and client-view checks have an ID to report.

``check`` says how a rule is judged: ``model`` (stated once in ``model/``: a forbidden cell, a
guard or an obligation of a machine table, a declaration of ``model.between``, or a field
``model.fields`` requires of one update; the checker
judges transcripts by running that statement, the simulated peers move by it), ``monitor`` (by a
monitor's own code over a transcript of wire messages), ``client-view`` (an invariant of the
simulated Client's view), ``not-checkable`` (with ``reason``: nothing observable can show it) or
``unchecked`` (with ``reason``: checkable in principle, but no check implements it yet; a test
holds every other value to the code that implements it). ``eventually`` marks rules that can
only be judged at the end of a run.

A MAY entry is a permission. It never produces a finding: a ``monitor`` MAY tells monitor authors
what they must tolerate, a ``model`` MAY tells the model what it is allowed to do.

Paraphrases are our own words; the spec is cited only by its section headings.

Must not know: monitors, findings, the CLI, or any file location (the spec text is passed in).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import asdict, dataclass
from typing import Final

from model import between as bw

LEVELS: Final[tuple[str, ...]] = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
SIDES: Final[tuple[str, ...]] = ("agent", "client", "both")
CHECKS: Final[tuple[str, ...]] = ("monitor", "client-view", "model", "not-checkable", "unchecked")

INTRO: Final = "INTRO"
"""Pseudo-heading of the spec text before its first heading."""

# Spec headings in order, with their codes. "Prompt lifecycle" has no rules and no code in the
# project brief; it gets LIFE so that the mapping stays total.
SECTION_CODES: Final[dict[str, str]] = {
    INTRO: "INTRO",
    "Session updates": "UPD",
    "Entity IDs": "ENT",
    "Session-directed messages": "SDM",
    "Foreground and background work": "FG",
    "Background work": "BG",
    "Prompt lifecycle": "LIFE",
    "1. User message": "USER",
    "2. Prompt accepted": "ACC",
    "Insertion and ordering": "INS",
    "Prompts during active work": "ACTIVE",
    "Prompts that are never inserted": "REJ",
    "3. Agent reports output": "OUT",
    "Message IDs": "MSGID",
    "Session notices": "NOTICE",
    "Session compaction": "COMPACT",
    "Session usage updates": "USAGE",
    "4. Report completion": "DONE",
    "5. Tool invocation and status reporting": "TOOL",
    "6. Continue conversation": "CONT",
    "Stop reasons": "STOP",
    "Failures": "FAIL",
    "Session states": "STATE",
    "Initial state and synchronization": "SYNC",
    "State transitions": "TRANS",
    "Waiting for user action": "WAIT",
    "Work boundaries and local commands": "BOUND",
    "Lifecycle examples": "EX",
    "Cancellation": "CANCEL",
}
SECTIONS: Final[tuple[str, ...]] = tuple(SECTION_CODES)
CODE_SECTIONS: Final[dict[str, str]] = {code: heading for heading, code in SECTION_CODES.items()}


@dataclass(frozen=True, slots=True)
class Rule:
    """One catalogued requirement of the spec."""

    id: str
    level: str
    side: str
    paraphrase: str
    check: str
    reason: str = ""
    occurrences: tuple[int, ...] = ()
    eventually: bool = False

    def __post_init__(self) -> None:
        code, _, number = self.id.rpartition("-")
        if code not in CODE_SECTIONS or not re.fullmatch(r"\d\d", number):
            raise ValueError(f"{self.id}: malformed ID (CODE-NN, CODE of a section)")
        if self.level not in LEVELS or self.side not in SIDES or self.check not in CHECKS:
            raise ValueError(f"{self.id}: bad level, side or check")
        if (self.check in ("not-checkable", "unchecked")) != bool(self.reason):
            raise ValueError(f"{self.id}: a reason is required exactly when not checkable or unchecked")
        if self.level == "MAY" and self.check not in ("monitor", "model"):
            raise ValueError(f"{self.id}: a MAY is a permission, judged by monitor or model")

    @property
    def code(self) -> str:
        return self.id.rpartition("-")[0]

    @property
    def section(self) -> str:
        """The heading of its section, the one its ID's code names."""
        return CODE_SECTIONS[self.code]

    @property
    def informal(self) -> bool:
        """Stated without an uppercase keyword: it accounts for no keyword occurrence."""
        return not self.occurrences

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "section": self.section,
            **asdict(self),
            "occurrences": list(self.occurrences),
            "informal": self.informal,
        }


_KEYWORDS_SEEN = itertools.count(1)


def _r(
    rule_id: str,
    level: str,
    paraphrase: str,
    side: str = "",
    check: str = "model",
    reason: str = "",
    eventually: bool = False,
) -> Rule:
    """An entry of ``RULES``: by default a rule binding the Agent (the Client for a ``client-view``
    rule) that the model states, informal if ``INFORMAL_WORDING`` names it. Entries are written in
    spec order, so an entry that is not informal accounts for the next keyword occurrence (a test
    holds each to the keyword and section of its occurrence)."""
    return Rule(
        rule_id,
        level,
        side or ("client" if check == "client-view" else "agent"),
        " ".join(paraphrase.split()),
        check,
        reason,
        () if rule_id in INFORMAL_WORDING else (next(_KEYWORDS_SEEN),),
        eventually,
    )


_M, _MN, _S, _SN, _Y = "MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"
_C, _B = "client", "both"
_MON, _CV, _NC, _UN = "monitor", "client-view", "not-checkable", "unchecked"

_NOTICE_HAS_NO_ID = (
    "A notice has no ID, so a replayed notice cannot be told apart on the wire from a fresh live notice "
    "sent during the replay window."
)
_LOCAL_MARK_UNAPPLIED = (
    "Not checked yet: the simulated Client does not apply the optional local mark (a display hint)."
)

_LOWERCASE_REQUIRED = "'required' in lowercase: a message shape, a MUST."
# Not derivable from the spec text: it marks uppercase keywords only; which plain sentence binds is ours.
INFORMAL_WORDING: Final[dict[str, tuple[str, str]]] = {
    "INTRO-02": (
        "session/prompt lasts until the Agent inserts the user message",
        "JSON-RPC 2.0 (one response per request) is assumed, not restated; a prompt 'lasts until' "
        "its one answer: the protocol's request model, a MUST.",
    ),
    "ENT-04": (
        "An entity’s first update or chunk fixes its timeline position",
        "Stated as how an entity behaves; a Client that places it elsewhere shows another "
        "conversation: a MUST.",
    ),
    "SDM-01": (
        "Every session_message or session_message_chunk requires messageId",
        "'requires': a field the message must carry (a message shape), a MUST.",
    ),
    "SDM-02": ("Clients must not link views by equal IDs alone", "A lowercase 'must not'."),
    "SDM-03": ("Clients must not synthesize an incoming entry", "A lowercase 'must not'."),
    "BG-05": (
        "The Agent does not reopen a tool call that has a final status",
        "A plain statement beside the SHOULD and MAY sentences of its paragraph, restated by no "
        "keyword: reported at the level of its neighbours, SHOULD NOT (a warning).",
    ),
    "BG-08": (
        "the Client treats background work as unknown until a list is reported again",
        "A plain statement of what the Client does with an omitted list, the other half of the "
        "MUST that the Agent include it: a MUST.",
    ),
    "BG-17": (
        "Only background work is listed, and only once",
        "The heading of a bullet whose last sentence has the MUST NOT (BG-13): the list's "
        "definition, a MUST NOT.",
    ),
    "ACC-04": ("This field is a required, non-null string", _LOWERCASE_REQUIRED),
    "ACC-10": (
        "Clients must not infer the association from content or arrival order",
        "A lowercase 'must not'.",
    ),
    "ACC-13": (
        "if closing prevents insertion, the request receives -32800",
        "'receives': the answer closing gives, as cancellation's does (a MUST there).",
    ),
    "INS-01": (
        "It does not acknowledge a pending prompt’s insertion",
        "A plain statement of what running means; a Client that reads it otherwise misreports "
        "insertion: a MUST NOT.",
    ),
    "ACTIVE-02": (
        "Held prompts are inserted in the order they were received",
        "A plain statement of the Agent's ordering: a MUST.",
    ),
    "REJ-03": ("Request cancellation before insertion uses -32800", "'uses': the error code, a MUST."),
    "MSGID-02": (
        "Clients apply message updates and chunks in the order they are received",
        "A plain statement of how Clients apply updates: a MUST.",
    ),
    "NOTICE-02": ("title is required, non-null, non-empty", _LOWERCASE_REQUIRED),
    "COMPACT-02": (
        "compactionId and status are required and non-null on every compaction_update",
        _LOWERCASE_REQUIRED,
    ),
    "COMPACT-04": (
        "Clients initialize a first-seen compaction ID with status in_progress",
        "A plain statement of how Clients apply the first update: a MUST.",
    ),
    "USAGE-02": ("used and size are required and non-null", _LOWERCASE_REQUIRED),
    "TOOL-06": (
        "Clients append each tool_call_content_chunk to the current content",
        "A plain statement of how Clients apply chunks: a MUST.",
    ),
    "STATE-02": (
        "Clients must no longer present a prior running or requires_action as confirmed live activity",
        "A lowercase 'must'.",
    ),
    "STATE-06": (
        "Agents report unknown on actual loss of observability, not merely after silence",
        "A plain statement of when unknown is reported: a MUST.",
    ),
    "STATE-07": (
        "A subsequent running, requires_action, or idle replaces unknown for the same session",
        "With 'The unknown state can replace any state' (State transitions): what may follow, a MAY.",
    ),
    "TRANS-05": (
        "requires_action is only for blocked foreground work",
        "'is only for': the state's definition, a MUST.",
    ),
    "CANCEL-16": (
        "A session/prompt received after session/cancel is not cancelled by it",
        "A plain statement of the cancel's reach: a MUST NOT.",
    ),
    "CANCEL-17": (
        "the Agent gives those tool calls their final status",
        "No keyword of its own: what is owed before the cancelled idle is the idle's MUST "
        "(CANCEL-11: after all ongoing operations are aborted and pending updates sent), applied "
        "to the tool calls this sentence names; its level is that MUST's.",
    ),
    "CANCEL-18": (
        "Work in the latest background list is not covered and keeps running",
        "A plain statement of the cancel's reach: a MUST.",
    ),
    "EX-01": (
        "In URL mode, an accept response leaves requires_action unchanged",
        "The examples' plain statement; the same paragraph calls their start, resume and "
        "completion updates required: a MUST.",
    ),
    "EX-02": ("Late answers may arrive after work ends", "'may arrive': what a peer must expect, a MAY."),
    "TOOL-07": (
        "Client interactions such as elicitation remain subject to their own negotiated capabilities",
        "A plain statement of the capability negotiation: a MUST.",
    ),
    "CANCEL-19": (
        "For elicitation requests, see Elicitation Cancellation",
        "A pointer to the elicitation text, whose withdrawal is the SHOULD of the permission "
        "sentence beside it.",
    ),
    "CANCEL-20": (
        "Cancellation can finish without receiving answers to abandoned user-action requests",
        "'can finish': a permission, a MAY.",
    ),
}
"""Every informal entry (no uppercase keyword): rule ID -> (words of the spec sentence that
states it, why it has no keyword and why its level is the one the wording implies). The words
locate the sentence (``properties.speclines``); a test holds each to the spec text."""

RULES: Final[tuple[Rule, ...]] = (
    # -- INTRO ---------------------------------------------------------------------------------
    _r(
        "INTRO-01",
        _M,
        """A Client sends no session/prompt until the initialize handshake and
       the setup of that session have completed.""",
        side=_C,
    ),
    _r(
        "INTRO-02",
        _M,
        """Each request gets exactly one response: ACP runs on JSON-RPC 2.0, and
       a prompt lasts until its one answer (success after insertion, or an error before it).""",
        side=_B,
    ),
    # -- Session updates -----------------------------------------------------------------------
    _r(
        "UPD-01",
        _S,
        """A Client that meets an update variant it does not know keeps the raw
       payload intact whenever it stores, replays, proxies or forwards history; otherwise it skips
       the update or shows it in a generic way.""",
        side=_C,
        check=_NC,
        reason="About what a Client keeps in storage or passes to third parties; neither is visible on "
        "the wire between the Client and this Agent.",
    ),
    _r(
        "UPD-02",
        _SN,
        """Notices meant only for live delivery are left out of any replay of the
       session, even by a peer that kept them as unrecognised updates.""",
        side=_B,
        check=_NC,
        reason=_NOTICE_HAS_NO_ID,
    ),
    # -- Entity IDs ----------------------------------------------------------------------------
    _r(
        "ENT-01",
        _MN,
        """Within one session the Agent never gives an ID already used by an
       entity of some type to a second, different entity of that same type (seen on the wire as an
       ended entity that starts over under the same type and ID).""",
    ),
    _r(
        "ENT-02",
        _M,
        """The Client identifies every entity by the pair (entity type, ID); an
       update only touches the entity of its own type, never one of another type with an equal
       ID.""",
        check=_CV,
    ),
    _r(
        "ENT-03",
        _MN,
        """An update or chunk naming an ID the Client has not seen yet is not
       discarded: the Client creates the entity with default values and then applies it.""",
        check=_CV,
    ),
    _r(
        "ENT-04",
        _M,
        """The first update or chunk received for an entity fixes where it sits
       in the timeline; later updates patch it where it is (also after idle) and never move it, and
       a new ID does not close any other entity.""",
        check=_CV,
    ),
    # -- Session-directed messages -------------------------------------------------------------
    _r(
        "SDM-01",
        _M,
        """Each session_message and session_message_chunk update carries a
       messageId, scoped to the transcript named by the outer sessionId.""",
    ),
    _r(
        "SDM-02",
        _MN,
        """A Client links the outgoing and incoming views of an inter-session
       message only through the explicit senderMessageId / recipientMessageId references, never
       because two message IDs happen to be equal.""",
        check=_CV,
    ),
    _r(
        "SDM-03",
        _MN,
        """A Client neither fabricates an incoming entry from an outgoing one
       nor delivers the message content to the other session itself.""",
        check=_CV,
    ),
    _r(
        "SDM-04",
        _S,
        """The task a parent hands to a subagent (the first one included) is
       reported in the child's transcript as an incoming session_message whose senderSessionId is
       the parent.""",
        check=_NC,
        reason="Which message is the delegated task is known only inside the Agent; the wire does not "
        "mark it.",
    ),
    _r(
        "SDM-05",
        _SN,
        """The delegated task is not reported as a user_message in the child
       session: a user_message there that no session/prompt on that session accounts for is
       suspect.""",
        check=_MON,
    ),
    _r(
        "SDM-06",
        _MN,
        """When the Agent cannot tell who sent a message received by a child,
       it leaves senderSessionId out instead of presuming that the parent sent it.""",
        check=_NC,
        reason="Depends on what evidence the Agent holds about the sender, which is internal and not "
        "visible on the wire.",
    ),
    # -- Foreground and background work --------------------------------------------------------
    _r(
        "FG-01",
        _M,
        """Work is handled as foreground work whatever started it: a user
       prompt, or the Agent itself (pursuing a goal, continuing earlier work, reacting to a finished
       background task).""",
    ),
    _r(
        "FG-02",
        _M,
        """At the start of foreground work the Agent reports running, or
       requires_action when the work begins already blocked on the user.""",
    ),
    _r(
        "FG-03",
        _S,
        """While foreground work is blocked waiting for the user, the Agent
       reports requires_action.""",
        check=_NC,
        reason="Whether foreground work is blocked on the user is the Agent's knowledge: the wire shows "
        "requests, not what the work waits on (an open request alone does not block it); what the "
        "model's block row states is TRANS-05.",
    ),
    _r(
        "FG-04",
        _M,
        """After requires_action has been reported, the Agent reports running
       again as soon as foreground progress resumes.""",
    ),
    _r(
        "FG-05",
        _M,
        """At the end of foreground work the Agent reports idle, regardless of
       background activity that carries on.""",
        eventually=True,
    ),
    _r(
        "FG-06",
        _S,
        """The idle that ends foreground work names the stop reason that
       matches how it ended.""",
        check=_MON,
    ),
    _r(
        "FG-07",
        _S,
        """If a permission request or elicitation blocks foreground work, the
       Agent reports requires_action (a request for background activity alone leaves the state
       as it is).""",
        check=_UN,
        reason="Not checked yet: a monitor that sees a permission request for foreground work without "
        "requires_action.",
    ),
    # -- Background work -----------------------------------------------------------------------
    _r(
        "BG-01",
        _S,
        """As long as a terminal is listed as background work, the Agent keeps
       its output up to date whenever the process output is readable.""",
        check=_NC,
        reason="Depends on whether the Agent can read the process output and on timing (freshness); "
        "neither is a wire fact.",
    ),
    _r(
        "BG-02",
        _MN,
        """Missing or old terminal output is no evidence of liveness: the Client
       does not conclude that a terminal hung or exited for that reason.""",
        check=_CV,
    ),
    _r(
        "BG-03",
        _S,
        """A tool call whose work the Agent knows continues after it hands
       control back to the model stays non-final (pending, in_progress or paused) and is listed as
       background work.""",
        check=_UN,
        reason="Not checked yet: knowing that a tool call's work continues is the Agent's; a monitor could"
        " flag a final status followed by output.",
    ),
    _r(
        "BG-04",
        _Y,
        """For background work that has no tool call of its own the Agent may
       open a new tool call, titled after the work, and list it (announcing it first, even while
       idle).""",
        check=_MON,
    ),
    _r(
        "BG-05",
        _SN,
        """A tool call that has reached a final status is never reopened; new
       work on it gets a fresh tool call. (A custom status is allowed: the schema's ToolCallStatus
       reserves _-prefixed values for extensions and has Clients treat an unrecognised status as
       still in progress; whether a move between final statuses reopens is the reading
       final-status-change.)""",
    ),
    _r(
        "BG-06",
        _SN,
        """Housekeeping the Agent starts by itself (memory consolidation, for
       instance) is not put in the background list.""",
        check=_NC,
        reason="Whether a listed item is self-started housekeeping is the Agent's internal intent; "
        "nothing on the wire marks it.",
    ),
    _r(
        "BG-07",
        _M,
        """An Agent that reports background work includes the background field
       on every state_update of the session (whether that binds the state_updates before its first
       list is the reading state-updates-before-first-list).""",
    ),
    _r(
        "BG-08",
        _M,
        """A state_update whose background field is missing, null or malformed
       makes the Client consider background work unknown until a list is reported again.""",
        check=_CV,
    ),
    _r(
        "BG-09",
        _S,
        """When background work begins or finishes, the Agent sends the current
       state again with the updated list.""",
        eventually=True,
    ),
    _r(
        "BG-10",
        _M,
        """Before the first snapshot listing an item, the Agent has sent that
       item's own update (terminal_update, tool_call_update or subagent_update).""",
    ),
    _r(
        "BG-11",
        _M,
        """Before the snapshot that drops a terminal or tool call from the list,
       the Agent has sent the terminal's exitStatus or the tool call's final status.""",
    ),
    _r(
        "BG-12",
        _S,
        """If the Agent knows, when it drops a finished item, that the item
       starts new foreground work, it reports running no later than that snapshot.""",
        check=_NC,
        reason="Depends on when the Agent learned of the follow-up work, which is internal; learning "
        "later is allowed.",
    ),
    _r(
        "BG-13",
        _MN,
        """When a listed terminal is all that keeps a tool call alive, only the
       terminal appears in the list, not the tool call as well.""",
    ),
    _r(
        "BG-14",
        _S,
        """Before releasing resources of a quiet session, a Client holds off for a
       brief grace period once a snapshot has emptied the list, as a follow-up may still start.""",
        side=_C,
        check=_NC,
        reason="Needs timing (a grace period) and concerns the Client's resource handling, not the wire.",
    ),
    _r(
        "BG-15",
        _Y,
        """Once idle, a Client may regard unfinished tool calls and
       still-running terminals that are missing from the latest reported list as abandoned.""",
        side=_C,
    ),
    _r(
        "BG-16",
        _MN,
        """With no background list reported, the Client regards nothing as
       abandoned.""",
        check=_CV,
    ),
    _r(
        "BG-17",
        _MN,
        """A background list names only work running apart from the
       foreground, each item once: no item twice in one snapshot, and no item that has already
       finished (an exited terminal, a tool call with a final status, a detached child reported
       idle with an empty list of its own: nothing of it runs), whether newly listed or named
       again by a later snapshot.""",
    ),
    # -- 1. User message -----------------------------------------------------------------------
    _r(
        "USER-01",
        _MN,
        """A Client never sends a session/prompt whose prompt array is
       empty.""",
        side=_C,
    ),
    _r(
        "USER-02",
        _Y,
        """An Agent may answer an empty prompt with error -32602 and not
       insert it.""",
        check=_MON,
    ),
    _r(
        "USER-03",
        _M,
        """A Client only sends content types that the prompt capabilities
       agreed at initialization allow.""",
        side=_C,
    ),
    _r(
        "USER-04",
        _M,
        """A prompt with content of a type outside the baseline set (text and
       resource_link) and not advertised, or of a type the Agent cannot handle, is refused with
       -32602 and never inserted.""",
    ),
    # -- 2. Prompt accepted --------------------------------------------------------------------
    _r(
        "ACC-01",
        _M,
        """Once the user message is inserted, the Agent answers the prompt
       successfully, without waiting for the foreground work to finish (so an inserted prompt left
       unanswered is a breach at the end: the response is owed from the insertion on).""",
        eventually=True,
    ),
    _r(
        "ACC-02",
        _MN,
        """The Agent does not send the successful prompt response before the
       message has been inserted.""",
    ),
    _r(
        "ACC-03",
        _MN,
        """After insertion the prompt is never answered with an error, even if
       the work fails or the request is cancelled before the response goes out.""",
    ),
    _r(
        "ACC-04",
        _M,
        """A successful prompt response carries messageId as a non-null string;
       leaving it out or sending null is invalid.""",
    ),
    _r(
        "ACC-05",
        _M,
        """The inserted user message is reported to the Client, either with a
       user_message carrying the full content or with user_message_chunk updates.""",
        eventually=True,
    ),
    _r(
        "ACC-06",
        _M,
        """Every update about that user message uses the messageId returned in
       the prompt response.""",
        eventually=True,
    ),
    _r(
        "ACC-07",
        _MN,
        """No update about the user message is sent before the message is
       inserted.""",
    ),
    _r(
        "ACC-08",
        _M,
        """A Client copes with the user-message updates arriving either before
       or after the prompt response, and merges them with the existing message instead of making a
       duplicate.""",
        check=_CV,
    ),
    _r(
        "ACC-09",
        _M,
        """Two distinct inserted submissions get two distinct message IDs, even
       when their content is the same.""",
    ),
    _r(
        "ACC-10",
        _MN,
        """A Client ties a submission to its message only through the response
       (JSON-RPC id to sessionId and messageId), never by comparing content or by arrival order.""",
        check=_CV,
    ),
    _r(
        "ACC-11",
        _M,
        """When a retained user message is replayed, it keeps the message ID it
       was inserted with.""",
    ),
    _r(
        "ACC-12",
        _MN,
        """A Client draws no ordering conclusion between the prompt response and
       the session updates (user-message report, output, even the closing idle).""",
        check=_CV,
    ),
    _r(
        "ACC-13",
        _M,
        """When session/close stops a prompt before insertion, that prompt gets
       error -32800; a prompt already inserted gets its successful messageId response.""",
    ),
    # -- Insertion and ordering ----------------------------------------------------------------
    _r(
        "INS-01",
        _MN,
        """A Client does not read a running report as a sign that a pending
       prompt has been inserted; running may come before insertion and before the prompt
       response.""",
        check=_CV,
    ),
    # -- Prompts during active work ------------------------------------------------------------
    _r(
        "ACTIVE-01",
        _Y,
        """A Client may send session/prompt in any state, running and
       requires_action included.""",
        side=_C,
        check=_MON,
    ),
    _r(
        "ACTIVE-02",
        _M,
        """Prompts the Agent holds back are inserted in the order in which it
       received them.""",
    ),
    _r(
        "ACTIVE-03",
        _MN,
        """A prompt is never rejected merely because foreground work is in
       progress.""",
    ),
    # -- Prompts that are never inserted -------------------------------------------------------
    _r(
        "REJ-01",
        _M,
        """A prompt rejected before insertion (by a hook, an early failure, ...)
       receives a JSON-RPC error response; together with ACC-01 every prompt is eventually
       answered.""",
        eventually=True,
    ),
    _r("REJ-02", _MN, """A submission that was rejected produces no user-message updates."""),
    _r(
        "REJ-03",
        _M,
        """A prompt withdrawn with $/cancel_request before insertion is answered
       with error -32800.""",
    ),
    # -- 3. Agent reports output ---------------------------------------------------------------
    _r(
        "OUT-01",
        _M,
        """When foreground work begins, the Agent reports an active state
       (normally running; requires_action if it begins blocked).""",
    ),
    _r(
        "OUT-02",
        _M,
        """Once work blocked under requires_action makes progress again, running
       is reported.""",
    ),
    _r("OUT-03", _Y, """The model's output may be text, tool calls or a mix of both.""", check=_MON),
    # -- Message IDs ---------------------------------------------------------------------------
    _r(
        "MSGID-01",
        _M,
        """Every user, agent and thought message update and chunk carries an
       opaque messageId.""",
    ),
    _r(
        "MSGID-02",
        _M,
        """Per messageId, in receive order: an update without content keeps the
       content, an update with content replaces everything so far, [] or null clears it, and a chunk
       appends to the current content.""",
        check=_CV,
    ),
    # -- Session notices -----------------------------------------------------------------------
    _r(
        "NOTICE-01",
        _Y,
        """The Agent may send a live notice for the user whenever the
       session exists, also outside prompt handling.""",
        check=_MON,
    ),
    _r(
        "NOTICE-02",
        _M,
        """A notice has a non-null severity and a non-null, non-empty
       title.""",
    ),
    _r("NOTICE-03", _Y, """A Client may disregard notices.""", side=_C),
    _r(
        "NOTICE-04",
        _M,
        """The Agent acts as if any notice might never have been delivered,
       shown or read.""",
        check=_NC,
        reason="About the Agent's internal reliance on delivery; a notice has no reply, so no wire "
        "message reveals such reliance.",
    ),
    _r(
        "NOTICE-05",
        _MN,
        """Nothing needed for protocol correctness, authorization, a user
       action, task completion or reporting a fatal error is conveyed only through a notice.""",
        check=_NC,
        reason="Needs a judgement of what the free-text notice content means and whether it is needed "
        "elsewhere.",
    ),
    _r(
        "NOTICE-06",
        _SN,
        """Notices are not part of what a session replay sends.""",
        check=_NC,
        reason=_NOTICE_HAS_NO_ID,
    ),
    # -- Session compaction --------------------------------------------------------------------
    _r(
        "COMPACT-01",
        _Y,
        """The Agent may report a context compaction as a single persistent
       timeline entity addressed by its ID.""",
        check=_MON,
    ),
    _r(
        "COMPACT-02",
        _M,
        """compactionId and status are present and non-null on every
       compaction_update; compactionId and content are present and non-null on every
       compaction_summary_chunk.""",
    ),
    _r(
        "COMPACT-03",
        _MN,
        """A compaction ID is never used again for a different
       compaction.""",
    ),
    _r(
        "COMPACT-04",
        _M,
        """Clients start a first-seen compaction as in_progress with unset
       fields, then apply updates and chunks in receive order per ID (patch fields, summary
       replaces, chunks append, null or [] clears).""",
        check=_CV,
    ),
    _r("COMPACT-05", _M, """A reported compaction that ends is given a terminal status.""", eventually=True),
    _r(
        "COMPACT-06",
        _S,
        """The summary faithfully reflects the retained summary the user may
       see, with no internal prompt framing or hidden instructions.""",
        check=_NC,
        reason="Needs a judgement of the summary text against the Agent's internal context.",
    ),
    _r(
        "COMPACT-07",
        _S,
        """The summary is left out when no unencrypted one exists or when
       showing it would expose context the user could not already see.""",
        check=_NC,
        reason="Depends on the Agent's internal knowledge of what is encrypted or user-visible.",
    ),
    # -- Session usage updates -----------------------------------------------------------------
    _r(
        "USAGE-01",
        _Y,
        """The Agent may send usage_update with the current context size and
       the cumulative cost.""",
        check=_MON,
    ),
    _r(
        "USAGE-02",
        _M,
        """A usage_update has non-null used and size; a cost value, when
       present, has both amount and currency.""",
    ),
    # -- 4. Report completion ------------------------------------------------------------------
    _r(
        "DONE-01",
        _M,
        """The end of foreground work is reported with an idle
       state_update.""",
        eventually=True,
    ),
    _r("DONE-02", _S, """That idle state_update names the fitting stop reason.""", check=_MON),
    _r(
        "DONE-03",
        _M,
        """All updates still owed for the foreground work that ended are sent
       before its idle update (background activity may keep emitting afterwards).""",
    ),
    _r(
        "DONE-04",
        _Y,
        """The Agent may end foreground work at any moment by sending an idle
       state_update.""",
        check=_MON,
    ),
    _r(
        "DONE-05",
        _S,
        """When the Agent ends work that way, it gives the matching stop
       reason.""",
        check=_MON,
    ),
    # -- 5. Tool invocation and status reporting -----------------------------------------------
    _r(
        "TOOL-01",
        _Y,
        """Before running a tool, the Agent may ask the Client for permission
       with session/request_permission.""",
        check=_MON,
    ),
    _r(
        "TOOL-02",
        _S,
        """While foreground work waits on a permission answer or another user
       action, the Agent reports requires_action.""",
        check=_UN,
        reason="Not checked yet: the same check as FG-07 (a monitor of permission requests for foreground "
        "work).",
    ),
    _r(
        "TOOL-03",
        _M,
        """Having reported requires_action, the Agent later reports running when
       the work moves on again, or idle when it finishes without moving on.""",
    ),
    _r(
        "TOOL-04",
        _S,
        """After permission is granted (when one was needed), the Agent runs
       the tool and marks it in_progress with a tool_call_update.""",
    ),
    _r(
        "TOOL-05",
        _Y,
        """While a tool runs, the Agent may send further progress updates
       for it.""",
        check=_MON,
    ),
    _r(
        "TOOL-06",
        _M,
        """Clients append each tool_call_content_chunk to the tool call's current
       content; a later tool_call_update that carries content replaces what was accumulated.""",
        check=_CV,
    ),
    _r(
        "TOOL-07",
        _M,
        """Elicitation, like other Client interactions, stays within its own
       negotiated capabilities: the Agent elicits only in a mode the Client advertised in
       its latest successful initialize (form or URL, or a custom mode where its elicitation
       capabilities carry a custom capability in _meta).""",
    ),
    # -- Stop reasons --------------------------------------------------------------------------
    _r(
        "STOP-01",
        _S,
        """When stopping foreground work, the Agent puts the matching
       StopReason on the idle state_update.""",
        check=_MON,
    ),
    _r(
        "STOP-02",
        _M,
        """A Client treats every idle as ending foreground work, whether its stop
       reason is absent, null, malformed or unrecognised.""",
        check=_CV,
    ),
    _r("STOP-03", _M, """A custom stop reason starts with an underscore."""),
    # -- Failures ------------------------------------------------------------------------------
    _r(
        "FAIL-01",
        _M,
        """Foreground work that ends in a failure (also before insertion or
       before any output) is closed with an idle report.""",
        eventually=True,
    ),
    _r(
        "FAIL-02",
        _S,
        """Such an idle uses the error stop reason.""",
        check=_UN,
        reason="Not checked yet: telling which idle ends a failure is the Agent's; a monitor could use an"
        " error field without the error stop reason.",
    ),
    _r(
        "FAIL-03",
        _S,
        """An idle with the error stop reason carries the error field (a
       JSON-RPC error object) describing the failure.""",
        check=_MON,
    ),
    _r(
        "FAIL-04",
        _S,
        """Before reporting the failure, every tool call left unfinished by the
       failed work gets a terminal status (failed when it did not complete); listed background work
       is exempt.""",
    ),
    # -- Session states ------------------------------------------------------------------------
    _r(
        "STATE-01",
        _S,
        """For an exposed subagent, the parent's subagent_update.state mirrors
       the snapshot the child reports about itself.""",
        check=_MON,
        eventually=True,
    ),
    _r(
        "STATE-02",
        _MN,
        """After unknown, a Client stops showing an earlier running or
       requires_action as confirmed live activity (it may keep it as context).""",
        check=_CV,
    ),
    _r(
        "STATE-03",
        _Y,
        """While the Agent reports idle, background activity may go on and
       send other session/update notifications without changing the state.""",
        check=_MON,
    ),
    _r(
        "STATE-04",
        _M,
        """Unless the Client advertised support for custom or future states,
       the Agent still reports running, requires_action and idle wherever the transitions call for
       them. (The text settles that a custom state may be sent unadvertised, beside the standard
       one; it defines no advertisement: which part of the Client's capabilities counts is the
       reading custom-state-advertisement; the simulated Client's _meta.customStates is the
       model's own convention.)""",
    ),
    _r(
        "STATE-05",
        _MN,
        """A Client receiving a state it does not recognise neither treats it
       as idle nor shows the previous state as confirmed; until a known state comes it displays a
       generic busy indicator.""",
        check=_CV,
    ),
    _r(
        "STATE-06",
        _M,
        """The Agent reports unknown only when it has really lost sight of the
       foreground activity, not because nothing was heard for a while.""",
        check=_NC,
        reason="Not visible on the wire: whether the Agent could still observe its work is its own "
        "knowledge.",
    ),
    _r(
        "STATE-07",
        _Y,
        """unknown may replace any state, and a later running, requires_action
       or idle replaces unknown (or a state the Client does not recognise) for the session, as a
       snapshot: no work started or ended while it was not observable.""",
    ),
    # -- Initial state and synchronization -----------------------------------------------------
    _r(
        "SYNC-01",
        _MN,
        """When the session/new response arrives, the Client keeps any state
       that was already reported and does not reset it.""",
        check=_CV,
    ),
    _r(
        "SYNC-02",
        _M,
        """After session/resume the Agent sends a foreground state snapshot,
       after any replay it was asked for and before the successful resume response, even with no
       replay.""",
    ),
    _r(
        "SYNC-03",
        _M,
        """The Client relies on that snapshot, not on the response or the
       replayed content, to know the current activity.""",
        check=_CV,
    ),
    # -- State transitions ---------------------------------------------------------------------
    _r("TRANS-01", _Y, """The Agent may send the current state snapshot again.""", check=_MON),
    _r(
        "TRANS-02",
        _M,
        """Clients apply repeated snapshots idempotently: a repeat starts no
       work, ends no further work and adds no usage.""",
        check=_CV,
    ),
    _r("TRANS-03", _S, """An idle transition that ends work gives its stop reason.""", check=_MON),
    _r(
        "TRANS-04",
        _M,
        """An idle that confirms cancellation of foreground work uses the
       cancelled stop reason.""",
    ),
    _r(
        "TRANS-05",
        _M,
        """requires_action is reported only for foreground work blocked on the
       user: an open request alone does not justify it, and work that starts blocked may report it
       without a running first (from running, work blocks; nothing else moves to it but a start).""",
    ),
    # -- Waiting for user action ---------------------------------------------------------------
    _r(
        "WAIT-01",
        _M,
        """After requires_action, running follows as soon as work progresses
       again (even while other requests stay open), or idle when the work stops without that.""",
    ),
    _r(
        "WAIT-02",
        _S,
        """Answers that arrive for work that has already ended are ignored, not
       used to restart that work.""",
        check=_NC,
        reason="Which work a request belongs to is the Agent's knowledge: at an idle that ends work "
        "without a cancellation, a request still open may be of background work that carries on (a "
        "request of independent background activity leaves the session idle, and a tool call that "
        "changes status after the idle is background work under the reading "
        "tool-updates-after-idle), and an elicitation tied to no tool call moves nothing on the wire "
        "when used (work after it may be the Agent's own). After a cancellation the latest background "
        "list decides what the work was: that case is checked as CANCEL-06 (permission requests) and "
        "CANCEL-10 (elicitations).",
    ),
    # -- Work boundaries and local commands ----------------------------------------------------
    _r(
        "BOUND-01",
        _M,
        """Once no foreground activity is left, the Agent reports idle, so
       consecutive turns are separated by an idle boundary.""",
        eventually=True,
    ),
    _r(
        "BOUND-02",
        _M,
        """Every accepted prompt, a local slash command without model work
       included, goes through the foreground lifecycle (active state, then idle).""",
        eventually=True,
    ),
    _r(
        "BOUND-03",
        _S,
        """A local command handled from idle without waiting on the user
       reports running then idle, with end_turn when it succeeds.""",
        check=_UN,
        reason="Not checked yet: a local command is not marked on the wire; no check of its own.",
    ),
    # -- Lifecycle examples --------------------------------------------------------------------
    _r(
        "EX-01",
        _M,
        """The examples' required updates hold alike for permissions and for
       elicitations in either mode; in URL mode, accepting leaves the requires_action as it is
       while the user finishes the interaction outside the Client, and the Agent reports that
       completion (elicitation/complete) once, for a URL elicitation it has not withdrawn, never
       for a form. The text does not order the completion and the Client's answer: either may
       cross the other on the wire.""",
    ),
    _r(
        "EX-02",
        _Y,
        """Late answers to a permission request or an elicitation may arrive
       after the work ends, even during a later foreground workflow.""",
        side=_C,
        check=_MON,
    ),
    # -- Cancellation --------------------------------------------------------------------------
    _r(
        "CANCEL-01",
        _Y,
        """A Client may send session/cancel at any time to cancel the
       session's foreground work.""",
        side=_C,
        check=_MON,
    ),
    _r(
        "CANCEL-02",
        _M,
        """Prompts received before session/cancel and not yet inserted are
       answered with error -32800.""",
    ),
    _r(
        "CANCEL-03",
        _Y,
        """On cancellation the Agent may also stop background activity that
       it does not list.""",
        check=_MON,
    ),
    _r(
        "CANCEL-04",
        _S,
        """On sending session/cancel, the Client marks the unfinished tool
       calls of the current work as cancelled in its own view right away.""",
        side=_C,
        check=_UN,
        reason=_LOCAL_MARK_UNAPPLIED,
    ),
    _r(
        "CANCEL-05",
        _S,
        """That local marking skips tool calls that appear in the most recent
       background list or that refer to a listed terminal.""",
        side=_C,
        check=_UN,
        reason=_LOCAL_MARK_UNAPPLIED,
    ),
    _r(
        "CANCEL-06",
        _M,
        """When stopping cancelled work, the Agent stops waiting on that
       work's open permission requests and treats them as refused.""",
    ),
    _r(
        "CANCEL-07",
        _S,
        """The Agent withdraws each of those open permission requests with
       $/cancel_request so the Client can dismiss them.""",
    ),
    _r(
        "CANCEL-08",
        _Y,
        """A Client may reply with the cancelled outcome to a request it can tie
       to the cancelled work, without first getting a $/cancel_request.""",
        side=_C,
        check=_MON,
    ),
    _r(
        "CANCEL-09",
        _S,
        """On session/cancel the Agent halts the cancelled work's model
       requests and tool invocations as quickly as it can.""",
        check=_NC,
        reason="About internal behaviour and timing (how soon model requests and tools are halted); "
        "not visible on the wire.",
    ),
    _r(
        "CANCEL-10",
        _S,
        """After cancellation completes, late answers or external URL
       completions are ignored rather than used to resume the cancelled work.""",
    ),
    _r(
        "CANCEL-11",
        _M,
        """When cancellation hits active foreground work, the Agent aborts it,
       flushes the updates still owed, and then sends idle with the cancelled stop reason.""",
        eventually=True,
    ),
    _r(
        "CANCEL-12",
        _M,
        """Exceptions raised by aborting operations are caught and reported
       as the cancelled stop reason, not as error.""",
    ),
    _r(
        "CANCEL-13",
        _Y,
        """After receiving session/cancel the Agent may still send content
       and tool call updates.""",
        check=_MON,
    ),
    _r(
        "CANCEL-14",
        _M,
        """Any such updates are sent before the idle state_update that
       reports the cancellation.""",
    ),
    _r(
        "CANCEL-15",
        _S,
        """The Client keeps accepting tool call updates that arrive after it
       sent session/cancel.""",
        side=_C,
        check=_UN,
        reason="Not checked yet: a client-view check that tool call updates after session/cancel are "
        "applied.",
    ),
    _r(
        "CANCEL-16",
        _MN,
        """A session/prompt received after a session/cancel is not cancelled
       by it (answering it -32800 because of that cancel breaks this).""",
    ),
    _r(
        "CANCEL-17",
        _M,
        """The Agent itself gives every unfinished tool call of the cancelled
       foreground work its final status (the Client's own cancelled mark is only a display hint
       that those updates replace), before the idle that confirms the cancellation: that idle
       comes after every ongoing operation is aborted and the pending updates are sent (the
       idle's own MUST, CANCEL-11, is this rule's level). Tool calls in the latest background
       list, or running a listed terminal, do not belong to the cancelled work.""",
        eventually=True,
    ),
    _r(
        "CANCEL-18",
        _M,
        """A session/cancel does not cover the work in the latest background
       list: that work keeps running.""",
        check=_NC,
        reason="Not visible on the wire: a listed item that ends after the cancel may have ended on its own.",
    ),
    _r(
        "CANCEL-19",
        _S,
        """For elicitation requests, see Elicitation Cancellation: the
       elicitations cancelled work no longer needs are withdrawn.""",
    ),
    _r(
        "CANCEL-20",
        _Y,
        """Cancellation can finish without receiving answers to the abandoned
       user-action requests: the cancelled idle need not wait for the answers to the cancelled
       work's permission requests and elicitations.""",
        check=_MON,
    ),
)

RULES_BY_ID: Final[dict[str, Rule]] = {rule.id: rule for rule in RULES}
if len(RULES_BY_ID) != len(RULES):  # pragma: no cover - guarded by tests
    raise ValueError("duplicate rule IDs in the catalogue")

RESTATED: Final[dict[str, tuple[str, ...]]] = {
    # the three obligations a declaration between machines judges: its rule and the IDs it restates
    "active-state-on-start": bw.ACTIVE_ON_START.statements,
    "running-after-requires-action": bw.RUNNING_ON_PROGRESS.statements,
    "idle-when-work-ends": bw.IDLE_ENDS_WORK.statements,
    "stop-reason-on-ending-idle": ("FG-06", "DONE-02", "DONE-05", "STOP-01", "TRANS-03"),
    "requires-action-when-blocked": ("FG-03", "FG-07", "TOOL-02"),
    "cancelled-stop-reason": ("TRANS-04", "CANCEL-11", "CANCEL-12"),
    "notices-not-replayed": ("UPD-02", "NOTICE-06"),
    "ignore-answers-for-ended-work": ("WAIT-02", "CANCEL-10"),
}
"""One obligation stated in several sections, each statement with its own ID. A checker that
judges the obligation once should report (or count as exercised) every ID of its group."""

_KEYWORD = re.compile(r"\b(MUST\s+NOT|MUST|SHOULD\s+NOT|SHOULD|MAY|REQUIRED)\b")
_HEADING_MAX = 80


def headings(spec_text: str) -> list[tuple[int, str]]:
    """Headings of the spec as (0-based line index, text): a short line between blank lines (or the
    file's edges) that does not end like a sentence."""
    padded = ["", *(line.strip() for line in spec_text.splitlines()), ""]
    return [
        (i - 1, text)
        for i, text in enumerate(padded)
        if text and not padded[i - 1] and not padded[i + 1] and len(text) <= _HEADING_MAX
        if not text.endswith((".", ":", "!", "?"))
    ]


def keyword_occurrences(spec_text: str) -> list[tuple[int, str, str]]:
    """Every uppercase normative keyword token of the spec, as (1-based global index, keyword,
    section heading). ``MUST NOT`` and ``SHOULD NOT`` count as one token; text before the first
    heading belongs to ``INTRO``."""
    starts = dict(headings(spec_text))
    section = INTRO
    out: list[tuple[int, str, str]] = []
    for i, line in enumerate(spec_text.splitlines()):
        section = starts.get(i, section)
        for match in _KEYWORD.finditer(line):
            out.append((len(out) + 1, " ".join(match.group(1).split()), section))
    return out


def normalise_level(level: str) -> str:
    """Canonical spelling of a level ("must not" -> "MUST NOT"); ValueError when unknown."""
    canon = " ".join(level.split()).upper()
    if canon not in LEVELS:
        raise ValueError(f"unknown level {level!r} (expected one of {', '.join(LEVELS)})")
    return canon


def find_section(name: str) -> str:
    """The heading named by ``name`` (a heading or a code, any case); ValueError when none."""
    wanted = " ".join(name.split()).casefold()
    for heading, code in SECTION_CODES.items():
        if wanted in (heading.casefold(), code.casefold()):
            return heading
    raise ValueError(f"no section {name!r} (give a heading or a code such as ACC)")


def rules_for(level: str | None = None, section: str | None = None) -> tuple[Rule, ...]:
    """Catalogue entries filtered by level and section (either may be a code), in spec order."""
    want_level = normalise_level(level) if level is not None else None
    want_section = find_section(section) if section is not None else None
    return tuple(
        rule
        for rule in RULES
        if (want_level is None or rule.level == want_level)
        and (want_section is None or rule.section == want_section)
    )


# -- freedoms: the peer moves that take each permission ---------------------------------------


@dataclass(frozen=True, slots=True)
class Freedom:
    """How the simulated peers take a MAY rule (a permission): the moves that take it, or why
    none does. ``acp-model explore`` counts those moves (``coverage.<mode>.freedoms``) and warns
    when a run that could take a freedom never did."""

    takers: tuple[str, ...] = ()
    """Peer moves, named as explore counts them (``actor.name``: ``agent.say``, ``client.cancel``,
    ``net.to_client``), each optionally narrowed to a context of the acting peer's state or the
    move's argument (``agent.say[cancelling]``; the names are
    ``simulator.explore.coverage.CONTEXTS``). The freedom's count is the sum of its takers'."""
    needs: tuple[str, ...] = ()
    """What a run needs to be able to take it: each entry a ``Config`` feature, a ``Config``
    budget (met when above 0) or a rule ID (met when a seeded bug meant to break it is on: the
    other peer's deviation that opens the freedom), or several joined by ``|`` (any of them). A
    run none of whose configurations meets them all is not warned about the freedom."""
    why: str = ""
    """With no takers: in one line, why no peer move takes it."""


def _moves(actor: str, names: str, context: str = "") -> tuple[str, ...]:
    """``Freedom.takers``: the moves ``names`` (space-separated) of ``actor``, in ``context``."""
    return tuple(f"{actor}.{name}" + (f"[{context}]" if context else "") for name in names.split())


FREEDOMS: Final[dict[str, Freedom]] = {
    "BG-04": Freedom(_moves("agent", "bg_start", "tool_call"), needs=("bg_tool|bg_idle", "background")),
    "BG-15": Freedom(why="a Client's view of unlisted work once idle, no message: the ClientView takes it"),
    "USER-02": Freedom(_moves("agent", "reject", "empty"), needs=("USER-01",)),
    "ACTIVE-01": Freedom(_moves("client", "prompt"), needs=("prompts",)),
    "OUT-03": Freedom(_moves("agent", "say think tool"), needs=("outputs|tool_calls",)),
    "NOTICE-01": Freedom(_moves("agent", "notice"), needs=("notice", "notices")),
    "NOTICE-03": Freedom(why="a Client ignoring notices shows nothing on the wire: a choice of its view"),
    "COMPACT-01": Freedom(_moves("agent", "compact_start"), needs=("compaction", "compactions")),
    "USAGE-01": Freedom(_moves("agent", "usage"), needs=("usage", "usages")),
    "DONE-04": Freedom(_moves("agent", "end stop end_bare_error end_error_carrying user_stop")),
    "TOOL-01": Freedom(
        _moves("agent", "tool_ask tool_ask_running bg_ask"), needs=("permission", "permissions")
    ),
    "TOOL-05": Freedom(_moves("agent", "tool_run tool_content tool_status"), needs=("tool_calls",)),
    "STATE-03": Freedom(
        _moves(
            "agent",
            "bg_start bg_finish bg_fail bg_list bg_unlist bg_rerun bg_ask terminal_output child_chunk "
            "carried_done",
            "idle",
        ),
        needs=("background", "terminal|bg_tool|subagent|bg_idle"),
    ),
    "STATE-07": Freedom(_moves("agent", "lose restore"), needs=("unknown", "losses")),
    # a snapshot repeated bare or with news (the list of background work, the last stop reason)
    "TRANS-01": Freedom(
        _moves("agent", "repeat restate_idle bg_list bg_unlist")
        + _moves("agent", "resync replay", "again")
        + _moves("agent", "replay", "early")
    ),
    "EX-02": Freedom(
        _moves("client", "allow deny stop dismiss fail_answer elicit_accept elicit_decline elicit_cancel"),
        needs=("permission|elicitation",),
    ),
    "CANCEL-01": Freedom(_moves("client", "cancel"), needs=("cancel", "cancels")),
    "CANCEL-03": Freedom(_moves("agent", "bg_stop"), needs=("stop_unlisted", "cancel", "cancels")),
    "CANCEL-08": Freedom(_moves("client", "dismiss"), needs=("permission", "cancel", "cancels")),
    "CANCEL-13": Freedom(
        _moves("agent", "say think plan tool_run tool_done tool_status tool_content", "cancelling"),
        needs=("cancel", "cancels", "outputs|tool_calls|cancel_output"),
    ),
    "CANCEL-20": Freedom(_moves("agent", "end", "unanswered"), needs=("cancel", "permission|elicitation")),
    # rules of other levels whose sentence grants a freedom beside what it binds
    "ACC-11": Freedom(_moves("agent", "user_message", "live_only"), needs=("live_only",)),
    "ACC-13": Freedom(_moves("agent", "answer", "closed"), needs=("answer_after_close", "close", "closes")),
    "ENT-01": Freedom(_moves("agent", "tool", "shared_id"), needs=("shared_ids", "tool_calls", "outputs")),
    "BG-03": Freedom(
        _moves("agent", "tool_status", "background"), needs=("bg_pause", "bg_tool", "background")
    ),
    "COMPACT-07": Freedom(
        _moves("agent", "compact_start compact_end", "bare"),
        needs=("compact_once", "compaction", "compactions"),
    ),
    "MSGID-02": Freedom(_moves("agent", "clear"), needs=("clear", "outputs")),
    "NOTICE-02": Freedom(_moves("agent", "notice", "detailed"), needs=("notice_detail", "notice", "notices")),
}
"""Per MAY rule of the catalogue (every one: a test holds it total), the peer moves that take it;
and per rule of another level whose spec sentence also grants a freedom, the moves that take
that freedom: ACC-11 (an inserted user message not retained, so a replay omits it: "If the
message is retained and replayed", "replay may omit live-only or discarded messages"), ACC-13
(an inserted prompt's success response after the close response: "Prompt responses need not
precede the close response"), BG-03 (a background tool call kept pending or paused, not only
in_progress), ENT-01 (an entity under an ID one of another type has: "the same string can
identify one entity of each type"), COMPACT-07 (a compaction completed with no summary: "Summary
content is also optional"), MSGID-02 (a message's content cleared with [] or null), NOTICE-02 (a
notice of any severity of the open enum, its description given or null). A new peer move that
takes a freedom is added to its entry's ``takers``. A Client's takers are all its moves of the
kind: the Client does not follow the foreground state, so it sends a prompt, a cancel or an
answer whatever the state (running, after the work ended)."""
