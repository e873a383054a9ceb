"""``properties.idset``: exact ID maps that stay small for sequential IDs, and the monitors that
keep old IDs in them.

The map must answer exactly as a plain dict would (every lookup, every entry, whatever the
mix of integer, counter and other keys), copies must be independent, ``key()`` equal exactly
for equal contents, and sequential IDs must take a constant number of runs. The monitors that
spill old message IDs into maps must make the same findings as with plain dicts, including for
an ID reused far back, long after it left the recent dict.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli import cmd_check
from properties import idset
from properties.engine import MonitorSet
from properties.idset import IdMap, ceiling, lookup, pair_items, spill, split_id
from properties.monitors import lifecycle, prompts
from tests.check_support import line, request, result, update

# -- the map against a plain dict ------------------------------------------------------------

COUNTER = st.builds(
    lambda prefix, n: f"{prefix}{n}", st.sampled_from(["u", "a", "", "msg_", "x9y", "z"]), st.integers(0, 60)
)
KEYS = st.one_of(
    st.integers(-5, 60),
    COUNTER,
    st.sampled_from(["u007", "u0", "a00", "9" * 25, "u" + "1" * 19, "", "uuid-3f2a", "a\n1"]),
    st.text(max_size=4),
)
VALUES = st.one_of(st.integers(-3, 40), st.sampled_from(["r1", "r2", None, True, 1.5]))


def probes(keys: list[Any]) -> list[Any]:
    """The keys, their neighbours (just past a run's end, between its steps) and odd ones."""
    out: list[Any] = [0, 1, 61, -6, "u", "u61", "a61", "u1", "u01", True, 2.0, "9" * 25, "zz"]
    for key in keys:
        out.append(key)
        parts = split_id(key)
        if parts is not None:
            head, c = parts
            for d in (-2, -1, 1, 2, 3):
                if c + d >= 0:
                    out.append(c + d if head is None else f"{head}{c + d}")
    return out


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=120))
def test_map_answers_like_a_dict(entries: list[tuple[Any, Any]]) -> None:
    ref: dict[tuple[type, Any], Any] = {}  # keyed with the type: the map keeps True apart from 1
    m: IdMap[Any] = IdMap()
    for key, value in entries:
        expected = ref.get((type(key), key), "absent")
        found = m.first(key, value)
        if expected == "absent":
            assert found is None
            ref[(type(key), key)] = value
        else:
            assert found == expected and type(found) is type(expected)
    assert len(m) == len(ref)
    got = {(type(k), k): v for k, v in m.items()}
    assert got == ref
    assert all(type(v) is type(ref[k]) for k, v in got.items())
    for key in probes([k for k, _ in entries]):
        want = ref.get((type(key), key), "absent")
        assert m.get(key, "absent") == want
        assert (key in m) == (want != "absent")


@pytest.mark.deep
@settings(max_examples=3000, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=120))
def test_map_answers_like_a_dict_many_examples(entries: list[tuple[Any, Any]]) -> None:
    """test_map_answers_like_a_dict with 3000 examples (the default suite runs 100)."""
    test_map_answers_like_a_dict.hypothesis.inner_test(entries)  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=80), st.integers(1, 20))
def test_spilled_pair_answers_like_a_dict(entries: list[tuple[Any, Any]], limit: int) -> None:
    """The monitors' pattern: a recent dict spilling into a map beyond ``limit`` entries."""
    ref: dict[Any, Any] = {}
    recent: dict[Any, Any] = {}
    old: IdMap[Any] | None = None
    for key, value in entries:
        if type(key) is not str:  # the monitors' tables are keyed by strings
            continue
        if lookup(recent, old, key, "absent") == "absent":
            assert key not in ref
            recent[key] = value
            ref[key] = value
            if len(recent) > limit:
                old = spill(recent, old)
                assert len(recent) <= 1  # the newest stays, unless the map takes batches unparsed
        else:
            assert lookup(recent, old, key) == ref[key]
    assert dict(pair_items(recent, old)) == ref
    for key in probes([k for k, _ in entries]):
        assert lookup(recent, old, key, "absent") == ref.get(key, "absent")


class LanedPair(idset.Laned):
    """A laned pair used as the monitors use theirs (the new-ID path inline, as in
    ``ForegroundMonitor._output``), with ``limit`` in place of ``SPILL_AT``."""

    __slots__ = ("limit", "old", "recent", "top")

    def __init__(self, limit: int) -> None:
        self.recent: dict[str, int] = {}
        self.old: IdMap[int] | None = None
        self.top = ""
        self.limit = limit
        self.lane_reset()

    def get(self, key: str) -> int | None:
        found: int | None = self.lane_get(self.recent, self.old, self.top, key)
        return found

    def add(self, key: str, value: int) -> None:
        """Add an absent key."""
        if len(key) == len(self.top) and key > self.top:
            self.top = key
            if key == self.lane_want and value == self.lane_wantv:
                self.lane_at += self.lane_step
                self.lane_want = self.lane_head + str(self.lane_at)
                self.lane_wantv = value + self.lane_vstep
                self.lane_top = True
                return
            self.lane_top = False
        else:
            top = ceiling(self.top, key)
            if top is not self.top:
                self.top = top
                self.lane_top = False
        self.recent[key] = value
        if len(self.recent) > self.limit:
            self.old = self.lane_spill(self.recent, self.old, self.top)

    def items(self) -> dict[str, int]:
        self.lane_flush(self.old)
        return dict(pair_items(self.recent, self.old))

    def copy(self) -> LanedPair:
        new = LanedPair(self.limit)
        new.recent = dict(self.recent)
        new.old = None if self.old is None else self.old.copy()
        new.top = self.top
        new.lane_copy(self)
        return new


# Mostly a counter advancing by a fixed step with values advancing by another (the lane's
# case), broken now and then by a jump, a repeat, a value off the pattern or another prefix.
LANE_STEPS = st.lists(
    st.tuples(st.sampled_from(["next", "next", "next", "jump", "old", "value", "other"]), st.integers(0, 9)),
    max_size=150,
)


@settings(max_examples=100, deadline=None)
@given(LANE_STEPS, st.integers(1, 10), st.sampled_from([1, 3, 1000]), st.sampled_from([0, 1, 1000]))
def test_laned_pair_answers_like_a_dict(
    steps: list[tuple[str, int]], limit: int, step: int, vstep: int
) -> None:
    """A laned pair answers every lookup as a dict would, through lanes armed, extended,
    broken and flushed; a copy taken midway is independent and answers the same."""
    pair = LanedPair(limit)
    ref: dict[str, int] = {}
    c, v = 0, 5
    twin: tuple[LanedPair, dict[str, int]] | None = None
    for n, (what, k) in enumerate(steps):
        if what == "next":
            c, v = c + step, v + vstep
            key, value = f"a{c}", v
        elif what == "jump":
            c, v = c + step * (k + 2), v + k
            key, value = f"a{c}", v
        elif what == "old":
            key, value = f"a{max(0, c - step * k)}", -1
        elif what == "value":
            c = c + step
            key, value = f"a{c}", v + 1000
        else:
            key, value = f"b{k}", n
        found = pair.get(key)
        assert found == ref.get(key)
        if found is None:
            pair.add(key, value)
            ref[key] = value
        if n == len(steps) // 2:
            twin = (pair.copy(), dict(ref))
    for key in [*ref, *(f"a{c + d}" for d in range(-3 * step, 3 * step + 1)), "b10", "a"]:
        assert pair.get(key) == ref.get(key)
    assert pair.items() == ref
    if twin is not None:
        copy, before = twin
        assert copy.items() == before
        assert all(copy.get(key) == before.get(key) for key in ref)


@pytest.mark.deep
@settings(max_examples=3000, deadline=None)
@given(LANE_STEPS, st.integers(1, 10), st.sampled_from([1, 3, 1000]), st.sampled_from([0, 1, 1000]))
def test_laned_pair_answers_like_a_dict_many_examples(
    steps: list[tuple[str, int]], limit: int, step: int, vstep: int
) -> None:
    """test_laned_pair_answers_like_a_dict with 3000 examples (the default suite runs 100)."""
    test_laned_pair_answers_like_a_dict.hypothesis.inner_test(steps, limit, step, vstep)  # type: ignore[attr-defined]


def test_sequential_ids_go_to_the_lane_after_the_first_spill() -> None:
    pair = LanedPair(8)
    for i in range(1000):
        pair.add(f"u{i * 7}", 3 * i)
        assert pair.get(f"u{i * 7}") == 3 * i  # the newest: found without a lookup in the map
    assert pair.old is not None and pair.old.runs() == 1
    assert not pair.recent and pair.lane_want == "u7000" and pair.lane_top
    assert len(pair.old) < 1000  # not counted yet: the lane took them
    assert pair.get("u14") == 6 and len(pair.old) == 1000  # a lookup in the map flushes
    assert pair.get("u15") is None and pair.get("u7000") is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(COUNTER, st.builds(lambda n: f"m{n}", st.integers(0, 2000)), st.text(max_size=5)),
        max_size=150,
    ),
    st.integers(1, 12),
)
def test_ceiling_never_hides_an_id(keys: list[str], limit: int) -> None:
    """The monitors' fast test: a key of the ceiling's length past it is absent; no key of the
    ceiling's length exceeds it, through spills and length changes."""
    ref: dict[str, int] = {}
    recent: dict[str, int] = {}
    old: IdMap[int] | None = None
    top = ""
    fast = 0
    for n, key in enumerate(keys):
        if len(key) == len(top) and key > top:
            assert key not in ref
            fast += 1
            recent[key] = ref[key] = n
            top = key
        elif lookup(recent, old, key) is None:
            assert key not in ref
            recent[key] = ref[key] = n
            top = ceiling(top, key)
        else:
            assert lookup(recent, old, key) == ref[key]
        if len(recent) > limit:
            old = spill(recent, old)
        assert all(k <= top for k in ref if len(k) == len(top))
    assert dict(pair_items(recent, old)) == ref


def test_ceiling_follows_a_counter_across_lengths() -> None:
    recent: dict[str, int] = {}
    old: IdMap[int] | None = None
    top, slow = "", []
    for t in range(3, 20_000, 7):
        key = f"u{t}"
        if len(key) == len(top) and key > top:
            recent[key] = t
            top = key
        else:
            assert lookup(recent, old, key) is None
            recent[key] = t
            top = ceiling(top, key)
            slow.append(key)
        if len(recent) > idset.SPILL_AT:
            old = spill(recent, old)
    assert slow == ["u3", "u10", "u101", "u1004", "u10006"]  # a new length each
    assert ceiling(top, "u99999") == "u99999" and ceiling(top, "u9") == top == ceiling(top, 17)


@settings(max_examples=70, deadline=None)
@given(st.lists(st.lists(st.tuples(KEYS, VALUES), max_size=12), max_size=12))
def test_batches_answer_like_a_dict(batches: list[list[tuple[Any, Any]]]) -> None:
    """``absorb`` (bulk runs, new runs, keys kept unparsed after a batch of odd ones)."""
    ref: dict[tuple[type, Any], Any] = {}
    m: IdMap[Any] = IdMap()
    for batch in batches:
        fresh: dict[tuple[type, Any], tuple[Any, Any]] = {}
        for key, value in batch:
            if (type(key), key) not in ref and (type(key), key) not in fresh:
                fresh[(type(key), key)] = (key, value)
        m.absorb([k for k, _ in fresh.values()], [v for _, v in fresh.values()])
        ref.update({tk: v for tk, (_, v) in fresh.items()})
        assert len(m) == len(ref)
    assert {(type(k), k): v for k, v in m.items()} == ref
    for key in probes([k for batch in batches for k, _ in batch]):
        assert m.get(key, "absent") == ref.get((type(key), key), "absent")


@pytest.mark.deep
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.lists(st.tuples(KEYS, VALUES), max_size=12), max_size=12))
def test_batches_answer_like_a_dict_many_examples(batches: list[list[tuple[Any, Any]]]) -> None:
    """test_batches_answer_like_a_dict with 2000 examples (the default suite runs 70)."""
    test_batches_answer_like_a_dict.hypothesis.inner_test(batches)  # type: ignore[attr-defined]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=60), st.lists(st.tuples(KEYS, VALUES), max_size=20))
def test_copy_is_independent(before: list[tuple[Any, Any]], after: list[tuple[Any, Any]]) -> None:
    m: IdMap[Any] = IdMap()
    for key, value in before:
        m.first(key, value)
    snapshot = m.key()
    twin = m.copy()
    assert twin.key() == snapshot
    for key, value in after:
        twin.first(key, value)
    assert m.key() == snapshot
    for key, value in after:  # and the other way round
        m.first(key, value)
    assert m.key() == twin.key()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(COUNTER, st.integers(0, 3)), max_size=50), st.randoms(use_true_random=False))
def test_key_is_equal_exactly_for_equal_contents(entries: list[tuple[str, int]], rnd: Any) -> None:
    unique = list(dict(entries).items())
    shuffled = list(unique)
    rnd.shuffle(shuffled)
    a: IdMap[int] = IdMap()
    b: IdMap[int] = IdMap()
    for key, value in unique:
        a.add(key, value)
    for key, value in shuffled:
        b.add(key, value)
    assert a.key() == b.key() and hash(a.key()) == hash(b.key())
    if unique:
        c: IdMap[int] = IdMap()
        for key, value in unique[:-1]:
            c.add(key, value)
        key, value = unique[-1]
        c.add(key, value + 1)
        assert c.key() != a.key()
        d: IdMap[int] = IdMap()
        for key, value in unique[:-1]:
            d.add(key, value)
        assert d.key() != a.key()


def test_sequential_ids_take_one_run() -> None:
    claimed: IdMap[int] = IdMap()
    for t in range(7, 200_000, 1000):  # one session's share of a counter over 1,000 sessions
        claimed.add(f"u{t}", t)
    assert claimed.runs() == 1 and len(claimed) == 200
    assert claimed.get("u5007") == 5007 and claimed.get("u5008") is None and "u7" in claimed
    numbers: IdMap[str] = IdMap()
    for n in range(1000):
        numbers.add(n, "same")
    assert numbers.runs() == 1 and numbers.get(999) == "same" and numbers.get(1000) is None
    recent: dict[str, int] = {}
    old: IdMap[int] | None = None
    for t in range(5000):
        recent[f"a{t}"] = t
        if len(recent) > idset.SPILL_AT:
            old = spill(recent, old)
    assert old is not None and old.runs() == 1 and len(old) + len(recent) == 5000


def test_a_batch_that_almost_continues_a_run_is_not_taken_in_bulk() -> None:
    for last_key, last_value in (("a11", 10), ("a10", 11), ("b10", 10)):
        recent = {f"a{t}": t for t in range(5)}
        old = spill(recent, None)  # a0..a3 in one run; a4 stays recent
        recent.update({f"a{t}": t for t in range(5, 10)})
        recent[last_key] = last_value
        recent["a99"] = 99  # the newest stays in the dict
        old = spill(recent, old)
        want = {f"a{t}": t for t in range(10)}
        want[last_key] = last_value
        want["a99"] = 99
        assert dict(pair_items(recent, old)) == want
        for key in ("a10", "a11", "b10", "a9", "a12"):
            assert lookup(recent, old, key, "absent") == want.get(key, "absent")


def test_split_id_takes_only_canonical_counters() -> None:
    assert split_id("u17") == ("u", 17)
    assert split_id("0") == ("", 0)
    assert split_id(5) == (None, 5)
    for other in ("u017", "u", "", "1" * 19, "u١٢", True, 1.0, None):
        assert split_id(other) is None


# -- monitors: old IDs far back, and the same findings as plain dicts ------------------------


PROMPT = [{"type": "text", "text": "hi"}]


def turns(n: int, session: str = "s1", rid0: int = 0) -> list[bytes]:
    """``n`` prompt turns with sequential ids: prompt rid, user message u<rid>, running,
    agent chunk a<rid>, the answer returning u<rid>, idle."""
    out: list[bytes] = []
    for t in range(rid0, rid0 + n):
        out += [
            line("client", request(t, "session/prompt", {"sessionId": session, "prompt": PROMPT})),
            line("agent", update(session, {"sessionUpdate": "user_message", "messageId": f"u{t}"})),
            line("agent", update(session, {"sessionUpdate": "state_update", "state": "running"})),
            line("agent", update(session, {"sessionUpdate": "agent_message_chunk", "messageId": f"a{t}"})),
            line("agent", result(t, {"messageId": f"u{t}"})),
            line(
                "agent",
                update(session, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
            ),
        ]
    return out


def check(data: bytes) -> list[tuple[str, int | None, str]]:
    with io.BytesIO(data) as fh:
        report = cmd_check.check_stream(fh, "t", monitors=MonitorSet())
    return [(f.rule, f.line, f.explanation) for f in report.findings]


def test_a_messageid_returned_again_far_back_is_caught() -> None:
    body = turns(300)
    tail = [
        line("client", request(900, "session/prompt", {"sessionId": "s1", "prompt": PROMPT})),
        line("agent", update("s1", {"sessionUpdate": "state_update", "state": "running"})),
        line("agent", result(900, {"messageId": "u3"})),  # returned for prompt 3, 297 turns ago
    ]
    found = check(b"".join(body + tail))
    n = len(body) + 3
    assert (
        "ACC-09",
        n,
        "messageId 'u3' returned for prompt 900 was already returned for prompt 3: distinct "
        "submissions need distinct IDs",
    ) in found


def test_output_of_work_ended_far_back_is_caught_and_an_old_user_message_is_known() -> None:
    body = turns(300)
    late = [
        # a late report of a user message claimed 290 turns ago: known, no finding
        line("agent", update("s1", {"sessionUpdate": "user_message", "messageId": "u10"})),
        # content for an agent message of work that ended 280 turns ago, while idle: DONE-03
        line(
            "agent", update("s1", {"sessionUpdate": "agent_message_chunk", "messageId": "a20", "content": {}})
        ),
    ]
    found = check(b"".join(body + late))
    assert [f[:2] for f in found] == [("DONE-03", len(body) + 2)]


SPILL_USERS = [(prompts, "SPILL_AT"), (lifecycle, "SPILL_AT")]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 80), st.integers(0, 5), st.sampled_from(["u", "a", "uuid-", "u0"])),
        min_size=1,
        max_size=120,
    )
)
def test_monitors_find_the_same_with_and_without_spilling(steps: list[tuple[int, int, str]]) -> None:
    """Random turns whose ids repeat (old ones too): spilling after 2 entries, never spilling,
    and never spilling with no ceiling (every ID looked up) give identical findings, exercise
    counts and state keys (of the set and of a clone)."""
    assert_same_with_and_without_spilling(steps)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0, 0, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5]), st.integers(-2, 3)),
        min_size=1,
        max_size=150,
    )
)
def test_monitors_find_the_same_with_lanes(steps: list[tuple[int, int]]) -> None:
    """As above with IDs that mostly follow one counter (so lanes form, break and re-form),
    stepping back now and then: a repeated or old ID must be found in the lane or the map."""
    counter = 0
    turns: list[tuple[int, int, str]] = []
    for kind, move in steps:
        counter = max(0, counter + (1 if move >= 0 else move * 3))
        turns.append((counter if move < 3 else counter + 40, kind, "u" if kind < 2 else "a"))
    assert_same_with_and_without_spilling(turns)


def assert_same_with_and_without_spilling(steps: list[tuple[int, int, str]]) -> None:
    lines: list[bytes] = []
    for n, (t, kind, prefix) in enumerate(steps):
        mid = f"{prefix}{t}"
        if kind == 0:
            lines.append(line("client", request(n, "session/prompt", {"sessionId": "s1", "prompt": PROMPT})))
            lines.append(line("agent", result(n, {"messageId": mid})))
        elif kind == 1:
            lines.append(line("agent", update("s1", {"sessionUpdate": "user_message", "messageId": mid})))
        elif kind == 2:
            state = {"sessionUpdate": "state_update", "state": "running"}
            lines.append(line("agent", update("s1", state)))
        elif kind == 3:
            state = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
            lines.append(line("agent", update("s1", state)))
        else:
            variant = "agent_message_chunk" if kind == 4 else "agent_thought_chunk"
            body = {"sessionUpdate": variant, "messageId": mid, "content": {}}
            lines.append(line("agent", update("s1", body)))
    data = b"".join(lines)
    results = []
    for limit, ceilings in ((2, True), (10**9, True), (10**9, False)):
        monitors = MonitorSet()
        with pytest.MonkeyPatch.context() as mp:
            for module, name in SPILL_USERS:
                mp.setattr(module, name, limit)
                if not ceilings:  # the ceiling stays "": the fast test never passes
                    mp.setattr(module, "ceiling", lambda top, key: "")
            with io.BytesIO(data) as fh:
                report = cmd_check.check_stream(fh, "t", monitors=monitors)
        findings = [f.to_json() for f in (*report.findings, *report.open)]
        results.append((findings, dict(report.exercised), monitors.state_key(), monitors.clone().state_key()))
    assert results[0] == results[1] == results[2]
