"""The exhaustive search of a default explore slice, made once per test process.

Several test modules assert different things on the same search (``explore_bfs.explore`` of a
slice of ``explore_bfs.SLICES`` at its own ``Config``, monitors on, as the default ``acp-model
explore`` makes it): which rows and moves it fires, that it is complete, that it finds nothing.
The search is deterministic, so each process of the suite (each xdist worker) makes it once and
hands every test the same result. Tests only read it (never mutate a result they are given).
"""

from __future__ import annotations

from functools import cache

from simulator.explore import bfs as explore_bfs


@cache
def default_slice(name: str) -> explore_bfs.BfsResult:
    """The complete search of the default slice ``name``, as ``acp-model explore`` makes it."""
    sl = explore_bfs.SLICE_BY_NAME[name]
    return explore_bfs.explore(sl.cfg, name=sl.name)
