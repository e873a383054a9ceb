"""A small composed state graph: foreground x prompts x one tool call x one background item.

Theory of operation
-------------------
The product of the model's own machine tables (``model.foreground``, ``model.prompt``,
``model.toolcall``, ``model.background``) alone, explored breadth-first from the start state
(``simulator.explore.bfs`` searches the whole World: peers, transport, monitors), with these
simplifications and cross-machine constraints (ours where ``model`` states none; spec section):

* Foreground is kept to idle / running / requires_action: the observability states (unknown,
  unrecognized) are reachable from everywhere and would only multiply the graph (Session states).
* Self-loop rows (content updates, repeated cancels) are left out: they do not change the
  composed state.
* Each prompt and the tool call start in an extra "not yet" state (``unsent``, ``unstarted``);
  ``send`` (client) and ``start`` (agent) create them. Prompt k+1 is sent after prompt k.
* ``session/cancel`` is one client event that fires the ``cover`` row of every prompt already
  sent, at once; prompts sent later are not covered (Cancellation).
* Guards: the table's own (``MachineSpec.moves``); ``oldest_held``: ``model.between``'s
  ``held_in_order`` over the prompts held or cancel-requested (Prompts during active work); the
  others keep their defaults (a rejection is never only because work is active; the default
  reading of ``rejected-after-cancel-request``: a withdrawn prompt is answered -32800).
* The tool call is foreground work: it starts and changes status only while the foreground is
  running (Foreground and background work), and foreground work reports idle only once the
  tool call it started has a final status (Failures: the agent gives unfinished calls a terminal
  status before it reports the end). Nothing ties the background item to the rest: it runs
  independently of foreground work (Background work), so it only interleaves.

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
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import networkx as nx

from model import background, between, foreground, prompt, toolcall
from model.core import Context, MachineSpec

FG_STATES = ("idle", "running", "requires_action")
PENDING_PROMPT = ("held", "cancel_requested")
UNSENT, UNSTARTED = "unsent", "unstarted"
BG_GUARDS = {"child": True, "becomes_foreground": True}
"""The background item's guards all pass: it stands for any item (a subagent's too, and one
foreground work may start waiting on, as an alternative reading allows)."""

State = tuple[str, tuple[str, ...], str, str]
"""(foreground, prompt states, tool call, background item)."""


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
    )


def moves(state: State) -> Iterator[tuple[str, str, State]]:
    """(event, actor, next state) for every move from ``state``."""
    fg, prompts, tool, bg = state
    for trigger, actor, dest in _moves(foreground.SPEC, fg):
        if dest in FG_STATES and not (trigger == "end" and tool in toolcall.LIVE):
            yield f"fg.{trigger}", actor, (dest, prompts, tool, bg)
    for i, p in enumerate(prompts):
        if p == UNSENT:
            if i == 0 or prompts[i - 1] != UNSENT:
                yield f"p{i + 1}.send", "client", (fg, _set(prompts, i, "received"), tool, bg)
            continue
        waiting = (j for j, q in enumerate(prompts) if q in PENDING_PROMPT)
        ctx = {"oldest_held": between.SPEC.oldest_waiting(waiting) == i}
        for trigger, actor, dest in _moves(prompt.SPEC, p, ctx):
            if trigger != "cover":
                yield f"p{i + 1}.{trigger}", actor, (fg, _set(prompts, i, dest), tool, bg)
    covered = tuple(p if p == UNSENT else prompt.SPEC.fire(p, "cover") for p in prompts)
    if covered != prompts:
        yield "session/cancel", "client", (fg, covered, tool, bg)
    if fg == "running":
        if tool == UNSTARTED:
            yield "tool.start", "agent", (fg, prompts, toolcall.SPEC.initial, bg)
        for trigger, actor, dest in _moves(toolcall.SPEC, tool):
            yield f"tool.{trigger}", actor, (fg, prompts, dest, bg)
    for trigger, actor, dest in _moves(background.SPEC, bg, BG_GUARDS):
        yield f"bg.{trigger}", actor, (fg, prompts, tool, dest)


def _set(t: tuple[str, ...], i: int, v: str) -> tuple[str, ...]:
    return (*t[:i], v, *t[i + 1 :])


def quiescent(state: State) -> bool:
    fg, prompts, tool, bg = state
    return (
        fg == "idle"
        and all(p == UNSENT or p in prompt.SPEC.final for p in prompts)
        and tool not in toolcall.LIVE
        and bg in ("none", background.SPEC.initial, *background.SPEC.final)
    )


def label(state: State) -> str:
    fg, prompts, tool, bg = state
    parts = [fg, *prompts, tool]
    if bg != "none":
        parts.append(bg)
    return ",".join(parts)


def explore(cfg: Config) -> nx.MultiDiGraph:
    start = initial(cfg)
    g = nx.MultiDiGraph(name=cfg.name)
    seen = {start: 0}
    queue = deque([start])
    g.add_node(label(start), depth=0, foreground=start[0], quiescent=quiescent(start), initial=True)
    while queue:
        s = queue.popleft()
        for event, actor, t in moves(s):
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
    return label(("foreground", tuple(f"prompt{i + 1}" for i in range(cfg.prompts)), "tool_call", bg))


def graphml(g: nx.MultiDiGraph) -> bytes:
    buf = io.BytesIO()
    h = nx.MultiDiGraph(name=g.graph.get("name", ""))
    for n in sorted(g.nodes):
        h.add_node(n, **g.nodes[n])
    for u, v, k, data in sorted(g.edges(keys=True, data=True)):
        h.add_edge(u, v, key=k, **data)
    nx.write_graphml(h, buf, encoding="utf-8", prettyprint=True)
    return buf.getvalue()


def picture(cfg: Config, g: nx.MultiDiGraph) -> bytes:
    from diagrams.render_mpl import composed_png

    return composed_png(g, f"composed: {_state_format(cfg)}")


@lru_cache(maxsize=1)
def _explored() -> tuple[tuple[Config, nx.MultiDiGraph, dict[str, object]], ...]:
    out = []
    for cfg in CONFIGS:
        g = explore(cfg)
        out.append((cfg, g, summarize(cfg, g)))
    return tuple(out)


def files() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    summaries = []
    for cfg, g, summary in _explored():
        summaries.append(summary)
        if cfg.name in WITH_GRAPHML:
            out[f"{cfg.name}.graphml"] = graphml(g)
        if cfg == DRAWN:
            out[f"{cfg.name}.png"] = picture(cfg, g)
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
