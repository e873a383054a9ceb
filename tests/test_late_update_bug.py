"""The seeded bug update-after-idle breaks ``model.between`` UPDATES_BEFORE_IDLE as the declaration
states it: an update of the ended work sent after its idle "while the session is still idle". Once
the Agent reports another state after that idle (unknown: it can no longer tell what runs), new
output under it is what the foreground table allows there (work may run unobserved), so the bug
does not take its late output there: a breach no message could show, whose only conforming twin
would be the same output of work started unobserved."""

from __future__ import annotations

from simulator.peers.config import SMALL
from simulator.peers.schedulers import scripted

_P = ("client", "prompt", None)
_TURN = [
    _P, "deliver", ("agent", "insert", 1), ("agent", "user_message", 1), ("agent", "start", None),
    "deliver", ("agent", "say", None), ("agent", "answer", 1), ("agent", "end", "end_turn"),
]  # fmt: skip
_LATE = ("agent", "late_output", None)


def test_the_late_update_is_sent_while_the_session_is_still_reported_idle_only() -> None:
    cfg = SMALL.with_(features=frozenset({"unknown", "chunks"}), prompts=2, capacity=8, losses=1)
    bug = frozenset({"update-after-idle"})
    idle = scripted(_TURN, cfg, bug, settle=False)
    assert _LATE in idle.world.enabled()
    lost = scripted([*_TURN, ("agent", "lose", None)], cfg, bug, settle=False)
    assert _LATE not in lost.world.enabled()
    late = scripted([*_TURN, _LATE], cfg, bug, settle=False)
    assert {h.rule for h in late.world.hidden} == {"DONE-03"}
