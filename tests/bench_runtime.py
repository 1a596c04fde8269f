"""The Python runtime's cost per page (issue #49 part 2), a benchmark, not a test: part of `make bench`
(tests/bench.py calls run()), or alone: `python -m tests.bench_runtime --site DIR [--pages ...] [--profile ...]`.

Per page and profile (tests/bench.py's PROFILES: desktop 1280x800; phone 375x812, the page's CPU slowed 4x with
CDP Emulation.setCPUThrottlingRate and the network at 1.25 MB/s, 150 ms), in a fresh browser per page, the site
served as built, the service worker blocked (its install would copy the whole course during the visit):

    widgets_ready_ms   navigation -> each Python-backed widget (one with a [data-needs-python] control) says
                       it is ready: its .widget wrapper's data-runtime="ready" (widgets.js); a build without that
                       attribute is timed by the page's runtime status instead (every widget waited for it)
    workers_loaded     the Web Workers the page started once its runtime is ready, nothing used (Playwright's
                       "worker" events: worker.js#cells is the code cells', worker.js#train the trainer's)
    workers_trained    the same after the first training panel ran TRAIN_STEPS steps (pages with one)
    workers_coded      the same after the first code cell's program ran (pages with one)
    heap_peak_mb       the page's peak JS heap (CDP Performance.getMetrics JSHeapUsedSize, the page's main
                       thread; a worker's heap and its wasm memory are not in it), sampled every SAMPLE_S
    renderer_mb_used   the renderer's peak resident memory (Linux /proc/<pid>/status VmHWM of this browser's
                       largest renderer: the page, its workers and their wasm memories together) once the page's
                       widgets and its training have been used, before any code cell: what BUDGET_MB is about
    renderer_peak_mb   the same at the end of the visit, after a code cell has run too (its own worker)
    first_step_ms      开始 pressed (its button enabled) -> the first training step answered
    steps_per_s        training steps per second over TRAIN_STEPS steps after TRAIN_WARMUP, one step per message
    steps_per_s_slow   the same with the WHOLE renderer process slowed to 1/SLOW_FACTOR of this machine's CPU
                       (phone profile only): CDP's CPU throttling reaches only a page's main thread (for a worker
                       Chromium answers "Operation is only supported for pages, not workers"), so the renderer,
                       which runs the page and its workers, is stopped and continued (SIGSTOP / SIGCONT) on a
                       SLOW_PERIOD_S cycle, running 1/SLOW_FACTOR of it. CDP's throttling is turned off for this
                       part, so the page's thread is not slowed twice. A duty cycle, not a slower core: the
                       worker runs at full speed in short bursts, which averages to the same steps per second.

Budget (BUDGET_MB): a lesson page's renderer stays under it once its widgets and training have been used
(renderer_mb_used). Not 300 MB: on this machine a page whose one Python has numpy loaded peaks at 314-345 MB
however little it does (C14, no training, no code cell; C8 with its worker refused, no Python at all: 197-232),
so 300 could only be met with no Python at all. A code
cell's run adds its own worker (renderer_peak_mb, reported beside it): the cells' worker is kept separate so that a
stopped program can be terminated without taking the widgets' Python with it.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.browser_fixtures import CHROMIUM, CHROMIUM_ARGS, http_serve, stop_servers  # noqa: E402

BUDGET_MB = 400
TRAIN_WARMUP, TRAIN_STEPS = 2, 10
SLOW_FACTOR, SLOW_PERIOD_S = 4, 0.02
SAMPLE_S = 0.5
LIMIT_S = 300
PROFILES = {
    "desktop": {"viewport": {"width": 1280, "height": 800}, "cpu": 1, "network": None, "mobile": False},
    "phone": {"viewport": {"width": 375, "height": 812}, "cpu": 4, "mobile": True,
              "network": {"offline": False, "latency": 150, "downloadThroughput": 1.25e6,
                          "uploadThroughput": 0.75e6}},
}

# Recorded in the page from its first script on: when the runtime status and each widget said ready.
INIT_JS = r"""(() => {
  const b = window.__rt = { status: null, widgets: {} };
  function look() {
    const s = document.querySelector("[data-testid=pyodide-status]");
    if (s && s.dataset.state === "ready" && b.status === null) b.status = performance.now();
    const seen = {};
    document.querySelectorAll(".widget[data-widget]").forEach((w) => {
      const n = w.dataset.widget; seen[n] = (seen[n] || 0) + 1;
      const key = seen[n] === 1 ? n : n + "-" + seen[n];
      if (!w.querySelector("[data-needs-python]")) return;
      if (!(key in b.widgets)) b.widgets[key] = null;
      if (b.widgets[key] === null && w.dataset.runtime === "ready") b.widgets[key] = performance.now();
    });
  }
  new MutationObserver(look).observe(document, { subtree: true, childList: true, attributes: true,
                                                 attributeFilter: ["data-state", "data-runtime"] });
})();"""

TRAIN_JS = r"""async ({warmup, steps, limitMs}) => {
  const start = document.querySelector(".training-panel .train-start");
  const T = window.courseTraining;
  if (!start || !T) return null;
  start.scrollIntoView();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const t00 = performance.now(), late = () => performance.now() - t00 > limitMs;
  while (start.disabled && !late()) await sleep(50);
  const t0 = performance.now(), s0 = T.steps;
  start.click();
  while (T.steps < s0 + 1 && !late()) await sleep(10);
  const t1 = performance.now();
  while (T.steps < s0 + 1 + warmup && !late()) await sleep(10);
  const t2 = performance.now(), s2 = T.steps;
  while (T.steps < s2 + steps && !late()) await sleep(10);
  const t3 = performance.now(), s3 = T.steps;
  start.closest(".training-panel").querySelector(".train-pause").click();
  while (T.inflight > 0 && !late()) await sleep(10);
  return s3 > s2 ? { first_step_ms: t1 - t0, steps_per_s: (s3 - s2) / ((t3 - t2) / 1000), steps: s3 - s2 } : null;
}"""

CODE_JS = r"""async ({limitMs}) => {
  const cell = document.querySelector(".code-cell");
  if (!cell) return null;
  const t0 = performance.now();
  cell.querySelector(".code-run").click();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  while (!cell.dataset.busy && performance.now() - t0 < 2000) await sleep(10);
  while (cell.dataset.busy && performance.now() - t0 < limitMs) await sleep(50);
  return performance.now() - t0;
}"""


def renderer_pids(browser_cdp) -> list[int]:
    info = browser_cdp.send("SystemInfo.getProcessInfo")
    return [p["id"] for p in info["processInfo"] if p["type"] == "renderer"]


def peak_mb(pids: list[int]) -> float | None:
    peaks = []
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            pass
    return round(max(peaks), 1) if peaks else None


class Slowed:
    """The renderer processes run 1/SLOW_FACTOR of the time (SIGSTOP / SIGCONT on a SLOW_PERIOD_S cycle)."""

    def __init__(self, pids):
        self.pids, self.stop = pids, threading.Event()
        self.thread = threading.Thread(target=self._cycle, daemon=True)

    def _signal(self, sig):
        for pid in self.pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    def _cycle(self):
        run = SLOW_PERIOD_S / SLOW_FACTOR
        while not self.stop.is_set():
            time.sleep(run)
            self._signal(signal.SIGSTOP)
            time.sleep(SLOW_PERIOD_S - run)
            self._signal(signal.SIGCONT)
        self._signal(signal.SIGCONT)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self._signal(signal.SIGCONT)


def visit(pw, base: str, page_name: str, profile: str, log) -> dict:
    prof = PROFILES[profile]
    browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        context = browser.new_context(viewport=prof["viewport"], is_mobile=prof["mobile"], has_touch=prof["mobile"],
                                      service_workers="block")
        context.add_init_script(INIT_JS)
        page = context.new_page()
        workers = []
        page.on("worker", lambda w: workers.append(w.url.rsplit("/", 1)[-1]))
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        if prof["network"]:
            cdp.send("Network.enable")
            cdp.send("Network.emulateNetworkConditions", prof["network"])
        if prof["cpu"] != 1:
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": prof["cpu"]})
        heap = [0.0]

        def sample():   # (between this thread's own calls: the sync API's CDP session is not thread-safe)
            m = {x["name"]: x["value"] for x in cdp.send("Performance.getMetrics")["metrics"]}
            heap[0] = max(heap[0], m.get("JSHeapUsedSize", 0) / 2**20)

        page.goto(base + page_name, wait_until="domcontentloaded", timeout=LIMIT_S * 1000)
        t_end = time.time() + LIMIT_S
        status = None
        while time.time() < t_end:
            sample()
            status = page.evaluate("() => { const s = document.querySelector('[data-testid=pyodide-status]');"
                                   " return s ? s.dataset.state : 'none'; }")
            if status in ("ready", "error", "none"):
                break
            time.sleep(SAMPLE_S)
        page.wait_for_timeout(1500)   # (a widget marked ready after the status, and idle-time workers)
        sample()
        rt = page.evaluate("() => window.__rt")
        widgets = {k: round(v if v is not None else rt["status"]) if (v or rt["status"]) else None
                   for k, v in rt["widgets"].items()}
        out = {"page": page_name, "profile": profile, "runtime": status,
               "status_ready_ms": round(rt["status"]) if rt["status"] else None, "widgets_ready_ms": widgets,
               "workers_loaded": list(workers)}
        if page.query_selector(".training-panel .train-start"):
            r = page.evaluate(TRAIN_JS, {"warmup": TRAIN_WARMUP, "steps": TRAIN_STEPS, "limitMs": LIMIT_S * 1000})
            sample()
            out.update(r or {"training": "no steps"})
            out["workers_trained"] = list(workers)
            if prof["cpu"] != 1:   # the phone: the whole renderer slowed (workers included), page throttling off
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
                pids = renderer_pids(browser.new_browser_cdp_session())
                with Slowed(pids):
                    r = page.evaluate(TRAIN_JS, {"warmup": TRAIN_WARMUP, "steps": TRAIN_STEPS,
                                                 "limitMs": LIMIT_S * 1000})
                out["steps_per_s_slow"] = r and r["steps_per_s"]
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": prof["cpu"]})
        out["renderer_mb_used"] = peak_mb(renderer_pids(browser.new_browser_cdp_session()))
        if page.query_selector(".code-cell .code-run"):
            ms = page.evaluate(CODE_JS, {"limitMs": LIMIT_S * 1000})
            sample()
            out["code_ms"] = ms and round(ms)
            out["workers_coded"] = list(workers)
        out["heap_peak_mb"] = round(heap[0], 1)
        out["renderer_peak_mb"] = peak_mb(renderer_pids(browser.new_browser_cdp_session()))
        out["budget_met"] = out["renderer_mb_used"] is not None and out["renderer_mb_used"] <= BUDGET_MB
        log(json.dumps(out, ensure_ascii=False))
        return out
    finally:
        browser.close()


def run(site: Path, pages: list[str], profiles: list[str], log=print) -> list[dict]:
    from playwright.sync_api import sync_playwright
    base = http_serve(site)
    rows = []
    with sync_playwright() as pw:
        for profile in profiles:
            for name in pages:
                rows.append(visit(pw, base, name, profile, log))
    return rows


def report(result: dict) -> str:
    """result = {"budget_mb", "rows"}: a Markdown table and the budget's verdict."""
    head = ["page", "profile", "widgets ready ms (max)", "workers: loaded / trained / coded", "heap MB",
            "renderer MB used / with a code cell", "first step ms", "steps/s", "steps/s slowed"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in result["rows"]:
        ready = [v for v in r["widgets_ready_ms"].values() if v is not None]
        w = " / ".join(str(len(r[k])) if k in r else "-" for k in ("workers_loaded", "workers_trained",
                                                                   "workers_coded"))
        f = lambda k, d=0, r=r: "-" if r.get(k) is None else f"{r[k]:.{d}f}"   # noqa: E731
        lines.append("| " + " | ".join([r["page"], r["profile"], str(max(ready)) if ready else "-", w,
                                        f("heap_peak_mb"), f"{f('renderer_mb_used')} / {f('renderer_peak_mb')}",
                                        f("first_step_ms"), f("steps_per_s", 1), f("steps_per_s_slow", 1)]) + " |")
    over = [f"{r['page']} ({r['profile']})" for r in result["rows"] if not r["budget_met"]]
    lines.append(f"budget {result['budget_mb']} MB per page (renderer, widgets and training used): "
                 + ("met on every page" if not over else "NOT met on " + ", ".join(over)))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench_runtime", description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=REPO / "_site")
    parser.add_argument("--pages", nargs="*")
    parser.add_argument("--profile", choices=("desktop", "phone", "both"), default="both")
    parser.add_argument("--out", type=Path, default=REPO / "_bench" / "runtime.json")
    args = parser.parse_args(argv)
    pages = args.pages or sorted(p.name for p in args.site.glob("c*.html") if p.name != "changes.html")
    profiles = ["desktop", "phone"] if args.profile == "both" else [args.profile]
    rows = run(args.site.resolve(), pages, profiles, log=lambda m: print(m, file=sys.stderr, flush=True))
    stop_servers()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {"budget_mb": BUDGET_MB, "rows": rows}
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1))
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
