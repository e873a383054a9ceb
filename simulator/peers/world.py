"""The composed world: Agent, Client and Transport, stepped one enabled event at a time.

Theory of operation
-------------------
``World.enabled()`` lists every event possible now, in a fixed order: the Client's choices,
the Agent's choices, and deliveries (``("net", "to_agent", 0)`` and ``("net", "to_client", i)``).
``World.step(event)`` performs it. Sans-IO: no sockets, threads or clocks; the same events give
the same messages.

The transcript is what a proxy at the Agent's end sees: an agent message is recorded when the
Agent sends it, a client message when the Agent receives it (``Line`` = (sender, message)).
Every recorded line is fed to the monitors (if any) as it is recorded; the Client's view is fed
when the Client sends or receives (``views=False``: a conforming Client keeps no view, for runs
that never read it). When the Client is faulty, a reference view (no faults) is fed the same
messages and the two are compared (``properties.viewcheck.compare_views``). Monitors and views
judge under the readings and the variant of the run's ``Config`` (``Config.readings``,
``Config.variant``); a monitor set built for others is refused.

Hidden steps (``hidden``): where a seeded-bug Agent or Client makes a move break a rule (its
breach markers, ``Agent.marks`` / ``Client.marks``) or a faulty client view first disagrees
with the reference view, the world records ``Hidden(position, actor, rule)`` beside the
transcript: not a wire message, ``position`` is the number of transcript lines before it. A
move a fault leaves out is recorded when the world is judged quiescent (``finish``), at the end.

A world is quiescent when no event is enabled: then the "eventually" rules are judged
(``finish``), since nothing more can happen under the bounds. Fairness assumption: every
enabled event is eventually taken or disabled; deliveries are always enabled while messages
are in flight.

Under a variant (``Config.variant``, ``properties.variants``): an agent move that needs a row
the variant removed is not enabled (``Agent.choices`` tries it on a copy); a reaction to a delivered
message cannot be pruned, so one that needs a removed row stops the world with a model finding
that says so; the client-view breaches of dropped rules are set aside.

Must not know: which scheduler drives it, files, or JSON encoding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import InitVar, dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from model.clientview import ClientView
from model.clientview_parts import freeze
from model.core import ProtocolViolation
from properties.clientview import CLIENT_FAULTS
from properties.engine import MonitorSet
from properties.findings import Finding
from simulator.peers import wire
from simulator.peers.agent import AGENT_FAULTS, MAIN, Agent
from simulator.peers.client import CLIENT_SIDE_FAULTS, BlindView, Client
from simulator.peers.config import DEFAULT, Config, elicitation_modes
from simulator.peers.transport import Transport

Event = tuple[str, str, Any]
Msg = dict[str, Any]
Line = tuple[str, Msg]


class Hidden(NamedTuple):
    """A breach that is not a wire message: ``actor`` (agent or client) broke ``rule`` after
    ``position`` transcript lines."""

    position: int
    actor: str
    rule: str


_AGENT_SIDE = frozenset(AGENT_FAULTS)
_CLIENT_SIDE = frozenset(CLIENT_FAULTS) | frozenset(CLIENT_SIDE_FAULTS)
ALL_FAULTS = _AGENT_SIDE | _CLIENT_SIDE


@dataclass(slots=True, eq=False, repr=False)
class World:
    cfg: Config = DEFAULT
    faults: InitVar[frozenset[str]] = frozenset()
    monitors: MonitorSet | None = None
    record: bool = True
    views: InitVar[bool] = True
    agent: Agent = field(init=False)
    client: Client = field(init=False)
    net: Transport = field(init=False)
    transcript: list[Line] = field(init=False, default_factory=list)
    broken: ProtocolViolation | None = field(init=False, default=None)
    reference: ClientView | None = field(init=False)
    view_breaches: dict[str, str] = field(init=False, default_factory=dict)
    """Client-view rules the faulty client broke so far (rule -> first explanation)."""
    events: list[Event] = field(init=False, default_factory=list)
    """The events performed, in order (``counts`` tallies them)."""
    hidden: list[Hidden] = field(init=False, default_factory=list)
    """Breach markers beside the transcript (see the module docstring)."""
    steps: int = field(init=False, default=0)
    dropped: frozenset[str] = field(init=False)
    """Rules of the run's variant that no longer bind (their view breaches are set aside)."""
    moves: list[Event] | None = field(init=False, default=None)
    """The Agent's enabled moves while its state is unchanged (None: to be listed again)."""
    client_moves: list[Event] | None = field(init=False, default=None)
    """The Client's, likewise."""

    def __post_init__(self, faults: frozenset[str], views: bool) -> None:
        cfg, monitors = self.cfg, self.monitors
        unknown = faults - ALL_FAULTS
        if unknown:
            raise ValueError(f"unknown faults: {', '.join(sorted(unknown))}")
        if monitors is not None and monitors.monitors and monitors.readings != cfg.reading_map():
            raise ValueError("the monitors judge under other readings than the run's (Config.readings)")
        if monitors is not None and monitors.monitors and monitors.variant != cfg.variant:
            raise ValueError("the monitors judge under another variant than the run's (Config.variant)")
        self.agent = Agent(cfg, faults & _AGENT_SIDE)
        client_faults = faults & _CLIENT_SIDE
        view_faults = client_faults.intersection(CLIENT_FAULTS)
        self.client = Client(cfg, client_faults, None if views or view_faults else BlindView())
        self.net = Transport(cfg.capacity, cfg.transport)
        self.reference = ClientView(readings=cfg.reading_map()) if view_faults else None
        variant = cfg.variant
        self.dropped = frozenset(variant.drop) if variant is not None else frozenset()
        if cfg.handshake:
            self._handshake()

    def _handshake(self) -> None:
        """initialize, then session/new: each request received and answered at once. With the
        feature ``early_state`` the Agent reports the new session's initial idle before its
        session/new response (Initial state and synchronization: state updates may arrive
        before or after that response; a separate initial idle is optional)."""
        cfg = self.cfg
        early = [("agent", self.agent.initial_idle())] if "early_state" in cfg.features else []
        for sender, msg in (
            ("client", wire.initialize("init", "future" in cfg.features, elicitation_modes(cfg))),
            ("agent", wire.initialized("init")),
            ("client", wire.new_session("new")),
            *early,
            ("agent", wire.session_created("new", MAIN)),
        ):
            self._show(sender, msg)
            self._record(sender, msg)
        if self.monitors is not None:
            self.monitors.take_new()  # judged, not reported: the handshake is not a step

    # -- copying for explorers ----------------------------------------------------------------
    def clone(self) -> World:
        import copy

        new = copy.copy(self)  # the bounds, flags and memoized moves shared
        new.agent = self.agent.clone()
        new.client = self.client.clone(copy.deepcopy(self.client.view))
        new.net = self.net.clone()
        new.transcript = list(self.transcript)
        new.monitors = self.monitors.clone() if self.monitors is not None else None  # type: ignore[attr-defined]
        new.reference = copy.deepcopy(self.reference)
        new.view_breaches = dict(self.view_breaches)
        new.events = list(self.events)
        new.hidden = list(self.hidden)
        return new

    def snapshot(self) -> tuple[Any, ...]:
        """A hashable summary of everything that decides what can happen next."""
        return (
            self.agent.snapshot(),
            self.client.snapshot(),
            tuple(freeze(m) for m in self.net.to_agent),
            tuple(freeze(m) for m in self.net.to_client),
            self.client.view.snapshot(),
        )

    # -- stepping ------------------------------------------------------------------------------
    def enabled(self) -> list[Event]:
        if self.broken is not None:
            return []
        ev: list[Event] = []
        client_sends, agent_sends, to_agent, to_client = self.net.turn()
        if client_sends:
            if self.client_moves is None:  # only the Client's own steps change what it may do
                self.client_moves = self.client.enabled()
            ev.extend(self.client_moves)
        if agent_sends:
            moves = self.moves
            if moves is None:  # only the Agent's own steps change what it may do
                moves = self.moves = self.agent.choices()
            ev.extend(moves)
        if to_agent:
            ev.append(("net", "to_agent", 0))
        for i in to_client:
            ev.append(("net", "to_client", i))
        return ev

    def step(self, event: Event) -> list[Finding]:
        """Perform one enabled event; returns the findings it made certain (the monitors' new
        findings on the messages it recorded).

        A move the model's machines refuse (``ProtocolViolation``: only a seeded-bug agent or
        client tries one) becomes a finding of the violated rule, and the world stops: no event
        is enabled after it.
        """
        at = len(self.transcript) if self.record else self.steps
        marks = (len(self.agent.marks), len(self.client.marks), len(self.view_breaches))
        actor, name, arg = event
        try:
            self.steps += 1
            self.events.append(event)
            if actor == "agent":
                self.moves = None
                for msg in self.agent.do(name, arg):
                    self.net.to_client.append(msg)
                    self._record("agent", msg)
            elif actor == "client":
                self.client_moves = None
                for msg in self.client.do(name, arg):
                    self.net.to_agent.append(msg)
                    self._show("client", msg)
            elif name == "to_agent":
                self.moves = None
                msg = self.net.to_agent.pop(0)
                self._record("client", msg)
                self.agent.receive(msg)
            else:
                self.client_moves = None
                msg = self.net.to_client.pop(arg)
                self._show("agent", msg)
                if self.reference is not None:  # where the Client's view differs from the reference
                    from properties.viewcheck import compare_views

                    for rule, why in compare_views(
                        self.reference.to_json(), self.client.view.to_json(), self.dropped
                    ):
                        self.view_breaches.setdefault(rule, why)
                self.client.receive(msg)
        except ProtocolViolation as v:
            self.broken = v
            if self.monitors is not None:
                self.monitors.take_new()  # the refusal is the step's finding
            from properties.catalogue import RULES_BY_ID

            entry = RULES_BY_ID.get(v.rule)
            level = entry.level if entry is not None else "MUST"
            line = len(self.transcript) + 1
            return [Finding(v.rule, level, line, None, f"model: {v}", "rule")]
        finally:
            if marks != (len(self.agent.marks), len(self.client.marks), len(self.view_breaches)):
                self._note_hidden(at, *marks)
        return [] if self.monitors is None else self.monitors.take_new()

    @property
    def counts(self) -> Counter[str]:
        """How often each event was performed, by ``actor.name`` (``event_counts``)."""
        return event_counts(self.events)

    def _note_hidden(self, at: int, agent: int, client: int, view: int) -> None:
        """Hidden steps for the breach markers a step added (before its messages)."""
        for rule in self.agent.marks[agent:]:
            self.hidden.append(Hidden(at, "agent", rule))
        for rule in self.client.marks[client:]:
            self.hidden.append(Hidden(at, "client", rule))
        if len(self.view_breaches) != view:
            end = len(self.transcript) if self.record else self.steps
            for rule in list(self.view_breaches)[view:]:
                self.hidden.append(Hidden(end, "client", rule))

    def _show(self, sender: str, msg: Msg) -> None:
        """The Client's view, and the reference view if any, take a message the Client sent or
        received."""
        self.client.view.apply(sender, msg)
        if self.reference is not None:
            self.reference.apply(sender, msg)

    def _record(self, sender: str, msg: Msg) -> None:
        """Add a line to the transcript and feed it to the monitors (``step`` takes their new
        findings)."""
        if self.record:
            self.transcript.append((sender, msg))
        if self.monitors is not None:
            self.monitors.push(sender, msg, len(self.transcript) if self.record else self.steps)

    def quiescent(self) -> bool:
        return not self.enabled()

    def finish(self) -> list[Finding]:
        """Judge the "eventually" rules; a breach when the world is quiescent, else open. At
        quiescence, the moves a fault left out become hidden steps (``Agent.omitted``)."""
        # A world stopped by a model refusal is not quiescent: what is open stays open.
        quiescent = self.broken is None and self.quiescent()
        if quiescent:
            end = len(self.transcript) if self.record else self.steps
            for rule in self.agent.omitted():
                if not any(h.rule == rule and h.position == end for h in self.hidden):
                    self.hidden.append(Hidden(end, "agent", rule))
        if self.monitors is None:
            return []
        return self.monitors.finish(quiescent=quiescent)


def event_counts(events: Iterable[Event]) -> Counter[str]:
    """How often each event of ``events`` was performed, by ``actor.name``."""
    pairs = Counter(map(itemgetter(0, 1), events))
    return Counter({f"{actor}.{name}": n for (actor, name), n in pairs.items()})
