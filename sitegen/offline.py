"""The course offline after one visit: its service worker (sw.js) and web app manifest, written into a build.

write_offline(site, dest) is the build's last output step (build.py OUTPUT_STEPS): once every other file is in the
new folder it lists what the course can fetch (every page but the instructors' report, data/, static/, the
Python runtime in py/<hash>/ and pyodide/<version>/, the manifest and its icons) and writes
- sw.js, from sitegen/offline_sw.js (how it caches, and why it can never serve a stale or mixed course, is said
  at its top) with VERSION = the first 12 hex digits of sha256 over every listed file's path and bytes, so any
  changed byte (a sentence in a lesson) is a new version, and FILES = that list;
- manifest.webmanifest (name, start page, zh-CN, standalone) and icons made from static/favicon.png, scaled up
  (nearest neighbour, so no image library is needed), as Chromium asks for 192 and 512 px icons to install;
- into the outline's data-use paragraph (site/templates/index.html, [data-offline-sizes]), the sizes, from the
  files' bytes as built (stamp_sizes): the Python runtime a first lesson downloads (py/ and pyodide/, as stored: a
  host that compresses sends less) and the whole offline copy (every listed file). MB = 10^6 bytes.
The pages register sw.js through static/js/offline.js (site/templates/base.html), which also shows the footer's
note once the whole course is kept, and runs the outline's data-use section. `make dist` (sitegen/dist.py) points
the list at v/<hash>/static/ as it does the pages; the service worker's scope is the folder it is served from, so
the course works from any sub-path.
"""
from __future__ import annotations

import functools
import hashlib
import json
import struct
import zlib
from pathlib import Path

SW_TEMPLATE = Path(__file__).resolve().parent / "offline_sw.js"
SW_FILE = "sw.js"
MANIFEST_FILE = "manifest.webmanifest"
ICON_SOURCE = "static/favicon.png"
ICON_SIZES = (192, 512)
LEFT_OUT = {"numbers.json", "changes.json", "changes.html", SW_FILE}   # instructors' reports, and the worker itself
HASH_CHARS = 12


def offline_files(dest: Path) -> list[str]:
    """Every file of the built site a learner's browser may fetch, relative to the site root, sorted."""
    files = []
    for path in sorted(p for p in dest.rglob("*") if p.is_file()):
        rel = path.relative_to(dest).as_posix()
        if rel in LEFT_OUT or path.name.startswith(".") or path.suffix in (".gz", ".br"):
            continue
        files.append(rel)
    return files


def version_of(dest: Path, files: list[str]) -> str:
    digest = hashlib.sha256()
    for rel in files:
        digest.update(rel.encode("utf-8") + b"\0" + hashlib.sha256((dest / rel).read_bytes()).digest())
    return digest.hexdigest()[:HASH_CHARS]


def service_worker(version: str, files: list[str]) -> str:
    return (SW_TEMPLATE.read_text(encoding="utf-8").replace("@@VERSION@@", version)
            .replace("@@FILES@@", json.dumps(files, ensure_ascii=False)))


def manifest(title: str, icons: list[str]) -> str:
    return json.dumps({
        "name": title, "short_name": title, "lang": "zh-CN", "dir": "ltr",
        "start_url": "index.html", "scope": "./", "display": "standalone",
        "background_color": "#ffffff", "theme_color": "#ffffff",
        "icons": [{"src": icon, "sizes": f"{size}x{size}", "type": "image/png"}
                  for icon, size in zip(icons, ICON_SIZES)],
    }, ensure_ascii=False, indent=1) + "\n"


# -- PNG, just enough to scale the favicon (8-bit RGBA or RGB, not interlaced) -----------------------------------
def _chunks(data: bytes):
    at = 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        yield kind, data[at + 8:at + 8 + length]
        at += 12 + length


def read_png(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """(width, height, bytes per pixel, rows) of an 8-bit RGB/RGBA non-interlaced PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    header = dict(_chunks(data))[b"IHDR"]
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"only 8-bit RGB/RGBA non-interlaced PNGs (depth {depth}, color type {color})")
    bpp = 4 if color == 6 else 3
    raw = zlib.decompress(b"".join(body for kind, body in _chunks(data) if kind == b"IDAT"))
    stride, rows, prev = width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + b) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def write_png(width: int, height: int, bpp: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = b"".join(b"\0" + row for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6 if bpp == 4 else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


@functools.lru_cache(maxsize=8)
def scaled_png(data: bytes, size: int) -> bytes:
    """The PNG scaled to size x size, nearest neighbour (kept for the next build of the same icon: a pure function,
    and the pixel loop is a tenth of a small build)."""
    width, height, bpp, rows = read_png(data)
    out = []
    for y in range(size):
        row = rows[y * height // size]
        out.append(b"".join(row[(x * width // size) * bpp:(x * width // size + 1) * bpp] for x in range(size)))
    return write_png(size, size, bpp, out)


OUTLINE = "index.html"
SIZES_MARK = "data-offline-sizes hidden"
SIZE_SPAN = '<span data-size="{}"></span>'
RUNTIME_PREFIXES = ("py/", "pyodide/")


def mb(n: int) -> str:
    return f"{n / 1e6:.1f}"


def stamp_sizes(dest: Path) -> None:
    """Write the runtime's and the offline copy's sizes into the outline's data-use paragraph (and show it). The
    outline is itself one of the files counted, so its size is taken once stamped (the text's length settles)."""
    page = dest / OUTLINE
    if not page.is_file():
        return
    html = page.read_text(encoding="utf-8")
    if SIZES_MARK not in html:
        return
    stamped = html
    for _ in range(3):
        files = offline_files(dest)
        sizes = {rel: (dest / rel).stat().st_size for rel in files}
        sizes[OUTLINE] = len(stamped.encode("utf-8"))
        runtime = sum(n for rel, n in sizes.items() if rel.startswith(RUNTIME_PREFIXES))
        text = (html.replace(SIZES_MARK, SIZES_MARK.removesuffix(" hidden"), 1)
                .replace(SIZE_SPAN.format("runtime"), f'<span data-size="runtime">{mb(runtime)}</span>', 1)
                .replace(SIZE_SPAN.format("offline"), f'<span data-size="offline">{mb(sum(sizes.values()))}</span>', 1))
        if text == stamped:
            break
        stamped = text
    page.write_text(stamped, encoding="utf-8")


def write_offline(site, dest: Path) -> None:
    """The build's output step: icons, manifest.webmanifest, then sw.js listing every file (itself excepted)."""
    dest = Path(dest)
    icons = []
    favicon = dest / ICON_SOURCE
    if favicon.is_file():
        for size in ICON_SIZES:
            rel = f"static/icons/icon-{size}.png"
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(scaled_png(favicon.read_bytes(), size))
            icons.append(rel)
    (dest / MANIFEST_FILE).write_text(manifest(site.course.get("title") or "课程", icons), encoding="utf-8")
    stamp_sizes(dest)
    files = offline_files(dest)
    (dest / SW_FILE).write_text(service_worker(version_of(dest, files), files), encoding="utf-8")
