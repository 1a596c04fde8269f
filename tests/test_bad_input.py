"""Bad input, kept as a corpus in tests/bad_input/ (cases.json lists every case and the message it must give).

The contract for each malformed config or lesson:
- the build exits non-zero with one clear line naming the file and the key (or the lesson's line), then its
  one-line summary; no traceback; the previous _site/ is left byte-identical;
- `python -m experiments.ledger CONFIG` (config cases) exits 2 with one line per problem, no traceback;
- pasted into the bring-your-own-config widget, a config gives an inline error naming the key, no console error,
  and the widget still computes a good config afterwards.
A case whose `known_issue` says which part of that is not met yet is an expected failure of that part only
(strict: it turns red once fixed, so the entry gets dropped).
Both commands are run in this process, by their main(argv) with what they print captured (build_fixtures.run_build,
call_main): a case costs a gather-and-check, not a fresh interpreter. The commands as commands are run by
test_build.py (python build.py) and test_engine.py (python -m experiments.ledger).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from browser_fixtures import DRAW_TIMEOUT_MS, wait_runtime_ready
from build_fixtures import REPO, Run, call_main, copy_course, run_build, tree_digest
from experiments.ledger import cli as ledger_cli

CORPUS = Path(__file__).resolve().parent / "bad_input"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))["cases"]
LESSON_TARGET = "lessons/c5-fixture/lesson.md"   # a fixture lesson (front matter id c5-fixture, chapter C5)
WRAP_META = {"name": "Bad input", "family": "llama", "source": "tests/bad_input"}
GOOD_CONFIG = REPO / "data" / "models" / "llama-2-7b" / "config.json"


def _id(case):
    return case["name"]


def _known(case, *whats):
    """pytest marks for a case whose known_issue is one of `whats` (else none)."""
    issue = case.get("known_issue")
    if issue and issue["what"] in whats:
        return [pytest.mark.xfail(strict=True, reason=f"{case['name']}: {issue['why']}")]
    return []


def _params(cases, *whats):
    return [pytest.param(c, id=_id(c), marks=_known(c, *whats)) for c in cases]


BUILD_CASES = CASES
# a config the build refuses but the ledger command line answers as an estimate (an unknown model_type with the
# usual keys: tests/test_estimate.py checks that answer)
CONFIG_CASES = [c for c in CASES if c["kind"] == "config" and c.get("ledger_cli") != "estimate"]


# -- the build ---------------------------------------------------------------------------------------------------
def _target(case) -> tuple[str, dict[str, bytes]]:
    """The file the message must name (relative path in a course copy) and every file written for the case."""
    source = CORPUS / case["file"]
    stem = Path(case["file"]).stem
    if case["kind"] == "config":   # the plain config, as the config.json of a model folder of its own
        folder = f"data/models/bad-{stem}"
        meta = yaml.safe_dump({**WRAP_META, "id": f"bad-{stem}"}, allow_unicode=True).encode()
        return f"{folder}/config.json", {f"{folder}/config.json": source.read_bytes(), f"{folder}/meta.yaml": meta}
    if case["kind"] == "model":    # a whole model folder
        folder = f"data/models/{source.name}"
        return f"{folder}/{case['at']}", {f"{folder}/{f.name}": f.read_bytes() for f in source.iterdir()}
    if case["kind"] == "lesson":
        return LESSON_TARGET, {LESSON_TARGET: source.read_bytes()}
    if case["kind"] == "course":
        return "data/course.json", {"data/course.json": source.read_bytes()}
    raise ValueError(f"unknown kind {case['kind']!r} in {case['name']}")


@pytest.fixture(scope="module")
def good_course(tmp_path_factory):
    """The fixture course, built once (no browser opens it: without the runtime): {"root", "digest" of its _site}."""
    root = copy_course(tmp_path_factory.mktemp("bad-input"))
    result = run_build(root, runtime=False)
    assert result.returncode == 0, result.stderr
    return {"root": root, "digest": tree_digest(result.out)}


_results: dict[str, tuple] = {}


@pytest.fixture
def failed_build(good_course, request):
    """The build of the good course with the case dropped in (run once per case, then the file is restored):
    (case, relative path, BuildResult, problem lines, digest before, digest after)."""
    case = request.param
    if case["name"] not in _results:
        root, digest = good_course["root"], good_course["digest"]
        rel, files = _target(case)
        before = {name: (root / name).read_bytes() if (root / name).exists() else None for name in files}
        for name, content in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(content)
        try:
            result = run_build(root, runtime=False)
        finally:
            for name, content in before.items():
                if content is None:
                    (root / name).unlink()
                else:
                    (root / name).write_bytes(content)
            for name in files:   # a model folder the case added
                folder = (root / name).parent
                if folder.parent.name == "models" and folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
        lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("build failed:")]
        _results[case["name"]] = (case, rel, result, lines, digest, tree_digest(result.out))
        if result.returncode == 0:   # a case the build missed replaced the good output: build it again
            rebuilt = run_build(root, runtime=False)
            assert rebuilt.returncode == 0, rebuilt.stderr
            good_course["digest"] = tree_digest(rebuilt.out)
    return _results[case["name"]]


def _expect(case, build: bool) -> str:
    return case["expect"]   # a config gives the same message to the build and to the ledger command line


def _key_text(case, build: bool) -> str | None:
    key = case.get("key")
    if key is None:
        return None
    if case["kind"] in ("config", "model", "course"):
        return f"key '{key}'"
    return key   # a lesson: the reference, widget name or front matter field the message is about


@pytest.mark.parametrize("failed_build", _params(BUILD_CASES, "rejected"), indirect=True)
def test_build_rejects_it_cleanly(failed_build):
    case, rel, result, lines, before, after = failed_build
    assert result.returncode != 0, f"{case['name']}: the build succeeded\n{result.stdout}"
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert lines, "no message"
    where = f"{rel}:{case['line']}:" if case["kind"] == "lesson" else f"{rel}:"
    first = lines[0]
    assert first.startswith(where), f"the message does not start with {where!r}: {first}"
    assert _expect(case, True) in first, f"expected {_expect(case, True)!r} in: {first}"
    assert result.stderr.splitlines()[-1].startswith("build failed: "), result.stderr
    assert after == before, "the previous _site/ changed"


@pytest.mark.parametrize("failed_build", _params(BUILD_CASES, "rejected", "names-key"), indirect=True)
def test_build_message_names_the_key(failed_build):
    case, rel, result, lines, _, _ = failed_build
    key = _key_text(case, True)
    if key is None:
        assert result.returncode != 0 and lines
        return
    assert lines and key in lines[0], f"{key!r} not named in: {lines[:1]}"


@pytest.mark.parametrize("failed_build", _params(BUILD_CASES, "rejected", "one-message"), indirect=True)
def test_build_gives_one_message(failed_build):
    case, rel, result, lines, _, _ = failed_build
    assert len(lines) == 1, "expected one message, got:\n" + "\n".join(lines)


def test_corpus_covers_the_contract():
    """At least 20 cases, and one of every kind of mistake the contract lists."""
    names = {c["name"] for c in CASES}
    assert len(CASES) >= 20
    for needed in ["config/not-json", "config/a-list", "config/wrong-type-text", "config/string-for-number",
                   "config/missing-key", "config/zero-size", "config/negative-layers", "config/heads-do-not-divide",
                   "config/unknown-model-type", "config/absurd-width", "config/absurd-layers",
                   "lesson/unknown-number", "lesson/widget-without-name", "lesson/unknown-widget"]:
        assert needed in names, needed
    for case in CASES:
        assert (CORPUS / case["file"]).is_dir() if case["kind"] == "model" else (CORPUS / case["file"]).is_file()


def test_absurd_sizes_are_capped():
    """experiments/config.py caps widths and vocabularies at 10**7 and layer counts at 10**4, clearly."""
    from experiments.ledger.config import MAX_LAYERS, MAX_SIZE
    assert (MAX_SIZE, MAX_LAYERS) == (10**7, 10**4)
    text = {c["name"]: c["expect"] for c in CASES}
    assert "<= 10,000,000" in text["config/absurd-width"] and "<= 10,000," in text["config/absurd-layers"]


# -- the ledger command line ------------------------------------------------------------------------------------
_ledger_runs: dict[str, Run] = {}


def _ledger(case) -> Run:
    """`python -m experiments.ledger CONFIG` on the case's file (its main(argv), in this process)."""
    if case["name"] not in _ledger_runs:
        _ledger_runs[case["name"]] = call_main(ledger_cli.main, [str(CORPUS / case["file"])])
    return _ledger_runs[case["name"]]


@pytest.mark.parametrize("case", _params(CONFIG_CASES, "rejected"))
def test_ledger_cli_rejects_it_cleanly(case):
    proc = _ledger(case)
    file = str(CORPUS / case["file"])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith(file + ": ") for line in lines), proc.stderr
    assert case["expect"] in lines[0], proc.stderr
    key = _key_text(case, False)
    if key:
        assert key in lines[0], proc.stderr


@pytest.mark.parametrize("case", _params(CONFIG_CASES, "rejected", "one-message"))
def test_ledger_cli_gives_one_line(case):
    lines = _ledger(case).stderr.splitlines()
    assert len(lines) == 1, "expected one line, got:\n" + "\n".join(lines)


# -- the bring-your-own-config widget ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_site(repo_site):
    """The real course (every lesson): the session's build of it (build_fixtures.repo_site)."""
    return repo_site.out


def _byo_page(out: Path) -> str:
    for page in sorted(out.glob("*.html")):
        if 'data-testid="byo-config-input"' in page.read_text(encoding="utf-8"):
            return page.name
    pytest.fail("no built page has the bring-your-own-config widget")


def test_byo_widget_shows_each_bad_config_inline(real_site, http_serve, guarded_page):
    page = guarded_page
    page.goto(http_serve(real_site) + _byo_page(real_site))
    wait_runtime_ready(page)
    widget = page.locator(".widget[data-widget=byo-config]").first
    box, run = widget.locator("[data-testid=byo-config-input]"), widget.locator("[data-testid=byo-config-run]")
    error, total = widget.locator(".byo-error"), widget.locator("[data-testid=byo-config-total]")
    good = GOOD_CONFIG.read_text(encoding="utf-8")   # a published config.json, pasted as is
    run.wait_for(state="visible")
    page.wait_for_selector(".widget[data-widget=byo-config] [data-testid=byo-config-run]:not([disabled])")
    problems = []
    for case in CONFIG_CASES:
        box.fill((CORPUS / case["file"]).read_text(encoding="utf-8"))
        run.click()
        try:
            error.wait_for(state="visible", timeout=DRAW_TIMEOUT_MS)
        except Exception:  # noqa: BLE001 - collected below with the case's name
            problems.append(f"{case['name']}: no inline error")
            continue
        text = error.inner_text()
        if case.get("key") and case["key"] not in text:
            problems.append(f"{case['name']}: the inline error does not name {case['key']!r}: {text!r}")
        if total.inner_text().strip() not in ("—", ""):
            problems.append(f"{case['name']}: a total is still shown beside the error")
        box.fill(good)                       # ... and the widget still works afterwards
        run.click()
        try:
            error.wait_for(state="hidden", timeout=DRAW_TIMEOUT_MS)
            total.filter(has_text="6,738,415,616").wait_for(timeout=DRAW_TIMEOUT_MS)
        except Exception:  # noqa: BLE001
            problems.append(f"{case['name']}: a good config did not compute afterwards "
                            f"(total {total.inner_text()!r}, error {error.inner_text()!r})")
    assert not problems, "\n".join(problems)
    page.guard.assert_clean()
