/*
 * runtime-client.js - the page's side of the Python runtime (plain JS, first in the page's script file,
 * sitegen/scripts.py).
 *
 * Two Web Workers run site/static/js/worker.js (its URL, versioned, is the script's data-worker attribute, relative
 * to the page; see sitegen/runtime.py), so learner code can never freeze the widgets:
 *   - the widgets' worker starts at once and answers call();
 *   - the code cells' worker starts lazily (cells.start(): on the first focus or run of a code cell or an exercise's
 *     check; code-cell.js, exercise.js) and runs one learner program at a time.
 * The in-page training (training.js) runs in the widgets' worker: a page starts one Python until a learner uses a
 * code cell (tests/bench_runtime.py measures each page's workers and memory). A run can be
 *     stopped, and is stopped after cells.timeLimitMs; stopping terminates that worker and starts a fresh one.
 *
 *     window.courseRuntime = {
 *       ready,              // Promise: the widgets' worker has Python + experiments; rejects on failure
 *       call(fn, args),     // Promise of the result of "module:function"; rejects with Error("<Type>: <message>")
 *       run(source),        // = cells.submit(source).done
 *       state, detail, timings,   // the widgets' worker ("ready": Python + experiments; numpy follows, see worker.js)
 *       packages,           // null until the widgets' worker has loaded numpy: {names, at (ms since navigation), error}
 *       trace,              // null until it is ready: its start-up trace, phase -> [start, end] ms since navigation
 *                           //   (worker.js lists the phases; for the bench)
 *       cells: {
 *         submit(source, onState, onOutput, options) -> job = {done, stop()}
 *                           // options.models: the worker hands Python the built-in models first (an exercise's
 *                           //   grading, exercise.js)
 *                           // done: Promise of {ok, stdout, stderr, error, stopped} (never rejects: a Python error
 *                           //   is the traceback in .error; stopped is null, "stopped" or "timeout", with a
 *                           //   Chinese .error and the output printed until then). onState("pending") while it
 *                           //   waits for the worker or an earlier run, onState("running") once it runs;
 *                           //   onOutput(stdout, stderr) with everything printed so far, while it runs.
 *                           //   stop() ends it, queued or running.
 *         start(),          // start the worker now if there is none (idempotent)
 *         state,            // "idle" (not started) | "loading" | "ready" | "error"
 *         timeLimitMs,      // a run still going after this long is stopped (default 10000, counted from the moment
 *                           //   it starts running, not while it waits). A page-level setting: tests lower it
 *                           //   with `courseRuntime.cells.timeLimitMs = 1500` before the run.
 *       }
 *     }
 * Every .runtime-status element (site/templates/base.html) shows the widgets' worker's state: data-state = loading | ready |
 * error, with Chinese text, role="status" and aria-live="polite"; while loading, the bytes arrived so far out of the
 * build's total (runtime.loaded / runtime.total: the worker's "progress" messages; data-runtime-bytes, the runtime's
 * files as the build knows them, sitegen/runtime.py ready_bytes). On a phone the status is pinned to the bottom of the
 * screen until the runtime is ready (course.css), since the header scrolls away. Each change is also announced to the
 * page as a "course:runtime" event on document (widgets.js repeats it on every widget that needs Python).
 *
 * Start-up speed: this comes first in the page's script file, which the page runs as soon as its stylesheets and
 * the file have arrived, before the body is parsed (site/templates/base.html), so the worker starts then.
 */
(function () {
  "use strict";

  const script = document.currentScript;
  const workerUrl = script && script.dataset.worker ? new URL(script.dataset.worker, document.baseURI) : null;
  // the entry points this page's widgets call (the build lists them): the worker imports their modules early
  const warm = script && script.dataset.warm ? JSON.parse(script.dataset.warm) : [];

  // A first visit (no service worker answers this page yet): the Pyodide files Python's start-up waits for
  // (data-preload: [URL relative to the page, as], largest first; sitegen/runtime.py) are asked for once the first
  // frame has been painted, at low priority, while the worker is still being fetched and started; its own requests
  // for them (after worker.js and pyodide.js) join these downloads in the HTTP cache. As prefetches, not preloads:
  // a preload's body is also kept in this page's memory (the wasm alone is 10 MB; with preloads the renderer's peak
  // was about 40 MB higher once numpy was in), a prefetch's goes to the HTTP cache only (issue #49's memory budget,
  // tests/bench_runtime.py; README "Measured"). Not before that paint: asked for at once, the
  // bodies (then preloads) put the phone profile's largest paint back by 0.1-1 s (tests/bench.py, README). On a
  // repeat visit the service worker has them: nothing to gain, and prefetching would read them from its cache twice.
  const preload = script && script.dataset.preload ? JSON.parse(script.dataset.preload) : [];
  function preloadRuntime() {
    for (const [url, as] of preload) {
      const link = document.createElement("link");
      link.rel = "prefetch";
      link.as = as;
      if (as === "fetch") link.crossOrigin = "anonymous";
      link.fetchPriority = "low";
      link.href = new URL(url, document.baseURI).href;
      document.head.appendChild(link);
    }
  }
  if (workerUrl && preload.length && !(navigator.serviceWorker && navigator.serviceWorker.controller)) {
    requestAnimationFrame(() => {     // a message posted from a frame's rAF callback arrives after its paint
      const channel = new MessageChannel();
      channel.port1.onmessage = preloadRuntime;
      channel.port2.postMessage(0);
    });
  }

  const msg = window.courseMessages.msg;   // the learner messages (messages.js, at the head of this file)
  const total = script && script.dataset.runtimeBytes ? Number(script.dataset.runtimeBytes) : 0;
  // "3.1 / 13.9 MB" (MB = 10^6 bytes, as the outline says the course's size), or null before any byte has arrived
  function bytes() {
    if (!runtime.loaded) return null;
    const mb = (n) => (n / 1e6).toFixed(1);
    return total ? msg("runtime.bytes_of", { loaded: mb(Math.min(runtime.loaded, total)), total: mb(total) })
      : msg("runtime.bytes", { loaded: mb(runtime.loaded) });
  }
  const TEXT = {
    loading: (d) => (bytes() ? msg("runtime.loading_detail", { detail: bytes() })
      : d ? msg("runtime.loading_detail", { detail: d }) : msg("runtime.loading")),
    ready: () => msg("runtime.ready"),
    // a detail in the course's words (Chinese) is shown; a browser's or Python's own (a file's address, an
    // exception's name) is not: it stays in the console (paint)
    error: (d) => msg("runtime.error", { detail: /[\u4e00-\u9fff]/.test(d || "") ? d : msg("runtime.error_retry") }),
  };

  // One worker and the requests waiting for its answers. onStatus({state, detail, timings}) on every status change
  // (and {state: "error"} if the worker script itself fails). end(text) terminates it: every pending request gets
  // `text` as its error, and later ones too.
  function startWorker(onStatus, role) {
    const pending = new Map(); // id -> {resolve, reject, kind}
    let nextId = 1;
    let dead = workerUrl ? null : msg("runtime.no_location");
    let worker = null;
    try {
      worker = workerUrl ? new Worker(role ? new URL("#" + role, workerUrl) : workerUrl) : null;
    } catch (e) {   // e.g. a page opened from the file system: the widgets keep the build's answers
      dead = msg("runtime.not_allowed");
    }

    function answer(p, msg) {
      if (p.kind === "run") {
        p.resolve({ ok: msg.ok, stdout: msg.stdout || "", stderr: msg.stderr || "", error: msg.error || null,
                    stopped: msg.stopped || null });
      } else if (msg.ok) {
        p.resolve(msg.result);
      } else {
        const e = new Error(msg.error);
        e.name = "PythonError";
        p.reject(e);
      }
    }

    function end(text, stopped) {
      dead = text;
      if (worker) worker.terminate();
      pending.forEach((p) => answer(p, { ok: false, error: text, stopped: stopped }));
      pending.clear();
    }

    if (worker) {
      worker.onmessage = (event) => {
        const msg = event.data;
        if (["status", "packages", "trace", "progress"].includes(msg.type)) { onStatus(msg); return; }
        const p = pending.get(msg.id);
        if (!p) return;
        if (msg.partial) { if (p.onPartial) p.onPartial(msg); return; }
        pending.delete(msg.id);
        answer(p, msg);
      };
      // The worker script itself failed (404, syntax error): nothing will ever answer.
      worker.onerror = (event) => {
        event.preventDefault();
        const detail = event.message || msg("runtime.thread_failed");
        end(detail, null);
        onStatus({ state: "error", detail: detail });
      };
    } else {
      setTimeout(() => onStatus({ state: "error", detail: dead }), 0);
    }

    return {
      send(message, kind, onPartial) {
        if (dead) return new Promise((resolve, reject) => answer({ resolve, reject, kind }, { ok: false, error: dead }));
        const id = nextId++;
        return new Promise((resolve, reject) => {
          pending.set(id, { resolve: resolve, reject: reject, kind: kind, onPartial: onPartial });
          worker.postMessage(Object.assign({ id: id }, message));
        });
      },
      post(message) {   // no reply expected
        if (!dead) worker.postMessage(message);
      },
      end: end,
    };
  }

  // -- the widgets' worker ---------------------------------------------------------------------------------------
  let resolveReady, rejectReady;
  const ready = new Promise((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => {}); // a failed load is shown in the status element; no unhandled rejection

  const runtime = {
    state: "loading",
    detail: "",
    timings: null,
    packages: null,   // {names, at (ms since navigation), error}: the widgets' worker's deferred packages (numpy)
    loaded: 0,        // bytes of the runtime's files arrived so far (while loading), of total (0: not known)
    total: total,
    bytes: bytes,     // () => the loaded / total text, or null
    trace: null,      // the widgets' worker's start-up trace: phase -> [start, end] in ms since navigation
    ready: ready,
    call(fn, args) {
      return main.send({ fn: fn, args: args === undefined ? [] : args }, "call");
    },
    run(source) {
      return cells.submit(source).done;
    },
  };

  // Paint every status element (called on each status change and once the DOM is parsed).
  function paint() {
    if (runtime.state === "error") console.warn("runtime:", runtime.detail);
    document.querySelectorAll(".runtime-status").forEach((el) => {
      el.setAttribute("role", "status");
      el.setAttribute("aria-live", "polite");
      el.dataset.state = runtime.state;
      el.textContent = TEXT[runtime.state](runtime.detail);
    });
    document.dispatchEvent(new CustomEvent("course:runtime", { detail: runtime }));
  }

  const main = startWorker((msg) => {
    if (msg.type === "trace") {      // the worker's start-up trace (worker.js), in ms since this page's navigation
      runtime.trace = {};
      for (const k in msg.trace) runtime.trace[k] = msg.trace[k].map((t) => Math.round(t - performance.timeOrigin));
      return;
    }
    if (msg.type === "progress") {   // bytes of the runtime's files so far (worker.js), while it loads
      runtime.loaded = msg.loaded;
      if (runtime.state === "loading") paint();
      return;
    }
    if (msg.type === "packages") {   // numpy, loaded after "ready" (worker.js): when, or why not
      runtime.packages = { names: msg.names, error: msg.error || null,
                           at: msg.at ? Math.round(msg.at - performance.timeOrigin) : Math.round(performance.now()) };
      if (msg.timings) runtime.timings = Object.assign({}, runtime.timings, msg.timings);
      return;
    }
    if (msg.timings) runtime.timings = msg.timings;
    runtime.state = msg.state;
    runtime.detail = msg.detail || "";
    paint();
    if (msg.state === "ready") resolveReady(runtime);
    if (msg.state === "error") rejectReady(new Error(msg.detail));
  });
  if (warm.length) main.post({ warm: warm });  // a hint for the idle time after "ready"

  // -- the code cells' worker --------------------------------------------------------------------------------------
  const queue = [];          // jobs waiting to run, oldest first
  let current = null;        // the job running now
  let runner = null;         // startWorker() for the cells, or null before start()
  let timer = 0;

  function seconds(ms) {
    return String(Math.round(ms / 100) / 10);
  }

  function settle(job, result) {
    const i = queue.indexOf(job);
    if (i >= 0) queue.splice(i, 1);
    if (job === current) { current = null; clearTimeout(timer); }
    job.resolve(result);
  }

  function pump() {
    if (current || !queue.length || (cells.state !== "ready" && cells.state !== "error")) return;
    const job = queue.shift();
    current = job;
    job.onState("running");
    const limit = cells.timeLimitMs;
    timer = setTimeout(() => restart(job, "timeout", msg("cell.timeout", { seconds: seconds(limit) })), limit);
    runner.send(job.models ? { run: job.source, models: true } : { run: job.source }, "run", (part) => {
      job.stdout += part.stdout;
      job.stderr += part.stderr;
      job.onOutput(job.stdout, job.stderr);
    }).then((r) => {
      if (job !== current) return;  // stopped meanwhile: already answered
      settle(job, r);
      pump();
    });
  }

  // End the running job (terminate its worker, which has no other way to stop), answer it, start a fresh worker.
  function restart(job, stopped, text) {
    const old = runner;
    runner = null;
    cells.state = "idle";
    settle(job, { ok: false, stdout: job.stdout, stderr: job.stderr, error: text, stopped: stopped });
    old.end(text, stopped);
    cells.start();
  }

  const cells = {
    state: "idle",
    timeLimitMs: 10000,
    start() {
      if (runner) return;
      cells.state = "loading";
      const me = startWorker((msg) => {
        if (runner !== me || !msg.state) return;   // a worker stopped meanwhile, or a message that is no status
        cells.state = msg.state;
        if (msg.state !== "loading") pump();
      }, "cells");
      runner = me;
    },
    submit(source, onState, onOutput, options) {
      let resolve;
      const done = new Promise((res) => { resolve = res; });
      const job = { source: String(source), onState: onState || (() => {}), onOutput: onOutput || (() => {}),
                    resolve: resolve, stdout: "", stderr: "", models: Boolean(options && options.models) };
      queue.push(job);
      job.onState("pending");
      cells.start();
      pump();
      return {
        done: done,
        stop() {
          if (job === current) restart(job, "stopped", msg("cell.stopped"));
          else if (queue.includes(job)) settle(job, { ok: false, stdout: "", stderr: "", error: msg("cell.cancelled"),
                                                       stopped: "stopped" });
        },
      };
    },
  };
  runtime.cells = cells;
  window.courseRuntime = runtime;

  paint();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", paint);
})();
