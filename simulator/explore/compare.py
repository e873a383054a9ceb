"""``explore --compare``: the spec as written and a variant, explored alike, and what differs.

Theory of operation
-------------------
``compare`` runs ``explore_run.run`` twice with the same options (bounds, seed, modes): once
for the spec as written (the ``--reading`` choices alone; files under ``OUT/base``) and once
under the variant (its readings under the ``--reading`` choices; files under ``OUT/variant``).
Each run writes its counterexamples as a plain exploration does. The differences are read off
the two reports; their kinds (``KINDS``, the order they are sorted in, then by rule and detail)
are described in docs/variants.md, "Comparing". Where the code decides more than that says:
state and row reach is compared for the exhaustive mode only (the random mode splits its walks
between behaviour sets, so its reach differs by sampling alone); a ``behaviours`` slice (the
dropped rules' seeded bugs on) is a search of its own, its states not merged with the spec's;
a finding that appears names the variant's files, one that vanishes the base's (and says when
the variant dropped its rule). Differences carry no timing, so the same seed and options give the
same list (the timings of both runs are in ``base`` and ``variant``). ``unexercised`` lists the
variant's changes the runs never fired, in the variant's order (rows fired are the runs'
coverage, ``explore_coverage``); a dropped rule whose findings were set aside was exercised,
even where no seeded bug of its own breaks it (another dropped rule's bug did).

Must not know: argument parsing, how the explorers search, how reports are printed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from model.core import MachineSpec
from model.registry import BY_NAME
from properties.variants import Variant
from simulator.explore import run as explore_run
from simulator.progress import NULL, Progress
from simulator.workers import Workers

KINDS = ("finding", "liveness", "client-view", "set-aside", "behaviours", "cycles", "state", "row")
_SOURCE_KIND = {"eventually": "liveness", "cycle": "liveness", "view": "client-view"}


def compare(
    opts: explore_run.Options,
    variant: Variant,
    base_readings: dict[str, str],
    progress: Progress = NULL,
    pool: Workers | None = None,
) -> dict[str, Any]:
    """Explore the spec as written and ``variant`` with ``opts``; the comparison as JSON. On a
    parallel worker pool (``simulator.workers.Workers``) the two explorations run as two jobs
    side by side (``explore_run.run_each``); otherwise one after the other in this process."""
    out = Path(opts.out)
    base_opts = dataclasses.replace(opts, variant=None, readings=dict(base_readings), out=str(out / "base"))
    var_opts = dataclasses.replace(opts, variant=variant, out=str(out / "variant"))
    what = f"compare the spec as written with the variant {variant.name}"
    base, var = explore_run.run_each([base_opts, var_opts], pool or Workers(1), progress, what)
    return {
        "compare": {
            "base": summary(base),
            "variant": {**summary(var), "variant": var.get("variant")},
            "differences": differences(base, var, variant),
            "unexercised": unexercised(base, var, variant),
        },
        "write_errors": base["write_errors"] + var["write_errors"],
    }


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """What one run explored, found and took (timing included)."""
    out: dict[str, Any] = {
        "findings": [f["rule"] for f in report["findings"]],
        "output": report["output"],
        "readings": report["readings"],
        "seconds": report["timing"]["total_seconds"],
    }
    ex = report.get("exhaustive")
    if ex is not None:
        keys = ("states", "transitions", "complete", "quiescent_states", "bottom_cycles")
        out["exhaustive"] = {
            **{k: ex[k] for k in keys},
            "slices": [s["name"] for s in ex["slices"]],
            "seconds": ex["seconds"],
        }
    rnd = report.get("random")
    if rnd is not None:
        out["random"] = {k: rnd[k] for k in ("walks", "walk_steps", "examples", "seconds")}
    return out


def _reached(
    report: dict[str, Any], mode: str, tables: Mapping[str, MachineSpec]
) -> tuple[set[str], set[str]]:
    """(machine states, rows) a mode of a run reached (``tables``: the machines as that run had
    them)."""
    states: set[str] = set()
    rows: set[str] = set()
    for m in report["coverage"].get(mode, {}).get("machines", []):
        spec = tables[m["name"]]
        missed_states = set(m["states_missed"])
        missed_rows = set(m["transitions_missed"])
        states |= {f"{m['name']}: {s}" for s in spec.states if s not in missed_states}
        for r in spec.rows:
            text = f"{r.source} --{r.trigger}--> {r.dest}"
            if text not in missed_rows:
                rows.add(f"{m['name']}: {text}")
        rows |= {f"{m['name']}: {r} (relaxed cell)" for r in m.get("relaxed_cells_fired", [])}
    return states, rows


def split(
    base: Iterable[str], var: Iterable[str], key: Callable[[str], Any] = str
) -> tuple[list[str], list[str]]:
    """(what only the variant's run has, what only the spec's has), each sorted by ``key``: the
    difference of two runs' rules, states or rows, read by ``differences`` and by the spec
    report's Differences section (``diagrams.spec_report.diff``)."""
    b, v = set(base), set(var)
    return sorted(v - b, key=key), sorted(b - v, key=key)


def vanished(rule: str, variant: Variant, gone: str = "broken") -> str:
    """Why ``rule``, broken in the spec as written, is not under ``variant``."""
    return "the variant drops this rule" if rule in variant.drop else f"no longer {gone} under the variant"


def differences(base: dict[str, Any], var: dict[str, Any], variant: Variant) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    b_find = {f["rule"]: f for f in base["findings"]}
    v_find = {f["rule"]: f for f in var["findings"]}
    appear, vanish = split(b_find, v_find)
    out += [_finding("appears", v_find[rule], rule, "under the variant only") for rule in appear]
    out += [_finding("vanishes", b_find[rule], rule, vanished(rule, variant)) for rule in vanish]
    for rule in var["variant"]["set_aside"]:
        if rule not in b_find:
            out.append(
                _diff(
                    "set-aside",
                    "broken by behaviour the variant allows (its findings were set aside); the spec as "
                    "written never breaks it at these bounds",
                    rule,
                )
            )
    bx, vx = base.get("exhaustive"), var.get("exhaustive")
    if bx is not None and vx is not None:
        b_slices = {s["name"]: s for s in bx["slices"]}
        extra = [s for s in vx["slices"] if s["name"] not in b_slices]
        if extra:  # the slices of the second behaviour set, the dropped rules' seeded bugs on
            faults: list[str] = var["variant"]["behaviours"][-1]["faults"]
            out.append(
                _diff(
                    "behaviours",
                    f"exhaustive: {len(extra)} slice(s) explored again with the dropped rules' seeded bugs "
                    f"on ({', '.join(faults)}): {sum(s['states'] for s in extra):,} states, "
                    f"{sum(s['quiescent_states'] for s in extra):,} quiescent, "
                    f"{sum(s['bottom_cycles'] for s in extra)} bottom cycles",
                )
            )
        for s in vx["slices"]:
            b = b_slices.get(s["name"])
            if b is None:
                continue
            for key in ("states", "quiescent_states", "bottom_cycles"):
                if b[key] != s[key]:
                    out.append(
                        _diff(
                            "state" if key == "states" else "cycles",
                            f"exhaustive slice {s['name']}: {key.replace('_', ' ')} {b[key]:,} in the spec, "
                            f"{s[key]:,} under the variant",
                        )
                    )
    for mode in sorted(set(base["coverage"]) & set(var["coverage"]) & {"exhaustive"}):
        b_states, b_rows = _reached(base, mode, BY_NAME)
        v_states, v_rows = _reached(var, mode, variant.tables())
        for kind, b, v in (("state", b_states, v_states), ("row", b_rows, v_rows)):
            gained, lost = split(b, v)
            out += [_diff(kind, f"{mode}: {item} reached under the variant only") for item in gained]
            out += [_diff(kind, f"{mode}: {item} reached in the spec only") for item in lost]
    out.sort(key=lambda d: (KINDS.index(d["kind"]), d["rule"] or "", d["detail"]))
    return out


def unexercised(base: dict[str, Any], var: dict[str, Any], variant: Variant) -> list[dict[str, Any]]:
    """The variant's changes these runs never exercised (see the module docstring): each with
    ``change`` (add_row, remove_row, drop), ``rule`` (a dropped rule, else None), ``row`` (the
    row changed, else None), ``modes`` (the runs' modes that did not exercise it) and ``detail``."""
    from simulator.peers.config import breaking

    out: list[dict[str, Any]] = []
    for kind, report, changes, who, tables in (
        ("add_row", var, variant.add_rows, "the variant's run", variant.tables()),
        ("remove_row", base, variant.remove_rows, "the spec's run", BY_NAME),
    ):
        rows = {mode: _reached(report, mode, tables)[1] for mode in sorted(report["coverage"])}
        for change in changes:
            row = f"{change.machine}: {change.source} --{change.trigger}--> {change.dest}"
            missed = [mode for mode in rows if row not in rows[mode]]
            if len(missed) < len(rows):  # fired by a mode
                continue
            detail = f"never fired by {who} ({', '.join(missed)})"
            if kind == "remove_row":
                detail += ": removing it cannot change these runs"
            out.append(
                {"change": kind, "rule": None, "row": change.text(), "modes": missed, "detail": detail}
            )
    set_aside = set(var["variant"]["set_aside"])
    modes = sorted(var["coverage"])
    for rule in variant.drop:
        if rule in set_aside:  # its findings were set aside: the drop changed these runs' verdicts
            continue
        mutant = breaking(rule)
        if mutant is None:
            detail = (
                "no seeded bug breaks it: the simulated peers gain nothing, only the checker sets "
                "its findings aside"
            )
        else:
            detail = (
                f"no breach of it was seen under the variant (none set aside): what seeded bug "
                f"{mutant.name} does was not observed on the wire at these bounds"
            )
        out.append({"change": "drop", "rule": rule, "row": None, "modes": modes, "detail": detail})
    return out


def _diff(kind: str, detail: str, rule: str | None = None, files: list[str] | None = None) -> dict[str, Any]:
    """One difference: its kind (``KINDS``), the rule it is about, what differs, the files showing it."""
    return {"kind": kind, "rule": rule, "detail": detail, "files": files or []}


def _finding(change: str, f: dict[str, Any], rule: str, why: str) -> dict[str, Any]:
    steps = f["counterexamples"][0]["events"]
    return _diff(
        _SOURCE_KIND.get(f["source"], "finding"),
        f"{change}: {why}; {f['explanation']} (shortest: {steps} events, {', '.join(f['modes'])})",
        rule,
        [p for p in (f.get("transcript"), f.get("diagram"), f.get("program")) if p],
    )


def render_text(result: dict[str, Any]) -> str:
    c = result["compare"]
    lines = []
    v = c["variant"].get("variant") or {}
    lines.append(
        f"acp-model explore --compare: the spec as written against variant {v.get('name')}: {v.get('title')}"
    )
    for label in ("base", "variant"):
        s = c[label]
        parts = [f"{label:<8}"]
        if "exhaustive" in s:
            ex = s["exhaustive"]
            parts.append(
                f"exhaustive {ex['states']:,} states, {ex['transitions']:,} transitions"
                f"{'' if ex['complete'] else ' (INCOMPLETE)'}, {ex['bottom_cycles']} bottom cycles, "
                f"{ex['seconds']:.1f} s"
            )
        if "random" in s:
            r = s["random"]
            parts.append(f"random {r['walks']:,} walks, {r['examples']:,} examples, {r['seconds']:.1f} s")
        parts.append(f"findings: {', '.join(s['findings']) or 'none'}")
        parts.append(f"total {s['seconds']:.1f} s")
        lines.append("; ".join(parts))
    for note in v.get("notes", []):
        lines.append(f"  note: {note}")
    diffs = c["differences"]
    lines.append(f"differences: {len(diffs)}")
    for d in diffs:
        rule = f" {d['rule']}" if d["rule"] else ""
        lines.append(f"  [{d['kind']}]{rule} {d['detail']}")
        if d["files"]:
            lines.append("    files: " + ", ".join(d["files"]))
    idle = c.get("unexercised", [])
    if idle:
        lines.append(
            f"not exercised: {len(idle)} change(s) of the variant these runs never fired "
            "(that they show no difference is no evidence; other bounds or slices may reach them)"
        )
    for u in idle:
        what = u["row"] or u["rule"]
        lines.append(f"  [{u['change']}] {what}: {u['detail']}")
    return "\n".join(lines) + "\n"
