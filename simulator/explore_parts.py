"""The parts of a composed World, interned and with memoized moves, for the exhaustive search.

Theory of operation
-------------------
The exhaustive search (``simulator.explore_bfs``) does not copy Worlds. A state there is a
tuple of small integers ``(agent, client, to_agent, to_client, monitors, view, reference)``:
numbers of distinct part states, and the messages in flight as tuples of message numbers. The
parts of a World are independent and deterministic: what the Agent may do next, and what a
move sends, depend only on the Agent's own state; the same holds for the Client, for each
client view and for the monitors (whose state after a message depends only on their state
before it and the message). So each part's moves are computed once per distinct part state,
by stepping a copy of a representative object with the real simulator code, and looked up by
every later state that contains the same part state. A search touches the simulator's classes
only on such misses; the rest is dictionary and tuple work.

Identity of a part state:

- Agent: ``Agent.snapshot()``, plus its retained history (message numbers) when a resume with
  replay is possible (replay sends it again, so its content decides future messages);
- Client: ``Client.snapshot()`` (the client's choices never read its view);
- monitors: each monitor's ``state_key()`` numbered, plus the requests awaiting a response
  (``simulator.explore_monitors``, which composes monitor steps one monitor at a time);
- client view (only with a faulty client view, when views decide findings): ``snapshot()`` and
  the requests it still awaits a response for;
- message: its sender and JSON text (``simulator.explore_intern``; the wire builds every
  message with its fields in one order).

Counting: every memoized move is a small list whose last slots count how often the search took
it; coverage (events, machine rows, entity triggers, rules exercised) is the per-move figures
multiplied by those counts (``tally``), which equals counting at every step.

Must not know: the search order, files or printing.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from model.core import ProtocolViolation
from simulator.agent import Agent
from simulator.client import Client
from simulator.explore_common import Breach
from simulator.explore_coverage import Row, entity_trigger, rows_fired
from simulator.explore_intern import SHIFT, Interned, Messages
from simulator.explore_monitors import MonitorTable
from simulator.world import World

BROKEN = -1
"""The part-state number of a move the model refuses (the world stops there)."""

_UNSEEN = object()

Origin = tuple[int, Any] | None
"""How a part state was first reached: (part state before, event or received message number)."""

# A memoized move: [event, next part state (or BROKEN), messages sent, breaches, count, coverage]
# (a list so the search counts in place: ``move[4] += 1``).
Move = list[Any]


def _do(ev: Any) -> Callable[[Any], Any]:
    return lambda part: part.do(ev[1], ev[2])


def _receive(msg: Any) -> Callable[[Any], Any]:
    return lambda part: part.receive(msg)


class _NoView:
    """The view a representative Client carries: its choices never read it."""

    def apply(self, sender: str, message: Any) -> None:
        return None


class Parts:
    """Every part of the composed world, interned, with memoized moves (see the module header)."""

    def __init__(self, world: World, views: bool, history: bool) -> None:
        self.msgs = Messages()
        self.history = history
        self.agents = Interned()
        self.clients = Interned()
        self.agent_moves: list[list[Move] | None] = []
        self.client_moves: list[list[Move] | None] = []
        self.agent_recv: dict[int, Move] = {}
        self.client_recv: dict[int, Move] = {}
        self.fg: list[str] = []
        """The foreground state each Agent state last reported."""
        self._rows: list[Row] = []
        client = world.client.clone(_NoView())  # type: ignore[arg-type]
        self.root_agent = self._agent_id(world.agent)
        self.root_client = self._client_id(client)
        self.agent_origin: list[Origin] = [None]
        """Per Agent state: the (state, input) move that first reached it (None: the root)."""
        self.client_origin: list[Origin] = [None]
        """Per Client state: likewise."""
        self.monitors = MonitorTable(world.monitors, self.msgs)
        self.view_table: ViewTable | None = None
        self.reference_table: ViewTable | None = None
        if views:  # a faulty client view: the World keeps a reference view beside it
            assert world.reference is not None
            self.view_table = ViewTable(world.client.view, self.msgs)
            self.reference_table = ViewTable(world.reference, self.msgs)
        self.compared: dict[tuple[int, int], tuple[Breach, ...]] = {}
        self.dropped = world.dropped
        """The variant's dropped rules: their view breaches are set aside (as ``World.step``)."""
        self._triggers: dict[int, str | None] = {}

    # -- interning ------------------------------------------------------------------------
    def _agent_id(self, agent: Agent) -> int:
        key: Any = agent.snapshot()
        if self.history:
            key = (key, tuple([self.msgs.intern("agent", m) for m in agent.history]))
        n = len(self.agents.reps)
        got = self.agents.intern(key, agent)
        if got == n:
            self.agent_moves.append(None)
            self.fg.append(agent.reported)
        return got

    def _client_id(self, client: Client) -> int:
        n = len(self.clients.reps)
        got = self.clients.intern(client.snapshot(), client)
        if got == n:
            self.client_moves.append(None)
        return got

    def stepping(self) -> AbstractContextManager[None]:
        """While the search runs: every machine row the Agent fires is logged for coverage."""
        return rows_fired(self._rows.append)

    def _take_rows(self) -> tuple[Row, ...]:
        rows = tuple(self._rows)
        self._rows.clear()
        return rows

    # -- moves ----------------------------------------------------------------------------
    def agent_choices(self, a: int) -> list[Move]:
        """The Agent's enabled events from state ``a`` and where each leads (memoized)."""
        moves = self.agent_moves[a]
        if moves is None:
            rep: Agent = self.agents.reps[a]
            made = [
                self._move(rep.clone(), ev, _do(ev), "agent", self._agent_id, self.agent_origin, (a, ev))
                for ev in rep.enabled()
            ]
            # a move that needs a row the variant in force removed is not a move (``World.enabled``)
            moves = self.agent_moves[a] = [m for m in made if not m[3] or not m[3][0].pruned]
        return moves

    def client_choices(self, c: int) -> list[Move]:
        """The Client's enabled events from state ``c`` and where each leads (memoized)."""
        moves = self.client_moves[c]
        if moves is None:
            rep: Client = self.clients.reps[c]
            moves = self.client_moves[c] = [
                self._move(
                    rep.clone(rep.view), ev, _do(ev), "client", self._client_id, self.client_origin, (c, ev)
                )
                for ev in rep.enabled()
            ]
        return moves

    def agent_receive(self, a: int, x: int) -> Move:
        """The Agent in state ``a`` receives message ``x`` (memoized)."""
        key = a << SHIFT | x
        move = self.agent_recv.get(key)
        if move is None:
            new = self.agents.reps[a].clone()
            move = self.agent_recv[key] = self._move(
                new, None, _receive(self.msgs.msgs[x]), "", self._agent_id, self.agent_origin, (a, x)
            )
        return move

    def client_receive(self, c: int, x: int) -> Move:
        """The Client in state ``c`` receives message ``x`` (memoized)."""
        key = c << SHIFT | x
        move = self.client_recv.get(key)
        if move is None:
            rep: Client = self.clients.reps[c]
            new = rep.clone(rep.view)
            move = self.client_recv[key] = self._move(
                new, None, _receive(self.msgs.msgs[x]), "", self._client_id, self.client_origin, (c, x)
            )
        return move

    def _move(
        self,
        new: Any,
        ev: Any,
        act: Callable[[Any], Any],
        sender: str,
        ident: Callable[[Any], int],
        origins: list[Origin],
        origin: Origin,
    ) -> Move:
        """Perform ``act`` on ``new`` (a copy of a representative): the move it makes. A part
        state it reaches first gets ``origin`` (its state before, and the event or the
        number of the message received)."""
        self._rows.clear()
        try:
            sent = act(new) or []
        except ProtocolViolation as exc:
            return [ev, BROKEN, (), (Breach(exc.rule, "model", str(exc), exc.removed),), 0, self._cov()]
        seq = tuple([self.msgs.intern(sender, m) for m in sent])
        triggers = tuple([t for t in map(self._trigger, seq) if t is not None]) if sender == "agent" else ()
        n = len(origins)
        got = ident(new)
        if got == n:
            origins.append(origin)
        return [ev, got, seq, (), 0, self._cov(triggers)]

    def _trigger(self, x: int) -> str | None:
        """The entity trigger of message ``x`` (computed once per message)."""
        got = self._triggers.get(x, _UNSEEN)
        if got is _UNSEEN:
            got = self._triggers[x] = entity_trigger(self.msgs.msgs[x])
        return got  # type: ignore[return-value]

    def _cov(self, triggers: tuple[str, ...] = ()) -> tuple[tuple[Row, ...], tuple[str, ...]]:
        return (self._take_rows(), triggers)

    def compare(self, r: int, v: int) -> tuple[Breach, ...]:
        """View breaches: where the faulty view ``v`` differs from the reference view ``r``."""
        got = self.compared.get((r, v))
        if got is None:
            from properties.viewcheck import compare_views

            assert self.view_table is not None and self.reference_table is not None
            found = compare_views(self.reference_table.to_json(r), self.view_table.to_json(v))
            got = self.compared[(r, v)] = tuple(
                Breach(rule, "view", why) for rule, why in found if rule not in self.dropped
            )
        return got

    # -- coverage -------------------------------------------------------------------------
    def tally(self) -> tuple[Counter[str], Counter[Row], Counter[str]]:
        """(events, machine rows, entity triggers) over every move the search took."""
        events: Counter[str] = Counter()
        rows: Counter[Row] = Counter()
        entity: Counter[str] = Counter()

        def add(move: Move, name: str) -> None:
            n = move[4]
            if not n:
                return
            events[name] += n
            for row in move[5][0]:
                rows[row] += n
            for trig in move[5][1]:
                entity[trig] += n

        for moves in (*self.client_moves, *self.agent_moves):
            for move in moves or ():
                ev = move[0]
                add(move, f"{ev[0]}.{ev[1]}")
        for move in self.agent_recv.values():
            add(move, "net.to_agent")
        for move in self.client_recv.values():
            add(move, "net.to_client")
        return events, rows, entity

    # -- what the symmetry reduction renames ------------------------------------------------
    def agent_key(self, a: int) -> Any:
        return self.agents.keys[a]

    def client_key(self, c: int) -> Any:
        return self.clients.keys[c]


class ViewTable:
    """Hash-consed client views (faulty or reference) and memoized ``apply``, like the monitors.

    A view's identity is ``snapshot()`` plus the requests it still awaits a response for
    (``_pending``: they decide how a response is applied, and ``snapshot`` leaves them out).
    """

    def __init__(self, root: Any, msgs: Messages) -> None:
        self._views = Interned()
        self._views.intern(self._key(root), root)
        self.views: list[Any] = self._views.reps
        self.steps: dict[int, int] = {}
        self.json: dict[int, Any] = {}
        self.msgs = msgs
        self.origin: list[tuple[int, int] | None] = [None]
        """Per view: the (view, message number) step that first reached it (None: the root)."""
        self.keys: list[Any] = self._views.keys

    @staticmethod
    def _key(view: Any) -> Any:
        pending = getattr(view, "_pending", {})
        return (view.snapshot(), frozenset((repr(k), v) for k, v in pending.items()))

    def apply(self, vid: int, x: int) -> int:
        key = vid << SHIFT | x
        hit = self.steps.get(key)
        if hit is None:
            view = copy.deepcopy(self.views[vid])
            view.apply(self.msgs.sender(x), self.msgs.msgs[x])
            n = len(self.origin)
            hit = self.steps[key] = self._views.intern(self._key(view), view)
            if hit == n:
                self.origin.append((vid, x))
        return hit

    def to_json(self, vid: int) -> Any:
        got = self.json.get(vid)
        if got is None:
            got = self.json[vid] = self.views[vid].to_json()
        return got
