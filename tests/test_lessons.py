"""Every lesson's prose cites computed values by reference: no hand-typed number equals a computed one.

The scan strips number roles ({n}`name`), fenced blocks (code cells and widget options hold code and config
values, not prose; an exercise's prompt and hints are prose, and are scanned) and inline code, then looks at
every remaining figure (2,048 · 61.6% · 1,100 万 · 4.33B · 3.0). A figure that equals any computed or cited
number in any display style fails the test, naming the file and line. Years and the digits of identifiers (C4,
Qwen3.8-27B, L2) are not figures; single digits are counting words ("2 FLOPs per weight", "three matrices") and
are allowed.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.course_numbers import compute_numbers
from experiments.format import format_value
from sitegen.models import load_models

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("*/lesson.md"))
ROLE = re.compile(r"\{[A-Za-z]+\d?\}`[^`]+`")
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.S | re.M)
FIGURE = re.compile(r"(?<![\w.\-/^·])\d[\d,]*(?:\.\d+)?(?:%| ?[万亿]|[KMB](?![A-Za-z]))?(?![\w\-·²])")
LEARNER_KEYS = ("prompt", "hints")   # a widget block's options the learner reads as prose (an exercise's)
STYLES = ("n", "pct", "pct0", "pct2", "wan", "yi", "B", "B1", "M", "M0", "x", "x0", "x1", "x2")


@pytest.fixture(scope="module")
def computed_texts() -> set[str]:
    """Every computed number's texts, computed in a fresh interpreter: as a build computes them, whatever state
    earlier tests in this process left in the lesson modules (in the whole suite an earlier test once added a
    figure here that no build computes)."""
    out = subprocess.run([sys.executable, "-c", "import json, sys; sys.path.insert(0, 'tests'); "
                          "from test_lessons import texts_of_the_course; "
                          "print(json.dumps(sorted(texts_of_the_course())))"],
                         cwd=ROOT, capture_output=True, text=True, check=True, timeout=900)
    return set(json.loads(out.stdout))


def texts_of_the_course() -> set[str]:
    models = load_models(ROOT / "data" / "models")
    data = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "data").glob("*.json")}
    numbers = compute_numbers(models, data["course"], data.get("reference_counts"), data.get("citations"), data=data)
    texts = set()
    for number in numbers.values():
        for style in STYLES:
            try:
                texts.add(normalise(format_value(number.value, style)))
            except (ValueError, TypeError, OverflowError):
                pass
        if isinstance(number.value, int):
            texts.add(str(number.value))
    return {t for t in texts if not re.fullmatch(r"\d", t)}


def normalise(figure: str) -> str:
    return figure.replace(" ", "")


def figures(text: str):
    """(line number, figure) of every figure in the prose of a lesson (not its front matter)."""
    text = re.sub(r"\A---\n.*?\n---\n", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = FENCE.sub(_learner_text_only, text)
    for lineno, line in enumerate(text.splitlines(), 1):
        line = re.sub(r"`[^`]*`", " ", ROLE.sub(" ", line))
        for m in FIGURE.finditer(line):
            tok = m.group(0)
            if re.fullmatch(r"(19|20)\d\d", tok):      # a year
                continue
            if re.fullmatch(r"\d\d?", tok) and line[m.end():].lstrip().startswith(("×", "·")):
                continue                                  # a formula's coefficient: 12 × L × d²
            yield lineno, tok


def _learner_text_only(fence: re.Match) -> str:
    """A fenced block as blank lines, but for what a widget block gives the learner to read: an exercise's
    ``prompt`` and ``hints`` (the page renders them as the prose is rendered, number roles included), kept in place
    as prose; every other option is a config value."""
    lines = fence.group(0).split("\n")
    if not lines[0].lstrip("`~").startswith("{widget}"):
        return "\n" * (len(lines) - 1)
    out, key = [], None
    for line in lines:
        if line and not line[0].isspace():
            key = line.split(":", 1)[0] if ":" in line else None
            line = line.split(":", 1)[1] if key in LEARNER_KEYS else ""
        out.append(line if key in LEARNER_KEYS else "")
    return "\n".join(out)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.parent.name)
def test_no_hand_typed_computed_number(lesson, computed_texts):
    hits = [f"{lesson.relative_to(ROOT)}:{line}: {tok}" for line, tok in figures(lesson.read_text(encoding="utf-8"))
            if normalise(tok) in computed_texts]
    assert hits == []


def test_the_scan_catches_a_typed_number(computed_texts):
    sample = ("Qwen3.8 的 FFN 占 61.6%，共 17,112,760,320 个参数，64 层；{n}`anchor.total` 不算；"
              "C4、2017 年、12 × L 也不算。")
    assert [tok for _, tok in figures(sample) if normalise(tok) in computed_texts] == ["61.6%", "17,112,760,320", "64"]
    exercise = ("```{widget} c9-zero-bytes\nprompt: |\n  优化器合计 K = 12 字节，{n}`c9.bpp.zero_K` 不算。\nhints:\n"
                "  - 每个参数 2 + 2 + K = 16 字节。\nmodels: [llama7b, 64]\n```\n")
    assert [tok for _, tok in figures(exercise) if normalise(tok) in computed_texts] == ["12", "16"]
