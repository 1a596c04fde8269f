"""sitegen.runtime: the bundled Pyodide + numpy files match their pins, corruption is caught, the zip is reproducible.

Uses the real cache (.cache/runtime/, filled on first use with `npm pack` / `pip download`, then offline) read-only;
every test that damages or re-fetches works on a temporary copy.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from experiments.errors import CourseError
from sitegen import runtime
from sitegen.runtime import (
    NUMPY_WHEEL,
    PINNED_SHA256,
    RUNTIME_FILES,
    RuntimeFetchError,
    ensure_runtime,
    pack_experiments,
    sha256_file,
    verify_runtime,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cached_runtime() -> Path:
    return ensure_runtime(runtime.DEFAULT_CACHE_DIR)


@pytest.fixture
def cache_copy(cached_runtime, tmp_path) -> Path:
    """A throwaway cache dir holding a copy of the real runtime files."""
    cache = tmp_path / "cache"
    shutil.copytree(cached_runtime, runtime.runtime_dir(cache))
    return cache


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"unexpected subprocess (network) call: {args[0] if args else kwargs}")
    monkeypatch.setattr(runtime.subprocess, "run", refuse)


def test_every_cached_file_matches_its_pin(cached_runtime):
    assert sorted(p.name for p in cached_runtime.iterdir() if p.is_file()) == sorted(RUNTIME_FILES)
    for name in RUNTIME_FILES:
        assert sha256_file(cached_runtime / name) == PINNED_SHA256[name], name
    assert verify_runtime(cached_runtime) == []


def test_numpy_pin_is_the_official_one_and_in_the_lock_file(cached_runtime):
    assert PINNED_SHA256[NUMPY_WHEEL] == "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08"
    lock = json.loads((cached_runtime / "pyodide-lock.json").read_text())
    assert lock["info"]["version"] == runtime.PYODIDE_VERSION
    numpy = lock["packages"]["numpy"]
    assert (numpy["file_name"], numpy["sha256"], numpy["depends"]) == (NUMPY_WHEEL, PINNED_SHA256[NUMPY_WHEEL], [])


def test_warm_cache_does_no_network_work(cache_copy, no_network):
    assert ensure_runtime(cache_copy) == runtime.runtime_dir(cache_copy)


def test_corrupted_cached_file_is_detected(cache_copy, no_network):
    target = runtime.runtime_dir(cache_copy) / "pyodide.asm.wasm"
    data = bytearray(target.read_bytes())
    data[1000] ^= 0xFF
    target.write_bytes(bytes(data))
    problems = verify_runtime(runtime.runtime_dir(cache_copy))
    assert len(problems) == 1 and "pyodide.asm.wasm" in problems[0]
    with pytest.raises(RuntimeFetchError, match=r"pyodide\.asm\.wasm: sha256 [0-9a-f]{64}, expected the pinned"):
        ensure_runtime(cache_copy)
    with pytest.raises(RuntimeFetchError):
        runtime.copy_runtime(cache_copy, cache_copy / "site")


def test_fetched_file_with_wrong_hash_is_refused(cache_copy, monkeypatch):
    (runtime.runtime_dir(cache_copy) / "pyodide.js").unlink()
    monkeypatch.setattr(runtime, "_fetch_core", lambda tmp: runtime._check_bytes("pyodide.js", b"evil", "npm"))
    with pytest.raises(RuntimeFetchError, match="npm: pyodide.js has sha256"):
        ensure_runtime(cache_copy)
    assert not (runtime.runtime_dir(cache_copy) / "pyodide.js").exists()


def test_failed_fetch_is_a_clear_course_error(tmp_path, monkeypatch):
    def fail(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, "", "npm error 404 Not Found")
    monkeypatch.setattr(runtime.subprocess, "run", fail)
    with pytest.raises(RuntimeFetchError, match=r"fetching pyodide@0\.27\.7: `npm pack .*` failed \(exit 1\)") as info:
        ensure_runtime(tmp_path / "empty-cache")
    assert isinstance(info.value, CourseError)


def test_copy_runtime(cache_copy, tmp_path, no_network):
    dest = runtime.copy_runtime(cache_copy, tmp_path / "_site")
    assert dest == tmp_path / "_site" / "pyodide" / "0.27.7"
    assert verify_runtime(dest) == []


def test_runtime_urls_name_their_content(tmp_path, no_network):
    """py/<hash>/ changes with worker.js or with any experiments/ source; the same sources give the same URLs."""
    worker = tmp_path / "worker.js"
    shutil.copyfile(runtime.WORKER_JS, worker)
    pkg = _fake_package(tmp_path)
    plan = runtime.plan_runtime(worker, pkg)
    assert plan.hash == hashlib.sha256(worker.read_bytes() + runtime.experiments_zip(pkg)).hexdigest()[:12]
    assert plan.worker_url == f"py/{plan.hash}/worker.js" and plan.experiments_url == f"py/{plan.hash}/experiments.zip"
    assert plan.pyodide_url == "pyodide/0.27.7/"
    assert runtime.plan_runtime(worker, pkg) == plan
    (pkg / "api.py").write_text("X = 2\n")
    changed = runtime.plan_runtime(worker, pkg)
    worker.write_text(worker.read_text() + "\n// edited\n")
    assert len({plan.hash, changed.hash, runtime.plan_runtime(worker, pkg).hash}) == 3


def test_runtime_urls_list_what_the_worker_fetches():
    plan = runtime.plan_runtime()
    assert plan.urls() == [plan.worker_url, plan.experiments_url] + [
        f"pyodide/0.27.7/{name}" for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
                                              "pyodide-lock.json", NUMPY_WHEEL)]


def test_the_preloads_are_the_files_pythons_start_up_waits_for():
    plan = runtime.plan_runtime()
    assert plan.preloads("../") == [[f"../pyodide/0.27.7/{name}", kind] for name, kind in (
        ("pyodide.asm.wasm", "fetch"), ("python_stdlib.zip", "fetch"), ("pyodide.asm.js", "script"),
        ("pyodide-lock.json", "fetch"), ("pyodide.js", "script"))]
    assert {url for url, _ in plan.preloads()} == set(plan.urls()) - {plan.worker_url, plan.experiments_url,
                                                                       f"pyodide/0.27.7/{NUMPY_WHEEL}"}


def test_worker_must_load_the_bundled_pyodide_version(tmp_path):
    worker = tmp_path / "worker.js"
    worker.write_text(runtime.WORKER_JS.read_text().replace('PYODIDE_VERSION = "0.27.7"', 'PYODIDE_VERSION = "0.26.0"'))
    with pytest.raises(RuntimeFetchError, match=r'worker\.js: expected `const PYODIDE_VERSION = "0\.27\.7";`'):
        runtime.plan_runtime(worker)


def test_install_writes_the_versioned_layout(cache_copy, tmp_path, no_network):
    plan = runtime.plan_runtime()
    folder = runtime.install_site_runtime(tmp_path / "_site", cache_copy, plan)
    assert folder == tmp_path / "_site" / "py" / plan.hash
    assert sorted(p.name for p in folder.iterdir()) == ["experiments.zip", "worker.js"]
    assert hashlib.sha256((folder / "worker.js").read_bytes()
                          + (folder / "experiments.zip").read_bytes()).hexdigest()[:12] == plan.hash
    assert (folder / "worker.js").read_bytes() == runtime.WORKER_JS.read_bytes()
    for url in plan.urls():
        assert (tmp_path / "_site" / url).is_file(), url


def test_cli_on_warm_cache(cache_copy, capsys, no_network):
    assert runtime.main(["--cache-dir", str(cache_copy)]) == 0
    out = capsys.readouterr().out
    assert out.count("cached ") == len(RUNTIME_FILES) and "ready in" in out


def _fake_package(root: Path) -> Path:
    pkg = root / "experiments"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""pkg"""\n')
    (pkg / "api.py").write_text("X = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "api.cpython-311.pyc").write_bytes(b"\0")
    (pkg / "notes.txt").write_text("not code")
    return pkg


def test_pack_experiments_only_python_sources(tmp_path):
    pkg = _fake_package(tmp_path)
    zpath = pack_experiments(pkg, tmp_path / "out" / "experiments.zip")
    with zipfile.ZipFile(zpath) as zf:
        assert zf.namelist() == ["experiments/__init__.py", "experiments/api.py", "experiments/sub/__init__.py"]
        assert {info.date_time for info in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_pack_experiments_is_byte_identical_across_runs(tmp_path):
    first = pack_experiments(ROOT / "experiments", tmp_path / "a.zip").read_bytes()
    copy = shutil.copytree(ROOT / "experiments", tmp_path / "copy" / "experiments",
                           copy_function=shutil.copyfile)  # fresh mtimes must not matter
    second = pack_experiments(copy, tmp_path / "b.zip", ROOT / "lessons").read_bytes()
    assert first == second
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        names = zf.namelist()
    assert "experiments/__init__.py" in names and "experiments/api.py" in names
    assert names == sorted(names) and all(n.endswith(".py") and "__pycache__" not in n for n in names)
    # each lesson's Python, from lessons/<id>/, where the worker imports it; its tests stay behind
    assert {"experiments/lessons/c4_transformer_block/__init__.py", "experiments/lessons/c4_ffn_deep_read/calc.py",
            "experiments/lessons/common.py"} <= set(names)
    assert not [n for n in names if n.rsplit("/", 1)[1].startswith("test_")]


def test_packed_experiments_import_from_the_zip(tmp_path):
    zpath = pack_experiments(ROOT / "experiments", tmp_path / "experiments.zip")
    with zipfile.ZipFile(zpath) as zf:
        zf.extractall(tmp_path / "unpacked")
    code = ("import experiments.api as a, experiments.lessons as l; print(a.ping('[1]')); "
            "print(sorted(l.entry_points())); print(a.entry_point('total_view').__name__)")
    proc = subprocess.run([sys.executable, "-c", code],
                          cwd=tmp_path / "unpacked", capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "unpacked")})
    assert proc.returncode == 0, proc.stderr
    ping, declared, found = proc.stdout.splitlines()
    assert json.loads(ping)["pong"] == [1]
    # the lessons shipped in the zip are discovered there, as the worker's Python does (no lessons/ folder beside)
    from experiments import lessons
    assert declared == str(sorted(lessons.course(ROOT).entry_points())) and found == "total_view"
