/*
 * offline.js - register the course's service worker (sw.js at the site root, written by sitegen/offline.py), say
 * unobtrusively, in the footer, once the whole course is kept on this device, and run the outline's data-use
 * section. Plain JS, a deferred file of its own.
 *
 * The first visit is not slowed by it: the worker is registered only once the page has loaded, its Python runtime is
 * ready and has numpy (a lesson page) and the browser is idle; its install then takes the runtime files from the HTTP cache this
 * visit has just filled. data-sw on this script is the worker's URL, relative to the page.
 * The footer's [data-offline-note] is shown when the worker says its cache of this build is complete.
 *
 * The outline's [data-data-use] section (site/templates/index.html; its sizes are the build's) says what is fetched
 * ahead and why: on a fast connection the runtime and then the whole course (prefetch-runtime.js, the worker's
 * install); elsewhere nothing until the learner presses 现在下载整门课程, which asks the worker to keep the course now
 * ({type: "keep-offline"}; without a service worker, the runtime is prefetched into the HTTP cache instead).
 * 删除这台设备上的离线副本 unregisters the worker and deletes its caches, and remembers the choice (localStorage
 * REMOVED): no page registers the worker again until the learner asks for the copy. The section's data-state is
 * the message shown (auto | save_data | slow | unknown | downloading | prefetched | kept | failed | removed).
 */
(function () {
  "use strict";
  const script = document.currentScript;
  const msg = window.courseMessages.msg;
  const REMOVED = "course-offline-removed";
  const panel = document.querySelector("[data-data-use]");
  const usable = Boolean(script && script.dataset.sw && "serviceWorker" in navigator && window.isSecureContext);
  const swUrl = usable ? new URL(script.dataset.sw, document.baseURI) : null;
  const scope = usable ? new URL("./", swUrl).href : "";

  function removed() {
    try { return localStorage.getItem(REMOVED) !== null; } catch (e) { return false; }
  }
  function remember(gone) {
    try { if (gone) localStorage.setItem(REMOVED, "1"); else localStorage.removeItem(REMOVED); } catch (e) { /* private mode */ }
  }

  // -- the outline's data-use section ---------------------------------------------------------------------------
  const ui = panel ? (function () {
    const state = panel.querySelector(".data-use-state");
    const keep = panel.querySelector(".data-use-keep");
    const remove = panel.querySelector(".data-use-remove");
    function say(key) {   // key: "offline.<state>", a key of the message table
      const s = key.slice("offline.".length);
      panel.dataset.state = s;
      state.textContent = msg(key);
      keep.hidden = s === "kept" || s === "downloading";
      remove.hidden = !usable || s === "removed";   // (whatever is kept: the whole course or the pages visited)
    }
    const prefetcher = document.querySelector("script[data-urls]");
    const skipped = { "save-data": "offline.save_data", slow: "offline.slow", unknown: "offline.unknown" };
    const reason = prefetcher && prefetcher.dataset.state === "skipped" ? skipped[prefetcher.dataset.reason] : null;
    say(removed() ? "offline.removed" : reason || "offline.auto");
    keep.addEventListener("click", () => {
      remember(false);
      if (!usable) {
        if (window.coursePrefetch) window.coursePrefetch();
        say("offline.prefetched");
        return;
      }
      say("offline.downloading");
      navigator.serviceWorker.register(swUrl.href, { scope: scope })
        .then(() => navigator.serviceWorker.ready)
        .then((registration) => registration.active.postMessage({ type: "keep-offline" }))
        .catch(() => say("offline.failed"));
    });
    remove.addEventListener("click", async () => {
      remember(true);
      for (const registration of await navigator.serviceWorker.getRegistrations()) {
        if (registration.scope === scope) await registration.unregister();
      }
      for (const key of await caches.keys()) {
        if (key.startsWith("course " + scope + " ")) await caches.delete(key);
      }
      show({ type: "offline-status", offline: false });
      say("offline.removed");
    });
    return { say: say };
  })() : null;

  if (!usable) return;

  function show(message) {
    if (!message || message.type !== "offline-status") return;
    const note = document.querySelector("[data-offline-note]");
    if (note) note.hidden = !message.offline;
    document.documentElement.dataset.offline = message.offline ? message.version || "" : "";
    if (ui && message.offline) ui.say("offline.kept");
    else if (ui && message.failed) ui.say("offline.failed");
  }
  navigator.serviceWorker.addEventListener("message", (event) => show(event.data));

  function ask() {
    navigator.serviceWorker.ready.then((registration) => {
      const worker = navigator.serviceWorker.controller || registration.active;
      if (worker) worker.postMessage({ type: "offline-status" });
    });
  }

  function register() {
    if (removed()) return;   // the learner removed the offline copy: only the outline's button brings it back
    navigator.serviceWorker.register(swUrl.href, { scope: scope }).then(ask, () => {});
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
