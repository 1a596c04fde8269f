"""sitegen/serve.py (the server of `make serve` and of the bench) and the parts of it the dev server shares
(sitegen/devserver.py): what a well-configured host does, each probed on 127.0.0.1.

Compression (brotli or gzip as Accept-Encoding allows, q-values honoured, the bytes `make dist` writes, Vary on
every answer for a compressible file), caching (Cache-Control, Last-Modified on 200 and 304), Range (206, 416),
safety (no listings, no symlink out of the folder, nosniff, CSP on pages) and connections (idle timeout, a listen
backlog that takes a burst of connections; a bounded load test). Every probe is bounded in count and time and waits
on conditions (a socket read with a timeout), never on a sleep.
"""
from __future__ import annotations

import concurrent.futures
import functools
import gzip
import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from email.utils import formatdate
from pathlib import Path

import brotli
import pytest

from browser_fixtures import _QuietHandler
from sitegen import dist
from sitegen.devserver import BuildState, DevHandler
from sitegen.devserver import make_server as make_dev_server
from sitegen.pages import CSP
from sitegen.serve import CompressedBodies, CompressingHandler, Server, accepted_encodings

REPO = Path(__file__).resolve().parent.parent
PAGE = "<!doctype html><p>" + "参数 " * 2000 + "</p>\n"
WASM = bytes(range(256)) * 64 + b"\0" * 20000         # compresses, as the real wasm does
WHEEL = os.urandom(5000)                                # does not, and is not tried


class Quiet(CompressingHandler, _QuietHandler):
    """The served handler, without a log line per request."""
    bodies = CompressedBodies()


def _start(server) -> tuple[int, callable]:
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop():
        server.shutdown()
        server.server_close()
    return server.server_address[1], stop


def _fill(root: Path, outside: Path) -> None:
    (root / "index.html").write_text(PAGE, encoding="utf-8")
    (root / "data").mkdir()
    (root / "data" / "models.json").write_text('{"a": 1}', encoding="utf-8")
    runtime = root / "pyodide" / "0.27.7"
    runtime.mkdir(parents=True)
    (runtime / "pyodide.asm.wasm").write_bytes(WASM)
    (runtime / "numpy.whl").write_bytes(WHEEL)
    (outside / "secret.txt").write_text("not for the web\n", encoding="utf-8")
    (outside / "dir").mkdir()
    (outside / "dir" / "index.html").write_text("<p>outside</p>", encoding="utf-8")
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "leakdir").symlink_to(outside / "dir")
    (root / "alias.html").symlink_to(root / "index.html")   # a link that stays inside is fine


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root, outside = tmp_path_factory.mktemp("served"), tmp_path_factory.mktemp("outside")
    _fill(root, outside)
    port, stop = _start(Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root))))
    yield root, port
    stop()


def get(port: int, path: str, method: str = "GET", **headers) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, headers={k.replace("_", "-"): v for k, v in headers.items()})
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


# -- compression -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/index.html", "/"])
def test_a_page_is_sent_brotli_or_gzip_as_the_browser_allows(server, path):
    _, port = server
    r = get(port, path, Accept_Encoding="gzip, deflate, br")
    assert r.status == 200 and r.getheader("Content-Encoding") == "br"
    assert r.getheader("Content-Type").startswith("text/html") and r.getheader("Vary") == "Accept-Encoding"
    assert int(r.getheader("Content-Length")) == len(r.body) < len(PAGE.encode()) // 10
    assert brotli.decompress(r.body).decode("utf-8") == PAGE
    r = get(port, path, Accept_Encoding="gzip")
    assert r.getheader("Content-Encoding") == "gzip" and gzip.decompress(r.body).decode("utf-8") == PAGE


def test_json_is_compressed_too_and_keeps_its_type(server):
    root, port = server
    (root / "data" / "big.json").write_text('{"a": [' + "1," * 2000 + "1]}", encoding="utf-8")
    r = get(port, "/data/big.json", Accept_Encoding="gzip")
    assert r.getheader("Content-Encoding") == "gzip" and r.getheader("Content-Type") == "application/json"
    assert gzip.decompress(r.body) == (root / "data" / "big.json").read_bytes()


@pytest.mark.parametrize("accept", [None, "identity", "deflate", "gzip;q=0", "gzip; q=0", "gzip;q=0.0",
                                    "br;q=0, gzip;q=0, identity", "*;q=0", "gzip;q=0, br;q=0.000"])
def test_a_client_that_does_not_accept_a_coding_gets_the_file_as_it_is(server, accept):
    _, port = server
    r = get(port, "/index.html", **({"Accept-Encoding": accept} if accept else {}))
    assert r.status == 200 and r.getheader("Content-Encoding") is None and r.body == PAGE.encode("utf-8")
    assert r.getheader("Vary") == "Accept-Encoding"   # a cache must not hand this copy to a browser that takes br


@pytest.mark.parametrize("header, expected", [
    ("gzip, deflate, br, zstd", {"gzip", "br"}), ("gzip;q=0.5, br;q=0", {"gzip"}), ("*", {"gzip", "br"}),
    ("*;q=0.1, gzip;q=0", {"br"}), ("GZIP", {"gzip"}), ("", set()), ("gzip;q=bad", set())])
def test_accept_encoding_q_values(header, expected):
    assert accepted_encodings(header) == expected


def test_the_runtime_wasm_is_sent_compressed_with_the_bytes_make_dist_writes(server):
    _, port = server
    for coding, decode in (("br", brotli.decompress), ("gzip", gzip.decompress)):
        r = get(port, "/pyodide/0.27.7/pyodide.asm.wasm", Accept_Encoding=coding)
        assert r.getheader("Content-Encoding") == coding and r.getheader("Content-Type") == "application/wasm"
        assert r.body == dist.compressed(WASM, coding) and decode(r.body) == WASM
        assert r.getheader("Vary") == "Accept-Encoding"


def test_the_wheel_is_sent_as_it_is(server):
    _, port = server
    r = get(port, "/pyodide/0.27.7/numpy.whl", Accept_Encoding="br, gzip")
    assert r.getheader("Content-Encoding") is None and r.body == WHEEL and r.getheader("Vary") is None


def test_precompressed_copies_beside_a_file_are_what_is_sent(tmp_path):
    """A served _dist/ (as `make dist` writes it): NAME.br / NAME.gz are sent as they are, as nginx's
    brotli_static / gzip_static do."""
    (tmp_path / "a.js").write_text("let x = 1;\n" * 500, encoding="utf-8")
    dist.precompress(tmp_path)
    (tmp_path / "a.js.gz").write_bytes(gzip.compress((tmp_path / "a.js").read_bytes(), 1, mtime=0))   # marked
    port, stop = _start(Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path))))
    try:
        assert get(port, "/a.js", Accept_Encoding="br").body == (tmp_path / "a.js.br").read_bytes()
        assert get(port, "/a.js", Accept_Encoding="gzip").body == (tmp_path / "a.js.gz").read_bytes()
    finally:
        stop()


def test_compressed_bodies_are_kept_on_disk_by_content(tmp_path):
    path = tmp_path / "x.wasm"
    path.write_bytes(WASM)
    cache = tmp_path / "cache"
    body = CompressedBodies(cache).get(str(path), path.stat(), "br")
    assert body == dist.compressed(WASM, "br") and len(list(cache.glob("*.br"))) == 1
    (stored,) = cache.glob("*.br")
    stored.write_bytes(b"from the cache")          # a fresh server reads it instead of compressing again
    assert CompressedBodies(cache).get(str(path), path.stat(), "br") == b"from the cache"


# -- caching -----------------------------------------------------------------------------------------------------
def test_cache_control_immutable_for_content_named_folders_revalidate_for_pages(server):
    _, port = server
    assert get(port, "/pyodide/0.27.7/pyodide.asm.wasm").getheader("Cache-Control") == dist.IMMUTABLE
    for path in ("/index.html", "/", "/data/models.json"):
        assert get(port, path).getheader("Cache-Control") == dist.REVALIDATE, path


def test_an_unchanged_file_is_revalidated_with_304_and_a_changed_one_is_sent_again(server):
    root, port = server
    page = root / "index.html"
    first = get(port, "/index.html", Accept_Encoding="gzip")
    since = first.getheader("Last-Modified")
    assert since == formatdate(int(page.stat().st_mtime), usegmt=True)
    again = get(port, "/index.html", Accept_Encoding="gzip", If_Modified_Since=since)
    assert again.status == 304 and again.body == b""
    assert again.getheader("Last-Modified") == since and again.getheader("Cache-Control") == dist.REVALIDATE
    assert again.getheader("Vary") == "Accept-Encoding"
    plain = get(port, "/pyodide/0.27.7/numpy.whl", If_Modified_Since=get(port, "/pyodide/0.27.7/numpy.whl")
                .getheader("Last-Modified"))
    assert plain.status == 304 and plain.getheader("Last-Modified")
    page.write_text(PAGE + "<p>改</p>\n", encoding="utf-8")
    later = page.stat().st_mtime + 10
    os.utime(page, (later, later))
    changed = get(port, "/index.html", Accept_Encoding="gzip", If_Modified_Since=since)
    assert changed.status == 200 and gzip.decompress(changed.body).decode("utf-8").endswith("<p>改</p>\n")
    page.write_text(PAGE, encoding="utf-8")


# -- Range -------------------------------------------------------------------------------------------------------
def test_range_requests_get_206_with_the_bytes_asked_for(server):
    _, port = server
    wasm = "/pyodide/0.27.7/pyodide.asm.wasm"
    r = get(port, wasm, Range="bytes=100-199")
    assert r.status == 206 and r.body == WASM[100:200] and r.getheader("Content-Encoding") is None
    assert r.getheader("Content-Range") == f"bytes 100-199/{len(WASM)}" and r.getheader("Content-Length") == "100"
    assert get(port, wasm, Range="bytes=-10").body == WASM[-10:]
    assert get(port, wasm, Range=f"bytes={len(WASM) - 5}-").body == WASM[-5:]
    assert get(port, wasm, Range="bytes=0-999999999").body == WASM
    assert get(port, "/pyodide/0.27.7/pyodide.asm.wasm", Range="bytes=0-9", Accept_Encoding="br").body == WASM[:10]
    too_far = get(port, wasm, Range=f"bytes={len(WASM)}-")
    assert too_far.status == 416 and too_far.getheader("Content-Range") == f"bytes */{len(WASM)}"
    full = get(port, wasm)
    assert full.status == 200 and full.getheader("Accept-Ranges") == "bytes"
    stale = get(port, wasm, Range="bytes=0-9", If_Range="Thu, 01 Jan 1998 00:00:00 GMT")
    assert stale.status == 200 and stale.body == WASM                       # the file changed: all of it
    fresh = get(port, wasm, Range="bytes=0-9", If_Range=full.getheader("Last-Modified"))
    assert fresh.status == 206 and fresh.body == WASM[:10]
    assert get(port, wasm, Range="bytes=0-1,5-6").status == 200            # several ranges: all of it


def test_head_sends_the_headers_only(server):
    _, port = server
    r = get(port, "/pyodide/0.27.7/pyodide.asm.wasm", method="HEAD", Accept_Encoding="br")
    assert r.status == 200 and r.body == b"" and int(r.getheader("Content-Length")) == len(dist.compressed(WASM, "br"))


# -- safety ------------------------------------------------------------------------------------------------------
def test_no_directory_listing(server):
    _, port = server
    for path in ("/data/", "/pyodide/", "/pyodide/0.27.7/"):
        r = get(port, path)
        assert r.status == 404 and b"models.json" not in r.body and b"wasm" not in r.body, path
    assert get(port, "/data").status == 301


def test_symlinks_out_of_the_served_folder_are_not_followed(server):
    _, port = server
    for path in ("/leak.txt", "/leakdir/", "/leakdir/index.html"):
        r = get(port, path)
        assert r.status == 404 and b"not for the web" not in r.body and b"outside" not in r.body, path
    assert get(port, "/alias.html").status == 200     # a link inside the folder is served
    assert get(port, "/../" * 3 + "etc/passwd").status == 404


def test_nosniff_everywhere_and_the_pages_csp_as_a_header(server):
    _, port = server
    for path in ("/index.html", "/data/models.json", "/pyodide/0.27.7/pyodide.asm.wasm", "/nothing", "/data/"):
        assert get(port, path).getheader("X-Content-Type-Options") == "nosniff", path
    assert get(port, "/index.html").getheader("Content-Security-Policy") == CSP
    assert get(port, "/data/models.json").getheader("Content-Security-Policy") is None


def test_the_csp_header_is_the_one_in_every_built_page():
    for page in ("index.html", "c4-transformer-block.html"):
        built = REPO / "_site" / page
        if built.exists():
            assert f'content="{CSP}"' in built.read_text(encoding="utf-8").replace("&#39;", "'"), page


def test_a_missing_file_is_404(server):
    _, port = server
    assert get(port, "/nothing.html", Accept_Encoding="gzip").status == 404


# -- connections -------------------------------------------------------------------------------------------------
def _closed_by_server(sock: socket.socket, limit_s: float) -> bool:
    """Read until the server closes the connection (True) or limit_s passes with it still open (False)."""
    sock.settimeout(limit_s)
    try:
        while sock.recv(4096):
            pass
        return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


@pytest.mark.parametrize("kind", ["serve", "dev"])
def test_idle_and_half_open_connections_are_closed(tmp_path, kind):
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    if kind == "serve":
        handler = type("Idle", (Quiet,), {"timeout": 0.5})
        server = Server(("127.0.0.1", 0), functools.partial(handler, directory=str(tmp_path)))
    else:
        server = make_dev_server(tmp_path, BuildState(), 0)
        server.RequestHandlerClass = functools.partial(type("Idle", (DevHandler,), {"timeout": 0.5}),
                                                       state=BuildState(), directory=str(tmp_path))
    port, stop = _start(server)
    try:
        socks = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(100)]
        for s in socks[:50]:
            s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n")   # half a request, never finished
        assert get(port, "/index.html").status == 200               # the server still answers meanwhile
        assert all(_closed_by_server(s, 10) for s in socks)
        keep = socket.create_connection(("127.0.0.1", port), timeout=10)
        keep.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")   # keep-alive: answered, then closed when idle
        assert _closed_by_server(keep, 10)
        for s in socks + [keep]:
            s.close()
    finally:
        stop()


def test_both_servers_listen_with_a_real_backlog(tmp_path):
    dev = make_dev_server(tmp_path, BuildState(), 0)
    try:
        assert Server.request_queue_size >= 128 and dev.request_queue_size >= 128
    finally:
        dev.server_close()


LOAD_REQUESTS, LOAD_CONCURRENCY = 2000, 50


def test_load_2000_requests_at_50_concurrent_every_one_answered_whole(tmp_path):
    """`python -m sitegen.serve` in its own process (as `make serve` runs); 50 threads, each opening a new
    connection per request (the worst case for the listen backlog), 2,000 requests for the outline page: none is
    refused or cut short. (How fast they are answered is a figure of `make bench`, not a test: timing depends on
    how busy the machine is.)"""
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "sitegen.serve", "--directory", str(tmp_path),
                             "--cache-dir", str(tmp_path / "cache"), "0"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        port = int(line.rsplit(":", 1)[1].split("/", 1)[0])

        def one(_):
            t0 = time.perf_counter()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", "/index.html", headers={"Accept-Encoding": "gzip"})
                r = conn.getresponse()
                ok = r.status == 200 and len(r.read()) == int(r.getheader("Content-Length"))
                conn.close()
            except OSError:
                ok = False
            return ok, time.perf_counter() - t0

        with concurrent.futures.ThreadPoolExecutor(LOAD_CONCURRENCY) as pool:
            results = list(pool.map(one, range(LOAD_REQUESTS)))
        errors = sum(1 for ok, _ in results if not ok)
        times = sorted(t for _, t in results)
        p99_ms = times[int(len(times) * 0.99) - 1] * 1000
        print(f"load: {LOAD_REQUESTS} requests at {LOAD_CONCURRENCY} concurrent: {errors} errors, "
              f"p50 {times[len(times) // 2] * 1000:.1f} ms, p99 {p99_ms:.1f} ms, max {times[-1] * 1000:.1f} ms")
        assert errors == 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- the dev server shares the safety rules -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def dev_server(tmp_path_factory):
    root, outside = tmp_path_factory.mktemp("dev-served"), tmp_path_factory.mktemp("dev-outside")
    _fill(root, outside)
    server = make_dev_server(root, BuildState(), 0)
    port, stop = _start(server)
    yield root, port
    stop()


def test_dev_server_refuses_listings_and_symlinks_out_and_sends_nosniff_and_csp(dev_server):
    _, port = dev_server
    for path in ("/data/", "/pyodide/", "/leak.txt", "/leakdir/", "/leakdir/index.html"):
        r = get(port, path)
        assert r.status == 404 and b"not for the web" not in r.body and b"<p>outside" not in r.body, path
        assert r.getheader("X-Content-Type-Options") == "nosniff"
    page = get(port, "/index.html")
    assert page.status == 200 and page.getheader("Content-Security-Policy") == CSP
    assert page.getheader("Cache-Control") == "no-store" and page.getheader("X-Content-Type-Options") == "nosniff"
    assert get(port, "/pyodide/0.27.7/pyodide.asm.wasm", Range="bytes=0-9").body == WASM[:10]


def test_dev_server_retires_any_service_worker(dev_server):
    """A course served by `make serve` on the same port earlier may have installed its service worker: the dev
    server's /sw.js unregisters it and drops its caches, so the live preview is never answered from a cache."""
    _, port = dev_server
    r = get(port, "/sw.js")
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/javascript")
    assert b"unregister()" in r.body and b"caches.delete" in r.body
