/*
 * script.js - lesson C9's widgets (训练显存), declared in the one dialect of widgets.js (declare: the core binds the
 * controls, keeps them in the URL, asks the latest state, answers from the build's table first, fills the answer).
 *
 *   c9-step      model (or a pasted config) and the step's settings -> the stacked bar, the verdict, the rows
 *                (c9_step); each listed model, and each choice of every select for the first model, was answered
 *                by the build; other combinations and pasted configs ask Python. ZeRO is disabled, with its reason,
 *                while there is one data-parallel card
 *   c9-seq       model -> activations over sequence length per recomputation mode (c9_seq; every listed model
 *                answered by the build)
 *   c9-measured  a batch and length -> the ledger's column (c9_predicted, every choice answered by the build); the
 *                button runs the numpy trainer's step in this browser's Python and puts the bytes it measured beside
 *                the ledger's (c9_measure, which needs numpy)
 * A built-in model is sent as its id (W.model); every string shown comes from Python.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const KEYS = ["recipe", "batch", "seq", "recompute", "kernel", "zero", "ranks", "tp", "gpu"];
  const STEP = { model: ".c9-model" };
  KEYS.forEach((k) => { STEP[k] = ".c9-" + k; });

  W.declare({
    "c9-step": {
      controls: STEP,
      call: "c9_step",
      args: (v, w) => {   // a pasted config is sent as its text; "pasted" with an empty box opens the box instead
        const pasted = w.root.querySelector(".c9-config").value;
        if (v.model === "pasted" && !pasted.trim()) { w.root.querySelector(".c9-paste").open = true; return null; }
        return [v.model === "pasted" ? pasted : W.model(v.model)].concat(KEYS.map((k) => v[k]));
      },
      answer: ".c9-answer",
      // ZeRO splits the model states over the data-parallel cards: with one card it has nothing to split, and is
      // disabled until there are more (selective recomputation with the fused kernel stays choosable: full
      // recomputation is not moot there, and the answer's note says why the bytes stay the same)
      disabled: { zero: { when: (v) => v.ranks === "1", reason: "c9.step.zero_one_card" } },
      whenReady: ".c9-config, .c9-run",
      setup: (w) => w.root.querySelector(".c9-run").addEventListener("click", () => {
        w.c.model.value = "pasted";
        w.record();
        w.update({ label: "pasted" });
      }),
    },
    "c9-seq": {
      controls: { model: ".c9-seq-model" },
      call: "c9_seq",
      args: (v) => [W.model(v.model)],
      answer: ".c9-seq-answer",
      show: (x, w) => W.chart(w.root, x.chart),
    },
    // a size: the ledger's column at once (the build answered every size); the button runs the real step
    "c9-measured": {
      controls: { batch: ".c9-m-batch", seq: ".c9-m-seq" },
      call: (v, w, arg) => (arg.label === "c9_measure" ? "c9_measure" : "c9_predicted"),
      args: (v, w) => [W.model(w.root.dataset.model), v.batch, v.seq],
      answer: ".c9-m-answer",
      show: (x, w, arg) => {
        const source = w.root.querySelector(".c9-m-source");
        const here = arg.label === "c9_measure";
        source.textContent = here ? source.dataset.here : x.held === "—" ? source.dataset.waiting : w.built;
        if (here) w.root.dataset.ran = "here"; else delete w.root.dataset.ran;
      },
      whenReady: ".c9-m-run",
      setup: (w) => {
        w.built = w.root.querySelector(".c9-m-source").textContent;
        w.root.querySelector(".c9-m-run").addEventListener("click", () => w.update({ label: "c9_measure" }));
      },
    },
  });
})();
