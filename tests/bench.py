"""Speed and size figures of the built site (a benchmark, not a test): `make bench` = `python -m tests.bench`.

Everything is measured in one run on this machine, headless Debian Chromium against a local static server, in the
form a host publishes: the built site is first made into `make dist`'s folder (sitegen/dist.py: static/ under
v/<hash>/, NAME.br / NAME.gz beside every file that compresses), which the server `make serve` runs
(sitegen/serve.py) then sends as a well-configured host does: brotli or gzip as the request allows, with those very
bytes, Cache-Control immutable for the content-named folders (v/, py/, pyodide/) and revalidation (Last-Modified,
304) for the rest; the wheel and zips as they are; the course's service worker (sw.js) registered as on the real
site. The bare-Pyodide reference page goes through the same server, so compressed the same way, as Pyodide's own
CDN sends it. (`--as-built` measures _site/ as it is instead.) Under
two profiles, and every figure is the median of --runs runs (default 5 desktop, 3 phone):

    desktop   viewport 1280x800, no throttling
    phone     viewport 375x812, is_mobile, has_touch, device_scale_factor 2; CPU slowed 4x
              (CDP Emulation.setCPUThrottlingRate) and the network at 1.25 MB/s down, 0.75 MB/s up, 150 ms
              latency (CDP Network.emulateNetworkConditions), set on every page before it navigates.
              The network limit covers the Web Workers' requests too (checked: Pyodide's files arrive at the
              throttled rate). The CPU limit does not reach a dedicated worker (Chromium answers "Operation is only
              supported for pages, not workers"): Python's start-up inside the worker runs at this machine's speed,
              so the phone's live_ms is optimistic; the bare reference runs the same way, so live/bare still
              compares like with like.

The figures (sizes in kB = 1,024 bytes):

    build_s            `python build.py` into an empty folder, the runtime cache warm (a full build)
    rebuild_s          `python build.py` again after one config value changed (vocab_size of one model, +1)
    page_kb            HTML + CSS + JS + data requested before any interaction (no scrolling, no input),
                       the Python runtime excluded; sizes are the files' bytes (what the page needs)
    runtime_kb         what the runtime adds when it loads: runtime files' bytes (see runtime_file())
    transfer_kb        bytes that actually crossed the network while the page loaded, before any interaction:
                       every response's headers + encoded body (CDP encodedDataLength; a 304 counts its headers,
                       a cache hit 0), the page's files and the runtime's, an idle prefetch not included
    runtime_transfer_kb   the runtime files' share of transfer_kb
    runtime_files      runtime files whose body crossed the network (a 200 from the server), and in brackets
                       those only revalidated (304: headers, no body)
    prefetch_kb        what <link rel=prefetch> (Sec-Purpose: prefetch) fetched during the visit, e.g. an outline
                       page warming the cache for the lessons (for information, not in transfer_kb)
    chart_kb           what scrolling every chart into view adds (the chart library, loaded lazily)
    lcp_ms             largest contentful paint, before any interaction
    first_interaction_ms   navigation start -> the DOM shows the answer to the page's first enumerable control
                       (see FIRST_INTERACTION_JS: the first widget that is not a code cell or the
                       bring-your-own-config box and has one of these controls; in it the first <select>
                       with two options, toggle button (aria-pressed=false), checkbox or radio). Measured in a
                       visit of its own (empty cache) that never waits for the runtime: the control is used as
                       soon as rendering has begun (a requestAnimationFrame callback: none comes while the
                       stylesheets block rendering), its widget is set up (widgets.js marks it data-mounted, often
                       while the rest of the page is still being parsed; or the page has loaded, for a page
                       without widgets.js), a frame showing it has been drawn (a message posted from that frame's
                       requestAnimationFrame step arrives after its paint: the first frame, if the widget was set
                       up by then, else the next one after that), and it is enabled; the answer is the
                       widget's `course:updated` event or, for a widget that answers without one, its first DOM
                       mutation (data-busy / data-pending / disabled changes are not answers). Its lcp_ms is the
                       same visit's.
    live_ms            navigation start -> the [data-testid=pyodide-status] element says data-state=ready
                       (a page without that element runs no Python: no live_ms)
                       (the widgets' worker: Python + the course's code; it loads numpy right after, and only
                       the calls marked for numpy wait for it, see site/static/js/worker.js)
    numpy_ms           navigation start -> numpy loaded in that worker (courseRuntime.packages, on the worker's
                       clock), as the bare page loads it (not yet imported), for information: the time that
                       compares with bare_pyodide_ms like for like
    bare_pyodide_ms    the same for a bare page that only loads the same bundled Pyodide + numpy in a worker
    cls                cumulative layout shift (web-vitals session windows), loading and then scrolling
                       the whole page so that every chart draws
    page_kb_gz         page_kb as the server sends it (each file gzip -6), for information
    ready_kb           bytes that crossed the network before live_ms (headers + encoded body of every response
                       that ended before it: CDP's timing of each request)
    round_trips        the longest chain of those requests in which each started after the one before it had
                       ended (the page, its script, the worker, pyodide.js, the wasm ...: each waits a round trip)
    wire_limit_ms      the fastest the profile's network allows that visit: ready_kb at its download rate +
                       round_trips x its latency (phone only: the desktop's loopback has no limit)
    served (runtime)   requests the server itself answered during the load (its own count, so the service
                       worker's requests too), and in brackets those for a runtime file
    sw                 visits whose page was controlled by the service worker
    reference_py_ms    REFERENCE_PY (a fixed pure-Python loop) timed inside Python in the bare page's worker,
                       median over this run's bare visits: the machine's speed, measured in the same run
    exercise_ms        per exercise on the page (issue #48, exercise.js): its declared solution typed into the
                       exercise, 检查 pressed -> graded solved (the cells' worker: the reference and the learner's
                       function on every case; the first exercise of a visit also starts that worker), in ms
    training           the in-page training widget (C5's live run, window.courseTraining): the first step's time
                       after 开始, then steps per second over TRAIN_STEPS steps after TRAIN_WARMUP more (one step per
                       message, the chart drawn as it goes); then the trainer alone in the same worker (the page's
                       one Python, the widgets' worker, since issue #49) at the
                       widget's default size, optimiser and learning rate: TRAIN_STEPS steps after TRAIN_WARMUP, in
                       calls of TRAIN_CHUNK steps; beside it the same calls in CPython on this machine
                       (cpython_training: the site's own experiments.zip, BLAS matmul and the browser's einsum kernels)
    generation         a page with the model that speaks (lesson C2, .c2-speak): generated characters (= tokens) per
                       second of its Python (the widgets' worker, after one warm-up call that fetches and unpacks the
                       stored model): GEN_RUNS continuations of the widget's length at temperature 0.8, top-p 0.95,
                       each with a seed of its own (so no answer comes from the build), each call's time from the
                       call to its answer (the next-token distribution's extra forward pass included); the median
    bpe_500_ms         a page that trains BPE (lesson C1, .c1-bpe): ms for BPE_MERGES merges on the course text in the
                       page's Python (the widgets' worker), as the widget asks for them (c1_bpe_start, then
                       c1_bpe_step: a few merges per message, until done), after one warm-up call
    start-up trace     the widgets' worker's phases (worker.js's trace: its script, each runtime file's fetch,
                       pyodide.js, the wasm's compile + instantiate, loadPyodide, unpacking and importing the course's
                       code, ready, numpy, the first call) in ms since navigation, median over the visits; the last
                       byte of the files ready waits for, ready's distance from it, and Python's own start-up
                       (loadPyodide's end minus the later of the wasm instantiated and the stdlib and lock file in)
    runtime cost       per lesson page and profile (tests/bench_runtime.py, its docstring says how): each
                       Python-backed widget's time to ready, the workers started (loaded / trained / a code cell
                       run), peak JS heap and renderer memory against its budget, training steps/s with the whole
                       renderer (workers included) slowed as a phone's CPU
    server load        `python -m sitegen.serve` alone: LOAD_REQUESTS requests at LOAD_CONCURRENCY concurrent, a
                       new connection each, for the outline page: errors, p50 / p99 / max ms
    Pyodide core       the pinned release's core (no numpy) and, with --candidate, another release's, loaded alone
                       in a worker: files and brotli'd bytes, load_ms, REFERENCE_PY's compute_ms
    recompute p50/p95  per widget: from an input event to the updated DOM, i.e. the widget's `course:updated`
                       event, or else its last DOM mutation once every runtime call and fetch it started has
                       finished, nothing in it is data-busy and its DOM has been quiet for QUIET_MS. Each of the
                       widget's controls is used in turn (range: input, select: change, button: click; the
                       bring-your-own-config box gets a real config pasted before its button is pressed).
                       Phone: first visit only, fewer samples (for information; the target is the desktop's)

Every run uses a fresh browser profile per page (so a fresh HTTP and wasm code cache) and visits the page four
times: "first" (empty cache; it ends once the service worker has kept the course for offline use, kept_ms),
"cached" (a new tab in the same profile: a repeat visit, answered by the service worker), for a lesson "second":
the next lesson (in file order, wrapping round) opened after those two in the same profile, as a learner moving on
to another lesson (its row is listed under that next lesson), and "offline": the page again with no network (the
browser offline and the server refusing every request). The bare reference is measured the same way (first and
cached), interleaved with the pages so both see the same machine load; first_interaction_ms has one more fresh
profile per lesson and run.

Targets, on both profiles unless said (TARGETS_TEXT): first_interaction_ms <= its lcp_ms + 100; the outline
(index.html) transfers <= 150 kB on a first visit; a second lesson page transfers no runtime file (a 304 is not a
transfer; the count of 304s is shown); page_kb <= 400 on a first visit (precomputed answers included);
live_ms <= 1.15 x bare_pyodide_ms; cached live_ms < first live_ms; lcp_ms <= bare_pyodide_ms / 4; cls <= 0.1;
recompute p95 <= 2 x reference_py_ms for every widget (desktop: relative to this machine's speed in this run; on
the machine of README's earlier figures, about twice this one's speed, that is about the 50 ms it had as an
absolute target); phone: bytes before ready <= 6 MB and first live_ms <= its wire limit + the same page's cached
live_ms (no time lost beyond the bytes); a repeat visit gets no runtime file from the server and is controlled by
the service worker; an offline visit is ready with nothing from the network and no failed request.

    python -m tests.bench                     # both profiles; prints the tables, writes _bench/latest.json
    python -m tests.bench --profile desktop --runs 7 --site _site --out _bench/latest.json
    python -m tests.bench --quick             # 1 run per profile, few samples: checks the bench itself
    python -m tests.bench --candidate pyodide@0.29.5   # also time that release's core against the pinned one
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
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sitegen import dist  # noqa: E402
from sitegen.serve import (  # noqa: E402
    CACHE_DIR,
    CompressedBodies,
    CompressingHandler,
    accepted_encodings,
    warm,
)
from sitegen.serve import Server as _ServeServer  # noqa: E402
from tests import bench_runtime  # noqa: E402
from tests.browser_fixtures import CHROMIUM, CHROMIUM_ARGS, _QuietHandler, _QuietServer  # noqa: E402

READY_TIMEOUT_MS = 240_000   # a phone's first visit downloads ~17 MB at 1.25 MB/s
QUIET_MS = 120              # a widget's DOM is "updated" once it has been quiet this long with nothing in flight
SAMPLES_PER_WIDGET = 8      # input events per widget per visit (x runs x visits)
FIRST_INTERACTION_DEADLINE_MS = 240_000
# pending work in a widget (widgets.js): data-busy / data-pending with a value (a status line may keep an empty
# data-busy="" as its "no busy text" slot: that is not pending work)
BUSY_SELECTOR = '[data-busy]:not([data-busy=""]), [data-pending]:not([data-pending=""])'
TARGETS_TEXT = {
    "first_interaction": "first_interaction_ms <= lcp_ms + 100 (same visit)",
    "outline_transfer": "outline transfer_kb <= 150 (first visit)",
    "second_runtime": "a second lesson page transfers no runtime file",
    "lcp": "lcp_ms <= bare_pyodide_ms / 4",
    "live": "live_ms <= 1.15 x bare_pyodide_ms",
    "recompute": "recompute_ms_p95 <= 2 x reference_py_ms (this run's reference Python call), every widget "
                 "(desktop)",
    "cls": "cls <= 0.1",
    "page_kb": "page_kb <= 400 (first visit)",
    "cached": "cached live_ms < first live_ms",
    "ready_bytes": "bytes before ready <= 6 MB (first visit, phone)",
    "wire": "first live_ms <= wire limit + cached live_ms (phone)",
    "sw_repeat": "a repeat visit is answered by the service worker: no runtime file from the server",
    "offline": "an offline visit is answered by the service worker: ready, nothing from the network",
}
LIMITS = {"first_interaction_slack_ms": 100, "outline_transfer_kb": 150, "page_kb": 400, "live_x_bare": 1.15,
          "lcp_x_bare": 0.25, "cls": 0.1, "recompute_x_ref": 2, "ready_bytes": 6_000_000}
OUTLINE = "index.html"


@dataclass(frozen=True)
class Profile:
    """A device to measure as: the browser context's viewport and the throttling set on every page."""
    name: str
    runs: int                                  # default number of runs
    viewport: dict
    mobile: bool = False                       # is_mobile + has_touch
    scale: float = 1                           # device_scale_factor
    cpu_rate: float = 1                        # CDP Emulation.setCPUThrottlingRate (the page's main thread)
    network: dict | None = None                # CDP Network.emulateNetworkConditions
    samples: int = SAMPLES_PER_WIDGET          # recompute samples per widget per visit
    recompute_visits: tuple = ("first", "cached")
    recompute_target: bool = True              # the recompute p95 target applies


PROFILES = {
    "desktop": Profile("desktop", runs=5, viewport={"width": 1280, "height": 800}),
    "phone": Profile("phone", runs=3, viewport={"width": 375, "height": 812}, mobile=True, scale=2, cpu_rate=4,
                     network={"offline": False, "latency": 150, "downloadThroughput": 1.25e6,
                              "uploadThroughput": 0.75e6},
                     samples=4, recompute_visits=("first",), recompute_target=False),
}


def runtime_file(path: str, content_type: str = "") -> bool:
    """Is this site path a file of the Python runtime? Decided by path segments and file type only, so that
    versioned or hashed URLs (pyodide/<version>/..., py/<hash>/..., v/<hash>/pyodide/...) and a second worker for
    the code cells count the same way: a folder named pyodide or py, a worker script (worker.js, code-worker*),
    a .wasm/.zip/.whl file or an application/wasm response. (__bench/ is the bare reference page.)"""
    p = PurePosixPath(path)
    folders, name = p.parts[:-1], p.name
    return (any(f in ("pyodide", "py", "__bench") for f in folders)
            or name == "worker.js" or name.startswith("code-worker")
            or name.endswith((".wasm", ".zip", ".whl"))
            or content_type.split(";")[0].strip() == "application/wasm")


def chart_file(path: str) -> bool:
    """The chart library, loaded lazily (static/vendor/, also under a versioned folder)."""
    return "vendor" in PurePosixPath(path).parts[:-1]


def file_kind(path: str, content_type: str = "") -> str:
    if runtime_file(path, content_type):
        return "runtime"
    return "chart" if chart_file(path) else "page"


# -- the bare reference page: the same bundled Pyodide + numpy, loaded in a worker, nothing else -------------------
def find_pyodide(site: Path) -> str:
    """The site path of the bundled pyodide.js (pyodide/pyodide.js, pyodide/<version>/pyodide.js, ...)."""
    found = sorted(site.glob("pyodide/**/pyodide.js")) or sorted(site.glob("**/pyodide/**/pyodide.js"))
    if not found:
        raise RuntimeError(f"{site}: no pyodide/**/pyodide.js: is this a built site?")
    return found[0].relative_to(site).as_posix()


# A reference Python computation, the same in every bare page (pure Python: it runs on any Pyodide, numpy or not),
# timed inside Python: compares the interpreters' compute speed like for like.
REFERENCE_PY = "sum(i * i % 7 for i in range(300_000))"


def bare_files(pyodide_js: str) -> dict:
    """/__bench/ files: a page that starts a worker which only loads Pyodide and numpy (bare.html); the same page
    with a query names another pyodide.js (`js=`, site-relative), skips numpy (`numpy=0`) and so compares
    releases (core.html is bare.html; the worker reports load_ms, numpy_ms and REFERENCE_PY's compute_ms)."""
    page = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bare Pyodide</title><link rel="icon" href="data:,">
<script src="bare.js"></script></head>
<body><p data-testid="pyodide-status" data-state="loading">loading</p></body></html>
"""
    return {
        "/__bench/bare.html": ("text/html; charset=utf-8", page),
        "/__bench/core.html": ("text/html; charset=utf-8", page),
        "/__bench/bare.js": ("text/javascript", """"use strict";
const worker = new Worker("bare-worker.js" + location.search);
worker.onmessage = (e) => {
  if ("compute_ms" in e.data) { window.courseRuntime.bare.compute_ms = e.data.compute_ms; return; }
  window.courseRuntime = { timings: { total: e.data.total, start: Math.round(e.data.origin - performance.timeOrigin) },
                           bare: e.data };
  const el = document.querySelector("[data-testid=pyodide-status]");
  el.textContent = e.data.ok ? "ready " + e.data.version : "error " + e.data.error;
  el.dataset.state = e.data.ok ? "ready" : "error";
};
"""),
        "/__bench/bare-worker.js": ("text/javascript", """"use strict";
const t0 = performance.now();
const q = new URLSearchParams(self.location.search);
const js = q.get("js") || "__JS__", numpy = q.get("numpy") !== "0";
importScripts("../" + js);
let loadMs = null, numpyMs = null;
loadPyodide({ indexURL: new URL("../" + js.replace(/[^/]*$/, ""), self.location.href).href })
  .then((py) => { loadMs = performance.now() - t0; return py; })
  .then((py) => numpy ? py.loadPackage("numpy", { messageCallback: () => {} }).then(() => py) : py)
  .then((py) => {
    if (numpy) numpyMs = performance.now() - t0;
    postMessage({ ok: true, version: py.version, total: Math.round(performance.now() - t0),
                  origin: performance.timeOrigin, load_ms: loadMs, numpy_ms: numpyMs });
    // after "ready", so the reference does not delay it: the median of 5 runs of REFERENCE_PY, in ms
    postMessage({ compute_ms: py.runPython("import time, statistics\\nts = []\\nfor _ in range(5):\\n"
      + "    t = time.perf_counter(); __REF__; ts.append((time.perf_counter() - t) * 1000)\\nstatistics.median(ts)") });
  }, (e) => postMessage({ ok: false, error: String(e) }));
""".replace("__JS__", pyodide_js).replace("__REF__", REFERENCE_PY)),
    }


class BenchHandler(CompressingHandler, _QuietHandler):
    """The site's files as `make serve` serves them (sitegen/serve.py: brotli/gzip as the request allows, the
    bytes beside each file in a served _dist/, cache rules), quietly, plus under /__bench/: the bare reference
    pages, `stats` (what the server answered since the last `stats?reset=1`: requests, body bytes, paths) and
    `network?offline=1|0` (offline: every other request is refused, the connection closed unanswered)."""
    bare: dict = {}
    lock = threading.Lock()
    stats: dict = {"requests": 0, "body_bytes": 0, "paths": [], "refused": 0}
    offline = False

    def do_GET(self):  # noqa: N802 - stdlib name
        parts = urlsplit(self.path)
        if parts.path == "/__bench/stats":
            return self._control(parts.query)
        if parts.path == "/__bench/network":
            type(self).offline = parts.query == "offline=1"
            return self._send(200, "text/plain", b"ok")
        entry = self.bare.get(parts.path)
        if entry is not None:
            return self._send(200, entry[0], entry[1].encode("utf-8"))
        if parts.path.startswith("/__bench/candidate/") and self.candidate:
            return self._candidate(parts.path.removeprefix("/__bench/candidate/"))
        if self.offline:
            with self.lock:
                self.stats["refused"] += 1
            self.close_connection = True
            return None
        with self.lock:
            self.stats["requests"] += 1
            self.stats["paths"].append(parts.path)
        self._counting = True
        try:
            return super().do_GET()
        finally:
            self._counting = False

    _counting = False
    candidate = ""    # a folder of another Pyodide release's core, served under /__bench/candidate/ (--candidate)

    def send_header(self, keyword, value):
        if self._counting and keyword.lower() == "content-length":
            with self.lock:
                self.stats["body_bytes"] += int(value)
        super().send_header(keyword, value)

    def _send(self, status: int, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _control(self, query: str) -> None:
        with self.lock:
            body = json.dumps(self.stats).encode("utf-8")
            if query == "reset=1":
                type(self).stats = {"requests": 0, "body_bytes": 0, "paths": [], "refused": 0}
        self._send(200, "application/json", body)

    def _candidate(self, rel: str) -> None:
        """The candidate's core files, brotli'd as the pinned release's are (sitegen.dist.compressed, kept)."""
        path = Path(self.candidate) / rel
        if not path.is_file() or ".." in rel:
            return self._send(404, "text/plain", b"not found")
        raw = path.read_bytes()
        ctype = self.guess_type(str(path))
        with self.lock:
            self.stats["requests"] += 1
            self.stats["paths"].append("/__bench/candidate/" + rel)
        coding, body = None, raw
        if dist.compresses(path, len(raw)) and "br" in accepted_encodings(self.headers.get("Accept-Encoding")):
            key = (str(path), "br")
            if key not in _CANDIDATE_BODIES:
                _CANDIDATE_BODIES[key] = dist.compressed(raw, "br")
            if _CANDIDATE_BODIES[key] is not None:
                coding, body = "br", _CANDIDATE_BODIES[key]
        with self.lock:
            self.stats["body_bytes"] += len(body)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", dist.IMMUTABLE)
        if coding:
            self.send_header("Content-Encoding", coding)
        self.end_headers()
        self.wfile.write(body)


_CANDIDATE_BODIES: dict = {}


def serve_forever(directory: str, candidate: str = "") -> None:
    """The server process: prints its port, then serves until killed."""
    handler = type("Handler", (BenchHandler,), {"bare": bare_files(find_pyodide(Path(directory))),
                                                "bodies": CompressedBodies(CACHE_DIR), "candidate": candidate})
    warm(Path(directory), handler.bodies)   # the runtime compressed before the first visit (as a host holds it)
    server = type("BenchServer", (_ServeServer,), {"handle_error": _QuietServer.handle_error})(
        ("127.0.0.1", 0), functools.partial(handler, directory=directory))
    print(server.server_address[1], flush=True)
    server.serve_forever()


class Server:
    """The static server in its own process (as `make serve` is), so the browser driver never competes with it for
    this process's GIL."""

    def __init__(self, directory: Path, candidate: Path | None = None):
        cmd = [sys.executable, "-m", "tests.bench", "--serve", str(directory)]
        if candidate is not None:
            cmd += ["--candidate", str(candidate)]
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True)
        port = self.proc.stdout.readline().strip()
        if not port.isdigit():
            self.stop()
            raise RuntimeError("the bench server did not start")
        self.base = f"http://127.0.0.1:{port}/"

    def control(self, what: str) -> dict:
        """A /__bench/ control request from the bench itself (not the browser): stats, network switch."""
        with urllib.request.urlopen(self.base + "__bench/" + what, timeout=30) as r:
            body = r.read()
        return json.loads(body) if what.startswith("stats") else {}

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

# The first interaction (see the module docstring): added to that visit's page only. Sets window.__benchFirst.result.
FIRST_INTERACTION_JS = r"""
(() => {
  const f = window.__benchFirst = { result: null };
  const DEADLINE_MS = __DEADLINE__, QUIET_MS = 300, NO_REACTION_MS = 30000;
  const SKIP = new Set(["code", "byo-config"]);             // these always need Python: never "enumerable"
  const NOT_ANSWERS = new Set(["data-busy", "data-pending", "data-note", "disabled", "aria-busy"]);
  const BUSY = __BUSY__;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let inflight = 0;                                         // runtime calls in flight (the answer may need Python)
  function track(rt) {
    if (!rt || rt.__benchTracked) return;
    for (const name of ["call", "run"]) {
      if (typeof rt[name] !== "function") continue;
      const f = rt[name].bind(rt);
      rt[name] = (...a) => {
        inflight++;
        const p = f(...a), done = () => { inflight--; };
        Promise.resolve(p).then(done, done);
        return p;
      };
    }
    rt.__benchTracked = true;
  }

  function describe(el) {
    const cls = Array.from(el.classList).filter((c) => !c.startsWith("is-")).slice(0, 2).join(".");
    const t = el.tagName.toLowerCase();
    return t + (el.type && t === "input" ? "[" + el.type + "]" : "") + (cls ? "." + cls : "") +
      (el.dataset.testid ? "[" + el.dataset.testid + "]" : "");
  }
  function precomputed(w) {   // the build's answers (its declared states): a script.precomputed in it or after it
    const next = w.nextElementSibling;
    return w.querySelector("script.precomputed") !== null || (next !== null && next.matches("script.precomputed"));
  }
  function enumerable(w) {                                    // its first control with a finite set of values
    for (const el of w.querySelectorAll("select, button[aria-pressed], input[type=checkbox], input[type=radio]")) {
      if (el.closest("figure.chart") || !el.getClientRects().length) continue;
      if (el.tagName === "SELECT" && el.options.length < 2) continue;
      if (el.getAttribute("aria-pressed") === "true" || (el.type === "radio" && el.checked)) continue;
      return el;
    }
    return null;
  }
  function pick() {   // the first widget that is not a code cell or the config box, with its first such control
    for (const w of document.querySelectorAll(".widget[data-widget]")) {
      if (SKIP.has(w.dataset.widget)) continue;
      const el = enumerable(w);
      if (el) return { w: w, el: el, precomputed: precomputed(w) };
    }
    return null;   // (none parsed yet, or none on the page)
  }
  let dcl = null, loaded = false;
  document.addEventListener("DOMContentLoaded", () => { dcl = performance.now(); }, { once: true });
  const load = new Promise((r) => addEventListener("load", () => { loaded = true; r(); }, { once: true }));
  // the next frame's rAF callback: none comes while the stylesheets block rendering, so once one has, asking for
  // layout does not force one the page itself would not do
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  // a message posted during a frame's requestAnimationFrame callbacks (or the microtasks after them) arrives once
  // that frame has been painted: the usual "after paint" idiom
  const afterPaint = () => new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(0);
  });
  const afterNextPaint = () => frame().then(afterPaint);
  function change() {   // a widget set up (widgets.js marks it data-mounted), the page parsed or loaded
    return new Promise((resolve) => {
      const mo = new MutationObserver(() => { mo.disconnect(); resolve(); });
      mo.observe(document, { subtree: true, attributes: true, attributeFilter: ["data-mounted"] });
      document.addEventListener("DOMContentLoaded", () => { mo.disconnect(); resolve(); }, { once: true });
      load.then(() => { mo.disconnect(); resolve(); });
    });
  }
  async function candidate() {   // the first enumerable control, once rendering has begun and its widget is set up
    await frame();
    let inFrame = true;           // still in that frame's rAF step: its widget, if set up now, is in this frame
    for (;;) {
      const p = pick();
      if (p && (p.w.hasAttribute("data-mounted") || loaded) || (!p && loaded)) {
        await (inFrame ? afterPaint() : afterNextPaint());   // a frame with it drawn
        return p;
      }
      await change();
      inFrame = false;
    }
  }
  const usable = (el) => !el.disabled && !el.closest("fieldset[disabled]");
  function whenUsable(w, el, deadline) {                      // a control that needs Python is disabled until then
    return new Promise((resolve) => {
      if (usable(el)) return resolve(true);
      const mo = new MutationObserver(() => { if (usable(el)) { mo.disconnect(); resolve(true); } });
      mo.observe(w, { subtree: true, attributes: true, attributeFilter: ["disabled"] });
      setTimeout(() => { mo.disconnect(); resolve(usable(el)); }, Math.max(0, deadline - performance.now()));
    });
  }
  function act(el) {
    if (el.tagName === "SELECT") {
      el.selectedIndex = (el.selectedIndex + 1) % el.options.length;
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    } else {
      el.click();
    }
  }

  async function run() {
    const p = await candidate();
    const started = performance.now();
    track(window.courseRuntime);
    if (!p) { f.result = { ms: null, how: "no enumerable control" }; return; }
    const { w, el } = p;
    const deadline = started + DEADLINE_MS;
    const base = { widget: w.dataset.widget, control: describe(el), precomputed: p.precomputed,
                   started_ms: started, dcl_ms: dcl, disabled_at_start: !usable(el) };
    if (!(await whenUsable(w, el, deadline))) {
      f.result = Object.assign(base, { ms: null, how: "never enabled" });
      return;
    }
    let updated = null, first = null, last = null;
    const mo = new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === "attributes" && NOT_ANSWERS.has(r.attributeName)) continue;
        const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        if (node && node.closest(".widget-status")) continue;   // "waiting for Python" is not an answer
        const now = performance.now();
        if (first === null) first = now;
        last = now;
      }
    });
    mo.observe(w, { subtree: true, childList: true, attributes: true, characterData: true });
    const onUpdated = () => { if (updated === null) updated = performance.now(); };
    w.addEventListener("course:updated", onUpdated);
    const acted = performance.now();
    act(el);
    while (updated === null && performance.now() < deadline) {
      await sleep(10);
      const busy = inflight > 0 || w.querySelector(BUSY) !== null;
      if (busy) continue;
      if (first !== null && performance.now() - last >= QUIET_MS) break;
      if (first === null && performance.now() - acted >= NO_REACTION_MS) break;
    }
    mo.disconnect();
    w.removeEventListener("course:updated", onUpdated);
    const end = updated !== null ? updated : first;
    f.result = Object.assign(base, { enabled_ms: acted, ms: end,
                                     how: updated !== null ? "course:updated" : first !== null ? "mutation" : "none" });
  }
  run().catch((e) => { f.result = { ms: null, how: "error: " + e }; });
})();
""".replace("__DEADLINE__", str(FIRST_INTERACTION_DEADLINE_MS)).replace("__BUSY__", json.dumps(BUSY_SELECTOR))

# Interacts with every widget and times each input event to its updated DOM (see the module docstring).
RECOMPUTE_JS = r"""
async ({ samples, quietMs, config, busySelector }) => {
  const BUSY = busySelector;
  const rt = window.courseRuntime;
  let inflight = 0;
  const track = (p) => {
    inflight++;
    const done = () => { inflight--; };
    Promise.resolve(p).then(done, done);
    return p;
  };
  if (rt && !rt.__benchWrapped) {
    for (const name of ["call", "run"]) {   // (whichever of these the runtime client has)
      if (typeof rt[name] !== "function") continue;
      const f = rt[name].bind(rt); rt[name] = (...a) => track(f(...a));
    }
    const fetch0 = window.fetch.bind(window);
    window.fetch = (...a) => track(fetch0(...a));
    rt.__benchWrapped = true;
  }
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const visible = (el) => !el.disabled && el.getClientRects().length > 0 &&
    getComputedStyle(el).visibility !== "hidden" &&
    (!el.checkVisibility || el.checkVisibility({ contentVisibilityAuto: false, visibilityProperty: true }));

  async function settle(root, maxMs) {   // wait until nothing in flight and the DOM under root quiet for quietMs
    let last = performance.now();
    const mo = new MutationObserver(() => { last = performance.now(); });
    mo.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
    const start = performance.now();
    while (performance.now() - start < maxMs) {
      await sleep(25);
      const busy = root.matches(BUSY) || root.querySelector(BUSY) !== null;
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
      const busy = root.matches(BUSY) || root.querySelector(BUSY) !== null;  // widgets.js marks pending work
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
    const began = performance.now();
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
    result[key] = { samples: all, controls: perControl, n_controls: els.length, spent_ms: performance.now() - began };
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
# A page with an in-page training widget (lesson C5). The live run as a learner sees it: press 开始, time the first
# step (worker start, Python, numpy, the text, the first step), let TRAIN_WARMUP steps pass, then the steps per
# second over TRAIN_STEPS steps, one step per message with the chart drawn as it goes; then pause. Then the trainer
# alone, in the same worker (the page's one Python): a fresh run at the widget's default optimiser and learning rate
# (c5_train_start), TRAIN_WARMUP steps in one call, then TRAIN_STEPS steps timed in calls of TRAIN_CHUNK
# (c5_train_step): the Python steps with one message per chunk, what CPython runs in cpython_training.
# Steps TRAIN_WARMUP + 1 .. TRAIN_WARMUP + TRAIN_STEPS contain no held-out evaluation (every 50th step).
TRAIN_WARMUP, TRAIN_STEPS, TRAIN_CHUNK = 5, 40, 20
TRAIN_JS = """async ({warmup, steps, chunk, limitMs}) => {
  const panel = await ({PANEL})({warmup, steps, limitMs});   // (tests/bench_runtime.py: 开始, the live run, 暂停)
  const start = document.querySelector('[data-testid="c5-live-start"]');
  const C = window.courseTrainer;
  if (!panel || !start || !C) return null;
  const box = start.closest(".c5-live");
  const preset = (sel) => {                       // the option the build selected (the widget's default)
    const s = box.querySelector(sel);
    return (Array.from(s.options).find((o) => o.defaultSelected) || s.options[0]).value;
  };
  const optimizer = preset(".c5-live-opt"), multiplier = Number(preset(".c5-live-lr"));
  const run = await C.call("c5_train_start", [await C.text(box.dataset.text), optimizer, multiplier, 0]);
  await C.call("c5_train_step", [run.session, warmup]);
  const t4 = performance.now();
  let n = 0;
  while (n < steps) n += (await C.call("c5_train_step", [run.session, Math.min(chunk, steps - n)])).steps.length;
  return { first_step_ms: panel.first_step_ms, steps_per_s: panel.steps_per_s, steps: panel.steps,
           trainer_steps_per_s: n / ((performance.now() - t4) / 1000), text: box.dataset.text,
           optimizer: optimizer, multiplier: multiplier };
}""".replace("{PANEL}", bench_runtime.TRAIN_JS)

# A page whose model speaks (lesson C2): tokens per second of a continuation in the widgets' worker (see the
# docstring's "generation"). Each seed differs from the build's, so Python answers every timed call.
GEN_RUNS = 3
# Each exercise on the page graded once with its own solution (the text its hidden 看答案 panel holds): ms from
# 检查 to data-solved (or to a feedback that is not "busy": then null and the feedback's state).
EXERCISE_JS = r"""async ({limitMs}) => {
  const out = {};
  for (const root of document.querySelectorAll(".exercise[data-ready]")) {
    const src = root.querySelector(".exercise-source"), t0 = performance.now();
    src.value = root.querySelector(".exercise-solution pre").textContent;
    root.querySelector(".exercise-check").click();
    const state = await new Promise((resolve) => {
      const f = root.querySelector(".exercise-feedback"), until = performance.now() + limitMs;
      (function poll() {
        if (!root.dataset.busy && ["solved", "wrong", "bad"].includes(f.dataset.state)) resolve(f.dataset.state);
        else if (performance.now() > until) resolve("timeout");
        else setTimeout(poll, 20);
      })();
    });
    out[root.dataset.exercise] = state === "solved" ? performance.now() - t0 : null;
    root.querySelector(".exercise-reset").click();   // (leaves nothing in the profile's storage)
  }
  return out;
}"""


GEN_JS = r"""async ({runs, limitMs}) => {
  const root = document.querySelector(".c2-speak"), W = window.courseWidgets;
  if (!root || !W) return null;
  const model = JSON.parse(root.dataset.model), t0 = performance.now();
  const say = (seed) => W.call("c2_speak", ["子曰：“", "0.8", "0", "0.95", String(seed), model]);
  await Promise.race([say(1000), new Promise((_, no) => setTimeout(() => no(new Error("timeout")), limitMs))]);
  const rates = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now(), x = await say(1001 + i);
    rates.push(x.text.length / ((performance.now() - t) / 1000));
  }
  rates.sort((a, b) => a - b);
  return { tokens_per_s: rates[Math.floor(rates.length / 2)], tokens: runs, warm_ms: performance.now() - t0 };
}"""


# A page that trains BPE (lesson C1): BPE_MERGES merges on the course text in the training worker, timed from the
# start call to the last step's answer (see the docstring's "bpe_500_ms"); a warm-up call starts the worker first.
BPE_MERGES = 500
BPE_JS = r"""async ({merges, limitMs}) => {
  const root = document.querySelector(".c1-bpe"), C = window.courseTrainer;
  if (!root || !C) return null;
  const text = await C.text(root.dataset.text);
  await Promise.race([C.call("c1_bpe_start", [text, "gpt2", "0"]),
                      new Promise((_, no) => setTimeout(() => no(new Error("timeout")), limitMs))]);
  const t0 = performance.now(), run = await C.call("c1_bpe_start", [text, "gpt2", String(merges)]);
  let made = 0, calls = 0;
  for (;;) {
    const r = await C.call("c1_bpe_step", [run.session, 1]);
    made += r.steps.length;
    calls += 1;
    if (r.done) break;
  }
  return { ms: performance.now() - t0, merges: made, calls: calls };
}"""


# The same trainer steps in CPython on this machine (the bench's own interpreter, in a process of its own): the
# measured site's experiments.zip on sys.path (the code the page runs), the same entry points called as the worker
# calls them (experiments.api, JSON in and out), the same text, optimiser, learning rate and step counts; with
# CPython's own kernels (BLAS matmul) and with the browser's (einsum, experiments/train/kernels.py), median of
# CPYTHON_REPEATS fresh runs each; BLAS on one thread, as the page's worker has one (and a second thread on this
# shared machine measured slower, not faster, at these sizes). Prints {kernels: steps/s} as JSON.
CPYTHON_REPEATS = 3
CPYTHON_TRAIN = r"""
import json, statistics, sys, time
zip_path, text_path, optimizer, multiplier, warmup, steps, chunk, repeats = sys.argv[1:9]
sys.path.insert(0, zip_path)
from experiments import api
from experiments.lessons.c5_optimization import widgets
from experiments.train import kernels
text = open(text_path, encoding="utf-8").read()
call = lambda name, *args: json.loads(getattr(api, name)(json.dumps(list(args))))
out = {}
for name in ("matmul", "einsum"):
    rates = []
    for _ in range(int(repeats)):
        session = call("c5_train_start", text, optimizer, int(multiplier), 0)["session"]
        widgets._SESSIONS[session]["trainer"].kernels = kernels.get(name)   # (the run's kernels: none by default)
        call("c5_train_step", session, int(warmup))
        t, n = time.perf_counter(), 0
        while n < int(steps):
            n += len(call("c5_train_step", session, min(int(chunk), int(steps) - n))["steps"])
        rates.append(n / (time.perf_counter() - t))
    out[name] = statistics.median(rates)
out["numpy"] = __import__("numpy").__version__
print(json.dumps(out))
"""


def cpython_training(site: Path, text: str, optimizer: str, multiplier: int) -> dict:
    """{"matmul": steps/s, "einsum": steps/s, "numpy": version}: CPYTHON_TRAIN on the measured site's code."""
    zips = sorted(site.glob("py/*/experiments.zip")) or sorted(site.glob("**/py/*/experiments.zip"))
    if not zips:
        raise RuntimeError(f"{site}: no py/<hash>/experiments.zip")
    args = [str(zips[0]), str(site / text), optimizer, str(multiplier), str(TRAIN_WARMUP), str(TRAIN_STEPS),
            str(TRAIN_CHUNK), str(CPYTHON_REPEATS)]
    one_thread = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", CPYTHON_TRAIN, *args], cwd=tempfile.gettempdir(),
                          env={**os.environ, **one_thread}, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError("CPython training failed:\n" + proc.stderr)
    return json.loads(proc.stdout)


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
    """Every request of a browser context (pages and workers): the file's bytes, the bytes that crossed the network
    (headers + encoded body, as CDP's encodedDataLength: Playwright reports a 304 and a cache hit as status 200,
    the body size tells them apart) and whether it was a <link rel=prefetch>."""

    def __init__(self, context, base: str, site: Path):
        self.base, self.site = base, site
        self.items: list[dict] = []
        self.phase = "load"
        self.failed: list[str] = []       # the page's requests that failed in the load window (not the worker's)
        context.on("requestfinished", self._finished)
        context.on("requestfailed", self._failed)

    def _failed(self, request):
        if self.phase == "load" and getattr(request, "service_worker", None) is None:
            self.failed.append(request.url)

    def _finished(self, request):
        url = request.url
        if not url.startswith(self.base):
            self.items.append({"path": url, "phase": self.phase, "bytes": 0, "encoded": 0, "body": 0,
                               "kind": "external", "external": True, "prefetch": False})
            return
        path = urlsplit(url).path.lstrip("/")
        file = self.site / (path or "index.html")
        size = file.stat().st_size if file.is_file() else 0
        start = end = None
        try:
            sizes = request.sizes()
            body, headers = sizes.get("responseBodySize", 0), sizes.get("responseHeadersSize", 0)
            response = request.response()
            ctype = response.headers.get("content-type", "") if response is not None else ""
            prefetch = (request.header_value("sec-purpose") or "").startswith("prefetch")
            timing = request.timing            # startTime: ms since the epoch; responseEnd: ms after it
            if timing.get("startTime", -1) > 0 and timing.get("responseEnd", -1) >= 0:
                start, end = timing["startTime"], timing["startTime"] + timing["responseEnd"]
        except Exception:  # noqa: BLE001 - a request that vanished with its page: count nothing transferred
            body, headers, ctype, prefetch = 0, 0, "", False
        kind = file_kind(path, ctype)
        self.items.append({"path": path, "phase": self.phase, "bytes": size, "kind": kind, "prefetch": prefetch,
                           "encoded": max(0, body + headers), "body": max(0, body), "start": start, "end": end,
                           "sw": getattr(request, "service_worker", None) is not None,
                           "gzip": self.gzip_size(file) if kind == "page" else 0})

    _gz: dict = {}

    @classmethod
    def gzip_size(cls, file: Path) -> int:
        if file not in cls._gz:
            cls._gz[file] = len(gzip.compress(file.read_bytes(), 6)) if file.is_file() else 0
        return cls._gz[file]

    def clear(self):
        self.items = []
        self.failed = []
        self.phase = "load"

    def select(self, *, phase=None, kind=None, prefetch=False, sw=False):
        """The page's own requests (sw=True: the service worker's, e.g. its copy of the course)."""
        return [it for it in self.items if not it.get("external") and it["prefetch"] == prefetch
                and it.get("sw", False) == sw
                and (phase is None or it["phase"] == phase) and (kind is None or it["kind"] == kind)]

    def before(self, origin_ms: float, ready_ms: float | None) -> tuple[int, int]:
        """(bytes, round trips) of the page's requests finished before `ready_ms` after navigation (origin_ms:
        performance.timeOrigin): headers + encoded body, and the longest chain of requests each started after the
        one before it had finished (a request may need the one before it: the page, its script, the worker,
        pyodide.js, its wasm ...), each of which waits for at least one round trip."""
        if ready_ms is None:
            return 0, 0
        cut = origin_ms + ready_ms
        done = sorted((it for it in self.select(phase="load") if it["end"] is not None and it["end"] <= cut),
                      key=lambda it: it["start"])
        depth: list[int] = []
        for i, it in enumerate(done):
            depth.append(1 + max((depth[j] for j in range(i) if done[j]["end"] <= it["start"]), default=0))
        return sum(it["encoded"] for it in done), max(depth, default=0)

    def files(self, *, phase, kind, field="bytes"):
        """What the page needs: each file once (a file fetched twice counts once)."""
        seen, n = set(), 0
        for it in self.select(phase=phase, kind=kind):
            if it["path"] not in seen:
                seen.add(it["path"])
                n += it[field]
        return n

    def transferred(self, *, phase=None, kind=None, prefetch=False):
        """What crossed the network: every response, headers + encoded body."""
        return sum(it["encoded"] for it in self.select(phase=phase, kind=kind, prefetch=prefetch))

    def load_figures(self) -> dict:
        runtime = self.select(phase="load", kind="runtime")
        return {"page_kb": kb(self.files(phase="load", kind="page")),
                "page_kb_gz": kb(self.files(phase="load", kind="page", field="gzip")),
                "runtime_kb": kb(self.files(phase="load", kind="runtime")),
                "transfer_kb": kb(self.transferred(phase="load")),
                "runtime_transfer_kb": kb(self.transferred(phase="load", kind="runtime")),
                "runtime_files": sum(1 for it in runtime if it["body"] > 0),
                "runtime_revalidated": sum(1 for it in runtime if it["body"] == 0 and it["encoded"] > 0),
                "runtime_transferred_paths": sorted({it["path"] for it in runtime if it["body"] > 0}),
                "prefetch_kb": kb(self.transferred(prefetch=True)),
                "sw_kb": kb(sum(it["encoded"] for it in self.select(sw=True)))}


def launch(pw, user_dir: str, profile: Profile):
    return pw.chromium.launch_persistent_context(
        user_dir, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, viewport=profile.viewport,
        is_mobile=profile.mobile, has_touch=profile.mobile, device_scale_factor=profile.scale)


def open_page(context, profile: Profile, url: str, console: list):
    """A new tab with the profile's throttling (set before it navigates), console errors recorded."""
    page = context.new_page()
    page.on("console", lambda m: console.append(f"{url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(f"{url}: {e}"))
    if profile.cpu_rate != 1 or profile.network:
        cdp = context.new_cdp_session(page)
        if profile.network:
            cdp.send("Network.enable")
            cdp.send("Network.emulateNetworkConditions", profile.network)
        if profile.cpu_rate != 1:
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": profile.cpu_rate})
    return page


def wait_ready(page):
    """live_ms: when the page's runtime said ready (None for a page that runs no Python)."""
    page.wait_for_load_state("domcontentloaded", timeout=READY_TIMEOUT_MS)
    sel = "[data-testid=pyodide-status]"   # (wait_for_function would eval a string: the CSP refuses that)
    if page.query_selector(sel) is None:
        return None
    page.wait_for_selector(f"{sel}[data-state=ready], {sel}[data-state=error]", state="attached",
                           timeout=READY_TIMEOUT_MS)
    b = page.evaluate("({ready: window.__bench.ready, error: window.__bench.error})")
    if b["error"]:
        raise RuntimeError(f"{page.url}: the runtime failed: {b['error']}")
    return b["ready"]


# numpy_ms: when the widgets' worker said its deferred packages were in (waits for it; null if they failed, or for
# a page whose runtime defers none, such as the bare reference)
NUMPY_JS = """() => new Promise((resolve) => {
  const rt = window.courseRuntime;
  if (!rt || !("packages" in rt)) { resolve(null); return; }
  const poll = () => { const p = rt.packages; if (p) resolve(p.error ? null : p.at); else setTimeout(poll, 50); };
  poll();
})"""


# the course kept for offline use (offline.js sets <html data-offline> once the service worker's copy of this build
# is complete): ms since navigation when seen, or null after limitMs
KEPT_JS = """(limitMs) => new Promise((resolve) => {
  const t0 = performance.now();
  const poll = () => {
    if (document.documentElement.dataset.offline) resolve(performance.now());
    else if (performance.now() - t0 > limitMs) resolve(null);
    else setTimeout(poll, 100);
  };
  poll();
})"""
# the bare page's figures once its reference computation has run
BARE_JS = """() => new Promise((resolve) => {
  const poll = () => {
    const b = window.courseRuntime && window.courseRuntime.bare;
    if (b && (!b.ok || "compute_ms" in b)) resolve(b); else setTimeout(poll, 50);
  };
  poll();
})"""


def wire_limit_ms(profile: Profile, nbytes: int, round_trips: int) -> float | None:
    """The fastest the profile's network can deliver a visit: its bytes at the download rate plus its chain of
    round trips at the latency (what CDP's emulation adds to each request). None without a network limit."""
    net = profile.network
    if not net:
        return None
    return nbytes / net["downloadThroughput"] * 1000 + round_trips * net["latency"]


def served_figures(stats: dict) -> dict:
    """What the server answered during a visit (its own count: the service worker's requests too)."""
    runtime = [p for p in stats["paths"] if runtime_file(p.lstrip("/"))]
    return {"served_requests": stats["requests"], "served_kb": kb(stats["body_bytes"]),
            "served_runtime": len(runtime), "served_runtime_paths": sorted(set(runtime)),
            "refused": stats["refused"]}


def visit(context, reqs: Requests, url: str, profile: Profile, *, scroll: bool, recompute: bool, config: str,
          console: list, server: Server | None = None, keep: bool = False) -> dict:
    """One visit: load figures; then (scroll) every chart drawn and CLS; then (recompute) every widget used; then
    (keep) wait until the service worker has kept the course for offline use."""
    reqs.clear()
    if server is not None:
        server.control("stats?reset=1")
    page = open_page(context, profile, url, console)
    page.goto(url, wait_until="commit", timeout=READY_TIMEOUT_MS)
    live = wait_ready(page)
    page.wait_for_load_state("load", timeout=READY_TIMEOUT_MS)
    page.wait_for_timeout(300)                   # late page requests (before any interaction) still count
    lcp = page.evaluate("window.__bench.lcpFrozen = true, window.__bench.lcp")
    ready_bytes, trips = reqs.before(page.evaluate("performance.timeOrigin"), live)
    out = {"live_ms": live, "lcp_ms": lcp, **reqs.load_figures(),
           "ready_kb": kb(ready_bytes) if live is not None else None,
           "round_trips": trips if live is not None else None,
           "wire_limit_ms": wire_limit_ms(profile, ready_bytes, trips) if live is not None else None,
           "failed": len(reqs.failed), "sw_served": page.evaluate("!!navigator.serviceWorker && "
                                                                  "!!navigator.serviceWorker.controller"),
           "timings": page.evaluate("window.courseRuntime ? window.courseRuntime.timings || null : null")}
    if server is not None:
        out.update(served_figures(server.control("stats")))
    if "/__bench/" in url and live is not None:
        out["bare"] = page.evaluate(BARE_JS)
    if scroll:
        reqs.phase = "scroll"
        out["charts"] = page.evaluate(SCROLL_JS)
        out["chart_kb"] = kb(reqs.files(phase="scroll", kind="chart"))
    out["cls"] = page.evaluate("window.__bench.cls()")
    if recompute:
        reqs.phase = "input"
        out["recompute"] = page.evaluate(RECOMPUTE_JS, {"samples": profile.samples, "quietMs": QUIET_MS,
                                                        "config": config, "busySelector": BUSY_SELECTOR})
    out["numpy_ms"] = page.evaluate(NUMPY_JS) if live is not None else None
    if live is not None:
        out["trace"] = page.evaluate("window.courseRuntime && window.courseRuntime.trace")
    if recompute and live is not None:
        training = page.evaluate(TRAIN_JS, {"warmup": TRAIN_WARMUP, "steps": TRAIN_STEPS, "chunk": TRAIN_CHUNK,
                                            "limitMs": READY_TIMEOUT_MS})
        if training:
            out["train_steps_per_s"], out["train_first_step_ms"] = training["steps_per_s"], training["first_step_ms"]
            out["trainer_steps_per_s"] = training["trainer_steps_per_s"]
            out["train_setting"] = {k: training[k] for k in ("text", "optimizer", "multiplier")}
        gen = page.evaluate(GEN_JS, {"runs": GEN_RUNS, "limitMs": READY_TIMEOUT_MS})
        if gen:
            out["gen_tokens_per_s"] = gen["tokens_per_s"]
        bpe = page.evaluate(BPE_JS, {"merges": BPE_MERGES, "limitMs": READY_TIMEOUT_MS})
        if bpe:
            out["bpe_500_ms"] = bpe["ms"]
        out["exercise_ms"] = page.evaluate(EXERCISE_JS, {"limitMs": READY_TIMEOUT_MS}) or None
    if keep:
        out["kept_ms"] = page.evaluate(KEPT_JS, READY_TIMEOUT_MS)
    out["prefetch_kb"] = kb(reqs.transferred(prefetch=True))   # (an idle prefetch may come after the load window)
    out["external"] = [it["path"] for it in reqs.items if it.get("external")]
    page.close()
    return out


def interaction_visit(context, url: str, profile: Profile, console: list) -> dict:
    """first_interaction_ms in a fresh profile, not waiting for the runtime; LCP of the same visit."""
    page = open_page(context, profile, url, console)
    page.add_init_script(FIRST_INTERACTION_JS)
    page.goto(url, wait_until="commit", timeout=READY_TIMEOUT_MS)
    page.wait_for_function("() => window.__benchFirst && window.__benchFirst.result !== null", polling=100,
                           timeout=FIRST_INTERACTION_DEADLINE_MS + 30_000)
    result = page.evaluate("window.__benchFirst.result")
    page.wait_for_load_state("load", timeout=READY_TIMEOUT_MS)
    page.wait_for_timeout(300)
    result["lcp_ms"] = page.evaluate("window.__bench.lcp")
    result["first_interaction_ms"] = result.pop("ms")
    result["ready_ms"] = page.evaluate("window.__bench.ready")   # null: Python not ready yet
    page.close()
    return result


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


def has_widgets(site: Path, page: str) -> bool:
    return 'data-widget="' in (site / page).read_text(encoding="utf-8")


def core_pages(site: Path, candidate: Path | None) -> dict:
    """The core-only reference pages (no numpy: a candidate release may have no pinned numpy wheel): the pinned
    Pyodide's, and the candidate's if given, each named by its version."""
    pinned = find_pyodide(site)
    out = {f"pinned {pinned.split('/')[-2]}": (f"__bench/core.html?numpy=0&js={pinned}",
                                                core_kb(site / pinned.rsplit("/", 1)[0]))}
    if candidate is not None:
        version = json.loads((candidate / "package.json").read_text(encoding="utf-8")).get("version", "?")
        out[f"candidate {version}"] = ("__bench/core.html?numpy=0&js=__bench/candidate/pyodide.js",
                                       core_kb(candidate))
    return out


CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def core_kb(folder: Path) -> dict:
    """The bytes of a Pyodide release's core files (what loadPyodide() fetches): as files, and brotli'd as served
    (sitegen.dist.compressed; the zip as it is)."""
    files = [folder / name for name in CORE_FILES]
    served = 0
    for f in files:
        raw = f.read_bytes()
        body = dist.compressed(raw, "br") if dist.compresses(f, len(raw)) else None
        served += len(body if body is not None else raw)
    return {"files_kb": kb(sum(f.stat().st_size for f in files)), "brotli_kb": kb(served),
            "wasm_kb": kb((folder / "pyodide.asm.wasm").stat().st_size)}


def time_profile(site: Path, profile: Profile, runs: int, pages: list[str], log,
                 candidate: Path | None = None) -> dict:
    """Raw samples of one profile: per run, the bare page and each page (first, cached, second, offline), the
    core-only pages (pinned and candidate Pyodide), then one first-interaction visit per page with widgets."""
    from playwright.sync_api import sync_playwright

    server = Server(site, candidate)
    base = server.base
    models = json.loads((site / "data" / "models.json").read_text(encoding="utf-8"))
    config = json.dumps(next(iter(models.values()))["config"], ensure_ascii=False, indent=1)
    lessons = [p for p in pages if p != OUTLINE]
    following = {p: lessons[(i + 1) % len(lessons)] for i, p in enumerate(lessons)} if len(lessons) > 1 else {}
    interactive = [p for p in pages if has_widgets(site, p)]
    cores = core_pages(site, candidate)
    console: list[str] = []
    raw: dict = {"core_files": {name: sizes for name, (_, sizes) in cores.items()}, "bare": [],
                 "pages": {p: [] for p in pages}, "second": {p: [] for p in following.values()},
                 "offline": {p: [] for p in pages}, "core": {name: [] for name in cores},
                 "first_interaction": {p: [] for p in interactive}, "following": following}
    tag = f"[{profile.name}]"

    def fresh(pw):
        user_dir = tempfile.TemporaryDirectory(prefix="bench-profile-")
        context = launch(pw, user_dir.name, profile)
        context.add_init_script(INSTRUMENTS)
        return user_dir, context

    try:
        with sync_playwright() as pw:
            for run in range(runs):
                for target in ["__bench/bare.html"] + pages:
                    bare = target == "__bench/bare.html"
                    user_dir, context = fresh(pw)
                    reqs = Requests(context, base, site)
                    second = offline = None
                    try:
                        visits = {}
                        for which in ("first", "cached"):
                            visits[which] = visit(context, reqs, base + target, profile, scroll=not bare,
                                                  recompute=not bare and which in profile.recompute_visits,
                                                  config=config, console=console, server=server,
                                                  keep=not bare and which == "first")
                        if target in following:
                            after = following[target]
                            second = visit(context, reqs, base + after, profile, scroll=False, recompute=False,
                                           config=config, console=console, server=server)
                            raw["second"][after].append({"after": target, **second})
                        if not bare:      # no network at all: the browser offline, the server refusing
                            server.control("network?offline=1")
                            context.set_offline(True)
                            try:
                                offline = visit(context, reqs, base + target, profile, scroll=False,
                                                recompute=False, config=config, console=console, server=server)
                            finally:
                                context.set_offline(False)
                                server.control("network?offline=0")
                            raw["offline"][target].append(offline)
                    finally:
                        context.close()
                        user_dir.cleanup()
                    (raw["bare"] if bare else raw["pages"][target]).append(visits)
                    first = visits["first"]
                    line = (f"  {tag} run {run + 1}/{runs} {target}: live {fmt(first['live_ms'])} ms "
                            f"(wire limit {fmt(first.get('wire_limit_ms'))} ms, {fmt(first.get('ready_kb'))} kB "
                            f"before ready), cached {fmt(visits['cached']['live_ms'])} ms, transfer "
                            f"{fmt(first['transfer_kb'])} kB")
                    if second is not None:
                        line += (f"; then {following[target]}: transfer {fmt(second['transfer_kb'])} kB, runtime "
                                 f"files {second['runtime_files']} ({second['runtime_revalidated']} revalidated)")
                    if offline is not None:
                        line += (f"; offline: live {fmt(offline['live_ms'])} ms, served "
                                 f"{offline['served_requests']}, failed {offline['failed']}")
                    log(line)
                for name, (url, _) in cores.items():
                    user_dir, context = fresh(pw)
                    reqs = Requests(context, base, site)
                    try:
                        visits = {which: visit(context, reqs, base + url, profile, scroll=False, recompute=False,
                                               config=config, console=console, server=server)
                                  for which in ("first", "cached")}
                    finally:
                        context.close()
                        user_dir.cleanup()
                    raw["core"][name].append(visits)
                    log(f"  {tag} run {run + 1}/{runs} core {name}: load {fmt(visits['first']['bare']['load_ms'])}"
                        f" ms first, {fmt(visits['cached']['bare']['load_ms'])} ms cached, compute "
                        f"{fmt(visits['first']['bare']['compute_ms'], 1)} ms, "
                        f"{fmt(visits['first']['served_kb'])} kB served")
                for page in interactive:
                    user_dir, context = fresh(pw)
                    try:
                        fi = interaction_visit(context, base + page, profile, console)
                    finally:
                        context.close()
                        user_dir.cleanup()
                    raw["first_interaction"][page].append(fi)
                    log(f"  {tag} run {run + 1}/{runs} {page}: first interaction {fmt(fi['first_interaction_ms'])} ms "
                        f"({fi.get('widget')} {fi.get('control')}, {fi.get('how')}), lcp {fmt(fi['lcp_ms'])} ms")
    finally:
        server.stop()
    raw["console_errors"] = console
    trained = [v["train_setting"] for runs_ in raw["pages"].values() for r in runs_ for v in r.values()
               if v.get("train_setting")]
    if trained:
        log(f"  {tag} the same trainer steps in CPython ({CPYTHON_REPEATS} runs per kernel choice) ...")
        raw["cpython_training"] = {**trained[0], **cpython_training(site, trained[0]["text"], trained[0]["optimizer"],
                                                                    trained[0]["multiplier"])}
    return raw


LOAD_KEYS = ("page_kb", "page_kb_gz", "runtime_kb", "transfer_kb", "runtime_transfer_kb", "prefetch_kb", "lcp_ms",
             "live_ms", "numpy_ms", "cls", "train_steps_per_s", "train_first_step_ms", "trainer_steps_per_s",
             "gen_tokens_per_s", "bpe_500_ms",
             "ready_kb", "round_trips", "wire_limit_ms", "served_requests", "served_kb", "kept_ms", "sw_kb")
# the runtime files whose last byte "ready" waits for (the trace's "fetch <file>" phases; numpy's wheel comes after)
READY_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json",
               "experiments.zip")


def trace_summary(traces: list) -> dict | None:
    """The widgets' worker's start-up trace (worker.js: phase -> [start, end] ms since navigation), median start and
    end of each phase over the visits, and what follows from it: `last_byte` (the last of READY_FILES' responses to
    end), `after_last_byte` (ready - last_byte: start-up work that did not overlap the download) and `python`
    (Python's own start-up inside loadPyodide: from the wasm instantiated and the stdlib and lock file in, to
    loadPyodide's end)."""
    traces = [t for t in traces if t]
    if not traces:
        return None
    phases = {}
    for name in dict.fromkeys(k for t in traces for k in t):
        spans = [t[name] for t in traces if name in t]
        phases[name] = [median([a for a, _ in spans]), median([b for _, b in spans])]
    ends = [phases[f"fetch {f}"][1] for f in READY_FILES if f"fetch {f}" in phases]
    last = max(ends) if ends else None
    ready = phases.get("ready", [None, None])[1]
    inputs = [phases[k][1] for k in ("wasm", "fetch python_stdlib.zip", "fetch pyodide-lock.json") if k in phases]
    load = phases.get("loadPyodide")
    return {"phases": phases, "last_byte": last,
            "after_last_byte": None if last is None or ready is None else ready - last,
            "python": None if not inputs or not load else load[1] - max(inputs)}


def summarize(raw: dict) -> dict:
    def agg(visits, key):
        return median([v.get(key) for v in visits])

    def load_row(visits):
        row = {k: agg(visits, k) for k in LOAD_KEYS}
        row["chart_kb"] = agg(visits, "chart_kb")
        row["runtime_files_max"] = max((v["runtime_files"] for v in visits), default=None)
        row["served_runtime_max"] = max((v["served_runtime"] for v in visits if "served_runtime" in v), default=None)
        row["served_max"] = max((v["served_requests"] for v in visits if "served_requests" in v), default=None)
        row["failed_max"] = max((v.get("failed", 0) for v in visits), default=None)
        row["not_ready"] = sum(1 for v in visits if v.get("live_ms") is None)
        row["sw_served"] = sum(1 for v in visits if v.get("sw_served"))
        row["runtime_revalidated"] = agg(visits, "runtime_revalidated")
        row["runtime_transferred_paths"] = sorted({p for v in visits for p in v.get("runtime_transferred_paths", [])})
        row["external_requests"] = sorted({u for v in visits for u in v.get("external", [])})
        row["n"] = len(visits)
        row["trace"] = trace_summary([v.get("trace") for v in visits])
        names = sorted({n for v in visits for n in (v.get("exercise_ms") or {})})
        row["exercise_ms"] = {n: median([(v.get("exercise_ms") or {}).get(n) for v in visits]) for n in names} or None
        return row

    out: dict = {"bare_pyodide_ms": {}, "pages": {}, "widgets": {}, "first_interaction": {}, "core": {},
                 "cpython_training": raw.get("cpython_training")}
    for which in ("first", "cached"):
        out["bare_pyodide_ms"][which] = agg([r[which] for r in raw["bare"]], "live_ms")
    # the reference Python call (REFERENCE_PY in the bare page's worker, after ready), every bare visit of the run
    out["reference_py_ms"] = median([(r[w].get("bare") or {}).get("compute_ms") for r in raw["bare"]
                                     for w in ("first", "cached")])
    for name, runs in raw.get("core", {}).items():
        out["core"][name] = {
            which: {"load_ms": median([(r[which].get("bare") or {}).get("load_ms") for r in runs]),
                    "compute_ms": median([(r[which].get("bare") or {}).get("compute_ms") for r in runs]),
                    "live_ms": median([r[which]["live_ms"] for r in runs]),
                    "served_kb": median([r[which].get("served_kb") for r in runs]),
                    **raw.get("core_files", {}).get(name, {}),
                    "wire_limit_ms": median([r[which].get("wire_limit_ms") for r in runs]), "n": len(runs)}
            for which in ("first", "cached")}
    for page, runs in raw["pages"].items():
        out["pages"][page] = {}
        for which in ("first", "cached"):
            visits = [r[which] for r in runs]
            out["pages"][page][which] = load_row(visits)
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
        seconds = raw["second"].get(page) or []
        if seconds:
            out["pages"][page]["second"] = {**load_row(seconds), "after": sorted({v["after"] for v in seconds})}
        offline = raw.get("offline", {}).get(page) or []
        if offline:
            out["pages"][page]["offline"] = load_row(offline)
    for page, samples in raw["first_interaction"].items():
        fi = [s["first_interaction_ms"] for s in samples]
        lcp = [s["lcp_ms"] for s in samples]
        out["first_interaction"][page] = {
            "first_interaction_ms": median(fi), "lcp_ms": median(lcp),
            "minus_lcp_ms": median([a - b for a, b in zip(fi, lcp) if a is not None and b is not None]),
            "controls": sorted({f"{s.get('widget')} {s.get('control')}" for s in samples}),
            "how": sorted({str(s.get("how")) for s in samples}),
            "precomputed": any(s.get("precomputed") for s in samples),
            "waited_for_enable": sum(1 for s in samples if s.get("disabled_at_start")), "n": len(samples)}
    return out


def check_targets(summary: dict, profile: Profile) -> list[dict]:
    bare = summary["bare_pyodide_ms"]
    results = []

    def add(key, what, value, limit, ok):
        results.append({"target": TARGETS_TEXT[key], "key": key, "what": what, "value": value, "limit": limit,
                        "met": bool(ok)})

    for page, visits in summary["pages"].items():
        for which in ("first", "cached"):
            row, ref = visits[which], bare[which]
            where = f"{page} ({which})"
            if row["lcp_ms"] is not None and ref:
                limit = ref * LIMITS["lcp_x_bare"]
                add("lcp", where, row["lcp_ms"], limit, row["lcp_ms"] <= limit)
            if row["live_ms"] is not None and ref:
                limit = LIMITS["live_x_bare"] * ref
                add("live", where, row["live_ms"], limit, row["live_ms"] <= limit)
            add("cls", where, row["cls"], LIMITS["cls"], row["cls"] is not None and row["cls"] <= LIMITS["cls"])
            if which == "first":
                add("page_kb", where, row["page_kb"], LIMITS["page_kb"], row["page_kb"] <= LIMITS["page_kb"])
                if page == OUTLINE:
                    add("outline_transfer", where, row["transfer_kb"], LIMITS["outline_transfer_kb"],
                        row["transfer_kb"] <= LIMITS["outline_transfer_kb"])
        first, cached = visits["first"], visits["cached"]
        if first["live_ms"] is not None or cached["live_ms"] is not None:
            add("cached", page, cached["live_ms"], first["live_ms"],
                cached["live_ms"] is not None and first["live_ms"] is not None and cached["live_ms"] < first["live_ms"])
        if profile.network and first["live_ms"] is not None:
            limit_kb = LIMITS["ready_bytes"] / 1024
            add("ready_bytes", f"{page} (first)", first["ready_kb"], limit_kb,
                first["ready_kb"] is not None and first["ready_kb"] <= limit_kb)
            wire = first["wire_limit_ms"]
            limit = None if wire is None or cached["live_ms"] is None else wire + cached["live_ms"]
            add("wire", f"{page} (first)", first["live_ms"], limit, limit is not None and first["live_ms"] <= limit)
        add("sw_repeat", f"{page} (cached): runtime files from the server, visits not under the service worker",
            cached["served_runtime_max"], 0,
            cached["served_runtime_max"] == 0 and cached["sw_served"] == cached["n"])
        if "offline" in visits:
            off = visits["offline"]
            needs_python = first["live_ms"] is not None
            add("offline", f"{page} (offline): requests served, failed, visits not ready",
                (off["served_max"] or 0) + (off["failed_max"] or 0) + (off["not_ready"] if needs_python else 0), 0,
                off["served_max"] == 0 and off["failed_max"] == 0 and off["sw_served"] == off["n"]
                and (off["not_ready"] == 0 or not needs_python))
        if "second" in visits:
            s = visits["second"]
            add("second_runtime", f"{page} (second, after {', '.join(s['after'])}): runtime files",
                s["runtime_files_max"], 0, s["runtime_files_max"] == 0)
    for page, fi in summary["first_interaction"].items():
        if fi["how"] == ["no enumerable control"]:   # (a page whose widgets have none: nothing to check)
            continue
        v, lcp = fi["first_interaction_ms"], fi["lcp_ms"]
        limit = None if lcp is None else lcp + LIMITS["first_interaction_slack_ms"]
        add("first_interaction", f"{page} (first)", v, limit, v is not None and limit is not None and v <= limit)
    ref = summary.get("reference_py_ms")
    if profile.recompute_target:
        for name, visits in summary["widgets"].items():
            for which, w in visits.items():
                p95 = w["recompute_ms_p95"]
                if p95 is not None:
                    limit = None if ref is None else LIMITS["recompute_x_ref"] * ref
                    add("recompute", f"{name} ({which})", p95, limit, limit is not None and p95 <= limit)
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


def _visits(s: dict):
    """(page, visit, its figures, "page (visit)") for every visit a profile's summary holds, in table order."""
    for page, visits in s["pages"].items():
        for which in ("first", "cached", "second", "offline"):
            if which in visits:
                yield page, which, visits[which], f"{page} ({which})"


def report_profile(name: str, p: dict) -> str:
    s, targets = p["summary"], p["targets"]
    bare = s["bare_pyodide_ms"]

    def marked(text, key, what):
        """text followed by ✓ or ✗ if a target is checked on it (several checks: ✗ if any fails)."""
        found = [t["met"] for t in targets if t["key"] == key and t["what"] == what]
        return text if not found else text + (" ✓" if all(found) else " ✗")

    settings = p["profile"]
    lines = [f"== {name}: median of {p['runs']} runs; viewport {settings['viewport']['width']}x"
             f"{settings['viewport']['height']}"
             + (f", CPU {settings['cpu_rate']:g}x slower (page thread)" if settings["cpu_rate"] != 1 else "")
             + (f", network {settings['network']['downloadThroughput'] / 1e6:g} MB/s down, "
                f"{settings['network']['latency']:g} ms latency" if settings["network"] else "")
             + f"; bare_pyodide_ms {fmt(bare['first'])} first / {fmt(bare['cached'])} cached", ""]
    rows = []
    for page, which, r, where in _visits(s):
        files = ("—" if r["runtime_files_max"] is None
                 else f"{r['runtime_files_max']} ({fmt(r['runtime_revalidated'])})")
        if which == "second":
            files = marked(files, "second_runtime", f"{page} (second, after {', '.join(r['after'])}): runtime files")
        served = "—" if r.get("served_max") is None else f"{r['served_max']} ({r['served_runtime_max']})"
        if which == "cached":
            served = marked(served, "sw_repeat", f"{page} (cached): runtime files from the server, visits not "
                            "under the service worker")
        elif which == "offline":
            served = marked(served, "offline", f"{page} (offline): requests served, failed, visits not ready")
        rows.append([page, which, marked(fmt(r["page_kb"], 1), "page_kb", where), fmt(r["page_kb_gz"], 1),
                     fmt(r["runtime_kb"]), marked(fmt(r["transfer_kb"], 1), "outline_transfer", where),
                     fmt(r["runtime_transfer_kb"], 1), files, served, f"{r['sw_served']}/{r['n']}",
                     fmt(r["prefetch_kb"]), fmt(r["chart_kb"])])
    lines.append(table(rows, ["page", "visit", "page_kb", "page_kb_gz", "runtime_kb", "transfer_kb",
                              "runtime_transfer_kb", "runtime_files (304)", "served (runtime)", "sw",
                              "prefetch_kb", "chart_kb"]))
    lines.append("")
    rows = []
    for page, which, r, where in _visits(s):
        ref = bare.get(which) if which in ("first", "cached") else None
        fi = s["first_interaction"].get(page) if which == "first" else None
        live = marked(marked(fmt(r["live_ms"]), "live", where), "wire", where)
        rows.append([page, which, marked(fmt(r["lcp_ms"]), "lcp", where),
                     "" if fi is None else marked(fmt(fi["first_interaction_ms"]), "first_interaction", where),
                     "" if fi is None else fmt(fi["lcp_ms"]),
                     live, fmt(r["wire_limit_ms"]) if which == "first" else "",
                     marked(fmt(r["ready_kb"]), "ready_bytes", where) if which == "first" else "",
                     fmt(r["round_trips"]) if which == "first" else "",
                     fmt(ref), fmt(r["live_ms"] / ref if r["live_ms"] and ref else None, 2),
                     fmt(r.get("numpy_ms")), fmt(r["numpy_ms"] / ref if r.get("numpy_ms") and ref else None, 2),
                     marked(fmt(r["cls"], 3), "cls", where) if which in ("first", "cached") else ""])
    lines.append(table(rows, ["page", "visit", "lcp_ms", "first_interaction_ms", "its lcp_ms", "live_ms",
                              "wire_limit_ms", "ready_kb", "round_trips", "bare_pyodide_ms", "live/bare",
                              "numpy_ms", "numpy/bare", "cls"]))
    if settings["network"]:
        lines.append("  wire_limit_ms: ready_kb (every response before ready, headers + encoded body) at "
                     f"{settings['network']['downloadThroughput'] / 1e6:g} MB/s + round_trips (the longest chain of "
                     f"requests each started after the one before it ended) x {settings['network']['latency']:g} ms")
    for page, fi in s["first_interaction"].items():
        lines.append(f"  first interaction on {page}: {', '.join(fi['controls'])}; answered by {', '.join(fi['how'])}"
                     f"{'' if fi['precomputed'] else '; the widget has no precomputed answers'}"
                     + (f"; the control was disabled when first picked in {fi['waited_for_enable']} of {fi['n']} runs"
                        if fi["waited_for_enable"] else ""))
    lines.append("")
    rows = []
    for wname, visits in s["widgets"].items():
        f, c = visits.get("first", {}), visits.get("cached", {})
        rows.append([wname, fmt(f.get("recompute_ms_p50"), 1),
                     marked(fmt(f.get("recompute_ms_p95"), 1), "recompute", f"{wname} (first)"),
                     fmt(c.get("recompute_ms_p50"), 1),
                     marked(fmt(c.get("recompute_ms_p95"), 1), "recompute", f"{wname} (cached)"), str(f.get("n", 0))])
    if rows:
        lines.append(table(rows, ["widget", "p50 first", "p95 first", "p50 cached", "p95 cached", "n"]))
        lines.append("")
    cpy = s.get("cpython_training") or {}
    for page, which, r, _where in _visits(s):   # in-page training (C5's live run and its trainer): for information
        if r.get("train_steps_per_s") is not None:
            page_rate = r.get("trainer_steps_per_s")
            lines.append(f"  training on {page} ({which}): live run {fmt(r['train_steps_per_s'], 1)} steps/s (one "
                         f"step per message, the chart drawn), first step {fmt(r['train_first_step_ms'])} ms after "
                         f"开始; the trainer alone {fmt(page_rate, 1)} steps/s ({TRAIN_STEPS} steps after "
                         f"{TRAIN_WARMUP}, in calls of {TRAIN_CHUNK})")
            if cpy and page_rate:
                lines.append(f"      CPython on this machine, the same steps (numpy {cpy['numpy']}): "
                             f"{fmt(cpy['matmul'], 1)} steps/s with BLAS matmul ({fmt(cpy['matmul'] / page_rate, 1)}"
                             f" x the page), {fmt(cpy['einsum'], 1)} with the browser's einsum kernels "
                             f"({fmt(cpy['einsum'] / page_rate, 1)} x)")
    for page, which, r, _where in _visits(s):   # exercises graded in the page
        for name, ms in sorted((r.get("exercise_ms") or {}).items()):
            lines.append(f"  exercise {name} on {page} ({which}): graded in {fmt(ms)} ms (its solution, every case, "
                         f"in the cells' worker)" if ms is not None else
                         f"  exercise {name} on {page} ({which}): not graded solved")
    for page, which, r, _where in _visits(s):   # the model that speaks (C2): its Python's generation speed
        if r.get("gen_tokens_per_s") is not None:
            lines.append(f"  generation on {page} ({which}): {fmt(r['gen_tokens_per_s'], 1)} tokens/s (the widget's "
                         f"continuation in the widgets' worker, median of {GEN_RUNS})")
    for page, which, r, _where in _visits(s):   # BPE trained in the page (C1): the widget's merges, timed
        if r.get("bpe_500_ms") is not None:
            lines.append(f"  BPE on {page} ({which}): {BPE_MERGES} merges on the course text in "
                         f"{fmt(r['bpe_500_ms'])} ms (a few merges per message to the training worker)")
    for page, which, r, _where in _visits(s):   # the widgets' worker's start-up, phase by phase
        tr = r.get("trace")
        if not tr or which not in ("first", "cached"):
            continue
        rows = [[name, fmt(a), fmt(b), fmt(None if a is None or b is None else b - a)]
                for name, (a, b) in sorted(tr["phases"].items(), key=lambda kv: (kv[1][0], kv[1][1]))]
        lines.append("")
        lines.append(f"  start-up trace, {page} ({which}): ms since navigation; the runtime's last byte at "
                     f"{fmt(tr['last_byte'])}, ready {fmt(tr['after_last_byte'])} ms after it; Python's own "
                     f"start-up {fmt(tr['python'])} ms")
        lines.append(table(rows, ["phase", "start", "end", "ms"]))
    ref = s.get("reference_py_ms")
    lines.append(f"  reference_py_ms {fmt(ref, 1)} ({REFERENCE_PY} in the bare page's worker, median of this run): "
                 f"the recompute limit is {LIMITS['recompute_x_ref']:g} x that = "
                 f"{fmt(None if ref is None else ref * LIMITS['recompute_x_ref'], 1)} ms")
    if s.get("core"):
        rows = []
        for cname, c in s["core"].items():
            f, cc = c["first"], c["cached"]
            rows.append([cname, fmt(f.get("files_kb")), fmt(f.get("wasm_kb")), fmt(f.get("brotli_kb")),
                         fmt(f["served_kb"]), fmt(f["load_ms"]), fmt(cc["load_ms"]), fmt(f["compute_ms"], 1),
                         fmt(cc["compute_ms"], 1)])
        lines.append("")
        lines.append("  Pyodide core alone (no numpy), loadPyodide() in a worker, served brotli'd; compute_ms: "
                     "REFERENCE_PY once it is loaded")
        lines.append(table(rows, ["release", "files_kb", "wasm_kb", "brotli_kb", "served_kb first",
                                  "load_ms first", "load_ms cached", "compute_ms first", "compute_ms cached"]))
    lines.append("")
    failed = [t for t in targets if not t["met"]]
    lines.append(f"targets ({name}): {len(targets) - len(failed)}/{len(targets)} met")
    for key, text in TARGETS_TEXT.items():
        mine = [t for t in targets if t["key"] == key]
        if not mine:
            continue
        bad = [t for t in mine if not t["met"]]
        lines.append(f"  {'✓' if not bad else '✗'} {text}: {len(mine) - len(bad)}/{len(mine)}")
        for t in bad:
            lines.append(f"      ✗ {t['what']}: {fmt(t['value'], 2)} (limit {fmt(t['limit'], 2)})")
    errors = p["raw"].get("console_errors") or []
    if errors:
        lines.append(f"console errors during the bench: {len(errors)}")
        lines += [f"  {e}" for e in errors[:10]]
    return "\n".join(lines)


def report(result: dict) -> str:
    m = result["machine"]
    lines = [f"从0训练LLM bench: {m['chromium']}, {m['cpus']} CPUs, load average {m['load_before']:.1f} -> "
             f"{m['load_after']:.1f}; {result['seconds']} s",
             f"build_s {fmt(result['build']['build_s'], 2)}   rebuild_s {fmt(result['build']['rebuild_s'], 2)}"
             f"   ({result['build']['rebuild_change']})",
             f"served: {result.get('served', 'as built')}"]
    load = result.get("server_load")
    if load:
        lines.append(f"server load (python -m sitegen.serve, the outline page): {load['requests']:,} requests at "
                     f"{load['concurrency']} concurrent, a new connection each: {load['errors']} errors, p50 "
                     f"{fmt(load['p50_ms'], 1)} ms, p99 {fmt(load['p99_ms'], 1)} ms, max {fmt(load['max_ms'], 1)} ms, "
                     f"{fmt(load['per_s'])} requests/s")
    lines.append("")
    for name, p in result["profiles"].items():
        lines += [report_profile(name, p), ""]
    if result.get("runtime"):
        lines += ["the runtime's cost per page (tests/bench_runtime.py)", bench_runtime.report(result["runtime"]), ""]
    return "\n".join(lines).rstrip()


def candidate_folder(spec: str, log) -> Path:
    """The candidate Pyodide's core folder: `spec` itself if it is one, else `npm pack spec` unpacked (cached)."""
    if Path(spec).is_dir():
        return Path(spec).resolve()
    folder = REPO / ".cache" / "candidate" / spec.replace("/", "_")
    if not (folder / "package" / "pyodide.js").is_file():
        log(f"npm pack {spec} ...")
        folder.mkdir(parents=True, exist_ok=True)
        out = subprocess.run(["npm", "pack", spec, "--silent"], cwd=folder, capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
        subprocess.run(["tar", "xzf", out], cwd=folder, check=True)
    return folder / "package"


LOAD_REQUESTS, LOAD_CONCURRENCY = 2000, 50


def server_load(site: Path) -> dict:
    """`python -m sitegen.serve` on the measured site in its own process (as `make serve` runs); LOAD_CONCURRENCY
    threads, each opening a new connection per request (the worst case for the listen backlog), LOAD_REQUESTS
    requests for the outline page (gzip accepted): errors and the time to the whole answer, p50 / p99 / max."""
    import concurrent.futures
    import http.client

    with tempfile.TemporaryDirectory(prefix="bench-load-") as cache:
        proc = subprocess.Popen([sys.executable, "-m", "sitegen.serve", "--directory", str(site), "--cache-dir",
                                 cache, "0"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = int(proc.stdout.readline().rsplit(":", 1)[1].split("/", 1)[0])

            def one(_):
                t0 = time.perf_counter()
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    conn.request("GET", "/index.html", headers={"Accept-Encoding": "gzip"})
                    r = conn.getresponse()
                    ok = r.status == 200 and len(r.read()) == int(r.getheader("Content-Length"))
                    conn.close()
                except OSError:
                    ok = False
                return ok, (time.perf_counter() - t0) * 1000

            started = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(LOAD_CONCURRENCY) as pool:
                results = list(pool.map(one, range(LOAD_REQUESTS)))
            wall = time.perf_counter() - started
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    times = [t for _, t in results]
    return {"requests": LOAD_REQUESTS, "concurrency": LOAD_CONCURRENCY,
            "errors": sum(1 for ok, _ in results if not ok), "p50_ms": percentile(times, 0.5),
            "p99_ms": percentile(times, 0.99), "max_ms": max(times), "per_s": LOAD_REQUESTS / wall}


def chromium_version() -> str:
    try:
        return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "chromium (version unknown)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=("desktop", "phone", "both"), default="both",
                        help="which device profile(s) to measure (default both)")
    parser.add_argument("--runs", type=int, help="runs per figure, every profile (the median is reported; "
                        "default 5 desktop, 3 phone)")
    parser.add_argument("--quick", action="store_true", help="1 run per profile and build, 2 samples per widget: "
                        "checks that the bench works, not a figure to publish")
    parser.add_argument("--site", type=Path, default=REPO / "_site", help="the built site to measure")
    parser.add_argument("--out", type=Path, default=REPO / "_bench" / "latest.json")
    parser.add_argument("--pages", nargs="*", help="pages to measure (default: index.html and every lesson)")
    parser.add_argument("--skip-build", action="store_true", help="do not time the build")
    parser.add_argument("--as-built", action="store_true", help="serve the built site as it is, not `make dist`'s "
                        "form of it (the default: what a host publishes)")
    parser.add_argument("--candidate", metavar="DIR|pyodide@VERSION", help="also time another Pyodide release's "
                        "core against the pinned one (a folder with its pyodide.js, or an npm spec fetched with "
                        "`npm pack` into .cache/candidate/)")
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)  # internal: the server process
    args = parser.parse_args(argv)
    if args.serve:
        serve_forever(args.serve, args.candidate or "")
        return 0
    if not (args.site / "index.html").is_file():
        print(f"{args.site}/index.html is missing: run `python build.py` (or `make build`) first", file=sys.stderr)
        return 1
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: `apt-get install -y chromium` (or `make chromium`)", file=sys.stderr)
        return 1
    if args.runs is not None and args.runs < 1:
        parser.error("--runs must be at least 1")
    names = ["desktop", "phone"] if args.profile == "both" else [args.profile]
    profiles = {}
    for name in names:
        prof = PROFILES[name]
        runs = 1 if args.quick else (args.runs or prof.runs)
        if args.quick:
            prof = Profile(**{**asdict(prof), "samples": 2})
        profiles[name] = (prof, runs)
    build_runs = 1 if args.quick else (args.runs or PROFILES["desktop"].runs)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    started = time.time()
    load_before = os.getloadavg()[0]
    if load_before > 1.5:
        log(f"note: the load average is {load_before:.1f} on {os.cpu_count()} CPUs; other work skews the figures")
    if args.skip_build:
        build = {"build_s": None, "rebuild_s": None, "rebuild_change": "skipped"}
    else:
        log(f"timing {build_runs} full builds and {build_runs} rebuilds ...")
        build = time_builds(build_runs)
    candidate = candidate_folder(args.candidate, log) if args.candidate else None
    work = tempfile.TemporaryDirectory(prefix="bench-dist-")
    site = args.site.resolve()
    if not args.as_built:
        log(f"make dist: {site} -> the published form (v/<hash>/, .br/.gz copies) ...")
        site = Path(work.name) / "_dist"
        dist.make_dist(args.site.resolve(), site)
    pages = args.pages or lesson_pages(site)
    result = {"generated": None, "quick": args.quick, "seconds": None, "machine": None, "build": build,
              "served": "as built" if args.as_built else "make dist", "profiles": {}}
    log(f"server load: {LOAD_REQUESTS} requests at {LOAD_CONCURRENCY} concurrent ...")
    result["server_load"] = server_load(site)
    for name, (prof, runs) in profiles.items():
        log(f"[{name}] timing {', '.join(pages)} and the bare Pyodide page, {runs} runs ...")
        raw = time_profile(site, prof, runs, pages, log, candidate)
        summary = summarize(raw)
        result["profiles"][name] = {"profile": asdict(prof), "runs": runs, "summary": summary,
                                    "targets": check_targets(summary, prof), "raw": raw}
    log(f"the runtime's cost per page (tests/bench_runtime.py): {', '.join(names)} ...")
    result["runtime"] = {"budget_mb": bench_runtime.BUDGET_MB,
                         "rows": bench_runtime.run(site, [p for p in pages if p != OUTLINE], names, log)}
    result["generated"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    result["seconds"] = round(time.time() - started)
    result["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                         "chromium": chromium_version(), "load_before": load_before, "load_after": os.getloadavg()[0]}
    work.cleanup()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    print(report(result))
    print(f"\nwritten {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
