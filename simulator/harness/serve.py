"""The model's Agent served over file descriptors (``acp-model agent``): the loop between them
and ``simulator.peers.stdio_agent.StdioAgent``.

Owns: listening for input for the Agent's seeded pause, answering each complete line as it
comes, otherwise making one move; writing each move's lines with one ``write``; the Agent's
notes on standard error; returning at end of input or when the Client stops reading. And the
lockstep of ``acp-model drive`` (``LOCKSTEP``, ``serve_lockstep``, ``turn``): when the driver
hands the Agent two extra descriptors, the Agent moves in turns the driver gives, and decides
from the order of the messages only, never from time.

Lockstep
--------
``simulator.harness.child.ProcessPeer`` starts the Agent with two more pipes and their
descriptors in the environment (``LOCKSTEP``: ``TURN,DONE``). An Agent that knows them writes
``HELLO`` on DONE before anything else, then waits; every byte the driver writes on TURN is one
turn (``turn``): the lines the driver wrote on standard input before it (all of them: they are
in the pipe before the byte) are answered, and when they need no answer (or there were none)
the Agent makes its moves until one sends something (a move that sends nothing, inserting a
prompt, goes unseen), or until it has none. Its output is written, then DONE gets the number
of lines written (0: the Agent has no move left, it is quiescent until the driver sends
something). So the driver reads everything of a turn before it chooses again, and the same
seeds give the same transcript on any machine and under any load. An Agent that does not
know the variable never writes on DONE, and the driver falls back on listening.

Must not know: what the Agent may do (the model decides), argument parsing.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Sequence
from typing import Any

from simulator.harness.child import HELLO, LOCKSTEP, Sink, read
from simulator.peers import wire
from simulator.peers.stdio_agent import StdioAgent


def _notes(agent: StdioAgent) -> None:
    for note in agent.notes:
        sys.stderr.write(f"acp-model agent: {note}\n")
    agent.notes.clear()
    sys.stderr.flush()


def _lines(msgs: Sequence[Any]) -> bytes:
    """Messages (or batch answers) as the lines of one write."""
    return b"".join(wire.json_line(m).encode() for m in msgs)


def turn(agent: StdioAgent, lines: Sequence[bytes]) -> list[Any]:
    """One lockstep turn: the answers to ``lines``; without any, the Agent's moves until one
    sends something (empty: the Agent has no move left)."""
    out = [o for line in lines if line.strip() for o in agent.receive(line)]
    while not out:
        moves = agent.move()
        if moves is None:
            break
        out = list(moves)
    return out


def lockstep_fds() -> tuple[int, int] | None:
    """The TURN and DONE descriptors the driver handed in (None: not driven in lockstep)."""
    parts = os.environ.get(LOCKSTEP, "").split(",")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    fds = (int(parts[0]), int(parts[1]))
    try:
        for fd in fds:
            os.fstat(fd)
    except OSError:
        return None
    return fds


def complete_lines(pending: bytearray) -> list[bytes]:
    """The complete lines at the start of ``pending``, taken out of it (the start of a line yet
    to end stays). Input is kept in one growing buffer and split only where a chunk brought a
    line end: a line of many chunks costs its length once, not once per chunk."""
    end = pending.rfind(b"\n")
    if end < 0:
        return []
    lines = bytes(pending[:end]).split(b"\n")
    del pending[: end + 1]
    return lines


def serve(agent: StdioAgent, fd_in: int, fd_out: int) -> int:
    """Run until end of input (or until the Client stops reading); in lockstep when the
    environment says so (``LOCKSTEP``)."""
    fds = lockstep_fds()
    if fds is not None:
        return serve_lockstep(agent, fd_in, fd_out, *fds)
    out = Sink(fd_out)
    pending = bytearray()
    while True:
        timeout = agent.pause() if agent.moves() else None
        if select.select([fd_in], [], [], timeout)[0]:
            data = read(fd_in)
            if not data:
                return 0
            pending += data
            lines = complete_lines(pending) if b"\n" in data else []
            for line in lines:  # each complete line answered as it comes
                if line.strip():
                    answer = agent.receive(line)
                    if answer and not out(_lines(answer)):
                        return 0
        else:
            moves = agent.move()
            if moves and not out(_lines(moves)):
                return 0
        _notes(agent)


def serve_lockstep(agent: StdioAgent, fd_in: int, fd_out: int, fd_turn: int, fd_done: int) -> int:
    """Run in the driver's turns (the module docstring) until end of input or of the turns."""
    out, done = Sink(fd_out), Sink(fd_done)
    if not done(HELLO):
        return 0
    pending = bytearray()
    ended = False
    while True:
        ready, _, _ = select.select([fd_in, fd_turn], [], [])
        if fd_in in ready:
            data = read(fd_in)
            if not data:
                return 0
            pending += data
        if fd_turn not in ready:
            continue
        turns = read(fd_turn)
        if not turns:
            return 0
        for _ in turns:
            while not ended and select.select([fd_in], [], [], 0)[0]:  # all sent before the turn
                data = read(fd_in)
                ended = not data
                pending += data
            msgs = turn(agent, complete_lines(pending))
            if msgs and not out(_lines(msgs)):
                return 0
            _notes(agent)
            if not done(b"%d\n" % len(msgs)):
                return 0
        if ended:
            return 0
