/*
 * script.js - lesson C11's widgets (MoE ledgers, hybrid cache, batch -> experts, associative recall), declared in
 * the one dialect of widgets.js (declare: the core binds the controls, keeps them in the URL, asks the latest
 * state, answers from the build's table first, fills the answer).
 *
 * Every number comes from Python (this lesson's calc.py). Where a control has few enough positions the build
 * answered each of them ahead of time (the widgets' `states`), so those controls answer before the browser's
 * Python is ready; the other controls start disabled and ask Python. A built-in model is sent as its id (W.model).
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  // -- the two ledgers: any model (the build answered each one's own ledgers); E, k and the split ask Python -------
  function own(w) {   // the chosen model's own E and k
    const o = w.c.model.selectedOptions[0];
    return { E: o.dataset.experts, k: o.dataset.topK };
  }
  function splittable(w) {
    const ok = w.c.model.selectedOptions[0].dataset.split === "yes";
    if (!ok) w.c.split.value = "1";
    w.c.split.dataset.allowed = ok ? "yes" : "no";
  }

  // -- hybrid cache: presets x T (answered by the build); a custom layer count asks Python ---------------------------
  function presets(w) { return Array.from(w.c.preset.options).map((o) => o.value).filter((v) => v !== "custom"); }
  function fromPreset(w) { if (w.c.preset.value !== "custom") w.c.n.value = w.c.preset.value; }   // n: the preset's
  function matchPreset(w) { w.c.preset.value = presets(w).includes(w.c.n.value) ? w.c.n.value : "custom"; }
  function chartFor(w) {   // the layer count the chart's extra series is drawn for, if any
    if (w.chartFor === undefined) w.chartFor = presets(w).includes(w.root.dataset.nFull) ? null : w.root.dataset.nFull;
    return w.chartFor;
  }

  // -- batch -> experts -> bytes: model x B (answered by the build at its precision); the precision asks Python ------
  function showB(w) {
    const out = w.root.querySelector(".c11-b-value");
    out.textContent = Number(w.values().B).toLocaleString("en-US");
    w.c.B.setAttribute("aria-valuetext", out.textContent);
  }
  function powers(root) {   // the slider's stops: B = 2^position
    return Array.from({ length: Number(root.querySelector(".c11-b").max) + 1 }, (_, e) => 2 ** e);
  }
  function drawn(w) {   // the model and precision the chart is drawn for
    if (w.drawn === undefined) w.drawn = w.root.dataset.model + ":" + w.root.dataset.dtype;
    return w.drawn;
  }

  W.declare({
    "c11-moe-ledger": {
      controls: { model: ".c11-model", E: ".c11-experts", k: ".c11-top-k", split: ".c11-split" },
      call: "c11_moe_ledger",
      args: (v, w) => {
        const d = own(w);
        return [W.model(v.model), v.E === d.E ? null : v.E, v.k === d.k ? null : v.k, v.split];
      },
      answer: null,
      show: (x, w) => W.fill(w.root, Object.assign({ name: w.c.model.selectedOptions[0].textContent }, x)),
      whenReady: ".c11-experts, .c11-top-k, .c11-split",
      on: { model: (w) => { const d = own(w); w.c.E.value = d.E; w.c.k.value = d.k; splittable(w); } },
      skip: (w) => ["E", "k"].filter((key) => w.c[key].value === own(w)[key]),
      restored: (w) => {   // the URL's model brings its own E and k, unless the URL gives them too
        const d = own(w);
        if (W.getState(w.ns, "E") === null) w.c.E.value = d.E;
        if (W.getState(w.ns, "k") === null) w.c.k.value = d.k;
        splittable(w);
      },
      setup: splittable,
    },
    "c11-hybrid-memory": {   // n: the layer count, a preset's or the custom field's (which always holds it)
      controls: { preset: ".c11-preset", n: ".c11-n-full", T: ".c11-t" },
      call: ["c11_hybrid_memory", "c11_hybrid_chart"],
      args: (v, w, arg) => {
        const config = W.model(w.root.dataset.model);
        // a whole number as a number (the build's answers are keyed so); anything else, an empty field too, goes as
        // typed, for Python's message in Chinese (Number("") would silently be 0 layers)
        const n = /^\d+$/.test(v.n) ? Number(v.n) : v.n;
        arg.extra = presets(w).includes(v.n) ? null : v.n;
        return [[config, n, Number(v.T)], arg.extra === chartFor(w) || typeof n !== "number" ? null
          : [config, null, null, n]];
      },
      answer: null,
      show: ([x, spec], w, arg) => {
        W.fill(w.root, x);
        if (spec) { w.chartFor = arg.extra; W.chart(w.root, spec); }
      },
      whenReady: ".c11-n-full",
      on: { preset: fromPreset, T: fromPreset, n: matchPreset },
      skip: () => ["preset"],
      restored: matchPreset,
    },
    "c11-batch-experts": {
      controls: (root) => ({ model: ".c11-model", B: [".c11-b", powers(root)], dtype: ".c11-dtype" }),
      call: ["c11_batch_read", "c11_batch_chart"],
      args: (v, w, arg) => {
        const config = W.model(v.model);
        arg.key = v.model + ":" + v.dtype;
        return [[config, v.B, v.dtype], drawn(w) === arg.key ? null : [config, v.dtype]];
      },
      answer: null,
      show: ([x, spec], w, arg) => {
        W.fill(w.root, x);
        if (spec) { w.drawn = arg.key; W.chart(w.root, spec); }
      },
      whenReady: ".c11-dtype",
      on: { B: showB },
      restored: showB,
    },
    // -- associative recall: d_k x gate (answered by the build, numpy at build time); another seed asks Python ------
    "c11-recall": {
      controls: { d_k: ".c11-dk", seed: ".c11-seed", gate: ".c11-gate" },
      call: "c11_recall",
      args: (v) => [v.d_k, v.seed, v.gate],
      show: (x, w) => {
        W.rows(w.root.querySelector(".c11-recall-table tbody"), x.rows);
        W.chart(w.root, x.chart);
      },
      whenReady: ".c11-seed",
    },
  });
})();
