"""sitegen/serve.py, the server of `make serve` and of the bench: text gzip'd for a browser that accepts it, the
binary runtime files and everything for a client that does not as they are, and 304s for an unchanged file."""
from __future__ import annotations

import functools
import gzip
import http.client
import os
import threading
from email.utils import formatdate

import pytest

from sitegen.serve import CompressingHandler
from browser_fixtures import _QuietHandler, _QuietServer

PAGE = "<!doctype html><p>" + "参数 " * 2000 + "</p>\n"
WASM = bytes(range(256)) * 64


class Quiet(CompressingHandler, _QuietHandler):
    """The served handler, without a log line per request."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    (root / "data").mkdir()
    (root / "data" / "models.json").write_text('{"a": 1}', encoding="utf-8")
    (root / "pyodide.asm.wasm").write_bytes(WASM)
    s = _QuietServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=s.serve_forever, daemon=True).start()
    yield root, s.server_address[1]
    s.shutdown()
    s.server_close()


def get(port: int, path: str, **headers) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


@pytest.mark.parametrize("path", ["/index.html", "/"])
def test_a_page_is_sent_gzipped_to_a_browser_that_accepts_it(server, path):
    _, port = server
    r = get(port, path, **{"Accept-Encoding": "gzip, deflate, br"})
    assert r.status == 200 and r.getheader("Content-Encoding") == "gzip"
    assert r.getheader("Content-Type").startswith("text/html") and r.getheader("Vary") == "Accept-Encoding"
    assert int(r.getheader("Content-Length")) == len(r.body) < len(PAGE.encode()) // 10
    assert gzip.decompress(r.body).decode("utf-8") == PAGE


def test_json_is_compressed_too_and_keeps_its_type(server):
    _, port = server
    r = get(port, "/data/models.json", **{"Accept-Encoding": "gzip"})
    assert r.getheader("Content-Encoding") == "gzip" and r.getheader("Content-Type") == "application/json"
    assert gzip.decompress(r.body) == b'{"a": 1}'


@pytest.mark.parametrize("accept", [None, "identity", "br", "gzip;q=0"])
def test_a_client_that_does_not_accept_gzip_gets_the_file_as_it_is(server, accept):
    _, port = server
    r = get(port, "/index.html", **({"Accept-Encoding": accept} if accept else {}))
    assert r.status == 200 and r.getheader("Content-Encoding") is None and r.body == PAGE.encode("utf-8")


def test_the_runtimes_binary_files_are_sent_as_they_are(server):
    _, port = server
    r = get(port, "/pyodide.asm.wasm", **{"Accept-Encoding": "gzip"})
    assert r.getheader("Content-Encoding") is None and r.getheader("Content-Type") == "application/wasm"
    assert r.body == WASM


def test_an_unchanged_file_is_revalidated_with_304_and_a_changed_one_is_sent_again(server):
    root, port = server
    page = root / "index.html"
    first = get(port, "/index.html", **{"Accept-Encoding": "gzip"})
    since = first.getheader("Last-Modified")
    assert since == formatdate(int(page.stat().st_mtime), usegmt=True)
    again = get(port, "/index.html", **{"Accept-Encoding": "gzip", "If-Modified-Since": since})
    assert again.status == 304 and again.body == b""
    page.write_text(PAGE + "<p>改</p>\n", encoding="utf-8")
    later = page.stat().st_mtime + 10
    os.utime(page, (later, later))
    changed = get(port, "/index.html", **{"Accept-Encoding": "gzip", "If-Modified-Since": since})
    assert changed.status == 200 and gzip.decompress(changed.body).decode("utf-8").endswith("<p>改</p>\n")


def test_a_missing_file_is_404(server):
    _, port = server
    assert get(port, "/nothing.html", **{"Accept-Encoding": "gzip"}).status == 404
