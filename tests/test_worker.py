"""The Web Worker bridge in real headless Chromium: Pyodide + numpy load from the site itself, calls and code cells
work.

A tiny site is built in a temp dir exactly as build.py lays out _site/ (install_site_runtime: pyodide/<version>/ and
py/<hash>/{worker.js, experiments.zip}; static/js/runtime-client.js), served from a sub-path (/course/) to prove no
URL assumes the site root. One page is loaded for the module (Pyodide takes ~3 s to start) inside a PageGuard: the
module fails if anything logged a console error, threw, or asked a host other than 127.0.0.1.
"""
from __future__ import annotations

import functools
import html
import json
import re
import shutil
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from browser_fixtures import CHROMIUM, CHROMIUM_ARGS, DRAW_TIMEOUT_MS, PageGuard, wait_runtime_ready
from experiments import api
from experiments.lessons import entry_points
from experiments.lessons.c1_tokenization import live as c1_live
from experiments.widget import data_part, model_ref, with_refs
from sitegen import messages
from sitegen.dist import IMMUTABLE
from sitegen.runtime import install_site_runtime, plan_runtime
from sitegen.serve import StaticHandler
from sitegen.widgets import read_precomputed

ROOT = Path(__file__).resolve().parent.parent
CPYTHON_VALUE = 393216 * 262144  # 103079215104: what the same numpy expression gives under 64-bit CPython

PAGE = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>runtime test</title>
<link rel="icon" href="data:,">
<script defer src="static/js/messages.js"></script>
<script defer src="static/js/runtime-client.js" data-worker="{worker}" data-preload='{preload}'></script>
</head><body>
<p class="runtime-status" data-testid="pyodide-status" role="status" aria-live="polite"></p>
</body></html>
"""

# Records every data-state the status element takes, from before the first paint.
RECORD_STATES = """
window.__states = [];
new MutationObserver((records) => {
  for (const r of records) {
    const el = r.target;
    if (el.dataset && el.dataset.testid === "pyodide-status") {
      const s = el.dataset.state;
      if (window.__states[window.__states.length - 1] !== s) window.__states.push(s);
    }
  }
}).observe(document, { attributes: true, attributeFilter: ["data-state"], subtree: true });
"""


def write_messages(site: Path) -> None:
    """The learner message table and messages.js, which every page's script file starts with (sitegen/scripts.py)."""
    (site / "static" / "js" / "messages.js").write_text(
        messages.prelude(messages.load(ROOT), ROOT / "site" / "static" / "js"), encoding="utf-8")


@pytest.fixture(scope="module")
def worker_site(tmp_path_factory) -> Path:
    """The tiny site's root folder (the site itself is its course/ folder)."""
    root = tmp_path_factory.mktemp("worker-site")
    site = root / "course"
    plan = plan_runtime()
    install_site_runtime(site, plan=plan)
    (site / "static" / "js").mkdir(parents=True)
    shutil.copyfile(ROOT / "site" / "static" / "js" / "runtime-client.js", site / "static" / "js" / "runtime-client.js")
    write_messages(site)
    (site / "index.html").write_text(PAGE.replace("{worker}", plan.worker_url)
                                     .replace("{preload}", json.dumps(plan.preloads())), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def site_url(worker_site, http_serve) -> str:
    return http_serve(worker_site) + "course/index.html"


@pytest.fixture(scope="module")
def runtime_page(module_guard, site_url):
    page = module_guard.new_page()
    page.add_init_script(RECORD_STATES)
    start = time.perf_counter()
    page.goto(site_url)
    wait_runtime_ready(page)
    page.ready_seconds = time.perf_counter() - start
    return page


def run(page, source: str) -> dict:
    return page.evaluate("(src) => courseRuntime.run(src)", source)


def call(page, fn: str, args: list):
    """{ok, result} or {ok, error}, from the courseRuntime.call promise."""
    return page.evaluate("""([fn, args]) => courseRuntime.call(fn, args).then(
        (result) => ({ok: true, result}), (e) => ({ok: false, error: e.message}))""", [fn, args])


def test_status_goes_loading_then_ready(runtime_page):
    assert runtime_page.evaluate("window.__states") == ["loading", "ready"]
    status = runtime_page.locator("[data-testid=pyodide-status]")
    assert status.get_attribute("role") == "status" and status.get_attribute("aria-live") == "polite"
    assert status.text_content() == "Python 运行时已就绪"
    timings = runtime_page.evaluate("courseRuntime.timings")
    print(f"\nruntime ready in {runtime_page.ready_seconds:.2f} s after goto; worker timings (ms): {timings}")
    # the widgets' worker is ready without numpy (worker.js); numpy's time is added once it has loaded
    assert set(timings) - {"numpy"} == {"loadPyodide", "experiments", "total"}
    runtime_page.wait_for_function("courseRuntime.packages !== null")
    assert runtime_page.evaluate("courseRuntime.packages")["error"] is None
    assert set(runtime_page.evaluate("courseRuntime.timings")) == {"loadPyodide", "experiments", "total", "numpy"}


def test_call_ping(runtime_page):
    reply = call(runtime_page, "experiments.api:ping", [1])
    assert reply["ok"], reply
    assert reply["result"]["pong"] == [1] and reply["result"]["python"].startswith("3.12.")


def test_call_missing_function_fails_cleanly_and_page_keeps_working(runtime_page):
    reply = call(runtime_page, "experiments.api:no_such_function", [])
    assert reply == {"ok": False,
                     "error": "AttributeError: module 'experiments.api' has no attribute 'no_such_function'"}
    reply = call(runtime_page, "experiments.no_such_module:f", [])
    assert not reply["ok"] and reply["error"].startswith("ModuleNotFoundError:") and "no_such_module" in reply["error"]
    assert call(runtime_page, "experiments.api:ping", ["again"])["result"]["pong"] == ["again"]


def test_call_error_names_the_exception_type_without_its_module(runtime_page):
    reply = call(runtime_page, "tomllib:loads", [1, 2])  # "[1,2]" is not TOML -> tomllib.TOMLDecodeError
    assert not reply["ok"] and reply["error"].startswith("TOMLDecodeError: "), reply


def test_call_must_return_a_json_string(runtime_page):
    reply = call(runtime_page, "tomllib:loads", [1])  # "[1]" is a TOML table header: returns a dict
    assert reply == {"ok": False, "error": "TypeError: tomllib:loads must return a JSON string"}


def test_run_captures_stdout(runtime_page):
    assert run(runtime_page, "print(2**40)") == {"ok": True, "stdout": "1099511627776\n", "stderr": "",
                                                 "error": None, "stopped": None}
    assert run(runtime_page, "import sys; sys.stderr.write('warn'); print('a', end='')") == {
        "ok": True, "stdout": "a", "stderr": "warn", "error": None, "stopped": None}


def test_run_error_returns_traceback(runtime_page):
    reply = run(runtime_page, "print('before')\nx = 1 / 0\n")
    assert reply["ok"] is False and reply["stdout"] == "before\n"
    assert reply["error"].startswith("Traceback (most recent call last):\n  File \"<cell>\", line 2")
    assert reply["error"].rstrip().endswith("ZeroDivisionError: division by zero")
    assert "_pyodide" not in reply["error"]


def test_each_run_has_fresh_globals(runtime_page):
    assert run(runtime_page, "leak = 42")["ok"]
    reply = run(runtime_page, "print(leak)")
    assert not reply["ok"] and "NameError: name 'leak' is not defined" in reply["error"]


def test_numpy_is_the_bundled_2_0_2(runtime_page):
    assert run(runtime_page, "import numpy\nprint(numpy.__version__)")["stdout"] == "2.0.2\n"


RELEASED = """
import sys, pathlib, numpy
root = pathlib.Path(numpy.__file__).parent
libs = sorted(root.rglob("*.so"))
print(len(libs), sum(p.stat().st_size for p in libs), sum(1 for p in root.rglob("*") if p.suffix in (".pyi", ".h")))
print([m in sys.modules for m in ("numpy.random", "numpy.fft")])
from numpy.random import default_rng
from numpy.fft import rfft
print(default_rng(7).integers(0, 1000, 6).tolist(), [round(abs(complex(v)), 9) for v in rfft([1.0, 2.0, 3.0, 5.0])],
      round(float(numpy.linalg.det(numpy.array([[2.0, 1.0], [1.0, 3.0]]))), 9))
"""


def test_numpy_still_imports_and_computes_once_its_installed_files_are_released(runtime_page):
    """Once numpy has loaded, the worker empties the libraries Pyodide has loaded and removes the files Python never
    reads (worker.js releaseInstalled: issue #49's memory). In the cells' worker (which releases them before it is
    ready): every library is still there by name, with no bytes, no stub or header is left, numpy's compiled
    modules that were not imported yet (numpy.random's, numpy.fft's) import and compute what CPython computes;
    the widgets' worker (which releases them once numpy is in) still answers a call that needs numpy as CPython."""
    reply = run(runtime_page, RELEASED)
    assert reply["ok"], reply["error"]
    counts, fresh, values = reply["stdout"].splitlines()
    n_libs, lib_bytes, stubs = map(int, counts.split())
    assert n_libs == 19 and lib_bytes == 0 and stubs == 0            # (numpy 2.0.2's wheel: 19 libraries)
    assert fresh == "[False, False]"                                 # imported for the first time after the release
    import numpy
    from numpy.fft import rfft
    from numpy.random import default_rng
    assert values == str(default_rng(7).integers(0, 1000, 6).tolist()) + " " + str(
        [round(abs(complex(v)), 9) for v in rfft([1.0, 2.0, 3.0, 5.0])]) + " " + str(
        round(float(numpy.linalg.det(numpy.array([[2.0, 1.0], [1.0, 3.0]]))), 9))
    runtime_page.wait_for_function("courseRuntime.packages !== null")
    assert call(runtime_page, "experiments.api:ffn_int4_probe", []) == {
        "ok": True, "result": json.loads(api.entry_point("ffn_int4_probe")("[]"))}


def test_every_experiments_module_imports_in_the_browser(runtime_page):
    source = (
        "import importlib, pkgutil, experiments\n"
        "names = sorted(m.name for m in pkgutil.walk_packages(experiments.__path__, 'experiments.')\n"
        "               if not m.name.endswith('__main__'))\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "print(' '.join(names))\n")
    reply = run(runtime_page, source)
    assert reply["ok"], reply["error"]
    from sitegen.runtime import lesson_files  # each lesson's Python, shipped at experiments/lessons/<package>/
    shipped = [Path(p) for p in lesson_files(ROOT / "lessons")]
    expected = sorted(".".join(p.with_suffix("").parts).removesuffix(".__init__") for p in
                      [Path("experiments") / p.relative_to(ROOT / "experiments")
                       for p in (ROOT / "experiments").rglob("*.py")] + shipped
                      if p.stem != "__main__" and p != Path("experiments/__init__.py"))
    assert reply["stdout"].split() == expected


def test_wasm32_numpy_integer_overflow_pitfall(runtime_page):
    """numpy's default int is int32 under Pyodide (wasm32): why the engine counts parameters with Python ints."""
    reply = run(runtime_page, "import numpy as np; print(int((393216*np.arange(1,262145))[-1]))")
    assert reply["ok"], reply
    printed = int(reply["stdout"])
    assert CPYTHON_VALUE == 103079215104
    assert printed != CPYTHON_VALUE      # overflowed in the browser (0 with Pyodide 0.27.7 / numpy 2.0.2)
    assert printed == 0
    assert run(runtime_page, "print(393216 * 262144)")["stdout"] == f"{CPYTHON_VALUE}\n"  # Python ints are exact


def marked_calls() -> set[str]:
    """The entry points marked @uses("numpy") (experiments.widget.uses)."""
    return {name for name, (w, ref) in entry_points().items() if "numpy" in getattr(w.resolve(ref), "packages", ())}


def calls_without_numpy(out: Path) -> list[tuple[str, list, list]]:
    """A call of every entry point not marked for numpy, as (entry point, args the page sends, the same args with
    each built-in model's config in its {"$model": alias}'s place): each call the built course answers ahead of
    time ({"$data": path} resolved, as widgets.js does), and one call of each of the others, with a built-in
    model or the page's own values."""
    models = json.loads((out / "data" / "models.json").read_text(encoding="utf-8"))
    config = lambda alias: models[alias]["config"]  # noqa: E731
    published = lambda path: data_part(   # noqa: E731  ({"$data": path}: that part of the published document)
        {path.split("/")[0]: json.loads((out / "data" / f"{path.split('/')[0]}.json").read_text("utf-8"))}, path)
    sent = []
    for page in sorted(out.glob("*.html")):
        for packed in re.findall(r'class="precomputed" data-calls="[^"]*">([^<]*)</script>', page.read_text("utf-8")):
            for key in read_precomputed(packed):
                name, args = key.split(" ", 1)
                if name not in marked_calls():   # (the build answers some marked ones too: C11's recall)
                    sent.append((name, with_refs(json.loads(args), model_ref, published)))
    anchor, moe = model_ref("anchor"), model_ref("qwen3-30b-a3b")   # (a model by its folder's id works too)
    sent += [("c11_moe_ledger", [moe]), ("c11_hybrid_memory", [anchor, 16, 32768]), ("c11_hybrid_chart", [anchor]),
             ("c11_batch_read", [moe, 16]), ("c11_batch_chart", [moe]),
             ("ffn_prefill_decode", [anchor, "BF16", "3.35", "989", "1024", "8"]), ("ffn_share_chart", [3, "1", []]),
             ("ledger_views", [anchor]), ("crossover_at", [anchor, 4096]),
             ("byo_views", [json.dumps(config("qwen3_30b_a3b"))]),   # (a pasted config travels whole)
             ("c3_kv", [model_ref("deepseek-v3"), "1048576"]), ("c3_kv", [model_ref("gemma_4_26b_a4b"), "32768"])]
    # C1's BPE trainer, one session in order (the page's worker is fresh, so its first session is number 1)
    bpe_text = "子曰子曰学而时习之，学而时习之 abab abab"
    sent += [("c1_bpe_start", [bpe_text, "gpt2", "4"]), ("c1_bpe_target", [1, "6"]), ("c1_bpe_step", [1, 1]),
             ("c1_bpe_show", [1, "3", "学而时习之 abab"])]
    c6 = (out / "c6-model-size.html").read_text("utf-8")   # C6's refit: the page's own stored runs and token count
    runs = json.loads(html.unescape(re.search(r'class="c6-own-runs">(.*?)</script>', c6, re.S).group(1)))
    sent.append(("c6_own_refit", [runs, int(re.search(r'data-train-tokens="(\d+)"', c6).group(1))]))
    by_id = {m["id"]: m["config"] for m in models.values()}
    return [(name, args, with_refs(args, lambda a: config(a) if a in models else by_id[a])) for name, args in sent]


def test_the_widgets_worker_is_ready_before_numpy_and_only_marked_calls_wait_for_it(guarded_page, site_url, repo_site,
                                                                                    worker_site):
    """The numpy wheel is held (never answered until the end): the widgets' worker says ready all the same, every
    entry point not marked @uses("numpy") answers what CPython answers, a marked one waits, and runs once the
    wheel arrives."""
    held = []
    guarded_page.context.route("**/*.whl", lambda route: held.append(route))
    guarded_page.goto(site_url)
    wait_runtime_ready(guarded_page)
    deadline = time.monotonic() + DRAW_TIMEOUT_MS / 1000   # (a bound: it asks right after "ready")
    while not held and time.monotonic() < deadline:   # the worker asks for the wheel right after "ready"
        guarded_page.wait_for_timeout(50)             # (polls, letting Playwright deliver the route)
    assert len(held) == 1 and guarded_page.evaluate("courseRuntime.packages") is None
    assert marked_calls() == {"ffn_int4_probe", "baseline_forward", "baseline_prepare", "c6_device_speed",
                              "c5_first_step", "c5_train_start", "c5_train_step", "c5_train_speak",
                              "c6_own_start", "c6_own_step", "c8_train_start", "c8_train_step", "c9_measure",
                              "c9_predicted", "c10_ranks", "c11_recall", "c14_speculate", "c2_speak", "c2_train_start",
                              "c2_train_step", "c2_train_speak", "c3_maps", "c3_train_start", "c3_train_step",
                              "c3_decode", "c1_fair_start", "c1_fair_step"}

    guarded_page.evaluate("""() => { window.__int4 = null;
        courseRuntime.call("experiments.api:ffn_int4_probe", []).then((r) => { window.__int4 = r; }); }""")
    calls = calls_without_numpy(repo_site.out)
    assert {name for name, _, _ in calls} == set(entry_points()) - marked_calls()     # every one of them
    models = worker_site / "course" / "data" / "models.json"   # (the worker reads the built-in models from there)
    models.parent.mkdir(exist_ok=True)
    shutil.copyfile(repo_site.out / "data" / "models.json", models)
    # a model id the course does not have is refused in Chinese; answering it, the worker has read the models
    unknown = call(guarded_page, "experiments.api:ledger_views", [model_ref("no-such-model")])
    assert unknown == {"ok": False, "error": "UnknownModel: 没有这个内置模型：no-such-model（课程的模型列表里没有它）"}
    # (a call that waited for numpy would never be answered. The worker answers an unmarked call in the task that
    # receives it, and replies arrive in order: so once a ping sent after all of them is answered, a call still
    # without its answer is one that waits; no clock is involved)
    replies = guarded_page.evaluate("""(calls) => {
        const replies = calls.map(([name, args]) => {
          const reply = { ok: false, r: "not answered" };
          courseRuntime.call("experiments.api:" + name, args).then(
            (r) => { reply.ok = true; reply.r = JSON.stringify(r); },
            (e) => { reply.r = e.message; });
          return reply;
        });
        return courseRuntime.call("experiments.api:ping", ["after the calls"]).then(() => replies);
      }""", [(name, args) for name, args, _ in calls])
    c1_live.reset()   # (CPython replays C1's session from number 1, as the fresh worker did)
    for (name, _, configs), reply in zip(calls, replies):    # a model sent by its id == its config sent whole
        assert reply["ok"], (name, reply["r"])
        assert json.loads(reply["r"]) == json.loads(api.entry_point(name)(json.dumps(configs))), name

    assert guarded_page.evaluate("window.__int4") is None          # still waiting for numpy, after all of those

    held[0].continue_()
    guarded_page.wait_for_function("window.__int4 !== null", timeout=60_000)
    assert guarded_page.evaluate("window.__int4") == json.loads(api.entry_point("ffn_int4_probe")("[]"))
    packages = guarded_page.evaluate("courseRuntime.packages")
    assert packages["names"] == ["numpy"] and packages["error"] is None and packages["at"] > 0


def test_numpy_that_fails_to_load_fails_only_the_calls_that_need_it(browser, site_url):
    """The numpy wheel is refused: the widgets' worker stays ready, a marked call (asked after the failure too)
    answers with a Chinese error that names numpy, and every other call still works."""
    guard = PageGuard(browser.new_context())
    try:
        guard.context.route("**/*.whl", lambda route: route.abort())
        page = guard.new_page()
        page.goto(site_url)
        wait_runtime_ready(page)
        failed = {"ok": False, "error": "RuntimeError: 这一项要用 numpy，但它未能加载。"}
        assert call(page, "experiments.api:ffn_int4_probe", []) == failed
        assert page.evaluate("courseRuntime.packages.error")
        assert call(page, "experiments.api:ffn_int4_probe", []) == failed        # after the failure is known
        assert page.evaluate("courseRuntime.state") == "ready"
        assert call(page, "experiments.api:ping", ["still"])["result"]["pong"] == ["still"]
    finally:
        guard.context.close()
    assert guard.external_requests == [] and guard.page_errors == []  # (the refused wheel logs console errors)


class _CachedHandler(StaticHandler):
    """The tiny site as a host serves its content-named files (docs/publishing.md): cacheable for a year."""

    def cache_control(self, rel: str) -> str:
        return IMMUTABLE

    def log_message(self, format, *args):  # noqa: A002 - signature of the stdlib
        pass


def test_a_first_visit_prefetches_the_pyodide_files_and_each_crosses_the_network_once(browser, worker_site, tmp_path):
    """runtime-client.js prefetches the files Python's start-up waits for (no service worker controls the page; after
    the first paint; prefetches, not preloads, so the page keeps no copy of their bodies) and the worker's own
    requests for them join those downloads in the HTTP cache: each file's body arrives once.
    experiments.zip is asked for by the worker alone, after its wasm has been instantiated (worker.js's trace).
    A profile on disk, as a learner's, and no request interception (either would keep the HTTP cache from working:
    an in-memory cache keeps no entry as large as the wasm, and routed requests bypass it)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_CachedHandler, directory=str(worker_site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.browser_type.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                             headless=True, args=CHROMIUM_ARGS)
    bodies: dict[str, list[int]] = {}
    errors: list[str] = []
    context.on("requestfinished", lambda r: bodies.setdefault(r.url.rsplit("/", 1)[-1], []).append(
        r.sizes()["responseBodySize"]))
    context.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/course/index.html")
        wait_runtime_ready(page)
        preloaded = page.evaluate("""Array.from(document.querySelectorAll("link[rel=prefetch]"),
                                                (l) => [l.href.split("/").pop(), l.as])""")
        trace = page.evaluate("courseRuntime.trace")
    finally:
        context.close()
        server.shutdown()
        server.server_close()
    assert preloaded == [[url.rsplit("/", 1)[-1], kind] for url, kind in plan_runtime().preloads()]
    for name, _ in preloaded:   # the page's request and the worker's, one body
        assert len(bodies[name]) == 2 and len([b for b in bodies[name] if b > 0]) == 1, (name, bodies[name])
    assert "experiments.zip" not in dict(preloaded) and len(bodies["experiments.zip"]) == 1
    assert trace["fetch experiments.zip"][0] >= trace["wasm"][1] - 1
    assert errors == []


def test_requests_before_ready_are_queued(guarded_page, site_url):
    guarded_page.goto(site_url)
    # asked at once, long before Pyodide is up: answered in order once ready
    replies = guarded_page.evaluate("""Promise.all([
        courseRuntime.call("experiments.api:ping", ["early"]),
        courseRuntime.run("print('early run')")])""")
    assert replies[0]["pong"] == ["early"] and replies[1]["stdout"] == "early run\n"
    assert guarded_page.get_attribute("[data-testid=pyodide-status]", "data-state") == "ready"


def test_call_answers_while_a_run_loops_and_stop_frees_the_queue(runtime_page):
    """Learner code runs in its own worker: a call is answered while a run loops; a run queued behind the loop
    waits, visibly pending, and runs in the fresh worker once the loop is stopped."""
    reply = runtime_page.evaluate("""async () => {
        const states = [];
        let running;
        const started = new Promise((res) => { running = res; });
        const loop = courseRuntime.cells.submit("while True:\\n    pass", (s) => {
            states.push("loop:" + s); if (s === "running") running(); });
        const next = courseRuntime.cells.submit("print('second')", (s) => states.push("next:" + s));
        await started;
        const pong = await courseRuntime.call("experiments.api:ping", ["while looping"]);
        loop.stop();
        return {pong: pong.pong, loop: await loop.done, next: await next.done, states: states};
    }""")
    assert reply["pong"] == ["while looping"]
    assert reply["loop"] == {"ok": False, "stdout": "", "stderr": "", "error": "已停止运行。", "stopped": "stopped"}
    assert reply["next"] == {"ok": True, "stdout": "second\n", "stderr": "", "error": None, "stopped": None}
    # (the cells' worker is up from the tests above: the loop starts at once, the second run waits for it)
    assert reply["states"] == ["loop:pending", "loop:running", "next:pending", "next:running"]


def test_run_past_the_time_limit_is_stopped_with_what_it_printed(runtime_page):
    runtime_page.evaluate("courseRuntime.cells.timeLimitMs = 800")
    try:
        reply = run(runtime_page, "import sys, time\nprint('tick')\nsys.stderr.write('warn\\n')\n"
                                  "while True:\n    time.sleep(0.05)")
    finally:
        runtime_page.evaluate("courseRuntime.cells.timeLimitMs = 10000")
    assert reply == {"ok": False, "stdout": "tick\n", "stderr": "warn\n", "stopped": "timeout",
                     "error": "运行超过 0.8 秒，已自动停止。请检查是否有死循环，或把计算规模改小后再运行。"}
    assert run(runtime_page, "print('next')")["stdout"] == "next\n"


def test_output_is_streamed_and_capped(runtime_page):
    """Output arrives while a run goes on; a run keeps at most 100,000 characters."""
    reply = runtime_page.evaluate("""async () => {
        const parts = [];
        const job = courseRuntime.cells.submit(
            "import time\\nfor i in range(3):\\n    print(i)\\n    time.sleep(0.15)\\n"
            + "print('x' * 60000)\\nprint('y' * 60000)",
            null, (stdout, stderr) => parts.push(stdout));
        const r = await job.done;
        return {parts: parts.slice(0, 3), stdout: r.stdout};
    }""")
    assert reply["parts"] == ["0\n", "0\n1\n", "0\n1\n2\n"]
    assert reply["stdout"] == ("0\n1\n2\n" + "x" * 60000 + "\n" + "y" * (100000 - 60007)
                               + "\n……（输出超过 100,000 个字符，其余未显示）\n")


def test_page_was_clean(runtime_page, module_guard):
    """No console error, no page error, no request to a non-local host (the module teardown checks again)."""
    module_guard.assert_clean()


def test_guard_catches_non_local_requests_from_page_and_worker(browser, tmp_path, http_serve):
    """The guard itself: a request to another host, from the page or a worker, is aborted and recorded."""
    (tmp_path / "leak.html").write_text("""<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">
<script>
fetch("http://offline-check.invalid/page").catch(() => {});
new Worker(URL.createObjectURL(new Blob(
  ['fetch("http://offline-check.invalid/worker").catch(() => {})'], {type: "text/javascript"})));
</script>""", encoding="utf-8")
    # A second browser whose resolver knows only loopback: even a request the guard missed could not leave.
    args = CHROMIUM_ARGS + ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]
    sealed = browser.browser_type.launch(executable_path=CHROMIUM, headless=True, args=args)
    try:
        guard = PageGuard(sealed.new_context())
        page = guard.new_page()
        page.goto(http_serve(tmp_path) + "leak.html")
        deadline = time.monotonic() + DRAW_TIMEOUT_MS / 1000   # (a bound, reached only on failure)
        while len(guard.external_requests) < 2 and time.monotonic() < deadline:
            page.wait_for_timeout(100)
    finally:
        sealed.close()
    assert sorted(guard.external_requests) == ["GET http://offline-check.invalid/page",
                                               "GET http://offline-check.invalid/worker"]
    assert guard.page_errors == []  # (the aborted fetch also logs a console error: recorded, which is right)


def test_load_failure_is_shown_and_calls_fail_fast(browser, tmp_path, http_serve):
    """A site without pyodide/: the status says error in Chinese; calls and runs answer with that error."""
    site = tmp_path / "broken"
    (site / "static" / "js").mkdir(parents=True)
    for name in ("worker.js", "runtime-client.js"):
        shutil.copyfile(ROOT / "site" / "static" / "js" / name, site / "static" / "js" / name)
    write_messages(site)
    (site / "index.html").write_text(PAGE.replace("{worker}", "static/js/worker.js").replace("{preload}", "[]"),
                                     encoding="utf-8")
    guard = PageGuard(browser.new_context())
    try:
        page = guard.new_page()
        page.goto(http_serve(site) + "index.html")
        status = page.wait_for_selector("[data-testid=pyodide-status][data-state=error]", state="attached",
                                        timeout=DRAW_TIMEOUT_MS)
        assert status.text_content().startswith("运行时加载失败：")
        reply = call(page, "experiments.api:ping", [1])
        assert not reply["ok"] and reply["error"].startswith("RuntimeError: Python 运行时加载失败：")
        assert run(page, "print(1)")["ok"] is False
        assert page.evaluate("courseRuntime.ready.then(() => 'ready', (e) => 'rejected')") == "rejected"
    finally:
        guard.context.close()
    assert guard.external_requests == [] and guard.page_errors == []  # (the 404 itself logs a console error)
