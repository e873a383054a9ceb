"""The twin comparison of decidability witnesses: values the Agent chooses freely are renamed one
to one throughout a run; values the Client chose or the spec fixes never are; Client lines may be
shown before Agent lines sent while they were in flight."""

from __future__ import annotations

from typing import Any

from simulator.analysis import decidability as dec
from simulator.analysis.decidability_renaming import Comparison
from simulator.peers import wire
from simulator.peers.config import DEFAULT
from simulator.peers.schedulers import scripted
from simulator.peers.world import Line

SID = "sess_1"


def _prompt(text: str, rid: int = 1) -> Line:
    return ("client", wire.prompt(rid, SID, [wire.text(text)]))


def _user(mid: str, text: str) -> Line:
    return ("agent", wire.message("user_message", SID, mid, [wire.text(text)]))


def _answer(mid: str, rid: int = 1) -> Line:
    return ("agent", wire.result(rid, {"messageId": mid}))


def _state(state: str) -> Line:
    return ("agent", wire.state_update(SID, state, None))


def _match(twin: list[Line], target: list[Line]) -> Any:
    return Comparison(target).match(twin, 0, ())


def test_a_value_the_client_chose_is_never_renamed() -> None:
    """The prompt's text is the Client's: a twin whose prompt (and so its user message) says
    something else is no twin, though the user message's text alone would be free."""
    target = [_prompt("fix it"), _user("msg_u_1", "fix it"), _answer("msg_u_1")]
    other = [_prompt("break it"), _user("msg_u_1", "break it"), _answer("msg_u_1")]
    assert _match(other, target) is None
    assert _match(target, target) == ()


def test_the_message_id_a_response_returned_is_never_renamed() -> None:
    """The ID the success response returned ties the prompt to its user message: a twin using
    another ID for both, though consistent, is no twin; nor is one whose text differs."""
    target = [_prompt("fix it"), _user("msg_u_1", "fix it"), _answer("msg_u_1")]
    assert _match([_prompt("fix it"), _user("msg_u_7", "fix it"), _answer("msg_u_7")], target) is None
    assert _match([_prompt("fix it"), _user("msg_u_1", "done"), _answer("msg_u_1")], target) is None


def test_the_agents_own_message_and_custom_state_are_renamed_one_to_one() -> None:
    target = [_user("msg_own", "hi"), _state("_busy"), _user("msg_own", "hi"), _state("_busy")]
    twin = [
        _user("msg_x_1", "continue"),
        _state("_reviewing"),
        _user("msg_x_1", "continue"),
        _state("_reviewing"),
    ]
    assert dict(_match(twin, target)) == {"msg_own": "msg_x_1", "hi": "continue", "_busy": "_reviewing"}
    # the same target value renamed two ways, or two target values renamed to one: no twin
    assert _match([*twin[:2], _user("msg_x_2", "continue"), twin[3]], target) is None
    two = [_state("_busy"), _state("_idle_soon")]
    assert _match([_state("_reviewing"), _state("_reviewing")], two) is None
    # a custom state is renamed only to a custom state, never to a standard one
    assert _match([_state("running")], [_state("_busy")]) is None


def test_interim_text_of_a_returned_message_is_renamed_but_not_a_chunk_or_the_clients_text() -> None:
    """A user_message of a submission's message (its ID returned) carrying text no Client sent
    is interim content of the Agent's own (reading user-message-content=upsert): renamed one to
    one; never to the prompt's text, and a chunk's text (a part of the content) stays as it is."""
    target = [_prompt("fix it"), _user("msg_u_1", "ahead"), _user("msg_u_1", "fix it"), _answer("msg_u_1")]
    twin = [_prompt("fix it"), _user("msg_u_1", "(inserting)"), *target[2:]]
    assert dict(_match(twin, target)) == {"ahead": "(inserting)"}
    assert _match([_prompt("fix it"), _user("msg_u_1", "fix it"), *target[2:]], target) is None

    def chunk(text: str) -> Line:
        return ("agent", wire.chunk("user_message_chunk", SID, "msg_u_1", wire.text(text)))

    chunked = [_prompt("fix it"), chunk("fix "), chunk("it"), _answer("msg_u_1")]
    assert _match([_prompt("fix it"), chunk("fi"), chunk("x it"), _answer("msg_u_1")], chunked) is None


def test_a_free_value_is_never_renamed_to_one_the_target_fixes() -> None:
    """The Agent's own message may not be renamed to the ID a response returns elsewhere."""
    target = [_user("msg_own", "hi"), _prompt("fix it"), _user("msg_u_1", "fix it"), _answer("msg_u_1")]
    twin = [_user("msg_u_1", "hi"), _prompt("fix it"), _user("msg_u_1", "fix it"), _answer("msg_u_1")]
    assert _match(twin, target) is None


def test_a_client_line_in_flight_may_be_shown_before_what_the_agent_sent_meanwhile() -> None:
    """The Agent reports its own user message and starts its own work while the Client's prompt
    is on its way (it may not once the prompt waits: its work would be the prompt's). A
    transcript that shows the prompt before the running has a twin (the world records the
    prompt later, when the Agent receives it); one that shows the prompt's rejection before the
    prompt has none (an Agent cannot answer what it has not received)."""
    cfg = DEFAULT.with_(features=DEFAULT.features | {"goal", "announce"})
    own = ("agent", "synthetic_user", "announce")
    script = [own, ("client", "prompt", None), ("agent", "start_goal", None)]
    recorded = scripted(script, cfg, settle=False).world.transcript
    assert [s for s, _ in recorded[-2:]] == ["agent", "agent"]  # the prompt is still in flight
    shown = [*recorded, _prompt("prompt 1")]
    shown[-2], shown[-1] = shown[-1], shown[-2]  # the prompt, then the running
    assert (
        shown[-2][0] == "client" and scripted([*script, "deliver"], cfg).world.transcript[-1][0] == "client"
    )
    found = dec.twin(shown, cfg, 2000)
    assert found is not None
    assert dec.twin(shown, cfg.with_(features=cfg.features - {"announce"}), 2000) is None
    turn = scripted([("client", "prompt", None), "deliver", ("agent", "reject", 1)], cfg).world.transcript
    swapped = [*turn[:-2], turn[-1], turn[-2]]
    assert dec.twin(swapped, cfg, 2000) is None


def test_a_bare_idle_after_the_session_new_response_has_a_twin_only_with_the_snapshot_freedom() -> None:
    """An idle right after session/new's response, no work shown (what the seeded bug
    own-work-unreported sends once its unreported work ends): a conforming Agent may send it as
    the optional initial idle, a repeat of the current state (feature ``snapshot``), so the
    search finds a twin; without that freedom none."""
    cfg = DEFAULT.with_(features=DEFAULT.features | {"snapshot"})
    base = scripted([], cfg, settle=False).world.transcript
    target = [*base, _state("idle")]
    found = dec.twin(target, cfg, 2000)
    assert found == [("agent", "repeat", None)]
    assert dec.twin(target, DEFAULT, 2000) is None
    # once per run: a second bare idle has no twin
    assert dec.twin([*target, _state("idle")], cfg, 2000) is None


def test_the_agents_own_user_message_while_unknown_is_shown_has_a_twin_with_announce() -> None:
    """While unknown is reported (no work placed), the Agent may report its own user message and
    start its own work unseen, shown later by the running that restores the state: the messages
    the seeded bug user-message-after-reject sends after a rejection while unknown is shown.
    Without ``announce`` no twin."""
    cfg = DEFAULT.with_(features=DEFAULT.features | {"goal", "announce", "unseen"})
    script = [("agent", "lose", None), ("agent", "synthetic_user", "announce")]
    script += [("agent", "start_goal", "unseen"), ("agent", "restore", None)]
    target = scripted(script, cfg, settle=False).world.transcript
    assert [line[1]["params"]["update"].get("state") for line in target[-3:]] == ["unknown", None, "running"]
    found = dec.twin(target, cfg, 2000)
    assert found is not None and ("agent", "synthetic_user", "announce") in found
    assert dec.twin(target, cfg.with_(features=cfg.features - {"announce"}), 2000) is None
