"""Answers before Python (issue #13): every enumerable control of both lessons answers from what the build computed,
with the Python runtime's files blocked; the same controls give the same texts once the runtime is ready; what
needs Python says so beside the controls and runs once the runtime is there; and the widget bugs of #13.6.

The real course is built once (tests/build_fixtures.py: repo_site). The blocked pages abort every request under
pyodide/ and py/ (so the runtime can never load) in a context of their own: the aborted loads log console
errors by design, so that context is checked for uncaught page errors and outside requests only.
"""
from __future__ import annotations

import contextlib
import functools
import json
import re
import threading
from pathlib import Path

import pytest

from browser_fixtures import DRAW_TIMEOUT_MS, _is_local, _QuietHandler, _QuietServer, wait_runtime_ready
from experiments import lessons
from experiments.ledger import build_ledger
from experiments.lessons.c4_ffn_deep_read import DEPTH_DEFAULTS, extra
from experiments.lessons.c4_ffn_deep_read import calc as ffn
from experiments.lessons.c4_ffn_deep_read.widgets import BATCH_CHOICES, DTYPE_CHOICES
from experiments.lessons.c4_transformer_block.widgets import (
    crossover_series,
    ledger_compare,
    ledger_layer,
    ledger_total,
)
from sitegen.widgets import read_precomputed

ROOT = Path(__file__).resolve().parent.parent
C4, FFN, C11 = "c4-transformer-block.html", "c4-ffn-deep-read.html", "c11-moe-linear-attention.html"
CITATIONS = json.loads((ROOT / "data" / "citations.json").read_text(encoding="utf-8"))
H100 = (str(CITATIONS["h100_bandwidth_tbps"]["value"]), str(CITATIONS["h100_bf16_tflops"]["value"]))
A100 = (str(CITATIONS["a100_bandwidth_tbps"]["value"]), str(CITATIONS["a100_bf16_tflops"]["value"]))


def local_page(browser, init_script: str | None = None, route=None, console: bool = False):
    """A new page in a context of its own that aborts every request to another host; those requests and the page's
    uncaught errors (with console=True, its console errors too) are collected in page.problems. route: (pattern,
    handler) pairs set after the local-only rule (so they take precedence)."""
    context = browser.new_context()
    if init_script:
        context.add_init_script(init_script)
    problems: list[str] = []
    context.route("**/*", lambda r: r.continue_() if _is_local(r.request.url)
                  else (problems.append(r.request.url), r.abort()))
    for pattern, handler in route or []:
        context.route(pattern, handler)
    page = context.new_page()
    page.on("pageerror", lambda e: problems.append(str(e)))
    if console:
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.problems = problems
    return page


def blocked_page(browser, url: str, init_script: str | None = None):
    """A page whose Python runtime cannot load (pyodide/ and py/ aborted); fails on page errors, outside requests."""
    abort = lambda r: r.abort()  # noqa: E731
    page = local_page(browser, init_script, route=[("**/pyodide/**", abort), ("**/py/**", abort)])
    page.goto(url)
    return page


def pressed(page, model: str) -> None:
    """Wait until the tracker's button for model is the pressed one."""
    page.wait_for_function("(m) => document.querySelector(`button.tracker-model[data-model='${m}']`)"
                           ".getAttribute('aria-pressed') === 'true'", arg=model)


def root(page, name: str):
    return page.locator(f'.widget[data-widget="{name}"] .widget-static > *').first


def idle(page, r) -> None:
    page.wait_for_function("(el) => !el.dataset.busy", arg=r.element_handle(), timeout=DRAW_TIMEOUT_MS)


def choose(page, r, selector: str, value: str) -> None:
    r.locator(selector).first.select_option(value)
    idle(page, r)


def tbody(r, selector: str) -> list[list[str]]:
    return r.locator(selector).first.evaluate("""(t) => Array.from(t.querySelectorAll("tbody tr")).map((tr) =>
        Array.from(tr.cells).map((c) => c.textContent.trim()))""")


def text(r, testid: str) -> str:
    return r.locator(f'[data-testid="{testid}"]').first.text_content().strip()


MEMORY_FIELDS = (("mem-params", "params"), ("mem-weights-gb", "weights"), ("mem-tstep", "t_step"),
                 ("mem-bound", "bound"), ("mem-tps", "tok_s_stream"), ("mem-takeover", "takeover"),
                 ("mem-dtype-label", "dtype"))


def drive(page, models, check: bool) -> list:
    """Every enumerable control of both lessons, one at a time from the first state; returns what each showed
    (and, with check, compares it with CPython)."""
    seen = []
    base = page.url.split("?")[0].rsplit("/", 1)[0] + "/"
    page.goto(base + FFN)
    mem = root(page, "ffn-memory")
    first = {"model": "llama7b", "dtype": "BF16", "gpu": "h100", "batch": "1"}
    axes = [("model", ".mem-model", [a for a in models if a != "llama7b"]),
            ("dtype", ".mem-dtype", [d for d in DTYPE_CHOICES if d != "BF16"]),
            ("gpu", ".mem-gpu", ["a100"]), ("batch", ".mem-batch", [str(b) for b in BATCH_CHOICES if b != 1])]
    for key, sel, values in axes:
        for v in values + [first[key]]:
            choose(page, mem, sel, v)
            state = {**first, key: v}
            shown = [text(mem, t) for t, _ in MEMORY_FIELDS] + [tbody(mem, ".mem-batches")]
            seen.append(shown)
            if check:
                bw, peak = A100 if state["gpu"] == "a100" else H100
                cfg = models[state["model"]]["config"]
                r = ffn.decode(cfg, state["dtype"], bw, state["batch"], peak)
                assert shown[:-1] == [r[k] for _, k in MEMORY_FIELDS], state
                series = ffn.batch_series(cfg, state["dtype"], bw, peak)
                assert shown[-1] == [[x["batch"], x["t_step"], x["tok_s_stream"], x["tok_s_total"], x["bound"]]
                                     for x in series["rows"]], state
    tr = root(page, "ffn-training-memory")
    for sel, values in ((".tr-model", list(models) + ["llama7b"]),
                        (".tr-recipe", list(ffn.RECIPE_ZH) + ["mixed_adamw"])):
        for v in values:
            choose(page, tr, sel, v)
            seen.append(text(tr, "tr-total"))
            if check:
                model = v if sel == ".tr-model" else "llama7b"
                recipe = v if sel == ".tr-recipe" else "mixed_adamw"
                assert seen[-1] == ffn.training_memory(models[model]["config"], recipe, 4, 4096, False)["total"]
    moe = root(page, "ffn-moe")
    for v in [a for a in models if ffn.explorable(build_ledger(models[a]["config"]))]:   # the picker's models
        choose(page, moe, ".moe-model", v)
        seen.append(tbody(moe, ".moe-compare"))
    dw = root(page, "ffn-depth-width")
    budgets = dw.locator(".dw-budget option").evaluate_all("(os) => os.map((o) => o.value)")
    for v in budgets[1:] + budgets[:1]:
        choose(page, dw, ".dw-budget", v)
        seen.append([text(dw, "dw-total"), tbody(dw, ".dw-rows")])
        if check:
            r = extra.depth_width(v, DEPTH_DEFAULTS["L"], str(DEPTH_DEFAULTS["T"]))
            assert seen[-1] == [r["now"]["total"], [[x["L"], x["d"], x["d_ff"], x["total"], x["share_total"],
                                                     x["score_vs_ffn"], x["crossover"], x["kv"]] for x in r["rows"]]]
    page.goto(base + C4)
    total = root(page, "ledger-total")
    for a in list(models) + ["anchor"]:
        choose(page, total, ".model-picker", a)
        seen.append(tbody(total, "table"))
        if check:
            lt = ledger_total(build_ledger(models[a]["config"]), models[a]["name"])
            assert seen[-1] == [[r["label"], r["count"], r["share_total"], r["share_backbone"]] for r in lt["rows"]]
    layer = root(page, "ledger-layer")
    for a in list(models) + ["anchor"]:
        choose(page, layer, ".model-picker", a)
        seen.append(tbody(layer, ".layer-columns table"))
        if check:
            ll = ledger_layer(build_ledger(models[a]["config"]))
            assert seen[-1] == [[r["name"], r["shape"], r["count"]] for r in ll["layers"][0]["rows"]]
    compare = root(page, "ledger-compare")
    cols = ["gpt2", "llama7b", "anchor"]
    for i in range(3):
        for a in list(models) + [cols[i]]:
            compare.locator("select.compare-model").nth(i).select_option(a)
            idle(page, compare)
            seen.append(tbody(compare, "table"))
            if check:
                chosen = cols[:i] + [a] + cols[i + 1:]
                data = ledger_compare([(x, models[x]["name"], build_ledger(models[x]["config"])) for x in chosen])
                assert seen[-1] == [[r["label"]] + [c["count"] + c["share"] for c in r["cells"]]
                                    for r in data["rows"]]
    cross = root(page, "crossover")
    for a in list(models) + ["anchor"]:
        choose(page, cross, ".model-picker", a)
        seen.append(cross.locator(".crossover-point").text_content())
        if check:
            assert seen[-1] == crossover_series(build_ledger(models[a]["config"]))["crossover_point"]
    return seen


def test_enumerable_controls_answer_without_python_and_match_python(browser, site, models, guarded_page):
    page = blocked_page(browser, site + FFN)
    offline = drive(page, models, check=True)
    # (the C4 page)
    assert page.evaluate("courseWidgets.answered.python") == 0 and page.evaluate("courseWidgets.answered.build") > 60
    # nothing asked for Python, so no widget says it is waiting or failed
    assert page.locator(".widget-error:not([hidden])").count() == 0
    assert not page.problems, page.problems
    page.context.close()
    guarded_page.goto(site + FFN)
    wait_runtime_ready(guarded_page)
    assert drive(guarded_page, models, check=False) == offline


def test_a_control_that_needs_python_says_so_and_runs_when_ready(browser, site, guarded_page):
    page = blocked_page(browser, site + FFN)
    sw = root(page, "ffn-swiglu-budget")
    note = sw.locator(".widget-runtime")   # (the widget's own runtime line, widgets.js note())
    assert note.text_content().startswith("需要 Python 运行时，正在加载…") or "加载失败" in note.text_content()
    assert not sw.locator(".sw-d").is_disabled()                                  # not a silent disabled control
    page.context.close()
    # with the runtime loading: the request is queued, visibly, then runs
    guarded_page.goto(site + FFN)
    w = root(guarded_page, "ffn-swiglu-budget")
    w.locator(".sw-d").fill("1024")
    w.locator(".sw-d").dispatch_event("change")
    if guarded_page.evaluate("courseRuntime.state") != "ready":
        guarded_page.wait_for_function("(el) => el.dataset.pending === 'python' || !el.dataset.busy",
                                       arg=w.element_handle())
    wait_runtime_ready(guarded_page)
    idle(guarded_page, w)
    assert text(w, "sw-dff") == ffn.swiglu_budget(1024, "8/3", 3, 256)["mine"]["d_ff"]
    assert w.locator(".widget-status").is_hidden()


def test_each_answers_script_names_its_entry_points_and_no_page_needs_the_models_file(repo_site):
    """A precomputed script's data-calls lists exactly the entry points its keys answer (widgets.js inflates a
    script only for those), and no page preloads data/models.json: its keys name each built-in model by its id,
    as the page's calls do (#47 part 4), so nothing needs the configs to look an answer up."""
    pages = sorted(p for p in repo_site.out.glob("*.html"))
    with_answers = 0
    for page in pages:
        html = page.read_text(encoding="utf-8")
        found = re.findall(r'<script type="application/gzip\+base64" class="precomputed" data-calls="([^"]*)">'
                           r'([^<]*)</script>', html)
        assert len(found) == html.count('class="precomputed"'), page.name
        for calls, packed in found:
            assert calls.split(" ") == sorted({key.split(" ", 1)[0] for key in read_precomputed(packed)}), page.name
        assert 'href="data/models.json"' not in html, page.name
        with_answers += bool(found)
    assert with_answers >= 2 and (repo_site.out / "data" / "models.json").is_file()


MODELS_FETCHES = """
window.__modelsFetches = [];
const fetch0 = window.fetch;
window.fetch = function (input, init) {
  if (String(input).endsWith("data/models.json")) window.__modelsFetches.push(document.body === null ? "head" : "body");
  return fetch0.call(this, input, init);
};
"""


def test_a_page_answers_from_the_build_without_the_models_file(browser, site):
    """With the runtime blocked, C4 inflates its answers and answers its model pickers from them without asking
    for data/models.json: the page's calls name each model by its id, the key the build wrote."""
    page = blocked_page(browser, "about:blank", MODELS_FETCHES)
    requests: list[str] = []
    page.context.on("request", lambda r: requests.append(r.url) if r.url.endswith("data/models.json")
                    and not r.service_worker else None)   # (the page's and its workers'; the offline copy's aside)
    page.goto(site + C4)
    page.wait_for_load_state("load")
    page.wait_for_function("() => courseWidgets.answered.tables === 5")
    r = root(page, "ledger-layer")
    before = page.evaluate("() => courseWidgets.answered.build")
    r.locator(".model-picker").select_option("qwen3_30b_a3b")
    page.wait_for_function("(n) => courseWidgets.answered.build > n", arg=before)
    idle(page, r)
    assert r.locator(".model-name").text_content() == r.locator(".model-picker option:checked").text_content()
    assert page.evaluate("window.__modelsFetches") == [] and requests == [], requests
    assert not page.problems, page.problems
    page.context.close()


def test_the_worker_reads_the_models_once_and_a_recompute_sends_an_id(browser, site, repo_site):
    """The page never sends a built-in model's config: once Python is ready the widgets' worker reads
    data/models.json itself, once (the page's own fetch is never called for it), and a recompute that Python
    answers (C11 served without its build-time answers) sends {"$model": alias} and reads nothing more."""
    html = (repo_site.out / C11).read_text(encoding="utf-8")
    answers = re.compile(r'<script type="application/gzip\+base64" class="precomputed"[^>]*>[^<]*</script>')
    assert len(answers.findall(html)) == 4   # (the recall experiment is the 4th)
    bare = answers.sub("", html)

    def without_answers(route):
        route.fulfill(status=200, content_type="text/html; charset=utf-8", body=bare)
    page = local_page(browser, MODELS_FETCHES, console=True, route=[(f"**/{C11}", without_answers)])
    requests: list[str] = []
    page.context.on("request", lambda r: requests.append(r.url) if r.url.endswith("data/models.json")
                    and not r.service_worker else None)   # (the page's and its workers'; the offline copy's aside)
    page.goto(site + C11)
    wait_runtime_ready(page)
    page.wait_for_function("() => !document.querySelector('.c11-experts').disabled")
    before = page.evaluate("() => courseWidgets.answered.python")
    page.evaluate("""() => { window.__sent = [];
      const call0 = courseRuntime.call;
      courseRuntime.call = (fn, args) => { __sent.push(JSON.stringify(args)); return call0(fn, args); };
      const e = document.querySelector('.c11-experts');
      e.value = String(Number(e.value) + 1); e.dispatchEvent(new Event('change')); }""")
    page.wait_for_function("(n) => courseWidgets.answered.python > n", arg=before)
    sent = page.evaluate("window.__sent")
    assert len(sent) == 1 and json.loads(sent[0])[0] == {"$model": "qwen3_30b_a3b"}, sent
    assert page.evaluate("window.__modelsFetches") == [] and len(requests) == 1, requests
    # an id the course does not have: the widget's error line says so in Chinese (no class name)
    page.evaluate("""() => courseWidgets.call("c11_moe_ledger", [courseWidgets.model("no-such")]).catch((e) =>
      courseWidgets.showError(document.querySelector('.c11-ledger'), e.message))""")
    error = page.locator(".c11-ledger > .widget-error")
    assert error.is_visible() and "没有这个内置模型：no-such（课程的模型列表里没有它）" in error.inner_text()
    assert "Error" not in error.inner_text()
    assert not page.problems, page.problems
    page.context.close()


NO_IDLE = "window.requestIdleCallback = () => 0;"   # the idle-time inflation never comes


def test_each_widgets_answers_inflate_when_it_is_set_up_and_a_click_inflates_nothing_more(browser, site):
    scripts = 5   # C4: tracker, total, layer, comparison, crossover
    page = blocked_page(browser, site + C4, NO_IDLE)    # (no idle time: only what mount starts)
    assert page.locator("script.precomputed").count() == scripts
    page.wait_for_load_state("load")
    page.wait_for_function(f"() => courseWidgets.answered.tables === {scripts}")
    button = page.locator('.widget[data-widget="tracker"] button.tracker-model[aria-pressed="false"]').first
    model = button.get_attribute("data-model")
    button.click()
    page.wait_for_function("() => courseWidgets.answered.build > 0")
    pressed(page, model)
    answered = page.evaluate("courseWidgets.answered")
    assert answered["python"] == 0 and answered["tables"] == scripts
    assert not page.problems, page.problems
    page.context.close()


@pytest.mark.parametrize("corrupt", ["not base64 !!", "bm90IGd6aXA="])   # (the second is base64 of b"not gzip")
def test_a_corrupt_table_is_skipped_and_python_answers(browser, site, corrupt):
    """A precomputed table that does not decode is not an error on the page: its widget asks Python instead, with
    the same answer, and the other widgets' tables still inflate."""
    def serve(route):
        response = route.fetch()
        html = response.text()
        start = html.index('class="precomputed"', html.index('data-widget="tracker"'))
        body, end = html.index(">", start) + 1, html.index("</script>", start)
        route.fulfill(response=response, body=html[:body] + corrupt + html[end:])

    page = local_page(browser, route=[(f"**/{C4}", serve)], console=True)
    page.goto(site + C4)
    wait_runtime_ready(page)
    tracker = page.locator('.widget[data-widget="tracker"]')
    button = tracker.locator('button.tracker-model[aria-pressed="false"]').first
    model = button.get_attribute("data-model")
    button.click()
    pressed(page, model)
    stages = tracker.locator(".stages").text_content()
    assert page.evaluate("courseWidgets.answered.python") > 0
    built = page.evaluate("courseWidgets.answered.build")   # another widget's table still answers
    page.evaluate("""() => { const s = document.querySelector('.widget[data-widget="ledger-total"] select');
      s.selectedIndex = (s.selectedIndex + 1) % s.options.length; s.dispatchEvent(new Event("change")); }""")
    page.wait_for_function("(n) => courseWidgets.answered.build > n", arg=built)
    assert not page.problems, page.problems
    page.context.close()

    whole = blocked_page(browser, site + C4)
    whole.wait_for_load_state("load")
    whole.locator(f'.widget[data-widget="tracker"] button.tracker-model[data-model="{model}"]').click()
    pressed(whole, model)
    assert whole.locator('.widget[data-widget="tracker"] .stages').text_content() == stages
    assert whole.evaluate("courseWidgets.answered.python") == 0
    assert not whole.problems, whole.problems
    whole.context.close()


class _HeldPage(_QuietHandler):
    """Sends HELD's HTML up to HELD_AT, then waits for RELEASE before the rest (a page still being parsed)."""
    HELD, HELD_AT, RELEASE = "", 0, threading.Event()

    def do_GET(self):  # noqa: N802 - stdlib name
        if self.path.split("?")[0] != "/" + self.HELD:
            return super().do_GET()
        body = (Path(self.directory) / self.HELD).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:self.HELD_AT])
        self.wfile.flush()
        self.RELEASE.wait(30)
        self.wfile.write(body[self.HELD_AT:])


@contextlib.contextmanager
def held(site_dir: Path, name: str, at: int):
    """The built site served so that page `name` stops after its first `at` bytes until release() is called."""
    _HeldPage.HELD, _HeldPage.HELD_AT = name, at
    _HeldPage.RELEASE.clear()
    server = _QuietServer(("127.0.0.1", 0), functools.partial(_HeldPage, directory=str(site_dir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{name}", _HeldPage.RELEASE.set
    finally:
        _HeldPage.RELEASE.set()
        server.shutdown()
        server.server_close()


def test_a_widget_answers_while_the_rest_of_the_page_is_still_arriving(browser, repo_site, site):
    """The page's scripts run before its body is parsed (one file, sitegen/scripts.py) and widgets.js sets a widget
    up once the parser has passed it: with C4's HTML held back after the first widget, that widget already answers
    a click, with the same text as on the whole page. The choice reaches the URL once the page is parsed (a
    history.replaceState while parsing would make the browser lay out all that is parsed so far)."""
    html = (repo_site.out / C4).read_bytes()
    second = html.index(b'<div class="widget" data-widget=', html.index(b'class="precomputed"'))
    click_first_tracker_model = """async () => {
      const w = document.querySelector('.widget[data-widget="tracker"]');
      const done = new Promise((r) => w.addEventListener("course:updated", r, { once: true }));
      w.querySelector('button.tracker-model[aria-pressed="false"]').click();
      await done;
      await new Promise((r) => setTimeout(r, 0));   // (past the microtask checkpoint at which the URL is written)
      return { state: document.readyState, stages: w.querySelector(".stages").textContent,
               pressed: w.querySelector('button.tracker-model[aria-pressed="true"]').dataset.model,
               url: new URLSearchParams(location.search).get("tracker.model") };
    }"""
    with held(repo_site.out, C4, second) as (url, release):   # the first widget, its answers and the prose after it
        page = local_page(browser)
        page.goto(url, wait_until="commit")
        page.wait_for_selector('.widget[data-widget="tracker"][data-mounted]', state="attached",
                               timeout=DRAW_TIMEOUT_MS)
        assert page.evaluate("document.readyState") == "loading"
        assert page.locator(".widget[data-widget]").count() == 1          # the rest has not arrived
        held_page = page.evaluate(click_first_tracker_model)
        assert held_page["state"] == "loading" and held_page["stages"].strip()
        assert held_page["url"] is None                                   # not yet: the page is still being parsed
        release()
        page.wait_for_load_state("load")
        assert page.evaluate("new URLSearchParams(location.search).get('tracker.model')") == held_page["pressed"]
        with_answers = ".widget[data-widget]:has(script.precomputed)"
        assert page.locator(f"{with_answers}[data-mounted]").count() == page.locator(with_answers).count() == 5
        assert not page.problems, page.problems
        page.context.close()
    whole = blocked_page(browser, site + C4)
    whole.wait_for_load_state("load")
    after = whole.evaluate(click_first_tracker_model)
    assert (after["pressed"], after["stages"]) == (held_page["pressed"], held_page["stages"])
    assert after["url"] == after["pressed"] != "anchor"                  # a loaded page writes it at once
    assert not whole.problems, whole.problems
    whole.context.close()


FIRST_FRAME = """
window.__frames = [];
requestAnimationFrame(() => {   // registered before the page's own scripts: its callback runs in the first frame
  const mark = document.getElementById("first-widget-parsed"), w = mark && mark.previousElementSibling;
  const c = w && w.querySelector('select, button[aria-pressed="false"], input[type=checkbox], input[type=radio]');
  window.__frames.push({ loading: document.readyState === "loading", widget: w ? w.dataset.widget : null,
                         mounted: Boolean(w && w.hasAttribute("data-mounted")), enabled: Boolean(c && !c.disabled) });
});
"""


def first_answering_widget(html: str) -> str:
    """The first widget on a built page whose controls answer from what the build wrote (its declared states)."""
    declared = lessons.widgets()
    return next(n for n in re.findall(r'<div class="widget" data-widget="([^"]+)"', html) if declared[n].states)


@pytest.mark.parametrize("name", [C4, FFN, C11])
def test_the_first_paint_waits_for_the_first_answering_widget_and_no_longer(browser, repo_site, name):
    """<link rel=expect> (sitegen/markdown.py FIRST_WIDGET_MARK): with the HTML held inside the first widget whose
    controls the build answered, the browser draws no frame; held just after it, the first frame comes while the
    page is still being parsed, and in it that widget is set up, its first control enabled."""
    html = (repo_site.out / name).read_text(encoding="utf-8")
    widget = first_answering_widget(html)
    assert html.count('<link rel="expect" href="#first-widget-parsed" blocking="render">') == 1
    assert re.search(rf'data-widget="{widget}".*?</div>\n</div>\n<div id="first-widget-parsed" hidden></div>',
                     html, re.S)
    raw = html.encode("utf-8")
    inside = raw.index(b'<div class="widget-static">', raw.index(f'data-widget="{widget}"'.encode())) + 100
    marker = b'<div id="first-widget-parsed" hidden></div>'
    after = raw.index(marker) + len(marker)
    with held(repo_site.out, name, inside) as (url, release):
        page = local_page(browser, FIRST_FRAME)
        page.goto(url, wait_until="commit")
        page.wait_for_selector(f'.widget[data-widget="{widget}"]', state="attached")
        page.wait_for_timeout(1500)
        assert page.evaluate("window.__frames") == []                      # nothing drawn yet
        release()
        page.wait_for_load_state("load")
        assert page.evaluate("window.__frames")[0] | {"loading": None} == {
            "loading": None, "widget": widget, "mounted": True, "enabled": True}
        assert not page.problems, page.problems
        page.context.close()
    with held(repo_site.out, name, after) as (url, release):
        page = local_page(browser, FIRST_FRAME)
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => window.__frames.length > 0")
        assert page.evaluate("window.__frames") == [{"loading": True, "widget": widget, "mounted": True,
                                                     "enabled": True}]
        release()
        page.wait_for_load_state("load")
        assert not page.problems, page.problems
        page.context.close()


# -- #13.6 -----------------------------------------------------------------------------------------------------------
def test_memory_dtype_label_follows_the_dtype(browser, site):
    page = blocked_page(browser, site + FFN)
    mem = root(page, "ffn-memory")
    choose(page, mem, ".mem-dtype", "FP32")
    assert text(mem, "mem-dtype-label") == "FP32"
    assert "ffn-memory.dtype=FP32" in page.url
    choose(page, mem, ".mem-dtype", "BF16")                                        # the default leaves the URL
    assert "ffn-memory.dtype" not in page.url
    page.context.close()


def test_gpu_from_the_url_computes_with_its_figures(browser, site, models):
    page = blocked_page(browser, site + FFN + "?ffn-memory.gpu=a100")
    mem = root(page, "ffn-memory")
    page.wait_for_function(f"(el) => !el.dataset.busy && el.querySelector('.mem-bw').value === '{A100[0]}'",
                           arg=mem.element_handle())
    idle(page, mem)
    r = ffn.decode(models["llama7b"]["config"], "BF16", A100[0], 1, A100[1])
    assert mem.locator(".mem-peak").input_value() == A100[1]
    assert text(mem, "mem-tstep") == r["t_step"] and text(mem, "mem-takeover") == r["takeover"]
    page.context.close()


def test_bad_number_in_the_url_is_ignored_not_read_as_zero(guarded_page, site):
    guarded_page.goto(site + FFN + "?ffn-training-memory.batch=abc")
    tr = root(guarded_page, "ffn-training-memory")
    wait_runtime_ready(guarded_page)
    idle(guarded_page, tr)
    assert tr.locator(".tr-batch").input_value() == "4"
    assert "得到 0" not in tr.inner_text() and tr.locator(".widget-error").is_hidden()
    assert "ffn-training-memory.batch" not in guarded_page.url


def test_same_model_twice_in_the_comparison_is_two_bars(guarded_page, site):
    guarded_page.goto(site + C4)
    compare = root(guarded_page, "ledger-compare")
    compare.locator("select.compare-model").nth(0).select_option("anchor")
    idle(guarded_page, compare)
    spec = json.loads(compare.locator("script.chart-spec").text_content())
    assert len(set(spec["series"])) == 3 and all(abs(sum(v) - 1) < 1e-9 for v in spec["values"])


def test_back_after_a_contents_link_keeps_the_widgets_keys(guarded_page, site):
    guarded_page.goto(site + C4)
    first = guarded_page.locator("nav a[href^='#'], .toc a[href^='#']").first
    first.click()
    total = root(guarded_page, "ledger-total")
    choose(guarded_page, total, ".model-picker", "gpt2")
    assert "ledger-total.model=gpt2" in guarded_page.url
    guarded_page.go_back()
    guarded_page.wait_for_function("() => location.search.includes('ledger-total.model=gpt2')")
    assert total.locator(".model-picker").input_value() == "gpt2"


def test_an_error_is_chinese_and_marks_the_old_results_stale(guarded_page, site):
    guarded_page.goto(site + FFN)
    wait_runtime_ready(guarded_page)
    mem = root(guarded_page, "ffn-memory")
    mem.locator(".mem-bw").fill("abc")
    mem.locator(".mem-bw").dispatch_event("change")
    idle(guarded_page, mem)
    message = mem.locator(".widget-error").text_content()
    assert "显存带宽（TB/s）：需要一个数（例如 3.35），得到「abc」" in message
    assert "Error" not in message and "上一次" in message
    assert mem.evaluate("(el) => el.dataset.stale") == "true"
    # the old results are dimmed (widgets.css), the message saying so is not
    assert mem.evaluate(OPACITY) == {"result": "0.55", "error": "1"}
    mem.locator(".mem-gpu").select_option("h100")
    idle(guarded_page, mem)
    assert mem.evaluate("(el) => el.dataset.stale") is None and mem.locator(".widget-error").is_hidden()
    assert mem.evaluate(OPACITY)["result"] == "1"


OPACITY = """(el) => ({ result: getComputedStyle(el.querySelector(".mem-readout").closest(".table-scroll")).opacity,
    error: getComputedStyle(el.querySelector(".widget-error")).opacity })"""


def test_int4_probe_strings():
    p = ffn.int4_probe(16, 4, "100", "10", 0)
    assert all(g["rel_normal"] == "—" for g in p["groups"])                      # no ordinary rows at 100%
    p = ffn.int4_probe(1024, 64, "1", "10", 0)
    digits = {len(g["rms"].replace("0.", "").lstrip("0")) for g in p["groups"]}
    assert digits == {4} and "e" not in p["checksum"] and len(p["checksum"].replace(".", "")) <= 9
    with pytest.raises(ValueError, match="例如 3.35"):
        ffn.parse_fraction("x", "显存带宽（TB/s）", example="3.35")
