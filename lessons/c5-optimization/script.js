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

  function specOf(root) {
    return JSON.parse(root.querySelector("figure.chart script.chart-spec").textContent);
  }

  // -- the live run -------------------------------------------------------------------------------------------------
  function live(root, ns) {
    const box = root;   // (the widget's own element, as mount passes it)
    const [opt, lr] = [box.querySelector(".c5-live-opt"), box.querySelector(".c5-live-lr")];
    const [startB, pauseB, resetB] = ["start", "pause", "reset"].map((k) => box.querySelector(".c5-live-" + k));
    const out = (name) => box.querySelector('output[name="' + name + '"]');
    const stateText = box.querySelector(".c5-live-state");
    const base = specOf(root);
    let series = null, drawn = 0, drawTimer = 0, session = null;
    const every = Number(box.querySelector(".c5-live-speak").dataset.every);

    const saved = { optimizer: W.getState(ns, "optimizer"), multiplier: W.getState(ns, "multiplier") };
    if (saved.optimizer && opt.querySelector('option[value="' + saved.optimizer + '"]')) opt.value = saved.optimizer;
    if (saved.multiplier && lr.querySelector('option[value="' + saved.multiplier + '"]')) lr.value = saved.multiplier;

    const panel = { start: startB, pause: pauseB, reset: resetB, locked: [opt, lr], text: stateText };
    const setState = (s, note) => trainer.showState(root, panel, s, note);

    function draw(now) {   // the chart at most every 400 ms while running (Plotly redraws cost a frame or two)
      if (!series || series.x.length === drawn) return;
      clearTimeout(drawTimer);
      const go = () => {
        drawTimer = 0;
        if (!series) return;          // reset meanwhile
        drawn = series.x.length;
        // the learner's curve first, so Plotly draws it under the two precomputed ones (it follows one of them
        // closely and, drawn last, would hide it)
        W.chart(root, Object.assign({}, base, { series: [series].concat(base.series) }));
      };
      if (now) go(); else if (!drawTimer) drawTimer = setTimeout(go, 400);
    }

    const blank = () => ["step", "loss", "lr", "held_out", "speak"].forEach((k) => { out(k).textContent = k === "step" ? "0" : "—"; });
    const runner = trainer.run({
      text: box.dataset.text,
      startCall: (t) => ["c5_train_start", [t, opt.value, Number(lr.value), 0]],
      stepCall: "c5_train_step",
      state: setState,
      began: (r) => {
        session = r.session;
        blank();
        series = { name: "你的小模型 · " + r.optimizer + " · lr " + r.lr, mode: "lines", color: "#d62728",
                   x: [], y: [], text: [] };
      },
      steps: (rows, running) => {
        for (const s of rows) {
          series.x.push(s.step);
          series.y.push(s.loss);
          series.text.push("你的模型 第 " + s.step + " 步：" + s.loss_text);
          out("step").textContent = String(s.step);
          out("loss").textContent = s.loss_text;
          out("lr").textContent = s.lr;
          if (s.held_out_text) out("held_out").textContent = s.held_out_text;
          if (s.step === 1 || s.step % every === 0) {   // the model speaks (lesson C2's sampling), after this step
            trainer.call("c5_train_speak", [session]).then((x) => { out("speak").textContent = x.line; }, () => {});
          }
        }
        draw(!running);               // (paused during this step: draw it now, the run stops here)
      },
      done: (rows) => {
        const last = rows[rows.length - 1];
        setState("done", last && last.loss === null ? "（loss 变成了非有限值：学习率太大，训练发散了。请重置后换一个学习率）"
          : "（已经训练到上限步数）");
        draw(true);
      },
      failed: (e) => {
        W.showError(root, W.learnerMessage(e));
        setState("error", "（训练出错，已停止）");
      },
    });

    function reset() {
      runner.reset();
      clearTimeout(drawTimer);
      drawTimer = 0;
      series = null;
      drawn = 0;
      blank();
      W.chart(root, base);
      W.showError(root, "");
      setState("idle", "（尚未开始；训练在后台的独立线程里进行，页面其他部分照常可用）");
    }

    startB.addEventListener("click", () => { W.showError(root, ""); runner.start(); });
    pauseB.addEventListener("click", () => {
      runner.pause();
      setState("paused", "（已暂停；点开始继续）");
      draw(true);
    });
    resetB.addEventListener("click", reset);
    for (const [el, key] of [[opt, "optimizer"], [lr, "multiplier"]]) {
      el.addEventListener("change", () => {
        keep(ns, key, el);
        if (runner.started()) reset();   // a run keeps its optimiser and lr: another choice starts afresh
        stateText.textContent = "（已选 " + opt.selectedOptions[0].textContent + "、学习率" + lr.selectedOptions[0].textContent +
          "；点开始训练）";
      });
    }
    setState("idle", stateText.textContent);
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
      which.textContent = r.optimizer + "、学习率 " + r.lr + " 的第一步（这一步的训练 loss " + r.loss + "，刚在你的浏览器里算出）";
    });
    run.disabled = false;
    run.addEventListener("click", () => job({ label: opt.value }));
    opt.addEventListener("change", () => {   // the button says what it will compute
      run.textContent = "在浏览器里用 " + opt.selectedOptions[0].textContent + " 算这一步";
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
