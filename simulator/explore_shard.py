"""One worker's part of the distributed exhaustive search: a partition of the visited set.

Theory of operation
-------------------
The cluster search (``simulator.explore_cluster``) is the breadth-first search of
``simulator.explore_bfs``, level by level, over ``count`` shards. A state belongs to shard
``crc32(key) % count`` (a stable hash of its key, not Python's salted ``hash``), where the key
is the state's bytes (``simulator.explore_codec``), or with symmetry a digest of its
``canonical_key``. A shard keeps its states' keys (the visited set), their global numbers,
parent numbers and the events that reached them, and the level's frontier of its states.

One level:

1. ``expand``: the shard steps each frontier state it owns, in global order, with the same
   ``expander`` as the single-process search; it notes the breaches (where they occur:
   (state number, child position)), counts transitions and quiescent states, and sorts the
   successors into one batch per owner: keys (and state bytes under symmetry), the tag
   ``parent << 16 | position``, the event, and the recipes of the part states the owner may
   not know yet.
2. ``receive``: an owner drops the successors it has visited (an edge to a known number) and
   keeps, for each new key, the successor with the smallest tag: the parent that reaches it
   first in the single process's order, and so its parent there. It returns the sorted tags.
3. ``commit``: the driver has ranked all new tags of the level; the global number of a new
   state is the level's first number plus its rank, exactly the number the single-process
   search gives it (that search numbers states as it meets them: by parent, then position).

So numbers, parents, first breaches (the smallest position wins) and therefore shortest
counterexamples are the single process's. A view breach that counts only while its rule has
not been found yet is kept apart (``first_c``): the driver decides after the merge whether it
came first.

Partial-order reduction (``reduce="por"``): step 1 expands each frontier state on the side
``simulator.explore_por.ample`` picks (the single process's ``expand(st, children, side)``);
``receive`` also returns the parents of the successors it already had (``seen``). Those are
states of depth at most the level's, the states the single process's cycle proviso looks at
(an index below the end of the current level): membership in the visited set before the level's
new states are committed does not depend on the order in which the level is expanded, so the
proviso is decided exactly, one level at a time. The driver hands each owner its seen parents;
``expand_more`` expands those that went on one side on the other side too, at the positions
after the first side's successors (where the single process appends them), and a second
``receive`` merges them. A shard keeps the global numbers of the states that stayed one-sided
(``one_sided``), for the count and the bottom cycles that cannot be judged. Breaches of the
second step can precede, in position, breaches already noted, so a shard keeps the smallest
position per rule rather than the first noted.

Must not know: Ray (a shard is a plain object; ``simulator.explore_cluster`` puts it in an
actor or runs it in process), files or printing.
"""

from __future__ import annotations

import hashlib
import zlib
from array import array
from collections import Counter
from typing import Any

import numpy as np

from simulator.config import Config
from simulator.explore_bfs import Child, canonical_key, collector_paused, expander, new_parts, root_state
from simulator.explore_codec import Codec, Recipe, Sent, stable
from simulator.explore_common import Breach
from simulator.explore_por import BOTH, REDUCTIONS, ample
from simulator.world import Event

POS_BITS = 16
"""A tag is ``parent << POS_BITS | position``."""

Batch = tuple[list[Recipe], list[Event], list[bytes], list[bytes] | None, np.ndarray, np.ndarray]
"""Successors for one owner: (recipes, events, keys, state bytes or None when they are the
keys, tags, event numbers)."""

Pos = tuple[int, int]
"""Where a breach occurs: (state number, child position)."""


def owner_of(key: bytes, count: int) -> int:
    return zlib.crc32(key) % count


class Shard:
    """One partition of the visited set and its part of each level (see the module header)."""

    def __init__(
        self,
        index: int,
        count: int,
        cfg: Config,
        faults: frozenset[str],
        symmetry: bool = False,
        monitors: bool = True,
        reduce: str = "none",
    ) -> None:
        if reduce not in REDUCTIONS:
            raise ValueError(f"unknown reduction {reduce!r} ({', '.join(REDUCTIONS)})")
        self.index = index
        self.count = count
        self.parts, symmetry = new_parts(cfg, faults, symmetry, monitors)
        self.monitors = monitors
        with self.parts.stepping():
            self.codec = Codec(self.parts)
        self.expand, self.can_move = expander(self.parts, cfg)
        self.side = ample(self.parts, cfg) if reduce == "por" else None
        self.reduced: dict[int, tuple[Any, int, int]] = {}
        """This level's states expanded on one side: number -> (state, side, successors)."""
        self.one_sided = array("q")
        """Global numbers of the states that stayed expanded on one side only (``reduce``)."""
        self.canon = canonical_key(self.parts) if symmetry else None
        self.visited: dict[bytes, int] = {}
        self.numbers = array("q")
        """Global numbers of this shard's states, ascending."""
        self.parent = array("q")
        self.via = array("l")
        self.events: list[Event | None] = [None]
        self._event_ids: dict[Event, int] = {}
        self.frontier: list[tuple[int, Any]] = []
        self.sent: list[Sent] = [Sent() for _ in range(count)]
        self.pending: dict[bytes, list[Any]] = {}
        self._order: list[bytes] = []
        self._edges_pending: list[tuple[int, bytes]] = []
        self.e_src = array("q")
        self.e_pos = array("q")
        self.e_dst = array("q")
        self.first_u: dict[str, tuple[Pos, Breach, Event | None]] = {}
        self.u_hits: Counter[str] = Counter()
        self.first_c: dict[str, list[Any]] = {}
        """rule -> [position, breach, event, how many at that position]."""
        self.transitions = 0
        self.quiescent = 0
        self.foreground: Counter[str] = Counter()

    # -- keys -------------------------------------------------------------------------------
    def _key(self, st: Any, data: bytes) -> bytes:
        if self.canon is None:
            return data
        return hashlib.blake2b(stable(self.canon(st)), digest_size=16).digest()

    # -- the level protocol -----------------------------------------------------------------
    def seed(self) -> bool:
        """Take the initial state if this shard owns it."""
        root = root_state(self.parts)
        with self.parts.stepping():
            data = self.codec.state_bytes(root)
        key = self._key(root, data)
        if owner_of(key, self.count) != self.index:
            return False
        self.visited[key] = 0
        self._keep(0, -1, None, root)
        return True

    def _keep(self, number: int, parent: int, ev: Event | None, st: Any) -> None:
        self.numbers.append(number)
        self.parent.append(parent)
        if ev is None:
            self.via.append(0)
        else:
            eid = self._event_ids.get(ev)
            if eid is None:
                eid = self._event_ids[ev] = len(self.events)
                self.events.append(ev)
            self.via.append(eid)
        self.frontier.append((number, st))
        self.foreground[self.parts.fg[st[0]]] += 1

    def expand_level(self) -> list[Batch]:
        """Step every frontier state (on the side ``ample`` picks, under the reduction); one
        batch of successors per owner."""
        side = self.side
        with self.parts.stepping():  # ``ample`` may make the memoized moves, rows and all
            work = [(number, st, BOTH if side is None else side(st), 0) for number, st in self.frontier]
        self.frontier = []
        return self._expand(work)

    def expand_more(self, parents: np.ndarray) -> list[Batch]:
        """The cycle proviso: expand on their other side too those of ``parents`` (frontier
        states of this level, owned here, with a successor already visited) that went on one
        side; their new successors take the positions after the first side's."""
        work = []
        for number in parents.tolist():
            got = self.reduced.pop(number, None)
            if got is not None:
                st, sd, first = got
                work.append((number, st, BOTH ^ sd, first))
        return self._expand(work)

    def _expand(self, work: list[tuple[int, Any, int, int]]) -> list[Batch]:
        count = self.count
        codec = self.codec
        expand = self.expand
        recipes: list[list[Recipe]] = [[] for _ in range(count)]
        keys: list[list[bytes]] = [[] for _ in range(count)]
        datas: list[list[bytes]] = [[] for _ in range(count)]
        tags: list[list[int]] = [[] for _ in range(count)]
        evs: list[list[int]] = [[] for _ in range(count)]
        tables: list[dict[Event, int]] = [{} for _ in range(count)]
        children: list[Child] = []
        finish = self.parts.monitors.finish
        reduced = self.reduced
        with self.parts.stepping(), collector_paused():
            for number, st, sd, first in work:
                children.clear()
                expand(st, children, sd)
                if not children:
                    self.quiescent += 1
                    for b in finish(st[4]):
                        self._note(b, (number, 0), None)
                    continue
                if sd != BOTH and not first:
                    reduced[number] = (st, sd, len(children))
                self.transitions += len(children)
                for k, (ev, child, found, maybe) in enumerate(children, first):
                    for b in found:
                        self._note(b, (number, k), ev)
                    for b in maybe:
                        self._note_maybe(b, (number, k), ev)
                    if child is None:
                        continue
                    data = codec.state_bytes(child)
                    key = self._key(child, data)
                    o = zlib.crc32(key) % count
                    codec.recipes_for(child, self.sent[o], recipes[o])
                    keys[o].append(key)
                    if self.canon is not None:
                        datas[o].append(data)
                    tags[o].append(number << POS_BITS | k)
                    table = tables[o]
                    e = table.get(ev)
                    if e is None:
                        e = table[ev] = len(table)
                    evs[o].append(e)
        return [
            (
                recipes[o],
                list(tables[o]),
                keys[o],
                datas[o] if self.canon is not None else None,
                np.array(tags[o], dtype=np.int64),
                np.array(evs[o], dtype=np.int32),
            )
            for o in range(count)
        ]

    def _note(self, b: Breach, pos: Pos, ev: Event | None) -> None:
        self.u_hits[b.rule] += 1
        got = self.first_u.get(b.rule)
        if got is None or pos < got[0]:
            self.first_u[b.rule] = (pos, b, ev)

    def _note_maybe(self, b: Breach, pos: Pos, ev: Event) -> None:
        got = self.first_c.get(b.rule)
        if got is None or pos < got[0]:
            self.first_c[b.rule] = [pos, b, ev, 1]
        elif got[0] == pos:
            got[3] += 1

    def receive_level(self, *batches: Batch) -> tuple[np.ndarray, dict[str, Any]]:
        """Merge the level's successors for this shard; the sorted tags of its new states (all
        received this level so far), and figures (transitions so far, frontier, memory; under
        the reduction ``seen``: the parents of successors already visited)."""
        visited = self.visited
        pending = self.pending
        later = self._edges_pending
        seen: list[int] = []
        with self.parts.stepping(), collector_paused():
            for recipes, events, keys, datas, tags, evs in batches:
                self.codec.read(recipes)
                tag_list = tags.tolist()
                ev_list = evs.tolist()
                for i, key in enumerate(keys):
                    tag = tag_list[i]
                    g = visited.get(key)
                    if g is not None:
                        seen.append(tag >> POS_BITS)
                        self.e_src.append(tag >> POS_BITS)
                        self.e_pos.append(tag & 0xFFFF)
                        self.e_dst.append(g)
                        continue
                    later.append((tag, key))
                    got = pending.get(key)
                    if got is None or tag < got[0]:
                        pending[key] = [tag, key if datas is None else datas[i], events[ev_list[i]]]
        self._order = sorted(pending, key=lambda k: pending[k][0])
        new = np.array([pending[k][0] for k in self._order], dtype=np.int64)
        figures: dict[str, Any] = {
            "transitions": self.transitions,
            "states": len(self.numbers),
            "rss": _rss(),
        }
        if self.side is not None:
            figures["seen"] = np.unique(np.array(seen, dtype=np.int64))
        return new, figures

    def receive_all(self, batches: list[Batch]) -> tuple[np.ndarray, dict[str, Any]]:
        """``receive_level`` with the batches in one list."""
        return self.receive_level(*batches)

    def commit(self, numbers: np.ndarray) -> None:
        """Give the new states their global numbers (in the order of ``receive_level``'s tags)."""
        pending = self.pending
        visited = self.visited
        with self.parts.stepping():
            for key, g in zip(self._order, numbers.tolist(), strict=True):
                tag, data, ev = pending[key]
                visited[key] = g
                self._keep(g, tag >> POS_BITS, ev, self.codec.state(data))
        for tag, key in self._edges_pending:
            self.e_src.append(tag >> POS_BITS)
            self.e_pos.append(tag & 0xFFFF)
            self.e_dst.append(visited[key])
        self._edges_pending = []
        self.pending = {}
        self._order = []
        self.one_sided.extend(sorted(self.reduced))
        self.reduced = {}

    def frontier_can_move(self) -> bool:
        """Whether some frontier state has an enabled event (the search stopped at a depth limit)."""
        with self.parts.stepping():
            return any(self.can_move(st) for _, st in self.frontier)

    # -- after the search -------------------------------------------------------------------
    def peak_rss(self) -> int:
        return peak_rss()

    def step_back(self, number: int) -> tuple[int, Event | None]:
        """(parent number, event) of state ``number`` (owned here)."""
        i = int(np.searchsorted(np.frombuffer(self.numbers, dtype=np.int64), number))
        assert self.numbers[i] == number
        return self.parent[i], self.events[self.via[i]]

    def summary(self, edges: bool) -> dict[str, Any]:
        """Counts, breaches and coverage of this shard; the edges when asked for."""
        parts = self.parts
        events, rows, entity = parts.tally()
        table = parts.monitors
        out: dict[str, Any] = {
            "transitions": self.transitions,
            "quiescent": self.quiescent,
            "one_sided": np.concatenate(
                [
                    np.frombuffer(self.one_sided, dtype=np.int64),
                    np.array(sorted(self.reduced), dtype=np.int64),
                ]
            ),
            "foreground": self.foreground,
            "first_u": self.first_u,
            "u_hits": self.u_hits,
            "first_c": self.first_c,
            "events": events,
            "rows": rows,
            "entity": entity,
            "exercised_base": table.base_exercised if self.monitors else Counter(),
            "exercised_steps": table.step_tally() if self.monitors else Counter(),
            "exercised_ended": {self.codec.of("monitor", m): c for m, c in table.ended.items()}
            if self.monitors
            else {},
        }
        if edges:
            out["edges"] = (
                np.frombuffer(self.e_src, dtype=np.int64).copy(),
                np.frombuffer(self.e_pos, dtype=np.int64).copy(),
                np.frombuffer(self.e_dst, dtype=np.int64).copy(),
            )
        return out


def peak_rss() -> int:
    """This process's peak resident memory in bytes (``VmHWM``; 0 where /proc is absent)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _rss() -> int:
    """This process's resident memory in bytes (0 where /proc is absent)."""
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0
