/*
 * script.js - lesson C11's widgets (MoE ledgers, hybrid cache, batch -> experts, associative recall), in the
 * one dialect of widgets.js: mount, call, latest, fill, getState / setState, pickAlias, models, whenReady, chart.
 *
 * Every number comes from Python (this lesson's calc.py). Where a control has few enough
 * positions the build answered each of them ahead of time (the widgets' `states`), so call() answers those
 * controls before the browser's Python is ready; the other controls start disabled and ask Python. Answers are
 * written into the template's data-f fields and <template class="row"> rows by fill().
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  // -- the two ledgers: any model (the build answered each one's own ledgers); E, k and the split ask Python -------
  function ledger(root, ns) {
    const model = root.querySelector(".c11-model");
    const E = root.querySelector(".c11-experts");
    const k = root.querySelector(".c11-top-k");
    const split = root.querySelector(".c11-split");
    const dflt = root.dataset.model;

    function own() {   // the chosen model's own E and k
      const o = model.selectedOptions[0];
      return { E: o.dataset.experts, k: o.dataset.topK };
    }
    const recompute = W.latest(root, "c11-moe-ledger", () => W.models().then((ms) => {
      const d = own();
      return W.call("c11_moe_ledger", [ms[model.value].config, E.value === d.E ? null : E.value,
        k.value === d.k ? null : k.value, split.value]).then((x) => Object.assign({ name: ms[model.value].name }, x));
    }), (x) => W.fill(root, x));
    function update() {
      const d = own();
      W.setState(ns, "model", model.value === dflt ? null : model.value);
      W.setState(ns, "E", E.value === d.E ? null : E.value);
      W.setState(ns, "k", k.value === d.k ? null : k.value);
      W.setState(ns, "split", split.value === "1" ? null : split.value);
      recompute();
    }
    function splittable() {
      const ok = model.selectedOptions[0].dataset.split === "yes";
      if (!ok) split.value = "1";
      split.dataset.allowed = ok ? "yes" : "no";
    }
    model.addEventListener("change", () => {
      const d = own();
      E.value = d.E;
      k.value = d.k;
      splittable();
      update();
    });
    [E, k, split].forEach((c) => c.addEventListener("change", update));
    W.whenReady(root, ".c11-experts, .c11-top-k, .c11-split");

    // the URL's state: the model at once, E / k / split once Python answers
    const wanted = W.pickAlias(model, W.getState(ns, "model"));
    if (wanted) model.value = wanted;
    const d = own();
    E.value = W.getState(ns, "E") || d.E;
    k.value = W.getState(ns, "k") || d.k;
    split.value = W.getState(ns, "split") || "1";
    splittable();
    if (wanted || E.value !== d.E || k.value !== d.k || split.value !== "1") update();
  }

  // -- hybrid cache: presets x T (answered by the build); a custom layer count asks Python ---------------------------
  function hybrid(root, ns) {
    const preset = root.querySelector(".c11-preset");
    const custom = root.querySelector(".c11-n-full");
    const T = root.querySelector(".c11-t");
    const presets = Array.from(preset.options).map((o) => o.value).filter((v) => v !== "custom");
    const first = { n: root.dataset.nFull, T: root.dataset.t };
    let chartFor = presets.includes(first.n) ? null : first.n;   // the chart's extra series, if any

    const recompute = W.latest(root, "c11-hybrid-memory", (n) => W.models().then((ms) => {
      const config = ms[root.dataset.model].config;
      const extra = presets.includes(n) ? null : n;
      return Promise.all([W.call("c11_hybrid_memory", [config, Number(n), Number(T.value)]), extra,
        extra === chartFor ? null : W.call("c11_hybrid_chart", [config, null, null, Number(n)])]);
    }), ([x, extra, spec]) => {
      W.fill(root, x);
      if (spec) { chartFor = extra; W.chart(root, spec); }
    });
    function current() {
      return preset.value === "custom" ? custom.value : preset.value;
    }
    function update() {
      const n = current();
      W.setState(ns, "n", n === first.n ? null : n);
      W.setState(ns, "T", T.value === first.T ? null : T.value);
      recompute(n);
    }
    preset.addEventListener("change", () => {
      if (preset.value !== "custom") custom.value = preset.value;
      update();
    });
    custom.addEventListener("change", () => {
      preset.value = presets.includes(custom.value) ? custom.value : "custom";
      update();
    });
    T.addEventListener("change", update);
    W.whenReady(root, ".c11-n-full");

    const n = W.getState(ns, "n");
    const t = W.getState(ns, "T");
    if (t && Array.from(T.options).some((o) => o.value === t)) T.value = t;
    if (n !== null) {
      custom.value = n;
      preset.value = presets.includes(n) ? n : "custom";
    }
    if (n !== null || t) update();
  }

  // -- batch -> experts -> bytes: model x B (answered by the build at its precision); the precision asks Python ------
  function batch(root, ns) {
    const model = root.querySelector(".c11-model");
    const slider = root.querySelector(".c11-b");
    const out = root.querySelector(".c11-b-value");
    const dtype = root.querySelector(".c11-dtype");
    const first = { model: root.dataset.model, exp: slider.value, dtype: root.dataset.dtype };
    let drawn = model.value + ":" + dtype.value;

    function B() { return String(2 ** Number(slider.value)); }
    function showB() {
      out.textContent = Number(B()).toLocaleString("en-US");
      slider.setAttribute("aria-valuetext", out.textContent);
    }
    const recompute = W.latest(root, "c11-batch-experts", () => W.models().then((ms) => {
      const config = ms[model.value].config;
      const key = model.value + ":" + dtype.value;
      return Promise.all([W.call("c11_batch_read", [config, Number(B()), dtype.value]), key,
        drawn === key ? null : W.call("c11_batch_chart", [config, dtype.value])]);
    }), ([x, key, spec]) => {
      W.fill(root, x);
      if (spec) { drawn = key; W.chart(root, spec); }
    });
    function update() {
      showB();
      W.setState(ns, "model", model.value === first.model ? null : model.value);
      W.setState(ns, "B", slider.value === first.exp ? null : B());
      W.setState(ns, "dtype", dtype.value === first.dtype ? null : dtype.value);
      recompute();
    }
    [model, dtype].forEach((c) => c.addEventListener("change", update));
    slider.addEventListener("input", update);
    W.whenReady(root, ".c11-dtype");

    const wantedModel = W.pickAlias(model, W.getState(ns, "model"));
    const b = W.getState(ns, "B");
    const t = W.getState(ns, "dtype");
    if (wantedModel) model.value = wantedModel;
    if (b && Math.log2(Number(b)) % 1 === 0 && Number(b) >= 1 && Math.log2(Number(b)) <= Number(slider.max)) {
      slider.value = String(Math.log2(Number(b)));
    }
    if (t && Array.from(dtype.options).some((o) => o.value === t)) dtype.value = t;
    if (wantedModel || b || t) update();
  }

  // -- associative recall: d_k x gate (answered by the build, numpy at build time); another seed asks Python ----------
  function recallExperiment(root, ns) {
    W.live(root, ".c11-dk, .c11-gate");
    W.whenReady(root, ".c11-seed");
    W.wire(root, ns, { d_k: ".c11-dk", seed: ".c11-seed", gate: ".c11-gate" },
      (v) => W.call("c11_recall", [v.d_k, v.seed, v.gate]).then((x) => {
        W.fill(root, x);
        W.rows(root.querySelector(".c11-recall-table tbody"), x.rows);
        W.chart(root, x.chart);
      }));
  }

  W.mount({ "c11-moe-ledger": ledger, "c11-hybrid-memory": hybrid, "c11-batch-experts": batch,
    "c11-recall": recallExperiment });
})();
