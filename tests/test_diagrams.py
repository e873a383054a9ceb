"""Diagrams drawn from the model: one IR for every renderer, reproducible bytes, committed files
kept fresh, valid Mermaid, sequence diagrams of transcripts, and the composed state graph.

Rendering is the slow part: everything is generated once per module (``generated``) and the
tests read that. The Mermaid check runs the real Mermaid CLI when it is installed (see
``_mmdc``) and skips otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib
import networkx as nx
import pytest

from diagrams import composed
from diagrams.generate import GENERATED_DIRS, IMAGES, RENDERED_WITH, outputs
from diagrams.ir import Diagram, all_diagrams
from diagrams.layout import LAYOUT_HINTS, hint_for
from diagrams.render_markdown import to_markdown
from diagrams.render_mermaid import to_mermaid
from diagrams.render_mpl import plan_of
from diagrams.sequence import transcript_to_mermaid
from model.registry import MACHINES
from properties.outputs import FolderWrite, stale

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
DIAGRAMS = tuple(all_diagrams())
IDS = [d.name for d in DIAGRAMS]


@pytest.fixture(scope="module")
def generated() -> dict[str, bytes]:
    return outputs()


def _unescape(text: str) -> str:
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), text)


# -- one IR for every renderer ----------------------------------------------------------------


@pytest.mark.parametrize("spec", MACHINES, ids=[m.name for m in MACHINES])
def test_ir_is_the_table(spec: object) -> None:
    from model.core import MachineSpec

    assert isinstance(spec, MachineSpec)
    d = next(x for x in DIAGRAMS if x.name == spec.name)
    assert [n.id for n in d.nodes] == list(spec.states)
    assert [n.id for n in d.nodes if n.initial] == [spec.initial]
    assert tuple(n.id for n in d.nodes if n.final) == spec.final
    assert [(e.source, e.dest, e.trigger, e.guard, e.actor, e.section) for e in d.edges] == [
        (r.source, r.dest, r.trigger, r.guard, r.actor, r.section) for r in spec.rows
    ]


def _rows(d: Diagram) -> list[tuple[str, str, str]]:
    return [(e.source, e.dest, e.trigger) for e in d.edges]


@pytest.mark.parametrize("d", DIAGRAMS, ids=IDS)
def test_mermaid_nodes_and_edges(d: Diagram) -> None:
    text = to_mermaid(d)
    declared = re.findall(r'^\s*state "([^"]*)" as s_(\w+)$', text, re.M)
    assert [_unescape(label) for label, _ in declared] == [n.id for n in d.nodes]
    assert [sid for _, sid in declared] == [n.id for n in d.nodes]
    moves = re.findall(r"^\s*s_(\w+) --> s_(\w+) : (.*)$", text, re.M)
    assert [(a, b, _unescape(lab).split(" ")[0]) for a, b, lab in moves] == _rows(d)
    for (_, _, lab), e in zip(moves, d.edges, strict=True):
        assert ("(client)" in lab) == (e.actor == "client")
        if e.guard:
            assert f"[{e.guard}]" in _unescape(lab)
            assert "!" not in lab, "guard negation must be escaped"
    assert re.findall(r"^\s*\[\*\] --> s_(\w+)$", text, re.M) == [d.initial]
    assert re.findall(r"^\s*s_(\w+) --> \[\*\]$", text, re.M) == list(d.finals)


@pytest.mark.parametrize("d", DIAGRAMS, ids=IDS)
def test_markdown_nodes_and_edges(d: Diagram) -> None:
    text = to_markdown(d)
    states_part, moves_part = text.split("## Transitions")
    states = re.findall(r"^\| `(\w+)` \| (yes)? \| (yes)? \|$", states_part, re.M)
    assert [s for s, _, _ in states] == [n.id for n in d.nodes]
    assert [(bool(i), bool(f)) for _, i, f in states] == [(n.initial, n.final) for n in d.nodes]
    rows = [
        [c.strip() for c in line.strip("|").split(" | ")]
        for line in moves_part.splitlines()
        if line.startswith("| `")
    ]
    assert [(r[0].strip("`"), r[3].strip("`"), r[1].strip("`")) for r in rows] == _rows(d)
    assert [r[2].strip("`") or None for r in rows] == [e.guard for e in d.edges]
    assert [r[4] for r in rows] == [e.actor for e in d.edges]
    assert [r[5] for r in rows] == [e.section for e in d.edges]


@pytest.mark.parametrize("d", DIAGRAMS, ids=IDS)
def test_matplotlib_plan_nodes_edges_and_no_overlaps(d: Diagram) -> None:
    p = plan_of(d)
    assert list(p.nodes) == [n.id for n in d.nodes]
    assert p.edges() == list(d.edges)
    for pb in p.bundles:
        b = pb.bundle
        assert {(e.source, e.dest, e.actor) for e in b.edges} == {(b.source, b.dest, b.actor)}
        assert pb.bundle.text.splitlines() == [e.label for e in b.edges]
    assert p.overlaps() == []


def test_layout_hints_name_exactly_their_machines_states() -> None:
    by_name = {d.name: d for d in DIAGRAMS}
    for name in LAYOUT_HINTS:
        assert name in by_name, f"layout hint for unknown machine {name}"
        assert hint_for(by_name[name]) is not None, f"layout hint for {name} no longer matches its states"


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_pictures_fit_a_docs_page(generated: dict[str, bytes]) -> None:
    for d in DIAGRAMS:
        width, height = _png_size(generated[f"machines/{d.name}.png"])
        assert 1000 <= width <= 1400, (d.name, width)
        assert height <= 1400, (d.name, height)
        svg = generated[f"machines/{d.name}.svg"]
        assert svg.lstrip().startswith(b"<?xml") and b"<svg" in svg
        assert b"<dc:date>" not in svg


# -- reproducible and fresh --------------------------------------------------------------------


_AGAIN = """
import hashlib, json, sys
from diagrams import generate
from diagrams.ir import all_diagrams
from diagrams.render_markdown import to_markdown
from diagrams.render_mermaid import to_mermaid
from diagrams.render_mpl import render
out = {}
ds = all_diagrams()
for d in ds:
    out[f"machines/{d.name}.mmd"] = to_mermaid(d).encode()
    out[f"machines/{d.name}.md"] = to_markdown(d, f"{d.name}.png", f"{d.name}.mmd").encode()
small = min(ds, key=lambda d: len(d.edges))
out[f"machines/{small.name}.png"], out[f"machines/{small.name}.svg"] = render(small)
out.update(generate.scenario_files()[0])
json.dump({k: hashlib.sha256(v).hexdigest() for k, v in out.items()}, sys.stdout)
"""


def test_sources_and_a_picture_are_identical_in_another_process(generated: dict[str, bytes]) -> None:
    """The fast form of the test below: every machine's text sources, the scenario diagrams and
    the smallest machine's pictures, made under another hash seed, have the bytes made here
    (the composed graph and the other pictures: the deep test, and the committed files)."""
    env = dict(os.environ, PYTHONHASHSEED="12345")
    proc = subprocess.run(
        [sys.executable, "-c", _AGAIN], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert len(again) > 2 * len(DIAGRAMS) + 2
    assert {k: h for k, h in again.items() if hashlib.sha256(generated[k]).hexdigest() != h} == {}


@pytest.mark.deep
def test_regenerating_gives_identical_bytes_in_another_process(
    generated: dict[str, bytes], tmp_path: Path
) -> None:
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = tmp_path / "again"
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "diagrams", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    written = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert sorted(written) == sorted(generated)
    assert [k for k in generated if written[k] != generated[k]] == []


def test_committed_diagrams_are_fresh(generated: dict[str, bytes]) -> None:
    folder = REPO / "diagrams"
    missing = [k for k in generated if not (folder / k).is_file()]
    assert missing == [], f"not committed (run `acp-model diagrams`): {missing}"
    compare_images = matplotlib.__version__ == RENDERED_WITH
    differ = [
        k
        for k, v in generated.items()
        if (compare_images or not k.endswith(IMAGES)) and (folder / k).read_bytes() != v
    ]
    assert differ == [], f"stale (run `acp-model diagrams`): {differ}"
    assert stale(folder, generated, GENERATED_DIRS) == [], "files no generator writes"
    assert set(GENERATED_DIRS) <= {k.split("/")[0] for k in generated}
    if not compare_images:
        pytest.skip(
            f"text files fresh; pictures not compared: matplotlib {matplotlib.__version__} "
            f"draws different bytes than {RENDERED_WITH}, which made the committed ones"
        )


def test_gallery_embeds_every_picture_and_links_every_source(generated: dict[str, bytes]) -> None:
    readme = generated["README.md"].decode()
    embedded = set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme))
    linked = set(re.findall(r"(?<!!)\[[^\]]*\]\(([^)]+)\)", readme))
    for k in generated:
        if k.endswith(".png"):
            assert k in embedded, k
        elif k != "README.md":
            assert k in linked, k
    for t in embedded | linked:
        assert t in generated, f"gallery links a file that is not generated: {t}"
    assert "machines/foreground.png" in embedded and "machines/prompt.png" in embedded


def test_writing_removes_only_stale_generated_files(tmp_path: Path, generated: dict[str, bytes]) -> None:
    from diagrams.generate import write

    keep = tmp_path / "notes.txt"
    keep.write_text("mine")
    old = tmp_path / "machines" / "renamed_machine.png"
    old.parent.mkdir()
    old.write_bytes(b"old")
    report = write(tmp_path, generated)
    assert report.removed == ["machines/renamed_machine.png"] and not old.exists()
    assert keep.read_text() == "mine"
    again = write(tmp_path, generated)
    assert again.written == [] and again.removed == [] and len(again.unchanged) == len(generated)


def test_cli_refuses_a_file_as_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    target = tmp_path / "file"
    target.write_text("x")
    assert main(["diagrams", "--out", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(target) in err[0]


# -- Mermaid validity with Mermaid's own parser ---------------------------------------------------


MERMAID_SCRIPT = r"""
const { createRequire } = require('module');
const fs = require('fs');
const path = require('path');
const [tools, chromium, outDir, ...files] = process.argv.slice(2);
const need = createRequire(path.join(tools, 'node_modules', 'x.js'));
const puppeteer = need('puppeteer-core');
const mermaidJs = path.join(tools, 'node_modules', 'mermaid', 'dist', 'mermaid.min.js');
(async () => {
  const browser = await puppeteer.launch({ executablePath: chromium, args: ['--no-sandbox'] });
  const page = await browser.newPage();
  await page.setContent('<html><body></body></html>');
  await page.addScriptTag({ content: fs.readFileSync(mermaidJs, 'utf8') });
  let bad = 0;
  for (const [i, f] of files.entries()) {
    const text = fs.readFileSync(f, 'utf8');
    const res = await page.evaluate(async (t, id) => {
      try {
        mermaid.initialize({ startOnLoad: false });
        await mermaid.parse(t);
        return { svg: (await mermaid.render(id, t)).svg };
      } catch (e) { return { error: String((e && e.message) || e) }; }
    }, text, 'd' + i);
    if (res.error) { bad++; console.log('FAIL ' + f + ': ' + res.error.split('\n').slice(0, 4).join(' | ')); }
    else fs.writeFileSync(path.join(outDir, path.basename(f) + '.svg'), res.svg);
  }
  await browser.close();
  process.exit(bad ? 1 : 0);
})();
"""


def _mermaid_tools() -> tuple[Path, Path] | None:
    """Mermaid (with puppeteer-core) and a Chromium: $ACP_MERMAID_TOOLS (a folder whose
    node_modules holds @mermaid-js/mermaid-cli) and $ACP_CHROMIUM, else the documented paths."""
    tools = Path(os.environ.get("ACP_MERMAID_TOOLS", "/tmp/mermaid-tools"))
    chromium = os.environ.get("ACP_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    needed = [
        tools / "node_modules" / "mermaid" / "dist" / "mermaid.min.js",
        tools / "node_modules" / "puppeteer-core",
    ]
    if not all(p.exists() for p in needed) or not Path(chromium).is_file() or shutil.which("node") is None:
        return None
    return tools, Path(chromium)


@pytest.mark.mermaid
def test_every_mermaid_file_parses_and_renders(generated: dict[str, bytes], tmp_path: Path) -> None:
    """Mermaid's own parser and renderer, in headless Chromium, on every generated source."""
    found = _mermaid_tools()
    if found is None:
        pytest.skip(
            "Mermaid not installed: PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-save --prefix "
            "/tmp/mermaid-tools @mermaid-js/mermaid-cli and apt-get install -y chromium "
            "(or set ACP_MERMAID_TOOLS and ACP_CHROMIUM)"
        )
    tools, chromium = found
    sources = {k.replace("/", "__"): v.decode() for k, v in generated.items() if k.endswith(".mmd")}
    for name in ("seq_permission_cancel", "seq_background_odd_ids"):
        sources[f"{name}.mmd"] = transcript_to_mermaid(_items(DATA / f"{name}.ndjson"))
    src = tmp_path / "src"
    out = tmp_path / "out"
    src.mkdir()
    out.mkdir()
    for name, text in sources.items():
        (src / name).write_text(text)
    (tmp_path / "check.cjs").write_text(MERMAID_SCRIPT)
    proc = subprocess.run(
        [
            "node",
            str(tmp_path / "check.cjs"),
            str(tools),
            str(chromium),
            str(out),
            *sorted(str(p) for p in src.iterdir()),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.svg" for n in sources)
    odd = (out / "seq_background_odd_ids.mmd.svg").read_text()
    assert "term:dev$server" in odd and "id=p;1#x" in odd, "entity codes must render as the characters"
    prompt_svg = (out / "machines__prompt.mmd.svg").read_text()
    assert "reject [!busy_only]" in prompt_svg


# -- sequence diagrams -------------------------------------------------------------------------


def _items(path: Path) -> list[tuple[str, object]]:
    return [(o["from"], o["message"]) for o in map(json.loads, path.read_text().splitlines())]


ARROW = re.compile(r"^\s*([CA])(->>|-->>|-\))([CA]): (.*)$", re.M)
NOTE = re.compile(r"^\s*Note over C,A: (.*)$", re.M)


def test_sequence_one_arrow_per_message_and_notes_on_state_changes() -> None:
    items = _items(DATA / "seq_permission_cancel.ndjson")
    text = transcript_to_mermaid(items)
    assert text.startswith("sequenceDiagram\n")
    arrows = ARROW.findall(text)
    assert len(arrows) == len(items)
    assert [(a, b) for a, _, b, _ in arrows] == [
        ("C", "A") if s == "client" else ("A", "C") for s, _ in items
    ]
    kinds = [k for _, k, _, _ in arrows]
    assert kinds[0] == "->>" and kinds[1] == "-)" and kinds[3] == "-->>"
    labels = [_unescape(lab) for _, _, _, lab in arrows]
    assert labels[3] == "result session/prompt id=1 messageId=msg_u_1"
    assert labels[9] == "$/cancel_request"
    assert labels[10] == "error -32800 session/prompt id=2"
    assert labels[11] == "result session/request_permission id=perm_1 outcome=cancelled"
    assert labels[12] == "tool_call_update tc_1 cancelled"
    assert labels[13] == "state_update idle stopReason=cancelled"
    notes = [_unescape(n) for n in NOTE.findall(text)]
    assert notes == [
        "foreground idle \u2192 running",
        "foreground running \u2192 requires_action",
        "foreground requires_action \u2192 idle",
    ]


def test_sequence_escapes_special_characters_and_survives_malformed_messages() -> None:
    items = _items(DATA / "seq_background_odd_ids.ndjson")
    text = transcript_to_mermaid(items)
    arrows = ARROW.findall(text)
    assert len(arrows) == len(items)
    for _, _, _, lab in arrows + [("", "", "", n) for n in NOTE.findall(text)]:
        stripped = re.sub(r"#\d+;", "", lab)
        assert not re.search(r"[;#:<>$]", stripped), lab
    labels = [_unescape(lab) for _, _, _, lab in arrows]
    assert labels[0] == "session/prompt id=p;1#x"
    assert labels[3] == "result session/prompt id=p;1#x messageId=msg<1>;#2"
    assert labels[6] == "state_update running bg=[terminal term:dev$server]"
    assert labels[7] == "[sess_child] state_update unknown"
    assert labels[9] == "state_update idle stopReason=end_turn bg=[4 items]"
    assert labels[11] == "terminal_update term:dev$server exited"
    assert labels[12] == "malformed message"
    notes = [_unescape(n) for n in NOTE.findall(text)]
    assert notes == [
        "foreground idle \u2192 running",
        "[sess_child] foreground idle \u2192 unknown",
        "foreground running \u2192 idle",
    ]


def test_every_scenario_has_a_sequence_diagram_with_one_arrow_per_line(generated: dict[str, bytes]) -> None:
    from simulator.peers.scenarios import SCENARIOS

    for sc in SCENARIOS:
        text = generated[f"scenarios/{sc.name}.mmd"].decode()
        assert len(ARROW.findall(text)) == len(sc.run().world.transcript), sc.name


# -- composed graph ----------------------------------------------------------------------------


def test_composed_graph_respects_its_constraints_and_summary() -> None:
    cfg = composed.CONFIGS[1]
    g = composed.explore(cfg)
    for u, v, data in g.edges(data=True):
        fg_u, *_, tool_u, bg_u = u.split(",")
        if data["event"].startswith("tool."):  # the foreground work's tool call
            assert fg_u != "idle", (u, v, data)
        if data["event"] == "tool.run":  # running is progress: not while requires_action (FG-04)
            assert fg_u == "running", (u, v, data)
        if data["event"] == "fg.end":  # nothing owed before the idle (DONE-03)
            assert tool_u in ("unstarted", "completed", "failed", "cancelled"), (u, v)
            assert bg_u != "announced", (u, v)
        assert u != v
    # blocked work may give its tool call a final status and end without resuming (Waiting for
    # user action), and work that starts blocked may start one
    events = {(u.split(",")[0], data["event"]) for u, _, data in g.edges(data=True)}
    assert {("requires_action", "tool.fail"), ("requires_action", "tool.start")} <= events
    summary = composed.summarize(cfg, g)
    assert summary["states"] == g.number_of_nodes() and summary["edges"] == g.number_of_edges()
    assert summary["cannot_reach_quiescent"] == 0 and summary["dead_ends"] == []
    assert summary["strongly_connected_components"] == nx.number_strongly_connected_components(g)
    two = composed.explore(composed.CONFIGS[2])
    # prompt 2 is never inserted from held while prompt 1 still waits (held prompts go in order)
    for u, _, data in two.edges(data=True):
        if data["event"] == "p2.insert":
            p1, p2 = u.split(",")[1:3]
            waits = ("received", "held", "cancel_requested")
            assert not (p2 in waits[1:] and p1 in waits), u


def _composed_moves(model: composed.Model = composed.SPEC) -> set[tuple[str, str]]:
    """(state, event) of every edge of the smallest composed graph under ``model``."""
    g = composed.explore(composed.CONFIGS[0], model)
    return {(u, data["event"]) for u, _, data in g.edges(data=True)}


LIVE_TOOL = re.compile(r",(pending|in_progress|paused)$")


def test_composed_graph_follows_the_declarations_of_model_between(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: the graph runs ``model.between``'s declarations, so a variant that switches or
    drops one, or an edit of its function, changes the graph."""
    from model import between
    from properties.variants import from_drops, load

    spec = _composed_moves()
    assert not any("(waits)" in u for u, _ in spec)
    # steering switched off (variants/no-steering.toml): a prompt sent during active work waits
    # for its idle, and is inserted only after it
    no_steering = _composed_moves(composed.Model.of_variant(load(str(REPO / "variants/no-steering.toml"))))
    assert ("running,received,unstarted", "p1.insert") in spec
    assert ("running,received(waits),unstarted", "p1.hold") in no_steering
    assert not any(e == "p1.insert" and "(waits)" in u for u, e in no_steering)
    # updates_before_idle dropped: work may end with its tool call live
    assert not any(e == "fg.end" and LIVE_TOOL.search(u) for u, e in spec)
    done03 = _composed_moves(composed.Model(dropped=frozenset({between.UPDATES_BEFORE_IDLE.rule})))
    assert any(e == "fg.end" and LIVE_TOOL.search(u) for u, e in done03)
    # running_on_progress's rule dropped (the foreground table's cell relaxed): blocked work's
    # tool call may run
    assert not any(u.startswith("requires_action,") and e == "tool.run" for u, e in spec)
    fg04 = _composed_moves(composed.Model.of_variant(from_drops(["FG-04"])))
    assert any(u.startswith("requires_action,") and e == "tool.run" for u, e in fg04)

    # each function the graph calls decides: replaced, the graph changes
    def negated(f: Callable[..., object]) -> Callable[..., bool]:
        return lambda *args: not f(*args)

    for name in ("owed_before_idle", "tool_runs", "tool_progress", "covers_prompt", "oldest_waiting"):
        with monkeypatch.context() as m:
            m.setattr(between.Rules, name, staticmethod(negated(getattr(between.SPEC, name))))
            assert _composed_moves() != spec, name
    with monkeypatch.context() as m:
        m.setattr(between.Rules, "may_insert_now", lambda self, *args: False)
        assert _composed_moves() != spec


def test_composed_graphml_round_trips(generated: dict[str, bytes], tmp_path: Path) -> None:
    name = composed.DRAWN.name
    path = tmp_path / "g.graphml"
    path.write_bytes(generated[f"composed/{name}.graphml"])
    back = nx.read_graphml(path, force_multigraph=True)
    g = composed.explore(composed.DRAWN)
    assert back.number_of_nodes() == g.number_of_nodes()
    assert back.number_of_edges() == g.number_of_edges()
    summary = json.loads(generated["composed/summary.json"])
    assert [s["config"] for s in summary] == [c.name for c in composed.CONFIGS]


def test_diagrams_default_to_the_projects_folder_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, defect 5: run from another folder, ``diagrams`` wrote a new ./diagrams there.
    The default is the project's folder (as ``trace``'s), and the summary names it."""
    import diagrams.generate
    from cli.main import main

    seen: list[Path] = []

    def write(out: Path, progress: object = None) -> FolderWrite:
        seen.append(out)
        return FolderWrite()

    monkeypatch.setattr(diagrams.generate, "write", write)
    monkeypatch.chdir(tmp_path)
    assert main(["diagrams", "--quiet"]) == 0
    assert seen == [REPO / "diagrams"] and list(tmp_path.iterdir()) == []
    assert capsys.readouterr().out.startswith(f"{REPO / 'diagrams'}: 0 files")
