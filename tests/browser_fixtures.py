"""Browser test fixtures (a pytest plugin, listed in tests/conftest.py): a local static server and a guarded Chromium.

Facts this rests on:
- The machine has no internet; Playwright's own browser download cannot work, so tests drive Debian's
  /usr/bin/chromium (apt-get install -y chromium) through the Playwright sync API.
- The site must work offline and self-hosted: a guarded page aborts and records every request to a host other
  than 127.0.0.1/localhost, and records console errors (pages and workers) and uncaught page errors; any of
  these fails the test at teardown, listed in the message.
- Pyodide instantiates its wasm with WebAssembly.instantiateStreaming, which needs `application/wasm`, so the
  server sets MIME types explicitly rather than trusting the host's mimetypes database.

Use:
    def test_x(http_serve, guarded_page):
        base = http_serve(site_dir)            # served until the session ends
        guarded_page.goto(base + "index.html")
        wait_runtime_ready(guarded_page)       # from tests.browser_fixtures import wait_runtime_ready
"""
from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sitegen.serve import MIME_TYPES

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
RUNTIME_READY_TIMEOUT_MS = 120_000
# A guarded context routes every request, which Playwright does not combine with service workers (their requests
# bypass the route), and each page would otherwise have the course's service worker copy the whole site into its
# cache: the guarded pages run without it; tests/test_offline_browser.py tests it, in contexts of its own.
SERVICE_WORKERS = "block"



# -- static server ---------------------------------------------------------------------------------------------
class _QuietHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def log_message(self, format, *args):  # noqa: A002 - signature of the stdlib
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a browser hanging up mid-response is not news
        pass


_servers: dict[Path, tuple[str, _QuietServer, threading.Thread]] = {}


def http_serve(directory) -> str:
    """Serve `directory` on 127.0.0.1 (a free port) in a thread; returns the base URL ending in '/'.

    The same directory is served once per session; every server stops at session end.
    """
    root = Path(directory).resolve()
    if root not in _servers:
        handler = functools.partial(_QuietHandler, directory=str(root))
        server = _QuietServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, name=f"http:{root.name}", daemon=True)
        thread.start()
        _servers[root] = (f"http://127.0.0.1:{server.server_address[1]}/", server, thread)
    return _servers[root][0]


def stop_servers() -> None:
    while _servers:
        _, (_, server, thread) = _servers.popitem()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(name="http_serve", scope="session")
def http_serve_fixture():
    """The http_serve(directory) -> base_url factory; its servers stop at session end."""
    yield http_serve
    stop_servers()


def pytest_sessionfinish(session, exitstatus):
    stop_servers()  # servers started by calling http_serve() directly, outside the fixture


# -- browser ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright (sync API), one per session."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `apt-get install -y chromium`")
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=DRAW_TIMEOUT_MS)   # (Playwright's own default, 5 s, is a wait a busy machine misses)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss"):
        return True  # data:, blob:, about: never leave the machine
    return parts.hostname in LOCAL_HOSTS


class PageGuard:
    """Records what a clean offline page must never do: console errors, page errors, non-local requests."""

    def __init__(self, context):
        self.context = context
        context.set_default_timeout(DRAW_TIMEOUT_MS)   # every wait of its pages is bounded generously (default 30 s)
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.external_requests: list[str] = []
        context.route("**/*", self._route)
        context.on("console", self._on_console)  # pages and their workers
        context.on("page", self._watch_page)

    def _route(self, route):
        url = route.request.url
        if _is_local(url):
            route.continue_()
        else:
            self.external_requests.append(f"{route.request.method} {url}")
            route.abort()

    def _on_console(self, msg):
        if msg.type == "error":
            loc = msg.location or {}
            self.console_errors.append(f"{msg.text} ({loc.get('url', '?')}:{loc.get('lineNumber', '?')})")

    def _watch_page(self, page):
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("websocket", lambda ws: None if _is_local(ws.url) else self.external_requests.append(f"WS {ws.url}"))

    def new_page(self):
        return self.context.new_page()  # the "page" event attaches the listeners

    def problems(self) -> list[str]:
        return ([f"console error: {m}" for m in self.console_errors]
                + [f"page error: {m}" for m in self.page_errors]
                + [f"non-local request (aborted): {m}" for m in self.external_requests])

    def assert_clean(self) -> None:
        problems = self.problems()
        if problems:
            pytest.fail("the page was not clean:\n  " + "\n  ".join(problems), pytrace=False)


@pytest.fixture
def guarded_pages(browser):
    """Factory: new_page(**context options, e.g. viewport=, is_mobile=) -> a Playwright page in its own guarded
    context; all are checked at teardown."""
    guards: list[PageGuard] = []

    def new_page(**context_options):
        context_options.setdefault("service_workers", SERVICE_WORKERS)
        guard = PageGuard(browser.new_context(**context_options))
        guards.append(guard)
        page = guard.new_page()
        page.guard = guard  # tests may call page.guard.assert_clean() early
        return page

    yield new_page
    problems = []
    for guard in guards:
        problems += guard.problems()
        guard.context.close()
    if problems:
        pytest.fail("the page was not clean:\n  " + "\n  ".join(problems), pytrace=False)


@pytest.fixture(scope="module")
def module_guard(browser):
    """One guarded context shared by a module's tests (a page loaded once, used by many); checked at the end."""
    guard = PageGuard(browser.new_context(service_workers=SERVICE_WORKERS))
    yield guard
    guard.context.close()
    guard.assert_clean()


@pytest.fixture
def guarded_page(guarded_pages):
    """One guarded page: the test fails if it logs a console error, throws, or asks a non-local host."""
    return guarded_pages()


# scroll_through(page): charts.js draws a chart when it is first seen (an IntersectionObserver; class "drawn" once
# Plotly has drawn it). Every chart is scrolled into view in turn, again at every animation frame until it is drawn
# (so a layout shift that moves it away before the observer looks cannot leave it undrawn), and waited for as a
# condition: the chart drawn, not a number of milliseconds. Back at the top, it returns {charts, drawn}; a chart not
# drawn within timeout_ms fails the test naming it. (It replaces a script that waited 60 ms per screenful and gave
# up on a screenful after 30 s, returning "0 of 2 drawn" on a busy machine instead of waiting.)
DRAW_TIMEOUT_MS = 120_000
_DRAWN_OR_SCROLL = """(i) => {
  const fig = document.querySelectorAll("figure.chart")[i];
  if (!fig || fig.classList.contains("drawn")) return true;
  fig.scrollIntoView({ block: "center" });
  return false;
}"""


def scroll_through(page, timeout_ms: int = DRAW_TIMEOUT_MS) -> dict:
    """Scroll every chart of the page into view and wait until each is drawn; then back to the top."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    count = page.locator("figure.chart").count()
    for i in range(count):
        try:
            page.wait_for_function(_DRAWN_OR_SCROLL, arg=i, polling="raf", timeout=timeout_ms)
        except PlaywrightTimeout:
            label = page.locator("figure.chart").nth(i).get_attribute("aria-label")
            pytest.fail(f"chart {i + 1} of {count} ({label!r}) was not drawn within {timeout_ms} ms of being in view",
                        pytrace=False)
    page.evaluate("window.scrollTo(0, 0)")
    return page.evaluate("""() => ({ charts: document.querySelectorAll("figure.chart").length,
                                     drawn: document.querySelectorAll("figure.chart.drawn").length })""")


# Every widget root carries data-busy while a recompute (or a code cell's run) is in flight (widgets.js `latest`,
# code-cell.js); it is set in the same task as the event that starts it, so right after a click or a key press
# "no [data-busy]" means that what it started has been drawn.
WIDGETS_IDLE = "() => !document.querySelector('.widget[data-busy], .widget [data-busy]')"


def wait_widgets_idle(page, timeout_ms: int = DRAW_TIMEOUT_MS) -> None:
    """Wait until no widget of the page is busy (see WIDGETS_IDLE)."""
    page.wait_for_function(WIDGETS_IDLE, timeout=timeout_ms)


def wait_runtime_ready(page, timeout_ms: int = RUNTIME_READY_TIMEOUT_MS) -> None:
    """Wait until a [data-testid=pyodide-status] element says ready; fail at once if it says error."""
    sel = "[data-testid=pyodide-status]"
    page.wait_for_selector(f"{sel}[data-state=ready], {sel}[data-state=error]", state="attached",
                           timeout=timeout_ms)
    failed = page.query_selector(f"{sel}[data-state=error]")
    if failed is not None:
        pytest.fail(f"Python runtime failed to load: {failed.text_content()}", pytrace=False)


# -- the real course, built once per session (build_fixtures.repo_site), served; widget update counters -------------
@pytest.fixture(scope="module")
def site(repo_site, http_serve) -> str:
    """The base URL of the real course's build (one per session), served from a local port."""
    return http_serve(repo_site.out)


@pytest.fixture(scope="module")
def models(repo_site) -> dict:
    """alias -> {id, name, config}: what the pickers send to Python (data/models.json of the build)."""
    import json
    return json.loads((repo_site.out / "data" / "models.json").read_text(encoding="utf-8"))


# An init script: window.__updates[<root class of a widget>] counts its "course:updated" events.
COUNT_UPDATES = """
window.__updates = {};
document.addEventListener("course:updated", (e) => {
  const key = e.target.className.split(" ")[0];
  window.__updates[key] = (window.__updates[key] || 0) + 1;
});
"""


def updates(page, widget: str) -> int:
    return page.evaluate("(k) => window.__updates[k] || 0", widget)


def wait_update(page, widget: str, before: int) -> None:
    page.wait_for_function("([k, n]) => (window.__updates[k] || 0) > n", arg=[widget, before], timeout=60_000)


def change(page, root: str, values: dict, fire: str, event: str = "change") -> None:
    """Set controls of the widget whose root is the selector `root` ({selector inside it: value}), then fire one
    event on one of them, so that exactly one update runs, and wait for it (the root's first class counts it)."""
    widget = root.lstrip(".")
    before = updates(page, widget)
    page.evaluate("""([root, values, fire, event]) => {
      const r = document.querySelector(root);
      for (const [sel, v] of Object.entries(values)) r.querySelector(sel).value = String(v);
      r.querySelector(fire).dispatchEvent(new Event(event));
    }""", [root, values, fire, event])
    wait_update(page, widget, before)


def open_lesson(guard, url: str, *enabled: str):
    """A guarded page on a lesson, counting widget updates, once Python is ready and these controls are enabled."""
    p = guard.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.goto(url)
    wait_runtime_ready(p)
    p.wait_for_function("(sels) => sels.every((s) => !document.querySelector(s).disabled)", arg=list(enabled))
    return p


def open_without_python(page, url: str, widget: str):
    """The page at url, counting widget updates, with its Python held back (the runtime never becomes ready),
    once `widget` is mounted: what answers now answers from the build's tables."""
    page.route("**/experiments.zip", lambda route: None)
    page.add_init_script(COUNT_UPDATES)
    page.goto(url)
    page.wait_for_selector(f".widget[data-widget={widget}][data-mounted]", state="attached")
    return page


def text(page, root: str, testid: str) -> str:
    """The trimmed text of [data-testid=testid] inside the widget root selector."""
    return page.eval_on_selector(f'{root} [data-testid="{testid}"]', "n => n.textContent.trim()")


def table(page, selector: str) -> list[list[str]]:
    """Every body row of the table under selector, as lists of trimmed cell texts."""
    return page.eval_on_selector_all(f"{selector} tbody tr",
                                     "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))")


def axe_problems(context, url: str, scheme: str) -> list[str]:
    """axe's moderate, serious and critical violations on a lesson page in one colour scheme, once its runtime is
    ready and its widgets are idle (one line each: rule, impact, the nodes)."""
    from axe_playwright_python.sync_playwright import Axe
    p = context.new_page()
    p.emulate_media(color_scheme=scheme)
    p.goto(url)
    wait_runtime_ready(p)
    wait_widgets_idle(p)
    bad = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}"
           for v in Axe().run(p).response["violations"] if v["impact"] in ("moderate", "serious", "critical")]
    p.close()
    return bad
