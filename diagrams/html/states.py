"""What the HTML pages show as "the state after a line": the machines the checker runs and the
client view, each flattened into rows of text.

Owns: reading the checker's state out of a ``MonitorSet`` between two messages (nothing here
changes it) and the flat form both panels share: a row key ``SESSION \\x1f GROUP LABEL`` (GROUP
one digit, so rows sort by session, then by kind, then by label) mapped to its text.

Machines (``machine_rows``), per session:

- 0 the session machine of the table monitor (``model.session``), and the foreground state the
  Agent last reported (``Facts``), with a cancellation awaiting its idle, a resume awaiting its
  answer, a close;
- 1 each prompt still waiting for its answer (``model.prompt``): the prompt monitor keeps the set
  of states it may be in, since holding and inserting are hidden; with several candidates the row
  says how many and which hidden steps each assumes (the shortest run of hidden triggers from a
  candidate no hidden step leads to); a prompt the Agent answered keeps a row saying how;
- 2 each tool call, compaction and background item the table monitor tracks, in its machine's
  state;
- 9 requests still awaiting their response (connection-wide ones under ``(connection)``).

Client view (``header_rows``, ``entity_row``): per session, the reference client view's state,
completions, background, usage, prompt bookkeeping and one row per timeline entity with a short
summary.

Must not know: files, HTML, how findings are made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import networkx as nx

from model import prompt as prm
from model.core import MachineSpec
from properties.clientview_text import background, content
from properties.engine import Monitor, MonitorSet
from properties.monitors.facts import Facts
from properties.monitors.prompts import PromptMonitor
from properties.monitors.tables import TableMonitor
from properties.observe import OBSERVED
from properties.outputs import clip

SEP = "\x1f"
CONNECTION = "(connection)"
Rows = dict[str, str]
_TITLES = {spec.name: spec.title for spec in OBSERVED}
_CLIP = 80


def _find(monitors: MonitorSet, cls: type[Monitor]) -> Any:
    """The set's instance of ``cls``, or None when the set does not run it."""
    index = monitors._index.get(cls)
    return None if index is None else list.__getitem__(monitors.monitors, index)


def id_text(value: Any) -> str:
    """A JSON-RPC id as the transcript wrote it (``7``, ``"p7"``)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def session_id(message: Any) -> str | None:
    """The ``params.sessionId`` of a message, when it is a string."""
    params = message.get("params") if isinstance(message, dict) else None
    sid = params.get("sessionId") if isinstance(params, dict) else None
    return sid if isinstance(sid, str) else None


def hidden_paths(spec: MachineSpec, states: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """For each state of ``states`` (closed under the hidden triggers): the shortest run of
    hidden triggers that reaches it from a state of the set no hidden step leads to."""
    ordered = sorted(states, key=spec.states.index)
    g = nx.DiGraph()
    g.add_nodes_from(ordered)
    for state in ordered:
        for trigger in spec.hidden:
            after = spec.successor(state, trigger)
            if after in states and after != state and not g.has_edge(state, after):
                g.add_edge(state, after, trigger=trigger)
    roots = [s for s in ordered if not g.in_degree(s)] or ordered[:1]
    # unit weights: breadth-first from the roots in order, a state's first path kept
    paths = nx.multi_source_dijkstra_path(g, roots)
    return {s: tuple(g.edges[e]["trigger"] for e in pairwise(path)) for s, path in paths.items()}


def candidates_text(spec: MachineSpec, states: frozenset[str]) -> str:
    """One state, or "one of N: ..." with the hidden steps each candidate assumes."""
    ordered = sorted(states, key=spec.states.index)
    if len(ordered) == 1:
        return ordered[0]
    paths = hidden_paths(spec, states)
    parts = []
    for state in ordered:
        steps = paths.get(state, ())
        parts.append(f"{state} (assumes hidden {', '.join(steps)})" if steps else state)
    return f"one of {len(ordered)}: " + "; ".join(parts)


def _key(sid: str, group: int, label: str) -> str:
    return f"{sid}{SEP}{group}{label}"


def machine_rows(monitors: MonitorSet) -> Rows:
    """The machines' state in ``monitors`` now (see the module docstring)."""
    rows: Rows = {}
    table = _find(monitors, TableMonitor)
    if table is not None:
        for sid, seen in table.sessions.items():
            for (machine, key), state in seen.states.items():
                title = _TITLES.get(machine, machine)
                label = f"{title} {key}" if key else title
                rows[_key(sid, 0 if not key else 2, label)] = state
    facts = _find(monitors, Facts)
    if facts is not None:
        for sid, sf in facts.sessions.items():
            notes = []
            if sf.cancel_line:
                notes.append(f"cancellation received at line {sf.cancel_line}, its idle not yet sent")
            if sf.resuming:
                notes.append("resume awaiting its answer")
            if sf.closed:
                notes.append("closed")
            text = sf.state + (" · " + "; ".join(notes) if notes else "")
            rows[_key(sid, 0, "Foreground state (reported)")] = text
    prompts = _find(monitors, PromptMonitor)
    if prompts is not None:
        spec = prompts.table(prm.SPEC)
        for sid, rid, rec in prompts.waiting():
            rows[_prompt_key(sid, rid)] = f"{candidates_text(spec, rec.states)} (received at line {rec.line})"
    for side, pending in (("client", monitors.pending_client), ("agent", monitors.pending_agent)):
        for rid, (request, sid, _) in pending.items():
            where = CONNECTION if sid is None else sid
            rows[_key(where, 9, f"awaiting answer: {request.get('method')} id={id_text(rid)}")] = (
                f"sent by the {side}"
            )
    return rows


def _prompt_key(sid: str, rid: Any) -> str:
    """The row key of the waiting prompt ``rid`` of session ``sid``."""
    return _key(sid, 1, f"Prompt {id_text(rid)}")


def answered_prompt(monitors: MonitorSet, message: Mapping[str, Any]) -> tuple[str, str] | None:
    """For a response: how the end of the row key of the prompt it answered reads, and that
    row's text: the states the prompt monitor's answer left the prompt in
    (``PromptMonitor.fired``), and the answer. None for any other message."""
    prompts = _find(monitors, PromptMonitor)
    if prompts is None or "method" in message or "id" not in message:
        return None
    if "error" in message:
        err = message.get("error")
        answer = f"error {id_text(err.get('code') if isinstance(err, dict) else None)}"
    else:
        result = message.get("result")
        mid = result.get("messageId") if isinstance(result, dict) else None
        answer = "success" + (f", messageId {id_text(mid)}" if mid is not None else "")
    reached = "/".join(sorted(prompts.fired, key=prompts.table(prm.SPEC).states.index))
    text = (
        f"{reached} ({answer})"
        if reached
        else f"answered ({answer}) where no state allows it: see the finding"
    )
    return f"{SEP}1Prompt {id_text(message['id'])}", text


# -- the client view -------------------------------------------------------------------------------
def _entity(etype: str, ent: Mapping[str, Any]) -> str:
    if etype == "tool_call":
        title = ent.get("title")
        shown = clip(str(title), _CLIP, one_line=True) if title else "(no title)"
        return f"[{ent.get('status')}] {ent.get('kind')} {shown}"
    if etype == "compaction":
        return f"[{ent.get('status')}] summary {content(ent.get('summary'), _CLIP)}"
    if etype == "terminal":
        exited = ent.get("exitStatus")
        status = "running" if exited is None else "exited"
        return f"[{status}] {clip(str(ent.get('command') or '(command unknown)'), _CLIP, one_line=True)}"
    if etype == "plan":
        return "plan (removed)" if ent.get("removed") else "plan"
    return content(ent.get("content"), _CLIP)


def header_rows(
    sid: str,
    state: Mapping[str, Any],
    preserved: int,
    before: tuple[Mapping[str, Any], Rows] | None = None,
) -> Rows:
    """The rows of one session's view besides its entities: ``state`` is the view's
    ``session`` object (``ClientView.session_state``), ``preserved`` the count of unknown
    updates kept. Given the state and rows ``before``, unchanged prompt bookkeeping keeps its
    rows (a long session has one per prompt)."""
    rows: Rows = {
        _key(sid, 0, "state"): f"{state['state']} (completions {state['completions']})",
        _key(sid, 0, "background"): clip(background(state["background"]), _CLIP, one_line=True),
    }
    usage = state["usage"]
    if usage["used"] is not None:
        rows[_key(sid, 0, "usage")] = f"{usage['used']} of {usage['size']} tokens"
    if state["last_stop_reason"] is not None:
        rows[_key(sid, 0, "last stop reason")] = id_text(state["last_stop_reason"])
    rejected = state["rejected_prompts"]
    old_state, old_rows = before if before is not None else ({"prompts": {}, "rejected_prompts": {}}, {})
    was, was_rejected = old_state["prompts"], old_state["rejected_prompts"]
    for key, mid in state["prompts"].items():
        if key not in rejected:
            row = _key(sid, 1, f"prompt {key}")
            old_text = (
                old_rows.get(row) if key in was and was[key] == mid and key not in was_rejected else None
            )
            rows[row] = old_text or ("(pending)" if mid is None else f"messageId {id_text(mid)}")
    for key, code in rejected.items():
        rows[_key(sid, 1, f"prompt {key}")] = f"rejected ({id_text(code)})"
    if preserved:
        rows[_key(sid, 3, "preserved unknown updates")] = str(preserved)
    return rows


def entity_row(sid: str, position: int, etype: str, eid: str, ent: Mapping[str, Any]) -> tuple[str, str]:
    """The row of the entity at ``position`` (1-based) of a session's timeline."""
    return _key(sid, 2, f"#{position:04d} {etype} {eid}"), _entity(etype, ent)
