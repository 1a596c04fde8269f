"""build.py end to end, always in temporary copies of the course (never the repo's own _site/).

What must hold: a good build writes every page, static file and the numbers/changes reports, and every
internal link resolves; a bad input (lesson or config) fails with one line per problem, exit 1, no traceback,
and leaves the previous output byte-identical; a config edit shows up in the change report.
The session's built_site is `python build.py` run as a command; every other build here is build.main() called in
this process (build_fixtures.run_build), and the copies whose pages no browser opens are built without the
Pyodide bundle.
"""
from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import build as build_module
from build_fixtures import REPO, BuildResult, build_in_temp_copy, copy_course, run_build, tree_digest
from experiments.errors import CourseError
from sitegen.changes import CHANGES_PAGE
from sitegen.pages import CSP
from sitegen.scripts import ScriptBundles

FIRST_USE = ["anchor.total", "anchor.ffn_share_total", "gpt2.ffn", "gpt2.total"]  # c4-fixture.md, in order


class PageParser(HTMLParser):
    """Collects links (href/src), ids and a few elements of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: list[str] = []
        self.elements: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append(a[key])
        if a.get("id"):
            self.ids.append(a["id"])


def parse(path: Path) -> PageParser:
    p = PageParser()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def find(p: PageParser, tag: str, **want) -> list[dict]:
    return [a for t, a in p.elements if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in want.items())]


# -- a good build ------------------------------------------------------------------------------------------------
def test_build_writes_pages_static_files_and_reports(built_site):
    out = built_site.out
    for rel in ["index.html", "c4-fixture.html", "c5-fixture.html", "numbers.json", "changes.json", "changes.html",
                "static/css/course.css", "static/js/popover.js", "static/js/runtime-client.js"]:
        assert (out / rel).is_file(), rel
    assert json.loads((out / "changes.json").read_text(encoding="utf-8")) == []
    assert "这是第一次构建" in (out / "changes.html").read_text(encoding="utf-8")
    # the runtime under versioned folders only (sitegen/runtime.py): nothing to go stale in a browser's cache
    assert [p.name for p in (out / "pyodide").iterdir()] == ["0.27.7"]
    assert [sorted(f.name for f in d.iterdir()) for d in (out / "py").iterdir()] == [["experiments.zip", "worker.js"]]
    assert not (out / "static" / "js" / "worker.js").exists()
    assert "first build" in built_site.stdout
    assert not list(out.parent.glob("_site.*")), "temporary folders left behind"


def test_the_icon_is_a_png(built_site):
    """Chromium fetches the icon again on every history.replaceState (a widget change writes the URL); an SVG icon
    is then parsed into a document of its own each time (site/templates/base.html), a PNG is not."""
    pages = sorted(set(built_site.out.glob("*.html")) - {built_site.out / "changes.html"})   # (the report has none)
    for page in pages:
        icons = find(parse(page), "link", rel="icon")
        assert [i["type"] for i in icons] == ["image/png"], page.name
        assert (built_site.out / icons[0]["href"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", page.name


def test_every_internal_link_resolves(built_site):
    out = built_site.out
    pages = sorted(out.rglob("*.html"))
    ids = {page: set(parse(page).ids) for page in pages}
    checked = 0
    for page in pages:
        for link in parse(page).links:
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, f"{page.name}: external or absolute URL {link}"
            assert not parts.path.startswith("/"), f"{page.name}: root-relative URL {link} breaks under a sub-path"
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            assert target.is_file(), f"{page.name}: {link} -> {target} does not exist"
            assert out.resolve() in target.parents, f"{page.name}: {link} leaves the site"
            if parts.fragment and target.suffix == ".html":
                assert unquote(parts.fragment) in ids[target], f"{page.name}: {link}: no such id"
            checked += 1
    assert checked > 20


def test_ids_are_unique_on_every_page(built_site):
    for page in built_site.out.rglob("*.html"):
        ids = parse(page).ids
        assert len(ids) == len(set(ids)), page.name


def test_home_page_lists_the_outline(built_site):
    p = parse(built_site.out / "index.html")
    text = (built_site.out / "index.html").read_text(encoding="utf-8")
    assert [a["href"] for a in find(p, "a", **{"class": "chapter-link"})] == ["c4-fixture.html", "c5-fixture.html"]
    assert text.count('<span class="badge-unwritten">未写</span>') == 2  # C1 and C6, listed without a link
    assert "模型该多大" in text and not list(built_site.out.glob("c6*")) and not list(built_site.out.glob("c1*"))


def test_every_page_has_the_shell(built_site):
    for page in course_pages(built_site.out):
        text = page.read_text(encoding="utf-8")
        p = parse(page)
        assert text.startswith('<!doctype html>\n<html lang="zh-CN">'), page.name
        assert find(p, "meta", name="viewport")
        csp = find(p, "meta", http_equiv="Content-Security-Policy")
        assert csp and csp[0]["content"] == CSP
        status = find(p, "p", data_testid="pyodide-status")
        scripts = find(p, "script")
        # one file of the page's scripts (sitegen/scripts.py), a plain <script> after the stylesheets; popover.js
        # and offline.js (the service worker, sitegen/offline.py) deferred
        assert [("async" in s, "defer" in s) for s in scripts] == [(False, False), (False, True), (False, True)], \
            page.name
        assert text.index('rel="stylesheet"') < text.index("<script")
        bundle, popover, offline = scripts
        assert popover["src"] == "static/js/popover.js"
        assert offline["src"] == "static/js/offline.js" and offline["data-sw"] == "sw.js"
        made = (page.parent / bundle["src"]).read_text(encoding="utf-8")
        assert ScriptBundles.parts_of(made) == bundle["data-parts"].split(" ")
        if page.name == "index.html":   # the outline runs no Python: no runtime, no status, an idle prefetch
            # (its data-use section may name the runtime a lesson downloads; what it must not have is the runtime's
            # status line or its loading message)
            assert not status and "runtime-status" not in text and "正在加载 Python 运行时" not in text
            assert bundle["data-parts"] == "prefetch-runtime.js" and "data-worker" not in bundle
            continue
        assert status and status[0]["role"] == "status" and status[0]["aria-live"] == "polite"
        assert status[0]["data-state"] == "loading" and "正在加载 Python 运行时…" in text
        # these pages have no widgets: no widget script loads (test_pages checks the lessons that have some)
        assert bundle["data-parts"] == "runtime-client.js"
        assert (page.parent / bundle["data-worker"]).is_file()
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), "inline script"
        assert not re.search(r"\sstyle=|<style", text), "inline style (refused by the CSP)"


def test_lesson_page_toc_ledger_and_footer(built_site):
    page = built_site.out / "c4-fixture.html"
    text = page.read_text(encoding="utf-8")
    p = parse(page)
    toc = [a["href"] for t, a in p.elements if t == "a" and a.get("href", "").startswith("#") and a["href"] != "#main"]
    assert toc[:3] == ["#①-ffn-占多少", "#②-对照表", "#shuzi-koujing"]
    section = text.split('<ol class="ledger-list">', 1)[1].split("</ol>", 1)[0]
    ledger = re.findall(r'^<li id="num-([^"]+)">', section, flags=re.M)
    assert ledger == FIRST_USE
    nums = [a for t, a in p.elements if t == "span" and a.get("class") == "num"]
    ids = {a["id"] for t, a in p.elements if "id" in a}
    assert len(nums) == 7
    for num in nums:   # described by its one 数字口径 entry: value, label and derivation rows
        assert set(num) == {"class", "tabindex", "aria-describedby", "id"} and num["tabindex"] == "0"
        name = num["aria-describedby"].removeprefix("num-")
        assert name in FIRST_USE and num["id"].startswith(f"use-{name}-") and f"num-{name}" in ids
    # one entry exactly as a learner gets it: value, label, the calculation lines, where, sources, check
    entry = re.search(r'^<li id="num-anchor.total">.*</li>$', section, flags=re.M).group(0)
    assert entry == (
        '<li id="num-anchor.total"><p><b>27,781,427,952</b> Qwen3.8-27B：checkpoint 全部参数</p><ul>'
        '<li>= 文本主干 + MTP + 视觉塔</li><li>= 26,895,998,464 + 424,699,392 + 460,730,096</li>'
        '<li>= 27,781,427,952</li>'
        '<li class="sources">来源：<code>Qwen3.8-27B 的 config.json（由课程的账本引擎逐张量现算）</code></li>'
        '<li class="check ok">核对：其中 transformers 构建的部分 27,356,728,560'
        '（总数减去它不构建的 MTP 层和缓冲区 424,699,392）：'
        'transformers 实现在 meta 设备上实例化数得 27,356,728,560 ✓</li></ul></li>')
    assert "num-popover" not in text
    footer = text.split('class="site-footer"')[1]
    assert "Qwen3.8-27B：课程锚点模型 Qwen3.8-27B 的 config.json" in footer and "data/models" not in footer
    assert "transformers" in text.split('class="site-footer"')[1]
    nav = [a["href"] for a in find(p, "a", rel="next")]
    assert nav == ["c5-fixture.html", "c5-fixture.html"]
    prev = [a["href"] for a in find(parse(built_site.out / "c5-fixture.html"), "a", rel="prev")]
    assert prev == ["c4-fixture.html", "c4-fixture.html"]


def test_numbers_json_has_every_number_with_pages(built_site):
    numbers = json.loads((built_site.out / "numbers.json").read_text(encoding="utf-8"))
    assert numbers["anchor.total"] == {
        "value": "27781427952", "display": "27,781,427,952", "label": "Qwen3.8-27B：checkpoint 全部参数",
        "default_style": "n", "pages": ["c4-fixture.html"],
        "uses": [{"page": "c4-fixture.html", "id": "use-anchor.total-1", "style": "n"},
                 {"page": "c4-fixture.html", "id": "use-anchor.total-2", "style": "B"},
                 {"page": "c4-fixture.html", "id": "use-anchor.total-3", "style": "n"}]}
    assert numbers["anchor.d"]["pages"] == []
    assert "/" in numbers["anchor.ffn_share_total"]["value"]  # exact fraction
    assert len(numbers) > 100


# -- failed builds leave the previous output alone -----------------------------------------------------------
@pytest.fixture(scope="module")
def good_build(tmp_path_factory) -> BuildResult:
    """The fixture course built once for this module, without the runtime (no browser opens it)."""
    return build_in_temp_copy(tmp_path_factory.mktemp("good-build"), runtime=False)


@pytest.fixture
def good_copy(good_build, tmp_path):
    """A copy of that course with its built output, for one test to edit and rebuild; returns (result, digest of
    its output). (Copying the folder costs milliseconds; building it again, a second of CPU.)"""
    root = tmp_path / "course"
    shutil.copytree(good_build.root, root)
    result = BuildResult(root, root / good_build.out.relative_to(good_build.root), good_build.returncode,
                         good_build.stdout, good_build.stderr)
    return result, tree_digest(result.out)


def assert_failed_cleanly(result, digest, *expected_lines):
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    for line in expected_lines:
        assert any(got.startswith(line) for got in lines), f"{line!r} not in:\n{result.stderr}"
    assert lines[-1] == f"build failed: {len(lines) - 1} problem(s); {result.out} left unchanged"
    assert tree_digest(result.out) == digest, "the previous output was modified"
    assert not list(result.out.parent.glob("_site.*")), "temporary folders left behind"


def course_pages(out: Path) -> list[Path]:
    """The course's pages (changes.html, the instructors' report, is not one of them)."""
    return sorted(p for p in out.glob("*.html") if p.name != CHANGES_PAGE)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_unknown_number_fails_with_file_line_and_reference(good_copy):
    result, digest = good_copy
    _edit(result.root / "lessons" / "c4-fixture" / "lesson.md", "GPT-2 的 FFN 一共 {n}`gpt2.ffn`",
          "GPT-2 的 FFN 一共 {n}`gpt2.fnn`")
    failed = run_build(result.root, runtime=False)
    assert_failed_cleanly(failed, digest, "lessons/c4-fixture/lesson.md:15: unknown number 'gpt2.fnn' in {n}`gpt2.fnn`")
    assert len(failed.stderr.splitlines()) == 2  # one clear message + the summary


def test_broken_config_fails_naming_file_and_key(good_copy):
    result, digest = good_copy
    anchor = result.root / "data" / "models" / "qwen3.8-27b" / "config.json"
    config = json.loads(anchor.read_text(encoding="utf-8"))
    config["text_config"]["hidden_size"] = -5
    anchor.write_text(json.dumps(config), encoding="utf-8")
    (result.root / "data" / "models" / "gpt2" / "config.json").write_text('{"model_type": ', encoding="utf-8")
    (result.root / "data" / "models" / "llama-2-7b" / "meta.yaml").write_text("id: llama-2-7b\nname: [",
                                                                              encoding="utf-8")
    failed = run_build(result.root, runtime=False)
    assert_failed_cleanly(failed, digest,
                          "data/models/qwen3.8-27b/config.json: key 'text_config.hidden_size': "
                          "expected an integer >= 1, got -5",
                          "data/models/gpt2/config.json: expected valid JSON (line 1",
                          "data/models/llama-2-7b/meta.yaml: expected valid YAML (line 2")


def test_a_config_with_infinity_reaches_the_browser_as_json_and_nan_is_refused(good_copy):
    """Nemotron-H's published config holds the bare word Infinity, which Python reads but JSON.parse refuses: the
    browser's data/models.json must stay JSON (Infinity written 1e999) and give back the very config; a NaN, which
    has no such spelling, fails the build naming the file and key."""
    result, digest = good_copy
    fixture = REPO / "tests" / "fixtures" / "models" / "nemotron-h-56b"
    folder = result.root / "data" / "models" / "nemotron-h-56b"
    shutil.copytree(fixture, folder)
    assert "Infinity" in (folder / "config.json").read_text(encoding="utf-8")
    built = run_build(result.root, runtime=False)
    assert built.returncode == 0, built.stderr

    def refuse(word):
        raise AssertionError(f"data/models.json is not JSON: {word}")
    browser = json.loads((built.out / "data" / "models.json").read_text(encoding="utf-8"), parse_constant=refuse)
    published = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    ours = [m for m in browser.values() if m["id"] == "nemotron-h-56b"]
    assert len(ours) == 1 and ours[0]["config"] == published
    assert ours[0]["config"]["time_step_limit"] == [0.0, float("inf")]

    digest = tree_digest(built.out)
    text = (folder / "config.json").read_text(encoding="utf-8")
    (folder / "config.json").write_text(text.replace('"rms_norm_eps": ', '"rms_norm_eps": NaN, "_was": ', 1),
                                        encoding="utf-8")
    failed = run_build(result.root, runtime=False)
    assert_failed_cleanly(failed, digest, "data/models/nemotron-h-56b/config.json: key 'rms_norm_eps': expected a "
                                          "number (JSON has no NaN), got nan")


def test_every_problem_is_reported_together(good_copy):
    result, digest = good_copy
    _edit(result.root / "lessons" / "c4-fixture" / "lesson.md", "{pct}`anchor.ffn_share_total`，",
          "{pct}`anchor.nope`，")
    _edit(result.root / "lessons" / "c4-fixture" / "lesson.md", "## ② 对照表", "```{widget} nope\n```\n")
    _edit(result.root / "lessons" / "c5-fixture" / "lesson.md", "chapter: C5", "chapter: C9")
    (result.root / "data" / "evolution.json").write_text("[1, 2", encoding="utf-8")
    failed = run_build(result.root, runtime=False)
    assert_failed_cleanly(failed, digest,
                          "data/evolution.json: expected valid JSON",
                          "lessons/c4-fixture/lesson.md:14: unknown number 'anchor.nope'",
                          "lessons/c4-fixture/lesson.md:21: unknown widget 'nope'",
                          "lessons/c5-fixture/lesson.md: front matter says chapter 'C9', data/course.json lists it "
                          "under 'C5'")


def test_outline_and_lessons_must_agree(good_copy):
    result, digest = good_copy
    (result.root / "lessons" / "c5-fixture").rename(result.root / "lessons" / "c7-orphan")
    _edit(result.root / "lessons" / "c7-orphan" / "lesson.md", "id: c5-fixture", "id: c7-orphan")
    failed = run_build(result.root, runtime=False)
    assert_failed_cleanly(failed, digest,
                          "data/course.json: key 'chapters[2].lesson': "
                          "expected an existing lesson lessons/c5-fixture/lesson.md",
                          "lessons/c7-orphan/lesson.md: not listed in data/course.json")


def test_failing_output_step_leaves_previous_output(good_copy):
    result, digest = good_copy

    def broken_step(site, dest):
        (dest / "half-written").write_text("x")
        raise CourseError("runtime: cannot copy the runtime")

    with pytest.raises(CourseError, match="runtime: cannot copy the runtime"):
        build_module.build(result.root, result.out, steps=[broken_step])
    assert tree_digest(result.out) == digest
    assert not list(result.out.parent.glob("_site.*"))


# -- hooks -------------------------------------------------------------------------------------------------------
def test_widgets_and_output_steps_are_one_line_each(tmp_path):
    root = copy_course(tmp_path)
    _edit(root / "lessons" / "c5-fixture" / "lesson.md", "## ① 没有数字的一课",
          "## ① 没有数字的一课\n\n```{widget} total\nmodel: gpt2\n```")

    def total_widget(options, ctx):
        return f'<p class="chart">{ctx.format(options["model"] + ".total", "M")}</p>'

    def extra_step(site, dest):
        (dest / "py").mkdir()
        (dest / "py" / "hello.txt").write_text(f"{len(site.pages)} pages")

    site = build_module.build(root, root / "_site", widgets={"total": total_widget}, steps=[extra_step])
    assert (root / "_site" / "py" / "hello.txt").read_text() == "3 pages"
    page = (root / "_site" / "c5-fixture.html").read_text(encoding="utf-8")
    assert '<div class="widget" data-widget="total" data-options=\'{&quot;model&quot;:&quot;gpt2&quot;}\'>' in page
    assert '<p class="chart">124.4M</p>' in page
    assert "gpt2.total" in site.lessons[1].used  # widget numbers land in 数字口径
    assert 'id="num-gpt2.total"' in page


# -- the change report ---------------------------------------------------------------------------------------------
def test_change_report_after_a_config_edit(good_copy):
    result, _ = good_copy
    again = run_build(result.root, runtime=False)
    assert again.returncode == 0 and "numbers: unchanged since the previous build" in again.stdout
    assert json.loads((result.out / "changes.json").read_text(encoding="utf-8")) == []

    anchor = result.root / "data" / "models" / "qwen3.8-27b" / "config.json"   # replaced by an edited config.json
    config = json.loads(anchor.read_text(encoding="utf-8"))
    old_dff = config["text_config"]["intermediate_size"]
    config["text_config"]["intermediate_size"] = old_dff + 128
    anchor.write_text(json.dumps(config), encoding="utf-8")
    edited = run_build(result.root, runtime=False)
    assert edited.returncode == 0, edited.stderr
    changes = {c["name"]: c for c in json.loads((result.out / "changes.json").read_text(encoding="utf-8"))}
    extra = 3 * 5120 * 128 * (64 + 1)  # three matrices per layer, d = 5,120, 64 layers + the MTP layer
    new_total = 27781427952 + extra
    assert new_total == 27_909_223_152
    uses = [{"page": "c4-fixture.html", "id": f"use-anchor.total-{k}"} for k in (1, 2, 3)]
    assert changes["anchor.total"] == {
        "name": "anchor.total", "old": "27781427952", "new": str(new_total), "pages": ["c4-fixture.html"],
        "label": changes["anchor.total"]["label"], "claims": [], "uses": uses,
        "shown": [{"style": "n", "old": "27,781,427,952", "new": "27,909,223,152"},   # as the page shows it:
                  {"style": "B", "old": "27.78B", "new": "27.91B"}]}                  # {n} first, then {B}
    assert changes["anchor.d_ff"]["pages"] == [] and changes["anchor.d_ff"]["uses"] == []
    assert changes["anchor.d_ff"]["shown"] == [{"style": "n", "old": f"{old_dff:,}", "new": f"{old_dff + 128:,}"}]
    assert "gpt2.total" not in changes
    assert ("  changed anchor.total: 27,781,427,952 -> 27,909,223,152; 27.78B -> 27.91B (c4-fixture.html: 3 places)"
            in edited.stdout.splitlines())
    assert f"changed anchor.d_ff: {old_dff:,} -> {old_dff + 128:,} (no page shows it)" in edited.stdout
    numbers = json.loads((result.out / "numbers.json").read_text(encoding="utf-8"))
    assert numbers["anchor.total"]["value"] == str(new_total)
    page = (result.out / "c4-fixture.html").read_text(encoding="utf-8")   # every place the report links to
    for k, style in ((1, "n"), (2, "B"), (3, "n")):
        assert f'<span class="num" tabindex="0" aria-describedby="num-anchor.total" id="use-anchor.total-{k}">' in page
        use = next(u for u in numbers["anchor.total"]["uses"] if u["id"] == f"use-anchor.total-{k}")
        assert use == {"page": "c4-fixture.html", "id": f"use-anchor.total-{k}", "style": style}
    assert 'id="use-anchor.total-4"' not in page


def test_change_report_shows_ratios_as_the_page_does(good_copy):
    """A ratio is reported as the percentage the page prints, not as a raw fraction."""
    result, _ = good_copy
    anchor = result.root / "data" / "models" / "qwen3.8-27b" / "config.json"
    config = json.loads(anchor.read_text(encoding="utf-8"))
    config["text_config"]["intermediate_size"] *= 2
    anchor.write_text(json.dumps(config, indent=2), encoding="utf-8")
    edited = run_build(result.root, runtime=False)
    assert edited.returncode == 0, edited.stderr
    ffn = 3 * 64 * 5120 * 17408                     # the anchor's FFN weights (64 layers), of 27,781,427,952
    total = 27_781_427_952 + 3 * 65 * 5120 * 17408   # doubled d_ff: 64 layers + the MTP layer grow
    assert f"{ffn / 27_781_427_952:.1%} -> {2 * ffn / total:.1%}" == "61.6% -> 75.8%"
    line = next(got for got in edited.stdout.splitlines() if "anchor.ffn_share_total:" in got)
    assert line == "  changed anchor.ffn_share_total: 61.6% -> 75.8% (c4-fixture.html: 2 places)"
    assert "/" not in line
    row = (result.out / "changes.html").read_text(encoding="utf-8")
    assert '<span class="change-old">61.6%</span> → <span class="change-new">75.8%</span>' in row


def test_added_and_removed_numbers_are_reported(good_copy):
    result, _ = good_copy
    shutil.rmtree(result.root / "data" / "models" / "gpt2")
    _edit(result.root / "data" / "course.json", '"gpt2": "gpt2",', "")   # (an alias of a missing model is refused)
    _edit(result.root / "lessons" / "c4-fixture" / "lesson.md", "GPT-2 的 FFN 一共 {n}`gpt2.ffn` 个参数", "")
    _edit(result.root / "lessons" / "c4-fixture" / "lesson.md", "| GPT-2 | {M}`gpt2.total` |\n", "")
    edited = run_build(result.root, runtime=False)
    assert edited.returncode == 0, edited.stderr
    changes = {c["name"]: c for c in json.loads((result.out / "changes.json").read_text(encoding="utf-8"))}
    gone = changes["gpt2.total"]
    assert (gone["old"], gone["new"], gone["pages"], gone["uses"]) == ("124439808", None, ["c4-fixture.html"], [])
    assert gone["shown"] == [{"style": "M", "old": "124.4M", "new": None}]
    assert "removed gpt2.total (was 124.4M) (c4-fixture.html: 0 places)" in edited.stdout


# -- the repo itself -------------------------------------------------------------------------------------------------
def test_the_repo_builds(repo_site):
    """The real course: every lesson, every model file, the real outline (the session's build of it)."""
    assert repo_site.returncode == 0, repo_site.stderr
    assert (repo_site.out / "index.html").is_file() and len(course_pages(repo_site.out)) >= 2


# -- in a browser: layout at 375 px, the derivation popover, the CSP ---------------------------------------------
CSP_WATCH = ("window.__csp = []; document.addEventListener('securitypolicyviolation', "
             "e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));")


# Resolves once the page's event loop has run every timer it had scheduled for the next `ms` ms: timers of equal or
# longer delay run in the order they were set, so this is a condition on the page's own timers, not a wall-clock wait.
AFTER_PAGE_TIMERS = "(ms) => new Promise((resolve) => setTimeout(resolve, ms))"


def popover_hide_delay_ms() -> int:
    """popover.js hides an unpinned popover HIDE_DELAY ms after the pointer leaves."""
    source = (REPO / "site" / "static" / "js" / "popover.js").read_text(encoding="utf-8")
    return int(re.search(r"\bHIDE_DELAY = (\d+);", source).group(1))


def _overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_popover_layout_and_csp_in_chromium(built_site, http_serve, browser):
    base = http_serve(built_site.out)
    context = browser.new_context(viewport={"width": 375, "height": 700})
    context.add_init_script(CSP_WATCH)
    page = context.new_page()
    try:
        for name in ("index.html", "c4-fixture.html"):
            page.goto(base + name)
            width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            assert width[0] <= width[1], f"{name} scrolls sideways at 375 px: {width}"
        num = page.locator(".num").nth(2)
        pop = page.locator(".num-popover")   # one shared popover, created on first use
        assert pop.count() == 0
        num.hover()
        assert pop.is_visible() and not _overlap(num.bounding_box(), pop.bounding_box())
        page.mouse.move(2, 2)
        pop.wait_for(state="hidden")
        num.focus()
        assert pop.is_visible()
        page.keyboard.press("Escape")
        assert not pop.is_visible()
        assert page.evaluate("document.activeElement.classList.contains('num')")
        num.click()                       # a tap pins it open ...
        page.mouse.move(2, 2)
        page.evaluate(AFTER_PAGE_TIMERS, popover_hide_delay_ms())   # (past the hide it would have scheduled)
        assert pop.is_visible()
        num.click()                       # ... and a second tap closes it
        assert not pop.is_visible()
        page.evaluate("""() => { const n = document.querySelectorAll('.num')[2];
                                 window.scrollBy(0, n.getBoundingClientRect().top - (innerHeight - 40)); }""")
        page.evaluate("document.activeElement.blur()")
        num.focus()                       # near the bottom edge it opens above, still not covering the number
        box, pbox = num.bounding_box(), pop.bounding_box()
        assert pop.get_attribute("data-side") == "above" and not _overlap(box, pbox) and pbox["y"] >= 0
        page.emulate_media(media="print")
        assert page.evaluate("getComputedStyle(document.querySelector('.num-popover')).display") == "none"
        assert page.evaluate("getComputedStyle(document.querySelector('.ledger')).display") == "block"
        assert page.evaluate("getComputedStyle(document.querySelector('.lesson-nav')).display") == "none"
        assert page.evaluate("window.__csp") == []
    finally:
        context.close()
