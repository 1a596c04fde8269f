/*
 * widgets-c11.js - lesson C11's widgets (MoE ledgers, hybrid cache, batch -> experts), in the shared dialect of
 * widgets.js: only window.courseWidgets' API (mount, call, latest, setState, getState, models, el, whenReady,
 * showError, chart).
 *
 * Every number comes from Python (experiments/lessons/c11_moe_linear/calc.py). Where a control has few enough
 * positions the build wrote every state into the page (a JSON table), so those controls answer before the
 * browser's Python is ready; the other controls start disabled and ask Python. Text is written with textContent.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  function table(root, cls) {
    return JSON.parse(root.querySelector("script." + cls).textContent);
  }

  // Python's answer; a failure's message without its exception class name (the learner reads only the Chinese)
  function ask(fn, args) {
    return W.call(fn, args).catch((e) => {
      throw new Error(String(e && e.message ? e.message : e).replace(/^[A-Za-z_.]*(Error|Exception): /, ""));
    });
  }

  function fill(root, x) {   // every [data-k] element shows x[key]
    root.querySelectorAll("[data-k]").forEach((node) => {
      if (x[node.dataset.k] !== undefined) node.textContent = x[node.dataset.k];
    });
  }

  function done(root) {   // a state drawn from the build's table: the same event a Python recompute ends with
    root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
  }

  function pick(select, wanted) {   // the option named by the URL (alias or file id), or null
    if (!wanted) return null;
    for (const o of select.options) if (o.value === wanted || o.dataset.id === wanted) return o.value;
    return null;
  }

  // -- the two ledgers: model from the table; E, k and the split ask Python --------------------------------------
  function ledger(root, ns) {
    const known = table(root, "c11-ledger-table");
    const model = root.querySelector(".c11-model");
    const E = root.querySelector(".c11-experts");
    const k = root.querySelector(".c11-top-k");
    const split = root.querySelector(".c11-split");
    const body = root.querySelector(".c11-rows tbody");
    const dflt = root.dataset.model;

    function show(x) {
      fill(root, x);
      root.querySelector('[data-k="name"]').textContent = model.selectedOptions[0].textContent;
      body.replaceChildren(...x.rows.map((r) => W.el("tr", { class: "row-" + r.kind }, [
        W.el("td", { text: r.label }), W.el("td", { class: "r", text: r.total }),
        W.el("td", { class: "r", text: r.active })])));
    }
    function defaults() {
      const o = model.selectedOptions[0];
      return { E: o.dataset.experts, k: o.dataset.topK };
    }
    function record() {
      const d = defaults();
      W.setState(ns, "model", model.value === dflt ? null : model.value);
      W.setState(ns, "E", E.value === d.E ? null : E.value);
      W.setState(ns, "k", k.value === d.k ? null : k.value);
      W.setState(ns, "split", split.value === "1" ? null : split.value);
    }
    const recompute = W.latest(root, "c11-moe-ledger", () => W.models().then((ms) => {
      const d = defaults();
      return ask("c11_moe_ledger", [ms[model.value].config, E.value === d.E ? null : E.value,
        k.value === d.k ? null : k.value, split.value]).then(show);
    }));
    function update() {
      const d = defaults();
      record();
      if (E.value === d.E && k.value === d.k && split.value === "1" && known[model.value]) {
        show(known[model.value]);
        W.showError(root, "");
        done(root);
      } else {
        recompute();
      }
    }
    function splittable() {
      const ok = model.selectedOptions[0].dataset.split === "yes";
      if (!ok) split.value = "1";
      split.dataset.allowed = ok ? "yes" : "no";
    }
    model.addEventListener("change", () => {
      const d = defaults();
      E.value = d.E;
      k.value = d.k;
      splittable();
      update();
    });
    [E, k, split].forEach((c) => c.addEventListener("change", update));
    W.whenReady(root, ".c11-experts, .c11-top-k, .c11-split");

    // the URL's state: the model at once, E / k / split once Python answers
    const wanted = pick(model, W.getState(ns, "model"));
    if (wanted) model.value = wanted;
    const d = defaults();
    E.value = W.getState(ns, "E") || d.E;
    k.value = W.getState(ns, "k") || d.k;
    split.value = W.getState(ns, "split") || "1";
    splittable();
    if (wanted || E.value !== d.E || k.value !== d.k || split.value !== "1") update();
  }

  // -- hybrid cache: presets x T from the table; a custom layer count asks Python ---------------------------------
  function hybrid(root, ns) {
    const known = table(root, "c11-hybrid-table");
    const preset = root.querySelector(".c11-preset");
    const custom = root.querySelector(".c11-n-full");
    const T = root.querySelector(".c11-t");
    const presets = Array.from(preset.options).map((o) => o.value).filter((v) => v !== "custom");
    const first = { n: root.dataset.nFull, T: root.dataset.t };
    let chartFor = presets.includes(first.n) ? null : first.n;   // the chart's extra series, if any

    const recompute = W.latest(root, "c11-hybrid-memory", (n) => W.models().then((ms) => {
      const config = ms[root.dataset.model].config;
      return ask("c11_hybrid_memory", [config, Number(n), Number(T.value)]).then((x) => {
        fill(root, x);
        if (chartFor !== n) {
          chartFor = presets.includes(n) ? null : n;
          return ask("c11_hybrid_chart", [config, null, null, Number(n)]).then((spec) => W.chart(root, spec));
        }
        return null;
      });
    }));
    function current() {
      return preset.value === "custom" ? custom.value : preset.value;
    }
    function update() {
      const n = current();
      W.setState(ns, "n", n === first.n ? null : n);
      W.setState(ns, "T", T.value === first.T ? null : T.value);
      const x = known[n + ":" + T.value];
      if (x && (chartFor === null || chartFor === n)) {
        fill(root, x);
        W.showError(root, "");
        done(root);
      } else {
        recompute(n);
      }
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

  // -- batch -> experts -> bytes: model x B from the table (at the build's precision); the precision asks Python ---
  function batch(root, ns) {
    const known = table(root, "c11-batch-table");
    const charts = table(root, "c11-batch-charts");
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
      return ask("c11_batch_read", [config, Number(B()), dtype.value]).then((x) => {
        fill(root, x);
        if (drawn !== key) {
          drawn = key;
          return ask("c11_batch_chart", [config, dtype.value]).then((spec) => W.chart(root, spec));
        }
        return null;
      });
    }));
    function update() {
      showB();
      W.setState(ns, "model", model.value === first.model ? null : model.value);
      W.setState(ns, "B", slider.value === first.exp ? null : B());
      W.setState(ns, "dtype", dtype.value === first.dtype ? null : dtype.value);
      const x = dtype.value === known.dtype && known.models[model.value] && known.models[model.value][B()];
      if (x) {
        fill(root, x);
        const key = model.value + ":" + dtype.value;
        if (drawn !== key) { drawn = key; W.chart(root, charts[model.value]); }
        W.showError(root, "");
        done(root);
      } else {
        recompute();
      }
    }
    [model, dtype].forEach((c) => c.addEventListener("change", update));
    slider.addEventListener("input", update);
    W.whenReady(root, ".c11-dtype");

    const wantedModel = pick(model, W.getState(ns, "model"));
    const b = W.getState(ns, "B");
    const t = W.getState(ns, "dtype");
    if (wantedModel) model.value = wantedModel;
    if (b && Math.log2(Number(b)) % 1 === 0 && Number(b) >= 1 && Math.log2(Number(b)) <= Number(slider.max)) {
      slider.value = String(Math.log2(Number(b)));
    }
    if (t && Array.from(dtype.options).some((o) => o.value === t)) dtype.value = t;
    if (wantedModel || b || t) update();
  }

  W.mount({ "c11-moe-ledger": ledger, "c11-hybrid-memory": hybrid, "c11-batch-experts": batch });
})();
