"""What the simulated Client may do, read from its machine tables, and its seeded deviations.

Theory of operation
-------------------
The Client follows two machines on the wire: its session (a state of ``model.session``) and
each permission request it has not answered yet (a state of ``model.permission``). Its
choices for them are the tables' client rows from those states whose guards pass
(``MachineSpec.moves(state, "client")``), turned into its wire events by two small maps:
``SESSION_EVENTS`` (``close``: session/close; ``resume``: session/resume with and without
replay) and ``PERMISSION_EVENTS`` (``select``: allow or deny; ``answer_cancelled``: the
cancelled outcome; ``error``: a JSON-RPC error instead of a result, behind the feature
``perm_error``). The tables are the Client's ``Config``'s (``Config.variant``), so a row a
variant adds for the Client is a move it offers, and a row a variant removes is one it no longer
offers. Config features and bounds still limit the session moves (``SESSION_FEATURE``;
``Config.closes``, ``resumes``, ``reattaches``). A trigger with no event here (none today) is
a row the Client cannot send, and is not offered. The moves of every state are read once per
set of tables (``choices_of``: no Client row has a guard, so they need no context).

Where the Client's state comes from:
- its session moves fire the session table; the Agent's steps of the handshake that follows
  (replay, snapshot) are not followed (judging them is the checker's business; following them
  would split Client states the explorers merge today): the Client stays in ``resuming`` until
  the response, then takes the table's row for that response (``RESPONSE_ROW``); only the
  response to its latest close or resume counts (matched by request id: under a variant that
  lets it resume while closing, the close's response does not end the resume);
- a permission request is pending when it arrives; the Agent's withdrawal (``$/cancel_request``)
  is followed only when the tables give the Client other moves from withdrawn than from pending
  (``follows_withdrawals``: under the spec's table they are the same moves); ``abandon`` is shown
  by no message. An answer is sent once: the request is then no longer the Client's to answer.

What no table the Client can follow decides (hand-written in ``simulator.peers.client``, named there):
- sending ``session/prompt`` (``PROMPT_FROM``): the request creates its prompt machine, no row
  of a machine the Client follows is its cause;
- ``session/cancel`` and ``$/cancel_request`` (``CANCEL_FROM``): the prompt table lets the
  Client cover or withdraw a prompt in every state, so it refuses neither; which state a prompt
  is in is hidden (holding and inserting show on no message), so the Client does not follow
  the prompt machine, and offers them for the session states and unanswered prompts named there.

Seeded client faults are deviations from these choices, stated with the Agent's in
``simulator.peers.deviations``.

Must not know: the Agent's internals, the transport, monitors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from model import permission as pm
from model import session as sm
from model.core import MachineSpec

SESSION_EVENTS: Mapping[str, tuple[tuple[str, Any], ...]] = {
    "close": (("close", None),),
    "resume": (("resume", True), ("resume", False)),
}
"""Session trigger -> the Client's events (name, arg) that fire it."""

SESSION_FEATURE: Mapping[str, str] = {"close": "close", "resume": "resume"}
"""Session trigger -> the Config feature that lets the Client fire it."""

EARLY: frozenset[str] = frozenset({"close"})
"""Session triggers whose events come before the cancels in ``Client.enabled`` (the others come
last). The order of the enabled events is what seeded walks pick from: keep it."""

PERMISSION_EVENTS: Mapping[str, tuple[str, ...]] = {
    "select": ("allow", "deny"),
    "answer_cancelled": ("dismiss",),
    "error": ("fail_answer",),
}
"""Permission trigger -> the Client's events (their arg is the request id)."""

PERMISSION_FEATURE: Mapping[str, str] = {"fail_answer": "perm_error"}
"""Permission event -> the Config feature without which the Client does not offer it."""

TRIGGER_OF: Mapping[str, str] = {
    **{name: trigger for trigger, events in SESSION_EVENTS.items() for name, _ in events},
    **{name: trigger for trigger, names in PERMISSION_EVENTS.items() for name in names},
}
"""Client event name -> the table trigger it fires."""

RESPONSE_ROW: Mapping[str, tuple[str, str]] = {
    sm.CLOSING: (sm.CLOSING, "closed"),
    sm.RESUMING: (sm.SYNCED, "resumed"),
}
"""Session state -> the (state, trigger) cell whose row the response to the Client's latest
session request takes it through: the close response; the resume response (the Agent's replay
and snapshot came before it, unfollowed)."""

PROMPT_FROM: tuple[str, ...] = (sm.OPEN,)
"""Session states from which the conforming Client sends session/prompt (no table row)."""

CANCEL_FROM: tuple[str, ...] = (sm.OPEN, sm.CLOSING)
"""Session states from which the Client sends session/cancel and $/cancel_request (a close
does not stop it cancelling; no table row: the prompt table allows both in every state)."""


def follows_withdrawals(tables: Mapping[str, MachineSpec]) -> bool:
    """Whether the Client must tell a withdrawn request from a pending one (see the header)."""
    spec = tables["permission"]
    return spec.moves(pm.WITHDRAWN, "client") != spec.moves(pm.PENDING, "client")


Event = tuple[str, str, Any]
Moves = tuple[tuple[str, tuple[Event, ...]], ...]
"""(session trigger, the Client events that fire it) per client row."""


@dataclass(frozen=True)
class Choices:
    """The Client's table moves per state, read once from one set of tables (the Client passes
    no context: no Client row has a guard)."""

    session: Mapping[str, tuple[Moves, Moves]]
    """Session state -> the client rows from it, in table order: those whose events come
    before the cancels (``EARLY``), then the others."""
    permission: Mapping[str, tuple[str, ...]]
    """Permission state -> the event names of its client rows, in table order."""
    follows: bool
    """``follows_withdrawals`` of these tables."""


def split(triggers: Iterable[str]) -> tuple[Moves, Moves]:
    """(early, late): each session trigger with the Client events that fire it."""
    moves = [(t, tuple(("client", name, arg) for name, arg in SESSION_EVENTS.get(t, ()))) for t in triggers]
    return tuple(m for m in moves if m[0] in EARLY), tuple(m for m in moves if m[0] not in EARLY)


def _read(tables: Mapping[str, MachineSpec]) -> Choices:
    session, permission = tables["session"], tables["permission"]
    return Choices(
        {state: split(t for t, _ in session.moves(state, "client")) for state in session.states},
        {
            state: tuple(
                n
                for trigger, _ in permission.moves(state, "client")
                for n in PERMISSION_EVENTS.get(trigger, ())
            )
            for state in permission.states
        },
        follows_withdrawals(tables),
    )


_READ: dict[tuple[int, int], tuple[MachineSpec, MachineSpec, Choices]] = {}


def choices_of(tables: Mapping[str, MachineSpec]) -> Choices:
    """The Client's ``Choices`` under ``tables`` (read once per session and permission table)."""
    session, permission = tables["session"], tables["permission"]
    key = (id(session), id(permission))
    got = _READ.get(key)
    if got is None or got[0] is not session or got[1] is not permission:
        got = _READ[key] = (session, permission, _read(tables))
    return got[2]
