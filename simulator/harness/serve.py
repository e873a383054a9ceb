"""The model's Agent served over file descriptors (``acp-model agent``): the loop between them
and ``simulator.peers.stdio_agent.StdioAgent``.

Owns: listening for input for the Agent's seeded pause, answering each complete line as it
comes, otherwise making one move; writing each move's lines with one ``write``; the Agent's
notes on standard error; returning at end of input or when the Client stops reading.

Must not know: what the Agent may do (the model decides), argument parsing.
"""

from __future__ import annotations

import select
import sys
from collections.abc import Sequence
from typing import Any

from simulator.harness.child import Sink, read
from simulator.peers import wire
from simulator.peers.stdio_agent import StdioAgent


def _notes(agent: StdioAgent) -> None:
    for note in agent.notes:
        sys.stderr.write(f"acp-model agent: {note}\n")
    agent.notes.clear()
    sys.stderr.flush()


def serve(agent: StdioAgent, fd_in: int, fd_out: int) -> int:
    """Run until end of input (or until the Client stops reading)."""
    out = Sink(fd_out)

    def write(msgs: Sequence[Any]) -> bool:
        return out(b"".join(wire.json_line(m).encode() for m in msgs))

    pending = b""
    while True:
        timeout = agent.pause() if agent.moves() else None
        ready, _, _ = select.select([fd_in], [], [], timeout)
        if ready:
            data = read(fd_in)
            if not data:
                return 0
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip() and not write(agent.receive(line)):
                    return 0
            _notes(agent)
            continue
        msgs = agent.move()
        if msgs and not write(msgs):
            return 0
        _notes(agent)
