"""The transport between Client and Agent: two directions of messages in flight.

Owns: in-flight messages and what delivery order each direction allows. The default is two
FIFO directions, like stdio. ``unordered`` lets agent -> client messages overtake each other
(client -> agent stays FIFO, since the transcript records client lines in the Agent's receive
order), to explore what the spec's "no fixed order" sentences allow. ``capacity`` bounds the
messages in flight per direction.

Must not know: what the messages mean.
"""

from __future__ import annotations

from typing import Any

Msg = dict[str, Any]


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

    def client_deliveries(self) -> range:
        """Indices of agent -> client messages that may be delivered next."""
        return range(1 if self.ordered and self.to_client else len(self.to_client))
