// The first-choice agent in a LoreKit report: the actions it tried, as a numbered list.
// Text only (no innerHTML): actions can be model or env text.
(function (ui) {
  "use strict";
  LoreKitReport.registerView("first-choice", (notes) => {
    const tried = (notes.first_choice && notes.first_choice.tried) || [];
    return [ui.el("h3", {}, "Actions tried (first-choice)"),
      ui.el("ol", { id: "first-choice-tried" }, ...tried.map((a) => ui.el("li", {}, String(a))))];
  });
})(LoreKitReport.ui);
