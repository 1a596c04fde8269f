/*
 * script.js - lesson C5's widgets: the live training run and the baseline's first step (in a training worker of
 * their own), the optimiser race and the schedule explorer (c5_race, c5_schedule: every stop of the race's slider
 * and each picker's choices answered by the build, the other pairs by the widgets' Python). Only
 * window.courseWidgets' public API (mount, bind, call, fill, chart, latest, live, getState, setState, showError,
 * el).
 *
 * The training worker and the text are training.js's (window.courseTrainer): one request per training step
 * ({id, fn: "experiments.api:c5_train_step", args}), the next sent only when the previous one has answered.
 * Numbers a learner reads are formatted by Python (this lesson's widgets.py).
 *
 * For tests and the bench: window.courseTraining (training.js's stats: steps answered, time spent waiting for
 * them, requests not answered yet), and each live widget root carries data-state = idle | loading | running | paused | done | error.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  const trainer = window.courseTrainer;   // training.js: the page's training worker
  const text = trainer.text;

  function builtDefault(select) {   // the option the build selected: the URL leaves it out
    return (Array.from(select.options).find((o) => o.defaultSelected) || select.options[0]).value;
  }
  function keep(ns, key, select) { W.setState(ns, key, select.value === builtDefault(select) ? null : select.value); }

  // -- the live run: the one live-training panel (training.js's panel; its template, training_panel.html) ----------
  // The optimiser and the learning rate choose the run (a change resets a run that has begun); the model speaks
  // (lesson C2's sampling) after step 1 and every data-every steps.
  function live(root, ns) {
    const [opt, lr] = [root.querySelector(".c5-live-opt"), root.querySelector(".c5-live-lr")];
    const speak = root.querySelector('output[name="speak"]');
    const every = Number(root.querySelector(".c5-live-speak").dataset.every);

    const saved = { optimizer: W.getState(ns, "optimizer"), multiplier: W.getState(ns, "multiplier") };
    if (saved.optimizer && opt.querySelector('option[value="' + saved.optimizer + '"]')) opt.value = saved.optimizer;
    if (saved.multiplier && lr.querySelector('option[value="' + saved.multiplier + '"]')) lr.value = saved.multiplier;

    const panel = trainer.panel(root, {
      startCall: (t) => ["c5_train_start", [t, opt.value, Number(lr.value), 0]],
      stepCall: "c5_train_step",
      locked: [opt, lr],
      fields: (s) => ({ loss: s.loss_text, lr_now: s.lr, held_out: s.held_out_text }),
      name: (r) => W.msg("c5.live.series", { optimizer: r.optimizer, lr: r.lr }),
      notes: { diverged: W.msg("c5.live.diverged") },
      began: () => { speak.textContent = "—"; },
      step: (s) => {
        if (s.step === 1 || s.step % every === 0) {   // the model speaks, after this step
          trainer.call("c5_train_speak", [panel.session()]).then((x) => { speak.textContent = x.line; }, () => {});
        }
      },
      reset: () => { speak.textContent = "—"; },
    });
    for (const [el, key] of [[opt, "optimizer"], [lr, "multiplier"]]) {
      el.addEventListener("change", () => {
        keep(ns, key, el);
        panel.note(W.msg("c5.live.chosen", { optimizer: opt.selectedOptions[0].textContent,
          lr: lr.selectedOptions[0].textContent }));
      });
    }
  }

  // -- the baseline's first step (computed in the training worker) ---------------------------------------------------
  function firstStep(root) {
    const box = root;   // (the widget's own element, as mount passes it)
    const opt = box.querySelector(".c5-first-opt");
    const run = box.querySelector(".c5-first-run");
    const which = box.querySelector(".c5-first-which");
    const job = W.latest(root, "c5-first-step", async () => {
      const t = await text(box.dataset.text);
      const r = await trainer.call("c5_first_step", [t, opt.value, null]);
      W.fill(box.querySelector(".c5-first-rows"), r);
      which.textContent = W.msg("c5.first.which", { optimizer: r.optimizer, lr: r.lr, loss: r.loss });
    });
    run.disabled = false;
    run.addEventListener("click", () => job({ label: opt.value }));
    opt.addEventListener("change", () => {   // the button says what it will compute
      run.textContent = W.msg("c5.first.run", { optimizer: opt.selectedOptions[0].textContent });
    });
  }

  // -- the optimiser race and the schedule explorer: answered by the build (states), else by Python ---------------
  function race(root, ns) {
    const slider = root.querySelector(".c5-race-k");
    const label = root.querySelector(".c5-race-label");
    const ks = JSON.parse(root.dataset.ks);
    const runs = JSON.parse(root.dataset.runs);   // the stored race, as a placeholder the build answered by
    const built = slider.defaultValue;
    const recompute = W.latest(root, "c5-race", () => {
      const k = ks[Number(slider.value)];
      return W.call("c5_race", [k, runs]).then((x) => {
        label.textContent = x.label;
        slider.setAttribute("aria-valuetext", x.label);
        W.fill(root.querySelector(".c5-race-rows"), x);
        W.chart(root, x.chart);
        W.setState(ns, "k", slider.value === built ? null : String(k));
      });
    });
    const saved = W.getState(ns, "k");
    if (saved !== null) {
      const i = ks.map(String).indexOf(saved);
      if (i < 0) W.setState(ns, "k", null);
      else if (String(i) !== slider.value) { slider.value = String(i); recompute({ label: "k" }); }
    }
    slider.addEventListener("input", () => recompute({ label: "k" }));
    W.live(root, ".c5-race-k");
  }

  function schedule(root, ns) {
    const b = W.bind(root, ns, { kind: ".c5-sched-kind", warmup: ".c5-sched-warmup" });
    const recompute = W.latest(root, "c5-schedule", () => {
      const v = b.values();
      return W.call("c5_schedule", [v.kind, v.warmup]).then((x) => {
        W.fill(root.querySelector(".c5-sched-readout"), x);
        W.chart(root, x.chart);
        b.record();
      });
    });
    if (b.restore()) recompute({ label: "restore" });
    b.onChange(() => recompute({ label: "input" }));
    W.live(root, ".c5-sched-kind, .c5-sched-warmup");
  }

  W.mount({ "c5-live": live, "c5-first-step": firstStep, "c5-race": race, "c5-schedule": schedule });
})();
