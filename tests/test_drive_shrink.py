"""``simulator.explore.shrink.minimise``, the shrinker of ``acp-model drive``: what it finds that plain
ddmin does not, its cache, and its budget (pure functions standing in for runs of an Agent)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from simulator.explore.shrink import ddmin, minimise

Test = Callable[[list[int]], list[int] | None]


def _counting(fails: Callable[[list[int]], bool]) -> tuple[Test, list[list[int]]]:
    calls: list[list[int]] = []

    def test(candidate: list[int]) -> list[int] | None:
        calls.append(list(candidate))
        return list(candidate) if fails(candidate) else None

    return test, calls


def test_a_pair_that_only_goes_together_is_removed() -> None:
    """Fails while 2 and 8 are there and 5 and 6 are both there or both gone: no single removal
    helps from [2, 5, 6, 8], only the pair."""

    def fails(c: list[int]) -> bool:
        return 2 in c and 8 in c and (5 in c) == (6 in c)

    start = [2, 5, 6, 8]
    test, _ = _counting(fails)
    assert ddmin(start, test, lambda: False) == start  # plain ddmin is stuck: 1-minimal already
    test, _ = _counting(fails)
    assert minimise(start, test, lambda: False) == [2, 8]


def test_the_shortest_failing_prefix_comes_first_and_nothing_is_tried_twice() -> None:
    """A failure at the 3rd item of 40: the prefix search gets there in six runs
    (the rest: ddmin again from the whole list, as the budget allows)."""
    test, calls = _counting(lambda c: c[:3] == [0, 1, 2])
    assert minimise(list(range(40)), test, lambda: False) == [0, 1, 2]
    assert [len(c) for c in calls[:6]] == [40, 20, 10, 5, 2, 3]  # a binary search on the length
    assert len(calls) <= 25 and len({tuple(c) for c in calls}) == len(calls), calls


def test_the_budget_is_kept_and_the_result_still_fails() -> None:
    test, calls = _counting(lambda c: 7 in c and 30 in c)
    got = minimise(list(range(40)), test, lambda: len(calls) >= 6)
    assert len(calls) == 6 and 7 in got and 30 in got and len(got) < 40


@pytest.mark.parametrize("budget", range(1, 30))
@pytest.mark.parametrize("need", [{1, 13, 24, 28}, {0, 9}, {5}, {3, 4, 17}])
def test_no_budget_is_overrun(need: set[int], budget: int) -> None:
    """A budget of N tests runs at most N (ddmin tries a chunk and its complement in turn: each
    is checked against the budget, so drive's progress never says "candidate 11/10"), and the
    result still fails."""
    test, calls = _counting(lambda c: need <= set(c))
    got = minimise(list(range(29)), test, lambda: len(calls) >= budget)
    assert len(calls) <= budget and need <= set(got)
    test, calls = _counting(lambda c: need <= set(c))
    got = ddmin(list(range(29)), test, lambda: len(calls) >= budget)
    assert len(calls) <= budget and need <= set(got)


def test_a_list_that_does_not_fail_comes_back_as_it_is() -> None:
    test, calls = _counting(lambda c: False)
    assert minimise([3, 1, 2], test, lambda: False) == [3, 1, 2] and calls == [[3, 1, 2]]


def test_a_failure_that_comes_and_goes_gets_more_runs_per_candidate() -> None:
    """``shrink_run`` against an Agent whose bug shows every other run: the original is replayed
    twice (once it fails, once not), so every candidate gets two runs, and the report says so."""
    from simulator.harness.drive_shrink import shrink_run
    from simulator.harness.settings import Settings
    from simulator.peers.stdio_agent import StdioAgent
    from tests.scripted_client import TURN_TIMEOUT, InProcessPeer

    made = [0]

    def peer() -> InProcessPeer:
        made[0] += 1  # odd runs have the bug, even ones not
        faults = frozenset({"notice-empty-title"}) if made[0] % 2 else frozenset()
        return InProcessPeer(StdioAgent(0, faults))

    settings = Settings(steps=20, timeout=TURN_TIMEOUT, silence=0.0)
    choices: list[list[object]] = [["prompt"]] + [["wait"]] * 19
    shrunk = shrink_run(peer, settings, "NOTICE-02", choices, budget=10)
    assert (shrunk.checks, shrunk.checked, shrunk.per_candidate) == (2, 1, 2)
    assert shrunk.nondeterministic and shrunk.result is not None
    assert len(shrunk.choices) < len(choices)


def test_a_reduction_kept_on_a_chance_failure_is_undone() -> None:
    """An Agent that writes garbage once it got two prompts, and, by chance, in its 4th run on
    the first prompt: the shrink keeps that run's list (one prompt), which never fails again on
    replay, so the next longer list that failed (two prompts) is confirmed and reported."""
    from simulator.harness.drive_shrink import shrink_run
    from simulator.harness.settings import Settings
    from simulator.peers.stdio_agent import StdioAgent
    from tests.scripted_client import TURN_TIMEOUT, InProcessPeer

    runs = [0]

    class Garbling(InProcessPeer):
        def __init__(self, fluke: bool) -> None:
            super().__init__(StdioAgent(0))
            self.prompts = 0
            self.fluke = fluke

        def send(self, data: bytes) -> None:
            self.prompts += data.count(b'"session/prompt"')
            super().send(data)

        def receive(self, timeout: float) -> list[bytes] | None:
            lines = super().receive(timeout)
            if lines is not None and (self.prompts >= 2 or (self.fluke and self.prompts)):
                lines = [*lines, b"garbage"]
            return lines

    def peer() -> Garbling:
        runs[0] += 1
        return Garbling(fluke=runs[0] == 4)

    settings = Settings(steps=20, timeout=TURN_TIMEOUT, silence=0.0)
    choices: list[list[object]] = [["prompt"], *[["wait"]] * 8, ["prompt"], *[["wait"]] * 10]
    shrunk = shrink_run(peer, settings, "input.not-jsonrpc", choices, budget=30)
    assert shrunk.undone >= 1 and shrunk.nondeterministic
    assert shrunk.choices.count(["prompt"]) == 2 and shrunk.reproduced == shrunk.replays == 3
