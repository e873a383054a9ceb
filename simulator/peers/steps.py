"""Labels of a counterexample's steps that say what was sent, seeded bugs included.

Theory of operation
-------------------
A step is an event ``(actor, move, argument)``: the model's choice, as ``describe`` prints it
(``agent.end('cancelled')``). A seeded bug may send something other than the move means (a
``Rewrite`` changes a field, ``Copies`` silences or repeats a message, ``Also`` adds an update),
so the bare label can contradict the message it sent: ``agent.end('cancelled')`` with
``stopReason`` ``end_turn`` on the wire. ``step_labels`` replays the events and, for each move
of a peer that runs with seeded bugs, lets a copy of that peer without them make the same move
from the same state: where the messages differ, the label adds what was actually sent
(``agent.end('cancelled') [sent: stopReason 'end_turn']``). Without faults the labels are the
bare events and nothing is replayed.

Must not know: files, how a report is laid out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from properties.outputs import clip
from simulator.peers import deviations
from simulator.peers.config import Config
from simulator.peers.schedulers import describe
from simulator.peers.world import Event, World

_SHOWN = 60
"""Characters of a value shown in a label (longer ones are cut)."""


def _leaves(msg: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(msg, dict):
        for k, v in msg.items():
            yield from _leaves(v, (*path, str(k)))
    else:
        yield path, msg


def difference(meant: list[dict[str, Any]], sent: list[dict[str, Any]]) -> str:
    """What ``sent`` has that ``meant`` (the same move without seeded bugs) does not, in a few
    words; empty when they are the same."""
    if meant == sent:
        return ""
    if len(meant) != len(sent):
        if not sent:
            return f"sent nothing (meant {len(meant)} message(s))"
        return f"sent {len(sent)} message(s), meant {len(meant)}"
    parts: list[str] = []
    for a, b in zip(meant, sent, strict=True):
        was = dict(_leaves(a))
        now = dict(_leaves(b))
        for path, v in now.items():
            if path not in was:
                parts.append(f"{path[-1]} {clip(repr(v), _SHOWN)} added")
            elif was[path] != v:
                parts.append(f"{path[-1]} {clip(repr(v), _SHOWN)}")
        parts.extend(f"no {path[-1]}" for path in was if path not in now)
    return "sent: " + ", ".join(parts)


def _meant(world: World, event: Event) -> list[dict[str, Any]] | None:
    """The messages ``event``'s peer would send without its seeded bugs (None: unknown)."""
    actor, name, arg = event
    try:
        peer = world.agent.clone() if actor == "agent" else world.client.clone(world.client.view)
        if actor != "net" and peer.deviations:
            peer.deviations = ()
            return peer.do(name, arg)
    except Exception:  # the conforming peer may refuse the faulty one's move: no label
        return None
    return None


def step_labels(events: list[Event], cfg: Config, faults: frozenset[str]) -> list[str]:
    """``describe`` of each event, with what was sent where a seeded bug changed it."""
    labels = [describe(ev) for ev in events]
    if not (deviations.of(faults) or deviations.of(faults, "client")):
        return labels
    world = World(cfg, faults, None, record=False)
    for i, ev in enumerate(events):
        if world.broken is not None or ev not in world.enabled():
            break
        meant = _meant(world, ev)
        queue = world.net.to_client if ev[0] == "agent" else world.net.to_agent
        before = len(queue)
        world.step(ev)
        if meant is not None:
            said = difference(meant, queue[before:])
            if said:
                labels[i] += f" [{said}]"
    return labels
