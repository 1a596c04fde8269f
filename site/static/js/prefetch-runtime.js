/*
 * prefetch-runtime.js - on a page that runs no Python (the course outline), warm the browser's HTTP cache with the
 * Python runtime's files in idle time, so the first lesson page starts faster. Plain JS, in the outline's script file (sitegen/scripts.py).
 *
 * It starts no worker and runs nothing: it only adds <link rel="prefetch"> for each URL in data-urls (site-relative,
 * the same versioned URLs every lesson page's worker asks for; see sitegen/runtime.py), once the page is idle.
 * Only on a fast connection: navigator.connection says 4g and no Save-Data (the service worker's own rule,
 * sitegen/offline_sw.js). Elsewhere, or in a browser that does not say, nothing is fetched until the learner asks
 * (the outline's 现在下载 button, offline.js, calls window.coursePrefetch() where no service worker can keep the course).
 * The script element's data-state says what happened: "skipped" (with data-reason: save-data | slow | unknown),
 * "waiting" (for idle time), "fetching" (links added) or "done" (every link has loaded or failed: the files are in
 * the HTTP cache, or will be fetched again when needed).
 */
(function () {
  "use strict";
  const script = document.currentScript;
  if (!script || !script.dataset.urls) return;
  // the URLs are relative to the page, as the lesson pages' data-worker is (base.html prefixes the page's root), so
  // they stay right wherever static/ is served from (make dist moves it into v/<hash>/)
  const urls = JSON.parse(script.dataset.urls);

  let started = false;
  function prefetch() {
    if (started) return;
    started = true;
    let pending = urls.length;
    const settled = () => {
      pending -= 1;
      if (pending === 0) script.dataset.state = "done";
    };
    script.dataset.state = pending ? "fetching" : "done";
    for (const url of urls) {
      const link = document.createElement("link");
      link.rel = "prefetch";
      link.href = new URL(url, document.baseURI).href;
      link.addEventListener("load", settled, { once: true });
      link.addEventListener("error", settled, { once: true });
      document.head.appendChild(link);
    }
  }
  window.coursePrefetch = prefetch;

  const conn = navigator.connection;
  if (!conn || conn.saveData || conn.effectiveType !== "4g") {
    script.dataset.state = "skipped";
    script.dataset.reason = !conn ? "unknown" : conn.saveData ? "save-data" : "slow";
    return;
  }
  script.dataset.state = "waiting";
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1000));
  window.addEventListener("load", () => idle(prefetch, { timeout: 5000 }), { once: true });
})();
