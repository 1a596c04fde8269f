/*
 * widgets-c6.js - behaviour of lesson C6's widgets (模型该多大), on window.courseWidgets' public API only.
 *
 *   c6-isoflop   the budget slider: each stop is answered by the build (states), else by Python (c6_isoflop)
 *   c6-budget    budget, GPU, GPU count, utilisation -> each fit's N and D and the days (c6_budget); the GPU picker's
 *                choices are answered by the build, the free fields by Python
 *   c6-device    times the course trainer's step on the baseline in the training worker (training.js), so the
 *                seconds it takes never hold up another widget's answer (c6_device_speed)
 *                and says how long this device would take to train the baseline to 20 tokens per parameter
 * Every string shown comes from Python; this file only moves it into the markup the build wrote.
 */
(function () {
  "use strict";

  const W = window.courseWidgets;

  function isoflop(root, ns) {
    const slider = root.querySelector(".c6-slider");
    const budgets = JSON.parse(root.dataset.budgets);
    const placed = JSON.parse(root.dataset.placed);
    const answer = root.querySelector(".c6-answer");
    const out = root.querySelector(".c6-budget-out");
    const built = slider.defaultValue;
    const recompute = W.latest(root, "c6-isoflop", () => {
      const budget = budgets[Number(slider.value)];
      return W.call("c6_isoflop", [budget, placed]).then((x) => {
        W.fill(answer, x);
        out.textContent = x.budget;
        slider.setAttribute("aria-valuetext", x.budget + " FLOPs");
        W.setState(ns, "budget", slider.value === built ? null : budget);
        W.chart(root, x.chart);
      });
    });
    const wanted = W.getState(ns, "budget");
    if (wanted !== null) {
      const i = budgets.indexOf(wanted);
      if (i >= 0 && String(i) !== slider.value) { slider.value = String(i); recompute({ label: "budget" }); }
      else if (i < 0) W.setState(ns, "budget", null);
    }
    slider.addEventListener("input", () => recompute({ label: "budget" }));
    W.live(root, ".c6-slider");
  }

  function budget(root, ns) {
    const b = W.bind(root, ns, { budget: ".c6-b", gpu: ".c6-g", gpus: ".c6-n", mfu: ".c6-u" });
    const plan = root.querySelector(".c6-plan");
    const recompute = W.latest(root, "c6-budget", () => {
      const v = b.values();
      const peak = b.c.gpu.selectedOptions[0].dataset.peak;
      return W.call("c6_budget", [v.budget, peak, v.gpus, v.mfu]).then((x) => {
        W.fill(plan, x);
        b.record();
      });
    });
    if (b.restore()) recompute({ label: "restore" });
    b.onChange(() => recompute({ label: "input" }));
    W.live(root, ".c6-b, .c6-g, .c6-n, .c6-u");
  }

  function device(root) {
    const button = root.querySelector(".c6-measure");
    const result = root.querySelector(".c6-device-result");
    const [seq, repeats, batch] = ["seq", "repeats", "batch"].map((k) => Number(root.dataset[k]));
    const measure = W.latest(root, "c6-device", () => window.courseTrainer.call("c6_device_speed",
      [seq, repeats, batch]).then((x) => {
      result.textContent = x.sentence;
      result.hidden = false;
      root.dataset.gflops = String(x.flops / 1e9);
    }));
    button.addEventListener("click", () => measure({ label: "measure" }));
    W.live(root, ".c6-measure");
  }

  W.mount({ "c6-isoflop": isoflop, "c6-budget": budget, "c6-device": device });
})();
