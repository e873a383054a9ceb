"""The exploration report: counterexample files, the JSON object and the text summary.

Theory of operation
-------------------
Every counterexample (one per rule and mode) is written next to its siblings in the output
folder, named ``<mode>-<rule>``:

- ``.ndjson``: the wire transcript of the exact replay (``{"from", "message"}`` per line,
  compact UTF-8 JSON, the transcript contract), readable by ``acp-model check``;
- ``.mmd``: a Mermaid sequence diagram of it (drawn by the ``Diagram`` the caller hands in:
  ``acp-model explore`` hands in ``diagrams.sequence.transcript_to_mermaid``);
- ``.py``: a program that replays the events with ``simulator.peers.schedulers.replay_events`` and
  asserts the rule is broken (paste it into a test);
- ``.html``: a self-contained page of the run (made by the ``CounterexamplePage`` the caller
  hands in: ``acp-model explore`` hands in ``diagrams.html.runs.counterexample_page``): the
  messages, the findings at their lines, the hidden steps, the state after each line.

``build_json`` gathers what each mode explored, the findings (grouped by rule; the shortest
counterexample first) and the coverage into one JSON object; ``render_text`` prints it for
people. Everything is deterministic for a given seed and options except the timing fields,
which are exactly the keys ending in ``seconds`` or ``per_second`` (``strip_timing`` removes
them; the ``report.json`` file in the output folder is written without them).

Must not know: how the explorers work inside, argument parsing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from properties.outputs import write_atomic
from simulator.explore.common import Counterexample
from simulator.peers.config import DEFAULT, Config
from simulator.peers.steps import step_labels
from simulator.peers.wire import to_ndjson

Notes = Mapping[int, Sequence[tuple[str, str, str]]]
"""Notes by transcript position (before line ``position``, 0-based; the length: at the end):
(lane C or A, label, text), as ``diagrams.sequence.transcript_to_mermaid`` draws them."""
Diagram = Callable[[Sequence[tuple[str, Any]], str, Notes], str]
"""(transcript as (sender, message) pairs, title, notes) -> diagram text."""
CounterexamplePage = Callable[[Counterexample], bytes]
"""A counterexample -> its HTML page."""

MODE_ORDER = {"exhaustive": 0, "random": 1, "hypothesis": 2}
FILES = ("transcript", "diagram", "program", "page")
"""The kinds of a counterexample's files (``write_counterexample``), in the report's order."""

FAIRNESS = (
    "strong fairness: an event enabled infinitely often is eventually taken, so every run "
    "ends in a quiescent state or in a bottom strongly connected component it never leaves"
)
LIVENESS = (
    "eventually-rules are judged at every quiescent state (every prompt answered exactly once, "
    "idle after work ends, compactions terminal, background finalized and removed, permission "
    "requests resolved) and in every bottom cycle that never becomes quiescent (a rule open in "
    "all its states is a breach)"
)


# -- files ----------------------------------------------------------------------------------------


def config_source(cfg: Config) -> str:
    """``Config(...)`` with only the fields that differ from the default, deterministically."""
    parts: list[str] = []
    for key, value in cfg.to_json().items():
        default = DEFAULT.to_json().get(key)
        if value == default:
            continue
        if key == "features":
            parts.append(f"features=frozenset({sorted(value)!r})")
        elif key == "variant":
            parts.append(f"variant=from_json({value!r})")
        else:
            parts.append(f"{key}={value!r}")
    return f"Config({', '.join(parts)})"


def bounds_text(bounds: dict[str, Any]) -> str:
    """A short form of a ``Config.to_json()``: non-zero budgets, transport, features."""
    skip = {"features", "transport", "handshake"}
    parts = [f"{k}={v}" for k, v in bounds.items() if k not in skip and v]
    if bounds.get("transport", "fifo") != "fifo":
        parts.append(f"transport={bounds['transport']}")
    parts.append("features=" + (",".join(bounds.get("features", [])) or "none"))
    return " ".join(parts)


def program_text(cex: Counterexample) -> str:
    """A program that replays ``cex`` and asserts that its rule is broken."""
    lines = [
        f'"""{cex.rule} ({cex.source}), found by {cex.mode}: {cex.found_by}."""',
        "",
        "from properties.engine import MonitorSet",
        "from simulator.peers.config import Config",
        "from simulator.peers.schedulers import replay_events",
        "",
        f"cfg = {config_source(cex.cfg)}",
        f"faults = frozenset({sorted(cex.faults)!r})",
        "events = [",
        *(f"    {ev!r}," for ev in cex.events),
        "]",
    ]
    if cex.cfg.variant is None and not cex.cfg.readings:
        lines.append("run = replay_events(events, cfg, faults, MonitorSet())")
    else:  # found under readings or a variant (in its Config): judged under them
        if cex.cfg.variant is not None:
            at = lines.index("from simulator.peers.config import Config")
            lines.insert(at, "from properties.variants import from_json")
        lines.append("judged = MonitorSet(readings=cfg.reading_map(), variant=cfg.variant)")
        lines.append("run = replay_events(events, cfg, faults, judged)")
    if cex.source == "cycle":
        lines += [
            "# the run ends in a cycle that never becomes quiescent: the rule stays open",
            'rules = {f.rule for f in run.findings if f.kind == "open"}',
        ]
    else:
        lines.append(
            'rules = {f.rule for f in run.findings if f.kind == "rule"} | set(run.world.view_breaches)'
        )
    lines.append(f"assert {cex.rule!r} in rules, sorted(rules)")
    return "\n".join(lines) + "\n"


def breaking_note(cex: Counterexample) -> Notes:
    """A note beside the message that breaks the rule (after it), or at the end for a rule
    broken at quiescence, in a cycle or by a move the model refused (never sent): what the
    spec report's witnesses show as their hidden steps."""
    at = cex.breaks_at
    if at is None:
        return {}
    at = min(at, len(cex.transcript))
    by_client = cex.source in ("monitor", "view") and at > 0 and cex.transcript[at - 1][0] == "client"
    lane = "C" if by_client else "A"
    what = {
        "eventually": "still owed at quiescence",
        "cycle": "never discharged in a cycle",
        "model": "the next move is refused",
    }.get(cex.source, "broken here")
    return {at: [(lane, f"{cex.rule} {what}", cex.explanation)]}


def write_counterexample(
    cex: Counterexample, out: Path, diagram: Diagram | None = None, page: CounterexamplePage | None = None
) -> dict[str, str]:
    """Write the files of ``cex`` (transcript, program, the diagram ``diagram`` renders and the
    page ``page`` makes); their paths by kind."""
    stem = f"{cex.mode}-{cex.rule}"
    paths = {"transcript": str(out / f"{stem}.ndjson"), "program": str(out / f"{stem}.py")}
    write_atomic(paths["transcript"], to_ndjson(cex.transcript))
    write_atomic(paths["program"], program_text(cex))
    if diagram is not None:
        paths["diagram"] = str(out / f"{stem}.mmd")
        text = diagram(cex.transcript, f"{cex.rule} ({cex.mode}: {cex.found_by})", breaking_note(cex))
        write_atomic(paths["diagram"], text if text.endswith("\n") else text + "\n")
    if page is not None:
        paths["page"] = str(out / f"{stem}.html")
        write_atomic(paths["page"], page(cex))
    return paths


def write_error(path: str | Path, exc: OSError) -> str:
    """One line naming the file that could not be written and why."""
    return f"{exc.filename or path}: cannot write ({exc.strerror or exc})"


# -- JSON -----------------------------------------------------------------------------------------


def findings_json(
    cexs: Iterable[Counterexample],
    out: Path,
    diagram: Diagram | None,
    write_errors: list[str],
    page: CounterexamplePage | None,
) -> list[dict[str, Any]]:
    """Findings grouped by rule, each counterexample's files written under ``out``; one whose
    files cannot be written is listed without them and the failure is appended to
    ``write_errors`` (one line naming the file)."""
    from properties.catalogue import RULES_BY_ID

    by_rule: dict[str, list[Counterexample]] = {}
    for c in cexs:
        by_rule.setdefault(c.rule, []).append(c)
    result: list[dict[str, Any]] = []
    for rule in sorted(by_rule):
        group = sorted(by_rule[rule], key=lambda c: (len(c.events), MODE_ORDER.get(c.mode, 9)))
        entries = []
        for c in group:
            paths: dict[str, str] = {}
            try:
                paths = write_counterexample(c, out, diagram, page)
            except OSError as exc:
                write_errors.append(write_error(out, exc))
            entries.append(
                {
                    "mode": c.mode,
                    "found_by": c.found_by,
                    "source": c.source,
                    "explanation": c.explanation,
                    "events": len(c.events),
                    "original_events": c.original_length,
                    "messages": len(c.transcript),
                    "hits": c.hits,
                    "steps": step_labels(c.events, c.cfg, c.faults),
                    **paths,
                }
            )
        best = entries[0]
        result.append(
            {
                "rule": rule,
                "level": RULES_BY_ID[rule].level if rule in RULES_BY_ID else "MUST",
                "source": best["source"],
                "explanation": best["explanation"],
                "modes": sorted({c.mode for c in group}, key=lambda m: MODE_ORDER.get(m, 9)),
                **{kind: best.get(kind) for kind in FILES},
                "counterexamples": entries,
            }
        )
    return result


def strip_timing(obj: Any) -> Any:
    """``obj`` without timing fields (keys ending in ``seconds`` or ``per_second``)."""
    if isinstance(obj, dict):
        return {
            k: strip_timing(v)
            for k, v in obj.items()
            if not (k.endswith("seconds") or k.endswith("per_second"))
        }
    if isinstance(obj, list):
        return [strip_timing(v) for v in obj]
    return obj


# -- text -----------------------------------------------------------------------------------------


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _size(n: int) -> str:
    """A byte count for people: bytes, kB or MB (decimal units)."""
    if n < 1000:
        return f"{n} bytes"
    if n < 1_000_000:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1_000_000:.1f} MB"


def freedoms_text(mode: str, fr: dict[str, Any]) -> str:
    """One line: how many freedoms (MAY rules) the mode took of those it counts, which it never
    took though it could, and those its bounds rule out and it does not count (named when few)."""
    counted = [rule for rule, n in fr["taken"].items() if n is not None]
    text = f"freedoms taken ({mode}): {sum(1 for r in counted if fr['taken'][r])}/{len(counted)}"
    if fr["never_taken"]:
        text += f", never taken: {', '.join(fr['never_taken'])}"
    for label, rules in (
        ("beyond the bounds", fr["beyond_bounds"]),
        ("not counted", list(fr["not_counted"])),
    ):
        if rules:
            text += f", {label}: {', '.join(rules) if len(rules) <= 3 else len(rules)}"
    return text


def render_text(report: dict[str, Any]) -> str:
    lines: list[str] = []
    faults = ", ".join(report["faults"]) or "none"
    lines.append(f"acp-model explore: mode {report['mode']}, seed {report['seed']}, faults: {faults}")
    ex = report.get("exhaustive")
    if ex is not None:
        lines.append("")
        lines.append(
            f"exhaustive (breadth-first, {'complete' if ex['complete'] else 'INCOMPLETE'}"
            f"{', symmetry reduction on' if ex['symmetry'] else ''}"
            f"{', partial-order reduction on' if ex['reduce'] == 'por' else ''}"
            f"): {_n(ex['states'])} states, "
            f"{_n(ex['transitions'])} transitions, max depth {ex['max_depth']}, "
            f"{ex['seconds']:.1f} s, {ex['states_per_second']:,.0f} states/s"
        )
        lines.append(
            f"  {'slice':<12}{'states':>9}{'transitions':>13}{'depth':>7}{'quiescent':>11}"
            f"{'cycles':>8}{'seconds':>9}  stop"
        )
        for s in ex["slices"]:
            lines.append(
                f"  {s['name']:<12}{_n(s['states']):>9}{_n(s['transitions']):>13}{s['max_depth']:>7}"
                f"{_n(s['quiescent_states']):>11}{s['bottom_cycles']:>8}{s['seconds']:>9.2f}  {s['stop']}"
            )
        lines.append("  bounds:")
        for sl in ex["slices"]:
            lines.append(f"    {sl['name']}: {bounds_text(sl['bounds'])}")
        if ex["depth_limit"] is not None:
            lines.append(f"  depth limit: {ex['depth_limit']}")
        if ex.get("graph_bytes") is not None:
            where = "standard output" if ex["graph"] == "-" else ex["graph"]
            lines.append(
                f"  state graph: {where} (GraphML, {_size(ex['graph_bytes'])}, {_n(ex['states'])} states)"
            )
        lines.append(f"  fairness: {FAIRNESS}")
    rnd = report.get("random")
    if rnd is not None:
        lines.append("")
        hyp = rnd["hypothesis"]
        wk = rnd["walk"]
        lines.append(f"random bounds: {bounds_text(rnd['bounds'])}")
        if rnd["walks"]:
            lines.append(
                f"random walks: {_n(rnd['walks'])} walks x {wk['steps_per_walk']} steps (then drained), "
                f"{_n(rnd['walk_steps'])} steps, {rnd['walk_steps_per_second']:,.0f} steps/s, stops: "
                + ", ".join(f"{k} {v}" for k, v in wk["stops"].items())
            )
        else:
            lines.append("random walks: none (--walks 0)")
        if rnd["examples_asked"] == 0:
            lines.append("hypothesis: none (--examples 0)")
        else:
            lines.append(
                f"hypothesis: {_n(rnd['examples'])} examples, {_n(rnd['rule_executions'])} rule executions, "
                f"{rnd['rule_executions_per_second']:,.0f} rule executions/s, {hyp['rounds']} round(s), "
                f"stop: {hyp['stop']}"
            )
            lines.append(f"  examples: {rnd['examples_explained']}")
    lines.append("")
    findings = report["findings"]
    if not findings:
        lines.append("findings: none")
    else:
        lines.append(f"findings: {len(findings)} rule(s) broken")
        for f in findings:
            found_in = ", ".join(f"{c['mode']} ({c['events']} events)" for c in f["counterexamples"])
            lines.append(f"  {f['rule']} [{f['level']}, {f['source']}] found by {found_in}")
            lines.append(f"    {f['explanation']}")
            best = f["counterexamples"][0]
            lines.append("    steps: " + "; ".join(best["steps"]))
            if f.get("transcript"):
                files = [f["transcript"]] + [p for p in (f.get("diagram"), f.get("program")) if p]
                lines.append("    files: " + ", ".join(files))
    lines.append("")
    lines.append("coverage (states reached/total, transitions reached/total):")
    modes = list(report["coverage"])
    header = f"  {'machine':<16}" + "".join(f"{m:>22}" for m in modes) + "  method"
    lines.append(header)
    names = [m["name"] for m in report["coverage"][modes[0]]["machines"]] if modes else []
    for i, name in enumerate(names):
        cells = []
        method = ""
        for m in modes:
            entry = report["coverage"][m]["machines"][i]
            method = entry["method"]
            cells.append(
                f"{entry['states_reached']}/{entry['states_total']}, "
                f"{entry['transitions_reached']}/{entry['transitions_total']}"
            )
        lines.append(f"  {name:<16}" + "".join(f"{c:>22}" for c in cells) + f"  {method}")
    for m in modes:
        rc = report["coverage"][m]["rules"]
        total = len(rc["exercised"])
        lines.append(f"  rules exercised ({m}): {total - len(rc['never_exercised'])}/{total}")
    for m in modes:
        lines.append(f"  {freedoms_text(m, report['coverage'][m]['freedoms'])}")
    for w in report["warnings"]:
        lines.append(f"warning: {w}")
    for i in report.get("info", []):
        lines.append(f"info: {i}")
    lines.append("")
    if report.get("report_file"):
        lines.append(f"report: {report['report_file']} (this report as JSON, without timing)")
    for e in report.get("write_errors", []):
        lines.append(f"error: {e}")
    lines.append(f"time: {report['timing']['total_seconds']:.1f} s")
    return "\n".join(lines) + "\n"
