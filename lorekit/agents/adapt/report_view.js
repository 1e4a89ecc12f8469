// ADaPT's view in a LoreKit report: the decomposition tree (ADaPT, Plan-and-Execute) and the
// trials (Try-Again, Reflexion). Text only (never parsed as markup): tasks and lessons are
// model output.
(function (ui) {
  "use strict";
  const { el, mark, isObj, table } = ui;

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

  function trialsTable(trials) {
    return table(["trial", "said", "env", "stop", "actions", "reflection"], trials.filter(isObj).map((t) =>
      [t.trial, mark(t.claimed), mark(t.verified), t.stop, (t.actions || []).length, t.reflection || ""]));
  }

  LoreKitReport.registerView("adapt", (notes) => {
    const out = [];
    if (isObj(notes.tree)) out.push(el("h3", {}, "Decomposition tree (ADaPT)"), el("ul", { class: "tree", id: "adapt-tree" }, treeNode(notes.tree)));
    if (Array.isArray(notes.trials) && notes.trials.length) out.push(el("h3", {}, "Trials"), trialsTable(notes.trials));
    return out;
  });
})(LoreKitReport.ui);
