"""The monitor engine (``properties.engine``): feeding and rule groups."""

from __future__ import annotations

import io

from hypothesis import given, settings

from properties.engine import Monitor, MonitorSet, rule_group
from properties.findings import Finding
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
    monitor.exercise_all(("GROUP-B", "GROUP-C"))
    monitor.exercise("GROUP-A")
    assert dict(ms.exercised) == {"GROUP-A": 3, "GROUP-B": 3, "GROUP-C": 1}
    ms.exercised.clear()
    monitor._gx[key] += 1
    assert dict(ms.exercised) == {"GROUP-A": 1, "GROUP-B": 1}
    twin = ms.clone()
    monitor.exercise("GROUP-C")
    assert dict(twin.exercised) == {"GROUP-A": 1, "GROUP-B": 1}
