"""The local static server for the built site (`make serve`, and the bench's server): the standard library's
http.server with what a production host does (docs/publishing.md), so that what is measured locally is what a
learner gets from a well-configured host.

- Compression: every file `make dist` precompresses (text, and the runtime's wasm and JavaScript; not the wheel or
  the zips, which are compressed already) is sent brotli- or gzip-encoded as the request's Accept-Encoding allows
  (q-values honoured: `gzip;q=0` refuses gzip), with `Vary: Accept-Encoding` on every answer for such a file,
  encoded or not. The bytes are the very ones `make dist` writes (sitegen.dist.compressed): read from `NAME.br` /
  `NAME.gz` beside the file when they exist (a served _dist/), else made once per (file, mtime) and kept in memory
  and, for `make serve`, in .cache/compressed/ by content (the 10 MB wasm takes seconds to compress: a restart or a
  rebuild does not pay it again); the runtime files are compressed in the background as the server starts.
- Caching: `Cache-Control: public, max-age=31536000, immutable` for the content-named folders (pyodide/<version>/,
  py/<hash>/, and _dist's v/<hash>/), `public, max-age=0, must-revalidate` for everything else (pages, data/, the
  service worker); `Last-Modified` on every file, and If-Modified-Since answered with 304 carrying the same headers.
- Range requests: one byte range of a file sent as it is gets 206 (If-Range honoured), an unsatisfiable one 416.
- Safety: no directory listings (404), nothing outside the served folder (a symlink that leads out is 404),
  `X-Content-Type-Options: nosniff` on every answer, and on pages the same Content-Security-Policy as their meta
  tag (sitegen.pages.CSP).
- Connections: HTTP/1.1 keep-alive, a listen backlog of 128 (the standard library's 5 drops connections when a
  browser and a load test open many at once), and an idle timeout (a connection that sends nothing for
  IDLE_TIMEOUT_S is closed, so half-open sockets cannot hold threads forever).

StaticHandler (everything but compression and cache rules) is shared with the dev server (sitegen/devserver.py).

    python -m sitegen.serve [--directory _site] [--bind 127.0.0.1] [PORT]
"""
from __future__ import annotations

import argparse
import functools
import io
import os
import re
import sys
import threading
import urllib.parse
from email.utils import formatdate, parsedate_to_datetime
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from . import dist
from .pages import CSP

MIME_TYPES = {   # what the built site holds (the dev server and the tests' servers use the same map)
    ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json",
    ".whl": "application/octet-stream", ".zip": "application/octet-stream", ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2",
    ".webmanifest": "application/manifest+json",
}
IMMUTABLE_FOLDERS = ("v", *dist.CONTENT_NAMED)   # first path segment of a content-named URL
IDLE_TIMEOUT_S = 20
LISTEN_BACKLOG = 128
CACHE_DIR = dist.CACHE_DIR
_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class Server(ThreadingHTTPServer):
    """ThreadingHTTPServer with a real listen backlog; a thread per connection, not waited for at exit."""
    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True


def accepted_encodings(header: str | None) -> set[str]:
    """The content codings an Accept-Encoding header accepts (q > 0), `*` standing for any coding not named."""
    named: dict[str, float] = {}
    for item in (header or "").split(","):
        coding, _, params = item.strip().lower().partition(";")
        if not coding.strip():
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        named[coding.strip()] = q
    star = named.get("*", 0.0)
    return {c for c in dist.ENCODINGS if named.get(c, star) > 0}


class _Slice(io.RawIOBase):
    """`length` bytes of an open file from its current position (what a 206 sends)."""

    def __init__(self, f, length: int):
        self.f, self.left = f, length

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.f.read(n)
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.f.close()
        super().close()


class StaticHandler(SimpleHTTPRequestHandler):
    """Files from the served folder only, no listings, Range, conditional GETs, nosniff, CSP on pages."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S          # socket timeout: an idle keep-alive or half-open connection is closed
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    # -- what a subclass decides ------------------------------------------------------------------------------
    def cache_control(self, rel: str) -> str:
        return "no-cache"

    def encoded_body(self, path: str, stat: os.stat_result) -> tuple[str, bytes] | None:
        """(Content-Encoding, body) to send instead of the file, or None to send it as it is."""
        return None

    def varies(self, path: str, stat: os.stat_result) -> bool:
        """Whether the answer for this file depends on Accept-Encoding (then `Vary` says so, encoded or not)."""
        return False

    # -- common ---------------------------------------------------------------------------------------------
    def end_headers(self):
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def list_directory(self, path):   # never: a folder without index.html is not a page
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")
        return None

    def inside(self, path: str) -> bool:
        """Whether path, with every symlink resolved, is in the served folder."""
        root = os.path.realpath(self.directory)
        real = os.path.realpath(path)
        return real == root or real.startswith(root + os.sep)

    def resolve(self) -> tuple[str | None, bool]:
        """The file this request names (index.html for a folder), or None; and whether a redirect was sent."""
        path = self.translate_path(self.path)
        if not self.inside(path):
            return None, False
        if os.path.isdir(path):
            parts = urllib.parse.urlsplit(self.path)
            if not parts.path.endswith("/"):
                self.send_response(HTTPStatus.MOVED_PERMANENTLY)
                self.send_header("Location", urllib.parse.urlunsplit(parts._replace(path=parts.path + "/")))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None, True
            path = os.path.join(path, "index.html")
        if path.endswith("/") or not os.path.isfile(path) or not self.inside(path):
            return None, False
        return path, False

    def send_head(self):
        path, redirected = self.resolve()
        if redirected:
            return None
        if path is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        try:
            f = open(path, "rb")
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        try:
            return self._answer(path, f)
        except BaseException:
            f.close()
            raise

    def _answer(self, path: str, f):
        stat = os.fstat(f.fileno())
        ctype = self.guess_type(path)
        rel = os.path.relpath(path, self.directory).replace(os.sep, "/")
        last_modified = formatdate(int(stat.st_mtime), usegmt=True)

        def headers():
            self.send_header("Last-Modified", last_modified)
            self.send_header("Cache-Control", self.cache_control(rel))
            if self.varies(path, stat):
                self.send_header("Vary", "Accept-Encoding")
            if ctype.startswith("text/html"):
                self.send_header("Content-Security-Policy", CSP)

        if self._not_modified(stat.st_mtime):
            f.close()
            self.send_response(HTTPStatus.NOT_MODIFIED)
            headers()
            self.end_headers()
            return None
        size = stat.st_size
        span = self._range(size, last_modified)
        encoded = None if span else self.encoded_body(path, stat)
        if span == "unsatisfiable":
            f.close()
            self.send_response(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            headers()
            self.end_headers()
            return None
        if encoded:
            f.close()
            coding, body = encoded
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Encoding", coding)
            self.send_header("Content-Length", str(len(body)))
            headers()
            self.end_headers()
            return io.BytesIO(body)
        if span:
            start, end = span
            f.seek(start)
            self.send_response(HTTPStatus.PARTIAL_CONTENT)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.send_header("Content-Length", str(end - start + 1))
            headers()
            self.end_headers()
            return _Slice(f, end - start + 1)
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(size))
        self.send_header("Accept-Ranges", "bytes")
        headers()
        self.end_headers()
        return f

    def _range(self, size: int, last_modified: str):
        """(first, last) byte of a single satisfiable `Range: bytes=...`, "unsatisfiable", or None (send it all:
        no Range, several ranges, a malformed one, or an If-Range that no longer matches)."""
        header = self.headers.get("Range")
        if not header:
            return None
        if_range = self.headers.get("If-Range")
        if if_range and if_range.strip() != last_modified:
            return None
        found = _RANGE.match(header.strip())
        if not found or found.group(1) == found.group(2) == "":
            return None
        first, last = found.groups()
        if first == "":                        # the last N bytes
            n = int(last)
            if n == 0:
                return "unsatisfiable"
            return max(0, size - n), size - 1
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
        if start >= size:
            return "unsatisfiable"
        if end < start:
            return None
        return start, end

    def _not_modified(self, mtime: float) -> bool:
        since = self.headers.get("If-Modified-Since")
        if not since or self.headers.get("If-None-Match"):
            return False
        try:
            return int(mtime) <= parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return False


class CompressedBodies:
    """sitegen.dist.compressed(file bytes, coding), made once per (file, mtime, coding): kept in memory and, when
    `folder` is given, on disk by content (sha256), so a restart or a rebuild of the same bytes costs nothing."""

    def __init__(self, folder: Path | None = None, max_entries: int = 512):
        self.folder, self.max_entries = folder, max_entries
        self.bodies: dict[tuple, bytes | None] = {}
        self.locks: dict[tuple, threading.Lock] = {}
        self.lock = threading.Lock()

    def get(self, path: str, stat: os.stat_result, coding: str) -> bytes | None:
        key = (path, stat.st_mtime_ns, stat.st_size, coding)
        with self.lock:
            if key in self.bodies:
                return self.bodies[key]
            key_lock = self.locks.setdefault(key, threading.Lock())
        with key_lock:                     # a second request for the same body waits for the first one's work
            with self.lock:
                if key in self.bodies:
                    return self.bodies[key]
            body = self._make(path, coding)
            with self.lock:
                if len(self.bodies) >= self.max_entries:
                    self.bodies.pop(next(iter(self.bodies)))
                self.bodies[key] = body
                self.locks.pop(key, None)
            return body

    def _make(self, path: str, coding: str) -> bytes | None:
        with open(path, "rb") as f:
            raw = f.read()
        return dist.cached_compressed(raw, coding, self.folder)


class CompressingHandler(StaticHandler):
    """StaticHandler that sends brotli/gzip as the request allows and says how long each file may be cached."""

    bodies = CompressedBodies()

    def cache_control(self, rel: str) -> str:
        return dist.IMMUTABLE if rel.split("/", 1)[0] in IMMUTABLE_FOLDERS else dist.REVALIDATE

    def varies(self, path: str, stat: os.stat_result) -> bool:
        return dist.compresses(Path(path), stat.st_size)

    def encoded_body(self, path: str, stat: os.stat_result) -> tuple[str, bytes] | None:
        if not self.varies(path, stat):
            return None
        accepted = accepted_encodings(self.headers.get("Accept-Encoding"))
        for coding, suffix in dist.ENCODINGS.items():     # brotli first, as hosts prefer it
            if coding not in accepted:
                continue
            beside = path + suffix                        # a served _dist/ has the copies already
            if os.path.isfile(beside) and self.inside(beside) and os.stat(beside).st_mtime >= stat.st_mtime:
                with open(beside, "rb") as f:
                    return coding, f.read()
            body = self.bodies.get(path, stat, coding)
            if body is not None:
                return coding, body
        return None


def warm(directory: Path, bodies: CompressedBodies, accept: tuple[str, ...] = ("br", "gzip")) -> None:
    """Compress the runtime files (the largest, named by content) ahead of the first request for them."""
    for folder in IMMUTABLE_FOLDERS:
        for path in sorted((directory / folder).rglob("*")) if (directory / folder).is_dir() else ():
            stat = path.stat()
            if (path.is_file() and dist.compresses(path, stat.st_size)
                    and not path.with_name(path.name + ".br").exists()):
                for coding in accept:
                    bodies.get(str(path), stat, coding)


def make_server(directory: Path, bind: str = "127.0.0.1", port: int = 0, *, cache_dir: Path | None = None,
                handler: type[CompressingHandler] = CompressingHandler) -> Server:
    """The `make serve` server for directory (not started); compressed bodies cached in cache_dir if given."""
    cls = type(handler.__name__, (handler,), {"bodies": CompressedBodies(cache_dir)})
    return Server((bind, port), functools.partial(cls, directory=str(directory)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("port", nargs="?", type=int, default=8000)
    parser.add_argument("--directory", "-d", default="_site")
    parser.add_argument("--bind", "-b", default="127.0.0.1")
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR, help="compressed bodies by content "
                        "(default: .cache/compressed/)")
    args = parser.parse_args(argv)
    directory = Path(args.directory)
    if not directory.is_dir():
        print(f"{directory}: no such folder (run `make build` first)", file=sys.stderr)
        return 2
    with make_server(directory, args.bind, args.port, cache_dir=args.cache_dir) as server:
        handler: Any = server.RequestHandlerClass   # (make_server: a functools.partial of the handler class)
        threading.Thread(target=warm, args=(directory, handler.func.bodies), daemon=True).start()
        print(f"serving {directory} on http://{args.bind}:{server.server_address[1]}/ (Ctrl+C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
