"""The style sheet and the script every HTML page inlines (no network, no external assets).

Owns: how a page looks (``CSS``) and behaves (``SCRIPT``): selecting a line rebuilds the state
after it from the deltas in the page's ``acp-data`` JSON (checkpoints every 64 messages),
keyboard stepping (``j``/``↓`` next line, ``k``/``↑`` previous, ``n`` next finding, ``p``/``N``
previous finding, ``o``/``Enter`` the selected message's JSON, ``Home``/``End``), a filter of the
findings by level, and clicks on rows, findings and the findings index. The page reads without
the script too: every message, finding and spec line is in the HTML itself.

Must not know: Python-side data structures beyond the ``acp-data`` JSON and the class names
``diagrams.html.page`` writes.
"""

from __future__ import annotations

CSS = """
:root { --client: #1f5fa8; --agent: #8a3b12; --err: #b00020; --warn: #9a6700; --info: #4a6572;
  --sel: #fff4c2; --line: #c9ced6; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
body { margin: 0; color: #1b1f24; background: #fafbfc; font-size: 14px; }
header { padding: 10px 16px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 17px; margin: 0 0 4px; }
header .summary, header .readings { color: #444; margin: 2px 0; }
.controls { display: flex; flex-wrap: wrap; gap: 14px; align-items: center; margin-top: 6px; }
.controls label { white-space: nowrap; }
.keys { color: #555; font-size: 12px; }
kbd { border: 1px solid #bbb; border-radius: 3px; padding: 0 4px; background: #f3f3f3; font-size: 11px; }
#index { margin: 6px 0 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 4px 10px; }
#index a { text-decoration: none; color: inherit; border: 1px solid var(--line); border-radius: 10px;
  padding: 1px 8px; background: #fff; font-size: 12px; }
#index a.sev-error { border-color: var(--err); } #index a.sev-warning { border-color: var(--warn); }
main { display: grid; grid-template-columns: minmax(0, 1fr) 420px; gap: 0; }
#sequence { padding: 8px 12px 40px; }
.lanes-head { display: grid; grid-template-columns: 48px 1fr; position: sticky; top: 0; z-index: 2;
  background: #fafbfc; border-bottom: 1px solid var(--line); font-weight: 600; }
.lanes-head .who { display: flex; justify-content: space-between; padding: 4px 6%; }
.who .c { color: var(--client); } .who .a { color: var(--agent); }
.row { display: grid; grid-template-columns: 48px 1fr; border-bottom: 1px solid #eef0f3;
  scroll-margin-top: 40px; cursor: pointer; }
.row.sel { background: var(--sel); outline: 1px solid #e0c060; }
.ln { color: #666; text-align: right; padding: 6px 8px 0 0; font-variant-numeric: tabular-nums;
  text-decoration: none; font-size: 12px; }
.body { padding: 3px 0 4px; min-width: 0;
  background: linear-gradient(to right, transparent calc(6% - 1px), #d5d9e0 calc(6% - 1px),
  #d5d9e0 calc(6% + 1px), transparent calc(6% + 1px), transparent calc(94% - 1px), #d5d9e0 calc(94% - 1px),
  #d5d9e0 calc(94% + 1px), transparent calc(94% + 1px)); }
.arrow { position: relative; margin: 0 6%; padding: 0 14px 2px; text-align: center; font-size: 13px;
  border-bottom: 2px solid currentColor; overflow-wrap: anywhere; }
.arrow.response { border-bottom-style: dashed; }
.arrow.to-agent { color: var(--client); } .arrow.to-client { color: var(--agent); }
.arrow.to-agent::after { content: "\\25B6"; position: absolute; right: -6px; bottom: -9px; font-size: 11px; }
.arrow.to-client::before { content: "\\25C0"; position: absolute; left: -6px; bottom: -9px; font-size: 11px; }
.arrow .label { color: #1b1f24; }
.arrow .sid { color: #666; font-size: 11px; margin-right: 4px; }
.arrow.input { border-bottom: 2px dotted #999; color: #777; }
.note { margin: 3px 12%; text-align: center; font-size: 12px; background: #eef3fa; border: 1px solid #cad6e6;
  border-radius: 3px; color: #234; }
.hidden-step { margin: 3px 7%; font-size: 12px; font-style: italic; color: #555; border-left: 3px dotted #999;
  padding-left: 6px; }
.hidden-step.lane-A { text-align: right; border-left: 0; border-right: 3px dotted #999; padding-right: 6px; }
details.json { margin: 2px 6% 0; font-size: 12px; }
details.json summary { color: #555; cursor: pointer; width: max-content; }
details.json pre { background: #fff; border: 1px solid var(--line); padding: 6px; margin: 2px 0;
  max-height: 320px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.finding { margin: 4px 6% 4px; padding: 4px 8px; border-left: 4px solid var(--info); background: #fff;
  border-radius: 2px; box-shadow: 0 0 0 1px #e4e7eb; cursor: pointer; }
.finding.sev-error { border-left-color: var(--err); } .finding.sev-warning { border-left-color: var(--warn); }
.finding.cur { box-shadow: 0 0 0 2px #1f5fa8; }
.finding.off, #index a.off { display: none; }
.finding .lvl { font-weight: 700; font-size: 12px; }
.sev-error .lvl { color: var(--err); } .sev-warning .lvl { color: var(--warn); } .sev-info .lvl { color: var(--info); }
.finding .rule { font-weight: 700; font-family: ui-monospace, monospace; }
.finding .expl { margin-top: 2px; }
.finding .spec { margin-top: 3px; color: #333; font-size: 13px; }
.finding .spec q { font-style: italic; }
#end { margin-top: 14px; }
#state { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow: auto; background: #fff;
  border-left: 1px solid var(--line); padding: 8px 12px 24px; box-sizing: border-box; }
#state h2 { font-size: 15px; margin: 4px 0 6px; } #state h3 { font-size: 13px; margin: 12px 0 2px; color: #333; }
#state h4 { font-size: 12px; margin: 8px 0 2px; color: #555; }
#state table { border-collapse: collapse; width: 100%; font-size: 12px; }
#state th { text-align: left; font-weight: 500; color: #333; padding: 1px 6px 1px 0; vertical-align: top; width: 42%;
  overflow-wrap: anywhere; }
#state td { padding: 1px 0; overflow-wrap: anywhere; }
#state tr.changed td, #state tr.changed th { background: #e6f4ea; }
#state .empty { color: #777; font-size: 12px; }
#spec { border-top: 2px solid var(--line); padding: 8px 16px 60px; background: #fff; }
#spec h2 { font-size: 15px; }
.sl { display: grid; grid-template-columns: 44px 1fr; font-size: 13px; line-height: 1.45; }
.sl .sn { color: #888; text-align: right; padding-right: 8px; font-variant-numeric: tabular-nums; }
.sl.cited .sn { color: #1f5fa8; font-weight: 700; }
.sl:target, .sl.hl { background: var(--sel); }
"""

SCRIPT = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("acp-data").textContent);
  var SEP = "\x1f", CK = 64;
  var rows = Array.prototype.slice.call(document.querySelectorAll("#sequence .row"));
  var findings = Array.prototype.slice.call(document.querySelectorAll(".finding"));
  var machinesEl = document.getElementById("machines"), viewEl = document.getElementById("view");
  var cur = -1, curF = -1, cps = [[new Map(), new Map()]];
  function apply(map, deltas) {
    for (var i = 0; i < deltas.length; i++) {
      var key = D.keys[deltas[i][0]], value = deltas[i][1];
      if (value === null) map.delete(key); else map.set(key, value);
    }
  }
  function stateAt(s) {  /* machines and view after message s (-1: before any) */
    var c = Math.floor((s + 1) / CK);
    while (cps.length <= c) {
      var n = cps.length, m0 = new Map(cps[n - 1][0]), v0 = new Map(cps[n - 1][1]);
      for (var i = (n - 1) * CK; i < n * CK; i++) { apply(m0, D.machines[i]); apply(v0, D.views[i]); }
      cps.push([m0, v0]);
    }
    var m = new Map(cps[c][0]), v = new Map(cps[c][1]);
    for (var j = c * CK; j <= s; j++) { apply(m, D.machines[j]); apply(v, D.views[j]); }
    return [m, v];
  }
  function show(el, map, changed) {
    el.textContent = "";
    var keys = Array.from(map.keys()).sort(), sid = null, table = null;
    if (!keys.length) {
      var p = document.createElement("p"); p.className = "empty"; p.textContent = "(nothing yet)";
      el.appendChild(p); return;
    }
    keys.forEach(function (k) {
      var at = k.indexOf(SEP), s = k.slice(0, at), label = k.slice(at + 2);
      if (s !== sid) {
        sid = s;
        var h = document.createElement("h4");
        h.textContent = s.charAt(0) === "(" ? s : "session " + s;
        el.appendChild(h);
        table = document.createElement("table"); table.dataset.session = s; el.appendChild(table);
      }
      var tr = document.createElement("tr"), th = document.createElement("th"), td = document.createElement("td");
      tr.dataset.row = label; if (changed.has(k)) tr.className = "changed";
      th.textContent = label; td.textContent = map.get(k);
      tr.appendChild(th); tr.appendChild(td); table.appendChild(tr);
    });
  }
  function keysOf(deltas) {
    var out = new Set();
    for (var i = 0; i < deltas.length; i++) out.add(D.keys[deltas[i][0]]);
    return out;
  }
  function select(r, scroll) {
    if (r < 0 || r >= rows.length) return;
    if (cur >= 0) rows[cur].classList.remove("sel");
    cur = r;
    var row = rows[r], s = +row.dataset.s, mv = stateAt(s);
    row.classList.add("sel");
    var own = row.classList.contains("msg") && s >= 0;
    document.getElementById("st-line").textContent = row.dataset.line;
    document.getElementById("st-what").textContent = own ? "" : s < 0 ? " (no message yet)" :
      " (no message on this line: as after line " + D.lines[s] + ")";
    show(machinesEl, mv[0], own ? keysOf(D.machines[s]) : new Set());
    show(viewEl, mv[1], own ? keysOf(D.views[s]) : new Set());
    if (scroll !== false) row.scrollIntoView({block: "nearest"});
  }
  function rowOf(el) { return rows.indexOf(el.closest(".row")); }
  function visible(f) { return !f.classList.contains("off"); }
  function selectFinding(k) {
    if (k < 0 || k >= findings.length) return;
    if (curF >= 0) findings[curF].classList.remove("cur");
    curF = k;
    var f = findings[k], r = rowOf(f);
    f.classList.add("cur");
    if (r >= 0) select(r, false);
    f.scrollIntoView({block: "nearest"});
  }
  function stepFinding(dir) {
    var k = curF;
    if (k < 0) {  /* from the selected line */
      for (var i = 0; i < findings.length; i++) {
        var r = rowOf(findings[i]);
        if (dir > 0 ? (r >= cur || r < 0) : (r >= 0 && r <= cur)) { k = dir > 0 ? i - 1 : i + 1; break; }
      }
      if (k < 0) k = dir > 0 ? -1 : findings.length;
    }
    for (var j = k + dir; j >= 0 && j < findings.length; j += dir) if (visible(findings[j])) { selectFinding(j); return; }
  }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey || (t && t.matches && t.matches("input, textarea, select"))) return;
    switch (e.key) {
      case "j": case "ArrowDown": if (curF >= 0) { findings[curF].classList.remove("cur"); curF = -1; } select(cur + 1); break;
      case "k": case "ArrowUp": if (curF >= 0) { findings[curF].classList.remove("cur"); curF = -1; } select(Math.max(cur - 1, 0)); break;
      case "n": stepFinding(1); break;
      case "p": case "N": stepFinding(-1); break;
      case "Home": select(0); break;
      case "End": select(rows.length - 1); break;
      case "o": case "Enter":
        var d = cur >= 0 ? rows[cur].querySelector("details") : null;
        if (!d) return;
        d.open = !d.open; break;
      default: return;
    }
    e.preventDefault();
  });
  document.getElementById("sequence").addEventListener("click", function (e) {
    var t = e.target;
    if (t.closest("summary, pre, a")) return;
    var f = t.closest(".finding");
    if (f) { selectFinding(findings.indexOf(f)); return; }
    var row = t.closest(".row");
    if (row) {
      if (curF >= 0) { findings[curF].classList.remove("cur"); curF = -1; }
      select(rows.indexOf(row), false);
    }
  });
  var index = document.getElementById("index");
  if (index) index.addEventListener("click", function (e) {
    var a = e.target.closest("a[data-f]");
    if (!a) return;
    e.preventDefault();
    selectFinding(+a.dataset.f);
  });
  document.addEventListener("click", function (e) {
    var a = e.target.closest("a[data-spec]");
    if (!a) return;
    var old = document.querySelectorAll(".sl.hl");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("hl");
    var line = document.getElementById("spec-" + a.dataset.spec);
    if (line) line.classList.add("hl");
  });
  var boxes = document.querySelectorAll("input[data-level]");
  function filter() {
    var off = new Set();
    for (var i = 0; i < boxes.length; i++) if (!boxes[i].checked) off.add(boxes[i].dataset.level);
    var items = document.querySelectorAll(".finding, #index a");
    for (var j = 0; j < items.length; j++) items[j].classList.toggle("off", off.has(items[j].dataset.level));
    if (curF >= 0 && !visible(findings[curF])) { findings[curF].classList.remove("cur"); curF = -1; }
  }
  for (var b = 0; b < boxes.length; b++) boxes[b].addEventListener("change", filter);
  var m = /^#L(\d+)$/.exec(location.hash), start = 0;
  if (m) for (var q = 0; q < rows.length; q++) if (rows[q].dataset.line === m[1]) { start = q; break; }
  if (rows.length) select(start, !!m);
  filter();
})();
"""
