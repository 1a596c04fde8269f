"""Speed and size figures of the built site (a benchmark, not a test): `make bench` = `python -m tests.bench`.

Everything is measured in one run on this machine, headless Debian Chromium against a local static server
(the same http.server behaviour as `make serve`: Last-Modified, If-Modified-Since -> 304, no compression), and
every figure is the median of --runs runs (default 5):

    build_s            `python build.py` into an empty folder, the runtime cache warm (a full build)
    rebuild_s          `python build.py` again after one config value changed (vocab_size of one model, +1)
    page_kb            HTML + CSS + JS + data requested before any interaction (no scrolling, no input),
                       the Python runtime excluded; sizes are the files' bytes (what the page needs)
    runtime_kb         what the runtime adds when it loads: worker.js, pyodide/*, py/* (files' bytes)
    transfer_kb        bytes that actually crossed the network for page + runtime (0 for a cache hit / 304)
    chart_kb           what scrolling every chart into view adds (the chart library, loaded lazily)
    lcp_ms             largest contentful paint, before any interaction
    live_ms            navigation start -> the [data-testid=pyodide-status] element says data-state=ready
    bare_pyodide_ms    the same for a bare page that only loads the same bundled Pyodide + numpy in a worker
    cls                cumulative layout shift (web-vitals session windows), loading and then scrolling
                       the whole page so that every chart draws
    page_kb_gz         page_kb as a compressing server would send it (each file gzip -6), for information
    recompute p50/p95  per widget: from an input event to the updated DOM, i.e. the widget's `course:updated`
                       event, or else its last DOM mutation once every runtime call and fetch it started has
                       finished, nothing in it is data-busy and its DOM has been quiet for QUIET_MS. Each of the
                       widget's controls is used in turn (range: input, select: change, button: click; the
                       bring-your-own-config box gets a real config pasted before its button is pressed)

Every run uses a fresh browser profile (so a fresh HTTP and wasm code cache) and visits each page twice:
"first" (empty cache) and "cached" (a new tab in the same profile). The bare reference is measured the same
way, interleaved with the pages so both see the same machine load.

    python -m tests.bench                     # prints the table, writes _bench/latest.json
    python -m tests.bench --runs 7 --site _site --out _bench/latest.json
"""
from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.browser_fixtures import CHROMIUM, CHROMIUM_ARGS, _QuietHandler, _QuietServer  # noqa: E402

READY_TIMEOUT_MS = 120_000
QUIET_MS = 120              # a widget's DOM is "updated" once it has been quiet this long with nothing in flight
SAMPLES_PER_WIDGET = 8      # input events per widget per visit (x runs x 2 visits)
RUNTIME_PREFIXES = ("pyodide/", "py/", "static/js/worker.js")
CHART_PREFIXES = ("static/vendor/",)
TARGETS_TEXT = {
    "lcp": "lcp_ms <= bare_pyodide_ms / 4",
    "live": "live_ms <= 1.15 x bare_pyodide_ms",
    "recompute": "recompute_ms_p95 <= 50 ms, every widget",
    "cls": "cls <= 0.1",
    "page_kb": "page_kb <= 300",
    "cached": "cached live_ms < first live_ms",
}

# -- the bare reference page: the same bundled Pyodide + numpy, loaded in a worker, nothing else -------------------
BARE = {
    "/__bench/bare.html": ("text/html; charset=utf-8", """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bare Pyodide</title><link rel="icon" href="data:,">
<script src="bare.js"></script></head>
<body><p data-testid="pyodide-status" data-state="loading">loading</p></body></html>
"""),
    "/__bench/bare.js": ("text/javascript", """"use strict";
const worker = new Worker("bare-worker.js");
worker.onmessage = (e) => {
  window.courseRuntime = { timings: { total: e.data.total, start: Math.round(e.data.origin - performance.timeOrigin) } };
  const el = document.querySelector("[data-testid=pyodide-status]");
  el.textContent = e.data.ok ? "ready " + e.data.version : "error " + e.data.error;
  el.dataset.state = e.data.ok ? "ready" : "error";
};
"""),
    "/__bench/bare-worker.js": ("text/javascript", """"use strict";
const t0 = performance.now();
importScripts("../pyodide/pyodide.js");
loadPyodide({ indexURL: new URL("../pyodide/", self.location.href).href })
  .then((py) => py.loadPackage("numpy", { messageCallback: () => {} }).then(() => py))
  .then((py) => postMessage({ ok: true, version: py.version, total: Math.round(performance.now() - t0),
                              origin: performance.timeOrigin }),
        (e) => postMessage({ ok: false, error: String(e) }));
"""),
}


class BenchHandler(_QuietHandler):
    """The site's files (as tests/browser_fixtures serves them), plus the bare reference under /__bench/."""

    def do_GET(self):  # noqa: N802 - stdlib name
        entry = BARE.get(urlsplit(self.path).path)
        if entry is None:
            return super().do_GET()
        body = entry[1].encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", entry[0])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve_forever(directory: str) -> None:
    """The server process: prints its port, then serves until killed."""
    server = _QuietServer(("127.0.0.1", 0), functools.partial(BenchHandler, directory=directory))
    print(server.server_address[1], flush=True)
    server.serve_forever()


class Server:
    """The static server in its own process (as `make serve` is), so the browser driver never competes with it for
    this process's GIL."""

    def __init__(self, directory: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.bench", "--serve", str(directory)], cwd=REPO,
                                     stdout=subprocess.PIPE, text=True)
        port = self.proc.stdout.readline().strip()
        if not port.isdigit():
            self.stop()
            raise RuntimeError("the bench server did not start")
        self.base = f"http://127.0.0.1:{port}/"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# -- in-page instruments (added before any page script runs) -------------------------------------------------------
INSTRUMENTS = r"""
(() => {
  const b = window.__bench = { lcp: null, lcpFrozen: false, shifts: [], ready: null, error: null };
  try {
    new PerformanceObserver((list) => {
      if (b.lcpFrozen) return;
      for (const e of list.getEntries()) b.lcp = e.renderTime || e.loadTime || e.startTime;
    }).observe({ type: "largest-contentful-paint", buffered: true });
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (!e.hadRecentInput) b.shifts.push([e.startTime, e.value]);
    }).observe({ type: "layout-shift", buffered: true });
  } catch (e) { b.error = String(e); }
  const check = () => {
    if (b.ready !== null) return;
    const s = document.querySelector("[data-testid=pyodide-status]");
    if (s && s.dataset.state === "ready") b.ready = performance.now();
    if (s && s.dataset.state === "error") b.error = s.textContent;
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true,
                                                  attributeFilter: ["data-state"] });
  // CLS as web-vitals defines it: the largest session window (gaps < 1 s, at most 5 s long).
  b.cls = () => {
    let best = 0, cur = 0, first = -1, last = -1;
    for (const [t, v] of b.shifts) {
      if (first >= 0 && t - last < 1000 && t - first < 5000) { cur += v; } else { cur = v; first = t; }
      last = t; best = Math.max(best, cur);
    }
    return best;
  };
})();
"""

# Interacts with every widget and times each input event to its updated DOM (see the module docstring).
RECOMPUTE_JS = r"""
async ({ samples, quietMs, config }) => {
  const rt = window.courseRuntime;
  let inflight = 0;
  const track = (p) => { inflight++; const done = () => { inflight--; }; Promise.resolve(p).then(done, done); return p; };
  if (rt && !rt.__benchWrapped) {
    for (const name of ["call", "run"]) { const f = rt[name].bind(rt); rt[name] = (...a) => track(f(...a)); }
    const fetch0 = window.fetch.bind(window);
    window.fetch = (...a) => track(fetch0(...a));
    rt.__benchWrapped = true;
  }
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const visible = (el) => !el.disabled && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden" &&
    (!el.checkVisibility || el.checkVisibility({ contentVisibilityAuto: false, visibilityProperty: true }));

  async function settle(root, maxMs) {   // wait until nothing in flight and the DOM under root quiet for quietMs
    let last = performance.now();
    const mo = new MutationObserver(() => { last = performance.now(); });
    mo.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
    const start = performance.now();
    while (performance.now() - start < maxMs) {
      await sleep(25);
      const busy = root.matches("[data-busy]") || root.querySelector("[data-busy]") !== null;
      if (inflight === 0 && !busy && performance.now() - last >= quietMs) break;
    }
    mo.disconnect();
  }

  function controls(root) {
    const out = [];
    root.querySelectorAll("input[type=range], select, button, input[type=number]").forEach((el) => {
      if (!visible(el) || el.closest("figure.chart")) return;
      if (el.tagName === "SELECT" && el.options.length < 2) return;
      out.push(el);
    });
    return out;
  }

  function describe(el) {
    const cls = Array.from(el.classList).filter((c) => !c.startsWith("is-")).slice(0, 2).join(".");
    const t = el.tagName.toLowerCase();
    return t + (el.type && t === "input" ? "[" + el.type + "]" : "") + (cls ? "." + cls : "") +
      (el.dataset.testid ? "[" + el.dataset.testid + "]" : "");
  }

  function act(el, i, root) {           // one input event on one control
    const t = el.tagName;
    if (t === "INPUT" && el.type === "range") {
      const min = Number(el.min || 0), max = Number(el.max || 100);
      const v = min + ((i * 0.37 + 0.13) % 1) * (max - min);
      el.value = String(Math.round(v));
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (t === "INPUT" && el.type === "number") {
      el.value = String(Number(el.value || 1) + (i % 2 ? -1 : 1));
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (t === "SELECT") {
      el.selectedIndex = (el.selectedIndex + 1) % el.options.length;
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    } else {
      el.click();
    }
  }

  async function measure(root, el, i, prepare) {
    if (prepare) prepare();
    let last = null, updated = null;
    const mo = new MutationObserver(() => { last = performance.now(); });
    mo.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
    const onUpdated = () => { if (updated === null) updated = performance.now(); };
    root.addEventListener("course:updated", onUpdated);
    const t0 = performance.now();
    act(el, i, root);
    const deadline = t0 + 15000;
    while (performance.now() < deadline) {
      await sleep(10);
      const quiet = last === null ? performance.now() - t0 >= 1000 : performance.now() - last >= quietMs;
      const busy = root.matches("[data-busy]") || root.querySelector("[data-busy]") !== null;  // widgets.js marks pending work
      if (inflight === 0 && !busy && quiet) break;
    }
    mo.disconnect();
    root.removeEventListener("course:updated", onUpdated);
    const end = updated !== null ? updated : last;
    return end === null ? null : end - t0;
  }

  const result = {};
  for (const w of document.querySelectorAll(".widget[data-widget]")) {
    const name = w.dataset.widget;
    w.scrollIntoView({ block: "center" });
    await settle(w, 20000);                 // its chart (if any) draws first, then we start
    let els = controls(w);
    const input = w.querySelector("[data-testid=byo-config-input]");
    const byoRun = w.querySelector("[data-testid=byo-config-run]");
    let prepare = null;
    if (input && byoRun) {                  // bring-your-own-config: paste a real config, then press 计算
      els = visible(byoRun) ? [byoRun] : [];
      prepare = () => { input.value = config; input.dispatchEvent(new Event("input", { bubbles: true })); };
    }
    const perControl = {};
    const all = [];
    for (let i = 0; i < samples && els.length; i++) {
      if (!prepare) els = controls(w);      // a widget may re-render its own controls
      if (!els.length) break;
      const el = els[i % els.length];
      if (!visible(el)) { await sleep(50); continue; }
      const ms = await measure(w, el, i, prepare);
      await settle(w, 5000);
      const key = describe(el);
      (perControl[key] = perControl[key] || []).push(ms);
      if (ms !== null) all.push(ms);
    }
    let key = name, n = 2;
    while (key in result) key = name + "#" + n++;
    result[key] = { samples: all, controls: perControl, n_controls: els.length };
  }
  return result;
}
"""

SCROLL_JS = r"""
async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const step = Math.max(200, Math.floor(innerHeight * 0.8));
  for (let y = 0; y < document.documentElement.scrollHeight; y += step) {
    window.scrollTo(0, y);
    await sleep(120);
    const pending = Array.from(document.querySelectorAll("figure.chart")).filter((f) => {
      const r = f.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight && !f.classList.contains("drawn");
    });
    const t = performance.now();
    while (pending.some((f) => !f.classList.contains("drawn")) && performance.now() - t < 20000) await sleep(50);
  }
  await sleep(300);
  window.scrollTo(0, 0);
  await sleep(300);
  return { charts: document.querySelectorAll("figure.chart").length,
           drawn: document.querySelectorAll("figure.chart.drawn").length };
}
"""


# -- helpers -------------------------------------------------------------------------------------------------------
def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def percentile(values, q):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def kb(n):
    return None if n is None else n / 1024


class Requests:
    """Every request of a browser context (pages and workers), with the file's bytes and the bytes transferred."""

    def __init__(self, context, base: str, site: Path):
        self.base, self.site = base, site
        self.items: list[dict] = []
        self.phase = "load"
        context.on("requestfinished", self._finished)

    def _finished(self, request):
        url = request.url
        if not url.startswith(self.base):
            self.items.append({"path": url, "phase": self.phase, "bytes": 0, "transfer": 0, "external": True})
            return
        path = urlsplit(url).path.lstrip("/")
        file = self.site / (path or "index.html")
        size = file.stat().st_size if file.is_file() else 0
        try:
            sizes = request.sizes()
            transfer = max(0, sizes.get("responseBodySize", 0))
            response = request.response()
            if response is not None and response.status == 304:
                transfer = 0
        except Exception:  # noqa: BLE001 - a request that vanished with its page: count nothing transferred
            transfer = 0
        self.items.append({"path": path, "phase": self.phase, "bytes": size, "transfer": transfer,
                           "gzip": self.gzip_size(file) if self.kind(path) == "page" else 0})

    _gz: dict = {}

    @classmethod
    def gzip_size(cls, file: Path) -> int:
        if file not in cls._gz:
            cls._gz[file] = len(gzip.compress(file.read_bytes(), 6)) if file.is_file() else 0
        return cls._gz[file]

    def clear(self):
        self.items = []
        self.phase = "load"

    def total(self, *, phase, kind, field="bytes"):
        seen, n = set(), 0
        for it in self.items:
            if it["phase"] != phase or it.get("external") or self.kind(it["path"]) != kind:
                continue
            if field in ("bytes", "gzip") and it["path"] in seen:
                continue
            seen.add(it["path"])
            n += it[field]
        return n

    @staticmethod
    def kind(path: str) -> str:
        if path.startswith(RUNTIME_PREFIXES) or path.startswith("__bench/"):
            return "runtime"
        if path.startswith(CHART_PREFIXES):
            return "chart"
        return "page"


def launch(pw, user_dir: str):
    return pw.chromium.launch_persistent_context(user_dir, executable_path=CHROMIUM, headless=True,
                                                 args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 800})


def wait_ready(page):
    sel = "[data-testid=pyodide-status]"   # (wait_for_function would eval a string: the CSP refuses that)
    page.wait_for_selector(f"{sel}[data-state=ready], {sel}[data-state=error]", state="attached",
                           timeout=READY_TIMEOUT_MS)
    b = page.evaluate("({ready: window.__bench.ready, error: window.__bench.error})")
    if b["error"]:
        raise RuntimeError(f"{page.url}: the runtime failed: {b['error']}")
    return b["ready"]


def visit(context, reqs: Requests, url: str, *, interact: bool, config: str, console: list) -> dict:
    reqs.clear()
    page = context.new_page()
    page.on("console", lambda m: console.append(f"{url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(f"{url}: {e}"))
    page.goto(url, wait_until="commit")
    live = wait_ready(page)
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)                   # late page requests (before any interaction) still count
    lcp = page.evaluate("window.__bench.lcpFrozen = true, window.__bench.lcp")
    out = {"live_ms": live, "lcp_ms": lcp,
           "page_kb": kb(reqs.total(phase="load", kind="page")),
           "page_kb_gz": kb(reqs.total(phase="load", kind="page", field="gzip")),
           "runtime_kb": kb(reqs.total(phase="load", kind="runtime")),
           "transfer_kb": kb(reqs.total(phase="load", kind="page", field="transfer")
                             + reqs.total(phase="load", kind="runtime", field="transfer")),
           "timings": page.evaluate("window.courseRuntime ? window.courseRuntime.timings : null")}
    if interact:
        reqs.phase = "scroll"
        out["charts"] = page.evaluate(SCROLL_JS)
        out["chart_kb"] = kb(reqs.total(phase="scroll", kind="chart"))
        out["cls"] = page.evaluate("window.__bench.cls()")
        reqs.phase = "input"
        out["recompute"] = page.evaluate(RECOMPUTE_JS, {"samples": SAMPLES_PER_WIDGET, "quietMs": QUIET_MS,
                                                        "config": config})
    else:
        out["cls"] = page.evaluate("window.__bench.cls()")
    out["external"] = [it["path"] for it in reqs.items if it.get("external")]
    page.close()
    return out


# -- the build figures -----------------------------------------------------------------------------------------
def time_builds(runs: int) -> dict:
    """Full builds into an empty folder, then rebuilds after a one-value config change, in a temporary copy."""
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        root = Path(tmp) / "course"
        root.mkdir()
        for name in ("data", "lessons", "site"):
            shutil.copytree(REPO / name, root / name)
        out = root / "_site"
        cmd = [sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out)]

        def run():
            t = time.perf_counter()
            proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
            elapsed = time.perf_counter() - t
            if proc.returncode != 0:
                raise RuntimeError("build failed:\n" + proc.stderr)
            return elapsed

        full = []
        for _ in range(runs):
            shutil.rmtree(out, ignore_errors=True)
            full.append(run())
        # one config value: vocab_size of a model, +1 and back (the first of these models the build accepts that
        # way; a lesson may pin some models' numbers)
        models = sorted((root / "data" / "models").glob("*/config.json"))
        preferred = ["mistral-7b-v0.1", "qwen2.5-7b", "llama-2-7b", "baseline"]
        candidates = [m for name in preferred for m in models if m.parent.name == name] + models
        rebuild, model, refused = [], None, []
        for model in candidates:
            text = model.read_text(encoding="utf-8")
            doc = json.loads(text)   # the model's published config.json
            cfg = doc.get("text_config", doc)
            if not isinstance(cfg.get("vocab_size"), int):
                continue
            original = cfg["vocab_size"]
            try:
                for i in range(runs):
                    cfg["vocab_size"] = original + 1 if i % 2 == 0 else original
                    model.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
                    rebuild.append(run())
                break
            except RuntimeError as e:
                refused.append(f"{model.parent.name}: {str(e).strip().splitlines()[-1]}")
                model.write_text(text, encoding="utf-8")
                run()
                rebuild = []
        if not rebuild:
            raise RuntimeError("no model's vocab_size could change without failing the build:\n" + "\n".join(refused))
        changed = f"{model.relative_to(root).as_posix()}: vocab_size {original} <-> {original + 1}"
    return {"build_s": median(full), "rebuild_s": median(rebuild), "build_s_runs": full,
            "rebuild_s_runs": rebuild, "rebuild_change": changed, "rebuild_refused": refused}


# -- the browser figures ---------------------------------------------------------------------------------------
def lesson_pages(site: Path) -> list[str]:
    pages = ["index.html"] + sorted(p.name for p in site.glob("*.html") if p.name not in ("index.html", "changes.html"))
    return pages


def time_pages(site: Path, runs: int, pages: list[str], log) -> dict:
    from playwright.sync_api import sync_playwright

    server = Server(site)
    base = server.base
    models = json.loads((site / "data" / "models.json").read_text(encoding="utf-8"))
    config = json.dumps(next(iter(models.values()))["config"], ensure_ascii=False, indent=1)
    console: list[str] = []
    raw: dict = {"bare": [], "pages": {p: [] for p in pages}}
    try:
        with sync_playwright() as pw:
            for run in range(runs):
                for target in ["__bench/bare.html"] + pages:
                    with tempfile.TemporaryDirectory(prefix="bench-profile-") as user_dir:
                        context = launch(pw, user_dir)
                        context.add_init_script(INSTRUMENTS)
                        reqs = Requests(context, base, site)
                        try:
                            interact = target != "__bench/bare.html"
                            first = visit(context, reqs, base + target, interact=interact, config=config,
                                          console=console)
                            cached = visit(context, reqs, base + target, interact=interact, config=config,
                                           console=console)
                        finally:
                            context.close()
                    if target == "__bench/bare.html":
                        raw["bare"].append({"first": first, "cached": cached})
                    else:
                        raw["pages"][target].append({"first": first, "cached": cached})
                    log(f"  run {run + 1}/{runs} {target}: live {first['live_ms']:.0f} ms, "
                        f"cached {cached['live_ms']:.0f} ms")
    finally:
        server.stop()
    raw["console_errors"] = console
    return raw


def summarize(raw: dict) -> dict:
    def agg(visits, key):
        return median([v[key] for v in visits])

    out: dict = {"bare_pyodide_ms": {}, "pages": {}, "widgets": {}}
    for which in ("first", "cached"):
        out["bare_pyodide_ms"][which] = agg([r[which] for r in raw["bare"]], "live_ms")
    for page, runs in raw["pages"].items():
        out["pages"][page] = {}
        for which in ("first", "cached"):
            visits = [r[which] for r in runs]
            row = {k: agg(visits, k) for k in ("page_kb", "page_kb_gz", "runtime_kb", "transfer_kb", "lcp_ms",
                                                "live_ms", "cls")}
            row["chart_kb"] = agg(visits, "chart_kb")
            row["external_requests"] = sorted({u for v in visits for u in v.get("external", [])})
            out["pages"][page][which] = row
            widgets: dict[str, list] = {}
            controls: dict[str, dict[str, list]] = {}
            for v in visits:
                for name, w in (v.get("recompute") or {}).items():
                    widgets.setdefault(name, []).extend(w["samples"])
                    for c, s in w["controls"].items():
                        controls.setdefault(name, {}).setdefault(c, []).extend(x for x in s if x is not None)
            for name, samples in widgets.items():
                entry = out["widgets"].setdefault(f"{page} {name}", {})
                entry[which] = {"recompute_ms_p50": percentile(samples, 0.5),
                                "recompute_ms_p95": percentile(samples, 0.95), "n": len(samples),
                                "controls": {c: {"p50": percentile(s, 0.5), "p95": percentile(s, 0.95), "n": len(s)}
                                             for c, s in controls.get(name, {}).items()}}
    return out


def check_targets(summary: dict) -> list[dict]:
    bare = summary["bare_pyodide_ms"]
    results = []

    def add(key, what, value, limit, ok):
        results.append({"target": TARGETS_TEXT[key], "what": what, "value": value, "limit": limit, "met": bool(ok)})

    for page, visits in summary["pages"].items():
        for which, row in visits.items():
            ref = bare[which]
            where = f"{page} ({which})"
            if row["lcp_ms"] is not None and ref:
                add("lcp", where, row["lcp_ms"], ref / 4, row["lcp_ms"] <= ref / 4)
            if row["live_ms"] is not None and ref:
                add("live", where, row["live_ms"], 1.15 * ref, row["live_ms"] <= 1.15 * ref)
            add("cls", where, row["cls"], 0.1, row["cls"] is not None and row["cls"] <= 0.1)
            if which == "first":
                add("page_kb", where, row["page_kb"], 300, row["page_kb"] <= 300)
        first, cached = visits["first"]["live_ms"], visits["cached"]["live_ms"]
        add("cached", page, cached, first, cached is not None and first is not None and cached < first)
    for name, visits in summary["widgets"].items():
        for which, w in visits.items():
            p95 = w["recompute_ms_p95"]
            if p95 is not None:
                add("recompute", f"{name} ({which})", p95, 50, p95 <= 50)
    return results


def fmt(v, digits=0):
    if v is None:
        return "—"
    return f"{v:,.{digits}f}"


def table(rows: list[list[str]], header: list[str]) -> str:
    cols = list(zip(*([header] + rows))) if rows else [[h] for h in header]
    widths = [max(len(str(c)) for c in col) for col in cols]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def report(result: dict) -> str:
    s = result["summary"]
    bare = s["bare_pyodide_ms"]
    lines = [f"从0训练LLM bench: median of {result['runs']} runs, {result['machine']['chromium']}, "
             f"{result['machine']['cpus']} CPUs, load average {result['machine']['load_before']:.1f} -> "
             f"{result['machine']['load_after']:.1f}",
             f"build_s {fmt(result['build']['build_s'], 2)}   rebuild_s {fmt(result['build']['rebuild_s'], 2)}"
             f"   ({result['build']['rebuild_change']})", ""]
    rows = []
    for page, visits in s["pages"].items():
        for which in ("first", "cached"):
            r = visits[which]
            rows.append([page, which, fmt(r["page_kb"], 1), fmt(r["page_kb_gz"], 1), fmt(r["runtime_kb"], 0),
                         fmt(r["transfer_kb"], 0),
                         fmt(r["chart_kb"], 0), fmt(r["lcp_ms"]), fmt(r["live_ms"]), fmt(bare[which]),
                         fmt(r["live_ms"] / bare[which] if r["live_ms"] and bare[which] else None, 2),
                         fmt(r["cls"], 3)])
    lines.append(table(rows, ["page", "visit", "page_kb", "page_kb_gz", "runtime_kb", "transfer_kb", "chart_kb", "lcp_ms",
                              "live_ms", "bare_pyodide_ms", "live/bare", "cls"]))
    lines.append("")
    rows = []
    for name, visits in s["widgets"].items():
        f, c = visits.get("first", {}), visits.get("cached", {})
        rows.append([name, fmt(f.get("recompute_ms_p50"), 1), fmt(f.get("recompute_ms_p95"), 1),
                     fmt(c.get("recompute_ms_p50"), 1), fmt(c.get("recompute_ms_p95"), 1), str(f.get("n", 0))])
    lines.append(table(rows, ["widget", "p50 first", "p95 first", "p50 cached", "p95 cached", "n"]))
    lines.append("")
    failed = [t for t in result["targets"] if not t["met"]]
    lines.append(f"targets: {len(result['targets']) - len(failed)}/{len(result['targets'])} met")
    for t in failed:
        lines.append(f"  NOT MET  {t['target']}: {t['what']}: {fmt(t['value'], 2)} (limit {fmt(t['limit'], 2)})")
    if result["raw"].get("console_errors"):
        lines.append(f"console errors during the bench: {len(result['raw']['console_errors'])}")
        lines += [f"  {e}" for e in result["raw"]["console_errors"][:10]]
    return "\n".join(lines)


def chromium_version() -> str:
    try:
        return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "chromium (version unknown)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (the median is reported; >= 5)")
    parser.add_argument("--site", type=Path, default=REPO / "_site", help="the built site to measure")
    parser.add_argument("--out", type=Path, default=REPO / "_bench" / "latest.json")
    parser.add_argument("--pages", nargs="*", help="pages to measure (default: index.html and every lesson)")
    parser.add_argument("--skip-build", action="store_true", help="do not time the build")
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)  # internal: the server process
    args = parser.parse_args(argv)
    if args.serve:
        serve_forever(args.serve)
        return 0
    if not (args.site / "index.html").is_file():
        print(f"{args.site}/index.html is missing: run `python build.py` (or `make build`) first", file=sys.stderr)
        return 1
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: `apt-get install -y chromium` (or `make chromium`)", file=sys.stderr)
        return 1
    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    started = time.time()
    load_before = os.getloadavg()[0]
    if load_before > 1.5:
        log(f"note: the load average is {load_before:.1f} on {os.cpu_count()} CPUs; other work skews the figures")
    log(f"timing {args.runs} full builds and {args.runs} rebuilds ...")
    build = {"build_s": None, "rebuild_s": None, "rebuild_change": "skipped"} if args.skip_build else time_builds(args.runs)
    pages = args.pages or lesson_pages(args.site)
    log(f"timing {', '.join(pages)} and the bare Pyodide page, {args.runs} runs, first + cached visit ...")
    raw = time_pages(args.site.resolve(), args.runs, pages, log)
    summary = summarize(raw)
    result = {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "runs": args.runs, "seconds": round(time.time() - started),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "chromium": chromium_version(), "load_before": load_before, "load_after": os.getloadavg()[0]},
        "build": build, "summary": summary, "raw": raw,
    }
    result["targets"] = check_targets(summary)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    print(report(result))
    print(f"\nwritten {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
