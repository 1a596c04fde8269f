"""What a learner sees is Chinese: no English sentences, internal paths, module, file or exception names on any
built page.

The check reads every page of a real build (tests/build_fixtures.py: repo_site) as a learner would: the text of
each element, plus the attributes a screen reader or a tooltip shows (aria-label, title, alt, placeholder), but
not code (<code>, <pre>, <textarea> of the code cells), scripts or styles. A run of text with no Chinese in it that
holds three or more English words (of two letters or more: symbols such as d, L, V are not words) is an English
sentence, unless what remains after taking out the names a page
may show (the models' display names, product and method names below, units) has fewer than three words.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests import seed_ngrams

SKIP = {"code", "pre", "script", "style", "textarea", "template"}
VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "area", "col", "embed", "track"}
SHOWN_ATTRS = ("aria-label", "title", "alt", "placeholder")
# names a page may show as they are: methods, products, libraries (model names come from the build itself)
NAMES = ["Gated DeltaNet", "Hugging Face", "NVIDIA H100", "NVIDIA A100", "Tensor Core", "GPU", "SXM", "SXM5",
         "token mixer", "lm_head", "Multi-Token Prediction", "LayerNorm", "RMSNorm", "SwiGLU", "GELU", "ReLU",
         "SiLU", "softmax", "safetensors", "transformers", "numpy", "Pyodide", "config.json", "TFLOPS", "FLOPs",
         "tok/s", "TB/s", "GB", "MB", "ms"]
WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][a-z]+(?:['’][a-z]+)?(?![A-Za-z0-9_])")   # 2+ letters, not a symbol
SLASHED = re.compile(r"\S*/\S*")   # model page ids (meta-llama/Llama-2-7b-hf), q/k/v/o; paths: internal_references
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
# what only the repository knows: a path into it (data/..., ../shared/...), a module (experiments.train), a source
# or data file's name (widgets.py, runs.json; config.json is the Hugging Face file every lesson teaches), a Python
# exception's name or traceback, the editors' notes' sigils. A cited source's web address is left out first: it
# names that source's own files.
INTERNAL = re.compile(r"\.\./|(?<![\w.-])(?:data|experiments|sitegen|site|lessons|tests|docs|_site)/"
                      r"|\b(?:experiments|sitegen)\.\w|\b[\w-]+\.(?:py|md|txt|yaml|yml|js|css|csv|html)\b"
                      r"|\b(?!config\.json)[\w-]+\.json\b|\b[A-Z]\w*(?:Error|Exception)\b|Traceback|原稿|R\d §|Q-E\d")
URL = re.compile(r"https?://\S+")
COURSE = json.loads((Path(__file__).resolve().parent.parent / "data" / "course.json").read_text(encoding="utf-8"))
# every page a learner reaches: the home page and each written lesson (changes.html, the instructors' report of
# changed numbers, is not linked from the course)
LEARNER_PAGES = ["index.html"] + [f"{ch['lesson']}.html" for ch in COURSE["chapters"]
                                  if ch.get("status") == "written" and ch.get("lesson")]


class VisibleText(HTMLParser):
    """Text runs a learner can see or hear, one per text node or shown attribute, with the tag they sit in."""

    def __init__(self, skip=frozenset(SKIP)):
        super().__init__(convert_charrefs=True)
        self.skip = skip
        self.stack: list[str] = []
        self.runs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if not any(t in self.skip for t in self.stack):
            self.runs += [v for k, v in attrs if k in SHOWN_ATTRS and v]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if data.strip() and not any(t in self.skip for t in self.stack):
            self.runs.append(data)


def visible_runs(page_html: str, skip=frozenset(SKIP)) -> list[str]:
    parser = VisibleText(skip)
    parser.feed(page_html)
    return parser.runs


def english_sentences(runs: list[str], allowed_names: list[str]) -> list[str]:
    """Every stretch of text without Chinese that holds 3+ English words once allowed names are taken out."""
    names = sorted(set(allowed_names) | set(NAMES), key=len, reverse=True)
    found = []
    for run in runs:
        for stretch in CJK.split(run):
            rest = SLASHED.sub(" ", stretch)
            for name in names:
                rest = rest.replace(name, " ")
            if len(WORD.findall(rest)) >= 3:
                found.append(stretch.strip())
    return found


def internal_references(runs: list[str]) -> list[str]:
    return [run.strip() for run in runs if INTERNAL.search(URL.sub(" ", run))]


# -- the detector itself -----------------------------------------------------------------------------------------
def test_detector_finds_english_sentences_and_paths():
    page = ('<p>FFN 占 61.6%。The course baseline model as described in the C4 lesson.</p>'
            '<p title="shown when hovered over">悬停</p><code>print(f"total is {total}")</code>'
            '<p>Llama 2 7B 的 config.json，Gated DeltaNet 层</p><pre>for layer in model.layers</pre>'
            '<p>配置来源：../shared/reference/qwen3.8-27b.config.json</p><p>C4 原稿所引</p>'
            '<footer>数据：data/train_runs.json</footer><p aria-label="由 experiments.api 计算">图</p>'
            '<p>出错：KeyError: \'d_model\'</p><figcaption>见 widgets.py</figcaption>'
            '<footer>由 <code>experiments/</code> 现算</footer>'
            '<p>每个模型的 config.json；来源 <a href="x">https://github.com/a/b/blob/main/ssd_combined.py</a></p>')
    runs = visible_runs(page)
    assert internal_references(visible_runs(page, SKIP - {"code"}))[-1] == "experiments/"
    assert english_sentences(runs, ["Llama 2 7B"]) == ["The course baseline model as described in the C4 lesson.",
                                                        "shown when hovered over"]
    assert internal_references(runs) == ["配置来源：../shared/reference/qwen3.8-27b.config.json", "C4 原稿所引",
                                         "数据：data/train_runs.json", "由 experiments.api 计算",
                                         "出错：KeyError: 'd_model'", "见 widgets.py"]


# -- every page of the real course -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pages(repo_site) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(repo_site.out).glob("*.html"))}


@pytest.fixture(scope="module")
def model_names(repo_site) -> list[str]:
    models = json.loads((Path(repo_site.out) / "data" / "models.json").read_text(encoding="utf-8"))
    return [m["name"] for m in models.values()]


def test_pages_were_built(pages):
    assert {"index.html", "c4-transformer-block.html", "c4-ffn-deep-read.html"} <= set(pages)


@pytest.mark.parametrize("page", ["index.html", "c4-transformer-block.html", "c4-ffn-deep-read.html"])
def test_no_english_sentences(pages, model_names, page):
    assert english_sentences(visible_runs(pages[page]), model_names) == []


def test_every_learner_page_is_checked(pages):
    assert set(pages) - {"changes.html"} == set(LEARNER_PAGES)


@pytest.mark.parametrize("page", LEARNER_PAGES)
def test_no_internal_paths_or_source_files(pages, page):
    """Footers, captions, notes, messages written into the page, tooltips and labels (issue #49 part 5), inline
    code too (the outline's footer named `experiments/` and `data/models/` in <code>); a code block is code."""
    assert internal_references(visible_runs(pages[page], SKIP - {"code"})) == []


def test_no_internal_names_in_script_messages():
    """The messages scripts write at run time (data/messages_zh.json, W.msg) are not in a built page's text."""
    def strings(x):
        if isinstance(x, dict):
            return [s for v in x.values() for s in strings(v)]
        if isinstance(x, list):
            return [s for v in x for s in strings(v)]
        return [x] if isinstance(x, str) else []
    table = json.loads((Path(__file__).resolve().parent.parent / "data" / "messages_zh.json").read_text("utf-8"))
    assert internal_references(strings(table)) == []


def test_baseline_display_name_is_chinese(pages, model_names):
    assert "课程基线模型（d = 256，4 层）" in model_names
    assert "课程基线模型（d = 256，4 层）" in pages["c4-transformer-block.html"]
    assert "Course baseline" not in pages["c4-transformer-block.html"]


def test_check_marks_only_against_independent_counts(pages):
    """A ✓ compares with an independent count (transformers, a model page, a paper), never with the source the
    config itself was taken from (the anchor's total quoted by the same text; the baseline's own description)."""
    text = pages["c4-transformer-block.html"]
    entries = re.findall(r'<li class="check (?:ok|bad)">(.*?)</li>', text)   # 数字口径 check rows
    assert len(entries) >= 5
    for entry in entries:
        if "✓" in entry:
            assert re.search(r"transformers|模型页|论文|账本引擎|numpy", entry), entry
    assert "27,781,427,952 ✓" not in text and "3,688,704 ✓；" not in text


# -- no lesson repeats the article it was modelled on (tests/seed_ngrams.py) --------------------------------------
COURSE = json.loads((Path(__file__).resolve().parent.parent / "data" / "course.json").read_text(encoding="utf-8"))
SEEDS = seed_ngrams.seed_fingerprints()


def test_seed_check_finds_a_repeated_phrase_across_numbers_and_formulas():
    """Fragments of the C4 seed (the course's earlier C4 page) as the lesson once had them: found whatever numbers,
    formulas or punctuation sit between the characters; the course's own outline and names are not findings."""
    seed = SEEDS["c4-transformer-block"]
    owned = seed_ngrams.course_owned(COURSE, "c4-transformer-block")
    text = ("::: note 旧版课程在这里算错过\n| 每层注意力（MHA，无偏置） | 4 × d × d | 262,144 |"
            "## ⑦ 证据三问\n- **它解决什么问题？** 把参数一个个数清楚。")
    assert seed_ngrams.shared(text, seed, owned) == ["旧版课程在这里算错过", "每层注意力无偏置"]
    assert seed_ngrams.shared("每层注意力 4·d²，FFN 8·d²", seed, owned) == []


def test_the_exempt_outline_is_the_lessons_outline():
    """Each exempt outline phrase heads a section (or asks a ⑦ question) in nearly every lesson: it is the course's
    structure, not a phrase taken from a seed."""
    lessons = Path(__file__).resolve().parents[1] / "lessons"
    texts = [f.read_text(encoding="utf-8") for f in lessons.glob("*/lesson.md")]
    rare = [p for p in seed_ngrams.OUTLINE if sum(p in t for t in texts) < len(texts) - 1]
    assert len(texts) >= 8 and rare == []


def test_the_recorded_fingerprints_are_the_seeds():
    if not seed_ngrams.SEEDS.is_dir():
        pytest.skip(f"the seed articles are not beside this checkout ({seed_ngrams.SEEDS})")
    for lesson, name in seed_ngrams.LESSON_SEEDS.items():
        text = (seed_ngrams.SEEDS / name).read_text(encoding="utf-8")
        assert SEEDS[lesson] == seed_ngrams.grams(text), f"{lesson}: run python -m tests.seed_ngrams --write"


@pytest.mark.parametrize("lesson", sorted(seed_ngrams.LESSON_SEEDS))
def test_no_lesson_repeats_its_seed(pages, lesson):
    """Everything the lesson's page shows (code cells and tooltips included) and its Markdown share no stretch of
    eight Chinese characters with the seed."""
    owned = seed_ngrams.course_owned(COURSE, lesson)
    page = seed_ngrams.page_text(pages[f"{lesson}.html"])
    markdown = (Path(__file__).resolve().parent.parent / "lessons" / lesson / "lesson.md").read_text(encoding="utf-8")
    assert seed_ngrams.shared(page, SEEDS[lesson], owned) == []
    assert seed_ngrams.shared(markdown, SEEDS[lesson], owned) == []
