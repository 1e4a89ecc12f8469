// The graph agents' view in a LoreKit report (SPRING, AgentKit): every graph pass in the notes,
// one block per pass with each node's status, tokens, latency and answer. Text only (never
// parsed as markup): answers are model output.
(function (ui) {
  "use strict";
  const { el, pre, num, isObj, table } = ui;

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

  LoreKitReport.registerView("graph-pass", (notes) => {
    const passes = graphPasses(notes);
    return passes.length ? [el("h3", {}, `Graph passes (${passes.length})`), ...passes.map(passBlock)] : [];
  });
})(LoreKitReport.ui);
