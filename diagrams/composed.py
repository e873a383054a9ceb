"""A small composed state graph: foreground x prompts x one tool call x one background item.

Theory of operation
-------------------
The product of the model's own machine tables (``model.foreground``, ``model.prompt``,
``model.toolcall``, ``model.background``), explored breadth-first from the start state
(``simulator.explore.bfs`` searches the whole World: peers, transport, monitors). The rules
between the machines are ``model.between``'s declarations, run by their ``Rules`` functions, so a
variant (``Model.of_variant``: its tables, its switched parameters, its dropped rules) or an edit
of a declaration changes this graph too:

* ``updates_before_idle`` (``owed_before_idle``): foreground work ends (``end``) only when it owes
  nothing: the tool call, unless it may carry on past the idle (``may_carry_on``), has a final
  status, and the background item is not announced and still unlisted.
* ``running_on_progress``: a status move of the tool call that is the call running (``tool_runs``)
  is progress of the foreground work (``tool_progress``: the call is the foreground work's and
  never listed), so it needs the foreground table's ``output`` in the foreground state (running:
  not while requires_action, FG-04); its other moves (paused, failed, cancelled, ...) may come
  while the work is blocked too (Waiting for user action: "or idle if the work ends without
  resuming").
* ``cancel_covers`` and ``later_prompts_uncovered`` (``covers_prompt``): ``session/cancel`` is one
  client event that fires the prompt table's ``cover`` row of every prompt already sent, at once.
* ``held_in_order`` (``oldest_waiting``): the prompt table's guard ``oldest_held`` over the prompts
  that wait for insertion (``waiting_states``: received, held or cancel-requested).
* ``steering`` (``may_insert_now``): where the rules in force forbid inserting a prompt into the
  work it was received in, the prompt waits for that work's idle (recorded in the state, and shown
  as ``(waits)`` in its label, only then: under the spec's rules every prompt may go in).

A rule a variant dropped no longer binds (``Model.binds``; a table's cells and guards relax with
``MachineSpec.changed``). The simplifications are ours, not the spec's:

* Foreground is kept to idle / running / requires_action: the observability states (unknown,
  unrecognized) are reachable from everywhere and would only multiply the graph (Session states).
  requires_action stands for work blocked on a user-action request the graph does not draw
  (``blocked_on_user``); stop reasons, message content and user-message reports are not drawn.
* Self-loop rows (content updates, repeated cancels) are left out: they do not change the
  composed state.
* Each prompt and the tool call start in an extra "not yet" state (``unsent``, ``unstarted``);
  ``send`` (client) and ``start`` (agent) create them. Prompt k+1 is sent after prompt k.
* The tool call is the foreground work's: it starts only while foreground work is active (a call
  first reported while idle would not be), and never carries on past the idle as independent
  work: the graph is drawn under the reading ``tool-updates-after-idle=foreground-owed``, where
  the default ``background`` lets an in_progress call go on after the idle (a second, background
  kind of tool call this graph does not draw).
* What a cancel covers besides prompts (the foreground work, its tool call, the background item
  under ``covers_background``) is owed at the idle that confirms it, and that idle's stop reason
  is not drawn: a cancel changes the prompts only.
* Prompt guards other than ``oldest_held`` keep their defaults (a rejection is never only because
  work is active; the default reading of ``rejected-after-cancel-request``: a withdrawn prompt is
  answered -32800). The background item's guards all pass (``BG_GUARDS``); it is tied to the rest
  only by the idle above.

Reported per configuration: states, edges, strongly connected components, quiescent states
(foreground idle, no prompt or tool call in flight, no background item live: the spec's "quiet"
session), dead ends (states with no move at all), and whether every state can still reach a
quiescent one. Files: ``summary.json`` and ``summary.md`` for every configuration, and a GraphML
and a PNG (dots by foreground state, one column per distance from the start) of the smallest one
only: the larger graphs would be megabytes of committed text.

Must not know: the simulator, JSON-RPC, or the CLI.
"""

from __future__ import annotations

import io
import json
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import networkx as nx

from model import background, between, foreground, prompt, registry, toolcall
from model.clientview_parts import ACTIVE_STATES
from model.core import Context, MachineSpec

if TYPE_CHECKING:
    from properties.variants import Variant

FG_STATES = ("idle", "running", "requires_action")
UNSENT, UNSTARTED = "unsent", "unstarted"
BG_GUARDS = {"child": True, "becomes_foreground": True}
"""The background item's guards all pass: it stands for any item (a subagent's too, and one
foreground work may start waiting on, as an alternative reading allows)."""
TOOL_UPDATES_AFTER_IDLE = "foreground-owed"
"""The alternative of the reading ``tool-updates-after-idle`` the graph is drawn under (ours, see
the module docstring): the tool call never carries on past its work's idle."""
_STATUS = {**{t: s for s, t in toolcall.STATUS_TRIGGER.items()}, "custom_status": toolcall.CUSTOM_STATUS}
"""A tool-call trigger -> the status its update reports."""

State = tuple[str, tuple[str, ...], str, str, frozenset[int]]
"""(foreground, prompt states, tool call, background item, the prompts that wait for the idle
of the work they were received in: ``steering``)."""


@dataclass(frozen=True, eq=False)
class Model:
    """What a graph is drawn under: the machine tables and the rules between machines, the
    spec's or a variant's, and the rules the variant dropped."""

    tables: Mapping[str, MachineSpec] = field(default_factory=lambda: registry.BY_NAME)
    rules: between.Rules = between.SPEC
    dropped: frozenset[str] = frozenset()

    @classmethod
    def of_variant(cls, variant: Variant) -> Model:
        return cls(variant.tables(), variant.rules(), frozenset(variant.drop))

    def binds(self, d: between.Between) -> bool:
        """Whether the declaration ``d`` binds (its rule was not dropped)."""
        return d.rule not in self.dropped


SPEC = Model()
"""The model as the spec writes it (the committed graphs)."""


@dataclass(frozen=True)
class Config:
    name: str
    prompts: int
    background: bool = True
    """Whether the background item is part of the product (the tool call always is)."""


CONFIGS = (
    Config("fg_1prompt_tool", 1, background=False),
    Config("fg_1prompt_tool_bg", 1),
    Config("fg_2prompts_tool_bg", 2),
)
DRAWN = CONFIGS[1]
"""The default bound drawn for the docs: foreground x one prompt x one tool call x one
background item."""
WITH_GRAPHML = frozenset({CONFIGS[0].name, DRAWN.name})
"""The largest graph is summarized only: its GraphML would be megabytes of committed text."""


def _moves(spec: MachineSpec, state: str, ctx: Context | None = None) -> list[tuple[str, str, str]]:
    """(trigger, actor, dest) of every move of the table from ``state`` (``MachineSpec.moves``:
    its guards judged on ``ctx``, the others at their defaults), self-loops left out; none from a
    state of ours (``unsent``, ``unstarted``, ``none``)."""
    if state not in spec.states:
        return []
    return [
        (trigger, actor, dest)
        for actor in ("agent", "client")
        for trigger, dest in spec.moves(state, actor, ctx or {})
        if dest != state
    ]


def initial(cfg: Config) -> State:
    return (
        foreground.SPEC.initial,
        (UNSENT,) * cfg.prompts,
        UNSTARTED,
        background.SPEC.initial if cfg.background else "none",
        frozenset(),
    )


def moves(state: State, model: Model = SPEC) -> Iterator[tuple[str, str, State]]:
    """(event, actor, next state) for every move from ``state`` under ``model``."""
    fg, prompts, tool, bg, waits = state
    rules, tables = model.rules, model.tables
    active = fg in ACTIVE_STATES
    waiting_states = rules.waiting_states(tables["prompt"])
    for trigger, actor, dest in _moves(tables["foreground"], fg):
        if dest in FG_STATES and not (trigger == "end" and _owes_before_idle(model, tool, bg)):
            # the work the waiting prompts were received in ends at the idle
            yield f"fg.{trigger}", actor, (dest, prompts, tool, bg, frozenset() if dest == "idle" else waits)
    for i, p in enumerate(prompts):
        if p == UNSENT:
            if i == 0 or prompts[i - 1] != UNSENT:
                after = waits | {i} if active and not _may_insert(model, True) else waits
                sent = _set(prompts, i, tables["prompt"].initial)
                yield f"p{i + 1}.send", "client", (fg, sent, tool, bg, after)
            continue
        waiting = (j for j, q in enumerate(prompts) if q in waiting_states)
        ctx = {"oldest_held": rules.oldest_waiting(waiting) == i}
        for trigger, actor, dest in _moves(tables["prompt"], p, ctx):
            if trigger != "cover" and (trigger != "insert" or _may_insert(model, i in waits)):
                yield f"p{i + 1}.{trigger}", actor, (fg, _set(prompts, i, dest), tool, bg, waits)
    cover = tables["prompt"].successor
    covered = tuple((cover(p, "cover") or p) if rules.covers_prompt(p != UNSENT) else p for p in prompts)
    if covered != prompts:
        yield "session/cancel", "client", (fg, covered, tool, bg, waits)
    if tool == UNSTARTED:
        if active:
            yield "tool.start", "agent", (fg, prompts, tables["tool_call"].initial, bg, waits)
    else:
        for trigger, actor, dest in _moves(tables["tool_call"], tool):
            if not _progress_refused(model, fg, trigger):
                yield f"tool.{trigger}", actor, (fg, prompts, dest, bg, waits)
    for trigger, actor, dest in _moves(tables["background_item"], bg, BG_GUARDS):
        yield f"bg.{trigger}", actor, (fg, prompts, tool, dest, waits)


def _owes_before_idle(model: Model, tool: str, bg: str) -> bool:
    """``updates_before_idle``: whether the foreground work owes an update before its idle: the
    tool call while live, unless it may carry on past the idle (``may_carry_on``, under the
    reading the graph is drawn under), and the background item while announced and unlisted."""
    if not model.binds(between.UPDATES_BEFORE_IDLE):
        return False
    rules = model.rules
    live = tool in toolcall.LIVE
    carries_on = rules.may_carry_on(tool, foreground.END_TURN, False, TOOL_UPDATES_AFTER_IDLE)
    tools = [tool] if live and not carries_on else []
    return rules.owed_before_idle(tools, (), [bg] if bg == background.ANNOUNCED else [])


def _may_insert(model: Model, received_in_work: bool) -> bool:
    """``steering``: whether a prompt may be inserted now (``received_in_work``: it was received
    during the active work that is still under way: it waits only where the rules forbid
    inserting into that work)."""
    return not model.binds(between.STEERING) or model.rules.may_insert_now(received_in_work, True)


def _progress_refused(model: Model, fg: str, trigger: str) -> bool:
    """``running_on_progress``: whether the tool call's move ``trigger`` is refused in the
    foreground state ``fg``: it is the call running (``tool_runs``), which is progress of the
    foreground work (``tool_progress``: the call is that work's, never listed), and the foreground
    table has no ``output`` from ``fg`` (a dropped rule's cell lets it)."""
    if not (model.rules.tool_runs(_STATUS[trigger]) and model.rules.tool_progress(True, False)):
        return False
    return model.tables["foreground"].successor(fg, "output") is None


def _set(t: tuple[str, ...], i: int, v: str) -> tuple[str, ...]:
    return (*t[:i], v, *t[i + 1 :])


def quiescent(state: State) -> bool:
    fg, prompts, tool, bg, _ = state
    return (
        fg == "idle"
        and all(p == UNSENT or p in prompt.SPEC.final for p in prompts)
        and tool not in toolcall.LIVE
        and bg in ("none", background.SPEC.initial, *background.SPEC.final)
    )


def label(state: State) -> str:
    fg, prompts, tool, bg, waits = state
    parts = [fg, *(f"{p}(waits)" if i in waits else p for i, p in enumerate(prompts)), tool]
    if bg != "none":
        parts.append(bg)
    return ",".join(parts)


def explore(cfg: Config, model: Model = SPEC) -> nx.MultiDiGraph:
    start = initial(cfg)
    g = nx.MultiDiGraph(name=cfg.name)
    seen = {start: 0}
    queue = deque([start])
    g.add_node(label(start), depth=0, foreground=start[0], quiescent=quiescent(start), initial=True)
    while queue:
        s = queue.popleft()
        for event, actor, t in moves(s, model):
            if t not in seen:
                seen[t] = seen[s] + 1
                queue.append(t)
                g.add_node(label(t), depth=seen[t], foreground=t[0], quiescent=quiescent(t), initial=False)
            g.add_edge(label(s), label(t), key=event, event=event, actor=actor)
    return g


def summarize(cfg: Config, g: nx.MultiDiGraph) -> dict[str, object]:
    sccs = sorted((sorted(c) for c in nx.strongly_connected_components(g)), key=lambda c: (-len(c), c))
    quiet = sorted(n for n, q in g.nodes(data="quiescent") if q)
    dead = sorted(n for n in g.nodes if g.out_degree(n) == 0)
    reach_quiet = set(quiet).union(*(nx.ancestors(g, q) for q in quiet))
    stuck = sorted(set(g.nodes) - reach_quiet)
    return {
        "config": cfg.name,
        "prompts": cfg.prompts,
        "tool_call": True,
        "background_item": cfg.background,
        "state_format": _state_format(cfg),
        "states": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "max_depth": max(d for _, d in g.nodes(data="depth")),
        "strongly_connected_components": len(sccs),
        "largest_scc": len(sccs[0]),
        "nontrivial_sccs": sum(len(c) > 1 for c in sccs),
        "quiescent_states": len(quiet),
        "quiescent": quiet if len(quiet) <= 40 else [*quiet[:40], "..."],
        "dead_ends": dead,
        "cannot_reach_quiescent": len(stuck),
    }


def _state_format(cfg: Config) -> str:
    """A state's ``label`` with each part's name."""
    bg = "background_item" if cfg.background else "none"
    prompts = tuple(f"prompt{i + 1}" for i in range(cfg.prompts))
    return label(("foreground", prompts, "tool_call", bg, frozenset()))


def graphml(g: nx.MultiDiGraph) -> bytes:
    buf = io.BytesIO()
    h = nx.MultiDiGraph(name=g.graph.get("name", ""))
    for n in sorted(g.nodes):
        h.add_node(n, **g.nodes[n])
    for u, v, k, data in sorted(g.edges(keys=True, data=True)):
        h.add_edge(u, v, key=k, **data)
    nx.write_graphml(h, buf, encoding="utf-8", prettyprint=True)
    return buf.getvalue()


@lru_cache(maxsize=1)
def _explored(model: Model = SPEC) -> tuple[tuple[Config, nx.MultiDiGraph, dict[str, object]], ...]:
    out = []
    for cfg in CONFIGS:
        g = explore(cfg, model)
        out.append((cfg, g, summarize(cfg, g)))
    return tuple(out)


def files(model: Model = SPEC) -> dict[str, bytes]:
    """The files of ``composed/`` (drawn under ``model``: the committed ones under the spec's)."""
    out: dict[str, bytes] = {}
    summaries = []
    for cfg, g, summary in _explored(model):
        summaries.append(summary)
        if cfg.name in WITH_GRAPHML:
            out[f"{cfg.name}.graphml"] = graphml(g)
        if cfg == DRAWN:
            from diagrams.render_mpl import composed_png

            out[f"{cfg.name}.png"] = composed_png(g, f"composed: {_state_format(cfg)}")
    out["summary.json"] = (json.dumps(summaries, indent=2) + "\n").encode()
    out["summary.md"] = ("\n".join(_summary_md(summaries, "")) + "\n").encode()
    return out


def _summary_md(summaries: list[dict[str, object]], prefix: str) -> list[str]:
    lines = [
        "Product of the model's foreground, prompt, tool call and background item tables, explored",
        "breadth-first (constraints and simplifications: the header of `diagrams/composed.py`).",
        "Quiescent: foreground idle, no prompt or tool call in flight, no background item live.",
        "",
        "| configuration | states | edges | SCCs (largest) | quiescent | dead ends "
        "| cannot reach quiescent | GraphML |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(
            f"| `{s['state_format']}` | {s['states']} | {s['edges']} | {s['strongly_connected_components']} "
            f"({s['largest_scc']}) | {s['quiescent_states']} | {len(s['dead_ends'])} "  # type: ignore[arg-type]
            f"| {s['cannot_reach_quiescent']} | {_link(s, prefix)} |"
        )
    return lines


def _link(s: dict[str, object], prefix: str) -> str:
    name = str(s["config"])
    return f"[{name}.graphml]({prefix}{name}.graphml)" if name in WITH_GRAPHML else "(summary only)"


def gallery_section(prefix: str) -> list[str]:
    summaries = [summary for _, _, summary in _explored()]
    return [
        *_summary_md(summaries, prefix),
        "",
        f"Summary: [summary.md]({prefix}summary.md) · [summary.json]({prefix}summary.json)",
        "",
        f"![composed state graph, {_state_format(DRAWN)}]({prefix}{DRAWN.name}.png)",
    ]
