"""The local static server for the built site (`make serve`, and the bench's server): the standard library's
http.server, plus what any production host does and `make dist` prepares for (its .gz/.br copies, see
docs/publishing.md): text files (HTML, CSS, JS, JSON, SVG) are sent gzip-compressed to a browser that accepts it.

On a phone's slow connection the lesson pages' text is most of what stands between the first paint and the first
answer, and it shrinks about 3-4x; the binary runtime files (wasm, wheels, zips) are sent as they are, as hosts do.
A compressed answer keeps the file's Last-Modified and answers If-Modified-Since with 304, so a revisit still
revalidates instead of downloading. Compressed bodies are kept per (file, mtime), so a file is compressed once.

    python -m sitegen.serve [--directory _site] [--bind 127.0.0.1] [PORT]
"""
from __future__ import annotations

import argparse
import functools
import gzip
import io
import os
from email.utils import formatdate, parsedate_to_datetime
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

MIME_TYPES = {   # what the built site holds (the dev server and the tests' servers use the same map)
    ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json",
    ".whl": "application/octet-stream", ".zip": "application/octet-stream", ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2",
}
COMPRESSIBLE = (".html", ".htm", ".css", ".js", ".mjs", ".json", ".svg", ".txt", ".map")
GZIP_LEVEL = 6   # what nginx and most hosts use


@functools.lru_cache(maxsize=256)
def _gzipped(path: str, mtime_ns: int) -> bytes:   # (mtime_ns: a changed file is a new entry)
    with open(path, "rb") as f:
        return gzip.compress(f.read(), GZIP_LEVEL, mtime=0)


class CompressingHandler(SimpleHTTPRequestHandler):
    """SimpleHTTPRequestHandler that sends text files gzip'd when the request accepts gzip."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path) and self.path.split("?", 1)[0].endswith("/"):
            path = os.path.join(path, "index.html")
        if not (path.endswith(COMPRESSIBLE) and os.path.isfile(path) and self._accepts_gzip()):
            return super().send_head()
        stat = os.stat(path)
        if self._not_modified(stat.st_mtime):
            self.send_response(HTTPStatus.NOT_MODIFIED)
            self.end_headers()
            return None
        body = _gzipped(path, stat.st_mtime_ns)
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", formatdate(stat.st_mtime, usegmt=True))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)

    def _accepts_gzip(self) -> bool:
        codings = (self.headers.get("Accept-Encoding") or "").lower().replace(" ", "").split(",")
        return any(c == "gzip" or (c.startswith("gzip;") and not c.endswith("q=0")) for c in codings)

    def _not_modified(self, mtime: float) -> bool:
        since = self.headers.get("If-Modified-Since")
        if not since or self.headers.get("If-None-Match"):
            return False
        try:
            return int(mtime) <= parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("port", nargs="?", type=int, default=8000)
    parser.add_argument("--directory", "-d", default="_site")
    parser.add_argument("--bind", "-b", default="127.0.0.1")
    args = parser.parse_args(argv)
    handler = functools.partial(CompressingHandler, directory=args.directory)
    with ThreadingHTTPServer((args.bind, args.port), handler) as server:
        print(f"serving {args.directory} on http://{args.bind}:{server.server_address[1]}/ (Ctrl+C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
