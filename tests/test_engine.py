"""The monitor engine (``properties.engine``): feeding and rule groups."""

from __future__ import annotations

import io

from hypothesis import given, settings

from properties.engine import Message, Monitor, MonitorSet, rule_group
from properties.findings import Finding
from properties.monitor import on
from properties.transcript import read_transcript
from tests.mutation_support import as_tuple, mutated_transcripts


@settings(max_examples=40, deadline=None)
@given(data=mutated_transcripts())
def test_feed_and_push_give_the_same_findings_and_state(data: bytes) -> None:
    items = [it for it in read_transcript(io.BytesIO(data)) if not isinstance(it, Finding)]
    by_feed, by_push = MonitorSet(), MonitorSet()
    found_feed: list[Finding] = []
    for n, sender, msg in items:
        found_feed += by_feed.feed(sender, msg, n)
        by_push.push(sender, msg, n)
    assert [as_tuple(f) for f in by_push.take_new()] == [as_tuple(f) for f in found_feed]
    assert by_push.state_key() == by_feed.state_key()
    assert by_push.exercised == by_feed.exercised
    ends = [[as_tuple(f) for f in ms.finish(quiescent=True)] for ms in (by_feed, by_push)]
    assert ends[0] == ends[1]


class Plain(Monitor):
    """A monitor with no handlers: only its exercise counts matter here."""


def test_rule_groups_count_every_rule_and_clearing_resets() -> None:
    key = rule_group("GROUP-A", "GROUP-B")
    ms = MonitorSet([Plain])
    monitor = ms.get(Plain)
    monitor._gx[key] += 1
    monitor._gx[key] += 1
    monitor._gx[rule_group("GROUP-B", "GROUP-C")] += 1
    monitor._ex["GROUP-A"] += 1
    assert dict(ms.exercised) == {"GROUP-A": 3, "GROUP-B": 3, "GROUP-C": 1}
    ms.exercised.clear()
    monitor._gx[key] += 1
    assert dict(ms.exercised) == {"GROUP-A": 1, "GROUP-B": 1}
    twin = ms.clone()
    monitor._ex["GROUP-C"] += 1
    assert dict(twin.exercised) == {"GROUP-A": 1, "GROUP-B": 1}


class Every(Monitor):
    """Records what its ``*`` handlers get, beside one handler under a named key."""

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.seen: list[tuple[str, object, object]] = []

    @on("client-request", "session/prompt")
    def _named(self, sid: object, params: object, line: int, msg: Message) -> None:
        self.seen.append(("named", msg["method"], line))

    @on("client-request", "*")
    def _asked(self, sid: object, params: object, line: int, msg: Message) -> None:
        self.seen.append(("asked", msg["method"], line))

    @on("agent-response", "*")
    def _answered(self, sid: object, request: Message | None, line: int, msg: Message) -> None:
        method = None if request is None else request["method"]
        self.seen.append(("answered", method, line))


def test_star_handlers_get_every_key_and_responses_to_no_request() -> None:
    ms = MonitorSet([Every])
    prompt = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s"}}
    custom = {"jsonrpc": "2.0", "id": 2, "method": "_custom/x", "params": {}}
    update = {"jsonrpc": "2.0", "id": 3, "method": "session/update", "params": {"sessionId": "s"}}
    ms.feed("client", prompt, 1)
    ms.feed("client", custom, 2)
    ms.feed("client", update, 3)  # a session/update sent with an id is a request too
    for line, rid in ((4, 1), (5, 2), (6, 2), (7, 3)):  # the second answer to 2 answers no request
        ms.feed("agent", {"jsonrpc": "2.0", "id": rid, "result": {}}, line)
    assert ms.get(Every).seen == [
        ("named", "session/prompt", 1),
        ("asked", "session/prompt", 1),
        ("asked", "_custom/x", 2),
        ("asked", "session/update", 3),
        ("answered", "session/prompt", 4),
        ("answered", "_custom/x", 5),
        ("answered", None, 6),
        ("answered", "session/update", 7),
    ]
