"""The machines of model/: load-time checks, the total (state, event) sweep, and entity arithmetic."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.main import main
from model import entity, foreground
from model.core import (
    AgentViolation,
    ClientViolation,
    Instance,
    MachineSpec,
    ProtocolViolation,
    Row,
    SpecError,
)
from model.registry import MACHINES

CELLS = [(spec, state, trigger) for spec in MACHINES for state in spec.states for trigger in spec.triggers]


def _contexts(spec: MachineSpec) -> st.SearchStrategy[dict[str, bool]]:
    return st.fixed_dictionaries({name: st.booleans() for name in spec.guards})


@st.composite
def cell_and_ctx(draw: st.DrawFn) -> tuple[MachineSpec, str, str, dict[str, bool]]:
    spec, state, trigger = draw(st.sampled_from(CELLS))
    return spec, state, trigger, draw(_contexts(spec))


def _expected(spec: MachineSpec, state: str, trigger: str, ctx: dict[str, bool]) -> str | None:
    for row in spec.cells.get((state, trigger), ()):
        if row.guard is None or ctx[row.guard_name or ""] != row.negated:
            return row.dest
    return None


@settings(max_examples=600, deadline=None)
@given(cell_and_ctx())
def test_every_cell_reaches_its_target_or_raises_the_named_violation(
    case: tuple[MachineSpec, str, str, dict[str, bool]],
) -> None:
    spec, state, trigger, ctx = case
    expected = _expected(spec, state, trigger, ctx)
    live = Instance(spec)
    live.state = state
    try:
        for step in (lambda: spec.fire(state, trigger, ctx), lambda: live.fire(trigger, ctx)):
            if expected is None:
                with pytest.raises(ProtocolViolation) as info:
                    step()
                v = info.value
                assert (v.machine, v.state, v.event) == (spec.name, state, trigger)
                assert v.rule and v.rule != "model"
                cls = ClientViolation if spec.actor_of[trigger] == "client" else AgentViolation
                assert isinstance(v, cls)
                assert live.state == state, "a refused event must leave the state unchanged"
            else:
                assert step() == expected
                live.state = state
    finally:
        live.detach()


def test_sweep_covers_every_cell_and_every_row() -> None:
    # The sweep above draws from CELLS; make sure that list really is total.
    for spec in MACHINES:
        assert len({(s, t) for sp, s, t in CELLS if sp is spec}) == len(spec.states) * len(spec.triggers)
        for row in spec.rows:
            ctx = {g: not row.negated if g == row.guard_name else False for g in spec.guards}
            assert spec.fire(row.source, row.trigger, ctx) == row.dest


def test_guard_refusal_names_the_guard_rule() -> None:
    from model import prompt

    with pytest.raises(AgentViolation) as info:
        prompt.SPEC.fire("held", "insert", {"oldest_held": False})
    assert info.value.rule == prompt.SPEC.guard_rules["oldest_held"]
    assert "guard" in info.value.detail


def test_unknown_trigger_is_a_spec_error_not_a_violation() -> None:
    with pytest.raises(SpecError):
        foreground.SPEC.fire("idle", "teleport")


def _spec(**over: object) -> MachineSpec:
    base: dict[str, object] = dict(
        name="t",
        title="t",
        per="t",
        states=("a", "b", "c"),
        initial="a",
        final=("c",),
        rows=(Row("go", "a", "b", "S"), Row("stop", "b", "c", "S")),
        forbidden={"go": "X-01", "stop": "X-01"},
    )
    base.update(over)
    return MachineSpec(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"states": ("a", "b", "c", "d")}, "unreachable states ['d']"),
        ({"final": ()}, "non-final trap states ['c']"),
        ({"initial": "z"}, "initial state 'z'"),
        (
            {"rows": (Row("go", "a", "b", "S"), Row("go", "a", "c", "S"), Row("stop", "b", "c", "S"))},
            "overlapping",
        ),
        ({"forbidden": {"go": "X-01"}}, "trigger 'stop' has no rule"),
        (
            {
                "states": ("a", "b", "c", "d"),
                "rows": (
                    Row("go", "a", "b", "S"),
                    Row("stop", "b", "c", "S"),
                    Row("go", "b", "d", "S"),
                    Row("spin", "d", "d", "S"),
                ),
                "forbidden": {"go": "X", "stop": "X", "spin": "X"},
            },
            "can reach no final or home state ['d']",
        ),
    ],
)
def test_load_time_checks_name_the_offending_states(over: dict[str, object], needle: str) -> None:
    with pytest.raises(SpecError) as info:
        _spec(**over)
    assert needle in str(info.value)


def test_idle_is_reachable_from_every_foreground_state() -> None:
    import networkx as nx

    from model.core import graph_of

    g = graph_of(foreground.SPEC)
    for s in foreground.STATES:
        assert s == "idle" or "idle" in nx.descendants(g, s)


@pytest.mark.parametrize(
    ("current", "reported", "trigger"),
    [
        ("idle", "idle", None),
        ("idle", "running", "start"),
        ("idle", "requires_action", "start_blocked"),
        ("running", "requires_action", "block"),
        ("requires_action", "running", "resume"),
        ("running", "idle", "end"),
        ("running", "unknown", "lose"),
        ("unknown", "idle", "restore_idle"),
        ("running", "_paused_for_review", "future_state"),
        ("unrecognized", "_other_future", None),
        ("unrecognized", "running", "restore_running"),
    ],
)
def test_reported_state_maps_to_trigger(current: str, reported: str, trigger: str | None) -> None:
    assert foreground.trigger_for(current, reported) == trigger
    if trigger is not None:
        assert foreground.SPEC.fire(current, trigger) in foreground.STATES


def _content(fields: dict[str, Any], upd: dict[str, Any]) -> list[Any]:
    entity.patch_list(fields, upd, "content", lambda block: True)
    return list(fields["content"])


def test_spec_example_full_update_then_chunks() -> None:
    # agent_message [A]; chunk B -> [A, B]; agent_message [C] -> [C]; chunk D -> [C, D]
    fields: dict[str, Any] = {"content": []}
    assert _content(fields, {"content": ["A"]}) == ["A"]
    entity.append_chunk(fields, "content", "B")
    assert fields["content"] == ["A", "B"]
    assert _content(fields, {"content": ["C"]}) == ["C"]
    entity.append_chunk(fields, "content", "D")
    assert fields["content"] == ["C", "D"]


def test_upsert_omitted_null_and_empty() -> None:
    assert _content({"content": ["A"]}, {}) == ["A"]
    assert _content({"content": ["A"]}, {"content": None}) == []
    assert _content({"content": ["A"]}, {"content": []}) == []
    assert _content({"content": ["A"]}, {"content": "not a list"}) == ["A"]  # malformed: omitted
    assert entity.upsert_trigger(entity.MISSING) == "upsert_keep"
    assert entity.upsert_trigger(None) == "upsert_clear"
    assert entity.upsert_trigger([]) == "upsert_clear"
    assert entity.upsert_trigger([{"type": "text", "text": "x"}]) == "upsert_content"


def test_a_field_is_kept_reset_to_its_default_or_replaced() -> None:
    fields: dict[str, Any] = {"status": "in_progress"}
    entity.patch(fields, {}, "status", lambda v: isinstance(v, str), "pending")
    assert fields["status"] == "in_progress"
    entity.patch(fields, {"status": 7}, "status", lambda v: isinstance(v, str), "pending")
    assert fields["status"] == "in_progress"  # malformed: ignored
    entity.patch(fields, {"status": None}, "status", lambda v: isinstance(v, str), "pending")
    assert fields["status"] == "pending"
    entity.patch(fields, {"status": "completed"}, "status", lambda v: isinstance(v, str), "pending")
    assert fields["status"] == "completed"


def test_chunk_for_unseen_entity_creates_it() -> None:
    assert entity.SPEC.fire("unseen", "chunk") == "with_content"
    fields: dict[str, Any] = {"content": []}
    entity.append_chunk(fields, "content", "B")
    assert fields["content"] == ["B"]


def test_meta_patch_is_by_top_level_key() -> None:
    fields: dict[str, Any] = {"_meta": {"a": 1, "b": {"x": 1}, "d": 4}}
    entity.patch_meta(fields, {"_meta": {"b": {"y": 2}, "c": 3, "d": None}})
    assert fields["_meta"] == {"a": 1, "b": {"y": 2}, "c": 3}  # not merged; a null key removed
    entity.patch_meta(fields, {})
    assert fields["_meta"] == {"a": 1, "b": {"y": 2}, "c": 3}
    entity.patch_meta(fields, {"_meta": None})
    assert fields["_meta"] == {}


def test_machines_json_lists_all_ten_with_sections(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["machines", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = [m["name"] for m in data]
    assert names == [
        "foreground",
        "prompt",
        "tool_call",
        "permission",
        "elicitation",
        "compaction",
        "terminal",
        "background_item",
        "entity",
        "session",
    ]
    for m in data:
        assert {"name", "states", "initial", "final", "transitions"} <= set(m)
        assert m["initial"] in m["states"]
        for row in m["transitions"]:
            assert {"trigger", "source", "dest", "guard", "section"} <= set(row)
            assert row["source"] in m["states"] and row["dest"] in m["states"]
            assert row["section"]


def test_machines_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["machines"]) == 0
    out = capsys.readouterr().out
    assert "foreground: Foreground state" in out
    assert "start_blocked" in out.split()


def test_every_rule_a_machine_names_is_in_the_catalogue_and_every_section_in_the_spec() -> None:
    from properties.catalogue import RULES_BY_ID, SECTIONS

    for spec in MACHINES:
        named = [*spec.forbidden.values(), *spec.guard_rules.values()]
        for rule in named:
            assert rule in RULES_BY_ID, f"{spec.name}: {rule} is not a catalogue rule"
        for row in spec.rows:
            assert row.section in SECTIONS, f"{spec.name}: section {row.section!r} not in the spec"


def test_a_prompt_stopped_by_close_breaks_the_close_rule_and_one_stopped_by_cancel_the_cancel_rule() -> None:
    from model import prompt

    closed = prompt.SPEC.fire(prompt.SPEC.fire(prompt.RECEIVED, "hold"), "close")
    assert closed == prompt.CLOSED_OUT
    for trigger in ("insert", "answer", "reject"):
        with pytest.raises(ProtocolViolation) as caught:
            prompt.SPEC.fire(closed, trigger)
        assert caught.value.rule == "ACC-13"
    assert prompt.SPEC.fire(closed, "withdraw") == prompt.WITHDRAWN
    covered = prompt.SPEC.fire(prompt.RECEIVED, "cover")
    assert prompt.SPEC.fire(covered, "close") == prompt.COVERED  # the cancel stopped it first
    with pytest.raises(ProtocolViolation) as caught:
        prompt.SPEC.fire(covered, "insert")
    assert caught.value.rule == "CANCEL-02"
    assert prompt.SPEC.fire(prompt.INSERTED, "close") == prompt.INSERTED  # insertion is not undone


def test_a_finished_child_may_be_listed_again_but_not_a_finished_terminal() -> None:
    from model import background as bg

    done = bg.UNANNOUNCED
    for trigger in ("announce", "list", "finalize", "unlist"):
        done = bg.SPEC.fire(done, trigger, {"child": True})
    assert done == bg.DONE
    assert bg.SPEC.fire(done, "list", {"child": True}) == bg.LISTED
    with pytest.raises(ProtocolViolation) as caught:  # a terminal or a tool call
        bg.SPEC.fire(done, "list", {"child": False})
    assert caught.value.rule == "BG-17"


def test_a_later_snapshot_may_keep_running_work_listed_but_not_finished_work() -> None:
    from model import background as bg

    assert bg.SPEC.fire(bg.LISTED, "keep") == bg.LISTED
    with pytest.raises(ProtocolViolation) as caught:
        bg.SPEC.fire(bg.FINALIZED, "keep")
    assert caught.value.rule == "BG-17"


def test_session_resume_is_allowed_from_open_and_closed_only() -> None:
    from model import session

    assert session.SPEC.fire(session.OPEN, "resume") == session.RESUMING
    assert session.SPEC.fire(session.CLOSED, "resume") == session.RESUMING
    with pytest.raises(ProtocolViolation) as caught:
        session.SPEC.fire(session.CLOSING, "resume")
    assert caught.value.rule == "SYNC-02"
