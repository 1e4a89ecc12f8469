// The episode browser of a LoreKit report. Plain JavaScript, no library, no network.
// Everything shown comes from the JSON in #report-data and is set as text (textContent),
// never parsed as HTML: prompts and answers are model output.
// What an agent recorded (its notes) is drawn by the agent's own view: each view's script
// (inlined after this one) calls LoreKitReport.registerView(name, (notes, ui) => [nodes]),
// and an episode lists the views that claim its notes (ep.views, decided in Python).
// The page's script ends with LoreKitReport.start(), once every view is registered.
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
  function table(head, rows, attrs) {
    return el("table", attrs || {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c instanceof Node ? c : String(c ?? "")))))));
  }
  // what a view's renderer gets to build with
  const UI = Object.freeze({ el, svg, pre, num, mark, isObj, table });
  const VIEWS = new Map(); // view name -> (notes, ui) => [nodes]

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
    out.push(renderSteps(ep), ...renderNotes(ep), renderCalls(ep));
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

  // -- the agent's own record (episode notes), drawn by the views that claim it ------------------
  function renderNotes(ep) {
    const out = [];
    for (const name of ep.views || []) {
      const render = VIEWS.get(name);
      if (render) out.push(...render(ep.notes || {}, UI));
    }
    return out;
  }

  // -- wiring ---------------------------------------------------------------------------------
  function start() {
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
    restorePlace();
    refreshList();
    const wanted = decodeURIComponent((location.hash.match(/^#ep=(.*)$/) || [])[1] || "");
    const first = EPISODES.findIndex((ep) => ep.run_id + "/" + ep.key === wanted);
    if (first >= 0) select(first);
    else if (shown.length) select(shown[0]);
    document.body.dataset.ready = "1";
    if (DATA.live) watchStore(DATA.live);
  }

  // -- the live viewer (lorekit view): reload when the store changes, keeping the place ----
  const PLACE = "lorekit-viewer-place";
  function watchStore(live) {
    const every = Math.max(1, Number(live.every_s) || 5) * 1000;
    const poll = () => {
      fetch("version", { cache: "no-store" })
        .then((r) => (r.ok ? r.text() : live.version))
        .then((now) => {
          if (now.trim() === live.version) return;
          const filters = [runFilter.value, statusFilter.value, textFilter.value];
          sessionStorage.setItem(PLACE, JSON.stringify({ y: scrollY, filters }));
          location.reload();
        })
        .catch(() => {}); // the viewer stopped: keep what is shown
    };
    setInterval(poll, every);
  }
  function restorePlace() {
    let place = null;
    try { place = JSON.parse(sessionStorage.getItem(PLACE) || "null"); } catch (e) { place = null; }
    sessionStorage.removeItem(PLACE);
    if (!place) return;
    const [run, status, text] = place.filters || [];
    if ([...runFilter.options].some((o) => o.value === run)) runFilter.value = run;
    statusFilter.value = status || "";
    textFilter.value = text || "";
    requestAnimationFrame(() => scrollTo(0, Number(place.y) || 0));
  }

  globalThis.LoreKitReport = Object.freeze({
    ui: UI,
    registerView(name, render) { VIEWS.set(String(name), render); },
    start,
  });
})();
