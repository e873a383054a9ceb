"""Partial-order reduction for the exhaustive search: which side of a state to expand.

Theory of operation
-------------------
The events of a composed World fall on two sides (``simulator.peers.world``):

- the agent side: the Agent's own moves (they append to the agent -> client queue and step
  the monitors) and the delivery of the head of the client -> agent queue (the Agent and the
  monitors receive it);
- the client side: the Client's own moves (they append to the client -> agent queue and step
  the client views) and the deliveries of agent -> client messages (the Client and its views
  receive them).

An agent-side event and a client-side event that are both enabled commute (they write
disjoint parts of the state: one end of each queue, the agent and monitors or the client and
views) and neither disables the other (appending keeps a delivery enabled; a delivery only
makes room). Events of one side are dependent (they change the same part). So a side's enabled
events form a *persistent set* when nothing the other side does alone can enable a further
event of this side:

- the agent side, when the client -> agent queue is not empty (its one delivery, the head, is
  already enabled: the Client only appends behind it) and the agent -> client queue has room
  or the Agent has no move of its own in its state (client-side deliveries only make room, and
  the Client never changes the Agent's state);
- the client side, symmetrically: a delivery to the Client is enabled and no agent move can
  add another (FIFO: the queue is not empty, the Agent only appends behind its head;
  unordered: the queue is full), and the client -> agent queue has room or the Client has no
  move of its own.

``ample`` picks, where both sides have enabled events, a side whose events are persistent
(the one with fewer events; the agent side on a tie), else both. The search
(``simulator.explore.bfs``) adds the cycle proviso: a state whose reduced successors include
one already found at its own depth or above is expanded on both sides, so every cycle of the
reduced graph has a fully expanded state and no event is put off forever.

What it keeps (persistent sets with the proviso): every quiescent state (so the same number of
them), and every step each side takes in a reachable local situation: an agent-side event
happens in the same Agent, monitor and message state as in some run of the full search, a
client-side one in the same Client and view state. Monitor breaches, model refusals, client
view breaches and machine rows are all decided by one side's local situation, so the rules
found and the rows fired are those of the full search; counts, depths and counterexample
lengths are not (a reduced run may take the other order of two independent events, and a
shortest path in the reduced graph can be longer). Liveness in bottom cycles: see
``simulator.explore.bfs`` (a bottom cycle of the reduced graph is judged only when the full
expansion of its states leaves it nowhere).

Must not know: the search order, the visited set, files or printing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simulator.explore.state import State
from simulator.peers.config import Config
from simulator.peers.transport import schedule

CLIENT_SIDE = 1
AGENT_SIDE = 2
BOTH = CLIENT_SIDE | AGENT_SIDE

REDUCTIONS = ("none", "por")
"""``--reduce`` values: no reduction, or partial-order reduction (this module)."""


def ample(parts: State, cfg: Config) -> Callable[[Any], int]:
    """``side(state)``: ``AGENT_SIDE``, ``CLIENT_SIDE`` or ``BOTH`` (see the module header)."""
    cap = cfg.capacity
    ordered = cfg.transport == "fifo"
    agent_choices = parts.agent.choices
    client_choices = parts.client.choices

    def side(st: Any) -> int:
        a, c, ta, tc = st[:4]
        client_sends, agent_sends, to_agent, to_client = schedule(len(ta), len(tc), cap, ordered)
        on_client = (len(client_choices(c)) if client_sends else 0) + len(to_client)
        on_agent = (len(agent_choices(a)) if agent_sends else 0) + to_agent
        if not on_client or not on_agent:
            return BOTH
        agent_ok = to_agent and (agent_sends or not agent_choices(a))
        client_ok = (
            bool(to_client) and (ordered or not agent_sends) and (client_sends or not client_choices(c))
        )
        if agent_ok and (not client_ok or on_agent <= on_client):
            return AGENT_SIDE
        if client_ok:
            return CLIENT_SIDE
        return BOTH

    return side
