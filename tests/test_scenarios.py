"""Hand-written client-view expectations for every named scenario (simulator/peers/scenarios.py).

Each expectation below was worked out by reading the scenario's script and the spec, not by
running it: which updates the agent sends for each scripted choice, in what order the client
receives them, and how the spec says a client folds them (sections cited per scenario). IDs
follow the agent's naming: one counter for every messageId (``msg_u_N`` user messages,
``msg_a_N`` agent messages, ``msg_t_N`` thoughts, ``msg_s_N`` session messages), ``tc_N`` tool
calls, ``tc_bg_N`` background tool calls, ``term_N`` terminals, ``cmp_N`` compactions,
``perm_N`` permission requests, ``plan_1`` the plan. JSON-RPC ids count the client's requests.

Per session the view's state, background (None = not reported), completions, last stop
reason, usage, timeline (types and ids in order), the named fields of each entity, and the
prompt bookkeeping (request id -> messageId or None, and error codes) are compared; the set
of sessions and of entities must match exactly.

Also: every scenario runs without ScriptError, its transcript validates against the official
schema (skipped without ../shared), and the real monitors (when properties.monitors exists)
find nothing in it.

Must not know: the agent's or the view's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from properties.schema_check import SchemaChecker
from simulator.peers.agent import CHILD, MAIN
from simulator.peers.config import Config
from simulator.peers.scenarios import BY_NAME, SCENARIOS
from simulator.peers.schedulers import Run
from simulator.peers.world import World
from tests.check_support import real_monitors_available, schema_path

Json = Any


def T(t: str) -> dict[str, str]:
    """A text content block."""
    return {"type": "text", "text": t}


def TC(t: str) -> dict[str, Any]:
    """Tool call content wrapping a text block."""
    return {"type": "content", "content": T(t)}


NO_USAGE = {"used": None, "size": None, "cost": None}
CANCELLED = -32800  # spec: Cancellation, request cancellation
INVALID_PARAMS = -32602

U1 = ("user_message", "msg_u_1")
PROMPT_1 = {"content": [T("prompt 1")]}
EDIT_TOOL = {"title": "Edit file", "kind": "edit"}
TERM_ITEM = {"type": "terminal", "terminalId": "term_1"}
BG_TOOL_ITEM = {"type": "tool_call", "toolCallId": "tc_bg_1"}
CHILD_ITEM = {"type": "subagent", "sessionId": CHILD}


@dataclass
class S:
    """What one session of the client view must show at the end of a scenario."""

    state: str = "idle"
    completions: int = 1
    stop: str | None = "end_turn"
    background: list[Json] | None = None
    timeline: list[tuple[str, str]] = field(default_factory=list)
    entities: dict[tuple[str, str], dict[str, Json]] = field(default_factory=dict)
    """Named fields of some entities (every entity must be in the timeline)."""
    prompts: dict[str, str | None] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    usage: dict[str, Json] = field(default_factory=lambda: dict(NO_USAGE))
    notices: int = 0
    subagents: dict[str, Json] = field(default_factory=dict)
    elicitations: dict[str, Json] = field(default_factory=dict)


def turn(*timeline: tuple[str, str], **kw: Any) -> S:
    """A session after one prompt (id 1) inserted as msg_u_1 and reported in full."""
    entities = {U1: PROMPT_1, **kw.pop("entities", {})}
    prompts = {"1": "msg_u_1", **kw.pop("prompts", {})}
    return S(timeline=[U1, *timeline], entities=entities, prompts=prompts, **kw)


EXPECTED: dict[str, dict[str, S]] = {
    # Prompt lifecycle; Message IDs: a full agent_message then a chunk appends to it.
    "basic_turn": {
        MAIN: turn(
            ("agent_message", "msg_a_2"),
            entities={("agent_message", "msg_a_2"): {"content": [T("Hello"), T(" more")]}},
        )
    },
    # 2. Prompt accepted: running before insertion; the response arrives before the user message,
    # whose chunks create it (Entity IDs: a chunk for an unseen ID creates it) and append.
    "chunked_user_message": {
        MAIN: S(
            # the message streams under its thought's messageId: one ID, two entities (type, ID)
            timeline=[U1, ("agent_thought", "msg_t_2"), ("agent_message", "msg_t_2")],
            entities={
                U1: {"content": [T("prompt "), T("1")]},
                ("agent_thought", "msg_t_2"): {"content": [T("hmm")]},
                ("agent_message", "msg_t_2"): {"content": [T("Hello")]},
            },
            prompts={"1": "msg_u_1"},
        )
    },
    # 3. Agent reports output: plan, thought chunk; each a timeline entity in receive order.
    "plan_and_thought": {
        MAIN: turn(
            ("plan", "plan_1"),
            ("agent_thought", "msg_t_2"),
            entities={
                ("plan", "plan_1"): {
                    "plan": {
                        "type": "items",
                        "planId": "plan_1",
                        "entries": [{"content": "step 1", "priority": "medium", "status": "pending"}],
                    },
                    "removed": False,
                },
                ("agent_thought", "msg_t_2"): {"content": [T("hmm")]},
            },
        )
    },
    # 5. Tool invocation: pending -> in_progress (+ a content chunk) -> completed whose content
    # replaces the chunk; requires_action -> running -> idle is one completion.
    "permission": {
        MAIN: turn(
            ("tool_call", "tc_1"),
            entities={("tool_call", "tc_1"): {**EDIT_TOOL, "status": "completed", "content": [TC("done")]}},
        )
    },
    # Waiting for user action: denied -> the tool call fails; the work still ends end_turn.
    "permission_denied": {
        MAIN: turn(
            ("tool_call", "tc_1"),
            entities={("tool_call", "tc_1"): {**EDIT_TOOL, "status": "failed", "content": []}},
        )
    },
    # State transitions: requires_action directly; the tool call is sent before the user message.
    "start_blocked": {
        MAIN: S(
            timeline=[("tool_call", "tc_1"), U1],
            entities={
                U1: PROMPT_1,
                ("tool_call", "tc_1"): {**EDIT_TOOL, "status": "completed", "content": [TC("done")]},
            },
            prompts={"1": "msg_u_1"},
        )
    },
    # Cancellation: the held prompt 2 gets -32800 and never a messageId; the unfinished tool call
    # gets a final status (cancelled); idle carries the cancelled stop reason.
    "cancellation_with_held_prompt": {
        MAIN: turn(
            ("tool_call", "tc_1"),
            entities={("tool_call", "tc_1"): {**EDIT_TOOL, "status": "cancelled", "content": []}},
            stop="cancelled",
            prompts={"2": None},
            rejected={"2": CANCELLED},
        )
    },
    # Prompts during active work: prompt 2 inserted at once as a new user message after the agent
    # message; a later chunk patches msg_a_2 in place (no move); one idle, one completion.
    "prompt_during_active_work": {
        MAIN: turn(
            ("agent_message", "msg_a_2"),
            ("user_message", "msg_u_3"),
            entities={
                ("agent_message", "msg_a_2"): {"content": [T("Hello"), T(" more")]},
                ("user_message", "msg_u_3"): {"content": [T("prompt 2")]},
            },
            prompts={"2": "msg_u_3"},
        )
    },
    # Prompts during active work / Work boundaries: the held prompt is inserted after the first
    # turn's idle and starts a second turn: two completions, two distinct messageIds.
    "held_prompts_in_order": {
        MAIN: turn(
            ("user_message", "msg_u_2"),
            entities={("user_message", "msg_u_2"): {"content": [T("prompt 2")]}},
            completions=2,
            prompts={"2": "msg_u_2"},
        )
    },
    # Prompts during active work: $/cancel_request withdraws the held prompt with -32800.
    "cancel_request_held_prompt": {
        MAIN: turn(prompts={"2": None}, rejected={"2": CANCELLED}),
    },
    # Prompts that are never inserted: error response, no user message; the hook was foreground
    # work, so idle (error) ends it and is a completion.
    "hook_rejection": {
        MAIN: S(stop="error", prompts={"1": None}, rejected={"1": INVALID_PARAMS}),
    },
    # Failures: the unfinished tool call is failed before idle error; its streamed content stays.
    "failure": {
        MAIN: turn(
            ("tool_call", "tc_1"),
            entities={("tool_call", "tc_1"): {**EDIT_TOOL, "status": "failed", "content": [TC("working")]}},
            stop="error",
        )
    },
    # Stop reasons.
    "limits": {
        MAIN: turn(
            ("agent_message", "msg_a_2"),
            entities={("agent_message", "msg_a_2"): {"content": [T("Hello")]}},
            stop="max_tokens",
        )
    },
    "refusal": {MAIN: turn(stop="refusal")},
    # Work boundaries and local commands: running -> idle end_turn, nothing else.
    "local_command": {MAIN: turn()},
    # Background work: the terminal is announced, listed on running and idle, exits, then a
    # repeated idle with [] removes it (not a new completion; the stop reason is kept).
    "background_terminal": {
        MAIN: turn(
            ("terminal", "term_1"),
            entities={
                ("terminal", "term_1"): {
                    "command": "npm run dev",
                    "exitStatus": {"exitCode": 0},
                    "output": None,
                }
            },
            background=[],
        )
    },
    "background_tool_call": {
        MAIN: turn(
            ("tool_call", "tc_bg_1"),
            entities={
                ("tool_call", "tc_bg_1"): {
                    "title": "Watch files",
                    "kind": "execute",
                    "status": "completed",
                    "content": [],
                }
            },
            background=[],
        )
    },
    # Foreground and background work: the removal snapshot reports running (follow-up work),
    # which later ends: two completions.
    "followup_after_background": {
        MAIN: turn(
            ("terminal", "term_1"),
            ("agent_message", "msg_a_2"),
            entities={
                ("terminal", "term_1"): {"command": "npm run dev", "exitStatus": {"exitCode": 0}},
                ("agent_message", "msg_a_2"): {"content": [T("Hello")]},
            },
            completions=2,
            background=[],
        )
    },
    # Session-directed messages: the child's task is an outgoing session_message in the parent's
    # transcript and an incoming one from the parent in the child's, under the same ID (IDs are
    # scoped to a session) and linked by a later update of each; the child runs and goes idle;
    # the parent's roster mirrors idle.
    "subagent_child": {
        MAIN: turn(
            ("session_message", "msg_s_2"),
            entities={
                ("session_message", "msg_s_2"): {
                    "content": [T("Summarize the logs")],
                    "senderSessionId": None,
                    "recipientSessionId": CHILD,
                    "recipientMessageId": "msg_s_2",
                }
            },
            background=[],
            subagents={
                CHILD: {
                    "title": "helper",
                    "state": {"state": "idle", "stopReason": "end_turn", "background": []},
                }
            },
        ),
        CHILD: S(
            background=[],
            timeline=[("session_message", "msg_s_2")],
            entities={
                ("session_message", "msg_s_2"): {
                    "content": [T("Summarize the logs")],
                    "senderSessionId": MAIN,
                    "recipientSessionId": None,
                    "senderMessageId": "msg_s_2",
                }
            },
        ),
    },
    # Session compaction: the completed update's summary replaces the streamed chunk.
    "compaction": {
        MAIN: turn(
            ("compaction", "cmp_1"),
            entities={
                ("compaction", "cmp_1"): {
                    "status": "completed",
                    "summary": [T("Summary of earlier turns")],
                    "error": None,
                }
            },
        )
    },
    # Session notices / usage updates while idle: no state change, no completion, no entity.
    "notices_and_usage": {
        MAIN: S(
            completions=0,
            stop=None,
            notices=1,
            usage={"used": 1200, "size": 200000, "cost": {"amount": 0.01, "currency": "USD"}},
        )
    },
    # Session states: unknown, then a running snapshot (not a start), then idle ends the work.
    "unknown_and_restore": {MAIN: turn()},
    # Initial state and synchronization: replayed history under the same IDs patches the same
    # entities (no duplicates); the resume snapshot is idle without a new completion.
    "resume_with_replay": {
        MAIN: turn(
            ("agent_message", "msg_a_2"),
            entities={("agent_message", "msg_a_2"): {"content": [T("Hello")]}},
        )
    },
    # A session first seen through session/resume is not assumed idle; its idle snapshot is no
    # completion.
    "resume_without_replay": {MAIN: S(completions=0, stop=None)},
    # 2. Prompt accepted: closing cancels the held prompt (-32800) and the work (cancelled).
    "close_with_pending_prompts": {
        MAIN: turn(stop="cancelled", prompts={"2": None}, rejected={"2": CANCELLED}),
    },
    # Lifecycle examples: an elicitation answered (form), or accepted and completed outside (URL),
    # leaves nothing pending in the view.
    "elicitation_form": {
        MAIN: turn(
            ("agent_message", "msg_a_2"),
            entities={("agent_message", "msg_a_2"): {"content": [T("Hello")]}},
        )
    },
    "elicitation_url": {
        MAIN: turn(
            ("agent_message", "msg_a_2"),
            entities={("agent_message", "msg_a_2"): {"content": [T("Hello")]}},
        )
    },
    # Cancellation: the cancelled idle comes without the elicitation's answer; its withdrawal
    # dismisses it.
    "elicitation_cancelled": {MAIN: turn(stop="cancelled")},
    # 2. Prompt accepted: the response may come after the output and the idle; the client still
    # ends idle after one completion with the association from the response.
    "response_after_idle": {
        MAIN: turn(
            ("agent_message", "msg_a_2"),
            entities={("agent_message", "msg_a_2"): {"content": [T("Hello")]}},
        )
    },
}

KNOWN_BAD: dict[str, str] = {}


def _session_view(view: dict[str, Json], sid: str) -> dict[str, Json]:
    assert sid in view, f"no session {sid} in the view"
    return view[sid]  # type: ignore[no-any-return]


def check_session(got: dict[str, Json], want: S) -> None:
    sess = got["session"]
    assert sess["state"] == want.state
    assert sess["background"] == want.background
    assert sess["completions"] == want.completions
    assert sess["last_stop_reason"] == want.stop
    assert sess["usage"] == want.usage
    assert sess["notices"] == want.notices
    assert sess["prompts"] == want.prompts
    assert sess["rejected_prompts"] == want.rejected
    assert sess["subagents"] == want.subagents
    assert sess["elicitations"] == want.elicitations
    assert sess["malformed_updates"] == 0
    assert got["preserved"] == []
    assert [tuple(item) for item in got["timeline"]] == want.timeline
    present = {(etype, eid) for etype, ents in got["entities"].items() for eid in ents}
    assert present == set(want.timeline)
    for (etype, eid), fields in want.entities.items():
        ent = got["entities"][etype][eid]
        for name, value in fields.items():
            assert ent[name] == value, f"{etype} {eid}: {name}"


def test_every_scenario_has_an_expectation() -> None:
    assert sorted(EXPECTED) == sorted(BY_NAME)
    assert len(SCENARIOS) == len(BY_NAME)


def _cases() -> list[Any]:
    out = []
    for s in SCENARIOS:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BAD[s.name])] if s.name in KNOWN_BAD else []
        out.append(pytest.param(s.name, marks=marks, id=s.name))
    return out


@pytest.mark.parametrize("name", _cases())
def test_client_view(name: str) -> None:
    run = BY_NAME[name].run()
    view = run.world.client.view.to_json()
    want = EXPECTED[name]
    assert sorted(view) == sorted(want)
    for sid, expected in want.items():
        check_session(_session_view(view, sid), expected)


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_scenario_runs_and_settles(name: str) -> None:
    """No ScriptError, nothing left in flight, and the agent itself ended idle (spec: Work
    boundaries: when no foreground activity remains the Agent reports idle)."""
    run = BY_NAME[name].run()
    world = run.world
    assert run.stop in ("quiescent", "end of script")
    assert not world.net.to_agent and not world.net.to_client
    assert world.agent.real == "idle" and world.agent.reported == "idle"
    assert world.transcript, "a scenario sends something"


@pytest.mark.needs_shared
@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_scenario_transcript_validates(name: str, checker: SchemaChecker) -> None:
    run = BY_NAME[name].run()
    checker.reset()
    for line, (sender, msg) in enumerate(run.world.transcript, 1):
        finding = checker.check(sender, msg, line)
        assert finding is None, f"line {line}: {finding}"


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_scenario_has_no_monitor_findings(name: str) -> None:
    if not real_monitors_available():
        pytest.skip("properties.monitors (the rule monitors) is not present yet")
    from properties.engine import MonitorSet

    run = BY_NAME[name].run(MonitorSet())
    assert run.findings == []


@pytest.fixture(scope="module")
def checker() -> SchemaChecker:
    return SchemaChecker(schema_path())


# -- the receive order of response_after_idle ------------------------------------------------------
def client_receipts(run: Run, cfg: Config) -> list[dict[str, Json]]:
    """Agent messages in the order the client received them (re-stepping the run's events)."""
    world = World(cfg)
    # The handshake (initialize, session/new) is answered before any event: received at once.
    out: list[dict[str, Json]] = [m for s, m in world.transcript if s == "agent"]
    for ev in run.events:
        if ev[:2] == ("net", "to_client"):
            out.append(world.net.to_client[ev[2]])
        world.step(ev)
    return out


def test_response_after_idle_only_moves_the_response() -> None:
    """2. Prompt accepted: only the response has no fixed order relative to the session updates;
    the scenario should show it arriving after the output and the idle, the updates in order."""
    scenario = BY_NAME["response_after_idle"]
    run = scenario.run()
    received = client_receipts(run, scenario.cfg)
    sent = [m for s, m in run.world.transcript if s == "agent"]
    updates_sent = [m for m in sent if "method" in m]
    updates_received = [m for m in received if "method" in m]
    assert updates_received == updates_sent
    assert "result" in received[-1] and received[-1]["id"] == 1


def test_client_receipts_follow_fifo_delivery() -> None:
    """The helper above is right for FIFO scenarios: receive order is send order."""
    scenario = BY_NAME["basic_turn"]
    run = scenario.run()
    assert client_receipts(run, scenario.cfg) == [m for s, m in run.world.transcript if s == "agent"]


def test_a_script_reads_the_steps_as_describe_prints_them() -> None:
    """Scripts are written in ``describe``'s notation: reading every scenario's steps back from
    it gives the same steps, and text that is no step is refused."""
    from simulator.peers.scenarios import script
    from simulator.peers.schedulers import describe

    for scenario in SCENARIOS:
        text = " ".join(s if isinstance(s, str) else describe(s) for s in scenario.script)
        assert script(text) == scenario.script
    with pytest.raises(ValueError, match="not a script"):
        script("agent.say agnet.end('end_turn')")
