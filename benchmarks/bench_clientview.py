"""Throughput of the reference client view (model/clientview.py).

Run: ``python benchmarks/bench_clientview.py [N]``. Builds a synthetic stream of N session
updates (chunks, upserts, tool calls, state snapshots over a few sessions and a bounded pool of
entity IDs), then times ``apply`` per message, ``snapshot`` after every message (what the
exhaustive explorer does on small runs) and ``to_json`` once at the end. Figures only: no asserts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from cli.options import positive_int
from model.clientview import ClientView


def _stream(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    states = ["running", "idle", "requires_action", "running", "idle"]
    for i in range(n):
        sid = f"s{i % 4}"
        k = i % 10
        if k < 5:
            update: dict[str, Any] = {
                "sessionUpdate": "agent_message_chunk",
                "messageId": f"m{i // 50}",
                "content": {"type": "text", "text": "token "},
            }
        elif k < 7:
            update = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": f"t{i // 20}",
                "status": "in_progress",
            }
        elif k == 7:
            update = {
                "sessionUpdate": "agent_message",
                "messageId": f"m{i // 50}",
                "content": [{"type": "text", "text": "whole"}],
                "_meta": {"k": i},
            }
        elif k == 8:
            update = {"sessionUpdate": "usage_update", "used": i, "size": 10**6}
        else:
            update = {"sessionUpdate": "state_update", "state": states[(i // 10) % 5], "background": []}
        out.append(
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}
        )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", 1)[0])
    ap.add_argument(
        "n",
        nargs="?",
        type=positive_int,
        default=200_000,
        help="session updates in the stream (default %(default)s)",
    )
    n = ap.parse_args(argv).n
    msgs = _stream(n)
    view = ClientView()
    t0 = time.perf_counter()
    for m in msgs:
        view.apply("agent", m)
    t1 = time.perf_counter()
    data = view.to_json()
    t2 = time.perf_counter()
    entities = sum(len(s["timeline"]) for s in data.values())
    print(f"apply:    {n} messages in {t1 - t0:.3f}s = {(t1 - t0) / n * 1e6:.2f} us/message")
    print(f"to_json:  {entities} entities in {(t2 - t1) * 1e3:.1f} ms")

    small = msgs[:2000]
    view = ClientView()
    t0 = time.perf_counter()
    for m in small:
        view.apply("agent", m)
        view.snapshot()
    t1 = time.perf_counter()
    print(
        f"apply+snapshot per step over the first {len(small)} messages: {(t1 - t0) / len(small) * 1e6:.1f} us"
    )
    entities = sum(len(s[1][7]) for s in view.snapshot())
    print(f"  ({len(view.snapshot())} sessions, {entities} entities at the end)")


if __name__ == "__main__":
    main()
