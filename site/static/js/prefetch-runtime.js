/*
 * prefetch-runtime.js - on a page that runs no Python (the course outline), warm the browser's HTTP cache with the
 * Python runtime's files in idle time, so the first lesson page starts faster. Plain JS, <script defer>.
 *
 * It starts no worker and runs nothing: it only adds <link rel="prefetch"> for each URL in data-urls (site-relative,
 * the same versioned URLs every lesson page's worker asks for; see sitegen/runtime.py), once the page is idle.
 * Skipped when the learner asked to save data (navigator.connection.saveData) or the connection is 2G.
 * The script element's data-state says what happened: "skipped", "waiting" (for idle time) or "done".
 */
(function () {
  "use strict";
  const script = document.currentScript;
  if (!script || !script.dataset.urls) return;
  const conn = navigator.connection;
  if (conn && (conn.saveData || /(^|-)2g$/.test(conn.effectiveType || ""))) {
    script.dataset.state = "skipped";
    return;
  }
  script.dataset.state = "waiting";

  // the URLs are relative to the page, as the lesson pages' data-worker is (base.html prefixes the page's root), so
  // they stay right wherever static/ is served from (make dist moves it into v/<hash>/)
  const urls = JSON.parse(script.dataset.urls);

  function prefetch() {
    for (const url of urls) {
      const link = document.createElement("link");
      link.rel = "prefetch";
      link.href = new URL(url, document.baseURI).href;
      document.head.appendChild(link);
    }
    script.dataset.state = "done";
  }

  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1000));
  window.addEventListener("load", () => idle(prefetch, { timeout: 5000 }), { once: true });
})();
