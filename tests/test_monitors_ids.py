"""The message IDs the foreground and prompt monitors remember for as long as a session lives.

``properties/monitors/lifecycle.py`` keeps every agent message and thought ID of a session (with
the interval it was first seen in) and ``properties/monitors/prompts.py`` every messageId a
success response returned (with the request that returned it), in plain dicts. These tests hold
them to what the rules need: an ID named again far back is still known (ACC-09, DONE-03, a late
user message), the findings do not depend on how the IDs are spelled (counters, UUID-like
strings), clones evolve independently, and state keys are equal exactly for equal histories,
covering old IDs as well as recent ones.
"""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from properties.checking import check_stream
from properties.engine import MonitorSet
from properties.monitors.lifecycle import ForegroundMonitor
from properties.monitors.prompts import PromptMonitor
from tests.check_support import line, request, result, update

PROMPT = [{"type": "text", "text": "hi"}]
IDLE = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
RUNNING = {"sessionUpdate": "state_update", "state": "running"}


def turn(t: int, session: str = "s1", user: str | None = None, agent: str | None = None) -> list[bytes]:
    """One prompt turn with request id ``t``: prompt, user message, running, agent chunk, the
    answer returning the user message's ID, idle (IDs ``u<t>`` and ``a<t>`` unless given)."""
    user = f"u{t}" if user is None else user
    agent = f"a{t}" if agent is None else agent
    return [
        line("client", request(t, "session/prompt", {"sessionId": session, "prompt": PROMPT})),
        line("agent", update(session, {"sessionUpdate": "user_message", "messageId": user})),
        line("agent", update(session, RUNNING)),
        line("agent", update(session, {"sessionUpdate": "agent_message_chunk", "messageId": agent})),
        line("agent", result(t, {"messageId": user})),
        line("agent", update(session, IDLE)),
    ]


def turns(n: int, session: str = "s1") -> list[bytes]:
    return [raw for t in range(n) for raw in turn(t, session)]


def check(data: bytes, monitors: MonitorSet | None = None) -> list[tuple[str, int | None, str]]:
    with io.BytesIO(data) as fh:
        report = check_stream(fh, "t", monitors=MonitorSet() if monitors is None else monitors)
    return [(f.rule, f.line, f.explanation) for f in (*report.findings, *report.open)]


def feed(ms: MonitorSet, lines: list[bytes], first: int) -> list[str]:
    """Feed ``lines`` to ``ms`` as numbered lines from ``first``; the rules of the findings."""
    rules: list[str] = []
    for n, raw in enumerate(lines, first):
        obj = json.loads(raw)
        rules += [f.rule for f in ms.feed(obj["from"], obj["message"], n)]
    return rules


def fed(lines: list[bytes], monitors: MonitorSet | None = None, first: int = 1) -> MonitorSet:
    """``lines`` fed without a finding to ``monitors`` (a new set by default) from line ``first``."""
    ms = MonitorSet() if monitors is None else monitors
    assert feed(ms, lines, first) == []
    return ms


# -- an ID named again long after it was first seen ----------------------------------------------


def test_a_messageid_returned_again_far_back_is_caught() -> None:
    body = turns(300)
    tail = [
        line("client", request(900, "session/prompt", {"sessionId": "s1", "prompt": PROMPT})),
        line("agent", update("s1", RUNNING)),
        line("agent", result(900, {"messageId": "u3"})),  # returned for prompt 3, 297 turns ago
        line("agent", update("s1", IDLE)),
    ]
    found = check(b"".join(body + tail))
    assert found == [
        (
            "ACC-09",
            len(body) + 3,
            "messageId 'u3' returned for prompt 900 was already returned for prompt 3: distinct "
            "submissions need distinct IDs",
        )
    ]


def test_output_of_work_ended_far_back_is_caught_and_an_old_user_message_is_known() -> None:
    body = turns(300)
    late = [
        # a late report of a user message claimed 290 turns ago: known, no finding
        line("agent", update("s1", {"sessionUpdate": "user_message", "messageId": "u10"})),
        # content for an agent message of work that ended 280 turns ago, while idle: DONE-03
        line(
            "agent", update("s1", {"sessionUpdate": "agent_message_chunk", "messageId": "a20", "content": {}})
        ),
    ]
    found = check(b"".join(body + late))
    assert [f[:2] for f in found] == [("DONE-03", len(body) + 2)]


def test_an_old_thought_id_is_known_and_a_new_one_while_idle_is_not() -> None:
    thought = {"sessionUpdate": "agent_thought_chunk", "messageId": "t0", "content": {}}
    first = [raw for t in range(2) for raw in turn(t)]
    first[3] = line("agent", update("s1", thought))  # turn 0 streams a thought, not a message
    body = first + turns(200)[12:]
    again = line("agent", update("s1", thought))  # t0, 199 turns later, while idle
    new = line("agent", update("s1", {**thought, "messageId": "t1"}))
    found = check(b"".join([*body, again, new]))
    # no prompt waits: the new thought is work the Agent started itself (FG-01)
    assert [f[:2] for f in found] == [("DONE-03", len(body) + 1), ("FG-01", len(body) + 2)]


# -- the spelling of IDs does not matter ---------------------------------------------------------

STEPS = st.lists(
    st.tuples(st.integers(0, 80), st.integers(0, 6), st.sampled_from(["u", "a", "uuid-", "u0"])),
    min_size=1,
    max_size=150,
)


def transcript(steps: list[tuple[int, int, str]], name: dict[str, str] | None = None) -> bytes:
    """Random turns of one session whose IDs repeat (old ones too); ``name`` respells IDs."""
    lines: list[bytes] = []
    for n, (t, kind, prefix) in enumerate(steps):
        mid = f"{prefix}{t}"
        if name is not None:
            mid = name.setdefault(mid, str(uuid.UUID(int=len(name) * 7919 + 1, version=4)))
        if kind == 0:
            lines.append(line("client", request(n, "session/prompt", {"sessionId": "s1", "prompt": PROMPT})))
            lines.append(line("agent", result(n, {"messageId": mid})))
        elif kind == 1:
            lines.append(line("agent", update("s1", {"sessionUpdate": "user_message", "messageId": mid})))
        elif kind == 2:
            lines.append(line("agent", update("s1", RUNNING)))
        elif kind == 3:
            lines.append(line("agent", update("s1", IDLE)))
        elif kind == 4:
            lines.append(line("client", request(n, "session/prompt", {"sessionId": "s1", "prompt": PROMPT})))
        else:
            variant = "agent_message_chunk" if kind == 5 else "agent_thought_chunk"
            body = {"sessionUpdate": variant, "messageId": mid, "content": {}}
            lines.append(line("agent", update("s1", body)))
    return b"".join(lines)


def outcome(data: bytes) -> tuple[list[Any], dict[str, int]]:
    monitors = MonitorSet()
    with io.BytesIO(data) as fh:
        report = check_stream(fh, "t", monitors=monitors)
    findings = [f.to_json() for f in (*report.findings, *report.open)]
    return findings, dict(report.exercised)


@settings(max_examples=60, deadline=None)
@given(STEPS)
def test_findings_do_not_depend_on_how_ids_are_spelled(steps: list[tuple[int, int, str]]) -> None:
    """The same random history with counter IDs and with UUIDs in their place gives the same
    findings (the IDs in their texts spelled back) and the same exercise counts."""
    plain = outcome(transcript(steps))
    name: dict[str, str] = {}
    findings, exercised = outcome(transcript(steps, name))
    back = {f"'{new}'": f"'{old}'" for old, new in name.items()}
    for finding in findings:
        for new, old in back.items():
            finding["explanation"] = finding["explanation"].replace(new, old)
    assert (findings, exercised) == plain


def test_sequential_and_uuid_ids_make_the_same_findings_over_many_turns() -> None:
    """Many conforming turns, then an old ID reused both ways: one ACC-09 and one DONE-03."""
    # a turn: prompt and its answer returning u<t>, the user message, running, a<t>, idle
    steps = [(t, kind, "a" if kind == 5 else "u") for t in range(400) for kind in (0, 1, 2, 5, 3)]
    steps += [(3, 0, "u"), (2, 5, "a")]  # u3 returned again, content for a2 while idle
    data = transcript(steps)
    plain = outcome(data)
    spelled = outcome(transcript(steps, {}))
    n = data.count(b"\n")  # the last three lines: the prompt, its answer returning u3, a2
    want = [("ACC-09", n - 1), ("DONE-03", n), ("BOUND-02", n - 1)]  # (BOUND-02: open at the end)
    assert [(f["rule"], f["line"]) for f in plain[0]] == want
    assert [(f["rule"], f["line"]) for f in spelled[0]] == want
    assert plain[1] == spelled[1]


# -- clones and state keys -----------------------------------------------------------------------


def records(ms: MonitorSet, sid: str = "s1") -> tuple[Any, Any]:
    return ms.get(ForegroundMonitor).sessions[sid], ms.get(PromptMonitor).sessions[sid]


def test_a_clone_with_many_ids_evolves_independently() -> None:
    ms = fed(turns(100))
    key = ms.state_key()
    twin = ms.clone()
    assert twin.state_key() == key
    fed(turn(100), twin, first=601)  # the twin learns u100 and a100
    assert ms.state_key() == key  # the original did not
    fg, pr = records(ms)
    assert ("m", "a100") not in fg.outputs and "u100" not in pr.claimed
    # the original takes the same turn later: no ACC-09 for u100, no DONE-03 for a100
    fed(turn(100), ms, first=601)
    assert ms.state_key() == twin.state_key()
    # an ID reused on one side only is reported on that side only
    reuse = [
        line("client", request(500, "session/prompt", {"sessionId": "s1", "prompt": PROMPT})),
        line("agent", update("s1", RUNNING)),
        line("agent", result(500, {"messageId": "u7"})),
    ]
    assert feed(twin, reuse, 700) == ["ACC-09"]
    assert twin.get(PromptMonitor).sessions["s1"].claimed["u7"] == 7
    assert feed(ms, reuse, 700) == ["ACC-09"]  # (the original too, with its own record)


def test_state_keys_are_equal_for_equal_histories_and_cover_old_ids() -> None:
    a = fed(turns(60))
    b = fed(turns(60))
    assert a.state_key() == b.state_key() == a.clone().state_key()
    assert hash(a.state_key()) == hash(b.clone().state_key())
    # the same turns with one old ID spelled differently: a different state
    other = [raw for t in range(60) for raw in turn(t, user="u3x" if t == 3 else None)]
    c = fed(other)
    assert c.state_key() != a.state_key()
    thought = [raw for t in range(60) for raw in turn(t, agent="a3x" if t == 3 else None)]
    assert fed(thought).state_key() != a.state_key()


def test_state_keys_ignore_the_order_of_sessions_turns() -> None:
    """Two sessions' turns interleaved in two ways reach the same state: the keys hold the
    remembered IDs, not the lines or the order they came in."""
    one = [*turns(30, "s1"), *turns(30, "s2")]
    s1, s2 = turns(30, "s1"), turns(30, "s2")
    two = [raw for t in range(30) for raw in (*s2[6 * t : 6 * t + 6], *s1[6 * t : 6 * t + 6])]
    # request ids are shared between the sessions here, never outstanding at once in `one`;
    # in `two` each turn completes before the next starts, so they never clash either
    assert fed(one).state_key() == fed(two).state_key()


def test_what_a_session_remembers_is_its_ids_and_nothing_per_turn_besides() -> None:
    ms = fed(turns(250))
    fg, pr = records(ms)
    assert len(fg.outputs) == len(pr.claimed) == 250 and all(kind == "m" for kind, _ in fg.outputs)
    assert not (fg.await_active or fg.accepted or pr.pending or pr.unclaimed or pr.unreported)
