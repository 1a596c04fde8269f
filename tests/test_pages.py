"""The built pages: C4 shows every figure of its source, and every number on every page explains itself.

Figures: the C4 source (../shared/seeds/000_f3fbfa652c4ee658.txt) as checked in ../shared/reference/README.md.
For each number reference (span.num) the test re-derives the displayed text from the registry, evaluates the
substituted expression of its derivation (which aria-describedby points at, and popover.js shows) in Python and
requires it to equal the value exactly.
"""
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from experiments.errors import CourseError
from experiments.expr import evaluate, to_python
from experiments.numbers import format_number
from sitegen.scripts import ScriptBundles

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def numbers(course_numbers):
    return course_numbers


class Spans(HTMLParser):
    """Collects span.num elements (text, attributes) and every element's text by id."""

    def __init__(self):
        super().__init__()
        self.nums, self.by_id, self._stack = [], {}, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        entry = {"tag": tag, "attrs": a, "text": ""}
        self._stack.append(entry)

    def handle_endtag(self, tag):
        while self._stack:
            entry = self._stack.pop()
            if self._stack:
                self._stack[-1]["text"] += entry["text"]
            a = entry["attrs"]
            if entry["tag"] == "span" and "num" in (a.get("class") or "").split():
                self.nums.append((entry["text"], a))
            if a.get("id"):
                self.by_id[a["id"]] = entry["text"]
            if entry["tag"] == tag:
                break

    def handle_data(self, data):
        if self._stack:
            self._stack[-1]["text"] += data


def parse(path: Path) -> Spans:
    p = Spans()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def text_of(path: Path) -> str:
    html = path.read_text(encoding="utf-8")
    html = re.sub(r"<script.*?</script>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


C4_FIGURES = [
    "27,781,427,952", "26,895,998,464", "61.6%", "63.6%", "21,404,057,600", "23%", "1,271,398,400",
    "17,408", "3.4", "10.2", "6,144", "1,024", "12,288", "11,017,952", "1,100 万", "87,040", "262,144",
    "124,439,808", "137,022,720", "12,582,912", "45.5%", "31.6%", "3,688,704", "524,288", "262,144", "528,384",
    "512", "57.3%", "13,762,560", "10,616,832", "3,145,728", "99.995", "11.36", "0.00707", "46.7%", "4.8%",
    "5.12", "4.92", "4.75", "1.983", "1.944", "8,192", "22,016", "768", "3,072", "117M", "278 亿",
    "115,876,064", "104,858,112", "460,730,096", "424,699,392",
]


def test_c4_shows_every_figure_of_its_source(repo_site):
    text = text_of(repo_site.out / "c4-transformer-block.html")
    missing = [f for f in C4_FIGURES if f not in text]
    assert missing == []


def test_c4_has_its_ten_parts_in_order(repo_site):
    html = (repo_site.out / "c4-transformer-block.html").read_text(encoding="utf-8")
    heads = re.findall(r"<h2[^>]*>(.*?)</h2>", html, flags=re.S)
    marks = [h.strip()[0] for h in heads if h.strip()[:1] in "①②③④⑤⑥⑦⑧⑨⑩"]
    assert marks == list("①②③④⑤⑥⑦⑧⑨⑩")
    assert heads[-1].strip() == "数字口径"


def test_c4_tracker_and_ledgers_are_complete_at_build_time(repo_site):
    html = (repo_site.out / "c4-transformer-block.html").read_text(encoding="utf-8")
    for stage in ("tokens", "embedding", "linear_attention", "full_attention", "final_norm", "lm_head", "softmax"):
        assert f'data-stage="{stage}"' in html
    assert html.count('class="check check-ok"') >= 5 and "check-bad" not in html
    for part in ("embedding", "attention", "linear_attention", "ffn", "norm", "lm_head", "mtp", "vision"):
        assert f'data-part="{part}"' in html
    figures = re.findall(r'<figure class="chart( chart-[a-z]+)?"[^>]*><script type="application/json" '
                         r'class="chart-spec">(.*?)</script>', html, re.S)
    assert len(figures) >= 3
    for kind, spec in figures:   # a chart's height is reserved by its kind from the first paint (widgets.css)
        spec = json.loads(spec.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
        assert kind == (f" chart-{spec['kind']}" if spec else "")   # (the config box's chart has no spec yet)


def pages(site) -> list[Path]:
    return sorted(p for p in site.out.glob("*.html") if p.name != "changes.html")


def test_every_number_on_every_page_explains_itself(repo_site, numbers):
    snap = json.loads((repo_site.out / "numbers.json").read_text(encoding="utf-8"))
    uses = {(u["page"], u["id"]): (name, u["style"]) for name, n in snap.items() for u in n["uses"]}
    checked = 0
    for page in pages(repo_site):
        p = parse(page)
        for shown, attrs in p.nums:
            name, style = uses[(page.name, attrs.get("id"))]   # every use is recorded, with the style it shows
            assert name in numbers, f"{page.name}: unknown number {name}"
            number = numbers[name]
            assert shown == format_number(number, style), f"{page.name}: {name} shows {shown!r}"
            assert attrs.get("tabindex") == "0"
            # the description: the number's entry in the page's 数字口径 list (value, label, derivation rows)
            assert attrs.get("aria-describedby") == f"num-{name}", f"{page.name}: {name} is not described"
            popover = p.by_id.get(f"num-{name}", "")
            shown_here = {u["style"] for u in snap[name]["uses"] if u["page"] == page.name}   # (the entry's is one)
            assert any(popover.startswith(f"{format_number(number, st)} {number.label}") for st in shown_here), \
                f"{page.name}: {name}'s description lacks its value and label"
            if number.expr is not None:
                substituted = number.expr.substituted()
                assert substituted in popover
                exact = not isinstance(number.value, float)
                assert evaluate(substituted, exact) == number.value, f"{name}: {to_python(substituted)}"
            assert number.sources and all(s in popover for s in number.sources)
            checked += 1
    assert checked > 150


def test_every_lesson_ends_with_a_complete_number_ledger(repo_site, numbers):
    for page in pages(repo_site):
        if page.name == "index.html":
            continue
        html = page.read_text(encoding="utf-8")
        used = list(dict.fromkeys(re.findall(r'<span class="num"[^>]*aria-describedby="num-([^"]+)"', html)))
        section = html.split('id="shuzi-koujing"', 1)[1]
        listed = re.findall(r'<li id="num-([^"]+)"><p><b>', section)   # the entry's id holds the number's name
        assert listed == used, f"{page.name}: 数字口径 differs: {sorted(set(used) ^ set(listed))[:5]}"
        for name in listed:
            assert numbers[name].sources


def test_each_page_loads_only_the_widget_scripts_it_uses(repo_site):
    def scripts(name):   # the parts of the page's one script file, as it names them and as the file holds them
        html = (repo_site.out / name).read_text(encoding="utf-8")
        (src, parts), = re.findall(r'<script src="(static/js/page-[0-9a-f]{12}\.js)" data-parts="([^"]+)"', html)
        assert ScriptBundles.parts_of((repo_site.out / src).read_text(encoding="utf-8")) == parts.split(" ")
        assert re.findall(r'<script defer src="static/js/([^"]+)"', html) == ["popover.js", "offline.js"]
        return parts.split(" ")
    # no runtime on the outline; its count of each lesson's solved exercises is exercise-progress.js
    assert scripts("index.html") == ["prefetch-runtime.js", "exercise-progress.js"]
    assert scripts("c4-transformer-block.html") == ["runtime-client.js", "derivation.js", "widgets.js",
                                                    "lessons/c4-transformer-block/script.js", "code-cell.js",
                                                    "exercise.js", "charts.js"]
    assert scripts("c4-ffn-deep-read.html") == ["runtime-client.js", "widgets.js", "code-cell.js",
                                                "lessons/c4-ffn-deep-read/script.js", "exercise.js", "charts.js"]


def test_a_page_script_file_holds_its_parts_in_order_and_is_named_by_its_bytes(tmp_path):
    js = tmp_path / "js"
    js.mkdir()
    (js / "a.js").write_text("(function () { window.a = 1; })()\n", encoding="utf-8")
    (js / "b.js").write_text("(function () { window.b = window.a + 1; })();", encoding="utf-8")
    (js / "messages.js").write_text("(function () { window.m = window.courseMessageTable; })();", encoding="utf-8")
    bundles = ScriptBundles(js, {"k": "文字 {n}"})
    name = bundles(["a.js", "b.js"])
    assert re.fullmatch(r"page-[0-9a-f]{12}\.js", name) and bundles(("a.js", "b.js")) == name
    text = bundles.files()[f"static/js/{name}"]
    assert ScriptBundles.parts_of(text) == ["a.js", "b.js"]
    assert text.index("window.a=1") < text.index("window.b=")     # (each part minified: sitegen/minify.py)
    # every file starts with the learner message table and messages.js, ahead of (and not among) the parts
    assert text.index('window.courseMessageTable = {"k": "文字 {n}"}') < text.index("window.m=") \
        < text.index("window.a=1")
    assert "})()\n;\n}" in text   # a part without its own semicolon cannot run into the next one
    assert text.count("try {") == 2 and 'catch (e) { console.error("b.js", e); }' in text   # nor stop it
    assert bundles(["b.js"]) != name and len(bundles.files()) == 2
    (js / "b.js").write_text("(function () { window.b = 3; })();", encoding="utf-8")
    assert ScriptBundles(js, {"k": "文字 {n}"})(["a.js", "b.js"]) != name   # a changed part, a new name
    with pytest.raises(CourseError, match=r"site/static/js/missing\.js: missing"):
        bundles(["a.js", "missing.js"])


def test_home_page_outline(repo_site):
    html = (repo_site.out / "index.html").read_text(encoding="utf-8")
    assert 'href="c4-transformer-block.html"' in html
    course = json.loads((ROOT / "data/course.json").read_text(encoding="utf-8"))
    for ch in course["chapters"]:
        assert ch["id"] in html
        if ch["status"] == "planned":
            assert f'href="{ch.get("lesson")}.html"' not in html
    assert ("未写" in html) == any(ch["status"] == "planned" for ch in course["chapters"])


def test_shipped_scripts_lose_comments_and_spaces_but_not_strings_regexes_or_templates():
    """sitegen/minify.py: what the build writes is minified; strings, regular expressions and template literals
    that look like comments are kept whole, as are /*! */ comments."""
    from sitegen import minify
    text = ('var u = "http://x"; // a comment\nvar r = /a\\/b/g; /* another */ var t = `a // b ${u} /* c */`;\n'
            '/*! kept */\nvar z = 1\nvar w = 2')
    got = minify.js(text)
    assert got == 'var u="http://x";var r=/a\\/b/g;var t=`a // b ${u} /* c */`;/*! kept */var z=1\nvar w=2'
    assert minify.css("a {\n  color: red; /* why */\n}\n") == "a{color:red}"


def test_the_built_sites_own_scripts_and_styles_are_minified(repo_site):
    static = repo_site.out / "static"
    for rel in ("js/popover.js", "js/offline.js", "css/course.css", "css/widgets.css"):
        shipped = (static / rel).read_text(encoding="utf-8")
        source = (ROOT / "site" / "static" / rel).read_text(encoding="utf-8")
        assert "/*" in source and "/* " not in shipped and len(shipped) < 0.8 * len(source), rel
