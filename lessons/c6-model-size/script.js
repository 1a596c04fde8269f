/*
 * script.js - behaviour of lesson C6's widgets (模型该多大), on window.courseWidgets' public API only: the first two
 * declared (declare: the core binds the controls, keeps them in the URL, asks the latest state, answers from the
 * build's table first, fills the answer); the two that run the course trainer in the training worker keep a setup.
 *
 *   c6-isoflop   the budget slider: each stop is answered by the build (states), else by Python (c6_isoflop)
 *   c6-budget    budget, GPU, GPU count, utilisation -> each fit's N and D and the days (c6_budget); the GPU picker's
 *                choices are answered by the build, the free fields by Python
 *   c6-device    times the course trainer's step on the baseline in the training worker (training.js), so the
 *                seconds it takes never hold up another widget's answer (c6_device_speed)
 *                and says how long this device would take to train the baseline to 20 tokens per parameter
 *   c6-own-isoflop the course trainer's own IsoFLOP grid and its fit; reruns one budget in the training worker
 *                (c6_own_start, c6_own_step) and refits as each model finishes (c6_own_refit)
 * Every string shown comes from Python; this file only moves it into the markup the build wrote.
 */
(function () {
  "use strict";

  const W = window.courseWidgets;

  W.declare({
    // the budget slider: each stop is one of the build's budgets (its value and the URL's: the budget itself)
    "c6-isoflop": {
      controls: (root) => ({ budget: [".c6-slider", JSON.parse(root.dataset.budgets)] }),
      call: "c6_isoflop",
      args: (v, w) => [v.budget, JSON.parse(w.root.dataset.placed)],
      answer: ".c6-answer",
      show: (x, w) => {
        w.root.querySelector(".c6-budget-out").textContent = x.budget;
        w.c.budget.setAttribute("aria-valuetext", x.budget + " FLOPs");
        W.chart(w.root, x.chart);
      },
    },
    "c6-budget": {
      controls: { budget: ".c6-b", gpu: ".c6-g", gpus: ".c6-n", mfu: ".c6-u" },
      call: "c6_budget",
      args: (v, w) => [v.budget, w.c.gpu.selectedOptions[0].dataset.peak, v.gpus, v.mfu],
      answer: ".c6-plan",
    },
  });

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

  // The course trainer's own IsoFLOP grid: the build drew the stored runs' fit; 开始重跑 trains one budget's models
  // again in the training worker (training.js, OWN_ROUND steps per request), and each model that finishes replaces
  // its stored point, the fit (c6_own_refit, the build's own function) redrawing the chart and the tables.
  function ownIsoflop(root, ns) {
    const stored = JSON.parse(root.querySelector("script.c6-own-runs").textContent);
    const trainTokens = Number(root.dataset.trainTokens);
    const pick = root.querySelector(".c6-own-budget");
    const answer = root.querySelector(".c6-own-answer");
    const budgets = Array.from(new Set(stored.map((r) => r.budget)));
    let runs = stored.slice();
    const refit = W.latest(root, "c6-own-isoflop", () => {
      const finished = root.dataset.rerunDone || "0";     // the rerun's models this fit includes
      return W.call("c6_own_refit", [runs, trainTokens]).then((x) => {
        W.fill(answer, x);
        W.chart(root, x.chart);
        root.dataset.refitDone = finished;
        root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
      });
    });
    // the rerun: the one live-training panel (training.js; training_panel.html), no loss curve of its own (each
    // finished model's loss moves its point on the fit's chart); the budget chooses it
    const panel = window.courseTrainer.panel(root, {
      startCall: (t) => ["c6_own_start", [t, budgets[Number(pick.value)]]],
      stepCall: "c6_own_step",
      locked: [pick],
      curves: [],
      fields: (s) => ({ run: String(s.run), of: String(s.of) }),
      notes: { paused: W.msg("c6.own.paused"), done: W.msg("c6.own.done"), failed: W.msg("c6.own.failed") },
      began: (r) => { root.dataset.rerunRuns = String(r.runs); },
      step: (s) => {
        if (!s.finished) return;
        const f = s.finished;
        runs = runs.map((r) => (r.budget === f.budget && r.width === f.width ? f : r));
        root.dataset.rerunDone = String(s.run);
        panel.note(W.msg("c6.own.refit", { note: s.note }));
        refit({ label: "rerun" });
      },
      reset: () => {
        runs = stored.slice();
        delete root.dataset.rerunDone;
        refit({ label: "reset" });
      },
    });
    const saved = W.getState(ns, "budget");
    if (saved !== null && Number(saved) >= 0 && Number(saved) < budgets.length) pick.value = saved;
    pick.addEventListener("change", () => {
      W.setState(ns, "budget", pick.value === pick.querySelector("option[selected]").value ? null : pick.value);
      // the choice changes nothing drawn until a rerun starts: the status line says what 开始重跑 will run
      panel.state("idle", W.msg("c6.own.chosen", { budget: pick.selectedOptions[0].textContent }));
    });
    pick.disabled = false;
  }

  W.mount({ "c6-device": device, "c6-own-isoflop": ownIsoflop });
})();
