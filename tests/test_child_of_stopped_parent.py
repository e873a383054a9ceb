"""A child session whose parent's work the Client stopped (review50 N7, N7b; N5 beside them).

The child's run is its parent's tool execution when the parent does not list the child as
background work ("Foreground work is the Agent's active response or workflow in the session,
including model processing, tool execution", Foreground and background work; "A detached child
is listed while its state is not idle", Background work). So a session/cancel of the parent, its
session/close, or an answer to the parent's permission request is a choice of the Client that
reaches the child's work (``model.between`` ``Rules.stop_reaches``):

- the child's ``cancelled`` idle is the matching stop reason, no FG-06 suspect ("The user or
  Client chose to stop the work: with session/cancel, by closing the session, or through an
  interaction the Agent offers", Stop reasons): s05 (cancel), x13 (close), s20 (the user's answer
  to the parent's permission request);
- the child's permission request still open when the parent's cancellation is confirmed is the
  cancelled work's, owed a ``$/cancel_request`` (CANCEL-07, "It SHOULD cancel each of them with
  $/cancel_request"): s21; s14, which withdraws it, conforms.

A child the parent lists as background work is not covered by a cancel ("Work in the latest
background list is not covered and keeps running"): its ``cancelled`` stays a suspect, as does a
``cancelled`` in a session no stop reached (i03).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from model import between as bw
from properties.engine import MonitorSet

CASES = Path(__file__).resolve().parent / "data" / "review50"


def _rows(name: str) -> list[tuple[str, dict[str, Any]]]:
    path = next(CASES.glob(f"{name}-*.ndjson"))
    rows = [orjson.loads(raw) for raw in path.read_bytes().splitlines()]
    return [(row["from"], row["message"]) for row in rows]


def _found(lines: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, int | None, str]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(True)
    kinds = ("rule", "open", "suspect")
    return sorted((f.rule, f.line, f.session or "") for f in ms.findings if f.kind in kinds)


@pytest.mark.parametrize("name", ["s05", "x13", "s20", "s14"])
def test_a_child_cancelled_with_its_parent_s_work_is_no_suspect(name: str) -> None:
    assert _found(_rows(name)) == []


def test_a_child_s_permission_request_left_open_after_the_parent_s_cancel_is_cancel_07() -> None:
    """s21: the parent is cancelled (line 20) while the child waits on p1; both end cancelled,
    p1 is never withdrawn nor answered: owed since the parent's confirming idle (line 25)."""
    assert _found(_rows("s21")) == [("CANCEL-07", 25, "sess_2")]


def test_a_cancelled_idle_no_stop_reached_stays_a_suspect() -> None:
    """i03: only sess_1 is cancelled; sess_2, no child of it, ends cancelled."""
    assert ("FG-06", 16, "sess_2") in _found(_rows("i03"))


def _listing_the_child(lines: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """s05 with the parent listing the child as background work once it runs (line 16)."""
    update = {
        "sessionUpdate": "state_update",
        "state": "running",
        "background": [{"type": "subagent", "sessionId": "sess_2"}],
    }
    params = {"sessionId": "sess_1", "update": update}
    listing = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    return [*lines[:15], ("agent", listing), *lines[15:]]


def test_a_detached_child_is_not_covered_by_its_parent_s_cancel() -> None:
    found = _found(_listing_the_child(_rows("s05")))
    assert ("FG-06", 18, "sess_2") in found


def test_stop_reaches_follows_the_links_of_foreground_children() -> None:
    parents = {"c": "p", "g": "c"}
    assert bw.SPEC.stop_reaches("p", "p", parents, frozenset(), closing=False)
    assert bw.SPEC.stop_reaches("p", "g", parents, frozenset(), closing=False)
    assert not bw.SPEC.stop_reaches("c", "p", parents, frozenset(), closing=False)  # not upward
    assert not bw.SPEC.stop_reaches("p", "g", parents, {"c"}, closing=False)  # c is detached
    assert bw.SPEC.stop_reaches("p", "g", parents, {"c"}, closing=True)  # closing stops it too
    assert not bw.SPEC.stop_reaches("p", "x", parents, frozenset(), closing=True)  # no link
