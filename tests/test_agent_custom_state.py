"""The simulated Agent's custom state on the wire: a snapshot that repeats the state it reports
names the custom state it sent (``FUTURE_STATE``), never the foreground table's own name for
any state the Client does not recognize (``unrecognized``)."""

from __future__ import annotations

from model import foreground as fgm
from simulator.peers.agent import FUTURE_STATE
from simulator.peers.config import DEFAULT
from simulator.peers.schedulers import scripted
from tests.test_agent_stops import START, updates

FUTURE = DEFAULT.with_(features=DEFAULT.features | {"future"})


def test_a_background_snapshot_under_a_custom_state_names_that_state() -> None:
    script = [*START, ("agent", "future_state", None), ("agent", "bg_start", "terminal")]
    run = scripted([*script, ("agent", "bg_list", ("terminal", "term_1"))], FUTURE)
    states = updates(run, "state_update")
    assert run.world.agent.reported == fgm.UNRECOGNIZED
    assert [s["state"] for s in states] == ["running", FUTURE_STATE, FUTURE_STATE]
    assert states[-1]["background"] == [{"type": "terminal", "terminalId": "term_1"}]
    assert not [f for f in run.findings if f.kind == "rule"]
