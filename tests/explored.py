"""Expensive computations made once: the search of a default explore slice per test process,
and a function made once per test (``computed_once``).

Several test modules assert different things on the same search (``explore_bfs.explore`` of a
slice of ``explore_bfs.SLICES`` at its own ``Config``, monitors on, as the default ``acp-model
explore`` makes it): which rows and moves it fires, that it is complete, that it finds nothing.
The search is deterministic, so each process of the suite (each xdist worker) makes it once and
hands every test the same result. Tests only read it (never mutate a result they are given).

``computed_once``: a test that runs one command twice to read both its JSON and its text (the
same options but ``--json`` and ``--out``) computes the run once; the second call renders a copy
of the first one's result.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from functools import cache
from typing import Any

import pytest

from simulator.explore import bfs as explore_bfs


@cache
def default_slice(name: str) -> explore_bfs.BfsResult:
    """The complete search of the default slice ``name``, as ``acp-model explore`` makes it."""
    sl = explore_bfs.SLICE_BY_NAME[name]
    return explore_bfs.explore(sl.cfg, name=sl.name)


def computed_once(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, key: Callable[..., Hashable]
) -> list[Hashable]:
    """For this test, ``owner.name`` computes once per ``key(*args, **kwargs)``: a later call with
    the same key returns a deep copy of the first call's result (callers may mutate what they
    get). Returns the keys of the calls, in order (so a test can assert that they matched)."""
    real = getattr(owner, name)
    made: dict[Hashable, Any] = {}
    keys: list[Hashable] = []

    def once(*args: Any, **kwargs: Any) -> Any:
        k = key(*args, **kwargs)
        keys.append(k)
        if k not in made:
            made[k] = real(*args, **kwargs)
        return copy.deepcopy(made[k])

    monkeypatch.setattr(owner, name, once)
    return keys
