"""Every built page in headless Chromium: offline and security, accessibility, phones, dark theme, print.

The real course (every lesson) is built once into a temporary folder and served from a local port.
- Offline + security: a Chromium whose resolver knows only loopback loads every page through a guard that aborts
  any non-local request; the runtime must become ready and answer, every chart must draw, and no request may
  leave, no Content-Security-Policy violation may fire. The policy itself allows only the site (plus
  'wasm-unsafe-eval' for Pyodide). No script writes HTML from strings, and a hostile config or code cell output
  shows up as text.
- Accessibility: axe-core (axe-playwright-python, bundled, no CDN) on every page in the light and the dark theme
  finds no moderate, serious or critical violation (KNOWN_AXE may list one in another owner's file, with its
  fix, while it is being fixed); every widget control is reached by Tab, shows its focus, and works from the keyboard.
- Devices: at 375 px no page scrolls sideways, before or after using the widgets, and every control is on
  screen and not covered. The dark theme follows prefers-color-scheme. A lesson prints cleanly.
"""
from __future__ import annotations

import html
import json
import re
import warnings
from pathlib import Path

import pytest

from browser_fixtures import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DRAW_TIMEOUT_MS,
    PageGuard,
    scroll_through,
    wait_runtime_ready,
    wait_widgets_idle,
)
from build_fixtures import REPO
from sitegen.pages import CSP

JS_DIR = REPO / "site" / "static" / "js"
PHONE = {"width": 375, "height": 740}
CSP_WATCH = ("window.__csp = []; document.addEventListener('securitypolicyviolation', "
             "e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':'"
             " + e.lineNumber));")
# Axe findings (of FAILING_IMPACTS) in files owned by others, tolerated until fixed: (rule, page, selector fragment,
# owner file, fix); each one seen is reported as a warning. Anything else fails. (Empty: the last one, widget
# tables that scroll without being focusable, was fixed in the widget templates.)
KNOWN_AXE: list[tuple[str, str, str, str, str]] = []
# The issue asks for no serious or critical finding; the pages have none of moderate impact either, so those
# fail too (axe's "minor" findings are reported by axe only).
FAILING_IMPACTS = ("moderate", "serious", "critical")



# -- fixtures ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site_dir(repo_site) -> Path:
    """The session's build of the course (every test here only reads it)."""
    return repo_site.out


def _pages() -> list[str]:
    """index.html and one page per lesson of data/course.json that is written (known before the build)."""
    course = json.loads((REPO / "data" / "course.json").read_text(encoding="utf-8"))
    return ["index.html"] + [f"{ch['lesson']}.html" for ch in course["chapters"]
                             if ch.get("status") == "written" and ch.get("lesson")]


PAGES = _pages()
LESSONS = [p for p in PAGES if p != "index.html"]


@pytest.fixture(scope="module")
def base(site_dir, http_serve) -> str:
    return http_serve(site_dir)


def test_every_written_lesson_has_a_page(site_dir):
    assert sorted(p.name for p in site_dir.glob("*.html") if p.name != "changes.html") == sorted(PAGES)


@pytest.fixture(scope="module")
def sealed_browser(browser):
    """A second Chromium whose resolver knows only loopback: nothing could leave even if the guard missed it."""
    args = CHROMIUM_ARGS + ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]
    sealed = browser.browser_type.launch(executable_path=CHROMIUM, headless=True, args=args)
    yield sealed
    sealed.close()


def _open(browser, url: str, guards: list, **context_options):
    guard = PageGuard(browser.new_context(**context_options))
    guards.append(guard)
    guard.context.add_init_script(CSP_WATCH)
    page = guard.new_page()
    page.guard = guard
    page.goto(url)
    return page


@pytest.fixture
def pages_of(browser):
    """open(url, browser=None, **context options) -> a guarded, CSP-watched page; all are checked at teardown."""
    guards: list[PageGuard] = []

    def open_page(url, on=None, **options):
        return _open(on or browser, url, guards, **options)

    yield open_page
    problems = []
    for guard in guards:
        problems += guard.problems()
        for page in guard.context.pages:
            problems += [f"CSP violation: {v}" for v in page.evaluate("window.__csp || []")]
        guard.context.close()
    if problems:
        pytest.fail("the page was not clean:\n  " + "\n  ".join(problems), pytrace=False)


# -- offline and security -----------------------------------------------------------------------------------------
def test_csp_allows_only_the_site_itself(site_dir):
    directives = dict((d.split()[0], d.split()[1:]) for d in CSP.split("; "))
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'", "'wasm-unsafe-eval'"]   # Pyodide compiles WebAssembly
    assert directives["worker-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"]
    for name, sources in directives.items():
        for source in sources:
            assert source in ("'self'", "'none'", "'wasm-unsafe-eval'", "data:"), f"{name} allows {source}"
        if "data:" in sources:
            assert name == "img-src", f"{name} allows data:"
    for page in site_dir.glob("*.html"):
        metas = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">',
                           page.read_text(encoding="utf-8"))
        assert [html.unescape(m) for m in metas] == [CSP], page.name


# What a page still does after its charts are drawn, in idle time: the outline prefetches the runtime
# (prefetch-runtime.js: data-state "done" or "skipped"), a lesson makes each chart's print image (charts.js).
DEFERRED_WORK_DONE = """() => {
  const prefetch = document.querySelector("script[data-urls]");
  return (!prefetch || ["done", "skipped"].includes(prefetch.dataset.state))
    && Array.from(document.querySelectorAll("figure.chart")).every((f) => f.querySelector("img.chart-print[src]"));
}"""


@pytest.mark.parametrize("name", PAGES)
def test_page_works_offline(name, base, sealed_browser, pages_of):
    """Network blocked: zero non-local requests, no CSP violation, a working runtime, every chart drawn."""
    page = pages_of(base + name, on=sealed_browser)
    if name in LESSONS:   # (the outline runs no Python)
        wait_runtime_ready(page)
        assert page.evaluate("courseRuntime.call('experiments.api:ping', ['offline'])")["pong"] == ["offline"]
    charts = scroll_through(page)
    assert charts["drawn"] == charts["charts"], charts
    page.wait_for_function(DEFERRED_WORK_DONE, timeout=DRAW_TIMEOUT_MS)   # what the page loads last has loaded
    assert page.evaluate("window.__csp") == []
    assert page.guard.external_requests == []


def test_no_script_writes_html_from_strings():
    """The course's scripts build DOM with createElement/textContent only (the vendored Plotly is not ours)."""
    sinks = re.compile(r"\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML|document\.write|createContextualFragment"
                       r"|DOMParser|\.srcdoc\s*=|new Function|\beval\(")
    found = [f"{path.name}:{n}: {line.strip()}" for path in sorted(JS_DIR.glob("*.js"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if sinks.search(line)]
    assert not found, "\n".join(found)


HOSTILE = "<img src=x id=xss-probe onerror=\"document.title='pwned'\">"
SINK_SPY = """(() => {
  window.__sinks = [];
  const spy = (proto, name) => {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    Object.defineProperty(proto, name, { configurable: true, get: d.get, set(v) {
      if (String(v).includes("xss-probe")) window.__sinks.push(name + ": " + String(v).slice(0, 120));
      return d.set.call(this, v); } });
  };
  spy(Element.prototype, "innerHTML");
  spy(Element.prototype, "outerHTML");
  const adj = Element.prototype.insertAdjacentHTML;
  Element.prototype.insertAdjacentHTML = function (pos, html) {
    if (String(html).includes("xss-probe")) window.__sinks.push("insertAdjacentHTML: " + String(html).slice(0, 120));
    return adj.call(this, pos, html);
  };
})();"""


def _byo_page(site_dir: Path) -> str:
    for name in LESSONS:
        if 'data-testid="byo-config-input"' in (site_dir / name).read_text(encoding="utf-8"):
            return name
    pytest.skip("no page has the bring-your-own-config widget")


def test_user_input_never_reaches_html(site_dir, base, browser, pages_of):
    """A config whose strings are HTML, and a code cell printing HTML, come back as text; no HTML sink sees them."""
    name = _byo_page(site_dir)
    page = pages_of(base + name)
    page.add_init_script(SINK_SPY)
    page.reload()
    wait_runtime_ready(page)
    widget = page.locator(".widget[data-widget=byo-config]").first
    page.wait_for_selector(".widget[data-widget=byo-config] [data-testid=byo-config-run]:not([disabled])")
    config = json.loads((REPO / "data" / "models" / "llama-2-7b" / "config.json").read_text(encoding="utf-8"))
    # a model_type and class the engine does not know, with the usual keys: an estimate whose note names the
    # model_type (as text); a bad width and a text that is not JSON: refused, the message quoting them (as text)
    estimate = widget.locator(".byo-estimate")
    for hostile, shown in (({**config, "model_type": HOSTILE, "architectures": [HOSTILE]}, estimate),
                           ({**config, "hidden_size": HOSTILE}, widget.locator(".byo-error")),
                           (HOSTILE, widget.locator(".byo-error"))):
        widget.locator("[data-testid=byo-config-input]").fill(hostile if isinstance(hostile, str)
                                                               else json.dumps(hostile))
        widget.locator("[data-testid=byo-config-run]").click()
        shown.wait_for(state="visible")
        widget.locator("[data-testid=byo-config-input]").fill(json.dumps(config))
        widget.locator("[data-testid=byo-config-run]").click()
        shown.wait_for(state="hidden")
    widget.locator("[data-testid=byo-config-input]").fill(json.dumps({**config, "architectures": [HOSTILE]}))
    page.evaluate("""() => new Promise((done) => {   // run it and wait for the widget's answer (course:updated)
      const w = document.querySelector(".widget[data-widget=byo-config]");
      w.addEventListener("course:updated", () => done(), { once: true });
      w.querySelector("[data-testid=byo-config-run]").click();
    })""")
    cell = page.locator(".widget[data-widget=code]").first
    if cell.count():
        cell.locator(".code-source").fill(f"print({HOSTILE!r})")
        cell.locator(".code-run").click()
        cell.locator(".code-output").filter(has_text="xss-probe").wait_for()
    assert page.locator("#xss-probe").count() == 0
    assert page.title() != "pwned"
    assert page.evaluate("window.__sinks") == []


# -- accessibility -----------------------------------------------------------------------------------------------
def _axe(page) -> list[dict]:
    from axe_playwright_python.sync_playwright import Axe
    return Axe().run(page).response["violations"]


def _serious(violations: list[dict], name: str) -> list[str]:
    out = []
    for v in violations:
        if v["impact"] not in FAILING_IMPACTS:
            continue
        for node in v["nodes"]:
            target = " ".join(str(t) for t in node["target"])
            known = [k for k in KNOWN_AXE if k[0] == v["id"] and k[1] == name and k[2] in target]
            if known:
                warnings.warn(f"known axe finding, tolerated until fixed in {known[0][3]}: {v['id']} {target} "
                              f"on {name}: {known[0][4]}", stacklevel=2)
                continue
            out.append(f"{v['id']} ({v['impact']}) {target}: {node.get('failureSummary', '').splitlines()[-1:]}")
    return out


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_axe_finds_nothing_moderate_or_worse(name, scheme, base, pages_of):
    page = pages_of(base + name, color_scheme=scheme)
    if name in LESSONS:
        wait_runtime_ready(page)        # the widgets' controls are enabled once Python is ready
    wait_widgets_idle(page)
    problems = _serious(_axe(page), name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_with_widget_errors_showing(site_dir, scheme, base, pages_of):
    """The error states (a bad pasted config, a failing code cell) are checked too: red on dark must still read."""
    name = _byo_page(site_dir)
    page = pages_of(base + name, color_scheme=scheme)
    wait_runtime_ready(page)
    widget = page.locator(".widget[data-widget=byo-config]").first
    page.wait_for_selector(".widget[data-widget=byo-config] [data-testid=byo-config-run]:not([disabled])")
    widget.locator("[data-testid=byo-config-input]").fill('{"model_type": "llama", "hidden_size": -5}')
    widget.locator("[data-testid=byo-config-run]").click()
    widget.locator(".byo-error").wait_for(state="visible")
    cell = page.locator(".widget[data-widget=code]").first
    if cell.count():
        cell.locator(".code-source").fill("1/0")
        cell.locator(".code-run").click()
        cell.locator(".code-output").filter(has_text="ZeroDivisionError").wait_for()
    problems = _serious(_axe(page), name)
    assert not problems, "\n".join(problems)


def test_axe_after_the_widgets_redraw_their_tables(site_dir, base, pages_of):
    """Tables the browser builds (a pasted config's ledgers, a layer ledger for another model) are named apart
    from the build's: every scrolling region on the page keeps a name of its own, and axe stays clean."""
    name = _byo_page(site_dir)
    page = pages_of(base + name)
    wait_runtime_ready(page)
    byo = page.locator(".widget[data-widget=byo-config]").first
    page.wait_for_selector(".widget[data-widget=byo-config] .byo-example:not([disabled])")
    byo.locator(".byo-example").click()
    byo.locator("[data-testid=byo-config-total] .num").wait_for()
    picker = page.locator(".widget[data-widget=ledger-layer] select.model-picker").first
    if picker.count():
        picker.select_option(index=1)
        page.wait_for_function("() => !document.querySelector('.widget[data-widget=ledger-layer] [data-busy]')")
    labels = page.eval_on_selector_all("[role=region]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert len(labels) > 10 and len(set(labels)) == len(labels), [x for x in labels if labels.count(x) > 1]
    problems = _serious(_axe(page), name)
    assert not problems, "\n".join(problems)


SHOWN = """(el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden" &&
  (!el.checkVisibility || el.checkVisibility({ contentVisibilityAuto: false, visibilityProperty: true }))"""

CONTROLS_JS = """() => {   // every widget control (not in a chart, not a number), keyed by widget and position
  const shown = SHOWN_FN;
  const out = [];
  document.querySelectorAll(".widget[data-widget]").forEach((w, wi) => {
    w.querySelectorAll("button, select, input, textarea, summary, a[href]").forEach((el, ci) => {
      if (el.closest("figure.chart") || el.disabled || !shown(el)) return;
      el.dataset.kbd = wi + "-" + ci;
      out.push({ id: el.dataset.kbd, widget: w.dataset.widget, wi: wi, tag: el.tagName.toLowerCase(),
                 type: el.type || "", cls: String(el.className || "") });
    });
  });
  return out;
}""".replace("SHOWN_FN", SHOWN)

TAB_WALK_JS = """(wi) => {   // put focus just before widget number wi (a sentinel outside it)
  const w = document.querySelectorAll(".widget[data-widget]")[wi];
  let s = document.getElementById("kbd-sentinel");
  if (!s) { s = document.createElement("span"); s.id = "kbd-sentinel"; s.tabIndex = -1; }
  w.before(s);
  w.scrollIntoView({ block: "start" });
  s.focus();
}"""

FOCUS_JS = """(wi) => {
  const el = document.activeElement, s = getComputedStyle(el);
  const w = document.querySelectorAll(".widget[data-widget]")[wi];
  return { id: el.dataset.kbd || null, inside: w.contains(el), what: el.tagName.toLowerCase() + "." + el.className,
           outline: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2, shadow: s.boxShadow !== "none",
           visible: el.matches(":focus-visible") };
}"""

OPERATE_JS = """(id) => {   // focus the control and watch its widget; returns which key operates it
  const el = document.querySelector('[data-kbd="' + id + '"]');
  if (!el) return null;
  el.scrollIntoView({ block: "center" });
  el.focus();
  window.__changed = false;
  window.__value = el.value;
  window.__open = el.parentElement && el.parentElement.open;
  if (window.__mo) window.__mo.disconnect();
  window.__mo = new MutationObserver(() => { window.__changed = true; });
  window.__mo.observe(el.closest(".widget"), { subtree: true, childList: true, attributes: true, characterData: true });
  const t = el.tagName, type = el.type;
  window.__noop = el.getAttribute("aria-pressed") === "true";   // choosing what is already chosen may do nothing
  if (t === "SELECT") return el.selectedIndex < el.options.length - 1 ? "ArrowDown" : "ArrowUp";
  if (type === "range") return Number(el.value) > Number(el.min || 0) ? "ArrowLeft" : "ArrowRight";
  if (type === "number") return el.max !== "" && Number(el.value) >= Number(el.max) ? "ArrowDown" : "ArrowUp";
  if (type === "checkbox" || type === "radio") return "Space";
  if (t === "TEXTAREA" || t === "A" || type === "file"
      || (t === "INPUT" && type !== "button" && type !== "submit")) return "";
  return "Enter";   // buttons, summary
}"""

# Controls that may legitimately do nothing from a pristine state (a reset of an unedited cell). They must still
# be reachable with visible focus.
NO_OP_OK = re.compile(r"code-reset")
# How long a key press may take to change its widget (a recompute in Python on a busy machine): a bound on a
# condition, reached only when the control is broken.
KEY_EFFECT_TIMEOUT_MS = 60_000


@pytest.mark.parametrize("name", LESSONS)
def test_every_widget_works_from_the_keyboard(name, base, pages_of):
    """Tab walks through each widget reaching every control with a visible focus ring; then each control is
    operated from the keyboard (Enter, Space, arrows) and its widget must react."""
    from playwright.sync_api import Error as PlaywrightError
    page = pages_of(base + name)
    wait_runtime_ready(page)
    scroll_through(page)
    for details in page.locator(".widget details:not([open]) > summary").all():   # what they hide is tested too
        details.focus()
        page.keyboard.press("Enter")
    controls = page.evaluate(CONTROLS_JS)
    if not controls:
        pytest.skip(f"{name} has no widget controls")
    problems = []
    for wi in sorted({c["wi"] for c in controls}):
        wanted = {c["id"]: c for c in controls if c["wi"] == wi}
        page.evaluate(TAB_WALK_JS, wi)
        reached = set()
        for _ in range(400):
            page.keyboard.press("Tab")
            focus = page.evaluate(FOCUS_JS, wi)
            if not focus["inside"]:
                break
            if not (focus["outline"] or focus["shadow"]) or not focus["visible"]:
                problems.append(f"{focus['what']}: no visible focus indicator ({focus})")
            reached.add(focus["id"])
            if focus["what"].startswith("textarea.code-source"):
                page.keyboard.press("Escape")   # a code box keeps Tab for indenting: Esc, then Tab leaves it
        for cid in set(wanted) - reached:
            c = wanted[cid]
            problems.append(f"{c['widget']} {c['tag']}.{c['cls']}: Tab does not reach it")
    for c in controls:
        label = f"{c['widget']} {c['tag']}.{c['cls']}".strip(".")
        key = page.evaluate(OPERATE_JS, c["id"])
        if key is None:
            controls_now = page.evaluate(CONTROLS_JS)   # its widget re-rendered: look it up again
            key = page.evaluate(OPERATE_JS, c["id"]) if any(x["id"] == c["id"] for x in controls_now) else None
            if key is None:
                continue
        if not key:
            continue
        page.keyboard.press(key)
        if not NO_OP_OK.search(c["cls"]) and not page.evaluate("window.__noop"):   # it must change its widget
            try:
                page.wait_for_function("() => window.__changed", timeout=KEY_EFFECT_TIMEOUT_MS)
            except PlaywrightError:
                problems.append(f"{label}: {key} changed nothing in the widget")
        wait_widgets_idle(page)   # what the key started has been drawn before the next control is operated
    assert not problems, "\n".join(dict.fromkeys(problems))


# -- phones, dark theme, print ---------------------------------------------------------------------------------
SIDEWAYS_JS = """() => {
  const d = document.documentElement;
  const wide = Array.from(document.querySelectorAll("body *")).filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width && r.right > d.clientWidth + 1 && !e.closest(".table-scroll, pre, .num-popover, .chart-plot");
  }).slice(0, 5).map((e) => e.tagName.toLowerCase() + "." + e.className
                     + " right=" + Math.round(e.getBoundingClientRect().right));
  return { scroll: d.scrollWidth, client: d.clientWidth, wide: wide };
}"""

USABLE_JS = """() => {
  const bad = [];
  document.querySelectorAll(".widget[data-widget]").forEach((w) => {
    w.querySelectorAll("button, select, input, textarea, summary").forEach((el) => {
      if (el.closest("figure.chart") || !(SHOWN_FN)(el)) return;
      el.scrollIntoView({ block: "center" });
      const r = el.getBoundingClientRect();
      const name = w.dataset.widget + " " + el.tagName.toLowerCase() + "." + el.className;
      if (r.left < -1 || r.right > document.documentElement.clientWidth + 1) {
        bad.push(name + ": off screen " + Math.round(r.left) + ".." + Math.round(r.right));
        return;
      }
      const labelled = el.labels && el.labels.length > 0;   // a label is part of the target
      if ((r.width < 16 || r.height < 16) && !labelled) {
        bad.push(name + ": too small " + Math.round(r.width) + "x" + Math.round(r.height));
        return;
      }
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      const inLabel = el.labels && Array.from(el.labels).some((label) => label.contains(hit));
      if (!hit || !(el === hit || el.contains(hit) || hit.contains(el) || inLabel))
        bad.push(name + ": covered by " + (hit ? hit.tagName.toLowerCase() + "." + hit.className : "nothing"));
    });
  });
  return bad;
}""".replace("SHOWN_FN", SHOWN)


def tap(page, locator) -> None:
    """locator.tap(); when it times out (a tap waits for the element to hold still over two animation frames), the
    failure also says whether the page could draw a frame at all (a screenshot needs one; it has its own timeout,
    unlike page.evaluate, so a page whose main thread is stuck cannot hang the test) and where the target was."""
    from playwright.sync_api import Error as PlaywrightError
    try:
        locator.tap()
    except PlaywrightError as e:
        try:
            page.screenshot(timeout=5000)
            frames = "a screenshot could be taken (frames are drawn)"
        except PlaywrightError:
            frames = "no screenshot within 5 s (no frame drawn)"
        try:
            box = locator.bounding_box(timeout=2000)
        except PlaywrightError:
            box = "unknown"
        raise AssertionError(f"tap failed; {frames}; target box {box}\n{e}") from None


@pytest.mark.parametrize("name", PAGES)
def test_phone_width_no_sideways_scroll_and_widgets_usable(name, base, site_dir, pages_of):
    page = pages_of(base + name, viewport=PHONE, is_mobile=True, has_touch=True)
    if name in LESSONS:   # (the outline runs no Python)
        wait_runtime_ready(page)
    for summary in page.locator(".widget details:not([open]) > summary").all():
        summary.tap()
    scroll_through(page)
    state = page.evaluate(SIDEWAYS_JS)
    assert state["scroll"] <= state["client"], f"{name} scrolls sideways at 375 px: {state}"
    assert page.evaluate(USABLE_JS) == []
    # use the widgets (their results are rendered by script) and look again
    for widget in page.locator(".widget[data-widget]").all():
        button = widget.locator("button:not([disabled]):not(.code-reset)").first
        if button.count() and button.is_visible():
            tap(page, button)
            wait_widgets_idle(page)
    if 'data-testid="byo-config-input"' in (site_dir / name).read_text(encoding="utf-8"):
        widget = page.locator(".widget[data-widget=byo-config]").first
        config = json.loads((REPO / "data" / "models" / "qwen3-30b-a3b" / "config.json").read_text(encoding="utf-8"))
        widget.locator("[data-testid=byo-config-input]").fill(json.dumps(config))
        widget.locator("[data-testid=byo-config-run]").tap()
        widget.locator(".byo-ledgers table").first.wait_for()
    scroll_through(page)
    state = page.evaluate(SIDEWAYS_JS)
    assert state["scroll"] <= state["client"], f"{name} scrolls sideways at 375 px after use: {state}"


def _luminance(css: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"[\d.]+", css)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


COLOURS_JS = """() => {
  const s = (sel, prop) => { const e = document.querySelector(sel); return e ? getComputedStyle(e)[prop] : null; };
  return { bg: s("body", "backgroundColor"), fg: s("body", "color"), widget: s(".widget", "backgroundColor"),
           code: s("code", "backgroundColor"), scheme: getComputedStyle(document.documentElement).colorScheme };
}"""


@pytest.mark.parametrize("name", [PAGES[0], LESSONS[0]] if LESSONS else PAGES[:1])
def test_dark_theme_follows_the_system(name, base, pages_of):
    light = pages_of(base + name, color_scheme="light").evaluate(COLOURS_JS)
    dark = pages_of(base + name, color_scheme="dark").evaluate(COLOURS_JS)
    assert _luminance(light["bg"]) > 0.8 and _luminance(light["fg"]) < 0.1, light
    assert _luminance(dark["bg"]) < 0.05 and _luminance(dark["fg"]) > 0.6, dark
    if dark["widget"]:
        assert _luminance(dark["widget"]) < 0.1, dark
    assert "dark" in dark["scheme"]   # form controls and scrollbars follow too


PRINT_JS = """() => {
  const shown = (sel) => Array.from(document.querySelectorAll(sel)).some((e) => getComputedStyle(e).display !== "none");
  const d = document.documentElement;
  return { nav: shown(".lesson-nav"), status: shown(".runtime-status"), toc: shown(".toc"), skip: shown(".skip-link"),
           popovers: shown(".num-popover"),
           controls: shown(".widget button, .widget input[type=file], .widget input[type=range]"),
           body: shown(".lesson-body"), ledger: shown(".ledger"), widgets: shown(".widget-static"),
           cv: getComputedStyle(document.querySelector(".ledger-list") || document.body).contentVisibility,
           scroll: d.scrollWidth, client: d.clientWidth, bg: getComputedStyle(document.body).backgroundColor };
}"""


@pytest.mark.parametrize("name", LESSONS[:1])
def test_a_lesson_prints_cleanly(name, base, pages_of):
    page = pages_of(base + name, color_scheme="dark", viewport={"width": 794, "height": 1123})
    wait_runtime_ready(page)
    page.emulate_media(media="print")
    state = page.evaluate(PRINT_JS)
    assert not (state["nav"] or state["status"] or state["toc"] or state["skip"] or state["popovers"]), state
    assert not state["controls"], state
    assert state["body"] and state["ledger"] and state["widgets"], state
    assert state["cv"] == "visible", "the 数字口径 list must print in full"
    assert state["scroll"] <= state["client"], state
    assert _luminance(state["bg"]) > 0.9, "print on white, even in the dark theme"
    pdf = page.pdf(format="A4", print_background=False)
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
