"""The prompt monitor's deficiency (``_Session.settle``): how many unclaimed user messages no
waiting prompt can ever claim. Its module docstring derives the formula from Hall's theorem; this
checks it against a maximum matching found by brute force (a prompt claims at most one message,
first reported after the prompt's receipt), on every small case."""

from __future__ import annotations

from itertools import permutations, product

from properties.monitors.prompts import _Prompt, _Session


def _unmatched(receipts: list[int], reports: list[int]) -> int:
    """Messages left over by the best assignment of messages to prompts received before them."""
    best = 0
    for order in permutations(range(len(reports)), min(len(receipts), len(reports))):
        best = max(best, sum(receipts[i] < reports[m] for i, m in enumerate(order)))
    return len(reports) - best


def test_settle_is_the_number_no_matching_can_claim() -> None:
    for kinds in product("pm.", repeat=7):  # each line: a prompt's receipt, a report, or neither
        receipts = [line for line, kind in enumerate(kinds) if kind == "p"]
        reports = [line for line, kind in enumerate(kinds) if kind == "m"]
        if len(receipts) <= 4 and len(reports) <= 4:
            ps = _Session()
            for i, line in enumerate(receipts):
                ps.pending[i] = _Prompt(line, frozenset(), False, (), None, i, 0, False)
            for i, line in enumerate(reports):
                ps.unclaimed[f"u{i}"] = line
            want = _unmatched(receipts, reports)
            assert ps.settle() is (want > 0), (receipts, reports)
            assert ps.reported_d == want, (receipts, reports)
            assert ps.settle() is False  # (nothing changed: it did not grow)
