// The episode browser of a LoreKit report. Plain JavaScript, no library, no network.
// Everything shown comes from the JSON in #report-data and is set as text (textContent),
// never parsed as HTML: prompts and answers are model output.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const EPISODES = DATA.episodes || [];
  const TEXTS = DATA.texts || [];
  const SVG_NS = "http://www.w3.org/2000/svg";
  let shown = [];   // indexes into EPISODES that pass the filters, in list order
  let current = -1; // index into EPISODES

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) node.setAttribute(k, String(v));
    }
    for (const kid of kids) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  const pre = (text) => el("pre", {}, text === null || text === undefined ? "" : String(text));
  const num = (v, digits) => (typeof v === "number" ? v.toFixed(digits) : "-");
  const mark = (ok) => (ok === true ? "yes" : ok === false ? "no" : "?");
  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

  // -- the list -------------------------------------------------------------------------------
  const runFilter = document.getElementById("run-filter");
  const statusFilter = document.getElementById("status-filter");
  const textFilter = document.getElementById("text-filter");
  const list = document.getElementById("episode-list");
  const view = document.getElementById("episode-view");

  runFilter.append(el("option", { value: "" }, "all runs"));
  for (const r of DATA.runs || []) runFilter.append(el("option", { value: r.run_id }, r.label));

  function label(ep) {
    const symbol = { success: "✓", failure: "✗", error: "!" }[ep.status] || "?";
    return [el("span", { class: "mark-" + ep.status }, symbol + " "),
      `${ep.run_id} · #${ep.index} ${ep.task_id || ep.key}`];
  }

  function refreshList() {
    const run = runFilter.value, status = statusFilter.value;
    const text = textFilter.value.trim().toLowerCase();
    shown = [];
    EPISODES.forEach((ep, i) => {
      if (run && ep.run_id !== run) return;
      if (status && ep.status !== status) return;
      const hay = `${ep.key} ${ep.task_id || ""} ${ep.group || ""}`.toLowerCase();
      if (text && !hay.includes(text)) return;
      shown.push(i);
    });
    list.replaceChildren(...shown.map((i) => {
      const li = el("li", { "data-episode": i, "data-key": EPISODES[i].key }, ...label(EPISODES[i]));
      if (i === current) li.classList.add("current");
      li.addEventListener("click", () => select(i));
      return li;
    }));
    document.getElementById("episode-count").textContent =
      `${shown.length} of ${EPISODES.length} episodes`;
  }

  function select(i) {
    if (i < 0 || i >= EPISODES.length) return;
    current = i;
    for (const li of list.children) {
      li.classList.toggle("current", Number(li.dataset.episode) === i);
    }
    const ep = EPISODES[i];
    view.replaceChildren(...renderEpisode(ep));
    try {
      history.replaceState(null, "", "#ep=" + encodeURIComponent(ep.run_id + "/" + ep.key));
    } catch (err) { /* some file:// pages refuse; the link is a convenience */ }
  }

  function step(delta) {
    if (!shown.length) return;
    const at = shown.indexOf(current);
    const next = at < 0 ? 0 : Math.min(Math.max(at + delta, 0), shown.length - 1);
    select(shown[next]);
    const li = list.querySelector("li.current");
    if (li) li.scrollIntoView({ block: "nearest" });
  }

  // -- one episode ----------------------------------------------------------------------------
  function renderEpisode(ep) {
    const at = shown.indexOf(current);
    const prev = el("button", { id: "prev-episode", type: "button" }, "← previous");
    const next = el("button", { id: "next-episode", type: "button" }, "next →");
    prev.disabled = at <= 0;
    next.disabled = at < 0 || at >= shown.length - 1;
    prev.addEventListener("click", () => step(-1));
    next.addEventListener("click", () => step(1));
    const head = el("div", { class: "ep-head" }, prev,
      el("h3", { id: "episode-title" }, `${ep.run_id} · #${ep.index} · ${ep.key}`), next,
      el("span", { class: "note" }, at >= 0 ? `${at + 1} of ${shown.length}` : ""));
    const facts = el("div", { class: "facts" },
      ...[["task", ep.task_id], ["group", ep.group], ["seed", ep.seed],
        ["status", ep.status], ["reward", ep.reward], ["steps", ep.steps.length],
        ["model calls", ep.calls.length], ["wall s", num(ep.wall_s, 2)],
        ["stop", ep.stop_reason]]
        .filter(([, v]) => v !== null && v !== undefined)
        .map(([k, v]) => el("span", {}, el("b", {}, k + ": "), String(v))));
    const out = [head, facts];
    if (ep.error) out.push(el("p", { class: "error" }, "error: " + ep.error));
    if (ep.initial_observation) {
      out.push(el("h3", {}, "Initial observation"), pre(ep.initial_observation));
    }
    const notes = ep.notes || {};
    out.push(renderSteps(ep), ...renderNotes(notes), renderCalls(ep));
    if (Object.keys(notes).length) {
      out.push(el("details", { class: "call" }, el("summary", {}, "all notes as JSON"),
        pre(JSON.stringify(notes, null, 2))));
    }
    return out;
  }

  function renderSteps(ep) {
    const box = el("div", { id: "episode-steps" }, el("h3", {}, `Steps (${ep.steps.length})`));
    if (!ep.steps.length) { box.append(el("p", { class: "note" }, "no steps recorded")); return box; }
    const rows = ep.steps.map((s, i) => el("tr", {}, el("td", {}, i), el("td", {}, pre(s.action)),
      el("td", {}, pre(s.observation)), el("td", {}, s.reward), el("td", {}, mark(s.valid))));
    box.append(el("table", { class: "steps" }, el("thead", {}, el("tr", {},
      ...["#", "action", "observation", "reward", "valid"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows)));
    return box;
  }

  function renderCalls(ep) {
    const box = el("div", { id: "episode-calls" }, el("h3", {}, `Model calls (${ep.calls.length})`));
    ep.calls.forEach((c, i) => {
      const bits = [`#${i} ${c.role}`, c.model,
        `${c.estimated ? "~" : ""}${c.prompt_tokens}+${c.completion_tokens} tokens`,
        `${num(c.latency_s, 3)} s`];
      if (c.cached) bits.push("cache hit");
      if (isObj(c.meta) && c.meta.node) bits.push(`node ${c.meta.node}`);
      const summary = el("summary", {}, bits.join(" · "));
      if (c.error) summary.append(el("span", { class: "error" }, " · " + c.error));
      const details = el("details", { class: "call" }, summary);
      // message texts are kept once per page, in DATA.texts (prompts repeat from call to call)
      for (const m of c.messages) details.append(el("div", { class: "msg-role" }, m.role), pre(TEXTS[m.text]));
      details.append(el("div", { class: "msg-role" }, "answer"), pre(c.answer === null ? "(no answer)" : c.answer));
      box.append(details);
    });
    return box;
  }

  // -- the agent's own record (episode notes) --------------------------------------------------
  function renderNotes(notes) {
    const out = [];
    if (isObj(notes.tree)) out.push(el("h3", {}, "Decomposition tree (ADaPT)"), el("ul", { class: "tree", id: "adapt-tree" }, treeNode(notes.tree)));
    if (Array.isArray(notes.trials) && notes.trials.length) out.push(el("h3", {}, "Trials"), trialsTable(notes.trials));
    if (isObj(notes.automanual)) out.push(...planner(notes.automanual));
    if (isObj(notes.build)) out.push(...build(notes.build));
    const passes = graphPasses(notes);
    if (passes.length) out.push(el("h3", {}, `Graph passes (${passes.length})`), ...passes.map(passBlock));
    const events = teamEvents(notes);
    if (events.length) out.push(el("h3", {}, `Team timeline (${events.length} events)`), timeline(events), eventsTable(events));
    return out;
  }

  function treeNode(node) {
    const ok = node.success === true ? "success" : node.success === false ? "failure" : "error";
    const li = el("li", {}, el("b", {}, `d${node.depth} `), String(node.task),
      el("span", { class: "tag mark-" + ok }, node.success === null || node.success === undefined ? "interrupted" : mark(node.success)));
    const ex = node.executor;
    if (isObj(ex)) {
      li.append(el("span", { class: "tag" },
        `executor said ${ex.claimed === true ? "completed" : ex.claimed === false ? "failed" : "nothing"}, ` +
        `env ${mark(ex.verified)}, ${(ex.actions || []).length} actions`));
      if (ex.overclaimed) li.append(el("span", { class: "tag mark-error" }, "over-claimed"));
    }
    const plan = node.plan;
    const kids = [];
    if (isObj(plan) && plan.order) {
      kids.push(el("li", {}, el("i", {}, "plan "), `${plan.order}: ` +
        (plan.steps || []).map((s, i) => `${i + 1}. ${s}`).join("; ")));
    }
    if (isObj(plan)) for (const e of plan.errors || []) kids.push(el("li", { class: "error" }, "rejected plan: " + e));
    for (const child of node.children || []) if (isObj(child)) kids.push(treeNode(child));
    if (kids.length) li.append(el("ul", { class: "tree" }, ...kids));
    return li;
  }

  function table(head, rows, attrs) {
    return el("table", attrs || {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c instanceof Node ? c : String(c ?? "")))))));
  }

  function trialsTable(trials) {
    return table(["trial", "said", "env", "stop", "actions", "reflection"], trials.filter(isObj).map((t) =>
      [t.trial, mark(t.claimed), mark(t.verified), t.stop, (t.actions || []).length, t.reflection || ""]));
  }

  function planner(d) {
    const out = [el("h3", {}, `AutoManual planner: ${(d.turns || []).length} turns, outcome ${d.outcome}`)];
    (d.turns || []).filter(isObj).forEach((t, i) => {
      const box = el("details", { class: "call turn", open: "" },
        el("summary", {}, `turn ${i + 1} · ${t.actions || 0} actions`, t.error ? el("span", { class: "error" }, " · " + t.error) : null));
      if (t.analysis) box.append(el("div", { class: "msg-role" }, "analysis"), pre(t.analysis));
      if ((t.related_rules || []).length) box.append(el("div", { class: "msg-role" }, "rules"), pre(t.related_rules.join(", ")));
      if (t.plan) box.append(el("div", { class: "msg-role" }, "plan"), pre(t.plan));
      if (t.code) box.append(el("div", { class: "msg-role" }, "code"), pre(t.code));
      box.append(el("div", { class: "msg-role" }, "feedback"), pre(t.feedback || ""));
      out.push(box);
    });
    if (d.conclusion) out.push(el("div", { class: "msg-role" }, "conclusion"), pre(d.conclusion));
    return out;
  }

  function build(d) {
    const out = [el("h3", {}, `AutoManual rule changes: v${d.rules_version_before} → v${d.rules_version_after} (${d.rule_count} rules)`)];
    for (const part of ["builder", "consolidator"]) {
      const r = d[part];
      if (!isObj(r)) continue;
      const calls = ((r.dialogue || {}).calls || []).filter(isObj);
      out.push(el("p", {}, el("b", {}, part), part === "builder" ? ` diagnosis ${r.diagnosis}, case ${r.case}` : ` rules ${r.before} → ${r.after}`));
      if (calls.length) {
        out.push(table(["call", "result"], calls.map((c) => [pre(c.source || ""),
          c.error ? el("span", { class: "error" }, c.error) : String(c.result ?? "")])));
      }
      for (const b of (r.dialogue || {}).refused_blocks || []) out.push(el("p", { class: "error" }, "refused block: " + b));
      if (r.failed) out.push(el("p", { class: "error" }, String(r.failed)));
    }
    return out;
  }

  // A graph pass is any list of node traces ({key, status, ...}); SPRING keeps one per step.
  function graphPasses(notes) {
    const found = [];
    const visit = (v, name, depth) => {
      if (depth > 3 || v === null || typeof v !== "object") return;
      if (isObj(v) && Array.isArray(v.nodes) && v.nodes.length && v.nodes.every((n) => isObj(n) && "key" in n && "status" in n)) {
        found.push({ name: name, pass: v });
        return;
      }
      if (Array.isArray(v)) v.forEach((x, i) => visit(x, `${name}[${i}]`, depth + 1));
      else for (const [k, x] of Object.entries(v)) if (k !== "tree") visit(x, name ? `${name}.${k}` : k, depth + 1);
    };
    visit(notes, "", 0);
    return found;
  }

  function passBlock(p) {
    const v = p.pass;
    const title = v.step !== undefined ? `step ${v.step} → ${v.action ?? ""}` : `${p.name}${v.graph ? " (" + v.graph + ")" : ""}`;
    const rows = v.nodes.map((n) => [n.key, n.status, n.tokens ?? ((n.prompt_tokens || 0) + (n.completion_tokens || 0)),
      num(n.latency_s, 3), pre(n.answer ?? n.output ?? ""), n.error || (n.rejected || []).map((r) => r.why).join("; ")]);
    return el("details", { class: "call pass" }, el("summary", {}, title),
      table(["node", "status", "tokens", "latency s", "answer", "problems"], rows));
  }

  // Team events: {time, tick, agent, kind, ...}, anywhere in the notes (two levels deep).
  function teamEvents(notes) {
    const isEvent = (e) => isObj(e) && "agent" in e && "kind" in e && ("time" in e || "tick" in e);
    const lists = [];
    const visit = (v, depth) => {
      if (depth > 2 || v === null || typeof v !== "object") return;
      if (Array.isArray(v)) { if (v.length && v.every(isEvent)) lists.push(v); return; }
      for (const x of Object.values(v)) visit(x, depth + 1);
    };
    visit(notes, 0);
    const events = lists.flat();
    const when = (e) => (typeof e.time === "number" ? e.time : typeof e.tick === "number" ? e.tick : 0);
    return events.slice().sort((a, b) => when(a) - when(b));
  }

  function timeline(events) {
    const when = (e) => (typeof e.time === "number" ? e.time : typeof e.tick === "number" ? e.tick : 0);
    const agents = [...new Set(events.map((e) => String(e.agent)))];
    const kinds = [...new Set(events.map((e) => String(e.kind)))];
    const colours = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
    const W = 760, left = 130, lane = 26, top = 24, H = top + lane * agents.length + 24;
    const t0 = Math.min(...events.map(when)), t1 = Math.max(...events.map(when));
    const x = (t) => left + (W - left - 16) * (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5);
    const root = svg("svg", { class: "timeline", id: "team-timeline", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
    kinds.forEach((k, i) => {
      root.append(svg("rect", { x: left + i * 110, y: 4, width: 10, height: 10, fill: colours[i % colours.length] }));
      root.append(svg("text", { x: left + 14 + i * 110, y: 13 }, k.slice(0, 16)));
    });
    agents.forEach((a, i) => {
      const y = top + lane * i + lane / 2;
      root.append(svg("text", { x: 4, y: y + 4 }, a.slice(0, 20)));
      root.append(svg("line", { x1: left, x2: W - 16, y1: y, y2: y, stroke: "#dde" }));
    });
    for (const e of events) {
      const c = svg("circle", { cx: x(when(e)), cy: top + lane * agents.indexOf(String(e.agent)) + lane / 2, r: 5,
        fill: colours[kinds.indexOf(String(e.kind)) % colours.length] });
      c.append(svg("title", {}, `${when(e)} ${e.agent} ${e.kind}`));
      root.append(c);
    }
    root.append(svg("text", { x: left, y: H - 6 }, `t = ${t0}`));
    root.append(svg("text", { x: W - 16, y: H - 6, "text-anchor": "end" }, `t = ${t1}`));
    return root;
  }

  function eventsTable(events) {
    const known = new Set(["time", "tick", "agent", "kind"]);
    return table(["time", "tick", "agent", "kind", "details"], events.map((e) => [e.time ?? "", e.tick ?? "", e.agent, e.kind,
      Object.entries(e).filter(([k]) => !known.has(k)).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join("  ")]),
    { class: "team-events" });
  }

  // -- wiring ---------------------------------------------------------------------------------
  for (const a of document.querySelectorAll("nav a")) {
    if (!document.getElementById(a.getAttribute("href").slice(1))) a.classList.add("absent");
  }
  for (const f of [runFilter, statusFilter, textFilter]) {
    f.addEventListener("input", refreshList);
    f.addEventListener("change", refreshList);
  }
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
    if (e.key === "j") step(1);
    if (e.key === "k") step(-1);
  });
  refreshList();
  const wanted = decodeURIComponent((location.hash.match(/^#ep=(.*)$/) || [])[1] || "");
  const start = EPISODES.findIndex((ep) => ep.run_id + "/" + ep.key === wanted);
  if (start >= 0) select(start);
  else if (shown.length) select(shown[0]);
  document.body.dataset.ready = "1";
})();
