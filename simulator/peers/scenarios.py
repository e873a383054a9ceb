"""The named scenario library: one scripted run per section of the spec, and more where a
section calls for it.

Owns: each scenario's script, its configuration, the spec section it illustrates and a one-line
description. A script is written as the steps of a counterexample are printed
(``simulator.peers.schedulers.describe``: ``agent.insert(1)``, ``client.allow('perm_1')``),
separated by spaces, with ``deliver`` flushing every message in flight, FIFO, and ``TURN`` for
the common start of a turn (``_TURN_TEXT``); ``script`` reads it, ``describe`` is its inverse.
Scripts are checked when run: every event must be enabled at its turn (``ScriptError``
otherwise).

Must not know: monitors' rules or the client view's expectations (tests hold those).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from properties.engine import MonitorSet
from simulator.peers.config import DEFAULT, Config
from simulator.peers.schedulers import Run, scripted

Step = tuple[str, str, Any] | str
_STEP = re.compile(r"deliver|(client|agent|net)\.(\w+)(\((?:[^()]|\([^()]*\))*\))?")


def script(text: str) -> tuple[Step, ...]:
    """The steps of ``text``: ``deliver``, or events as ``describe`` prints them (an argument
    is a Python literal); ``TURN`` stands for ``_TURN_TEXT``. Anything else is refused."""
    text = text.replace("TURN", _TURN_TEXT)
    if _STEP.sub("", text).strip():
        raise ValueError(f"not a script: {_STEP.sub('', text).strip()!r} in {text!r}")
    return tuple(
        "deliver" if actor is None else (actor, name, None if arg is None else ast.literal_eval(arg))
        for actor, name, arg in (m.groups() for m in _STEP.finditer(text))
    )


_TURN_TEXT = "client.prompt deliver agent.insert(1) agent.start agent.user_message(1) agent.answer(1)"

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
    text: str
    """The script as written (``script`` reads it)."""
    cfg: Config = ROOMY
    script: tuple[Step, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "script", script(self.text))

    def run(self, monitors: MonitorSet | None = None, faults: frozenset[str] = frozenset()) -> Run:
        return scripted(self.script, self.cfg, faults, monitors)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "basic_turn",
        "Prompt lifecycle",
        "A prompt is inserted, answered with its messageId, streamed, and ends with idle end_turn.",
        "TURN agent.say agent.say agent.end('end_turn') deliver",
    ),
    Scenario(
        "chunked_user_message",
        "2. Prompt accepted",
        "The user message arrives as chunks after the prompt response; running precedes insertion.",
        "client.prompt deliver agent.start agent.insert(1) agent.answer(1) deliver "
        "agent.user_chunks(1) agent.think agent.say agent.end('end_turn') deliver",
    ),
    Scenario(
        "plan_and_thought",
        "3. Agent reports output",
        "The agent reports a plan, a thought and a message during one turn.",
        "TURN agent.plan agent.think deliver agent.end('end_turn') deliver",
    ),
    Scenario(
        "permission",
        "5. Tool invocation and status reporting",
        "A tool call asks permission (requires_action), the client allows, work resumes (running).",
        "TURN agent.tool_ask deliver client.allow('perm_1') deliver agent.resume "
        "agent.tool_run('tc_1') agent.tool_done('tc_1') agent.end('end_turn') deliver",
    ),
    Scenario(
        "permission_denied",
        "Waiting for user action",
        "The client denies permission; the tool call fails and the turn ends.",
        "TURN agent.tool_ask deliver client.deny('perm_1') deliver agent.resume "
        "agent.tool_run('tc_1') agent.end('end_turn') deliver",
    ),
    Scenario(
        "start_blocked",
        "State transitions",
        "Work that starts blocked on permission reports requires_action without running first.",
        "client.prompt deliver agent.insert(1) agent.start_blocked agent.user_message(1) "
        "agent.answer(1) deliver client.allow('perm_1') deliver agent.resume agent.tool_run('tc_1') "
        "agent.tool_done('tc_1') agent.end('end_turn') deliver",
    ),
    Scenario(
        "cancellation_with_held_prompt",
        "Cancellation",
        "A second prompt is held; session/cancel withdraws it with -32800, the permission request of the "
        "cancelled work is withdrawn, and idle reports cancelled.",
        "TURN agent.tool_ask deliver client.prompt deliver agent.hold(2) client.cancel deliver "
        "agent.withdraw(2) agent.end('cancelled') deliver "
        "client.dismiss('perm_1') deliver",
    ),
    Scenario(
        "prompt_during_active_work",
        "Prompts during active work",
        "A prompt sent while running is inserted at once (steering) and answered; one idle ends it all.",
        "TURN agent.say client.prompt deliver agent.insert(2) agent.user_message(2) agent.answer(2) "
        "agent.say agent.end('end_turn') deliver",
    ),
    Scenario(
        "held_prompts_in_order",
        "Prompts during active work",
        "A prompt held during work is inserted after the running turn ends, in a turn of its own.",
        "TURN client.prompt deliver agent.hold(2) agent.end('end_turn') agent.insert(2) agent.start "
        "agent.user_message(2) agent.answer(2) agent.end('end_turn') deliver",
    ),
    Scenario(
        "cancel_request_held_prompt",
        "Prompts during active work",
        "The client withdraws a held prompt with $/cancel_request; it is answered -32800.",
        "TURN client.prompt deliver agent.hold(2) client.cancel_request(2) deliver agent.withdraw(2) "
        "agent.end('end_turn') deliver",
    ),
    Scenario(
        "hook_rejection",
        "Prompts that are never inserted",
        "A foreground hook runs before insertion and fails: error response, then idle error.",
        "client.prompt deliver agent.start agent.reject(1) agent.end('error') deliver",
    ),
    Scenario(
        "failure",
        "Failures",
        "A model failure ends the work: the unfinished tool call is marked failed, then idle error.",
        "TURN agent.tool agent.tool_run('tc_1') agent.end('error') deliver",
    ),
    Scenario(
        "limits",
        "Stop reasons",
        "Foreground work stops at a token limit (max_tokens).",
        "TURN agent.say agent.end('max_tokens') deliver",
    ),
    Scenario(
        "refusal",
        "Stop reasons",
        "The agent refuses to continue.",
        "TURN agent.end('refusal') deliver",
    ),
    Scenario(
        "local_command",
        "Work boundaries and local commands",
        "A local command handled without model work: running then idle end_turn.",
        "TURN agent.end('end_turn') deliver",
    ),
    Scenario(
        "background_terminal",
        "Background work",
        "A dev server keeps running after the turn: announced, listed, idle with it listed, exits, removed.",
        "TURN agent.bg_start('terminal') agent.bg_list(('terminal', 'term_1')) agent.end('end_turn') "
        "deliver agent.bg_finish(('terminal', 'term_1')) agent.bg_unlist(('terminal', 'term_1')) "
        "deliver",
    ),
    Scenario(
        "background_tool_call",
        "Background work",
        "A watcher without a process stays on its in_progress tool call, listed until it completes.",
        "TURN agent.bg_start('tool_call') agent.bg_list(('tool_call', 'tc_bg_1')) "
        "agent.end('end_turn') deliver agent.bg_finish(('tool_call', 'tc_bg_1')) "
        "agent.bg_unlist(('tool_call', 'tc_bg_1')) deliver",
    ),
    Scenario(
        "followup_after_background",
        "Foreground and background work",
        "A finished background terminal starts agent-initiated foreground work, reported with its removal.",
        "TURN agent.bg_start('terminal') agent.bg_list(('terminal', 'term_1')) agent.end('end_turn') "
        "deliver agent.bg_finish(('terminal', 'term_1')) agent.bg_unlist_followup(('terminal', "
        "'term_1')) agent.say agent.end('end_turn') deliver",
    ),
    Scenario(
        "subagent_child",
        "Session-directed messages",
        "A subagent child gets its task as a session_message from the parent, runs, goes idle, is removed.",
        "TURN agent.bg_start('subagent') agent.bg_list(('subagent', 'sess_2')) agent.end('end_turn') "
        "deliver agent.bg_finish(('subagent', 'sess_2')) agent.bg_unlist(('subagent', 'sess_2')) "
        "deliver",
    ),
    Scenario(
        "compaction",
        "Session compaction",
        "A compaction starts, streams a summary chunk, and completes with an authoritative summary.",
        "TURN agent.compact_start agent.compact_chunk('cmp_1') agent.compact_end('cmp_1') "
        "agent.end('end_turn') deliver",
    ),
    Scenario(
        "notices_and_usage",
        "Session notices",
        "A warning notice and a usage update with cost, while idle and outside prompt processing.",
        "agent.notice agent.usage deliver",
    ),
    Scenario(
        "unknown_and_restore",
        "Session states",
        "Observability is lost during work (unknown) and a later snapshot restores running.",
        "TURN agent.lose agent.restore agent.end('end_turn') deliver",
    ),
    Scenario(
        "resume_with_replay",
        "Initial state and synchronization",
        "After close, resume with replay: history under the same IDs, then the state snapshot, then the "
        "response.",
        "TURN agent.say agent.end('end_turn') deliver client.close deliver agent.close_response "
        "deliver client.resume(True) deliver agent.replay deliver",
    ),
    Scenario(
        "resume_without_replay",
        "Initial state and synchronization",
        "Resume without replay still sends a state snapshot before the response.",
        "client.close deliver agent.close_response deliver client.resume(False) deliver agent.resync deliver",
    ),
    Scenario(
        "close_with_pending_prompts",
        "2. Prompt accepted",
        "Closing during work: the held prompt gets -32800, the work ends cancelled, then the close response.",
        "TURN client.prompt deliver agent.hold(2) client.close deliver agent.withdraw(2) "
        "agent.end('cancelled') agent.close_response deliver",
    ),
    Scenario(
        "elicitation_form",
        "Lifecycle examples",
        "A form elicitation blocks the work (requires_action); the client accepts with the form's content "
        "and the work resumes (running).",
        "TURN agent.elicit('form') agent.block deliver client.elicit_accept('elicit_1') deliver "
        "agent.resume agent.say agent.end('end_turn') deliver",
        ELICITING,
    ),
    Scenario(
        "elicitation_url",
        "Lifecycle examples",
        "A URL elicitation: the accept leaves requires_action while the user finishes outside; the Agent "
        "reports the completion, then running.",
        "TURN agent.elicit('url') agent.block deliver client.elicit_accept('elicit_1') deliver "
        "agent.elicit_complete('elicit_1') agent.resume agent.say agent.end('end_turn') deliver",
        ELICITING,
    ),
    Scenario(
        "elicitation_cancelled",
        "Cancellation",
        "session/cancel while an elicitation blocks the work: the Agent withdraws it with $/cancel_request, "
        "idle cancelled without its answer, and the client answers cancel.",
        "TURN agent.elicit('form') agent.block deliver client.cancel deliver agent.end('cancelled') "
        "deliver client.elicit_cancel('elicit_1') deliver",
        ELICITING,
    ),
    Scenario(
        "response_after_idle",
        "2. Prompt accepted",
        "Unordered delivery: the client receives the idle and output before the prompt response.",
        "client.prompt deliver agent.insert(1) agent.start agent.user_message(1) agent.say "
        "agent.answer(1) agent.end('end_turn') net.to_client(0) net.to_client(0) net.to_client(0) "
        "net.to_client(1) deliver",
        ROOMY.with_(transport="unordered"),
    ),
)

BY_NAME: dict[str, Scenario] = {s.name: s for s in SCENARIOS}
