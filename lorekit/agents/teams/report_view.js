// A team's view in a LoreKit report: its events ({time, tick, agent, kind, ...}, anywhere in the
// notes, two levels deep) on one lane per agent, then as a table. Text only (never parsed as
// markup): messages are model output.
(function (ui) {
  "use strict";
  const { el, svg, isObj, table } = ui;
  const when = (e) => (typeof e.time === "number" ? e.time : typeof e.tick === "number" ? e.tick : 0);

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
    return events.slice().sort((a, b) => when(a) - when(b));
  }

  function timeline(events) {
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

  LoreKitReport.registerView("teams", (notes) => {
    const events = teamEvents(notes);
    return events.length ? [el("h3", {}, `Team timeline (${events.length} events)`), timeline(events), eventsTable(events)] : [];
  });
})(LoreKitReport.ui);
