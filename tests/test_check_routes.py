"""The reader-driven dispatch of ``acp-model check`` calls exactly the handlers ``feed`` calls.

``check_stream`` without a hook or a schema lets ``scan_transcript`` hand each message to the
tables of ``MonitorSet.routes`` as the reader classified it, pairing responses with their
requests itself. A monitor registered in every table (``session/update`` included, where
``push`` never looks) records each call; the calls, their arguments and their order must be
those of feeding the same lines one by one through ``MonitorSet.feed``, for odd shapes too: an
update carrying an id or an extra key, one from the Client, a response to such a request, an
error response with a null id, params that are not an object, a response nobody asked for.
"""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings

from cli import cmd_check
from properties.engine import TABLES, Message, Monitor, MonitorSet
from properties.findings import Finding
from properties.transcript import read_transcript
from tests.check_support import basic_turn, error, line, notification, request, result, update
from tests.test_check_fastpaths import mutated_transcripts

KEYS = {
    "update": ("state_update", "agent_message_chunk", "user_message", "_custom"),
    "methods": ("session/prompt", "session/update", "session/cancel", "session/new", "_x/y", "initialize"),
}


class Recorder(Monitor):
    """Records every call of every handler it registers (all tables, odd keys included)."""

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.calls: list[tuple[Any, ...]] = []

    def handlers(self) -> Any:
        out: list[tuple[str, str, Any]] = [("update", key, self._update) for key in KEYS["update"]]
        for table in TABLES[1:]:
            out += [(table, key, self._other) for key in KEYS["methods"]]
        return out

    def _update(self, sid: str, upd: Message, line: int, msg: Message) -> None:
        self.calls.append(("update", sid, upd, line, msg))

    def _other(self, sid: str | None, payload: Message, line: int, msg: Message) -> None:
        self.calls.append(("other", sid, payload, line, msg))


def calls_both_ways(data: bytes) -> tuple[list[Any], list[Any]]:
    routed = MonitorSet([Recorder])
    assert routed.routes() is not None
    cmd_check.check_stream(io.BytesIO(data), "t", monitors=routed)
    fed = MonitorSet([Recorder])
    for item in read_transcript(io.BytesIO(data)):
        if not isinstance(item, Finding):
            n, sender, msg = item
            fed.feed(sender, msg, n)
    return routed.get(Recorder).calls, fed.get(Recorder).calls


ODD_LINES = [
    line("agent", {**update("s1", {"sessionUpdate": "state_update", "state": "running"}), "id": 7}),
    line("client", result(7, None)),  # answers the request-shaped update
    line("agent", {**update("s1", {"sessionUpdate": "agent_message_chunk"}), "_meta": {}}),
    line("client", update("s1", {"sessionUpdate": "user_message", "messageId": "u"})),
    line("agent", update(7, {"sessionUpdate": "state_update"})),  # type: ignore[arg-type]
    line("agent", notification("session/update", [1, 2])),
    line("agent", notification("session/update", {"sessionId": "s1", "update": [1]})),
    line("agent", update("s1", {"sessionUpdate": "_custom", "x": 1})),
    line("client", request(8, "session/update", {"sessionId": "s1"})),
    line("agent", result(8, None)),
    line("client", request(9, "session/prompt", [1])),  # params not an object
    line("client", request(10, "session/prompt")),  # no params
    line("client", request(11, "session/prompt", {"sessionId": 5})),  # odd session id
    line("agent", error(None, -32700, "parse error")),
    line("agent", result(10, {"messageId": "m"})),
    line("agent", error(9)),
    line("agent", result(99, {})),  # never requested
    line("client", notification("session/cancel", {"sessionId": "s1"})),
    line("client", notification("session/cancel")),
    line("agent", request("a1", "session/new", {"sessionId": "s2"})),
    line("client", {**result("a1", {"sessionId": "s3"}), "_meta": {}}),
    line("client", request(12, "session/new", {})),
    line("agent", result(12, {"sessionId": "s4"})),
    line("agent", notification("_x/y", {"sessionId": "s1"})),
    line("client", request(13, "initialize", {"protocolVersion": 2})),
    line("agent", result(13, {})),
    line("client", request(11, "session/prompt", {"sessionId": "s1"})),  # id 11 still open
]


def test_odd_shapes_reach_the_same_handlers_as_feed() -> None:
    data = b"".join(ODD_LINES) + b"".join(basic_turn("s1", 20))
    routed, fed = calls_both_ways(data)
    assert routed == fed
    kinds = [(call[0], call[3]) for call in fed]
    assert ("update", 1) in kinds and ("other", 2) not in kinds  # an update even with an id
    assert ("update", 3) in kinds and ("update", 4) not in kinds  # extra key: yes; Client: no
    assert ("other", 15) in kinds and ("other", 14) not in kinds  # null id: nothing to pair


@settings(max_examples=60, deadline=None)
@given(data=mutated_transcripts())
def test_mutated_transcripts_reach_the_same_handlers_as_feed(data: bytes) -> None:
    routed, fed = calls_both_ways(data)
    assert routed == fed


def test_routes_follow_the_gates_in_place() -> None:
    from tests.test_check_fastpaths import Gated

    ms = MonitorSet([Gated])
    routes = ms.routes()
    assert routes is not None and routes["update"] is ms.update_routes()
    cancels = routes["client-notification"]
    assert "state_update" not in routes["update"] and "session/cancel" in cancels
    ms.feed("client", notification("session/cancel", {"sessionId": "s"}), 1)
    assert "state_update" in routes["update"] and routes["client-notification"] is cancels


def test_a_monitor_that_sees_every_message_gets_no_tables() -> None:
    class Everything(Monitor):
        def on_message(self, sender: str, msg: Message, line: int) -> None:
            pass

    assert MonitorSet([Everything]).routes() is None
