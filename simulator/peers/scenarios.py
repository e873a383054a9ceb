"""The named scenario library: one scripted run per section of the spec, and more where a
section calls for it.

Owns: each scenario's script (events in order; ``"deliver"`` flushes every message in flight,
FIFO), its configuration, the spec section it illustrates and a one-line description. Scripts
are checked when run: every event must be enabled at its turn (``ScriptError`` otherwise).

Must not know: monitors' rules or the client view's expectations (tests hold those).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from properties.engine import MonitorSet
from simulator.peers.config import DEFAULT, Config
from simulator.peers.schedulers import Run, scripted

Step = tuple[str, str, Any] | str
D = "deliver"


def c(name: str, arg: Any = None) -> tuple[str, str, Any]:
    return ("client", name, arg)


def a(name: str, arg: Any = None) -> tuple[str, str, Any]:
    return ("agent", name, arg)


ROOMY = DEFAULT.with_(capacity=32, outputs=3)
"""Scenarios deliver in batches: give the channels room for a whole batch."""
ELICITING = ROOMY.with_(prompts=1, features=frozenset({"elicitation", "cancel"}))
"""The elicitation scenarios: nothing else the client may start, so a run that ends owing
something (an elicitation never withdrawn) ends quiescent."""


@dataclass(frozen=True)
class Scenario:
    name: str
    section: str
    description: str
    script: tuple[Step, ...]
    cfg: Config = field(default_factory=lambda: ROOMY)

    def run(self, monitors: MonitorSet | None = None, faults: frozenset[str] = frozenset()) -> Run:
        return scripted(self.script, self.cfg, faults, monitors)


TERM = ("terminal", "term_1")
CHILD_ITEM = ("subagent", "sess_2")
BG_TOOL = ("tool_call", "tc_bg_1")

_TURN_START = (c("prompt"), D, a("insert", 1), a("start"), a("user_message", 1), a("answer", 1))

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "basic_turn",
        "Prompt lifecycle",
        "A prompt is inserted, answered with its messageId, streamed, and ends with idle end_turn.",
        (*_TURN_START, a("say"), a("say"), a("end", "end_turn"), D),
    ),
    Scenario(
        "chunked_user_message",
        "2. Prompt accepted",
        "The user message arrives as chunks after the prompt response; running precedes insertion.",
        (
            c("prompt"),
            D,
            a("start"),
            a("insert", 1),
            a("answer", 1),
            D,
            a("user_chunks", 1),
            a("think"),
            a("say"),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "plan_and_thought",
        "3. Agent reports output",
        "The agent reports a plan, a thought and a message during one turn.",
        (*_TURN_START, a("plan"), a("think"), D, a("end", "end_turn"), D),
    ),
    Scenario(
        "permission",
        "5. Tool invocation and status reporting",
        "A tool call asks permission (requires_action), the client allows, work resumes (running).",
        (
            *_TURN_START,
            a("tool_ask"),
            D,
            c("allow", "perm_1"),
            D,
            a("resume"),
            a("tool_run", "tc_1"),
            a("tool_done", "tc_1"),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "permission_denied",
        "Waiting for user action",
        "The client denies permission; the tool call fails and the turn ends.",
        (
            *_TURN_START,
            a("tool_ask"),
            D,
            c("deny", "perm_1"),
            D,
            a("resume"),
            a("tool_run", "tc_1"),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "start_blocked",
        "State transitions",
        "Work that starts blocked on permission reports requires_action without running first.",
        (
            c("prompt"),
            D,
            a("insert", 1),
            a("start_blocked"),
            a("user_message", 1),
            a("answer", 1),
            D,
            c("allow", "perm_1"),
            D,
            a("resume"),
            a("tool_run", "tc_1"),
            a("tool_done", "tc_1"),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "cancellation_with_held_prompt",
        "Cancellation",
        "A second prompt is held; session/cancel withdraws it with -32800, idle reports cancelled, "
        "and the permission request of the cancelled work is withdrawn.",
        (
            *_TURN_START,
            a("tool_ask"),
            D,
            c("prompt"),
            D,
            a("hold", 2),
            c("cancel"),
            D,
            a("withdraw", 2),
            a("end", "cancelled"),
            a("perm_withdraw", "perm_1"),
            D,
            c("dismiss", "perm_1"),
            D,
        ),
    ),
    Scenario(
        "prompt_during_active_work",
        "Prompts during active work",
        "A prompt sent while running is inserted at once (steering) and answered; one idle ends it all.",
        (
            *_TURN_START,
            a("say"),
            c("prompt"),
            D,
            a("insert", 2),
            a("user_message", 2),
            a("answer", 2),
            a("say"),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "held_prompts_in_order",
        "Prompts during active work",
        "A prompt held during work is inserted after the running turn ends, in a turn of its own.",
        (
            *_TURN_START,
            c("prompt"),
            D,
            a("hold", 2),
            a("end", "end_turn"),
            a("insert", 2),
            a("start"),
            a("user_message", 2),
            a("answer", 2),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "cancel_request_held_prompt",
        "Prompts during active work",
        "The client withdraws a held prompt with $/cancel_request; it is answered -32800.",
        (
            *_TURN_START,
            c("prompt"),
            D,
            a("hold", 2),
            c("cancel_request", 2),
            D,
            a("withdraw", 2),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "hook_rejection",
        "Prompts that are never inserted",
        "A foreground hook runs before insertion and fails: error response, then idle error.",
        (c("prompt"), D, a("start"), a("reject", 1), a("end", "error"), D),
    ),
    Scenario(
        "failure",
        "Failures",
        "A model failure ends the work: the unfinished tool call is marked failed, then idle error.",
        (*_TURN_START, a("tool"), a("tool_run", "tc_1"), a("end", "error"), D),
    ),
    Scenario(
        "limits",
        "Stop reasons",
        "Foreground work stops at a token limit (max_tokens).",
        (*_TURN_START, a("say"), a("end", "max_tokens"), D),
    ),
    Scenario(
        "refusal",
        "Stop reasons",
        "The agent refuses to continue.",
        (*_TURN_START, a("end", "refusal"), D),
    ),
    Scenario(
        "local_command",
        "Work boundaries and local commands",
        "A local command handled without model work: running then idle end_turn.",
        (*_TURN_START, a("end", "end_turn"), D),
    ),
    Scenario(
        "background_terminal",
        "Background work",
        "A dev server keeps running after the turn: announced, listed, idle with it listed, exits, removed.",
        (
            *_TURN_START,
            a("bg_start", "terminal"),
            a("bg_list", TERM),
            a("end", "end_turn"),
            D,
            a("bg_finish", TERM),
            a("bg_unlist", TERM),
            D,
        ),
    ),
    Scenario(
        "background_tool_call",
        "Background work",
        "A watcher without a process stays on its in_progress tool call, listed until it completes.",
        (
            *_TURN_START,
            a("bg_start", "tool_call"),
            a("bg_list", BG_TOOL),
            a("end", "end_turn"),
            D,
            a("bg_finish", BG_TOOL),
            a("bg_unlist", BG_TOOL),
            D,
        ),
    ),
    Scenario(
        "followup_after_background",
        "Foreground and background work",
        "A finished background terminal starts agent-initiated foreground work, reported with its removal.",
        (
            *_TURN_START,
            a("bg_start", "terminal"),
            a("bg_list", TERM),
            a("end", "end_turn"),
            D,
            a("bg_finish", TERM),
            a("bg_unlist_followup", TERM),
            a("say"),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "subagent_child",
        "Session-directed messages",
        "A subagent child gets its task as a session_message from the parent, runs, goes idle, is removed.",
        (
            *_TURN_START,
            a("bg_start", "subagent"),
            a("bg_list", CHILD_ITEM),
            a("end", "end_turn"),
            D,
            a("bg_finish", CHILD_ITEM),
            a("bg_unlist", CHILD_ITEM),
            D,
        ),
    ),
    Scenario(
        "compaction",
        "Session compaction",
        "A compaction starts, streams a summary chunk, and completes with an authoritative summary.",
        (
            *_TURN_START,
            a("compact_start"),
            a("compact_chunk", "cmp_1"),
            a("compact_end", "cmp_1"),
            a("end", "end_turn"),
            D,
        ),
    ),
    Scenario(
        "notices_and_usage",
        "Session notices",
        "A warning notice and a usage update with cost, while idle and outside prompt processing.",
        (a("notice"), a("usage"), D),
    ),
    Scenario(
        "unknown_and_restore",
        "Session states",
        "Observability is lost during work (unknown) and a later snapshot restores running.",
        (*_TURN_START, a("lose"), a("restore"), a("end", "end_turn"), D),
    ),
    Scenario(
        "resume_with_replay",
        "Initial state and synchronization",
        "After close, resume with replay: history under the same IDs, then the state snapshot, "
        "then the response.",
        (
            *_TURN_START,
            a("say"),
            a("end", "end_turn"),
            D,
            c("close"),
            D,
            a("close_response"),
            D,
            c("resume", True),
            D,
            a("replay"),
            D,
        ),
    ),
    Scenario(
        "resume_without_replay",
        "Initial state and synchronization",
        "Resume without replay still sends a state snapshot before the response.",
        (c("close"), D, a("close_response"), D, c("resume", False), D, a("resync"), D),
    ),
    Scenario(
        "close_with_pending_prompts",
        "2. Prompt accepted",
        "Closing during work: the held prompt gets -32800, the work ends cancelled, then the close response.",
        (
            *_TURN_START,
            c("prompt"),
            D,
            a("hold", 2),
            c("close"),
            D,
            a("withdraw", 2),
            a("end", "cancelled"),
            a("close_response"),
            D,
        ),
    ),
    Scenario(
        "elicitation_form",
        "Lifecycle examples",
        "A form elicitation blocks the work (requires_action); the client accepts with the form's "
        "content and the work resumes (running).",
        (
            *_TURN_START,
            a("elicit", "form"),
            a("block"),
            D,
            c("elicit_accept", "elicit_1"),
            D,
            a("resume"),
            a("say"),
            a("end", "end_turn"),
            D,
        ),
        ELICITING,
    ),
    Scenario(
        "elicitation_url",
        "Lifecycle examples",
        "A URL elicitation: the accept leaves requires_action while the user finishes outside; the "
        "Agent reports the completion, then running.",
        (
            *_TURN_START,
            a("elicit", "url"),
            a("block"),
            D,
            c("elicit_accept", "elicit_1"),
            D,
            a("elicit_complete", "elicit_1"),
            a("resume"),
            a("say"),
            a("end", "end_turn"),
            D,
        ),
        ELICITING,
    ),
    Scenario(
        "elicitation_cancelled",
        "Cancellation",
        "session/cancel while an elicitation blocks the work: idle cancelled without its answer, "
        "then the Agent withdraws it with $/cancel_request and the client answers cancel.",
        (
            *_TURN_START,
            a("elicit", "form"),
            a("block"),
            D,
            c("cancel"),
            D,
            a("end", "cancelled"),
            a("elicit_withdraw", "elicit_1"),
            D,
            c("elicit_cancel", "elicit_1"),
            D,
        ),
        ELICITING,
    ),
    Scenario(
        "response_after_idle",
        "2. Prompt accepted",
        "Unordered delivery: the client receives the idle and output before the prompt response.",
        (
            c("prompt"),
            D,
            a("insert", 1),
            a("start"),
            a("user_message", 1),
            a("say"),
            a("answer", 1),
            a("end", "end_turn"),
            ("net", "to_client", 0),
            ("net", "to_client", 0),
            ("net", "to_client", 0),
            ("net", "to_client", 1),
            D,
        ),
        ROOMY.with_(transport="unordered"),
    ),
)

BY_NAME: dict[str, Scenario] = {s.name: s for s in SCENARIOS}
