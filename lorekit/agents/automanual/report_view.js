// AutoManual's view in a LoreKit report: the planner's turns and the builder's rule changes.
// Text only (never parsed as markup): analyses, code and feedback are model output.
(function (ui) {
  "use strict";
  const { el, pre, isObj, table } = ui;

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

  LoreKitReport.registerView("automanual", (notes) => {
    const out = [];
    if (isObj(notes.automanual)) out.push(...planner(notes.automanual));
    if (isObj(notes.build)) out.push(...build(notes.build));
    return out;
  });
})(LoreKitReport.ui);
