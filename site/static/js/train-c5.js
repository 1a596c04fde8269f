/*
 * train-c5.js - lesson C5's widgets: the live training run and the baseline's first step (in a training worker of
 * their own), the optimiser race and the schedule explorer (c5_race, c5_schedule: every stop of the race's slider
 * and each picker's choices answered by the build, the other pairs by the widgets' Python). Only
 * window.courseWidgets' public API (mount, bind, call, fill, chart, latest, live, getState, setState, showError,
 * el).
 *
 * The training worker is the course's worker.js started as worker.js#train (a third instance beside the widgets'
 * and the code cells' workers), so training never delays another widget's answer and the page never waits for
 * it: one request per training step ({id, fn: "experiments.api:c5_train_step", args}), the next sent only when
 * the previous one has answered, so 暂停 takes effect after at most one step. It is started on the first 开始 or
 * 算这一步, fetches the course's text once, and is terminated when the page is left (pagehide).
 * Numbers a learner reads are formatted by Python (experiments/lessons/c5_optimization/widgets.py).
 *
 * For tests and the bench: window.courseTraining = {state, steps, busyMs, inflight} (steps answered, time spent
 * waiting for them, requests not answered yet), and each live widget root carries data-state = idle | loading | running | paused | done | error.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const stats = { state: "idle", steps: 0, busyMs: 0, inflight: 0 };
  window.courseTraining = stats;

  // -- the training worker --------------------------------------------------------------------------------------
  const trainer = (function () {
    let worker = null, nextId = 1, failed = null;
    const pending = new Map();
    function url() {
      const s = document.querySelector("script[data-worker]");
      return s ? new URL("#train", new URL(s.dataset.worker, document.baseURI)) : null;
    }
    function fail(text) {
      failed = text;
      pending.forEach((p) => p.reject(new Error(text)));
      pending.clear();
    }
    function start() {
      if (worker || failed) return;
      const u = url();
      if (!u) { fail("页面没有指明 Python 运行时的位置"); return; }
      try {
        worker = new Worker(u);
      } catch (e) {
        fail("浏览器不允许在这个页面上启动 Python 运行时");
        return;
      }
      stats.state = "loading";
      worker.onmessage = (event) => {
        const m = event.data || {};
        if (m.type === "status") {
          stats.state = m.state;
          if (m.state === "error") fail("Python 运行时加载失败：" + (m.detail || ""));
          return;
        }
        if (m.type === "packages") {
          if (m.error) fail("numpy 未能加载：" + m.error);
          return;
        }
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        if (m.ok) p.resolve(m.result); else p.reject(new Error(m.error));
      };
      worker.onerror = (event) => { event.preventDefault(); fail(event.message || "训练线程启动失败"); };
    }
    function call(name, args) {
      start();
      if (failed) return Promise.reject(new Error(failed));
      stats.inflight += 1;
      return new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve, reject: reject });
        worker.postMessage({ id: id, fn: "experiments.api:" + name, args: args });
      }).finally(() => { stats.inflight -= 1; });
    }
    function stop() {
      if (worker) worker.terminate();
      worker = null;
      fail("训练已停止");
      failed = null;
      stats.state = "idle";
    }
    window.addEventListener("pagehide", stop);
    return { call: call, stop: stop };
  })();

  const texts = new Map();
  function text(path) {   // the course's training text, fetched once
    if (!texts.has(path)) {
      texts.set(path, fetch(new URL(path, document.baseURI)).then((r) => {
        if (!r.ok) throw new Error("训练文本下载失败（HTTP " + r.status + "）");
        return r.text();
      }));
      texts.get(path).catch(() => texts.delete(path));
    }
    return texts.get(path);
  }

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
    const textPath = box.dataset.text;
    let session = null, running = false, generation = 0, series = null, drawn = 0, drawTimer = 0;

    const saved = { optimizer: W.getState(ns, "optimizer"), multiplier: W.getState(ns, "multiplier") };
    if (saved.optimizer && opt.querySelector('option[value="' + saved.optimizer + '"]')) opt.value = saved.optimizer;
    if (saved.multiplier && lr.querySelector('option[value="' + saved.multiplier + '"]')) lr.value = saved.multiplier;

    function setState(s, note) {
      root.dataset.state = s;
      startB.disabled = s === "running" || s === "loading" || s === "done";
      pauseB.disabled = s !== "running" && s !== "loading";
      resetB.disabled = s === "idle";
      opt.disabled = lr.disabled = s === "running" || s === "loading";
      stateText.textContent = note;
    }

    function draw(now) {   // the chart at most every 400 ms while running (Plotly redraws cost a frame or two)
      if (!series || series.x.length === drawn) return;
      clearTimeout(drawTimer);
      const go = () => {
        drawTimer = 0;
        if (!series) return;          // reset meanwhile
        drawn = series.x.length;
        W.chart(root, Object.assign({}, base, { series: base.series.concat([series]) }));
      };
      if (now) go(); else if (!drawTimer) drawTimer = setTimeout(go, 400);
    }

    function reset() {
      generation += 1;
      clearTimeout(drawTimer);
      drawTimer = 0;
      running = false;
      session = null;
      series = null;
      drawn = 0;
      ["step", "loss", "lr", "held_out"].forEach((k) => { out(k).textContent = k === "step" ? "0" : "—"; });
      W.chart(root, base);
      W.showError(root, "");
      setState("idle", "（尚未开始；训练在后台的独立线程里进行，页面其他部分照常可用）");
    }

    async function loop(gen) {
      while (running && gen === generation) {
        const t0 = performance.now();
        const r = await trainer.call("c5_train_step", [session, 1]);
        if (gen !== generation) return;
        stats.busyMs += performance.now() - t0;
        for (const s of r.steps) {
          stats.steps += 1;
          series.x.push(s.step);
          series.y.push(s.loss);
          series.text.push("你的模型 第 " + s.step + " 步：" + s.loss_text);
          out("step").textContent = String(s.step);
          out("loss").textContent = s.loss_text;
          out("lr").textContent = s.lr;
          if (s.held_out_text) out("held_out").textContent = s.held_out_text;
        }
        draw(!running);               // (paused during this step: draw it now, the run stops here)
        if (r.done) {
          running = false;
          const last = r.steps[r.steps.length - 1];
          setState("done", last && last.loss === null ? "（loss 变成了非有限值：学习率太大，训练发散了。请重置后换一个学习率）"
            : "（已经训练到上限步数）");
          draw(true);
        }
      }
    }

    async function start() {
      W.showError(root, "");
      running = true;
      const gen = generation;
      try {
        if (session === null) {
          setState("loading", "（正在启动训练线程、加载 Python 和 numpy，第一次要几秒…）");
          const t = await text(textPath);
          if (gen !== generation) return;
          const r = await trainer.call("c5_train_start", [t, opt.value, Number(lr.value), 0]);
          if (gen !== generation) return;
          session = r.session;
          ["step", "loss", "lr", "held_out"].forEach((k) => { out(k).textContent = k === "step" ? "0" : "—"; });
          series = { name: "你的小模型 · " + r.optimizer + " · lr " + r.lr, mode: "lines", color: "#d62728",
                     x: [], y: [], text: [] };
        }
        if (!running) return;
        setState("running", "（训练中）");
        await loop(gen);
      } catch (e) {
        if (gen !== generation) return;
        running = false;
        session = null;              // the worker's run is gone (or never began): 开始 starts a fresh one
        W.showError(root, W.learnerMessage(e));
        setState("error", "（训练出错，已停止）");
      }
    }

    startB.addEventListener("click", () => { start(); });
    pauseB.addEventListener("click", () => {
      running = false;
      setState("paused", "（已暂停；点开始继续）");
      draw(true);
    });
    resetB.addEventListener("click", reset);
    for (const [el, key] of [[opt, "optimizer"], [lr, "multiplier"]]) {
      el.addEventListener("change", () => {
        keep(ns, key, el);
        if (session !== null) reset();   // a run keeps its optimiser and lr: another choice starts afresh
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
