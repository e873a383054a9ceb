"""The fast paths of ``acp-model check`` give the same answers as the plain ones.

``check_stream`` has two loops: without a hook or a schema the reader hands every message to
the monitor set itself (``scan_transcript`` callbacks, ``MonitorSet.update_routes`` and
``push``); otherwise each message goes through the loop (``feed`` / ``feed_update``). The
reader itself has a fast path for well-formed lines and a general one for everything else.
These tests feed mutated transcripts (keys dropped, retyped or added, lines doubled, moved or
broken) through both sides of every such pair and require identical findings, in the same
order, identical exercise counts and statistics. They also pin the engine's gates
(``Monitor.GATES``), its string-keyed rule groups and the depth check of short lines.
"""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from cli import cmd_check
from properties.engine import Message, Monitor, MonitorSet, rule_group
from properties.findings import Finding
from properties.transcript import MAX_DEPTH, TranscriptStats, read_transcript, scan_transcript
from tests.check_support import basic_turn, line, request, update

DATA = Path(__file__).resolve().parent / "data"
CORPUS = sorted(DATA.glob("*.ndjson"))
JUNK: list[Any] = [None, 1, -1, 2.5, "x", "", [], {}, True, "idle", "running", "session/update", [1]]
EXTRA_KEYS = ["_meta", "id", "result", "error", "method", "params", "sessionId", "jsonrpc"]


def corpus_lines() -> list[bytes]:
    out: list[bytes] = []
    for path in CORPUS:
        out += path.read_bytes().splitlines(keepends=True)
    return out


def _nodes(value: Any, out: list[tuple[Any, Any]]) -> None:
    if isinstance(value, dict):
        for key in list(value):
            out.append((value, key))
            _nodes(value[key], out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((value, index))
            _nodes(item, out)


def mutate(lines: list[bytes], seed: int) -> bytes:
    """A deterministic mess made of good lines (see the module docstring)."""
    rng = random.Random(seed)
    out: list[bytes] = []
    for raw in lines:
        roll = rng.random()
        if roll < 0.25:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                out.append(raw)
                continue
            nodes: list[tuple[Any, Any]] = []
            _nodes(obj, nodes)
            if nodes:
                parent, key = rng.choice(nodes)
                how = rng.random()
                if how < 0.3 and isinstance(parent, dict):
                    del parent[key]
                elif how < 0.55 and isinstance(parent, dict):
                    parent[rng.choice(EXTRA_KEYS)] = rng.choice(JUNK)
                else:
                    parent[key] = rng.choice(JUNK)
            out.append(orjson.dumps(obj) + b"\n")
        elif roll < 0.29:
            out += [raw, raw]
        elif roll < 0.31 and out:
            out.insert(rng.randrange(len(out)), raw)
        elif roll < 0.32:
            out.append(raw[: len(raw) // 2] + b"\n")
        elif roll < 0.33:
            out.append(b"\xef\xbb\xbf" + raw)
        elif roll < 0.34:
            out.append(raw.rstrip(b"\n") + b"\r\n")
        else:
            out.append(raw)
    data = b"".join(out)
    return data[:-1] if rng.random() < 0.1 else data


def mutated_transcripts() -> st.SearchStrategy[bytes]:
    base = corpus_lines()
    turns = [ln for n in range(3) for ln in basic_turn(f"sess_{n % 2}", n + 1, n + 1)]
    return st.builds(mutate, st.sampled_from([base, turns, base[::-1], turns + base]), st.integers(0, 2**32))


def as_tuple(f: Finding) -> tuple[Any, ...]:
    return (f.rule, f.level, f.line, f.session, f.explanation, f.kind, f.message)


def stats_tuple(st_: TranscriptStats) -> tuple[Any, ...]:
    return (
        st_.lines, st_.messages, st_.requests, st_.notifications, st_.responses,
        st_.input_findings, sorted(st_.sessions), sorted(st_.preserved.items()),
    )  # fmt: skip


def report_tuple(report: cmd_check.FileReport) -> tuple[Any, ...]:
    return (
        [as_tuple(f) for f in report.findings],
        [as_tuple(f) for f in report.open],
        sorted(report.exercised.items()),
        stats_tuple(report.stats),
    )


def check(data: bytes, hook: bool) -> cmd_check.FileReport:
    seen: list[int] = []
    return cmd_check.check_stream(
        io.BytesIO(data),
        "t",
        monitors=MonitorSet(),
        on_message=(lambda n, s, m: seen.append(n)) if hook else None,
    )


# -- the two loops of check_stream -----------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(data=mutated_transcripts())
def test_reader_driven_check_equals_the_item_loop(data: bytes) -> None:
    assert report_tuple(check(data, hook=False)) == report_tuple(check(data, hook=True))


def test_corpus_checks_the_same_either_way() -> None:
    for path in CORPUS:
        data = path.read_bytes()
        fast, slow = check(data, hook=False), check(data, hook=True)
        assert report_tuple(fast) == report_tuple(slow), path.name
        assert fast.exercised, path.name


def test_a_monitor_that_sees_every_message_gets_no_routes() -> None:
    class Everything(Monitor):
        def on_message(self, sender: str, msg: Message, line: int) -> None:
            self.exercise("SEEN")

    assert MonitorSet([Everything]).update_routes() is None
    data = b"".join(basic_turn())
    report = cmd_check.check_stream(io.BytesIO(data), "t", monitors=MonitorSet([Everything]))
    assert report.exercised["SEEN"] == 6


# -- the reader: iterator, callbacks and the public 3-tuples ---------------------------------------


@settings(max_examples=60, deadline=None)
@given(data=mutated_transcripts())
def test_scan_callbacks_and_items_agree(data: bytes) -> None:
    plain_stats, scan_stats, call_stats = TranscriptStats(), TranscriptStats(), TranscriptStats()
    plain = list(read_transcript(io.BytesIO(data), stats=plain_stats))
    scanned = list(scan_transcript(io.BytesIO(data), stats=scan_stats))
    assert [it if isinstance(it, Finding) else it[:3] for it in scanned] == plain

    events: list[Any] = []

    def route(sid: str, upd: Message, line: int, msg: Message) -> None:
        events.append(("update", line, sid, upd, msg))

    class Routes(dict[Any, Any]):
        def get(self, key: Any, default: Any = None) -> Any:
            return (route,)

    for item in scan_transcript(
        io.BytesIO(data),
        stats=call_stats,
        on_message=lambda sender, msg, line: events.append(("message", line, sender, msg)),
        update_routes=Routes(),
    ):
        assert isinstance(item, Finding)
        events.append(item)
    expected: list[Any] = []
    for it in scanned:
        if isinstance(it, Finding):
            expected.append(it)
        elif it[4] is not None:
            assert it[1] == "agent" and isinstance(it[3], str) and it[2]["params"]["update"] is it[4]
            expected.append(("update", it[0], it[3], it[4], it[2]))
        else:
            expected.append(("message", it[0], it[1], it[2]))
    assert events == expected
    assert stats_tuple(plain_stats) == stats_tuple(scan_stats) == stats_tuple(call_stats)


def test_updates_are_taken_apart_only_when_well_formed_and_from_the_agent() -> None:
    good = update("s1", {"sessionUpdate": "agent_message_chunk", "messageId": "m"})
    from_client = line("client", good)
    odd_session = line("agent", update(7, {"sessionUpdate": "state_update"}))  # type: ignore[arg-type]
    extra_key = line("agent", {**good, "_meta": {}})
    items = list(scan_transcript(io.BytesIO(line("agent", good) + from_client + odd_session + extra_key)))
    assert [(it[3], it[4] is not None) for it in items if isinstance(it, tuple)] == [
        ("s1", True),
        (None, False),
        (None, False),
        (None, False),
    ]


def test_short_lines_too_deep_to_parse_are_still_too_deep() -> None:
    # A line that parses needs more than 2 * MAX_DEPTH bytes to nest too deep, so shorter
    # lines are measured only when they fail to parse: the finding must not change.
    shallow = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"\n"
    cases = {
        b"[" * (MAX_DEPTH + 1) + b"\n": "input.too-deep",
        b"\xef\xbb\xbf" + b"[" * (MAX_DEPTH + 1) + b"\n": "input.too-deep",
        b"[" * MAX_DEPTH + b"\n": "input.invalid-json",
        shallow: "input.not-object",
        b'{"a":"' + b"[" * (MAX_DEPTH + 10) + b'"}\n': "input.bad-from",
    }
    for raw, rule in cases.items():
        findings = [it for it in read_transcript(io.BytesIO(raw)) if isinstance(it, Finding)]
        assert [f.rule for f in findings] == [rule], raw[:20]


# -- the engine: feed, push + take_new, feed_update and the routes ---------------------------------


@settings(max_examples=40, deadline=None)
@given(data=mutated_transcripts())
def test_every_way_of_feeding_gives_the_same_findings_and_state(data: bytes) -> None:
    items = [it for it in scan_transcript(io.BytesIO(data)) if not isinstance(it, Finding)]
    by_feed, by_push, by_update = MonitorSet(), MonitorSet(), MonitorSet()
    found_feed: list[Finding] = []
    found_push: list[Finding] = []
    found_update: list[Finding] = []
    routes = by_update.update_routes()
    assert routes is not None
    for n, sender, msg, sid, upd in items:
        found_feed += by_feed.feed(sender, msg, n)
        by_push.push(sender, msg, n)
        if upd is None:
            found_update += by_update.feed(sender, msg, n)
        elif n % 2:
            assert sid is not None
            by_update.feed_update(sid, upd, n, msg)
        else:
            for handler in routes.get(upd["sessionUpdate"], ()):
                handler(sid, upd, n, msg)
    found_push += by_push.take_new()
    found_update += by_update.take_new()
    for ms, found in ((by_push, found_push), (by_update, found_update)):
        assert [as_tuple(f) for f in found] == [as_tuple(f) for f in found_feed]
        assert ms.state_key() == by_feed.state_key()
        assert ms.exercised == by_feed.exercised
    ends = [[as_tuple(f) for f in ms.finish(quiescent=True)] for ms in (by_feed, by_push, by_update)]
    assert ends[0] == ends[1] == ends[2]


class Gated(Monitor):
    """Sees state_update only while ``watching`` is non-empty (a gated handler)."""

    GATES = (("_state", "watching"),)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.watching: set[str] = set()
        self.seen: list[int] = []

    def handlers(self) -> Any:
        return (
            ("update", "state_update", self._state),
            ("client-notification", "session/cancel", self._watch),
        )

    def _watch(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is None:
            self.watching.clear()
        else:
            self.watching.add(sid)
        self.regate()

    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        self.seen.append(line)

    def clone(self, owner: MonitorSet) -> Gated:
        new = Gated(owner)
        new.watching = set(self.watching)
        new.seen = list(self.seen)
        return new


def test_gated_handlers_run_only_while_their_gate_is_open() -> None:
    ms = MonitorSet([Gated])
    gated = ms.get(Gated)
    routes = ms.update_routes()
    assert routes is not None and "state_update" not in routes
    state = update("s", {"sessionUpdate": "state_update", "state": "idle"})
    watch = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
    stop = {"jsonrpc": "2.0", "method": "session/cancel", "params": {}}
    ms.feed("agent", state, 1)
    ms.feed("client", watch, 2)
    assert "state_update" in routes  # the handed-out routes follow the gate in place
    ms.feed("agent", state, 3)
    twin = ms.clone()
    ms.feed("client", stop, 4)
    ms.feed("agent", state, 5)
    twin.feed("agent", state, 6)
    assert gated.seen == [3]
    assert twin.get(Gated).seen == [3, 6]
    assert "state_update" not in routes


def test_rule_groups_count_every_rule_and_clearing_resets() -> None:
    key = rule_group("GROUP-A", "GROUP-B")
    ms = MonitorSet([Gated])
    monitor = ms.get(Gated)
    monitor._gx[key] += 1
    monitor._gx[key] += 1
    monitor.exercise_all(("GROUP-B", "GROUP-C"))
    monitor.exercise("GROUP-A")
    assert dict(ms.exercised) == {"GROUP-A": 3, "GROUP-B": 3, "GROUP-C": 1}
    ms.exercised.clear()
    monitor._gx[key] += 1
    assert dict(ms.exercised) == {"GROUP-A": 1, "GROUP-B": 1}
    twin = ms.clone()
    monitor.exercise("GROUP-C")
    assert dict(twin.exercised) == {"GROUP-A": 1, "GROUP-B": 1}


def test_prompt_requests_route_through_push_like_feed() -> None:
    # a request that takes the reader's general path (no params) still reaches the handlers
    data = line("client", request(1, "session/prompt")) + b"".join(basic_turn(rid=2))
    assert report_tuple(check(data, hook=False)) == report_tuple(check(data, hook=True))
