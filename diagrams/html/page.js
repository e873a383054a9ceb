
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
