"""FAIL-04, stated once in ``model.between`` (FAILED_TOOLS_FINAL): the tool calls of failed work.

"Before reporting the failure, the Agent SHOULD give each tool call that the failed work left
unfinished a terminal status ... Listed background work, and tool calls that reference a listed
terminal, are not part of the failed work and keep running" (Failures). The tool monitor judges
an unfinished tool call at the error idle when a concrete background list reported since its
first report left it out (``Rules.failed_work_tool``); one no list has ruled on may be
background work announced before its first list, a suspect (judged at the end of a complete
transcript). The simulated Agent reads the same declaration: under
``tool-updates-after-idle=background`` an in_progress tool call may carry on past an error idle
as independent work only where no list leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence

from model import between as bw
from properties.engine import MonitorSet
from simulator.explore.common import new_monitors
from simulator.peers.config import SMALL
from simulator.peers.schedulers import scripted
from tests.wire_dsl import Line, answer, item, prompt, state, tool, user

_ERROR = {"code": -32603, "message": "model request failed"}


def _found(lines: Sequence[Line], quiescent: bool) -> list[tuple[str, int | None, str]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent)
    return sorted((f.rule, f.line, f.kind) for f in ms.findings if f.kind in ("rule", "open"))


_TURN = [prompt(1), state("running", bg=[]), user("u1"), answer(1, "u1"), tool("t1", "in_progress")]


def test_a_tool_call_a_list_leaves_out_was_owed_its_terminal_status_before_the_error_idle() -> None:
    assert bw.SPEC.failed_work_tool(left_out_by_a_list=True)
    lines = [*_TURN, state("idle", stop="error", error=_ERROR, bg=[])]
    assert _found(lines, quiescent=False) == [("FAIL-04", 6, "rule")]
    listed = [*_TURN, state("idle", stop="error", error=_ERROR, bg=[item("tool_call", "t1")])]
    assert _found(listed, quiescent=False) == []


def test_one_no_list_has_ruled_on_is_a_suspect_until_the_transcript_is_complete() -> None:
    assert not bw.SPEC.failed_work_tool(left_out_by_a_list=False)
    turn = [prompt(1), state("running"), user("u1"), answer(1, "u1"), tool("t1", "in_progress")]
    lines = [*turn, state("idle", stop="error", error=_ERROR)]
    assert _found(lines, quiescent=False) == [("FAIL-04", 6, "open")]
    assert _found(lines, quiescent=True) == [("FAIL-04", 6, "rule")]
    assert _found([*lines, tool("t1", "completed")], quiescent=True) == []  # it carried on


_P = ("client", "prompt", None)
_START = [_P, "deliver", ("agent", "insert", 1), ("agent", "user_message", 1), ("agent", "start", None)]
_WORK = [("agent", "tool", None), ("agent", "tool_run", "tc_1"), ("agent", "answer", 1)]


def test_the_agent_carries_a_tool_call_past_an_error_idle_only_where_no_list_leaves_it_out() -> None:
    quiet = SMALL.with_(features=frozenset({"fail"}), prompts=2, capacity=8)
    run = scripted([*_START, "deliver", *_WORK], quiet, frozenset(), settle=False)
    assert ("agent", "end_error_carrying", None) in run.world.enabled()
    carrying = ("agent", "end_error_carrying", None)
    run = scripted([*_START, "deliver", *_WORK, carrying], quiet, frozenset(), settle=False)
    assert ("agent", "carried_done", "tc_1") in run.world.enabled()  # it carries on, unlisted
    run = scripted([*_START, "deliver", *_WORK, ("agent", "end", "error")], quiet, frozenset(), settle=False)
    assert ("agent", "carried_done", "tc_1") not in run.world.enabled()  # the plain end fails it
    run = scripted(
        [*_START, "deliver", *_WORK, carrying, ("agent", "carried_done", "tc_1")],
        quiet,
        frozenset(),
        new_monitors(True, quiet),
    )
    assert [f.rule for f in run.findings if f.kind == "rule"] == []
    lists = SMALL.with_(features=frozenset({"fail", "terminal"}), prompts=2, capacity=8)
    script = [
        *_START,
        "deliver",
        ("agent", "bg_start", "terminal"),
        ("agent", "bg_list", ("terminal", "term_1")),
    ]
    assert carrying not in scripted([*script, *_WORK], lists, frozenset(), settle=False).world.enabled()
    run = scripted(
        [*script, *_WORK, ("agent", "end", "error")], lists, frozenset(), new_monitors(True, lists)
    )
    failed = run.world.transcript[-2][1]["params"]["update"]  # failed before the idle
    assert (failed["toolCallId"], failed["status"]) == ("tc_1", "failed")
    assert [f.rule for f in run.findings if f.kind == "rule"] == []


def test_the_seeded_bug_error_with_live_tools_deviates_only_at_an_error_idle() -> None:
    """Its Withhold of the tool call table's ``fail`` leaves the work's tool calls unfinished at
    the error idle (FAIL-04); at an idle ending work for another reason it deviates from nothing."""
    cfg = SMALL.with_(features=frozenset({"fail", "limits"}), prompts=2, capacity=8)
    bug = frozenset({"error-with-live-tools"})
    for reason, breaks in (("error", True), ("end_turn", False), ("max_tokens", False)):
        run = scripted([*_START, "deliver", *_WORK, ("agent", "end", reason)], cfg, bug, settle=False)
        assert any(h.rule == bw.FAILED_TOOLS_FINAL.rule for h in run.world.hidden) is breaks, reason
