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

Defaults: today's behaviour of the monitors, unless the spec settles the question.

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
from dataclasses import dataclass
from typing import Any, Final

from model import background, prompt


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
    affects: str = "checker"
    """``checker`` (only the judgement depends on it) or ``both`` (the peers' freedoms differ
    between the alternatives too)."""
    peers: str = ""
    """For ``both``: what the simulated peer may do under each alternative (one line)."""

    def alternative_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.alternatives)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "question": self.question,
            "sections": list(self.sections),
            "spec_lines": list(self.spec_lines),
            "alternatives": [{"name": a.name, "meaning": a.meaning} for a in self.alternatives],
            "default": self.default,
            "why_default": self.why_default,
            "rules": list(self.rules),
            "affects": self.affects,
            "peers": self.peers,
        }


def _alt(name: str, meaning: str) -> Alternative:
    return Alternative(name, " ".join(meaning.split()))


def _text(text: str) -> str:
    return " ".join(text.split())


UNACCOUNTED_USER_MESSAGE: Final = "unaccounted-user-message"
STATE_UPDATES_BEFORE_FIRST_LIST: Final = "state-updates-before-first-list"
PATCH_AFTER_IDLE: Final = "patch-after-idle"
CANCEL_TAKES_EFFECT: Final = "cancel-takes-effect"
WAITED_ON_BACKGROUND: Final = background.WAITED_ON  # answered by a guard of the table
CANCELLED_INVALID_PROMPT: Final = "cancelled-invalid-prompt"
TOOL_UPDATES_AFTER_IDLE: Final = "tool-updates-after-idle"
REJECTED_AFTER_CANCEL_REQUEST: Final = prompt.OWN_REASON  # answered by a guard of the table
PROMPT_AHEAD_OF_HELD: Final = "prompt-ahead-of-held"
TOOL_WITH_LISTED_TERMINAL: Final = "tool-with-listed-terminal"
REPEATED_IDLE_NEW_REASON: Final = "repeated-idle-new-stop-reason"
IDLE_AFTER_UNRECOGNIZED_STATE: Final = "idle-after-unrecognized-state"
UNLISTED_TOOL_AT_CANCELLED_IDLE: Final = "unlisted-tool-at-cancelled-idle"


READINGS: Final[tuple[Reading, ...]] = (
    Reading(
        UNACCOUNTED_USER_MESSAGE,
        "May a live user message appear that no session/prompt accounts for?",
        ("2. Prompt accepted", "Foreground and background work", "Session-directed messages"),
        (64, 23, 15),
        (
            "Receipt, queueing, and assigning an ID are not insertion",
            "synthetic user message",
            "SHOULD NOT report it as a user_message",
        ),
        (
            _alt(
                "prompt-only",
                """Every live user message reports the insertion of a session/prompt
                 of its session: one no prompt can claim is a breach (ACC-06, REJ-02 after a
                 rejection, ACC-03 when an error answer strands it, SDM-05 in a session without
                 prompts).""",
            ),
            _alt(
                "other-sources",
                """A user message may have another source (an Agent-side
                 insertion, a delegated task): an unclaimed user message is no breach, and the
                 counting of messages against prompts proves nothing.""",
            ),
        ),
        "prompt-only",
        _text("""The spec describes user messages only as insertions of prompts (and, discouraged,
              delegated tasks); it says Agent-initiated work needs no synthetic user message but
              does not forbid one. prompt-only is what the monitors have always checked."""),
        ("ACC-03", "ACC-06", "REJ-02", "SDM-05"),
        affects="both",
        peers=_text("""other-sources: the Agent may report one user message of its own running work that no
              prompt accounts for; prompt-only: never"""),
    ),
    Reading(
        STATE_UPDATES_BEFORE_FIRST_LIST,
        "Does 'background on every state_update' include the state_updates before the first list?",
        ("Background work",),
        (35,),
        ("MUST include background on every state_update",),
        (
            _alt(
                "after-first-list",
                """Only state_updates after the session's first concrete
                 background list must carry one; earlier ones may omit it.""",
            ),
            _alt(
                "every",
                """An Agent that reports background work at all must include it on every
                 state_update of the session: a state_update without a list, followed later by a
                 first list, is a breach (reported at that first list).""",
            ),
        ),
        "after-first-list",
        _text("""An Agent may learn it has background work only later; and the Client treats an
              omitted list as "not reported", which is harmless before any list. This is what
              the monitors have always checked."""),
        ("BG-07",),
        affects="both",
        peers=_text("""every: an Agent that may report background work carries a list (maybe empty) on
              every state_update; after-first-list: it omits the list until its first background
              work"""),
    ),
    Reading(
        PATCH_AFTER_IDLE,
        "May content of a message of ended foreground work be patched after that work's idle?",
        ("Entity IDs", "4. Report completion", "Cancellation"),
        (10, 122, 192),
        (
            "including after the session reports idle",
            "MUST send any pending updates",
            "before sending the idle state_update",
        ),
        (
            _alt(
                "ended-work",
                """Content for an agent message or thought first seen during an
                 ended interval, sent while the session is still idle after it, is a pending
                 update of the ended work sent after its idle (DONE-03; CANCEL-14 when that idle
                 confirmed a cancellation).""",
            ),
            _alt(
                "patch-in-place",
                """Later updates and chunks patch an entity in place, including
                 after idle: such content is no breach.""",
            ),
        ),
        "ended-work",
        _text("""The completion rule is a MUST about the ended work's pending updates; the entity
              rule describes how a Client applies updates, not what an Agent may send. This is
              what the monitors have always checked."""),
        ("DONE-03", "CANCEL-14"),
        affects="both",
        peers=_text("""patch-in-place: while idle, the Agent may append a chunk to the ended work's agent
              message; ended-work: never"""),
    ),
    Reading(
        CANCEL_TAKES_EFFECT,
        "When does a cancellation take effect: when the Agent receives it, or when it acts on it?",
        ("Cancellation", "State transitions"),
        (190, 173),
        ("when cancellation took effect", "MUST use cancelled when confirming"),
        (
            _alt(
                "on-receipt",
                """A session/cancel (or session/close) received while work was
                 active makes the first idle after it confirm the cancellation: it must say
                 cancelled (TRANS-04; CANCEL-12 when it says error).""",
            ),
            _alt(
                "when-acted",
                """The Agent may have finished the work before acting on the
                 cancel: an idle right after the cancel's arrival may carry the stop reason of
                 the work's own end.""",
            ),
        ),
        "on-receipt",
        _text("""On receipt is the only moment visible on the wire: the Agent's acting is not.
              This is what the monitors have always checked. (CANCEL-11, work never ended with
              idle, holds under both: the idle is owed either way.)"""),
        ("TRANS-04", "CANCEL-12"),
        affects="both",
        peers=_text("""when-acted: after a cancel arrives, the Agent may still end the work with its own
              stop reason (end_turn, a limit, a custom one); on-receipt: only cancelled"""),
    ),
    Reading(
        WAITED_ON_BACKGROUND,
        "Must a listed background item that foreground work starts waiting on get a final status "
        "before it leaves the list?",
        ("Background work",),
        (37, 39),
        ("finalized before they are removed", "A terminal or tool call that foreground work is waiting on"),
        (
            _alt(
                "final-status",
                """An item leaves the list only with its exitStatus or final
                 status sent before: dropping an unfinished one is a breach (BG-11).""",
            ),
            _alt(
                "becomes-foreground",
                """Work that foreground work waits on is foreground work and
                 is not listed: an unfinished terminal or tool call dropped by a snapshot whose
                 state is running or requires_action may have become foreground (no breach).""",
            ),
        ),
        "final-status",
        _text("""The MUST names no exception, and the wire does not show what foreground work waits
              on. This is what the monitors have always checked."""),
        ("BG-11",),
        affects="both",
        peers=_text("""becomes-foreground: while running, the Agent may take a listed background tool call
              into its foreground work, dropping it unfinished from the list; final-status: never"""),
    ),
    Reading(
        CANCELLED_INVALID_PROMPT,
        "Which error answers a prompt with unadvertised content that a session/cancel then covers?",
        ("1. User message", "Cancellation"),
        (59, 190),
        ("MUST reject a prompt containing a content type", "MUST answer the covered prompts with -32800"),
        (
            _alt(
                "cancelled",
                """-32800: the cancel covers every prompt not yet inserted
                 (CANCEL-02 reports -32602).""",
            ),
            _alt(
                "either",
                """-32800 or -32602: the Agent may have rejected the content before the
                 cancel reached it.""",
            ),
            _alt(
                "invalid",
                """-32602: the content rule decides whatever else happens (USER-04
                 reports -32800).""",
            ),
        ),
        "cancelled",
        _text("""The cancellation sentence covers every prompt received before the cancel and not
              yet inserted, without exception. This is what the monitors have always checked."""),
        ("CANCEL-02", "USER-04"),
        affects="both",
        peers=_text("""the answer the Agent gives a covered prompt with unadvertised content (only a faulty
              Client sends one): cancelled -32800, invalid -32602, either one of both"""),
    ),
    Reading(
        REJECTED_AFTER_CANCEL_REQUEST,
        "May a prompt that a $/cancel_request named before its insertion be refused with an error "
        "other than -32800?",
        ("Prompts during active work", "Prompts that are never inserted"),
        (77, 81),
        (
            "The Client can withdraw it with $/cancel_request",
            "Request cancellation before insertion uses -32800",
        ),
        (
            _alt(
                "cancelled-only",
                """Once the $/cancel_request reached the Agent, a prompt not yet
                 inserted is answered -32800 (or with success if it is inserted instead): any other
                 error breaks REJ-03.""",
            ),
            _alt(
                "own-reason",
                """The Agent may still refuse it for a reason of its own (invalid
                 params, a hook): only a refusal because of the cancellation must use -32800, and
                 the wire does not show which, so another error code is no breach.""",
            ),
        ),
        "cancelled-only",
        _text("""-32800 is what request cancellation before insertion uses, and the prompt table lets
              the Agent refuse a prompt for its own reasons; which wins once a $/cancel_request
              arrived is not said. cancelled-only is what the monitors have always checked."""),
        ("REJ-03",),
        affects="both",
        peers=_text("""own-reason: the Agent may refuse (-32602) a prompt after a $/cancel_request for it
              arrived; cancelled-only: never"""),
    ),
    Reading(
        TOOL_UPDATES_AFTER_IDLE,
        "Is a status change of an unlisted foreground tool call after its work's idle a "
        "still-owed foreground update, or background work?",
        ("4. Report completion", "Background work", "Cancellation"),
        (122, 33, 192),
        (
            "MUST send any pending updates",
            "keep that tool call pending, in_progress, or paused",
            "SHOULD still accept tool call updates",
        ),
        (
            _alt(
                "background",
                """Work that carries on after the idle is independent of the ended
                 work: no breach, and it clears a FAIL-04 suspicion.""",
            ),
            _alt(
                "foreground-owed",
                """A tool call first reported during ended foreground work,
                 not listed (nor embedding a listed terminal), whose status changes while the
                 session is still idle after that work, is an update of the ended work after its
                 idle (DONE-03; CANCEL-14 after a cancellation) and stays a FAIL-04 suspect.""",
            ),
        ),
        "background",
        _text("""A background tool call may be announced before it is first listed, and the
              Client is told to accept tool call updates after a cancel. This is what the
              monitors have always checked."""),
        ("DONE-03", "CANCEL-14", "FAIL-04"),
        affects="both",
        peers=_text("""background: an in_progress foreground tool call may carry on after an end_turn idle
              and complete later; foreground-owed: every tool call ends before the idle"""),
    ),
    Reading(
        PROMPT_AHEAD_OF_HELD,
        "May a newly received prompt be inserted at once, ahead of a prompt the Agent holds?",
        ("Prompts during active work",),
        (77,),
        ("Held prompts are inserted in the order they were received",),
        (
            _alt(
                "held-only",
                """The order binds held prompts among themselves: a prompt
                 inserted at once may overtake a held one (as the model's prompt machine
                 allows).""",
            ),
            _alt(
                "receipt-order",
                """Every prompt is inserted after the prompts received before
                 it: a prompt answered with success while an earlier one was still waiting, when
                 that earlier one is later answered -32800 (it was never inserted), is a breach
                 (ACTIVE-02).""",
            ),
        ),
        "held-only",
        _text("""The sentence speaks of held prompts only, and the Agent decides what inserting
              during active work means. The model's guard (oldest_held) reads it so."""),
        ("ACTIVE-02",),
        affects="both",
        peers=_text("""held-only: a newly received prompt may be inserted at once while older prompts are
              held; receipt-order: prompts are inserted in the order received"""),
    ),
    Reading(
        TOOL_WITH_LISTED_TERMINAL,
        "Is a listed tool call that embeds a listed terminal one whose only live work is that terminal?",
        ("Background work",),
        (39,),
        ("whose only live work is a listed terminal",),
        (
            _alt("only-live-work", """Yes: listing both is listing one work twice (BG-13)."""),
            _alt(
                "may-have-other-work",
                """Not necessarily: the tool call may have live work of
                 its own, which the wire does not show; listing both is no breach.""",
            ),
        ),
        "only-live-work",
        _text("""Process-backed work is listed as its terminal; other live work of the tool call
              is invisible, so the checkable reading is the strict one. This is what the
              monitors have always checked."""),
        ("BG-13",),
        affects="both",
        peers=_text("""may-have-other-work: the Agent may start a terminal with a tool call embedding it
              and list both; only-live-work: it lists the terminal alone"""),
    ),
    Reading(
        REPEATED_IDLE_NEW_REASON,
        "Is a repeated idle that brings a new stop reason the completion of unreported work?",
        ("Background work", "State transitions"),
        (36, 173),
        (
            "a repeated idle without a new stop reason is not a new completion",
            "A repeated state may carry updated information",
        ),
        (
            _alt(
                "snapshot",
                """Never: a repeated state may carry updated information without
                 being a transition.""",
            ),
            _alt(
                "completion",
                """Yes: it completes foreground work that was never reported
                 active (FG-02: work started without running).""",
            ),
        ),
        "snapshot",
        _text("""The State transitions section says applying updated information is no
              transition; the Background work sentence only says when a repeat is certainly
              not a completion. This is what the monitors have always checked."""),
        ("FG-02",),
        affects="both",
        peers=_text("""snapshot: while idle, the Agent may repeat idle once with a new stop reason;
              completion: never (it would report running first)"""),
    ),
    Reading(
        IDLE_AFTER_UNRECOGNIZED_STATE,
        "Is an idle after an unrecognized (future or custom) state a completion of work?",
        ("Session states", "State transitions"),
        (165, 173),
        ("MUST NOT treat it as idle", "without implying that work started or ended"),
        (
            _alt(
                "no-completion",
                """No: as after unknown, a known snapshot after an unrecognized
                 state implies no start or end of work (the client view counts no completion
                 and keeps the last stop reason as context).""",
            ),
            _alt(
                "completion",
                """Yes: a Client that showed a generic busy state takes the idle as
                 the end of that work (the client view counts a completion).""",
            ),
        ),
        "no-completion",
        _text("""The spec says so for unknown and asks Clients to treat an unrecognized state like
              a generic busy state without presenting the previous state as confirmed. No
              monitor rule depends on it: it decides the client view's completions and
              last_stop_reason (acp-model view, and the explorers' view agreement)."""),
        (),
        affects="checker",
    ),
    Reading(
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
        (
            _alt(
                "owed-before-idle",
                """A tool call first reported during the cancelled work,
                 still unfinished at the idle that confirms the cancellation, and left out of a
                 concrete background list reported since its first report (the idle's own
                 included; nor embedding a listed terminal), belongs to the cancelled work: its
                 final status was owed before that idle (CANCEL-17, a finding at the idle). One
                 no list has ruled on yet is a suspect, as under may-be-background.""",
            ),
            _alt(
                "every-unlisted",
                """Every such tool call not in the latest background list
                 (nor embedding a listed terminal) belongs to the cancelled work, whether or not a
                 list was reported since its first report: a finding at the idle. A background
                 tool call announced during the work must then be listed by the idle.""",
            ),
            _alt(
                "may-be-background",
                """Such a tool call may be background activity the Agent
                 did not list (it may stop unlisted background activity, so some may go on): a
                 suspect, cleared when a later list names it or its status changes later, and a
                 breach only when nothing cleared it by the end (at quiescence, or at the last
                 line of a complete transcript).""",
            ),
        ),
        "owed-before-idle",
        _text("""The Cancellation section exempts only the latest background list and tool calls
              referencing a listed terminal from the tool calls of the cancelled work, and has the
              Agent give those their final status; its idle comes after every ongoing operation
              is aborted and the pending updates are sent. Work the Agent knows goes on should
              be listed (Background work), and an unlisted item is not background work the
              wire can see."""),
        ("CANCEL-17",),
        affects="checker",
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
