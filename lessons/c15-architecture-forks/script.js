/*
 * script.js - lesson C15's widgets (分歧：2026 年的架构岔路), declared in the one dialect of widgets.js (declare:
 * the core binds the controls, keeps them in the URL, asks the latest state, answers from the build's table first).
 *
 *   c15-fork-map   the order picker: every order answered by the build (states), the rows filled by fill()
 *   c15-context    the context slider: every stop answered by the build
 *   c15-what-if    model x swap: every model with each of its swaps answered by the build at the built T and KV
 *                  heads; another T or KV-head count asks Python. The KV-head field is disabled, with its reason
 *                  beside it, under every swap but MLA -> GQA (the only one that reads it)
 * Every string shown comes from Python (this lesson's calc.py, experiments/ledger/forks.py).
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  function pairs(root) {   // [[name, {"$model": alias}], ...] of the widget's models (their names: data/models.json)
    const aliases = JSON.parse(root.dataset.models);
    return W.models().then((ms) => aliases.map((a) => [ms[a].name, W.model(a)]));
  }

  function mark(w) {   // the swaps the chosen model has stay choosable; the others are greyed out
    const ok = w.c.model.selectedOptions[0].dataset.swaps.split(" ");
    Array.from(w.c.swap.options).forEach((o) => { o.disabled = !ok.includes(o.value); });
    if (!ok.includes(w.c.swap.value)) w.c.swap.value = ok[1] || ok[0];
  }

  W.declare({
    "c15-fork-map": {
      controls: { sort: ".c15-sort" },
      call: "c15_fork_map",
      args: (v, w) => pairs(w.root).then((ps) => [ps, v.sort]),
    },
    "c15-context": {
      controls: (root) => ({ T: [".c15-t", JSON.parse(root.dataset.stops)] }),
      call: "c15_context",
      args: (v, w) => pairs(w.root).then((ps) => [ps, v.T]),
      show: (x, w) => w.c.T.setAttribute("aria-valuetext", W.msg("c15.context.tokens", { T: x.T })),
    },
    "c15-what-if": {
      controls: { model: ".c15-model", swap: ".c15-swap", T: ".c15-wt", kv: ".c15-kvh" },
      call: "c15_what_if",
      args: (v) => [W.model(v.model), v.swap, v.T, v.kv],
      whenReady: ".c15-wt, .c15-kvh",
      // only the MLA -> GQA swap reads the KV-head count: under any other the field is disabled, with the reason
      disabled: { kv: { when: (v) => v.swap !== "mla_to_gqa", reason: "c15.what_if.kv_unused" } },
      on: { model: mark },
      restored: mark,
      setup: mark,
    },
  });
})();
