/*
 * offline.js - register the course's service worker (sw.js at the site root, written by sitegen/offline.py), and say
 * unobtrusively, in the footer, once the whole course is kept on this device. Plain JS, a deferred file of its own.
 *
 * The first visit is not slowed by it: the worker is registered only once the page has loaded, its Python runtime is
 * ready and has numpy (a lesson page) and the browser is idle; its install then takes the runtime files from the HTTP cache this
 * visit has just filled. data-sw on this script is the worker's URL, relative to the page.
 * The footer's [data-offline-note] is shown when the worker says its cache of this build is complete.
 */
(function () {
  "use strict";
  const script = document.currentScript;
  if (!script || !script.dataset.sw || !("serviceWorker" in navigator) || !window.isSecureContext) return;
  const swUrl = new URL(script.dataset.sw, document.baseURI);

  function show(message) {
    if (!message || message.type !== "offline-status") return;
    const note = document.querySelector("[data-offline-note]");
    if (note) note.hidden = !message.offline;
    document.documentElement.dataset.offline = message.offline ? message.version : "";
  }
  navigator.serviceWorker.addEventListener("message", (event) => show(event.data));

  function ask() {
    navigator.serviceWorker.ready.then((registration) => {
      const worker = navigator.serviceWorker.controller || registration.active;
      if (worker) worker.postMessage({ type: "offline-status" });
    });
  }

  function register() {
    navigator.serviceWorker.register(swUrl.href, { scope: new URL("./", swUrl).href }).then(ask, () => {});
  }

  // after "ready" the widgets' worker loads numpy (worker.js): wait for that too (runtime.packages), at most a minute
  function settled(runtime) {
    return new Promise((resolve) => {
      const t0 = performance.now();
      (function check() {
        if (runtime.packages || runtime.state === "error" || performance.now() - t0 > 60000) resolve();
        else setTimeout(check, 250);
      })();
    });
  }

  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1000));
  window.addEventListener("load", () => {
    const runtime = window.courseRuntime;
    const ready = runtime && runtime.ready ? runtime.ready.then(() => settled(runtime)) : Promise.resolve();
    ready.then(() => idle(register, { timeout: 5000 }), () => idle(register, { timeout: 5000 }));
  }, { once: true });
  if (navigator.serviceWorker.controller) ask();   // a repeat visit: say so at once
})();
