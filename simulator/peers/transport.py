"""The transport between Client and Agent: two directions of messages in flight.

Owns: in-flight messages, what delivery order each direction allows, and who may move next
(``schedule``: room to send, messages to deliver). The default is two
FIFO directions, like stdio. ``unordered`` lets agent -> client messages overtake each other
(client -> agent stays FIFO, since the transcript records client lines in the Agent's receive
order), to explore what the spec's "no fixed order" sentences allow. ``capacity`` bounds the
messages in flight per direction.

Must not know: what the messages mean.
"""

from __future__ import annotations

from typing import Any

Msg = dict[str, Any]


Turn = tuple[bool, bool, bool, range]
"""Who may move next (``schedule``): (the Client may send, the Agent may send, the oldest
message to the Agent may be delivered, the indices of the messages to the Client that may be
delivered)."""


def schedule(to_agent: int, to_client: int, capacity: int, ordered: bool) -> Turn:
    """Who may move next with ``to_agent`` and ``to_client`` messages in flight, in the order a
    world offers the moves: the Client may send while the client -> agent direction has room,
    the Agent while the agent -> client one has; the oldest message to the Agent may be delivered
    (that direction is always FIFO); of the messages to the Client, the oldest when ``ordered``,
    else any. The one statement of the composition of the two peers and the transport, which
    ``World.enabled`` and the exhaustive search's expansion (``simulator.explore``) both follow."""
    return (
        to_agent < capacity,
        to_client < capacity,
        to_agent > 0,
        range(1 if ordered and to_client else to_client),
    )


class Transport:
    __slots__ = ("capacity", "ordered", "to_agent", "to_client")

    def __init__(self, capacity: int, kind: str = "fifo") -> None:
        if kind not in ("fifo", "unordered"):
            raise ValueError(f"unknown transport {kind!r} (fifo or unordered)")
        self.capacity = capacity
        self.ordered = kind == "fifo"
        self.to_agent: list[Msg] = []
        self.to_client: list[Msg] = []

    def clone(self) -> Transport:
        new = Transport.__new__(Transport)
        new.capacity = self.capacity
        new.ordered = self.ordered
        new.to_agent = list(self.to_agent)
        new.to_client = list(self.to_client)
        return new

    def turn(self) -> Turn:
        """Who may move next (``schedule``)."""
        return schedule(len(self.to_agent), len(self.to_client), self.capacity, self.ordered)
