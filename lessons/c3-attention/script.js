/*
 * script.js - lesson C3's widgets (注意力), declared in the dialect of widgets.js (declare, model): the core binds
 * the controls, keeps them in the URL, asks Python (or the build's answers) and fills the answer's fields.
 *
 *   c3-kv     model, context -> each layer type's KV cache, a sequence's cache and attention FLOPs against T
 *             (c3_kv); each model at the built context and each context at the built model were answered by the build
 *   c3-maps   sentence, layer, head -> the trained small model's attention weights as a heatmap (c3_maps); every
 *             layer and head on the built sentence were answered by the build; an empty or too long sentence is
 *             refused here, in the message table's words, before anything is asked
 *   c3-mask   mask on / off -> the stored runs of that arm (c3_mask, both answered by the build); the training panel
 *             (training.js) reruns the chosen arm in the page's training worker (c3_train_start / c3_train_step),
 *             drawn in red over the stored curves
 *   c3-cache  prompt, characters -> the stored model writes them with and without the KV cache, each timed in the
 *             widgets' worker (c3_decode): tokens per second both ways and whether the outputs match
 * Every string shown comes from Python or the message table; this file only says which controls feed which call.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const trainer = window.courseTrainer;

  // a sentence the model reads whole: not empty, at most `max` characters (said before asking Python)
  function checked(text, max) {
    const count = Array.from(text.trim()).length;
    if (!count) throw new Error(W.msg("c3.empty"));
    if (Array.from(text).length > max) throw new Error(W.msg("c3.too_long", { got: Array.from(text).length, max: max }));
    return text;
  }

  W.declare({
    "c3-kv": {
      controls: { model: ".c3-model", context: ".c3-context" },
      call: "c3_kv",
      args: (v) => [W.model(v.model), v.context],
      answer: ".c3-kv-out",
    },
    "c3-maps": {
      controls: { sentence: ".c3-sentence", layer: ".c3-layer", head: ".c3-head" },
      call: "c3_maps",
      args: (v, w) => [checked(v.sentence, Number(w.root.dataset.context)), v.layer, v.head,
        JSON.parse(w.root.dataset.model)],
      answer: ".c3-maps-out",
      show: (x, w) => W.chart(w.root, x.chart),
    },
    "c3-mask": {
      controls: { leak: ".c3-leak" },
      call: "c3_mask",
      args: (v, w) => [v.leak, JSON.parse(w.root.dataset.runs)],
      answer: ".c3-mask-out",
      show: (x, w) => { w.stored = x.chart; w.redraw(); },
      setup: (w) => {
        const fig = w.root.querySelector("figure.chart");
        w.stored = JSON.parse(fig.querySelector("script.chart-spec").textContent);
        let live = null;   // the live run's curves (the panel's), drawn over the stored ones
        w.redraw = () => W.chart(w.root, Object.assign({}, w.stored,
          { series: (live ? [live.loss] : []).concat(w.stored.series) }));
        trainer.panel(w.root, {
          startCall: (t) => ["c3_train_start", [t, w.c.leak.value, 0]],
          stepCall: "c3_train_step",
          locked: [w.c.leak],
          curves: [{ figure: fig, metric: "loss", base: w.stored }],
          draw: (curves) => { live = curves; w.redraw(); },
          notes: { done: W.msg("c3.live.done") },
        });
      },
    },
    "c3-cache": {
      controls: { prompt: ".c3-prompt", n_new: ".c3-new" },
      call: "c3_decode",
      args: (v, w) => [checked(v.prompt, Number(w.root.querySelector(".c3-prompt").dataset.max || 64)), v.n_new,
        JSON.parse(w.root.dataset.model)],
      answer: ".c3-cache-out",
      whenReady: ".c3-run",
      setup: (w) => {
        w.root.querySelector(".c3-run").addEventListener("click", () => w.update({ label: "run" }));
      },
    },
  });
})();
