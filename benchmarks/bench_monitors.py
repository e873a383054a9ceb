"""Throughput of the monitors: ``MonitorSet.feed`` over a realistic message mix, and clone speed.

Run: ``python benchmarks/bench_monitors.py [--messages N] [--sessions K]``.

The mix is built in memory (no JSON decoding is timed): turns spread round-robin over K
sessions (default 100), each turn being a prompt, running, a user message, a plan, a thought
streamed in chunks, an agent message streamed in chunks, a tool call (pending, in_progress,
content chunks, completed), a usage update, the prompt response and an idle with end_turn;
every tenth turn also starts a background terminal, lists it, ends it and drops it from the list.
About 70% of the messages are chunks, as in real sessions.

It prints, for all monitors together and for each monitor class alone: messages/s and
microseconds per message; then the cost of ``MonitorSet.clone()``, of a clone fed one message
(what a memoizing explorer pays per new state), and of ``state_key()`` after the run, against
``copy.deepcopy``. Figures only: no asserts.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from properties.engine import MonitorSet
from properties.monitors import ALL_MONITORS

Msg = dict[str, Any]


def _upd(sid: str, upd: dict[str, Any]) -> Msg:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": upd}}


def _text(t: str) -> dict[str, str]:
    return {"type": "text", "text": t}


def turn(t: int, sid: str) -> list[tuple[str, Msg]]:
    """One realistic prompt turn (numbers make every ID fresh)."""
    u, a, th, tc = f"u{t}", f"a{t}", f"t{t}", f"tc{t}"
    out: list[tuple[str, Msg]] = [
        (
            "client",
            {
                "jsonrpc": "2.0",
                "id": t,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": [_text("Fix the failing test")]},
            },
        ),
        ("agent", _upd(sid, {"sessionUpdate": "state_update", "state": "running", "background": []})),
        (
            "agent",
            _upd(
                sid,
                {"sessionUpdate": "user_message", "messageId": u, "content": [_text("Fix the failing test")]},
            ),
        ),
        (
            "agent",
            _upd(
                sid,
                {
                    "sessionUpdate": "plan_update",
                    "plan": {
                        "type": "items",
                        "planId": f"p{t}",
                        "entries": [{"content": "look", "priority": "medium", "status": "pending"}],
                    },
                },
            ),
        ),
    ]
    out += [
        (
            "agent",
            _upd(
                sid, {"sessionUpdate": "agent_thought_chunk", "messageId": th, "content": _text("thinking ")}
            ),
        )
        for _ in range(4)
    ]
    out += [
        (
            "agent",
            _upd(
                sid,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": a,
                    "content": _text("Looking at the test. "),
                },
            ),
        )
        for _ in range(8)
    ]
    out += [
        (
            "agent",
            _upd(
                sid,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tc,
                    "status": "pending",
                    "title": "Run tests",
                    "kind": "execute",
                },
            ),
        ),
        (
            "agent",
            _upd(sid, {"sessionUpdate": "tool_call_update", "toolCallId": tc, "status": "in_progress"}),
        ),
    ]
    out += [
        (
            "agent",
            _upd(
                sid,
                {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": tc,
                    "content": {"type": "content", "content": _text("ok\n")},
                },
            ),
        )
        for _ in range(4)
    ]
    out += [
        ("agent", _upd(sid, {"sessionUpdate": "tool_call_update", "toolCallId": tc, "status": "completed"})),
        (
            "agent",
            _upd(sid, {"sessionUpdate": "agent_message_chunk", "messageId": a, "content": _text("Done.")}),
        ),
        ("agent", _upd(sid, {"sessionUpdate": "usage_update", "used": 1200 + t, "size": 200000})),
        ("agent", {"jsonrpc": "2.0", "id": t, "result": {"messageId": u}}),
    ]
    if t % 10 == 0:
        term = f"term{t}"
        out += [
            (
                "agent",
                _upd(sid, {"sessionUpdate": "terminal_update", "terminalId": term, "command": "npm run dev"}),
            ),
            (
                "agent",
                _upd(
                    sid,
                    {
                        "sessionUpdate": "state_update",
                        "state": "running",
                        "background": [{"type": "terminal", "terminalId": term}],
                    },
                ),
            ),
            (
                "agent",
                _upd(
                    sid,
                    {"sessionUpdate": "terminal_update", "terminalId": term, "exitStatus": {"exitCode": 0}},
                ),
            ),
        ]
    out.append(
        (
            "agent",
            _upd(
                sid,
                {
                    "sessionUpdate": "state_update",
                    "state": "idle",
                    "stopReason": "end_turn",
                    "background": [],
                },
            ),
        )
    )
    return out


def message_mix(messages: int, sessions: int) -> list[tuple[str, Msg]]:
    out: list[tuple[str, Msg]] = []
    t = 0
    while len(out) < messages:
        t += 1
        out.extend(turn(t, f"sess_{t % sessions}"))
    return out


def feed_all(monitors: Any, mix: list[tuple[str, Msg]]) -> tuple[float, MonitorSet]:
    ms = MonitorSet(monitors)
    feed = ms.feed
    start = time.perf_counter()
    for line, (sender, msg) in enumerate(mix, 1):
        feed(sender, msg, line)
    ms.finish()
    elapsed = time.perf_counter() - start
    assert not [f for f in ms.findings if f.kind == "rule"], ms.findings[:3]
    return elapsed, ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--messages", type=int, default=300_000)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    mix = message_mix(args.messages, args.sessions)
    n = len(mix)
    print(f"{n:,} messages over {args.sessions} sessions; python {sys.version.split()[0]}")
    start = time.perf_counter()
    for _sender, _msg in mix:
        pass
    loop = time.perf_counter() - start
    print(f"{'monitors':<20} {'messages/s':>12} {'us/message':>11}")
    print(f"{'(empty loop)':<20} {n / loop:12,.0f} {loop / n * 1e6:11.3f}")
    seconds, _ = feed_all(None, mix)
    print(f"{'all':<20} {n / seconds:12,.0f} {seconds / n * 1e6:11.3f}")
    for cls in ALL_MONITORS:
        s, _ = feed_all([cls], mix)
        print(f"{cls.__name__:<20} {n / s:12,.0f} {s / n * 1e6:11.3f}")

    small = MonitorSet()
    for line, (sender, msg) in enumerate(mix[:200], 1):
        small.feed(sender, msg, line)
    reps = 2000
    start = time.perf_counter()
    for _ in range(reps):
        small.clone()
    clone_us = (time.perf_counter() - start) / reps * 1e6
    start = time.perf_counter()
    for _ in range(reps):
        hash(small.state_key())
    key_us = (time.perf_counter() - start) / reps * 1e6
    start = time.perf_counter()
    for _ in range(reps):
        small.clone().feed(*mix[200], 201)
    clone_feed_us = (time.perf_counter() - start) / reps * 1e6
    start = time.perf_counter()
    for _ in range(reps // 20):
        copy.deepcopy(small)
    deep_us = (time.perf_counter() - start) / (reps // 20) * 1e6
    print(
        f"after 200 messages: clone {clone_us:.1f} us, clone+feed one message {clone_feed_us:.1f} us, "
        f"state_key+hash {key_us:.1f} us, copy.deepcopy {deep_us:.1f} us ({deep_us / clone_us:.0f}x clone)"
    )


if __name__ == "__main__":
    main()
