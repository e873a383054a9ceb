"""Robustness of ``acp-model check``: random bytes, random JSON lines and mutated transcripts.

Properties (bounded hypothesis runs, a few seconds in all):
- the command never raises and exits 0 or 1 on any readable input (2 is for unusable input);
- every line is accounted for exactly once: used as a message, or reported by an input finding
  on that line that skips it (a blank line is skipped as information; a BOM and CRLF line
  ends are reported and the line still used);
- lines built to be bad are reported as the rule they were built to break, on their line.

The monitors are the real ones when ``properties.monitors`` exists, else small test monitors.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli import check_inputs
from properties.checking import FileReport, check_stream
from properties.engine import MonitorSet
from tests.check_support import (
    CountingMonitor,
    SecondPromptMonitor,
    basic_turn,
    line,
    notification,
    real_monitors_available,
    request,
    run_cli,
)

REAL = real_monitors_available()


def monitor_set() -> MonitorSet:
    return MonitorSet() if REAL else MonitorSet([CountingMonitor, SecondPromptMonitor])


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def account(data: bytes) -> tuple[FileReport, list[int]]:
    """Check ``data`` in-process; assert every line is used or reported exactly once."""
    used: list[int] = []
    report = check_stream(
        io.BytesIO(data), "t", monitors=monitor_set(), on_message=lambda n, s, m: used.append(n)
    )
    lines = count_lines(data)
    assert report.stats.lines == lines
    reported = {
        f.line for f in report.findings if f.kind == "input" and f.rule not in ("input.bom", "input.crlf")
    }
    assert len(used) == len(set(used)), "a line was used twice"
    assert not (set(used) & reported), "a line was both used and reported unusable"
    assert set(used) | reported == set(range(1, lines + 1))
    for f in (*report.findings, *report.open):
        assert f.line is None or 1 <= f.line <= lines, f
    return report, used


def run_command(data: bytes) -> int:
    code, out, err = run_cli(["check", "-", "--json"], stdin=data)
    assert code in (0, 1), err
    assert err == ""
    doc = json.loads(out)
    assert doc["files"][0]["lines"] == count_lines(data)
    return code


def use_same_monitors() -> None:
    check_inputs.new_monitor_set = monitor_set  # type: ignore[assignment]


# -- random bytes --------------------------------------------------------------------------------

_chunks = st.one_of(
    st.binary(max_size=40),
    st.sampled_from(
        [b"\n", b"\r\n", b"{", b"}", b'"from":', b'"agent"', b"\xef\xbb\xbf", b"\xff", b"[", b" "]
    ),
    st.sampled_from(basic_turn()),
)


@settings(max_examples=120, deadline=None)
@given(parts=st.lists(_chunks, max_size=30))
def test_random_bytes(parts: list[bytes]) -> None:
    data = b"".join(parts)
    account(data)
    saved = check_inputs.new_monitor_set
    try:
        use_same_monitors()
        run_command(data)
    finally:
        check_inputs.new_monitor_set = saved  # type: ignore[method-assign]


# -- random JSON lines, each built to be good or to break one named rule -------------------------

_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.text(max_size=8))
_json = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_objects = st.dictionaries(st.text(max_size=6), _json, max_size=4)
_senders = st.sampled_from(["client", "agent"])
_methods = st.sampled_from(
    ["session/update", "session/cancel", "_vendor/x", "future/thing", "$/cancel_request"]
)


@st.composite
def labelled_line(draw: st.DrawFn, serial: int, opening: bool) -> tuple[bytes, str | None]:
    """One line and the rule it breaks (None: a usable message). ``serial`` keeps ids fresh;
    ``opening``: the transcript starts with the Client's ``initialize``, so shows every request."""
    sender = draw(_senders)
    kind = draw(
        st.sampled_from(
            ["notification", "request", "not-object", "bad-from", "not-jsonrpc", "invalid-json",
             "blank-line", "invalid-utf8", "unknown-response-id"]
        )
    )  # fmt: skip
    params = draw(_objects)
    if kind == "notification":
        return line(sender, notification(draw(_methods), params)), None
    if kind == "request":
        return line(sender, request(f"fresh-{serial}", draw(_methods), params)), None
    if kind == "not-object":
        value = draw(st.one_of(_json_scalars, st.lists(_json, max_size=3)))
        return json.dumps(value).encode() + b"\n", "input.not-object"
    if kind == "bad-from":
        wrong = draw(
            st.one_of(st.just(None), st.text(max_size=5).filter(lambda s: s not in ("client", "agent")))
        )
        obj: dict[str, Any] = {"message": notification("x", params)}
        if wrong is not None:
            obj["from"] = wrong
        return json.dumps(obj).encode() + b"\n", "input.bad-from"
    if kind == "not-jsonrpc":
        msg = draw(
            st.sampled_from(
                [{"method": "x"}, {"jsonrpc": "1.0", "method": "x"}, {"jsonrpc": "2.0"},
                 {"jsonrpc": "2.0", "id": 1.5, "method": "x"}, {"jsonrpc": "2.0", "method": "x", "result": 1},
                 {"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": ""}}]
            )
        )  # fmt: skip
        return json.dumps({"from": sender, "message": msg}).encode() + b"\n", "input.not-jsonrpc"
    if kind == "invalid-json":
        good = line(sender, notification("session/update", params))[:-1]
        cut = draw(st.integers(1, len(good) - 1))
        return good[:cut] + b"\n", "input.invalid-json"
    if kind == "blank-line":
        return draw(st.sampled_from([b"\n", b"  \n", b"\t\n"])), "input.blank-line"
    if kind == "invalid-utf8":
        return b'{"from": "' + sender.encode() + b'", "message": {"jsonrpc": "2.0", "method": "\xc3("}}\n', (
            "input.invalid-utf8"
        )
    # a response to an id nobody requested (requests only use "fresh-..." ids): without an opening
    # initialize, the answer to a request sent before the capture began (information)
    return line(sender, {"jsonrpc": "2.0", "id": f"never-{serial}", "result": params}), (
        "input.unknown-response-id" if opening else "input.answer-before-capture"
    )


@st.composite
def labelled_transcripts(draw: st.DrawFn) -> list[tuple[bytes, str | None]]:
    size = draw(st.integers(0, 25))
    opening = draw(st.booleans())
    first = [(line("client", request("init", "initialize", {"protocolVersion": 2})), None)] if opening else []
    return first + [draw(labelled_line(i, opening)) for i in range(size)]


@settings(max_examples=40, deadline=None)
@given(lines=labelled_transcripts())
def test_random_json_lines_are_judged_by_their_labels(lines: list[tuple[bytes, str | None]]) -> None:
    data = b"".join(raw for raw, _ in lines)
    report, used = account(data)
    expected_bad = {(n, rule) for n, (_, rule) in enumerate(lines, 1) if rule is not None}
    got_bad = {(f.line, f.rule) for f in report.findings if f.kind == "input"}
    assert got_bad == expected_bad
    assert used == [n for n, (_, rule) in enumerate(lines, 1) if rule is None]


@pytest.mark.deep
@settings(max_examples=1000, deadline=None)
@given(lines=labelled_transcripts())
def test_random_json_lines_are_judged_by_their_labels_many_examples(
    lines: list[tuple[bytes, str | None]],
) -> None:
    """test_random_json_lines_are_judged_by_their_labels with 1000 examples (the default suite runs 40)."""
    test_random_json_lines_are_judged_by_their_labels.hypothesis.inner_test(lines)  # type: ignore[attr-defined]


# -- mutated valid transcripts ----------------------------------------------------------------------


def valid_transcript() -> list[bytes]:
    out: list[bytes] = []
    for turn in range(3):
        out += basic_turn(f"sess_{turn % 2}", turn + 1, turn + 1)
    return out


_VALUES = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.text(max_size=4),
    st.just([]),
    st.just({}),
    st.just([1, "a"]),
    st.booleans(),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, sub in value.items():
            out += _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            out += _paths(sub, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> list[bytes]:
    lines = valid_transcript()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "duplicate", "swap", "remove", "retype"]))
        if op == "drop":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            obj = json.loads(lines[i])
            paths = _paths(obj)
            if not paths:  # an earlier mutation left nothing to remove or retype on this line
                continue
            path = draw(st.sampled_from(paths))
            parent = obj
            for key in path[:-1]:
                parent = parent[key]
            if op == "remove":
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(_VALUES)
            lines[i] = json.dumps(obj).encode() + b"\n"
    return lines


@settings(max_examples=50, deadline=None)
@given(lines=mutated())
def test_mutated_transcripts(lines: list[bytes]) -> None:
    data = b"".join(lines)
    account(data)
    saved = check_inputs.new_monitor_set
    try:
        use_same_monitors()
        run_command(data)
        code, _, err = run_cli(["replay", "-"], stdin=data)
        assert code in (0, 1) and err == ""
    finally:
        check_inputs.new_monitor_set = saved  # type: ignore[method-assign]


@pytest.mark.deep
@settings(max_examples=1000, deadline=None)
@given(lines=mutated())
def test_mutated_transcripts_many_examples(lines: list[bytes]) -> None:
    """test_mutated_transcripts with 1000 examples (the default suite runs 50)."""
    test_mutated_transcripts.hypothesis.inner_test(lines)  # type: ignore[attr-defined]


def test_the_unmutated_transcript_is_clean() -> None:
    report, used = account(b"".join(valid_transcript()))
    assert len(used) == 18 and [f for f in report.findings if f.kind == "input"] == []


def test_full_collections_wait_while_a_transcript_is_judged_and_only_then() -> None:
    """The collector's oldest generation is not collected during a check (what the rules keep is
    long-lived); the thresholds are the caller's again afterwards, also when the check fails."""
    import gc

    from properties.checking import check_stream

    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    data = b"".join(basic_turn())
    check_stream(io.BytesIO(data), "t", on_message=lambda n, s, m: seen.append(gc.get_threshold()))
    assert seen and all(t[:2] == before[:2] and t[2] > 10**6 for t in seen)
    assert gc.get_threshold() == before

    def fail(n: int, s: str, m: Any) -> None:
        raise RuntimeError("hook failed")

    with pytest.raises(RuntimeError):
        check_stream(io.BytesIO(data), "t", on_message=fail)
    assert gc.get_threshold() == before
