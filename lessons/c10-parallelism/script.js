/*
 * script.js - lesson C10's widgets (并行), declared in the dialect of widgets.js (declare, model): the core binds
 * the controls, keeps them in the URL, asks Python (or the build's answers) and fills the answer's fields.
 *
 *   c10-planner  model, GPU count, cluster, sequence length, global batch, recomputation -> the layouts that fit,
 *                fastest first (c10_plan); every listed model and every choice of each select was answered by the
 *                build, a typed GPU count or batch asks Python
 *   c10-ranks    a layout and a rank count -> one real step of the course's small model over that many simulated
 *                ranks: what each holds, the bytes it sent, and whether the result equals one process's
 *                (c10_ranks, which needs numpy; the built layouts and counts were answered by the build)
 * Every string shown comes from Python; this file only says which controls feed which call.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  W.declare({
    "c10-planner": {
      controls: { model: ".c10-model", gpus: ".c10-gpus", cluster: ".c10-cluster", seq: ".c10-seq",
        batch: ".c10-batch", recompute: ".c10-recompute" },
      call: "c10_plan",
      args: (v) => [W.model(v.model), v.gpus, v.cluster, v.seq, v.batch, v.recompute],
      answer: ".c10-plan-answer",
    },
    "c10-ranks": {
      controls: { layout: ".c10-layout", k: ".c10-k" },
      call: "c10_ranks",
      args: (v) => [v.layout, v.k],
      answer: ".c10-ranks-answer",
    },
  });
})();
