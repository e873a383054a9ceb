"""Readings: every place where the spec text can be read more than one way, named and switchable.

Owns: the ``Reading`` catalogue (``READINGS``), its JSON form (``acp-model readings --json``),
and the resolution of ``NAME=ALTERNATIVE`` choices into the full mapping of readings in force
(``resolve``; every reading absent from the choices takes its default). A monitor never decides
an ambiguity silently: it asks its ``MonitorSet`` which alternative is in force
(``MonitorSet.reading``) and names the reading on every finding whose verdict depends on it.

Each reading cites the spec by section heading and by line number in
``../shared/spec/acp-v2-prompt-lifecycle.txt`` (one paragraph per line); ``spec_words`` holds, for
each of those lines, a few words the line contains, so a test can prove the numbers still point
at the sentences in tension. The questions and meanings are our own words.

Defaults: argued from the spec text (``why_default`` quotes the sentences that decide it), never
from what the monitors checked before.

Readings in force: ``MonitorSet(readings=...)`` and ``ClientView(readings=...)`` take them
explicitly (without them, every reading takes its default); the simulator carries them in its
``Config`` to every monitor set, client view and simulated peer it builds, worker processes
included. Nothing is read from the process's environment: a user's environment never changes
a verdict.

Who a reading concerns (``affects``): ``checker`` when only the judgement of a transcript
depends on it; ``both`` when the alternatives also give a peer different freedoms (what the
simulated Agent or Client may do): exploring under a reading then explores that reading's
protocol.

Must not know: monitors, findings, files, the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from model import background, clientview, prompt, toolcall


class ReadingError(ValueError):
    """An unknown reading or alternative, or a malformed ``NAME=ALTERNATIVE``: one line."""


@dataclass(frozen=True, slots=True)
class Alternative:
    name: str
    meaning: str


@dataclass(frozen=True, slots=True)
class Reading:
    name: str
    question: str
    """One line: the question the spec leaves open."""
    sections: tuple[str, ...]
    spec_lines: tuple[int, ...]
    """1-based line numbers in the spec text of the sentences in tension."""
    spec_words: tuple[str, ...]
    """Per line of ``spec_lines``: words that line contains (checked by a test)."""
    alternatives: tuple[Alternative, ...]
    default: str
    why_default: str
    rules: tuple[str, ...]
    """Rule IDs whose verdicts depend on the alternative in force."""
    peers: str = ""
    """What the simulated peer may do under each alternative (one line; empty: the alternatives
    give the peers the same freedoms)."""
    peers_same: str = ""
    """Without ``peers``: why the simulated peers take no alternative's freedom where an Agent
    could (one line; empty: the alternatives give a peer nothing to do differently)."""

    @property
    def affects(self) -> str:
        """``checker`` (only the judgement depends on it) or ``both`` (the peers' freedoms differ
        between the alternatives too: it has ``peers``)."""
        return "both" if self.peers else "checker"

    def alternative_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.alternatives)

    def to_json(self) -> dict[str, Any]:
        """Every field but ``spec_words`` (tuples as lists), and ``affects`` before ``peers``."""
        data = {
            k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if k != "spec_words"
        }
        peers = {k: data.pop(k) for k in ("peers", "peers_same")}
        return {**data, "affects": self.affects, **peers}


def _reading(
    name: str,
    question: str,
    sections: tuple[str, ...],
    spec_lines: tuple[int, ...],
    spec_words: tuple[str, ...],
    alternatives: Mapping[str, str],
    default: str,
    why_default: str,
    rules: tuple[str, ...],
    peers: str = "",
    peers_same: str = "",
) -> Reading:
    """An entry of ``READINGS``: the alternatives as name -> meaning, every long text wrapped
    freely (runs of whitespace become one space)."""

    def text(words: str) -> str:
        return " ".join(words.split())

    return Reading(
        name,
        question,
        sections,
        spec_lines,
        spec_words,
        tuple(Alternative(alt, text(meaning)) for alt, meaning in alternatives.items()),
        default,
        text(why_default),
        rules,
        text(peers),
        text(peers_same),
    )


UNACCOUNTED_USER_MESSAGE: Final = "unaccounted-user-message"
STATE_UPDATES_BEFORE_FIRST_LIST: Final = "state-updates-before-first-list"
PATCH_AFTER_IDLE: Final = "patch-after-idle"
CANCEL_TAKES_EFFECT: Final = "cancel-takes-effect"
CLOSE_RESPONSE_ENDS_SESSION: Final = "close-response-ends-session"
CANCELLED_INVALID_PROMPT: Final = "cancelled-invalid-prompt"
TOOL_UPDATES_AFTER_IDLE: Final = "tool-updates-after-idle"
PROMPT_AHEAD_OF_HELD: Final = "prompt-ahead-of-held"
TOOL_WITH_LISTED_TERMINAL: Final = "tool-with-listed-terminal"
REPEATED_IDLE_NEW_REASON: Final = "repeated-idle-new-stop-reason"
UNLISTED_TOOL_AT_CANCELLED_IDLE: Final = "unlisted-tool-at-cancelled-idle"
UNLISTED_TOOL_AT_FAILED_IDLE: Final = "unlisted-tool-at-failed-idle"
APPROVAL_RACING_CANCEL: Final = "approval-racing-cancel"
PERMISSION_WITHDRAWAL_DEADLINE: Final = "permission-withdrawal-deadline"
FUTURE_STOP: Final = "future-stop-reason"
CUSTOM_STATE_ADVERTISEMENT: Final = "custom-state-advertisement"
RESUME_REPLAY_WINDOW: Final = "resume-replay-window"
RESUME_WINDOW_IDLE: Final = "resume-window-idle"
OUTPUT_WHILE_REQUIRES_ACTION: Final = "output-while-requires-action"
REQUIRES_ACTION_WITHOUT_REQUEST: Final = "requires-action-without-request"
UNLISTED_TOOL_WHILE_BLOCKED: Final = "unlisted-tool-while-blocked"
BUSY_REFUSAL: Final = "busy-refusal"
USER_MESSAGE_DEADLINE: Final = "user-message-deadline"
USER_MESSAGE_CONTENT: Final = "user-message-content"


READINGS: Final[tuple[Reading, ...]] = (
    _reading(
        UNACCOUNTED_USER_MESSAGE,
        "May a live user message appear that no session/prompt accounts for?",
        ("2. Prompt accepted", "Foreground and background work", "Session-directed messages"),
        (64, 23, 15, 2),
        (
            "Receipt, queueing, and assigning an ID are not insertion",
            "synthetic user message",
            "SHOULD NOT report it as a user_message",
            "session/prompt lasts until the Agent inserts the user message",
        ),
        {
            "prompt-only": """Every live user message reports the insertion of a session/prompt of its
                session: one no prompt can claim is a breach (ACC-06, REJ-02 after a rejection, ACC-03
                when an error answer strands it, SDM-05 in a session without prompts).""",
            "agent-initiated": """A user message reported during foreground work the Agent started
                itself (reported starting while no session/prompt of its session waited), or while no
                prompt waits just before such work starts, may be the Agent's own insertion (or a
                live-only message of a local command): no breach, also when a prompt received since
                waits (that prompt may still return its ID, and need not). One reported while no
                prompt of its session waits for its answer is the Agent's own as well, in any work,
                also in work a prompt started once that prompt is answered, but not in the work of a
                refused prompt (reported starting while a prompt waited that was then answered with
                an error, and no prompt waiting then was inserted: its hook work, REJ-02); outside
                work it is the Agent's own only if the work reported starting next is its own, not a
                prompt's (else ACC-06). Any other, reported
                while a prompt waits during work a prompt started or outside work, is counted against
                the waiting prompts as under prompt-only (ACC-06, ACC-03).""",
            "other-sources": """A user message may have another source (an Agent-side insertion, a
                delegated task): an unclaimed user message is no breach, and the counting of messages
                against prompts proves nothing.""",
        },
        "agent-initiated",
        """Changed from prompt-only, by the text: "Agent-initiated work does not require a
              session/prompt request or a synthetic user message" (Foreground and background work)
              presupposes that an Agent may insert one for work it starts itself, and an adapter
              "can instead insert a live-only ACP user message" for a local command (2. Prompt
              accepted). That sentence sets no condition on other prompts: a prompt that arrives
              while such work runs changes nothing about the work's own message ("Foreground work
              can also start without a prompt, such as when the Agent follows up on a background
              task that finished. It reports the same states either way", the introduction), so
              one reported during it is counted against no prompt, though the waiting one may still
              return its ID. Work a prompt started is another matter: "session/prompt lasts until
              the Agent inserts the user message", and the text gives such work no message of the
              Agent's own while that prompt waits, so a user message reported then, or outside work
              while a prompt waits, is counted against the waiting prompts; once no prompt waits,
              no prompt can account for it, and the Agent-initiated sentence leaves it to the Agent:
              the answered prompt's message is the one its response named ("All updates for that
              message MUST use the returned messageId", 2. Prompt accepted), and work may go on
              after its turn ("Completing an individual prompt ... while other foreground activity
              continues does not require an idle boundary", Work boundaries and local commands).
              A refused prompt never had a message, and a rejection "MUST NOT emit user-message
              updates for that submission" (Prompts that are never inserted): the work that started
              while it waited is its hook work ("A failed foreground hook can therefore require both
              a prompt error response and an idle update"), so a user message there is for that
              submission (REJ-02); one in other work, after a refusal, has nothing tying it to the
              refused submission, and work that started while another prompt waited too, which was
              then inserted, is that prompt's work as well (running "may precede insertion, the
              prompt response, and user-message updates, for example while a foreground hook runs",
              Insertion and ordering). other-sources goes further than the text,
              which discourages reporting a delegated task as a user message (Session-directed
              messages).""",
        ("ACC-03", "ACC-06", "REJ-02", "SDM-05"),
        peers="""other-sources: the Agent may report one user message of its own running work that no
              prompt accounts for; agent-initiated: the same, only in work it started itself (a
              follow-up of finished background work) while no prompt waits for its answer (it
              does not yet take the checker's leave to do so while a prompt received during that
              work waits), as that work's first output, or (feature own_text) at any point of that
              work, with its own text or the text of a prompt it received, and then also in work a
              prompt started once no prompt waits, but a refused prompt's; or just before it starts
              such work (feature announce: from idle, or while unknown or a custom state is shown,
              the work then reported starting); prompt-only: never""",
    ),
    _reading(
        STATE_UPDATES_BEFORE_FIRST_LIST,
        "Does 'background on every state_update' include the state_updates before the first list?",
        ("Background work",),
        (35,),
        ("MUST include background on every state_update",),
        {
            "after-first-list": """Only state_updates after the session's first concrete background list
                must carry one; earlier ones may omit it.""",
            "every": """An Agent that reports background work at all must include it on every state_update
                of the session: a state_update without a list, followed later by a first list, is a breach
                (reported at that first list).""",
        },
        "after-first-list",
        """The MUST binds "An Agent that reports background work": an Agent is one from its
              first report, and may learn of background work only later; "Omitted or null means
              not reported, not that nothing is running" (Background work), which misleads no
              Client before any list.""",
        ("BG-07", "FAIL-04", "CANCEL-17"),
        peers="""every: an Agent that may report background work carries a list (maybe empty) on
              every state_update; after-first-list: it omits the list until its first background
              work""",
    ),
    _reading(
        PATCH_AFTER_IDLE,
        "May content of a message, or of a finished tool call, of ended foreground work be patched "
        "after that work's idle?",
        ("Entity IDs", "4. Report completion", "Cancellation"),
        (10, 122, 192),
        (
            "including after the session reports idle",
            "MUST send any pending updates",
            "before sending the idle state_update",
        ),
        {
            "ended-work": """Content for an agent message or thought first seen during an ended interval,
                or for a tool call first reported during it that had its final status before its idle
                (neither listed nor embedding a listed terminal then or now: a tool_call_content_chunk, or
                a tool_call_update carrying content), sent while the session is still idle after it, is a
                pending update of the ended work sent after its idle (DONE-03; CANCEL-14 when that idle
                came after a cancel).""",
            "patch-in-place": """Later updates and chunks patch an entity in place, including after idle:
                such content is no breach.""",
        },
        "ended-work",
        """Kept, by the text: "The Agent MUST send any pending updates for the foreground
              work that ended before sending its idle update. Background activity may continue to
              emit updates afterward" (4. Report completion): after the idle, only background
              activity is said to emit updates, and message content is the ended work's output; a
              tool call that had its final status before the idle has no work left that could carry
              on, and "The Agent MAY send session/update notifications with content or tool call
              updates after receiving the session/cancel notification, but it MUST ensure that it
              does so before sending the idle" (Cancellation) names tool call updates too.
              "Later updates and chunks patch the entity in place without moving it, including
              after the session reports idle" (Entity IDs) says where a Client places such an
              update, and leaves room for what ended-work allows after idle: a message update
              without content (metadata).""",
        ("DONE-03", "CANCEL-14"),
        peers="""patch-in-place: while idle, the Agent may append a chunk to the ended work's agent
              message; ended-work: never""",
    ),
    _reading(
        CANCEL_TAKES_EFFECT,
        "When does a cancellation take effect: when the Agent receives it, or when it acts on it?",
        ("Cancellation", "State transitions"),
        (190, 173),
        ("when cancellation took effect", "MUST use cancelled when confirming"),
        {
            "on-receipt": """A session/cancel (or session/close) received while work was active makes the
                first idle after it confirm the cancellation: it must say cancelled (TRANS-04; CANCEL-12
                when it says error).""",
            "when-acted": """The Agent may have finished the work before acting on the cancel: an idle
                right after the cancel's arrival may carry the stop reason of the work's own end.""",
        },
        "on-receipt",
        """Kept, by the text: "session/cancel covers foreground work and prompts received
              before it that the Agent has not yet inserted" and "A session/prompt received after
              session/cancel is not cancelled by it" (Cancellation) draw the line of what a cancel
              covers at its receipt, so the work active at receipt is covered and the idle ending
              it "MUST use cancelled when confirming foreground cancellation" (State transitions).
              "when cancellation took effect" names no other moment the text defines. (CANCEL-11,
              work never ended with idle, holds under both: the idle is owed either way.)""",
        ("TRANS-04", "CANCEL-12"),
        peers="""when-acted: after a cancel arrives, the Agent may still end the work with its own
              stop reason (end_turn, a limit, a custom one); on-receipt: only cancelled""",
    ),
    _reading(
        CLOSE_RESPONSE_ENDS_SESSION,
        "Must the work a session/close cancels be ended with its idle before the close response, "
        "or may the idle follow it?",
        ("2. Prompt accepted", "Stop reasons", "Cancellation"),
        (69, 142, 190),
        (
            "Prompt responses need not precede the close response",
            "by closing the session",
            "if foreground work was active when cancellation took effect",
        ),
        {
            "last-message": """The successful close response is the deadline of the closed work's idle
                (in the schema, no message of the session but a prompt response follows it): foreground
                work still reported active when it is sent never gets its idle, a breach at the response
                (CANCEL-11 for work the close or a cancel reached while it was reported active, FG-05 for
                work reported active again after an unknown). Other messages of the session after it
                (new work reported there, a prompt sent to it before any resume) are not judged: the
                schema's "the Agent sends no other messages for the session on that connection" is read
                here for the deadline it sets, and no sentence of the text states what a closed session
                may still carry.""",
            "work-may-follow": """The close response sets no deadline: the cancelled work's final updates
                and its idle may follow it. The idle is still owed: judged at the end (CANCEL-11, or
                FG-05: a breach at the end of a complete transcript, an open obligation otherwise).""",
        },
        "last-message",
        """Kept, by the schema, where the text leaves the deadline open: the text makes closing a
              cancellation ("by closing the session", Stop reasons) that owes the idle "if
              foreground work was active when cancellation took effect" (Cancellation), and its only
              sentence on order, "Prompt responses need not precede the close response" (2. Prompt
              accepted), exempts prompt responses alone, which presupposes that the rest precedes
              it. The schema's CloseSessionRequest states it: "When closing cancels active
              foreground work, the Agent MUST send the final updates for that work and the idle
              state_update with stopReason: "cancelled" before responding successfully to
              session/close", and "After the close response, the Agent sends no other messages for
              the session on that connection". work-may-follow reads the text alone.""",
        ("CANCEL-11", "FG-05"),
        peers_same="""the simulated Agent ends the work a close cancels with its idle before the close
              response (model.between close_leaves_work), which conforms under both; under
              work-may-follow an Agent could answer first, a freedom it does not take""",
    ),
    _reading(
        background.WAITED_ON,  # answered by a guard of the table
        "Must a listed background item that foreground work starts waiting on get a final status "
        "before it leaves the list?",
        ("Background work",),
        (37, 39),
        ("finalized before they are removed", "A terminal or tool call that foreground work is waiting on"),
        {
            "final-status": """An item leaves the list only with its exitStatus or final status sent
                before: dropping an unfinished one is a breach (BG-11).""",
            "becomes-foreground": """Work that foreground work waits on is foreground work and is not
                listed: an unfinished terminal or tool call dropped by a snapshot whose state is running
                or requires_action may have become foreground (no breach).""",
        },
        "final-status",
        """The MUST names no exception, and the wire does not show what foreground work waits
              on.""",
        ("BG-11",),
        peers="""becomes-foreground: while running, the Agent may take a listed background tool call
              into its foreground work, dropping it unfinished from the list; final-status: never""",
    ),
    _reading(
        CANCELLED_INVALID_PROMPT,
        "Which error answers a prompt with unadvertised content that a session/cancel then covers?",
        ("1. User message", "Cancellation"),
        (59, 190),
        ("MUST reject a prompt containing a content type", "MUST answer the covered prompts with -32800"),
        {
            "cancelled": """-32800: the cancel covers every prompt not yet inserted (CANCEL-02 reports
                -32602).""",
            "either": """-32800 or -32602: the Agent may have rejected the content before the cancel
                reached it.""",
            "invalid": "-32602: the content rule decides whatever else happens (USER-04 reports -32800).",
        },
        "cancelled",
        """The cancellation sentence covers every prompt received before the cancel and not
              yet inserted, without exception.""",
        ("CANCEL-02", "USER-04"),
        peers="""the answer the Agent gives a covered prompt with unadvertised content (only a faulty
              Client sends one): cancelled -32800, invalid -32602, either one of both""",
    ),
    _reading(
        prompt.OWN_REASON,  # answered by a guard of the table
        "May a prompt that a $/cancel_request named before its insertion be refused with an error "
        "other than -32800?",
        ("Prompts during active work", "Prompts that are never inserted"),
        (77, 81),
        (
            "The Client can withdraw it with $/cancel_request",
            "Request cancellation before insertion uses -32800",
        ),
        {
            "cancelled-only": """Once the $/cancel_request reached the Agent, a prompt not yet inserted is
                answered -32800 (or with success if it is inserted instead): any other error breaks
                REJ-03.""",
            "own-reason": """The Agent may still refuse it for a reason of its own (invalid params, a
                hook): only a refusal because of the cancellation must use -32800, and the wire does not
                show which, so another error code is no breach.""",
        },
        "cancelled-only",
        """-32800 is what request cancellation before insertion uses, and the prompt table lets
              the Agent refuse a prompt for its own reasons; which wins once a $/cancel_request
              arrived is not said.""",
        ("REJ-03",),
        peers="""own-reason: the Agent may refuse (-32602) a prompt after a $/cancel_request for it
              arrived; cancelled-only: never""",
    ),
    _reading(
        TOOL_UPDATES_AFTER_IDLE,
        "Is a status change of an unlisted foreground tool call after its work's idle a "
        "still-owed foreground update, or background work?",
        ("4. Report completion", "Background work", "Cancellation"),
        (122, 33, 192, 34, 33),
        (
            "MUST send any pending updates",
            "keep that tool call pending, in_progress, or paused",
            "SHOULD still accept tool call updates",
            "[] means no background work is running",
            "SHOULD NOT list housekeeping",
        ),
        {
            "background": """Work that carries on after the idle is independent of the ended work: no
                breach, and it clears a FAIL-04 suspicion. Not a tool call the idle's own concrete
                background list leaves out (nor embedding a listed terminal): that list says it was not
                running as background work, so its status change while the session is still idle after
                that work is an update of the ended work after its idle (DONE-03; CANCEL-14 after a
                cancellation).""",
            "foreground-owed": """A tool call first reported during ended foreground work, not listed (nor
                embedding a listed terminal), whose status changes while the session is still idle after
                that work, is an update of the ended work after its idle (DONE-03; CANCEL-14 after a
                cancellation) and stays a FAIL-04 suspect.""",
            "unlisted-activity": """As background, and a tool call the idle's own list leaves out may carry
                on too: it may be background activity the Agent does not list, such as housekeeping it
                represents as a tool call: no breach.""",
        },
        "background",
        """A background tool call may be announced before it is first listed, and the
              Client is told to accept tool call updates after a cancel. But the idle's list is a
              snapshot of the work running independently ("[] means no background work is
              running"), sent after the call was announced; and once idle a Client "MAY treat a
              pending, in_progress, or paused tool call ... that is not in the latest reported list
              as abandoned": a call that list leaves out was not carrying on, as the defaults of
              unlisted-tool-at-cancelled-idle and unlisted-tool-at-failed-idle read it. Not
              unlisted-activity: "The Agent SHOULD NOT list housekeeping it starts on its own ... If
              housekeeping needs to be visible, the Agent represents it as a tool call" lets an
              unlisted tool call be background activity, but nothing on the wire tells housekeeping
              from the work's own tool execution, and the text never has a Client treat an unlisted
              call as live while idle.""",
        ("DONE-03", "CANCEL-14", "FAIL-04"),
        peers="""background: an in_progress foreground tool call may carry on after an idle that
              confirms no cancellation (end_turn, error, ...) and complete later, where the idle
              carries no background list (one would leave it out); unlisted-activity: also where it
              does; foreground-owed: every tool call ends before the idle""",
    ),
    _reading(
        PROMPT_AHEAD_OF_HELD,
        "May a newly received prompt be inserted at once, ahead of a prompt the Agent holds?",
        ("Prompts during active work",),
        (77,),
        ("Held prompts are inserted in the order they were received",),
        {
            "held-only": """The order binds held prompts among themselves: a prompt inserted at once may
                overtake a held one (as the model's prompt machine allows).""",
            "receipt-order": """Every prompt is inserted after the prompts received before it: a prompt
                answered with success while an earlier one was still waiting, when that earlier one is
                later answered -32800 (it was never inserted), is a breach (ACTIVE-02).""",
        },
        "held-only",
        """The sentence speaks of held prompts only, and the Agent decides what inserting
              during active work means. The model's guard (oldest_held) reads it so.""",
        ("ACTIVE-02",),
        peers="""held-only: a newly received prompt may be inserted at once while older prompts are
              held; receipt-order: prompts are inserted in the order received""",
    ),
    _reading(
        TOOL_WITH_LISTED_TERMINAL,
        "Is a listed tool call that embeds a listed terminal one whose only live work is that terminal?",
        ("Background work",),
        (39,),
        ("whose only live work is a listed terminal",),
        {
            "only-live-work": "Yes: listing both is listing one work twice (BG-13).",
            "may-have-other-work": """Not necessarily: the tool call may have live work of its own, which
                the wire does not show; listing both is no breach.""",
        },
        "only-live-work",
        """Process-backed work is listed as its terminal; other live work of the tool call
              is invisible, so the checkable reading is the strict one.""",
        ("BG-13",),
        peers="""may-have-other-work: the Agent may start a terminal with a tool call embedding it
              and list both; only-live-work: it lists the terminal alone""",
    ),
    _reading(
        REPEATED_IDLE_NEW_REASON,
        "Is a repeated idle that brings a new stop reason the completion of unreported work?",
        ("Background work", "State transitions", "Failures"),
        (36, 173, 155),
        (
            "a repeated idle without a new stop reason is not a new completion",
            "A repeated state may carry updated information",
            "A failure in background activity while the Agent is idle is not a stop reason",
        ),
        {
            "snapshot": """Never, once some work of the session has ended: a repeated state may carry
                updated information without being a transition. (Before any work of a session seen from
                its creation ended there is no last stop reason to carry: a stop reason then reports a
                completion under either alternative, model.foreground idle_reports_completion.)""",
            "completion": """Yes: it completes foreground work that was never reported active (FG-02: work
                started without running; FG-01 when no prompt waits, work the Agent started itself).
                Among them a background failure while idle reported as a new error stop reason, the
                shape Failures says is no stop reason.""",
        },
        "snapshot",
        """The State transitions section says applying updated information is no
              transition; the Background work sentence only says when a repeat is certainly
              not a completion. Failures names one new stop reason that is wrong on a repeated
              idle, error for a background failure while idle ("not a stop reason, since no
              foreground work ended"), without a keyword: under this default such an idle is a
              snapshot whose stop reason is context, and it is not judged (telling a new error
              from the last one carried needs each session's last stop reason, kept only under
              completion).""",
        ("FG-02", "FG-01"),
        peers="""snapshot: while idle, the Agent may repeat idle once with a new stop reason;
              completion: never (it would report running first)""",
    ),
    _reading(
        clientview.UNRECOGNIZED_IDLE,  # answered by the Client's machine
        "Is an idle after an unrecognized (future or custom) state a completion of work?",
        ("Session states", "State transitions"),
        (165, 173),
        ("MUST NOT treat it as idle", "without implying that work started or ended"),
        {
            "no-completion": """No: as after unknown, a known snapshot after an unrecognized state implies
                no start or end of work (the client view counts no completion and keeps the last stop
                reason as context).""",
            "completion": """Yes: a Client that showed a generic busy state takes the idle as the end of
                that work (the client view counts a completion).""",
        },
        "no-completion",
        """The spec says so for unknown and asks Clients to treat an unrecognized state like
              a generic busy state without presenting the previous state as confirmed. No
              monitor rule depends on it: it decides the client view's completions and
              last_stop_reason (acp-model view, and the explorers' view agreement).""",
        (),
    ),
    _reading(
        UNLISTED_TOOL_AT_CANCELLED_IDLE,
        "Is an unfinished tool call of the cancelled work that no background list names owed its "
        "final status before the idle confirming the cancellation?",
        ("Cancellation", "Background work", "4. Report completion"),
        (190, 33, 122),
        (
            "the Agent gives those tool calls their final status",
            "SHOULD keep that tool call pending, in_progress, or paused and list it",
            "MUST send any pending updates for the foreground work that ended",
        ),
        {
            "owed-before-idle": """A tool call first reported during the cancelled work, still unfinished
                at the idle that confirms the cancellation, and left out of a concrete background list
                reported since its first report (the idle's own included; nor embedding a listed
                terminal), belongs to the cancelled work: its final status was owed before that idle
                (CANCEL-17, a finding at the idle). One no list has ruled on yet is a suspect, as under
                may-be-background.""",
            "every-unlisted": """Every such tool call not in the latest background list (nor embedding a
                listed terminal) belongs to the cancelled work, whether or not a list was reported since
                its first report: a finding at the idle. A background tool call announced during the work
                must then be listed by the idle.""",
            "may-be-background": """Such a tool call may be background activity the Agent did not list (it
                may stop unlisted background activity, so some may go on): a suspect, cleared when a later
                list names it or its status changes later, and a breach only when nothing cleared it by
                the end (at quiescence, or at the last line of a complete transcript).""",
        },
        "owed-before-idle",
        """The Cancellation section exempts only the latest background list and tool calls
              referencing a listed terminal from the tool calls of the cancelled work, has the
              Agent give those their final status, and sends its idle "After all ongoing
              operations have been successfully aborted and pending updates have been sent": a
              concrete list reported since the tool call appeared that leaves it out says it is
              not background work, so its final status was owed before that idle. Not
              every-unlisted: the same paragraph says "The Agent MAY stop background activity it
              does not list", so unlisted background activity may outlive a cancel, and Background
              work has the Agent send a background tool call "before the first list that names
              it, even while the session is idle": one announced during the work that no list has
              ruled on yet may be such work (an Agent that starts a background watcher, is
              cancelled and sends its idle before its first list conforms). Until a list rules on
              it, only the end of a complete transcript shows it was never background work.""",
        ("CANCEL-17",),
    ),
    _reading(
        UNLISTED_TOOL_AT_FAILED_IDLE,
        "Is an unfinished tool call of the failed work that no background list names owed its "
        "terminal status before the idle with stop reason error?",
        ("Failures", "Background work"),
        (151, 33),
        (
            "are not part of the failed work and keep running",
            "before the first list that names it",
        ),
        {
            "owed-before-idle": """A tool call first reported during the failed work, still unfinished at
                its error idle, neither in the latest background list nor embedding a listed terminal, and
                left out of a concrete background list reported since its first report (the idle's own
                included), was owed a terminal status before that idle (FAIL-04, a finding at the idle).
                One no list has ruled on yet may be background work announced before its first list: a
                suspect, as under may-be-background.""",
            "may-be-background": """Any such tool call may be background work announced before its first
                list: a suspect at the idle, cleared when a later list names it or its status changes
                later (tool-updates-after-idle=background), and a breach only when nothing cleared it by
                the end (at quiescence, or at the last line of a complete transcript).""",
        },
        "owed-before-idle",
        """The Failures section has the Agent give each tool call the failed work left
              unfinished a terminal status before reporting the failure, and exempts only listed
              background work and tool calls that reference a listed terminal: a concrete list
              that leaves a tool call out says it is not background work. A background tool call
              is announced before the first list that names it (Background work), so one no list
              has ruled on yet may still be listed later.""",
        ("FAIL-04",),
        peers_same="""the simulated Agent gives every tool call of failed work a terminal status
              and never ends work while announced background work is unlisted""",
    ),
    _reading(
        APPROVAL_RACING_CANCEL,
        "May an approval that reaches the Agent after a session/cancel, before the cancellation "
        "completes, be used to run the tool?",
        ("Cancellation",),
        (190, 190),
        (
            "MUST stop waiting for that work’s pending session/request_permission requests",
            "A response can race with session/cancel before cancellation completes",
        ),
        {
            "may-be-used": """An answer that arrives after the cancel but before the idle that confirms
                the cancellation raced the cancel: the Agent may not have stopped the work yet, and may
                use it (the tool call runs, then gets its final status before the idle). Only an approval
                of a request still open at that idle, or of one the Agent withdrew before the answer
                reached it (it had stopped waiting then), is a late answer whose use breaks CANCEL-06.""",
            "not-approved": """Once the session/cancel reached the Agent while the work was active, every
                permission request of that work is treated as not approved: an allow answer arriving after
                the cancel, followed by its tool call going in_progress, breaks CANCEL-06 even before the
                idle.""",
        },
        "may-be-used",
        """The MUST applies "When the Agent stops the cancelled foreground work", a moment the
              wire does not show, and to requests still "pending" then; the same paragraph says "A
              response can race with session/cancel before cancellation completes" and asks the
              Agent to ignore late responses only "After cancellation completes" (Cancellation).
              An answer that arrived before the confirming idle may have arrived before the Agent
              stopped the work, when it was no longer pending.""",
        ("CANCEL-06",),
        peers="""may-be-used: an allow answer that reaches the Agent after the cancel, while it
              still carries the cancellation out, runs the tool; not-approved: it is taken as a
              refusal""",
    ),
    _reading(
        PERMISSION_WITHDRAWAL_DEADLINE,
        "By when does the Agent withdraw the pending permission requests and elicitations of "
        "cancelled work with $/cancel_request: by the idle that confirms the cancellation, or at any "
        "time after?",
        ("Lifecycle examples", "Cancellation"),
        (185, 190, 190, 190, 190),
        (
            "The same rules apply to permissions and both elicitation modes",
            "It SHOULD cancel each of them with $/cancel_request so the Client can dismiss the prompt",
            "For elicitation requests, see Elicitation Cancellation",
            "After all ongoing operations have been successfully aborted and pending updates have been sent",
            "Cancellation can finish without receiving answers to abandoned user-action requests",
        ),
        {
            "by-idle": """A permission request or an elicitation (form or URL mode, not yet answered) of
                the cancelled work still unanswered at the idle that confirms the cancellation (not
                about work in the latest background list) is owed its $/cancel_request before that
                idle: one neither withdrawn nor answered by the Client before it breaks CANCEL-07
                (a permission request) or CANCEL-19 (an elicitation), a finding at the idle. A
                request about a tool call still unfinished that no concrete background list has
                ruled on since its first report may be background work announced before its first
                list: it is judged as under eventually.""",
            "eventually": """The withdrawal may come at any time after that idle: only a request
                never withdrawn and never answered breaks CANCEL-07 or CANCEL-19, at the end of a
                complete transcript (or at quiescence).""",
        },
        "by-idle",
        """The sentence that asks for the withdrawal binds the moment of the MUST before it: "When
              the Agent stops the cancelled foreground work, it MUST stop waiting for that work's
              pending session/request_permission requests ... It SHOULD cancel each of them with
              $/cancel_request so the Client can dismiss the prompt" (Cancellation). The Agent has
              stopped that work by its idle, sent "After all ongoing operations have been
              successfully aborted and pending updates have been sent", and it need not wait for
              anything first: "Cancellation can finish without receiving answers to abandoned
              user-action requests". A withdrawal after the idle leaves the Client showing a
              prompt for work it has been told is over, which is what the withdrawal is for. Not
              eventually: the text names no later moment, and "each of them" are the requests it
              stopped waiting for when it stopped the work. One reading for elicitations too, not
              a sibling: the Cancellation section defers them to "Elicitation Cancellation", a
              section the text does not carry, and says "The same rules apply to permissions and
              both elicitation modes" (Lifecycle examples); "abandoned user-action requests" names
              both kinds in the sentence that lets the idle come without their answers. Nothing
              in the text gives an elicitation another deadline, so a reading that split them
              would be a distinction of ours. A URL elicitation the Client accepted is answered:
              only the user's external completion is still to come, which after the idle is
              ignored ("external URL completions"), so it owes no withdrawal.""",
        ("CANCEL-07", "CANCEL-19"),
        peers="""by-idle: the simulated Agent withdraws each pending permission request and each
              unanswered elicitation of the cancelled work as it stops that work, before its
              confirming idle; eventually: it may withdraw it at any later move (the Client may
              answer it first)""",
    ),
    _reading(
        FUTURE_STOP,
        "Is an unknown stop reason without the _ prefix a custom one that breaks the prefix rule, "
        "or possibly a future ACP variant?",
        ("Stop reasons",),
        (144, 144),
        ("Custom stop reasons MUST begin with _", "reserved for future ACP variants"),
        {
            "custom": """A stop reason that is neither one of this version's standard reasons nor
                _-prefixed was chosen by the Agent: a breach of STOP-03.""",
            "may-be-future": """It may be a future ACP variant, which "can be used when Clients can
                display a generic stopped state": only a suspect of STOP-03 (a warning), never a breach.""",
        },
        "custom",
        """The text reserves the space: "Unknown non-underscore stop reasons are reserved for
              future ACP variants" (Stop reasons), so an Agent of this version cannot use one as a
              value of its own, and whatever it adds is custom: "Custom stop reasons MUST begin
              with _". A future variant is defined by a later version, against which a transcript
              using it must be checked.""",
        ("STOP-03",),
        peers="""may-be-future: the Agent may end work with a stop reason of a future version (no _
              prefix); custom: never""",
    ),
    _reading(
        CUSTOM_STATE_ADVERTISEMENT,
        "Which part of a Client's initialize counts as advertising support for custom or future "
        "session states?",
        ("Session states", "1. User message"),
        (165, 59),
        (
            "Unless the Client has advertised support for a custom or future state",
            "capabilities.session.prompt._meta",
        ),
        {
            "any-meta": """Any non-empty _meta in the Client's capabilities may be that advertisement:
                the spec names no key, and custom capabilities are carried in _meta. Such a Client may
                have agreed to custom states, so a custom state in place of a standard one breaks
                nothing (STATE-04 is judged only for Clients whose capabilities carry no _meta).""",
            "custom-states-key": """Only capabilities._meta.customStates, the key the simulated
                Client of this model uses, counts: a Client whose _meta carries other keys (a
                theme, terminal flags) advertised nothing, and a custom state in place of a
                standard one breaks STATE-04.""",
        },
        "any-meta",
        """The MUST yields "Unless the Client has advertised support for a custom or future
              state" (Session states) and the text defines no such advertisement; where it speaks
              of custom capabilities it places them in _meta: "Custom content types need a custom
              capability, such as an entry in capabilities.session.prompt._meta" (1. User
              message). A checker that does not know a Client's extension cannot tell which _meta
              entry advertises what, so any of them may be it.""",
        ("STATE-04",),
        peers_same="""the simulated Client advertises custom states with _meta.customStates, which
              both alternatives count, and sends no other _meta""",
    ),
    _reading(
        toolcall.FINAL_CHANGE,  # answered by the observer of the table and by model.compaction
        "May a tool call or a compaction move from one final status to another (completed to failed, say)?",
        ("Background work", "Entity IDs", "Session compaction"),
        (33, 10, 110),
        (
            "The Agent does not reopen a tool call that has a final status",
            "Later updates and chunks patch the entity in place",
            "MUST NOT be reused for another compaction",
        ),
        {
            "reopen-only": """Only a return to a live status (pending, in_progress, paused) reopens a tool
                call (BG-05), and only a return to in_progress reuses a compaction's ID for another
                compaction (COMPACT-03); a change between final statuses corrects the outcome and starts
                no work: no breach.""",
            "final-is-final": """A final status is the last status: a change to another final status
                after it breaks BG-05 (a tool call) or COMPACT-03 (a compaction), as a return to a live
                one does.""",
        },
        "reopen-only",
        """Changed from final-is-final, by the text: "The Agent does not reopen a tool call
              that has a final status. It starts a new one instead" (Background work) is about
              reopening, new work that needs a new tool call; a move from one final status to
              another starts no work, and "Later updates and chunks patch the entity in place ...
              including after the session reports idle" (Entity IDs) lets an update change a
              finished entity. The same holds for compactions: the ID "MUST NOT be reused for
              another compaction" (Session compaction), and another compaction starts as a new one
              does ("Clients initialize a first-seen compaction ID with status in_progress"), while
              a terminal status after another reports the same compaction's outcome, an update that
              patches it in place.""",
        ("BG-05", "COMPACT-03"),
        peers="""reopen-only: the Agent may correct a finished tool call's outcome once (completed to
              failed, failed or cancelled to completed; feature correct, off by default and in the
              explorer's tools slice; a compaction's outcome it never corrects);
              final-is-final: never""",
    ),
    _reading(
        toolcall.AFTER_FINAL,  # answered by the observer of the tool call table
        "Is a live status reported for a tool call with a final status that call reopened, or a new "
        "tool call under the ended one's ID?",
        ("Background work", "Entity IDs"),
        (33, 10),
        (
            "The Agent does not reopen a tool call that has a final status. It starts a new one instead",
            "The Agent MUST NOT reuse an ID for a different entity of the same type within a session",
        ),
        {
            "reopened": """The call is reopened: a breach of BG-05 (a plain statement the catalogue
                grades SHOULD NOT, a warning).""",
            "new-call": """It is another tool call, started under the ID of one that ended: the ID is
                reused for a different entity of the same type, a breach of ENT-01 (MUST NOT, an
                error).""",
        },
        "reopened",
        """Both are breaches, and the wire cannot tell them apart: v2 has no update that announces
              a tool call, only the tool_call_update upsert ("When a client receives a tool call ID
              it has not seen before, omitted fields start at their protocol defaults", the schema's
              ToolCallUpdate), so a new call under an ended one's ID and the ended call reopened
              send the same update. The default claims only what every such transcript shows:
              the call, as the Client keys it, was reopened ("Later updates and chunks patch the
              entity in place", Entity IDs); that it is another call is the Agent's intent, which
              the wire does not show (an adapter that numbers calls per turn breaks ENT-01, and
              new-call says so). The finding names the reading.""",
        ("BG-05", "ENT-01"),
    ),
    _reading(
        RESUME_REPLAY_WINDOW,
        "Between a session/resume and its response, is every user message replayed history, or only "
        "one under an ID the session already showed?",
        ("Initial state and synchronization", "2. Prompt accepted", "Session states"),
        (169, 69, 165),
        (
            "following any requested history replay and before the successful resume response",
            "If the message is retained and replayed, the Agent MUST use the same ID",
            "Background activity MAY continue",
        ),
        {
            "whole-window": """What comes between the resume request and its response is the requested
                replay, the snapshot, and live updates of entities first seen there (work that goes on); a
                user message there is replayed history, not an insertion, when a replay was requested (a
                window that asked for none holds no replay: there it is live): in a session seen from its
                creation, one under an ID never used live breaks ACC-11 (a replayed
                message keeps its ID; a prompt whose returned ID only such a message reported then breaks
                ACC-05), and one re-sent after the last snapshot with no snapshot after it breaks
                SYNC-02.""",
            "known-ids": """Replayed updates are told apart only by their IDs: a user message under an ID
                no user message of the session showed is live even inside the window: a new ID is an
                insertion (judged like any live user message: ACC-06 when no prompt accounts for it),
                never an ACC-11 breach, and one a success response returned is that message's report
                (its ACC-05 is met).""",
        },
        "whole-window",
        """The text puts the replay inside the window ("following any requested history replay
              and before the successful resume response", Initial state and synchronization) and
              gives replayed updates no marker but their IDs ("the Agent MUST use the same ID",
              2. Prompt accepted). No prompt sent inside the window can be inserted there: "Before
              sending prompts, Clients MUST first complete the initialization phase and session
              setup", which the resume response completes. A prompt received before the resume may
              be ("The Agent either inserts the prompt right away or holds it and inserts it later",
              Prompts during active work): in a window that asked for no replay, a user message
              under a new ID is live under either alternative; in one that asked for a replay, the
              Agent that holds a prompt chooses when to insert it and can do so after the response,
              so the requested replay is what the window shows. Live updates
              of ongoing work may still come ("Background activity MAY continue and emit other
              session/update notifications", Session states). A message inserted before the resume
              that a replay from before it re-sends is history there too: "Every inserted input
              ... is reported live, but Agents are not required to persist it or retain it ... If
              the message is retained and replayed, the Agent MUST use the same ID" (2. Prompt
              accepted) keeps the live report apart from the replayed copy, so the report is still
              owed; known-ids takes the text's "the user_message acknowledgment ... may arrive
              before or after" the response instead, and lets the first update under the ID be
              it.""",
        ("ACC-11", "ACC-05", "ACC-06"),
        peers_same="""under known-ids an Agent could insert, inside a window that asked for a replay,
              a prompt it held from before the resume and report its user message there (in a
              window that asked for none it is live under both alternatives), or send there the
              first report of a message it inserted before the resume; the simulated Agent cannot:
              the session table's resuming state lets it only replay history and send the snapshot
              (its prompts wait for the resume response, as under whole-window), and no prompt can
              arrive in the window (INTRO-01), so no alternative gives it a move there""",
    ),
    _reading(
        RESUME_WINDOW_IDLE,
        "Between a session/resume and its response, may an idle that follows no active state "
        "reported in that window be the live idle that ends the work, or is it the resume snapshot?",
        (
            "Initial state and synchronization",
            "State transitions",
            "Work boundaries and local commands",
            "Cancellation",
        ),
        (169, 173, 181, 191, 173),
        (
            "Clients MUST use that snapshot rather than infer activity",
            "without creating a new completion or cancellation",
            "When no foreground activity remains, the Agent MUST report idle",
            "so that Clients can reliably confirm the cancellation",
            "Initial or resume snapshots report the current state without implying a transition",
        ),
        {
            "snapshot": """It is the resume snapshot (or a repeat of it), which creates no completion or
                cancellation: while a cancellation is pending it breaks CANCEL-11 at once, whatever its
                stop reason. The confirming idle comes before the resume, after its response, or inside
                the window as a transition from an active state reported there (the snapshot).""",
            "may-be-live": """It may also be the live idle that ends the work, sent before the snapshot:
                while a cancellation is pending, one the covered work may end with (stop reason
                cancelled; any under cancel-takes-effect=when-acted) is taken as that idle when another
                state reported in the window can be the snapshot (one before it, or one after it before
                the successful resume response); the one idle of a window is the snapshot: CANCEL-11,
                judged at that response.""",
        },
        "snapshot",
        """The text tells the Client to read the window's state as the snapshot: "Clients MUST use
              that snapshot rather than infer activity from the response or replayed content"
              (Initial state and synchronization), and "Repeated or resume idle snapshots may carry
              the last stop reason for context, without creating a new completion or
              cancellation" (State transitions). An idle that no active state of the window
              precedes is one the Client applies as that snapshot, so it cannot be the idle sent
              "so that Clients can reliably confirm the cancellation" (Cancellation); an idle after an
              active state of the window is a change of the reported state, a transition the Client
              sees. may-be-live reads "When no foreground activity remains, the Agent MUST report
              idle" (Work boundaries) as allowing that idle before the snapshot, which the text does
              not exclude but gives the Client no way to tell apart. Neither alternative lets one
              idle be both the snapshot and the confirming idle (the only state of a window, sent
              while a cancellation is pending, stop reason cancelled or not): "Initial or resume
              snapshots report the current state without implying a transition" (State
              transitions), while confirming the cancellation is what an idle transition does ("When
              an idle transition ends work, ... MUST use cancelled when confirming foreground
              cancellation", same section); the resume snapshot is owed before every successful
              resume response, so the only state of such a window is that snapshot, which by those
              words is no transition and creates no cancellation. The text leaves no third way
              open: an Agent sends the confirming idle before the resume, after its response, or in
              the window after an active state reported there.""",
        ("CANCEL-11",),
        peers_same="""the simulated Agent reports no live state inside a resume window (the session
              table's resuming state lets it only replay history and send the snapshot, and it
              answers the resume in the same step), so it sends the confirming idle before the
              resume or after its response, which conforms under both; under may-be-live an Agent
              could end the cancelled work inside the window before the snapshot, a freedom it does
              not take""",
    ),
    _reading(
        OUTPUT_WHILE_REQUIRES_ACTION,
        "Does agent message or thought content sent while requires_action is reported show that "
        "foreground progress resumed?",
        (
            "Waiting for user action",
            "Foreground and background work",
            "Entity IDs",
            "Message IDs",
            "4. Report completion",
        ),
        (177, 21, 10, 92, 122),
        (
            "requires_action means the foreground workflow as a whole is blocked on user action",
            "MUST report running when foreground progress resumes",
            "Later updates and chunks patch the entity in place without moving it",
            "Chunk updates with the same messageId append content",
            "MUST send any pending updates for the foreground work that ended before sending its idle",
        ),
        {
            "progress": """Yes: a blocked workflow produces no model output, so new content shows progress
                without running reported (FG-04).""",
            "pending-output": """Not necessarily: it may be output the work produced before it blocked,
                sent late (no rule orders pending output before requires_action): no breach.""",
            "late-chunk": """Only content that begins something: a chunk (agent_message_chunk,
                agent_thought_chunk) of a message first seen since the last idle was reported, before
                requires_action was, appends to output the work began before it blocked: no breach.
                Content of a message first seen while requires_action is reported, and a full
                message update, are progress (FG-04).""",
        },
        "late-chunk",
        """The state is the whole workflow's: "requires_action means the foreground workflow as a
              whole is blocked on user action" (Waiting for user action), and "it MUST report
              running when foreground progress resumes" (Foreground and background work). What
              the wire shows of progress is output the workflow produces, and a message is an
              entity: "An entity's first update or chunk fixes its timeline position in receive
              order: it follows previously received timeline content and precedes content first
              received later. Later updates and chunks patch the entity in place without moving
              it, including after the session reports idle" (Entity IDs); "Chunk updates with the
              same messageId append content" (Message IDs). A chunk of a message the work began
              before it blocked (first seen since the last idle, before requires_action was
              reported) opens nothing after the block: it appends to output the work started
              while it ran, and the text lets an entity's chunks arrive after the state changed
              (even after idle). "If the model requested tool calls, these are also reported
              immediately" (Message IDs), so the permission request and requires_action may overtake the
              tail of the text streamed before it; the text orders pending updates before the idle
              alone ("The Agent MUST send any pending updates for the foreground work that ended
              before sending its idle update", 4. Report completion), not before requires_action.
              So such a late chunk does not show that progress resumed, and a breach of a MUST
              could not be defended on it. Content that begins a message while requires_action is
              reported is placed after the block, new output of a workflow reported blocked, and a
              full message update replaces what the message shows: both show progress (FG-04).
              pending-output would accept those too, any content of a blocked workflow; progress
              flags the late chunk of a plausible streaming adapter. What late-chunk leaves
              unseen: an Agent that resumes and appends to the same message without reporting
              running (FG-04 partly decidable).""",
        ("FG-04",),
        peers="""late-chunk and pending-output: while requires_action is reported, the Agent may send
              chunks of the message its work began before it blocked (feature chunks: it streams
              its messages; each counted in its output bound, as a say is); progress: never""",
    ),
    _reading(
        REQUIRES_ACTION_WITHOUT_REQUEST,
        "May foreground work be blocked on user action that no permission request or elicitation "
        "shows, so that requires_action with none outstanding is no breach?",
        (
            "State transitions",
            "5. Tool invocation and status reporting",
            "Session notices",
            "Lifecycle examples",
        ),
        (173, 126, 105, 185),
        (
            "requires_action is only for blocked foreground work",
            "blocked on a permission response or other user action",
            "MUST NOT carry information required for protocol correctness, authorization, user action",
            "In URL mode, an accept response leaves requires_action unchanged",
        ),
        {
            "requests": """No: the user acts on what the Agent asks through ACP, a permission request or
                an elicitation (of the session, or of a child session it announced); a requires_action
                stretch during which none is outstanding, or asked, is blocked on nothing the user can
                act on (TRANS-05).""",
            "user-action-unseen": """Yes: "other user action" may lie outside ACP's requests (a login
                in a browser, an answer typed into a terminal the user watches), which the wire does
                not show: a stretch with no request is no breach.""",
        },
        "requests",
        """The state's definition is "requires_action is only for blocked foreground work. An
              outstanding request alone does not justify it" (State transitions), and the text gives
              the user's side of the wait one channel: "the Agent MAY request permission ... While
              foreground work is blocked on a permission response or other user action, the Agent
              SHOULD report requires_action" (5. Tool invocation and status reporting), and "The
              same rules apply to permissions and both elicitation modes. In URL mode, an accept
              response leaves requires_action unchanged while the user still needs to finish the external
              interaction" (Lifecycle examples): even an interaction outside the Client is asked
              for, and kept open, through an elicitation. Nothing else may carry it: "A notice MUST
              NOT carry information required for protocol correctness, authorization, user action"
              (Session notices). So the "other user action" is an elicitation's, and a stretch with
              no request leaves the user nothing in ACP to act on.""",
        ("TRANS-05",),
        peers_same="""the simulated Agent reports requires_action only while a request of its session
              is outstanding or was asked since its last idle (with none, only as a seeded bug),
              which conforms under both; under user-action-unseen an Agent could also block on user
              action outside ACP, a freedom it does not take""",
    ),
    _reading(
        UNLISTED_TOOL_WHILE_BLOCKED,
        "Is a tool call first reported during active work, announced but not yet named by any "
        "background list, that runs while requires_action is reported progress of the blocked work?",
        ("Background work", "Waiting for user action", "Foreground and background work"),
        (36, 37, 177),
        (
            "When background work starts or ends, the Agent SHOULD send a repeated state_update",
            "Items are announced before they are listed",
            "The session remains running if other foreground work can still progress",
        ),
        {
            "foreground-unless-listed": """Yes: a tool call first reported during active work and not in
                the latest background list is the work's tool execution, so its going in_progress (or
                completing after its permission was granted) while requires_action is reported shows
                progress without running reported (FG-04).""",
            "may-be-background": """Not necessarily: one that no concrete background list has left out
                since its first report (none reported since, or none at all) may be background work
                announced before its first list, whose progress is not the blocked work's: no breach.
                One that a concrete list reported since its first report left out is the work's, as
                under foreground-unless-listed, and so is one a permission request of the work asked
                about: the work waits on it, and what foreground work waits on is foreground work.""",
        },
        "foreground-unless-listed",
        """The list is the one place the wire says which work is background: "Only background
              work is listed ... A terminal or tool call that foreground work is waiting on is
              foreground work and is not listed", and "When background work starts or ends, the
              Agent SHOULD send a repeated state_update with the current state and the updated list"
              (Background work): work that started in the background is listed when it starts, so
              by the time it runs while the work is blocked an Agent that follows the text has
              listed it. A tool call reported during the work and left unlisted is then its "tool
              execution" (Foreground and background work), and "requires_action means the foreground
              workflow as a whole is blocked on user action. The session remains running if other
              foreground work can still progress" (Waiting for user action). may-be-background reads
              "Items are announced before they are listed" and "Omitted or null means not reported,
              not that nothing is running" (Background work) as leaving a running call's side open
              until a list names it: the text allows the gap (the re-send is a SHOULD), but gives the
              Client no way to tell such a call from the work's own; the readings
              unlisted-tool-at-cancelled-idle and unlisted-tool-at-failed-idle let the same gap
              stand at an idle by default, where a later list can still clear the call.""",
        ("FG-04",),
        peers="""may-be-background: an announced background tool call that no list names yet may go
              pending or paused and back to in_progress, also while requires_action is reported, as
              long as the session has reported no background list; foreground-unless-listed: only
              once listed""",
    ),
    _reading(
        BUSY_REFUSAL,
        "Is a well-formed prompt refused with -32600 while work is active refused only because "
        "work is active?",
        ("Prompts during active work", "Prompts that are never inserted"),
        (77, 81),
        (
            "Agents MUST NOT reject a prompt only because foreground work is active",
            "including by a hook or early failure",
        ),
        {
            "may-have-other-reason": """Not provably: the Agent may refuse a prompt during active work for
                a reason of its own (a hook, an early failure); a suspect of ACTIVE-03 (a warning).""",
            "invalid-request-is-busy": """Yes: -32600 (not a valid request) says nothing is wrong with the
                prompt but its timing, so the refusal is a busy refusal: a breach of ACTIVE-03 (an error).""",
        },
        "may-have-other-reason",
        """The MUST forbids a refusal "only because foreground work is active" (Prompts during
              active work): a reason, which the wire does not carry; and a request may be
              "rejected before insertion, including by a hook or early failure" (Prompts that are
              never inserted), with no error code reserved for either. The spec settles that a
              busy refusal is a breach; not which refusals are busy ones.""",
        ("ACTIVE-03",),
        peers="""may-have-other-reason: while work is active, a hook of the Agent may refuse a
              well-formed prompt with -32600 once (feature hook_refusal, off by default and in the
              explorer's hook slice; a suspect of ACTIVE-03, a warning); invalid-request-is-busy:
              never (its refusals say -32602)""",
    ),
    _reading(
        USER_MESSAGE_DEADLINE,
        "Is the report of an inserted user message a pending update of the work its insertion "
        "started, owed before that work's idle?",
        ("2. Prompt accepted", "4. Report completion", "Cancellation"),
        (68, 69, 122, 190),
        (
            "MUST also report the inserted user message",
            "the idle state_update that ends the resulting work",
            "MUST send any pending updates for the foreground work that ended",
            "prompts received before it that the Agent has not yet inserted",
        ),
        {
            "resulting-work": """Yes: the user_message acknowledgment belongs to the prompt's resulting
                work, so when the success response came before the idle ending that work (the first
                foreground work reported after the prompt was received while the session reported idle),
                the report comes before that idle: an idle sent first breaks ACC-05 at that line. Such a
                prompt still waiting at that idle, with no user message reported since its receipt that
                it could claim, was not inserted before it: a session/cancel (or session/close) received
                before that idle found it not yet inserted, so a success answer then breaks CANCEL-02
                (or the close rule).""",
            "eventually": """No deadline but the end: the report is owed eventually, judged only at the
                end of a complete transcript; a prompt's insertion may have come before a cancel
                whatever its report's timing.""",
        },
        "resulting-work",
        """The spec names the acknowledgment among the messages of the prompt's resulting work:
              "the user_message acknowledgment, Agent output, and even the idle state_update that
              ends the resulting work may arrive before or after it" (2. Prompt accepted), and "The
              Agent MUST send any pending updates for the foreground work that ended before sending
              its idle update" (4. Report completion). Only the work that started after the prompt
              was received while nothing ran is judged: a prompt inserted during active work may
              start the next turn instead ("What inserting during active work means ... is up to
              the Agent"), whose idle is later. The same deadline dates a hidden insertion: had the
              prompt been inserted before that idle, its report was owed by then, so with none
              reported it was inserted later, if at all, and "session/cancel covers ... prompts
              received before it that the Agent has not yet inserted" (Cancellation) covers it
              when the cancel came before that idle. A prompt received during active work and
              inserted at once may start the next turn, which a cancel of the current work does
              not reach ("Once a message is inserted, its prompt request still succeeds":
              Cancellation), so its report after the cancelled idle proves nothing.""",
        ("ACC-05", "CANCEL-02"),
        peers_same="""the simulated Agent reports every inserted user message before the idle
              ending any work and before the close response (model.between
              USER_MESSAGE_REPORTED), which conforms under both""",
    ),
    _reading(
        USER_MESSAGE_CONTENT,
        "May an update about a submission's user message carry content the prompt does not, which a "
        "later update replaces?",
        ("1. User message", "2. Prompt accepted", "Message IDs"),
        (59, 68, 92, 94),
        (
            "The contents of the user message",
            "with the full content array",
            "upserts keyed by messageId",
            "replaces all content currently stored",
        ),
        {
            "upsert": """Yes: a user_message is an upsert like the Agent's own messages, and its content
                may be replaced; an interim content of the Agent's own (a placeholder while the runtime
                echoes the message, say) is no breach as long as the message is reported under the
                returned ID, after insertion (ACC-05, ACC-06, ACC-07).""",
            "prompt-content": """No: the user message's content is the prompt's, so every block a
                user_message update about it carries is a block of the prompt's content array; another
                block breaks ACC-05, at the update once a success response has returned its ID, else at
                that response. Chunks are not compared (a streamed text block may be split anywhere).""",
        },
        "upsert",
        """The sentence that binds every update about the message lists what binds it: "All
              updates for that message MUST use the returned messageId and MUST NOT precede
              insertion" (2. Prompt accepted), its ID and its timing, not its content; and
              user_message updates "are upserts keyed by messageId" whose "concrete content arrays
              replace the previous content" (Message IDs), with no exception for user messages.
              "Report the inserted user message through a user_message update with the full
              content array" (2. Prompt accepted) says how the report is made, and the prompt
              array holds "the contents of the user message" (1. User message); neither forbids an
              earlier update that a later one replaces.""",
        ("ACC-05",),
        peers="""upsert: the Agent may report an inserted user message first with interim text of
              its own, then with its content (feature interim, off by default: taken only by the
              conforming twins of the decidability report); prompt-content: never""",
    ),
)

BY_NAME: Final[dict[str, Reading]] = {r.name: r for r in READINGS}
DEFAULTS: Final[dict[str, str]] = {r.name: r.default for r in READINGS}
_CHOICES: Final[frozenset[tuple[str, str]]] = frozenset(
    (r.name, a) for r in READINGS for a in r.alternative_names()
)
"""Every (reading, alternative) pair there is."""


def resolve(chosen: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every reading's alternative in force: ``chosen`` over the defaults (None: all defaults).
    Unknown names or alternatives raise ``ReadingError`` (one line)."""
    out = dict(DEFAULTS)
    for name, alt in (chosen or {}).items():
        if type(alt) is not str or (name, alt) not in _CHOICES:
            reading = BY_NAME.get(name)
            if reading is None:
                raise ReadingError(f"unknown reading {name!r} (acp-model readings lists them)")
            raise ReadingError(
                f"reading {name!r} has no alternative {alt!r} "
                f"(one of: {', '.join(reading.alternative_names())})"
            )
        out[name] = alt
    return out


def parse(items: Iterable[str] | None) -> dict[str, str]:
    """``NAME=ALTERNATIVE`` strings (``--reading``) as a checked mapping; the last choice of a
    name wins. Raises ``ReadingError``."""
    chosen: dict[str, str] = {}
    for item in items or ():
        if not item:
            continue
        name, sep, alt = item.partition("=")
        if not sep or not name.strip() or not alt.strip():
            raise ReadingError(f"--reading {item!r}: expected NAME=ALTERNATIVE")
        chosen[name.strip()] = alt.strip()
    resolve(chosen)
    return chosen


def non_default(readings: Mapping[str, str]) -> dict[str, str]:
    """The readings of ``readings`` that differ from their defaults."""
    return {k: v for k, v in readings.items() if DEFAULTS.get(k) != v}


def describe(readings: Mapping[str, str]) -> str:
    """One line stating the readings in force (for text reports)."""
    changed = non_default(readings)
    if not changed:
        return "readings: all defaults (acp-model readings lists them)"
    shown = ", ".join(f"{k}={v}" for k, v in sorted(changed.items()))
    return f"readings: {shown}; the others at their defaults"


def catalogue_json() -> dict[str, Any]:
    return {"readings": [r.to_json() for r in READINGS]}
