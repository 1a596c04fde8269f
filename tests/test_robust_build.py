"""The build under faults and hostile inputs (sitegen/swap.py, sitegen/models.py, build.py's edges).

- Kills: the build is killed (SIGKILL, through sitegen/swap.py's SITEGEN_SWAP_KILL_AT hook) at every step of the
  swap, on the atomic-exchange path and on the two-rename fallback, and at seeded random moments of a whole
  build; afterwards _site/ is byte for byte the old site or the new one (on the fallback, a kill between its two
  renames is put right by the next build), and the next build leaves no _site.new-* / _site.old-* behind.
- Edges: each hostile input ends in one line naming the file and the problem, a non-zero exit, no traceback,
  and the previous _site/ untouched.
Bounded: a fixed number of builds, each with the fixture's timeout; nothing leaves the machine.
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from build_fixtures import BUILD_TIMEOUT_S, REPO, copy_course, run_build, tree_digest

LESSON = "lessons/c4-fixture/lesson.md"


def build(root: Path, out: Path | None = None, **env) -> subprocess.CompletedProcess:
    out = out or root / "_site"
    return subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                          env={**os.environ, **env})


def build_here(root: Path, out: Path | None = None):
    """The same build in this process (build.main, tests/build_fixtures.py): the edge cases, whose builds fail in a
    fraction of a second once no interpreter has to start and import the engine for each."""
    return run_build(root, out)


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith((out.name + ".new-", out.name + ".old-")))


def restore(saved: Path, out: Path) -> None:
    for path in [out, *[out.parent / n for n in leftovers(out)]]:
        if path.exists():
            shutil.rmtree(path)
    shutil.copytree(saved, out, symlinks=True)


@pytest.fixture(scope="module")
def two_sites(tmp_path_factory):
    """A course built once (the old site, kept in `saved`), then its lesson edited: the next build gives the new
    site, whose digest is measured by building into a copy of the old one."""
    tmp = tmp_path_factory.mktemp("swap")
    root = copy_course(tmp)
    out = root / "_site"
    first = build(root)
    assert first.returncode == 0, first.stderr
    saved = tmp / "saved"
    shutil.copytree(out, saved, symlinks=True)
    lesson = root / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8").replace("一共有", "总共有"), encoding="utf-8")
    scratch = tmp / "scratch" / "_site"
    shutil.copytree(saved, scratch, symlinks=True)
    second = build(root, scratch)
    assert second.returncode == 0, second.stderr
    old, new = tree_digest(saved), tree_digest(scratch)
    assert old != new
    return {"root": root, "out": out, "saved": saved, "old": old, "new": new}


EXCHANGE_POINTS = ["staged", "exchanged", "aside"]
FALLBACK_POINTS = ["staged", "renamed-out", "renamed-new", "aside"]


@pytest.mark.parametrize("path,point", [("exchange", p) for p in EXCHANGE_POINTS]
                         + [("fallback", p) for p in FALLBACK_POINTS])
def test_a_kill_at_any_step_of_the_swap_leaves_the_old_site_or_the_new(two_sites, path, point):
    out = two_sites["out"]
    restore(two_sites["saved"], out)
    env = {"SITEGEN_SWAP_KILL_AT": point, **({"SITEGEN_SWAP_EXCHANGE": "0"} if path == "fallback" else {})}
    killed = build(two_sites["root"], **env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    if path == "fallback" and point == "renamed-out":   # the one instant the two renames leave no _site/ ...
        assert not out.exists()
        from sitegen.swap import recover
        assert recover(out) is not None                  # ... which the next build's first step puts back
    digest = tree_digest(out)
    assert digest in (two_sites["old"], two_sites["new"]), f"a partial site after a kill at {point}"
    expected = "old" if point in ("staged", "renamed-out") else "new"
    assert digest == two_sites[expected]
    assert leftovers(out), "the kill left nothing to clean (the test did not kill mid-swap)"
    again = build_here(two_sites["root"])       # (the next build, in this process: only the killed one must be a
    assert again.returncode == 0, again.stderr  # process of its own)
    assert leftovers(out) == [], "the next build did not clean up after the killed one"


def test_random_kills_of_the_whole_build_never_leave_a_partial_site(two_sites):
    """Seeded random moments over a build's run time (measured first): 5 kills, each checked."""
    out, root = two_sites["out"], two_sites["root"]
    restore(two_sites["saved"], out)
    t0 = time.monotonic()
    assert build(root).returncode == 0
    span = time.monotonic() - t0
    rng = random.Random(28)
    for _ in range(5):
        restore(two_sites["saved"], out)
        proc = subprocess.Popen([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out)],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.wait(timeout=rng.uniform(0.2, 1.1) * span)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=BUILD_TIMEOUT_S)
        digest = tree_digest(out)
        assert digest in (two_sites["old"], two_sites["new"]), "a partial site after a random kill"
    again = build(root)
    assert again.returncode == 0, again.stderr
    assert leftovers(out) == []


def test_leftovers_of_killed_runs_are_cleaned_and_a_running_builds_folder_is_kept(tmp_path):
    root = copy_course(tmp_path)
    out = root / "_site"
    assert build(root).returncode == 0
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = [f"_site.new-{dead_pid}-0a1b2c3d", f"_site.old-{dead_pid}-0a1b2c3e", "_site.new-k2j3h4g5",
             "_site.old-x9y8z7w6"]   # (the last two: names older builds gave, with no pid)
    running = f"_site.new-{os.getpid()}-feedbeef"   # a build still running (this process) keeps its folder
    for name in stale + [running]:
        (root / name / "static").mkdir(parents=True)
        (root / name / "static" / "big.bin").write_bytes(b"\0" * 1024)
    assert build(root).returncode == 0
    assert leftovers(out) == [running]


def test_the_swap_lives_in_sitegen_swap_and_dist_uses_it():
    import build as build_module
    from sitegen import dist, swap
    assert not hasattr(build_module, "swap_in")
    assert dist.swap_in is swap.swap_in and build_module.swap is swap


# -- edges: one line naming the file and the problem ---------------------------------------------------------------
def _refused(result, where: str, expect: str) -> list[str]:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith("build failed:")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(where), lines[0]
    assert expect in lines[0], lines[0]
    return lines


def test_an_out_folder_whose_parent_cannot_be_written(tmp_path):
    root = copy_course(tmp_path)
    if os.geteuid() == 0:         # root writes anywhere it may chmod: /sys refuses even root
        parent = Path("/sys")
    else:
        parent = tmp_path / "read-only"
        parent.mkdir()
        parent.chmod(0o555)
    try:
        (parent / "probe").mkdir()
    except OSError:
        pass
    else:
        (parent / "probe").rmdir()
        pytest.skip(f"{parent} is writable here")
    out = parent / "_site"
    result = build_here(root, out)
    _refused(result, f"{out}: ", "cannot write the site")
    assert not out.exists()


def _site_digest_or_none(out: Path):
    return tree_digest(out) if out.exists() else None


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A fixture course built once; each edge test changes files, builds, and puts the files back."""
    root = copy_course(tmp_path_factory.mktemp("edges"))
    first = build_here(root)
    assert first.returncode == 0, first.stderr
    return root


def _with_files(root: Path, files: dict, run):
    saved = {name: (root / name).read_bytes() if (root / name).is_file() else None for name in files}
    try:
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if callable(content):
                content(path)
            else:
                path.write_bytes(content)
        return run()
    finally:
        for name, content in saved.items():
            if content is None:
                (root / name).unlink(missing_ok=True)
            else:
                (root / name).write_bytes(content)


CONFIG = "data/models/llama-2-7b/config.json"


def test_a_config_over_the_size_limit_is_refused_unread(course):
    """A 200 MB config.json (sparse: nothing is written) is refused by its size, naming the file."""
    before = tree_digest(course / "_site")

    def huge(path):
        with open(path, "wb") as f:
            f.truncate(200_000_000)
    result = _with_files(course, {CONFIG: huge}, lambda: build_here(course))
    _refused(result, f"{CONFIG}: ", "expected a file of at most 4,000,000 bytes (this one has 200,000,000)")
    assert tree_digest(course / "_site") == before


def test_a_meta_yaml_over_its_size_limit_is_refused(course):
    meta = CONFIG.replace("config.json", "meta.yaml")
    text = (REPO / meta).read_bytes() + b"notes2: '" + b"x" * 70_000 + b"'\n"
    result = _with_files(course, {meta: text}, lambda: build_here(course))
    _refused(result, f"{meta}: ", "expected a file of at most 64,000 bytes")


def test_a_deeply_nested_data_file_is_refused(course):
    result = _with_files(course, {"data/citations.json": b"[" * 50_000 + b"]" * 50_000}, lambda: build_here(course))
    _refused(result, "data/citations.json: ", "expected JSON nested at most 64 levels deep")


def test_a_deeply_nested_meta_yaml_is_refused(course):
    meta = CONFIG.replace("config.json", "meta.yaml")
    text = (REPO / meta).read_bytes() + b"extra: " + b"[" * 20_000 + b"]" * 20_000 + b"\n"
    result = _with_files(course, {meta: text}, lambda: build_here(course))
    _refused(result, f"{meta}: ", "nested at most 64 levels deep")


def test_each_config_is_serialised_once_per_build(tmp_path, monkeypatch, capsys):
    """A config marked with a unique value: every JSON text the build makes that holds the marker is counted.
    Once for the ledger's cache key (experiments.ledger.canonical_key), once for data/models.json (what the
    browser reads); on main it was ~150 times for this model (every widget state and every ledger_of call),
    ~3,400 JSON texts in all."""
    import json

    import build as build_module
    root = copy_course(tmp_path, fixture_lessons=False)
    path = root / CONFIG
    config = json.loads(path.read_text(encoding="utf-8"))
    marker = "serialised-once-" + "m" * 100_000
    path.write_text(json.dumps({**config, "course_test_marker": marker}), encoding="utf-8")
    made = []
    encode = json.JSONEncoder.encode

    def counting(self, o):
        text = encode(self, o)
        if marker in text:
            made.append(text[:60])
        return text
    monkeypatch.setattr(json.JSONEncoder, "encode", counting)
    from experiments import ledger
    monkeypatch.setattr(ledger, "_KEYS", type(ledger._CACHE)(), raising=False)
    monkeypatch.setattr(ledger, "_CACHE", type(ledger._CACHE)())
    build_module.build(root, root / "_site")
    capsys.readouterr()
    assert len(made) <= 2, f"{len(made)} JSON texts of the config"


# -- symbolic links out of the course ------------------------------------------------------------------------------
LINKS = {   # link (relative to the course) -> (target, what the one line says)
    "site/static/js/leak.js": ("/etc/passwd", "a symbolic link to /etc/passwd, outside the course folder"),
    "site/static/etc": ("/etc", "a symbolic link to /etc, outside the course folder"),
    "lessons/outside.md": ("/etc/hostname", "a symbolic link to /etc/hostname, outside the course folder"),
    "data/models/llama-2-7b/notes.txt": ("/etc/hostname", "outside the course folder"),
    "site/static/gone.css": ("missing.css", "a symbolic link to missing.css, which does not exist"),
    "site/static/css/again": ("..", "a folder that holds the link itself"),
}


@pytest.mark.parametrize("link", list(LINKS))
def test_a_symbolic_link_out_of_the_course_is_refused_naming_it(course, link):
    target, expect = LINKS[link]
    before = tree_digest(course / "_site")
    path = course / link
    path.symlink_to(target)
    try:
        result = build_here(course)
    finally:
        path.unlink()
    _refused(result, f"{link}: ", expect)
    assert tree_digest(course / "_site") == before


def test_a_symbolic_link_within_the_course_is_copied(course):
    path = course / "site" / "static" / "css" / "alias.css"
    path.symlink_to("course.css")
    try:
        result = build_here(course)
    finally:
        path.unlink()
    assert result.returncode == 0, result.stderr
    built = course / "_site" / "static" / "css"
    assert not (built / "alias.css").is_symlink()
    assert (built / "alias.css").read_bytes() == (built / "course.css").read_bytes()


# -- claims nested too deeply ------------------------------------------------------------------------------------
FIXTURE_LESSON = "lessons/c5-fixture/lesson.md"
DEEP_CLAIMS = {
    "parentheses": "(" * 10_000 + "anchor.total" + ")" * 10_000 + " > 0",          # the parser's MemoryError
    "minus-signs": "-" * 3_000 + "anchor.total < 0",                                  # its RecursionError
    "nested-calls": "abs(" * 150 + "anchor.total" + ")" * 150 + " > 0",           # parses; too deep to walk
    "long-sum": " + ".join(["anchor.total"] * 2_000) + " > 0",
}


@pytest.mark.parametrize("name", list(DEEP_CLAIMS))
def test_a_deeply_nested_claim_is_one_line(course, name):
    text = (course / FIXTURE_LESSON).read_text(encoding="utf-8")
    lesson = text + f"\n锚点模型的参数是正数。{{claim}}`{DEEP_CLAIMS[name]}`\n"
    line = lesson.count("\n", 0, lesson.index("{claim}")) + 1
    result = _with_files(course, {FIXTURE_LESSON: lesson.encode()}, lambda: build_here(course))
    lines = _refused(result, f"{FIXTURE_LESSON}:{line}: ", "claim {claim}`")
    assert "nested too deeply" in lines[0] or "too long" in lines[0], lines[0]
    assert len(lines[0]) < 400, lines[0]


# -- meta.yaml values of the wrong type, course.json naming a model that does not exist -----------------------------
META = "data/models/llama-2-7b/meta.yaml"
META_CASES = {   # appended line -> (key, what the line says)
    "family: {a: 1}": ("family", "key 'family': expected the model's family (text, e.g. llama), got dict"),
    "source: 5": ("source", "key 'source': expected where the config comes from (text), got 5"),
    "published_total: 'many'": ("published_total",
                                "key 'published_total': expected a parameter count (an integer >= 1), got 'many'"),
    "published_total: -7": ("published_total", "expected a parameter count (an integer >= 1), got -7"),
    "hub_page_total: 0": ("hub_page_total", "expected a parameter count (an integer >= 1), got 0"),
    "published_total: true": ("published_total", "got True"),
    "published_total_rounded: 'yes'": ("published_total_rounded", "expected true or false, got 'yes'"),
    "name: ''": ("name", "expected the model's display name (text), got ''"),
}


def _meta_with(line: str) -> bytes:
    key = line.split(":")[0]
    kept = [line for line in (REPO / META).read_text(encoding="utf-8").splitlines(keepends=True)
            if not line.startswith(key + ":") and not (line.startswith("  ") and key in ("source", "notes"))]
    return ("".join(kept) + line + "\n").encode()


@pytest.mark.parametrize("line", list(META_CASES))
def test_a_meta_value_of_the_wrong_type_is_refused(course, line):
    key, expect = META_CASES[line]
    result = _with_files(course, {META: _meta_with(line)}, lambda: build_here(course))
    _refused(result, f"{META}: key '{key}': ", expect)


def test_every_wrong_meta_value_is_reported_together(course):
    text = _meta_with("family: {a: 1}").decode() + "source_zh: [1]\npublished_total: many\n"
    result = _with_files(course, {META: text.encode()}, lambda: build_here(course))
    lines = [line for line in result.stderr.splitlines() if line.startswith(META)]
    assert result.returncode == 1
    assert {line.split("'")[1] for line in lines} == {"family", "source_zh", "published_total"}


def test_an_unknown_meta_key_passes_through(course):
    result = _with_files(course, {META: _meta_with("training_tokens: 2000000000000")}, lambda: build_here(course))
    assert result.returncode == 0, result.stderr


COURSE_CASES = {   # course.json change -> (key, the model id it names)
    "alias": (lambda c: c["aliases"].__setitem__("llama7b", "llama-2-7b-typo"), "aliases.llama7b", "llama-2-7b-typo"),
    "anchor_model": (lambda c: c.__setitem__("anchor_model", "qwen9"), "anchor_model", "qwen9"),
    "tracker": (lambda c: c["tracker"].__setitem__("model", 7), "tracker.model", "7"),
}


@pytest.mark.parametrize("name", list(COURSE_CASES))
def test_a_course_naming_a_model_that_does_not_exist_is_refused(course, name):
    import json
    change, key, got = COURSE_CASES[name]
    doc = json.loads((course / "data" / "course.json").read_text(encoding="utf-8"))
    change(doc)
    result = _with_files(course, {"data/course.json": json.dumps(doc, ensure_ascii=False).encode()},
                         lambda: build_here(course))
    line = _refused(result, f"data/course.json: key '{key}': ", "expected the id of a model folder data/models/<id>/")
    assert line[0].endswith(f"got {got!r}" if name != "tracker" else "got 7"), line[0]


def test_a_changed_baseline_config_names_the_stale_measurement_and_its_command(course):
    """The measured trainer step (C9) and the stored runs (C5, C8) were made from the baseline config: a changed
    config refuses the build by naming each stale file, what changed and the command that remakes it."""
    config = "data/models/baseline/config.json"
    text = (REPO / config).read_text(encoding="utf-8").replace('"intermediate_size": 688', '"intermediate_size": 690')
    result = _with_files(course, {config: text.encode()}, lambda: build_here(course))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert (f"data/train_memory.json: stale: made from an earlier {config}; remake it with: "
            "python -m experiments.train.memory") in lines, result.stderr
    for output, group in (("data/train_runs.json", "optimization"), ("data/train_stability.json", "stability")):
        assert (f"{output}: stale: made from an earlier {config}; remake it with: "
                f"python -m experiments.train.runs --group {group}") in lines, result.stderr
