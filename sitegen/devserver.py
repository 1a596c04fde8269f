"""`make dev`: build, serve on 127.0.0.1, rebuild on every change, reload the open page by itself.

    python -m sitegen.devserver [--root DIR] [--out DIR] [--port 8000]   # --port 0: any free port

- Builds once, then watches lessons/, data/, site/ and experiments/ under --root with `watchfiles` (a Rust
  notify-based watcher; changes within 150 ms are taken together) and runs `python build.py` again after each
  change, in a fresh process so that an edit to experiments/ is picked up like any other.
- Serves the output folder on 127.0.0.1 only, never cached. Into every HTML page it serves (not into the files:
  nothing of this reaches _site/ or the published site) it adds one script, /__dev/reload.js, which listens to
  /__dev/events (server-sent events). After a good build the page reloads; after a failed build it shows the
  build's problems (file, line, what was expected) as an overlay, while the last good site stays served (build.py
  only swaps in a complete new folder).
- The first line on stdout is `serving http://127.0.0.1:PORT/`; each build prints its change report.

The page's CSP allows scripts and styles from the site itself only, so the script and its stylesheet are files
served under /__dev/, and the overlay is built with DOM calls (no inline script or style). The pages carry the
same CSP as a header, as `make serve` sends it.

The files are served by sitegen.serve.StaticHandler (no directory listings, nothing outside the output folder even
through a symlink, nosniff, Range, an idle timeout, a real listen backlog), never cached (`no-store`). /sw.js is
a service worker that removes itself and its caches: the course's own (sitegen/offline.py) may have been installed
by `make serve` on the same port, and a live preview must never be answered from a cache.
"""
from __future__ import annotations

import argparse
import html
import json
import subprocess
import sys
import threading
from functools import partial
from http import HTTPStatus
from pathlib import Path

from .pages import CSP
from .serve import Server, StaticHandler

REPO = Path(__file__).resolve().parent.parent
WATCHED = ("lessons", "data", "site", "experiments")
DEV_PREFIX = "/__dev/"
ASSETS = {"reload.js": ("devserver_reload.js", "text/javascript; charset=utf-8"),
          "overlay.css": ("devserver_overlay.css", "text/css; charset=utf-8")}
KEEPALIVE_S = 15
DEBOUNCE_MS = 150
RETIRE_SERVICE_WORKER = b"""\
// make dev: no service worker here; remove one installed earlier on this origin, and its caches
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(
  caches.keys().then((keys) => Promise.all(keys.map((key) => caches.delete(key))))
    .then(() => self.registration.unregister())));
"""


class BuildState:
    """The latest build attempt: `build` counts good builds, `error` holds the failed one's lines (or None).
    Every attempt bumps `version` and wakes the event streams."""

    def __init__(self):
        self.cond = threading.Condition()
        self.version = 0
        self.build = 0
        self.error: list[str] | None = None
        self.stopping = False

    def record(self, ok: bool, lines: list[str]) -> None:
        with self.cond:
            if ok:
                self.build += 1
                self.error = None
            else:
                self.error = lines
            self.version += 1
            self.cond.notify_all()

    def payload(self) -> dict:
        return {"build": self.build, "error": self.error}

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()


def run_build(root: Path, out: Path) -> tuple[bool, list[str], str]:
    """`python build.py --root ROOT --out OUT` in a fresh process: (ok, problem lines, stdout)."""
    proc = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 0 and not lines:
        lines = [f"build.py exited with status {proc.returncode}"]
    return proc.returncode == 0, lines, proc.stdout


def build_and_record(root: Path, out: Path, state: BuildState, log=print) -> None:
    ok, lines, stdout = run_build(root, out)
    for line in stdout.splitlines():
        log(line)
    for line in lines:
        log(line)
    if not ok:
        log("build failed: the last good site is still served")
    state.record(ok, lines)


def watch(root: Path, out: Path, state: BuildState, stop: threading.Event, log=print) -> None:
    """Rebuild after every batch of changes under the watched folders, until `stop` is set."""
    from watchfiles import DefaultFilter
    from watchfiles import watch as watch_changes
    paths = [root / name for name in WATCHED if (root / name).is_dir()]
    for changes in watch_changes(*paths, watch_filter=DefaultFilter(), stop_event=stop, debounce=DEBOUNCE_MS,
                                 step=50, yield_on_timeout=False):
        names = sorted({Path(p).relative_to(root).as_posix() for _, p in changes})
        log(f"changed: {', '.join(names[:5])}{' …' if len(names) > 5 else ''}; rebuilding")
        build_and_record(root, out, state, log)


class DevHandler(StaticHandler):
    """Static files from the output folder (re-resolved on every request, so a swapped-in build is served at
    once), the dev assets and the event stream under /__dev/; HTML gets the reload script."""

    state: BuildState

    def __init__(self, *args, state: BuildState, **kwargs):
        self.state = state
        super().__init__(*args, **kwargs)

    def log_request(self, code="-", size="-"):   # quiet: errors still go through log_error
        pass

    def cache_control(self, rel: str) -> str:
        return "no-store"

    def do_GET(self):
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path == DEV_PREFIX + "events":
            return self.stream_events()
        if path.startswith(DEV_PREFIX):
            return self.send_asset(path[len(DEV_PREFIX):])
        if path == "/sw.js":
            return self.send_bytes(RETIRE_SERVICE_WORKER, "text/javascript; charset=utf-8")
        target = Path(self.translate_path(path))
        if target.is_dir() and path.endswith("/"):
            target = target / "index.html"
        if target.suffix == ".html":
            if not self.inside(str(target)) or target.is_dir():
                return self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return self.send_html(target)
        return super().do_GET()

    def send_bytes(self, body: bytes, content_type: str, status: HTTPStatus = HTTPStatus.OK) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        if content_type.startswith("text/html"):
            self.send_header("Content-Security-Policy", CSP)
        self.end_headers()
        self.wfile.write(body)

    def send_asset(self, name: str) -> None:
        if name not in ASSETS:
            return self.send_error(HTTPStatus.NOT_FOUND)
        file, content_type = ASSETS[name]
        self.send_bytes((Path(__file__).parent / file).read_bytes(), content_type)

    def send_html(self, target: Path) -> None:
        with self.state.cond:
            build = self.state.build
        tag = f'<script src="{DEV_PREFIX}reload.js" data-build="{build}"></script>'
        try:
            text = target.read_text(encoding="utf-8")
            status = HTTPStatus.OK
        except OSError:   # nothing built yet (the first build failed): a page that can show the overlay
            text = ('<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>尚未构建</title></head>'
                    f"<body><p>还没有构建成功的页面：{html.escape(self.path)}</p></body></html>")
            status = HTTPStatus.NOT_FOUND
        at = text.find("</head>")
        text = text[:at] + tag + "\n" + text[at:] if at >= 0 else tag + text
        self.send_bytes(text.encode("utf-8"), "text/html; charset=utf-8", status)

    def stream_events(self) -> None:
        self.close_connection = True   # the stream has no length: it ends when the connection does
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        seen = -1
        state = self.state
        try:
            while True:
                with state.cond:
                    def news(seen: int = seen) -> bool:
                        return state.version != seen or state.stopping
                    state.cond.wait_for(news, timeout=KEEPALIVE_S)
                    if state.stopping:
                        return
                    version, payload = state.version, state.payload()
                if version != seen:
                    seen = version
                    self.wfile.write(f"event: state\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())
                else:
                    self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return


def make_server(out: Path, state: BuildState, port: int) -> Server:
    return Server(("127.0.0.1", port), partial(DevHandler, state=state, directory=str(out)))


def serve(root: Path, out: Path, port: int) -> None:
    root, out = root.resolve(), out.resolve()
    state = BuildState()
    server = make_server(out, state, port)
    print(f"serving http://127.0.0.1:{server.server_address[1]}/ (watching {', '.join(WATCHED)}; Ctrl-C stops)",
          flush=True)
    build_and_record(root, out, state, log=partial(print, flush=True))
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(root, out, state, stop, partial(print, flush=True)), daemon=True)
    watcher.start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        state.stop()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.devserver", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=REPO, help="the course folder (default: this repo)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: ROOT/_site)")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free port)")
    args = parser.parse_args(argv)
    serve(args.root, args.out or args.root / "_site", args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
