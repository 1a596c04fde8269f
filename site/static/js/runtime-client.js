/*
 * runtime-client.js - the page's side of the Python runtime (plain JS, loaded with <script defer>).
 *
 * Starts site/static/js/worker.js at once (its URL is taken from this script's own src, so the site works
 * under any sub-path) and exposes
 *     window.courseRuntime = {
 *       ready,              // Promise: resolves when Python + numpy + experiments are loaded, rejects on failure
 *       call(fn, args),     // Promise of the result of "module:function"; rejects with Error("<Type>: <message>")
 *       run(source),        // Promise of {ok, stdout, stderr, error} for an editable code cell (never rejects
 *                           //   for a Python error: the traceback is in .error)
 *       state, detail, timings
 *     }
 * Every [data-testid="pyodide-status"] element shows the runtime's state: data-state = loading | ready | error,
 * with Chinese text, role="status" and aria-live="polite".
 *
 * Start-up speed: the page lists this file twice, `async` first (it runs as soon as it arrives, while the
 * HTML is still being parsed, so the worker starts early) and then `defer` in order before widgets.js (so
 * window.courseRuntime exists before any widget script, whichever copy ran first). The second run does nothing.
 */
(function () {
  "use strict";
  if (window.courseRuntime) return;  // already started by the other copy of this script

  const script = document.currentScript;
  const workerUrl = new URL("worker.js", script ? script.src : new URL("static/js/", document.baseURI));
  const worker = new Worker(workerUrl);
  // the entry points this page's widgets call (the build lists them): the worker imports their modules early
  const warm = script && script.dataset.warm ? JSON.parse(script.dataset.warm) : [];
  if (warm.length) worker.postMessage({ warm: warm });

  const pending = new Map(); // id -> {resolve, reject, kind}
  let nextId = 1;
  let resolveReady, rejectReady;
  const ready = new Promise((res, rej) => { resolveReady = res; rejectReady = rej; });
  ready.catch(() => {}); // a failed load is shown in the status element; no unhandled rejection

  const TEXT = {
    loading: (d) => "正在加载 Python 运行时…" + (d ? "（" + d + "）" : ""),
    ready: () => "Python 运行时已就绪",
    error: (d) => "运行时加载失败：" + (d || "未知错误"),
  };

  const runtime = {
    state: "loading",
    detail: "",
    timings: null,
    ready: ready,
    call(fn, args) {
      return send({ fn: fn, args: args === undefined ? [] : args }, "call");
    },
    run(source) {
      return send({ run: String(source) }, "run");
    },
  };
  window.courseRuntime = runtime;

  let dead = null; // set when the worker script itself failed: nothing will ever answer

  function send(message, kind) {
    const id = nextId++;
    if (dead) {
      return kind === "run"
        ? Promise.resolve({ ok: false, stdout: "", stderr: "", error: dead })
        : Promise.reject(new Error(dead));
    }
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve: resolve, reject: reject, kind: kind });
      worker.postMessage(Object.assign({ id: id }, message));
    });
  }

  // Paint every status element (called on each status change and once the DOM is parsed).
  function paint() {
    document.querySelectorAll('[data-testid="pyodide-status"]').forEach((el) => {
      el.setAttribute("role", "status");
      el.setAttribute("aria-live", "polite");
      el.dataset.state = runtime.state;
      el.textContent = TEXT[runtime.state](runtime.detail);
    });
  }

  function setState(state, detail) {
    runtime.state = state;
    runtime.detail = detail || "";
    paint();
  }

  worker.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === "status") {
      if (msg.timings) runtime.timings = msg.timings;
      setState(msg.state, msg.detail);
      if (msg.state === "ready") resolveReady(runtime);
      if (msg.state === "error") rejectReady(new Error(msg.detail));
      return;
    }
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (p.kind === "run") {
      p.resolve({ ok: msg.ok, stdout: msg.stdout || "", stderr: msg.stderr || "", error: msg.error || null });
    } else if (msg.ok) {
      p.resolve(msg.result);
    } else {
      const e = new Error(msg.error);
      e.name = "PythonError";
      p.reject(e);
    }
  };

  // The worker script itself failed (404, syntax error): nothing will ever answer.
  worker.onerror = (event) => {
    event.preventDefault();
    const detail = event.message || "无法启动 " + workerUrl.pathname;
    dead = detail;
    setState("error", detail);
    rejectReady(new Error(detail));
    pending.forEach((p) => (p.kind === "run"
      ? p.resolve({ ok: false, stdout: "", stderr: "", error: detail })
      : p.reject(new Error(detail))));
    pending.clear();
  };

  setState("loading", "");
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", paint);
})();
