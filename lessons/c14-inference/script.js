/*
 * script.js - lesson C14's widgets (推理), declared in the dialect of widgets.js (declare, model): the core binds
 * the controls, keeps them in the URL, asks Python (or the build's answers) and fills the answer's fields.
 *
 *   c14-serve      model (built-in, or a pasted config.json), device, weight scheme, KV cache precision, context,
 *                  batch and the paging example's used length -> the decode roofline and its tables (c14_serve);
 *                  each listed model and each choice of each select was answered by the build, a typed batch or
 *                  length and a pasted config ask Python, which names what is wrong in Chinese
 *   c14-batching   model, device, batch limit, seed -> the course's trace served with static batching, continuous
 *                  batching and paged continuous batching (c14_batching); each device at the built model, limit
 *                  and seed was answered by the build, other models and typed fields ask Python
 *   c14-speculate  prompt, gamma, seed -> a speculative-sampling run of the course's two small models
 *                  (c14_speculate, numpy); every gamma at the built prompt and seed was answered by the build
 * Every string shown comes from Python; this file only says which controls feed which call.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const PASTED = "__pasted";

  W.declare({
    "c14-serve": {
      controls: { model: ".c14-model", device: ".c14-device", scheme: ".c14-scheme", kv: ".c14-kv",
        context: ".c14-context", batch: ".c14-batch", used: ".c14-used" },
      call: "c14_serve",
      args: (v, w) => {
        let config = W.model(v.model);
        if (v.model === PASTED) {
          config = w.root.querySelector(".c14-config").value;
          if (!config.trim()) throw new Error(W.msg("c14.paste_first"));
        }
        return [config, v.device, v.scheme, v.kv, v.context, v.batch, v.used];
      },
      answer: ".c14-out",
      whenReady: ".c14-config, .c14-use-config",
      skip: (w) => (w.values().model === PASTED ? ["model"] : []),   // a pasted text is not a link's to give
      setup: (w) => {
        w.root.querySelector(".c14-use-config").addEventListener("click", () => {
          w.c.model.value = PASTED;
          w.record();
          w.update({ label: "config" });
        });
      },
    },
    "c14-batching": {
      controls: { model: ".c14-cb-model", device: ".c14-cb-device", batch: ".c14-cb-batch", seed: ".c14-cb-seed" },
      call: "c14_batching",
      args: (v) => [W.model(v.model), v.device, v.batch, v.seed],
      answer: ".c14-cb-out",
    },
    "c14-speculate": {
      controls: { prompt: ".c14-prompt", gamma: ".c14-gamma", seed: ".c14-seed" },
      call: "c14_speculate",
      args: (v, w) => [v.prompt, v.gamma, v.seed, JSON.parse(w.root.dataset.speaker),
        JSON.parse(w.root.dataset.spec)],
      answer: ".c14-spec-out",
    },
  });
})();
