"""`make dist`: the folder to publish, made from a built site (_site/ -> _dist/).

    python -m sitegen.dist [--site _site] [--out _dist] [--cache-dir .cache/compressed]

What changes from _site/ (which stays as it is, for `make serve` and the tests):
- The Python runtime is content-named by the build already (`pyodide/<version>/`, `py/<hash>/`, see
  sitegen/runtime.py) and stays where it is. static/ moves into one version folder named by its content,
  `v/<hash>/static/`: the hash is sha256 over every file's path and bytes in it, so a file in there never changes
  under the same URL. A host may let browsers cache `v/`, `py/` and `pyodide/` forever
  (`Cache-Control: public, max-age=31536000, immutable`). Only the pages' `src="static/..."` /
  `href="static/..."` are rewritten, to `v/<hash>/static/...`; inside static/ every reference was relative
  already (charts.js finds ../vendor/), and the pages name the runtime by its site-relative, content-named URLs.
- The service worker's file list and the manifest's icons (sw.js, manifest.webmanifest, sitegen/offline.py) are
  pointed at `v/<hash>/static/` the same way; its version (a hash of the build's files) stays the build's.
- The pages (*.html) and data/ keep their names: they change with every build, so they are revalidated.
- The build's reports for instructors (numbers.json, changes.json, changes.html) are left out.
- Every text-like file of 1 kB or more gets precompressed copies beside it, `NAME.gz` (gzip -9) and `NAME.br`
  (brotli), kept only when smaller, for hosts that serve them as they are (nginx gzip_static / brotli_static,
  Caddy `file_server { precompressed br gzip }`, object storage with Content-Encoding). The compressed bodies are
  kept by content (sha256) in the cache folder `make serve` uses as well, so the same bytes are compressed once.
- `.nojekyll` (GitHub Pages serves the folder as is) and `_headers` (the cache rules, in the format Netlify and
  Cloudflare Pages read) are added. docs/publishing.md says how to publish it.

Like the build, it writes a new sibling folder and swaps it in only when complete (sitegen/swap.py).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import shutil
import sys
import threading
from pathlib import Path

from experiments.errors import CourseError
from sitegen.swap import staging, swap_in

ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = ROOT / ".cache" / "compressed"       # compressed bodies by content, shared with sitegen/serve.py
VERSIONED = ("static",)                          # moved into v/<hash>/
CONTENT_NAMED = ("py", "pyodide")                # named by their content in the build already: cached forever
LEFT_OUT = ("numbers.json", "changes.json", "changes.html")
COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".svg", ".wasm", ".txt", ".map", ".py"}
MIN_COMPRESS_BYTES = 1024
HASH_CHARS = 12
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "public, max-age=0, must-revalidate"
_STATIC_REF = re.compile(r'((?:src|href)=")static/')
_LISTED_STATIC = re.compile(r'(")static/')          # in sw.js's file list and the manifest's icons
LISTS = ("sw.js", "manifest.webmanifest")           # sitegen/offline.py


class DistError(CourseError):
    pass


def content_hash(folder: Path, names: tuple[str, ...] = VERSIONED) -> str:
    """sha256 over the relative path and bytes of every file under folder/<name> for each name."""
    digest = hashlib.sha256()
    for name in names:
        for path in sorted((folder / name).rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:HASH_CHARS]


def copy_site(site: Path, dest: Path) -> str:
    """The site into dest with the versioned folders under v/<hash>/; returns that prefix (v/<hash>/)."""
    version = f"v/{content_hash(site)}/"
    for path in sorted(site.iterdir()):
        if path.name in LEFT_OUT:
            continue
        target = dest / version / path.name if path.name in VERSIONED else dest / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, target)
        else:
            shutil.copy2(path, target)
    return version


def rewrite_pages(dest: Path, version: str) -> int:
    """Point every page's static/ references at the version folder; returns how many were rewritten."""
    count = 0
    for page in sorted(dest.rglob("*.html")):
        if page.is_relative_to(dest / "v"):
            continue
        text, n = _STATIC_REF.subn(lambda m: m.group(1) + version + "static/", page.read_text(encoding="utf-8"))
        page.write_text(text, encoding="utf-8")
        count += n
    for name in LISTS:
        if (dest / name).is_file():
            text = (dest / name).read_text(encoding="utf-8")
            (dest / name).write_text(_LISTED_STATIC.sub(lambda m: m.group(1) + version + "static/", text),
                                     encoding="utf-8")
    return count


ENCODINGS = {"br": ".br", "gzip": ".gz"}       # Content-Encoding -> the copy's suffix, in order of preference


def compresses(path: Path, size: int) -> bool:
    """Whether a file of this name and size gets precompressed copies (text-like, 1 kB or more; the wheel and the
    zips are compressed already)."""
    return path.suffix in COMPRESSIBLE and size >= MIN_COMPRESS_BYTES


def compressed(raw: bytes, encoding: str) -> bytes | None:
    """raw as `encoding` ("gzip": gzip -9, no timestamp; "br": brotli, q11, q9 above 2 MB), or None when that is not
    smaller (or brotli is missing). Deterministic: `make serve` (sitegen/serve.py) sends these same bytes."""
    if encoding == "gzip":
        data = gzip.compress(raw, compresslevel=9, mtime=0)
    elif encoding == "br":
        try:
            import brotli
        except ImportError:   # gzip alone is still useful; brotli is in pyproject's dependencies
            return None
        data = brotli.compress(raw, quality=11 if len(raw) < 2_000_000 else 9)   # q11 on the 10 MB wasm: too slow
    else:
        raise ValueError(f"unknown encoding {encoding!r}")
    return data if len(data) < len(raw) else None


def cached_compressed(raw: bytes, encoding: str, folder: Path | None) -> bytes | None:
    """compressed(raw, encoding), kept in `folder` by content (sha256 of raw; a `.none` marker when it is not
    smaller), so the same bytes cost nothing the next time; no folder: computed. A cache that cannot be written
    only costs the work again."""
    if folder is None:
        return compressed(raw, encoding)
    stored = folder / f"{hashlib.sha256(raw).hexdigest()}{ENCODINGS[encoding]}"
    if stored.is_file():
        return stored.read_bytes()
    if (folder / f"{stored.name}.none").is_file():
        return None
    body = compressed(raw, encoding)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target = stored if body is not None else folder / f"{stored.name}.none"
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")
        tmp.write_bytes(body or b"")
        os.replace(tmp, target)
    except OSError:
        pass
    return body


def precompress(dest: Path, cache_dir: Path | None = None) -> list[Path]:
    """NAME.gz and NAME.br beside every text-like file >= 1 kB (each kept only if smaller); bodies come from
    cache_dir when it has them (cached_compressed)."""
    written = []
    for path in sorted(p for p in dest.rglob("*") if p.is_file()):
        if not compresses(path, path.stat().st_size):
            continue
        raw = path.read_bytes()
        for encoding, suffix in ENCODINGS.items():
            data = cached_compressed(raw, encoding, cache_dir)
            if data is not None:
                out = path.with_name(path.name + suffix)
                out.write_bytes(data)
                written.append(out)
    return written


def write_host_files(dest: Path, version: str) -> None:
    (dest / ".nojekyll").write_text("", encoding="utf-8")
    (dest / "_headers").write_text(
        "# Cache rules for hosts that read this file (Netlify, Cloudflare Pages); see docs/publishing.md\n"
        + "".join(f"/{name}/*\n  Cache-Control: {IMMUTABLE}\n" for name in ("v", *CONTENT_NAMED))
        + f"/*\n  Cache-Control: {REVALIDATE}\n", encoding="utf-8")


def make_dist(site: Path, out: Path, cache_dir: Path | None = None) -> str:
    """_site -> _dist (swapped in when complete); returns the version prefix (v/<hash>/). cache_dir: where
    compressed bodies are kept by content (None: none kept)."""
    site, out = Path(site).resolve(), Path(out).resolve()
    if not (site / "index.html").is_file():
        raise DistError(f"{site}: expected a built site (index.html); run `make build` first")
    tmp = staging(out)
    try:
        version = copy_site(site, tmp)
        if not rewrite_pages(tmp, version):
            raise DistError(f"{site}: no page refers to static/; nothing to point at {version}")
        write_host_files(tmp, version)
        precompress(tmp, cache_dir)
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.dist", description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_site", help="the built site (default: _site)")
    parser.add_argument("--out", type=Path, default=ROOT / "_dist", help="the folder to publish (default: _dist)")
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR,
                        help="compressed bodies by content (default: .cache/compressed/, as `make serve`)")
    args = parser.parse_args(argv)
    try:
        version = make_dist(args.site, args.out, args.cache_dir)
    except CourseError as e:
        print(e, file=sys.stderr)
        return 1
    files = [p for p in args.out.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files if p.suffix not in (".gz", ".br"))
    print(f"dist {args.out}: {len(files)} files ({size / 1e6:.1f} MB before compression), runtime and static "
          f"files under {version} (cache forever), pages revalidated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
