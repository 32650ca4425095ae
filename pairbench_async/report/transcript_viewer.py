"""The transcript viewer: one self-contained HTML page to search a run's episodes.

``pairbench report DIR --viewer OUT.html`` writes it. Like ``inspect view``: a filter
bar (free text over prompts, replies, hints, drafts, reasons, programs and errors; model,
protocol and status; instance), a sortable table of episodes, and one episode at a time
beside it, turn by turn: the targeted scenario, the hint and its level, the rejected
drafts with the validator's reasons, every model call (the messages sent and the raw
reply), the program's diff and the tests' verdicts. ``#ep-N`` in the address opens
episode N, so a link can point at one. A ``--sweep`` folder's page holds every setting's
episodes (:func:`.transcript.of_settings`), with a setting column and filter.

The page needs no network: its CSS and script are inline, and the data is embedded as
JSON. To stay small and quick on a real run's size, the messages are embedded once each
(calls name them by id, as the records do) and each episode's details are a JSON block of
their own, parsed only when the episode is opened or a free-text search first needs it.
Every text of a run is untrusted: the script only ever sets it as text (``textContent``),
never as markup, and ``<`` is escaped inside the JSON blocks so that nothing can close
them. What it shows comes from :mod:`.transcript`, with the same rule for hidden data:
none without ``report --with-tests``.
"""

from __future__ import annotations

import html
from typing import Any, Final

import msgspec

from .transcript import EpisodeTranscript, TranscriptLimits, Transcripts

__all__ = ["VIEWER_LIMITS", "render_viewer"]

#: The viewer's caps: larger than the report page's (a message is shown whole up to
#: 200,000 characters), since the messages are embedded once and episodes parsed lazily.
VIEWER_LIMITS: Final = TranscriptLimits(turn_code_lines=400, episode_code_lines=4_000,
                                        line_chars=1_000, text_chars=20_000, attempt_chars=20_000,
                                        attempts=50, test_ids=2_000, total_chars=400_000_000,
                                        message_chars=200_000, tests_shown=10, test_chars=5_000)

_CSS: Final = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;
background:#f4f5f7;height:100vh;display:flex;flex-direction:column}
header{padding:.5rem 1rem;background:#1f2a44;color:#fff;display:flex;gap:1rem;align-items:baseline;
flex-wrap:wrap}header h1{font-size:1.05rem;margin:0}header .sub{color:#c9d3ea;font-size:.82rem}
.bar{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center;padding:.5rem 1rem;background:#fff;
border-bottom:1px solid #d8dbe2}
.bar input,.bar select{font:inherit;padding:.25rem .45rem;border:1px solid #b9bfcc;border-radius:4px;
background:#fff}.bar input[type=search]{min-width:22rem;flex:1 1 22rem}
.bar label{font-size:.8rem;color:#4a5060;display:flex;gap:.3rem;align-items:center}.bar label[hidden]{display:none}
#count{font-size:.8rem;color:#4a5060;margin-left:auto}
.note{font-size:.78rem;color:#8a5a00;padding:.3rem 1rem;background:#fff8e6;border-bottom:1px solid #f0e0b0}
main{flex:1;display:grid;grid-template-columns:minmax(0,52fr) minmax(0,48fr);min-height:0}
#list{overflow:auto;border-right:1px solid #d8dbe2;background:#fff}
table{border-collapse:collapse;width:100%;font-size:.82rem}#list table{table-layout:fixed}
thead th{position:sticky;top:0;background:#eef0f4;text-align:left;padding:.35rem .45rem;
border-bottom:1px solid #cfd3dc;cursor:pointer;user-select:none;white-space:nowrap;overflow:hidden;
text-overflow:ellipsis}
thead th.num,td.num{text-align:right}thead th[aria-sort=ascending]::after{content:" \\25B2"}
thead th[aria-sort=descending]::after{content:" \\25BC"}
tbody td{padding:.3rem .45rem;border-bottom:1px solid #eef0f4;white-space:nowrap;
overflow:hidden;text-overflow:ellipsis}
tbody tr{cursor:pointer}tbody tr:hover{background:#f3f6fd}tbody tr.sel{background:#dce7fb}
tbody tr:focus{outline:2px solid #4a7bd0;outline-offset:-2px}
.st-done{color:#1b6e1b}.st-error{color:#b00020;font-weight:600}.st-unfinished{color:#8a6d00}
#detail{overflow:auto;padding:.6rem 1rem 2rem}
#detail .empty{color:#666;margin-top:2rem;text-align:center}
.ep-head h2{font-size:1rem;margin:.2rem 0}.m{color:#555;font-size:.8rem}
.turn{background:#fff;border:1px solid #d8dbe2;border-radius:6px;margin:.6rem 0;padding:.5rem .7rem}
.turn-head{font-weight:600;margin-bottom:.3rem}
.lvl{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:.75rem;background:#e8e8e8}
.lvl.l1,.lvl.l2{background:#dbe9fb}.lvl.l3,.lvl.l4{background:#fbeccd}.lvl.l5,.lvl.l6{background:#f8d5d5}
.lvl.fb{background:#e6def5}.tag{font-size:.75rem;color:#8a3b00;margin-left:.3rem}
.row{display:grid;grid-template-columns:5.5rem minmax(0,1fr);gap:.5rem;margin:.25rem 0;font-size:.82rem}
.row>.k{color:#555;font-weight:600}
.hint{white-space:pre-wrap;margin:0;padding:.3rem .5rem;border-left:3px solid #4a7bd0;background:#f4f8fe}
.att{white-space:pre-wrap;color:#444}.why{color:#b00020}ol.rej{margin:0;padding-left:1.2rem}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,monospace}
pre.msg,pre.reply,pre.code,pre.tv{padding:.3rem .5rem;border:1px solid #e3e3e3;background:#fafafa;
max-height:26rem;overflow:auto}pre.reply{background:#f3faf3}pre.code{white-space:pre}
pre.code span{display:block}pre.code .a{background:#e3f6e3}pre.code .d{background:#fbe3e3}
pre.code .h{color:#4a5fb0}pre.code .f{color:#777}
details.call{border:1px solid #e3e6ec;border-radius:4px;margin:.2rem 0;background:#fcfcfd}
details.call>summary{cursor:pointer;padding:.2rem .4rem;font-size:.8rem}
details.call>div{padding:.2rem .5rem .4rem}
.role{font-size:.7rem;font-weight:700;text-transform:uppercase;color:#555;margin:.35rem 0 .1rem}
.ids{font-family:ui-monospace,monospace;font-size:.75rem;word-break:break-word}
.err{white-space:pre-wrap;background:#fdf0f0;border:1px solid #f0c0c0;padding:.4rem .6rem;font-size:.8rem}
.cut{color:#8a6d00;font-size:.78rem}mark{background:#ffe066;padding:0}
table.tests td{vertical-align:top;white-space:normal;max-width:none;cursor:auto}
""".strip()

_JS: Final = r"""
"use strict";
const $ = (id) => document.getElementById(id);
const data = (id) => JSON.parse($(id).textContent);
const INDEX = data("tx-index"), MESSAGES = data("tx-messages"), META = data("tx-meta");
const SETTINGS = META.settings || [];
const COLS = [...(SETTINGS.length ? [["setting", "Setting", 0, 14]] : []),
  ["instance", "Instance", 0, 26], ["model", "Model", 0, 12], ["protocol", "Protocol", 0, 11],
  ["run", "Run", 1, 7], ["status", "Status", 0, 17], ["turns", "Turns", 1, 8], ["initial", "Initial %", 1, 10],
  ["final", "Final %", 1, 9]];
const WIDTHS = COLS.reduce((sum, c) => sum + c[3], 0);
const LIMIT = 2000;
const cache = new Map(), searchText = new Map();
let sortKey = null, sortDir = 1, shown = [], current = null, query = "";

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v; else el.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(typeof kid === "string" || typeof kid === "number" ? document.createTextNode(String(kid)) : kid);
  }
  return el;
}
const pct = (r) => (r === null || r === undefined ? "-" : (100 * r).toFixed(1));
const levelLabel = (l) => (l === null || l === undefined ? "no hint" : l >= 1 ? "L" + l : "feedback");

function episode(n) {
  if (!cache.has(n)) {
    const el = $("ep-" + n);
    cache.set(n, el ? JSON.parse(el.textContent) : null);
  }
  return cache.get(n);
}

function textOf(row) {
  if (!searchText.has(row.n)) {
    const parts = [row.setting || "", row.instance, row.model, row.protocol, row.status, row.stop || "", row.error || ""];
    const ep = episode(row.n);
    for (const t of (ep && ep.turns) || []) {
      parts.push(t.hint || "");
      for (const a of t.rejected || []) parts.push(a.text, ...(a.reasons || []));
      for (const c of t.calls || []) {
        parts.push(c.reply || "");
        for (const id of c.messages || []) parts.push((MESSAGES[id] || ["", ""])[1]);
      }
      parts.push(...(t.code_lines || []));
      if (t.target) parts.push(t.target.scenario_id, t.target.failure);
      for (const x of t.failing_tests || []) parts.push(x.id, x.input, x.expected);
    }
    if (ep && ep.error) parts.push(ep.error);
    searchText.set(row.n, parts.join("\n").toLowerCase());
  }
  return searchText.get(row.n);
}

function options(select, values) {
  for (const v of [...new Set(values)].sort()) select.append(h("option", { value: v }, v));
}

function filtered() {
  const model = $("f-model").value, protocol = $("f-protocol").value, status = $("f-status").value;
  const setting = $("f-setting").value;
  const inst = $("f-instance").value.trim().toLowerCase();
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  let rows = INDEX.filter((r) => (!setting || r.setting === setting) && (!model || r.model === model) && (!protocol || r.protocol === protocol)
    && (!status || r.status === status) && (!inst || r.instance.toLowerCase().includes(inst)));
  if (words.length) rows = rows.filter((r) => { const t = textOf(r); return words.every((w) => t.includes(w)); });
  if (sortKey) {
    rows = rows.slice().sort((a, b) => {
      const x = a[sortKey], y = b[sortKey];
      if (x === y) return a.n - b.n;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * sortDir;
    });
  }
  return rows;
}

function renderList() {
  shown = filtered();
  const body = $("rows");
  body.replaceChildren(...shown.slice(0, LIMIT).map((r) => {
    const tr = h("tr", { "data-n": r.n, class: current === r.n ? "sel" : null, title: r.error || null, tabindex: 0 },
      SETTINGS.length ? h("td", { title: r.setting }, r.setting) : null,
      h("td", { title: r.instance }, r.instance), h("td", { title: r.model }, r.model), h("td", {}, r.protocol),
      h("td", { class: "num" }, r.run),
      h("td", { class: "st-" + r.status, title: r.status + (r.stop ? " (" + r.stop + ")" : "") },
        r.status + (r.stop ? " (" + r.stop + ")" : "")),
      h("td", { class: "num" }, r.turns), h("td", { class: "num" }, pct(r.initial)),
      h("td", { class: "num" }, pct(r.final)));
    tr.addEventListener("click", () => open(r.n));
    tr.addEventListener("keydown", (e) => {
      const to = e.key === "ArrowDown" ? tr.nextElementSibling : e.key === "ArrowUp" ? tr.previousElementSibling : null;
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(r.n); }
      else if (to) { e.preventDefault(); to.focus(); open(Number(to.dataset.n)); }
    });
    return tr;
  }));
  const more = shown.length > LIMIT ? ` (the first ${LIMIT} listed: narrow the filter)` : "";
  $("count").textContent = `${shown.length} of ${INDEX.length} episodes${more}`;
  for (const th of document.querySelectorAll("thead th")) {
    th.setAttribute("aria-sort", th.dataset.key === sortKey ? (sortDir > 0 ? "ascending" : "descending") : "none");
  }
}

function ids(label, list, total) {
  if (!total) return null;
  const more = total > list.length ? ` … and ${total - list.length} more` : "";
  return h("div", {}, `${label} (${total}): `, h("span", { class: "ids" }, list.join(", ")), more);
}

function row(k, ...v) { return h("div", { class: "row" }, h("div", { class: "k" }, k), h("div", {}, ...v)); }

function code(t) {
  if (t.code === "unchanged") return `unchanged from ${t.code_base}` + (t.code_found ? "" : " (no code block in the reply: the program was kept)");
  if (t.code === "omitted") return h("span", { class: "cut" }, `omitted (${t.code_omitted} lines)`);
  const lines = t.code_lines.map((l) => {
    let c = "c";
    if (t.code === "diff") c = l.startsWith("+++") || l.startsWith("---") ? "f" : l[0] === "+" ? "a" : l[0] === "-" ? "d" : l.startsWith("@@") ? "h" : "c";
    return h("span", { class: c }, l + "\n");
  });
  const what = t.code === "diff" ? `diff against ${t.code_base}: +${t.added} −${t.removed} lines` : "full program";
  return [h("div", { class: "m" }, what + (t.code_found ? "" : " (no code block in the reply)")),
    h("pre", { class: "code" }, lines), t.code_omitted ? h("div", { class: "cut" }, `${t.code_omitted} more lines cut`) : null];
}

function call(c) {
  const tokens = `${c.prompt_tokens || 0} + ${c.completion_tokens || 0} tokens, ${Math.round(c.latency_ms || 0)} ms`;
  const body = h("div", {});
  if (c.messages_note) body.append(h("div", { class: "m" }, "messages " + c.messages_note));
  for (const id of c.messages || []) {
    const m = MESSAGES[id];
    body.append(h("div", { class: "role" }, m[0]), h("pre", { class: "msg" }, m[1]));
  }
  if (c.reply !== null && c.reply !== undefined) body.append(h("div", { class: "role" }, "reply (raw)"), h("pre", { class: "reply" }, c.reply));
  else body.append(h("div", { class: "m" }, "reply " + (c.reply_note || "")));
  return h("details", { class: "call" }, h("summary", {}, h("b", {}, c.role), ` · ${c.model} · ${tokens}`
    + ((c.attempts || 1) > 1 ? `, ${c.attempts} tries` : "")), body);
}

function turn(t) {
  const lvl = t.level === null || t.level === undefined ? "" : t.level === 0 ? "fb" : "l" + t.level;
  const change = t.turn > 0 ? `, fixed ${t.fixed_total}, broke ${t.broken_total}` : "";
  const head = h("div", { class: "turn-head" }, `Turn ${t.turn} `,
    t.level === null || t.level === undefined ? h("span", { class: "m" }, "no hint") : h("span", { class: "lvl " + lvl }, levelLabel(t.level)),
    t.fallback ? h("span", { class: "tag" }, "fallback hint") : null,
    t.words_cut ? h("span", { class: "tag" }, `${t.words_cut} words past the word cap cut`) : null,
    t.protected === false ? h("span", { class: "tag" }, "not hidden-test protected") : null,
    h("span", { class: "m" }, ` — pass rate ${pct(t.pass_rate)}%${change}`));
  const box = h("div", { class: "turn", id: "turn-" + t.turn }, head);
  if (t.target) {
    const g = t.target;
    box.append(row("Target", `scenario ${g.scenario_id}: ${g.failure}` + (g.shape ? `, output shape ${g.shape}` : "")
      + `, grouped by ${g.grouping}` + (g.continued ? " (continued)" : ""),
      ids(" target tests", g.tests, g.tests_total)));
  }
  const label = t.level ? "Hint" : "Feedback";
  if (t.withheld) box.append(row(label, h("span", { class: "m" }, META.withheld)));
  else if (t.hint !== null && t.hint !== undefined) box.append(row(label, h("blockquote", { class: "hint" }, t.hint)));
  else if (t.turn === 0) box.append(row("Hint", h("span", { class: "m" }, t.given ? "none: turn 0 is the erroneous program as given" : "none: turn 0 is the unhinted repair")));
  if (t.attempts_total) {
    const items = (t.rejected || []).map((a) => h("li", { value: a.number }, h("div", { class: "att" }, a.text),
      h("div", { class: "why" }, "rejected: " + a.reasons.join("; "))));
    const accepted = t.fallback ? "the fallback hint was used" : items.length || t.rejected_omitted ? `attempt ${t.attempts_total} accepted` : "accepted at the first attempt";
    box.append(row("Drafts", items.length ? h("ol", { class: "rej" }, items) : null,
      t.rejected_omitted ? h("div", { class: "cut" }, `${t.rejected_omitted} more rejected drafts not shown`) : null,
      h("div", { class: "m" }, accepted)));
  }
  if ((t.calls || []).length) box.append(row("Calls", t.calls.map(call)));
  box.append(row("Program", code(t)));
  const verdicts = Object.entries(t.verdicts || {}).map(([k, v]) => `${k} ${v}`).join(" · ") || "no verdicts";
  const tests = [h("div", {}, verdicts)];
  if (t.turn > 0) tests.push(ids("fixed", t.fixed, t.fixed_total), ids("broken", t.broken, t.broken_total));
  if (t.tests_as_turn !== null && t.tests_as_turn !== undefined) tests.push(h("div", { class: "m" }, `the same ${t.failed_total} failing and ${t.passed_total} passing tests as at turn ${t.tests_as_turn}`));
  else tests.push(ids("failed", t.failed, t.failed_total), ids("passed", t.passed, t.passed_total));
  box.append(row("Tests", tests));
  if ((t.failing_tests || []).length) {
    box.append(row("Failing", h("table", { class: "tests" }, h("tr", {}, h("th", {}, "test"), h("th", {}, "input"), h("th", {}, "expected output")),
      t.failing_tests.map((x) => h("tr", {}, h("td", {}, x.id), h("td", {}, h("pre", { class: "tv" }, x.input)), h("td", {}, h("pre", { class: "tv" }, x.expected))))),
      t.failed_total > t.failing_tests.length ? h("div", { class: "cut" }, `the first ${t.failing_tests.length} of ${t.failed_total} failing tests`) : null));
  }
  return box;
}

function highlight(root, words) {
  if (!words.length) return;
  const src = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  const re = new RegExp(src, "gi"), any = new RegExp(src, "i");
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const hits = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (any.test(n.nodeValue)) hits.push(n);
  for (const n of hits) {
    const frag = document.createDocumentFragment();
    let last = 0;
    n.nodeValue.replace(re, (m, at) => { frag.append(n.nodeValue.slice(last, at), h("mark", {}, m)); last = at + m.length; return m; });
    frag.append(n.nodeValue.slice(last));
    for (let p = n.parentNode; p && p !== root; p = p.parentNode) if (p.tagName === "DETAILS") p.open = true;
    n.replaceWith(frag);
  }
  const first = root.querySelector("mark");
  if (first) first.scrollIntoView({ block: "center" });
}

function open(n) {
  current = n;
  for (const tr of document.querySelectorAll("#rows tr")) tr.classList.toggle("sel", Number(tr.dataset.n) === n);
  const r = INDEX.find((x) => x.n === n), ep = episode(n), pane = $("detail");
  if (!r) return;
  if (location.hash !== "#ep-" + n) history.replaceState(null, "", "#ep-" + n);
  const head = h("div", { class: "ep-head" },
    h("h2", {}, `${r.setting ? r.setting + " · " : ""}${r.instance} · ${r.model} · ${r.protocol} · run ${r.run}`),
    h("div", {}, h("span", { class: "st-" + r.status }, r.status + (r.stop ? ": " + r.stop : "")),
      `, ${r.turns} turns, pass rate ${pct(r.initial)}% → ${pct(r.final)}%`),
    h("div", { class: "m" }, "episode ", h("code", {}, r.id)));
  pane.replaceChildren(head);
  if (!ep) { pane.append(h("p", { class: "cut" }, "in the index only: the transcripts would take the page past its budget")); return; }
  if (ep.error) pane.append(h("pre", { class: "err" }, ep.error));
  if (!(ep.turns || []).length) pane.append(h("p", { class: "m" }, "no turn was recorded."));
  for (const t of ep.turns || []) pane.append(turn(t));
  if ((ep.cuts || []).length) pane.append(h("div", { class: "cut" }, "cut to keep the page small: " + ep.cuts.join("; ")));
  pane.scrollTop = 0;
  highlight(pane, query.toLowerCase().split(/\s+/).filter(Boolean));
}

function init() {
  $("title").textContent = META.title;
  $("sub").textContent = META.summary;
  if (SETTINGS.length) {  // a sweep's settings, in the sweep's order
    $("l-setting").hidden = false;
    for (const v of SETTINGS) $("f-setting").append(h("option", { value: v }, v));
  }
  options($("f-model"), INDEX.map((r) => r.model));
  options($("f-protocol"), INDEX.map((r) => r.protocol));
  options($("f-status"), INDEX.map((r) => r.status));
  const head = $("head");
  for (const [key, label, num, width] of COLS) {
    const th = h("th", { "data-key": key, class: num ? "num" : null, scope: "col", "aria-sort": "none",
      style: `width:${(100 * width / WIDTHS).toFixed(2)}%`, title: "sort by " + label }, label);
    th.addEventListener("click", () => { sortDir = sortKey === key ? -sortDir : 1; sortKey = key; renderList(); });
    head.append(th);
  }
  let timer = 0;
  $("q").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { query = $("q").value; renderList(); if (current !== null) open(current); }, 150);
  });
  for (const id of ["f-setting", "f-model", "f-protocol", "f-status"]) $(id).addEventListener("change", renderList);
  $("f-instance").addEventListener("input", renderList);
  renderList();
  const m = /^#ep-(\d+)$/.exec(location.hash);
  if (m) open(Number(m[1]));
}
init();
""".strip()

_BODY: Final = """
<header><h1 id="title"></h1><span class="sub" id="sub"></span></header>
<div class="bar">
<input type="search" id="q" placeholder="Search prompts, replies, hints, drafts, programs…" aria-label="free text">
<label id="l-setting" hidden>setting <select id="f-setting"><option value="">all</option></select></label>
<label>model <select id="f-model"><option value="">all</option></select></label>
<label>protocol <select id="f-protocol"><option value="">all</option></select></label>
<label>status <select id="f-status"><option value="">all</option></select></label>
<label>instance <input type="text" id="f-instance" size="14" aria-label="instance"></label>
<span id="count"></span>
</div>
<div class="note" id="note">{note}</div>
<main><div id="list"><table><thead><tr id="head"></tr></thead><tbody id="rows"></tbody></table></div>
<div id="detail"><p class="empty">Pick an episode on the left: its turns, prompts, replies, hints,
rejected drafts, diffs and verdicts show here.</p></div></main>
""".strip()


def _json(value: Any) -> str:
    """JSON that a ``<script type="application/json">`` block holds safely (no ``<`` at all)."""
    return msgspec.json.encode(value).decode().replace("<", "\\u003c")


def _row(ep: EpisodeTranscript, n: int) -> dict[str, Any]:
    error = (ep.error or "").strip()
    return {"n": n, "id": ep.episode_id, "instance": ep.instance_id, "model": ep.model,
            "protocol": ep.protocol, "run": ep.run, "status": ep.status, "stop": ep.stop_reason,
            "turns": ep.turns_count, "initial": ep.initial_pass_rate, "final": ep.final_pass_rate,
            "error": error.splitlines()[-1] if error else None, "setting": ep.setting}


def render_viewer(transcripts: Transcripts, title: str = "PAIR-BENCH transcripts") -> str:
    """The viewer page of ``transcripts`` (build them with :data:`VIEWER_LIMITS`)."""
    eps = transcripts.episodes
    turns = sum(len(e.turns) for e in eps)
    settings = list(dict.fromkeys(e.setting for e in eps if e.setting))  # a sweep's, in its order
    meta = {"title": title,
            "summary": f"{len(eps)} episodes, {turns} turns"
                       + (f", {len(settings)} settings" if settings else ""),
            "settings": settings,
            "withheld": "withheld: this turn showed hidden test data (report --with-tests shows it)"}
    note = (" ".join(transcripts.notes) + " " if transcripts.notes else "") + (
        "Hidden tests' inputs and expected outputs are shown (--with-tests): do not share this page."
        if transcripts.with_tests else
        "No hidden test's input or expected output is on this page: the feedback model's prompts "
        "and the turns of protocols that show hidden tests are withheld (report --with-tests "
        "shows them).")
    blocks = [f'<script type="application/json" id="tx-index">{_json([_row(e, n) for n, e in enumerate(eps, 1)])}</script>',
              f'<script type="application/json" id="tx-messages">{_json(transcripts.messages)}</script>',
              f'<script type="application/json" id="tx-meta">{_json(meta)}</script>']
    for n, ep in enumerate(eps, 1):
        if ep.shown:
            detail = {"error": ep.error, "turns": ep.turns, "cuts": ep.cuts}
            blocks.append(f'<script type="application/json" id="ep-{n}">{_json(detail)}</script>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
            + _BODY.replace("{note}", html.escape(note)) + "\n" + "\n".join(blocks)
            + f"\n<script>{_JS}</script>\n</body></html>\n")
