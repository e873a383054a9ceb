"""The monitor engine (``properties.engine``): feeding, gates and rule groups."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings

from properties.engine import Message, Monitor, MonitorSet, rule_group
from properties.findings import Finding
from properties.transcript import read_transcript
from tests.check_support import update
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
    assert "state_update" not in ms._upd
    state = update("s", {"sessionUpdate": "state_update", "state": "idle"})
    watch = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
    stop = {"jsonrpc": "2.0", "method": "session/cancel", "params": {}}
    ms.feed("agent", state, 1)
    ms.feed("client", watch, 2)
    assert "state_update" in ms._upd  # the gate is open: the handler is in the table
    ms.feed("agent", state, 3)
    twin = ms.clone()
    ms.feed("client", stop, 4)
    ms.feed("agent", state, 5)
    twin.feed("agent", state, 6)
    assert gated.seen == [3]
    assert twin.get(Gated).seen == [3, 6]
    assert "state_update" not in ms._upd


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
