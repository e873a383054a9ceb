"""Monitor states for the exhaustive search: interned, and stepped one monitor at a time.

Theory of operation
-------------------
The search (``simulator.explore_bfs``) numbers each distinct state of the whole monitor set
and asks ``MonitorTable.step(mid, x)``: the state after message ``x``, the breaches it made and
the rules it exercised. Feeding a whole ``MonitorSet`` on each new (state, message) pair costs
tens of microseconds, and the combined state space is large: it multiplies the states of ten
monitors that mostly move independently. So a combined state here is a tuple of numbers, one
per monitor (its ``state_key`` numbered), plus the number of the requests still awaiting a
response, and a step is composed from per-monitor steps:

- a message reaches few monitors (``MonitorSet.reaches``: the ones with a handler for it);
  the others stand still and keep their number;
- a reached monitor's step depends only on its own state, on the state of the monitors it
  requires (the shared facts, which the set feeds after the others, so a monitor reads them
  as they stood before the message), on the request a response answers, and on the message.
  It is computed once per such combination, by feeding a copy of a representative set that
  dispatches to that monitor and the required ones alone (``MonitorSet.derive(only=...)``),
  so its breaches and exercise counts are the monitor's own; a monitor that requires none
  (``REQUIRES`` empty) is fed alone, once per (its state, message), whatever the context;
- a monitor whose key is relative to the required monitors' counters (``KEY_CONTEXT``) is
  stepped whenever those are reached, since its number may change without a handler of its
  own running;
- the required monitors are stepped as one block.

Representatives: each per-monitor step leaves a set in which that monitor and the required
ones are mutually consistent (fed along one path, absolute counters and lines included); it
represents the pair (monitor state, required state) for later steps. Line numbers only grow
(``line``), so each feed is later than any line a stored monitor holds, as the checks assume.

A whole ``MonitorSet`` in a combined state is needed only to judge quiescence (``finish``)
and to spell a state out for symmetry (``full_key``): it is rebuilt from the nearest built
ancestor along the first step that reached the state (``materialize``).

The composition is exact when monitors interact only through the required ones, as the
engine's dispatch and keys already assume. ``check=True`` verifies it: every composed step is
also made by feeding the whole set, and keys, breaches and exercise counts must agree (the
tests run it over every slice and seeded bug).

Must not know: the search order, the simulator's parts, files or printing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from properties.engine import MonitorSet, number, pending_key, pending_tag
from simulator.explore_common import Breach, new_monitors
from simulator.explore_intern import SHIFT, Interned, Messages

CHECK = False
"""Verify every composed step against a whole-set feed (``MonitorTable(check=...)`` default;
tests switch it on)."""

# A local step: (next number(s), breaches, exercised rule counts)
Local = tuple[Any, tuple[Breach, ...], tuple[tuple[str, int], ...]]


class MonitorTable:
    """Hash-consed monitor states and memoized, composed monitor steps (see the module header).

    ``step(mid, x)`` is a list ``[next state, breaches, count, exercised]``; the search counts
    its uses in place (``count``)."""

    def __init__(self, root: MonitorSet | None, msgs: Messages, check: bool | None = None) -> None:
        self.root = root if root is not None else new_monitors(False)
        self.msgs = msgs
        self.check = CHECK if check is None else check
        tables = self.root._tables
        self.required: tuple[int, ...] = tables.required
        self._relative = tuple(
            i for i, relative in enumerate(tables.key_context) if relative and i not in self.required
        )
        self._free = tuple(
            not type(m).REQUIRES and not type(m).KEY_CONTEXT and i not in self.required
            for i, m in enumerate(self.root.monitors)
        )
        """Per monitor: it requires no other monitor, so its steps do not depend on the context."""
        self.numbers: list[dict[Any, int]] = [{} for _ in self.root.monitors]
        pc, pa, ids = self.root.interned_key(self.numbers)
        self._pending = Interned()
        self._requests: dict[tuple[str, Any], Any] = {}
        self._remember(self.root)
        pn = self._pending.intern((pc, pa), None)
        self._states = Interned()
        self._states.intern((pn, ids), (pn, ids))
        self._ids = self._states.ids
        self.parts: list[tuple[int, tuple[int, ...]]] = self._states.reps
        """Per combined state: (pending number, monitor numbers)."""
        self.sets: list[MonitorSet | None] = [self.root]
        """Per combined state: a whole set in it, where one was built (``materialize``)."""
        self.origin: list[tuple[int, int]] = [(-1, -1)]
        """Per combined state: the (state, message) step that first reached it."""
        self._r0 = self.required[0] if len(self.required) == 1 else -1
        ctx = self._ctx(ids)
        self._reps: dict[tuple[int, int, Any], MonitorSet] = {
            (i, n, ctx): self.root for i, n in enumerate(ids)
        }
        self._mon_reps: dict[tuple[int, int], MonitorSet] = {(i, n): self.root for i, n in enumerate(ids)}
        """A set holding monitor ``i`` in state ``n`` (any context), to graft from."""
        self._block_reps: dict[Any, MonitorSet] = {ctx: self.root}
        """A set whose required monitors are in these states."""
        self._local: dict[Any, Local] = {}
        self._pending_steps: dict[int, tuple[int, int, tuple[int, ...], bool]] = {}
        self._what = Interned()
        """(message, tag of the request it answers or None) -> (message, that request)."""
        self._moves: list[tuple[tuple[int, ...], bool]] = []
        """Per ``_what`` number: the monitors that message moves, and whether it reaches the
        required ones."""
        self.steps: dict[int, list[Any]] = {}
        self.ends: dict[int, tuple[Breach, ...]] = {}
        self._full: dict[int, Any] = {}
        self.exercised: Counter[str] = Counter(self.root.exercised)
        self.base_exercised: Counter[str] = Counter(self.root.exercised)
        """The rules the root set had exercised before the search (part of ``exercised``)."""
        self.ended: dict[int, Counter[str]] = {}
        """Per state judged at quiescence: the rules judging it exercised (part of ``exercised``)."""
        self._inverse: list[list[Any]] = [[] for _ in self.root.monitors]
        self.line = 1_000
        self._bare = MonitorSet([])

    # -- the search's entry points ---------------------------------------------------------
    def step(self, mid: int, x: int) -> list[Any]:
        key = mid << SHIFT | x
        hit = self.steps.get(key)
        if hit is None:
            hit = self.steps[key] = self._compose(mid, x)
            if self.check:
                self._verify(mid, x, hit)
        return hit

    def finish(self, mid: int) -> tuple[Breach, ...]:
        """The breaches of judging state ``mid`` at quiescence (computed once per state)."""
        got = self.ends.get(mid)
        if got is None:
            ms = self.materialize(mid).clone()
            ms.exercised.clear()
            found = ms.finish(quiescent=True)
            got = tuple(Breach(f.rule, "eventually", f.explanation) for f in found if f.kind == "rule")
            self.ends[mid] = got
            self.exercised.update(ms.exercised)
            self.ended[mid] = Counter(ms.exercised)
        return got

    def pending_key(self, pn: int) -> Any:
        """The requests awaiting a response numbered ``pn`` (``parts[mid][0]``), as data."""
        return self._pending.keys[pn]

    def monitor_key(self, i: int, n: int) -> Any:
        """Monitor ``i``'s ``state_key`` numbered ``n`` (``parts[mid][1][i]``). With
        ``pending_key`` it names a combined state independently of this table's numbering
        (what the cluster search names a monitor state by across processes)."""
        inverse = self._inverse[i]
        if n >= len(inverse):
            inverse[:] = list(self.numbers[i])  # numbered in insertion order (``number``)
        return inverse[n]

    def full_key(self, mid: int) -> Any:
        """``MonitorSet.state_key`` of state ``mid`` spelled out (what symmetry renames)."""
        got = self._full.get(mid)
        if got is None:
            got = self._full[mid] = self.materialize(mid).clone().state_key()
        return got

    def tally(self) -> Counter[str]:
        """How often each rule's check was exercised over every step the search took."""
        out = Counter(self.exercised)
        out.update(self.step_tally())
        return out

    def step_tally(self) -> Counter[str]:
        """The part of ``tally`` that the steps taken exercised (steps exercising the same
        rules are summed first: there are few such sets and many steps)."""
        uses: Counter[tuple[tuple[str, int], ...]] = Counter()
        for _, _, n, ex in self.steps.values():
            if n and ex:
                uses[ex] += n
        out: Counter[str] = Counter()
        for ex, n in uses.items():
            for rule, k in ex:
                out[rule] += k * n
        return out

    def materialize(self, mid: int) -> MonitorSet:
        """A whole set in state ``mid`` (built once), fed along the steps that first reached it."""
        chain = []
        while self.sets[mid] is None:
            chain.append(mid)
            mid = self.origin[mid][0]
        ms = self.sets[mid]
        assert ms is not None
        for m in reversed(chain):
            x = self.origin[m][1]
            ms = ms.derive()
            self.line += 1
            ms.feed(self.msgs.sender(x), self.msgs.msgs[x], self.line)
            if self.check:
                pc, pa, ids = ms.interned_key(self.numbers)
                pn, want = self.parts[m]
                assert (pc, pa) == self._pending.keys[pn] and ids == want, ("materialize", m)
            self.sets[m] = ms
        return ms

    # -- composing a step ------------------------------------------------------------------
    def _compose(self, mid: int, x: int) -> list[Any]:
        pn, ids = self.parts[mid]
        pending = self._pending_steps.get(pn << SHIFT | x)
        if pending is None:
            pending = self._pending_step(pn, x)
        pn2, tx, movers, block = pending
        r0 = self._r0
        ctx = ids[r0] if r0 >= 0 else self._ctx(ids)
        new = list(ids)
        breaches: tuple[Breach, ...] = ()
        exercised: tuple[tuple[str, int], ...] = ()
        local = self._local
        free = self._free
        for i in movers:  # in monitor order, as the set dispatches
            own = ids[i]
            c = None if free[i] else ctx
            got = local.get((tx, i, own, c))
            if got is None:
                got = self._step_one(tx, i, own, c)
            new[i] = got[0]
            if got[1]:
                breaches += got[1]
            if got[2]:
                exercised += got[2]
        if block:  # the required monitors come last in a set, and are dispatched last
            got = local.get((tx, -1, ctx))
            if got is None:
                got = self._step_block(tx, ctx)
            for r, n in zip(self.required, got[0], strict=True):
                new[r] = n
            breaches += got[1]
            exercised += got[2]
        key = (pn2, tuple(new))
        nid = self._ids.get(key)
        if nid is None:
            nid = self._states.intern(key, key)
            self.sets.append(None)
            self.origin.append((mid, x))
        return [nid, breaches, 0, exercised]

    def _ctx(self, ids: Any) -> Any:
        """The required monitors' numbers in ``ids`` (one number when one monitor is required)."""
        if self._r0 >= 0:
            return ids[self._r0]
        return tuple([ids[r] for r in self.required])

    def _pending_step(self, pn: int, x: int) -> tuple[int, int, tuple[int, ...], bool]:
        """Requests awaiting a response after ``x``; the number of what ``x`` is to the
        monitors (the message and the request it answers, ``_what``); the monitors it moves;
        whether it reaches the required ones."""
        sender, msg = self.msgs.sender(x), self.msgs.msgs[x]
        client, agent = self._pending.keys[pn]
        bare = self._bare
        bare.pending_client = {t[0]: self._requests[("client", t)] for t in client}
        bare.pending_agent = {t[0]: self._requests[("agent", t)] for t in agent}
        request = tag = None
        if msg.get("method") is None:
            rid = msg.get("id")
            side = bare.pending_client if sender == "agent" else bare.pending_agent
            request = side.get(rid) if type(rid) is int or type(rid) is str else None
            if request is not None:
                tag = pending_tag(rid, request)
        bare.push(sender, msg, 0)
        self._remember(bare)
        pn2 = self._pending.intern((pending_key(bare.pending_client), pending_key(bare.pending_agent)), None)
        n = len(self._what.reps)
        tx = self._what.intern((x, tag), (x, request))
        if tx == n:
            self._moves.append(self._movers(sender, msg, request))
        got = self._pending_steps[pn << SHIFT | x] = (pn2, tx, *self._moves[tx])
        return got

    def _remember(self, ms: MonitorSet) -> None:
        """Keep a request message for each pending tag (the key keeps only the tag)."""
        for side, pending in (("client", ms.pending_client), ("agent", ms.pending_agent)):
            for rid, request in pending.items():
                self._requests.setdefault((side, pending_tag(rid, request)), request)

    def _movers(self, sender: str, msg: Any, request: Any) -> tuple[tuple[int, ...], bool]:
        """(the non-required monitors ``msg`` may move, in order; whether it reaches a
        required one)."""
        reached = self.root.reaches(sender, msg, request)
        block = any(r in reached for r in self.required)
        movers = {i for i in reached if i not in self.required}
        if block:
            movers.update(self._relative)
        return tuple(sorted(movers)), block

    def _feed_only(self, rep: MonitorSet, only: tuple[int, ...], tx: int) -> MonitorSet:
        x, request = self._what.reps[tx]
        sender, msg = self.msgs.sender(x), self.msgs.msgs[x]
        ms = rep.derive(only)
        ms.pending_client = {}
        ms.pending_agent = {}
        if request is not None:
            side = ms.pending_client if sender == "agent" else ms.pending_agent
            side[msg["id"]] = request
        self.line += 1
        ms.push(sender, msg, self.line)
        return ms

    def _outcome(self, ms: MonitorSet) -> tuple[tuple[Breach, ...], tuple[tuple[str, int], ...]]:
        found = ms.take_new()
        breaches = tuple(Breach(f.rule, "monitor", f.explanation) for f in found if f.kind == "rule")
        return breaches, tuple(ms.exercised.items())

    def _number(self, ms: MonitorSet, i: int) -> int:
        return number(self.numbers[i], ms.monitors[i].state_key())

    def _required(self, ms: MonitorSet) -> tuple[tuple[int, ...], Any]:
        """The numbers of the required monitors in ``ms``, and them as a context key (one
        number when one monitor is required)."""
        numbers = tuple([self._number(ms, r) for r in self.required])
        return numbers, numbers[0] if self._r0 >= 0 else numbers

    def _rep(self, i: int, own: int, ctx: Any) -> MonitorSet:
        """A set in which monitor ``i`` is in state ``own`` and the required ones in ``ctx``."""
        got = self._reps.get((i, own, ctx))
        if got is None:
            # the monitor stood still while the context moved: graft it onto the context's set
            assert i not in self._relative, ("no representative of a relative key", i, own, ctx)
            got = self._reps[(i, own, ctx)] = self._block_reps[ctx].graft(i, self._mon_reps[(i, own)])
        return got

    def _step_one(self, tx: int, i: int, own: int, ctx: Any) -> Local:
        if self._free[i]:  # it reads no context: fed alone, from any set holding it in ``own``
            ms = self._feed_only(self._mon_reps[(i, own)], (i,), tx)
            own2 = self._number(ms, i)
            self._mon_reps.setdefault((i, own2), ms)
            got = self._local[(tx, i, own, None)] = (own2, *self._outcome(ms))
            return got
        ms = self._feed_only(self._rep(i, own, ctx), (i, *self.required), tx)
        own2 = self._number(ms, i)
        # the required monitors moved only if the message reached them
        ctx2 = self._required(ms)[1] if self._moves[tx][1] else ctx
        self._reps.setdefault((i, own2, ctx2), ms)
        self._mon_reps.setdefault((i, own2), ms)
        self._block_reps.setdefault(ctx2, ms)
        got = self._local[(tx, i, own, ctx)] = (own2, *self._outcome(ms))
        return got

    def _step_block(self, tx: int, ctx: Any) -> Local:
        ms = self._feed_only(self._block_reps[ctx], self.required, tx)
        numbers, ctx2 = self._required(ms)
        self._block_reps.setdefault(ctx2, ms)
        got = self._local[(tx, -1, ctx)] = (numbers, *self._outcome(ms))
        return got

    # -- checking the composition ------------------------------------------------------------
    def _verify(self, mid: int, x: int, hit: list[Any]) -> None:
        """Feed the whole set in state ``mid`` with ``x``: it must agree with the composed step."""
        ms = self.materialize(mid).derive()
        self.line += 1
        found = ms.feed(self.msgs.sender(x), self.msgs.msgs[x], self.line)
        pc, pa, ids = ms.interned_key(self.numbers)
        pn, want = self.parts[hit[0]]
        where = (mid, x, self.msgs.text(x))
        assert (pc, pa) == self._pending.keys[pn], ("pending", where)
        assert ids == want, ("monitor numbers", where, ids, want)
        rules = [f.rule for f in found if f.kind == "rule"]
        assert rules == [b.rule for b in hit[1]], ("breaches", where, rules, hit[1])
        counts: Counter[str] = Counter()
        for rule, k in hit[3]:
            counts[rule] += k
        assert +counts == +ms.exercised, ("exercised", where, counts, ms.exercised)
