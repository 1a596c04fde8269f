/*
 * script.js - lesson C9's widgets (训练显存), in the one dialect of widgets.js: mount, bind, latest, call,
 * fill, models, pickAlias, getState / setState, live, whenReady, chart.
 *
 *   c9-step      model (or a pasted config) and the step's settings -> the stacked bar, the verdict, the rows
 *                (c9_step); each listed model, and each choice of every select for the first model, was answered
 *                by the build; other combinations and pasted configs ask Python
 *   c9-seq       model -> activations over sequence length per recomputation mode (c9_seq; every listed model
 *                answered by the build)
 *   c9-measured  a batch and length -> the ledger's column (c9_predicted, every choice answered by the build); the
 *                button runs the numpy trainer's step in this browser's Python and puts the bytes it measured beside
 *                the ledger's (c9_measure, which needs numpy)
 * Every string shown comes from Python; this file only moves it into the markup the build wrote.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const KEYS = ["recipe", "batch", "seq", "recompute", "kernel", "zero", "ranks", "tp", "gpu"];

  function step(root, ns) {
    const spec = { model: ".c9-model" };
    KEYS.forEach((k) => { spec[k] = ".c9-" + k; });
    const b = W.bind(root, ns, spec);
    const pasted = root.querySelector(".c9-config");
    const answer = root.querySelector(".c9-answer");
    const recompute = W.latest(root, "c9-step", () => W.models().then((ms) => {
      const v = b.values();
      const config = v.model === "pasted" ? pasted.value : ms[v.model].config;
      return W.call("c9_step", [config].concat(KEYS.map((k) => v[k])));
    }), (x) => { W.fill(answer, x); b.record(); });
    const wanted = W.pickAlias(b.c.model, W.getState(ns, "model"));
    if (wanted) b.c.model.value = wanted;
    if (b.restore(KEYS) || wanted) recompute({ label: "restore" });
    b.onChange(() => {
      if (b.c.model.value === "pasted" && !pasted.value.trim()) { root.querySelector(".c9-paste").open = true; return; }
      recompute({ label: "input" });
    });
    root.querySelector(".c9-run").addEventListener("click", () => {
      b.c.model.value = "pasted";
      recompute({ label: "pasted" });
    });
    W.live(root, ".c9-model, " + KEYS.map((k) => ".c9-" + k).join(", "));
    W.whenReady(root, ".c9-config, .c9-run");
  }

  function seq(root, ns) {
    const model = root.querySelector(".c9-seq-model");
    const answer = root.querySelector(".c9-seq-answer");
    const dflt = root.dataset.model;
    const recompute = W.latest(root, "c9-seq", () => W.models().then((ms) => W.call("c9_seq", [ms[model.value].config])),
      (x) => {
        W.fill(answer, x);
        W.chart(root, x.chart);
        W.setState(ns, "model", model.value === dflt ? null : model.value);
      });
    const wanted = W.pickAlias(model, W.getState(ns, "model"));
    if (wanted && wanted !== model.value) { model.value = wanted; recompute({ label: "restore" }); }
    model.addEventListener("change", () => recompute({ label: "model" }));
    W.live(root, ".c9-seq-model");
  }

  function measured(root, ns) {
    const b = W.bind(root, ns, { batch: ".c9-m-batch", seq: ".c9-m-seq" });
    const answer = root.querySelector(".c9-m-answer");
    const source = root.querySelector(".c9-m-source");
    const built = source.textContent;
    // a size: the ledger's column at once (the build answered every size); the button runs the real step
    const update = W.latest(root, "c9-measured", (arg) => W.models().then((ms) => {
      const v = b.values(), fn = arg.label;
      return W.call(fn, [ms[root.dataset.model].config, v.batch, v.seq]).then((x) => [fn, x]);
    }), ([fn, x]) => {
      W.fill(answer, x);
      const here = fn === "c9_measure";
      source.textContent = here ? source.dataset.here : x.held === "—" ? source.dataset.waiting : built;
      if (here) root.dataset.ran = "here"; else delete root.dataset.ran;
      b.record();
    });
    if (b.restore()) update({ label: "c9_predicted" });
    b.onChange(() => update({ label: "c9_predicted" }));
    root.querySelector(".c9-m-run").addEventListener("click", () => update({ label: "c9_measure" }));
    W.live(root, ".c9-m-batch, .c9-m-seq");
    W.whenReady(root, ".c9-m-run");
  }

  W.mount({ "c9-step": step, "c9-seq": seq, "c9-measured": measured });
})();
