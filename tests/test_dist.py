"""`make dist` (python -m sitegen.dist): the folder to publish, served by a plain static server.

The static files live under one folder named by their content, v/<hash>/, which the pages point at, and the
Python runtime stays in the folders the build already names by their content (pyodide/<version>/, py/<hash>/);
every text-like file has .gz and .br copies that decompress to it; the instructors' reports are left out; in
Chromium, served by the tests' plain static server, the pages load and the Python runtime gets ready with every
request answered from a content-named folder (or a page / its data), none failing.
"""
from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys

import brotli
import pytest

from browser_fixtures import wait_runtime_ready
from build_fixtures import REPO, build_in_temp_copy
from sitegen.dist import content_hash


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    result = build_in_temp_copy(tmp_path_factory.mktemp("dist"))
    out = result.root / "_dist"
    proc = subprocess.run([sys.executable, "-m", "sitegen.dist", "--site", str(result.out), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return result.out, out, proc.stdout


def test_runtime_and_static_files_are_under_their_content_hash(dist):
    site, out, stdout = dist
    version = content_hash(site)
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    assert [p.name for p in (out / "v").iterdir()] == [version] and f"v/{version}/" in stdout
    assert not (out / "static").exists() and (out / "v" / version / "static").is_dir()
    for name in ("py", "pyodide"):   # content-named by the build: the same folders, the same bytes
        published = sorted(p.relative_to(out).as_posix() for p in (out / name).rglob("*")
                           if p.suffix not in (".gz", ".br"))
        assert published == sorted(p.relative_to(site).as_posix() for p in (site / name).rglob("*"))
    (zip_path,) = (out / "py").glob("*/experiments.zip")
    assert zip_path.read_bytes() == (site / zip_path.relative_to(out)).read_bytes()
    for page in ("index.html", "c4-fixture.html", "c5-fixture.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert not re.search(r'(?:src|href)="static/', text), page
        assert f'src="v/{version}/static/js/' in text
        assert text == (site / page).read_text(encoding="utf-8").replace('="static/', f'="v/{version}/static/')
    for report in ("changes.html", "changes.json", "numbers.json"):
        assert (site / report).exists() and not (out / report).exists()
    headers = (out / "_headers").read_text(encoding="utf-8")
    for folder in ("/v/*", "/py/*", "/pyodide/*"):
        assert f"{folder}\n  Cache-Control: public, max-age=31536000, immutable" in headers
    assert (out / ".nojekyll").exists()


def test_hash_changes_with_any_static_byte(tmp_path, dist):
    site, _, _ = dist
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "x.js").write_bytes(b"one")
    first = content_hash(tmp_path)
    (tmp_path / "static" / "x.js").write_bytes(b"two")
    assert content_hash(tmp_path) != first
    assert content_hash(site) == content_hash(site)


def test_precompressed_copies_are_the_same_bytes(dist):
    _, out, _ = dist
    pairs = 0
    for packed in sorted(out.rglob("*.gz")) + sorted(out.rglob("*.br")):
        raw = packed.with_suffix("").read_bytes()
        body = packed.read_bytes()
        data = gzip.decompress(body) if packed.suffix == ".gz" else brotli.decompress(body)
        assert data == raw, packed
        assert packed.stat().st_size < len(raw)
        pairs += 1
    version = next((out / "v").iterdir()).name
    (worker,) = (out / "py").glob("*/worker.js")
    for rel in ("index.html", "pyodide/0.27.7/pyodide.asm.wasm", worker.relative_to(out).as_posix(),
                f"v/{version}/static/css/course.css"):
        assert (out / (rel + ".gz")).is_file() and (out / (rel + ".br")).is_file(), rel
    assert not list(out.rglob("*.zip.gz")) and not list(out.rglob("*.whl.br"))   # already compressed
    assert pairs > 20


def test_compressed_bodies_are_kept_by_content(tmp_path):
    """precompress with a cache folder: each body is computed once and kept by the sha256 of the bytes (`.none`
    when compressing does not make it smaller); a second folder with the same bytes reads them from the cache."""
    from sitegen.dist import cached_compressed, precompress
    text = ("const x = 1;\n" * 400).encode()
    noise = random.Random(0).randbytes(2048)       # 2 kB that gzip and brotli cannot shrink
    cache = tmp_path / "cache"
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.js").write_bytes(text)
        (tmp_path / name / "b.json").write_bytes(noise)
    written = precompress(tmp_path / "first", cache)
    assert sorted(p.name for p in written) == ["a.js.br", "a.js.gz"]
    assert sorted(p.suffix for p in cache.iterdir()) == [".br", ".gz", ".none", ".none"]
    assert brotli.decompress((tmp_path / "first" / "a.js.br").read_bytes()) == text
    (stored,) = cache.glob("*.br")
    stored.write_bytes(b"from the cache")          # the second folder's copy comes from the cache, not brotli
    precompress(tmp_path / "second", cache)
    assert (tmp_path / "second" / "a.js.br").read_bytes() == b"from the cache"
    assert not (tmp_path / "second" / "b.json.br").exists()
    assert cached_compressed(text, "gzip", None) == gzip.compress(text, compresslevel=9, mtime=0)


def test_dist_serves_from_a_plain_static_server(dist, http_serve, guarded_page):
    _, out, _ = dist
    version = next((out / "v").iterdir()).name
    base = http_serve(out)
    page = guarded_page
    responses = []
    page.context.on("response", lambda r: responses.append((r.url, r.status)))
    page.goto(base + "index.html")                  # the outline runs no Python: it has no runtime status
    assert page.locator("[data-testid=pyodide-status]").count() == 0
    page.goto(base + "c4-fixture.html")
    wait_runtime_ready(page)
    paths = [url[len(base):] for url, _ in responses if url.startswith(base)]
    assert all(status in (200, 304) for _, status in responses), [r for r in responses if r[1] not in (200, 304)]
    (worker,) = (out / "py").glob("*/worker.js")
    assert "pyodide/0.27.7/pyodide.asm.wasm" in paths and worker.relative_to(out).as_posix() in paths
    assert [p for p in paths if re.fullmatch(rf"v/{version}/static/js/page-[0-9a-f]{{12}}\.js", p)]   # its scripts
    outside = [p for p in paths if not p.startswith((f"v/{version}/", "py/", "pyodide/")) and not p.endswith(".html")
               and not p.startswith("data/")]
    assert outside == [], outside
    assert page.locator(".num").count() > 0
    page.guard.assert_clean()


def test_the_service_workers_list_and_the_manifest_point_at_the_published_files(dist):
    """sw.js (sitegen/offline.py) lists every file a browser may fetch; in _dist/ each is where the list says."""
    site, out, _ = dist
    version = next((out / "v").iterdir()).name
    listed = json.loads(re.search(r"const FILES = (\[.*?\]);", (out / "sw.js").read_text(encoding="utf-8")).group(1))
    assert listed and all((out / f).is_file() for f in listed), [f for f in listed if not (out / f).is_file()]
    assert not [f for f in listed if f.startswith("static/")] and f"v/{version}/static/js/offline.js" in listed
    assert {"index.html", "data/models.json", "manifest.webmanifest"} <= set(listed)
    assert not [f for f in listed if f.endswith((".gz", ".br")) or f in ("changes.html", "numbers.json")]
    published = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert sorted(published - set(listed)) == sorted(p for p in published if p.endswith((".gz", ".br"))
                                                      or p in ("sw.js", "_headers", ".nojekyll"))
    manifest = json.loads((out / "manifest.webmanifest").read_text(encoding="utf-8"))
    assert [i["sizes"] for i in manifest["icons"]] == ["192x192", "512x512"]
    assert all((out / i["src"]).is_file() and i["src"].startswith(f"v/{version}/static/") for i in manifest["icons"])
