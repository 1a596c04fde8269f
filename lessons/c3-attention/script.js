/*
 * script.js - lesson C3's widgets (注意力), declared in the dialect of widgets.js (declare, model): the core binds
 * the controls, keeps them in the URL, asks Python (or the build's answers) and fills the answer's fields.
 *
 *   c3-kv   model, context -> each layer type's KV cache, a sequence's cache and attention FLOPs against T
 *           (c3_kv); each model at the built context and each context at the built model were answered by the build
 * Every string shown comes from Python or the message table; this file only says which controls feed which call.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  W.declare({
    "c3-kv": {
      controls: { model: ".c3-model", context: ".c3-context" },
      call: "c3_kv",
      args: (v) => [W.model(v.model), v.context],
      answer: ".c3-kv-out",
    },
  });
})();
