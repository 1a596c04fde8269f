/*
 * training.js - the page's training worker, shared by the lessons that train a model in the page (C5, C8):
 * window.courseTrainer = {call(entryPoint, args), stop(), text(path), run(hooks), stats, showState(root, parts, s,
 * note)}; run drives a live run, showState draws its panel's buttons and status line.
 *
 * The worker is the course's worker.js started as worker.js#train (a third instance beside the widgets' and the
 * code cells' workers), so training never delays another widget's answer and the page never waits for it: a
 * lesson's script sends one request per training step ({id, fn: "experiments.api:NAME", args}) and the next only
 * when the previous one has answered, so 暂停 takes effect after at most one step. It is started by the first
 * call, and terminated when the page is left (pagehide). text(path) fetches a training text once per page.
 *
 * For tests and the bench: window.courseTraining = stats = {state, steps, busyMs, inflight} (the lesson scripts
 * count steps answered and time spent waiting; inflight: requests not answered yet).
 */
(function () {
  "use strict";
  const stats = { state: "idle", steps: 0, busyMs: 0, inflight: 0 };
  window.courseTraining = stats;

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

  // A live run, one step per request (the next sent when the previous one has answered): run(h) drives the
  // worker and calls the lesson's hooks. h = {text: path, startCall: [entry point, args(text)], stepCall: entry
  // point, state(s, note), began(answer), steps(rows, running), done(rows), failed(error)}. pause() takes effect
  // after at most one step; reset() forgets the worker's run (the next start() begins a fresh one).
  function run(h) {
    let session = null, running = false, generation = 0;
    async function loop(gen) {
      while (running && gen === generation) {
        const t0 = performance.now();
        const r = await trainer.call(h.stepCall, [session, 1]);
        if (gen !== generation) return;
        stats.busyMs += performance.now() - t0;
        stats.steps += r.steps.length;
        h.steps(r.steps, running);
        if (r.done) {
          running = false;
          h.done(r.steps);
        }
      }
    }
    async function start() {
      running = true;
      const gen = generation;
      try {
        if (session === null) {
          h.state("loading", "（正在启动训练线程、加载 Python 和 numpy，第一次要几秒…）");
          const t = await text(h.text);
          if (gen !== generation) return;
          const [name, args] = h.startCall(t);
          const r = await trainer.call(name, args);
          if (gen !== generation) return;
          session = r.session;
          h.began(r);
        }
        if (!running) return;
        h.state("running", "（训练中）");
        await loop(gen);
      } catch (e) {
        if (gen !== generation) return;
        running = false;
        session = null;              // the worker's run is gone (or never began): start() begins a fresh one
        h.failed(e);
      }
    }
    return {
      start: start,
      pause: () => { running = false; },
      reset: () => { generation += 1; running = false; session = null; },
      started: () => session !== null,
    };
  }

  // A live-training panel's look in each state (idle, loading, running, paused, done, error): the widget's
  // data-state; 开始 off while busy or done, 暂停 on only while busy, 重置 off while idle; the controls that choose
  // the run (parts.locked) off while busy; parts.text says what is going on (a state without a note keeps it).
  function showState(root, parts, s, note) {
    const busy = s === "running" || s === "loading";
    root.dataset.state = s;
    parts.start.disabled = busy || s === "done";
    parts.pause.disabled = !busy;
    parts.reset.disabled = s === "idle";
    (parts.locked || []).forEach((c) => { c.disabled = busy; });
    if (note !== undefined) parts.text.textContent = note;
  }

  window.courseTrainer = { call: trainer.call, stop: trainer.stop, text: text, run: run, stats: stats,
    showState: showState };
})();
