"""The lesson Markdown plugins (sitegen/markdown.py), tested with fixture files: Markdown in, HTML out.

Each tests/fixtures/markdown/NAME.md is rendered as if it were lessons/NAME.md, against the small number
registry and widget registry below. NAME.html holds the expected HTML; for a lesson that must fail, NAME.err
holds the expected error lines instead (one `lessons/NAME.md:LINE: message` per problem, all of them).
A fixture starting with `---` or named front-matter* is rendered as a whole lesson (front matter required and checked).

    UPDATE_FIXTURES=1 python -m pytest tests/test_markdown_plugins.py   # rewrite the expected files; review the diff
"""
from __future__ import annotations

import html
import os
import re
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.expr import Const, Sym
from experiments.format import exact_text
from experiments.numbers import Number
from sitegen import markdown
from sitegen.errors import BuildError
from sitegen.pages import ledger_entries

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "markdown"
CASES = sorted(FIXTURES.glob("*.md"))
UPDATE = os.environ.get("UPDATE_FIXTURES") == "1"

_d, _dff, _L = Sym("d", 5120), Sym("d_ff", 17408), Sym("L", 64)
_ffn = _L * (Const(3) * _d * _dff)
_share = Sym("FFN", _ffn.value) / Sym("总参数", 27_781_427_952)
KEYS = {"d": "text_config.hidden_size", "d_ff": "text_config.intermediate_size", "L": "text_config.num_hidden_layers"}
ANCHOR = "data/models/qwen3.8-27b/config.json"
NUMBERS = {
    "anchor.ffn": Number("anchor.ffn", _ffn.value, "锚点：FFN 参数（全部层）", _ffn,
                         (f"{ANCHOR}: text_config.hidden_size, text_config.intermediate_size",),
                         "transformers 数得 17,112,760,320 ✓", symbols=KEYS),
    "anchor.total": Number("anchor.total", 27_781_427_952, "锚点：checkpoint 全部参数", None, (ANCHOR,),
                           "transformers 数得 27,356,728,560 ✗"),
    "anchor.ffn_share": Number("anchor.ffn_share", _share.value, "锚点：FFN 占比", _share, (ANCHOR,),
                               kind="ratio", default_style="pct"),
}

def demo_widget(options: dict, ctx: markdown.WidgetContext) -> str:
    """A widget renderer as the lead would write one: options in, build-time HTML out, numbers via ctx."""
    model = options["model"]
    rows = "".join(f"<tr><th>{html.escape(q)}</th><td>{ctx.format(f'{model}.{q}')}</td></tr>"
                   for q in options.get("rows", ["ffn"]))
    return f"<table class=\"demo\">{rows}</table>"


def answering_widget(options: dict, ctx: markdown.WidgetContext) -> str:
    """A widget whose controls answer from what the build wrote (sitegen/widgets.py sets ctx.answered so)."""
    ctx.answered = True
    return f"<p class=\"answers\">{html.escape(str(options.get('label', '')))}</p>"


WIDGETS = {"demo": demo_widget, "answers": answering_widget}


def page_for(source: Path) -> markdown.Page:
    return markdown.Page(f"lessons/{source.name}", NUMBERS, widgets=WIDGETS)


def render_case(source: Path) -> tuple[str | None, list[str]]:
    """(html or None, error lines) for one fixture."""
    text = source.read_text(encoding="utf-8")
    page = page_for(source)
    if text.startswith("---") or source.stem.startswith("front-matter"):
        try:
            return markdown.render_lesson(text, page).body, []
        except BuildError as e:
            return None, e.lines()
    _, out = markdown.render_markdown(text, page)
    return (None, [str(e) for e in sorted(page.errors, key=lambda e: e.line or 0)]) if page.errors else (out, [])


@pytest.mark.parametrize("source", CASES, ids=[p.stem for p in CASES])
def test_fixture(source: Path):
    out, errors = render_case(source)
    html_file, err_file = source.with_suffix(".html"), source.with_suffix(".err")
    if UPDATE:
        (err_file if errors else html_file).write_text("\n".join(errors) + "\n" if errors else out, encoding="utf-8")
        (html_file if errors else err_file).unlink(missing_ok=True)
    if err_file.exists():
        assert errors == err_file.read_text(encoding="utf-8").splitlines(), "error lines differ"
    else:
        assert not errors, "unexpected errors:\n" + "\n".join(errors)
        assert html_file.exists(), f"missing expected output {html_file.name} (run with UPDATE_FIXTURES=1)"
        assert out == html_file.read_text(encoding="utf-8")


def test_every_fixture_has_an_expectation():
    for source in CASES:
        assert source.with_suffix(".html").exists() != source.with_suffix(".err").exists(), source.name


# -- properties the fixtures show, stated directly ---------------------------------------------------------------
def test_the_first_paint_waits_only_for_a_first_answering_widget_near_the_top():
    """The mark after the first answering widget (fixture widget-first-paint) stays, and the lesson names it, when
    the widget ends within FIRST_WIDGET_WITHIN bytes of the body; further down the mark is dropped."""
    head = "---\nid: x\ntitle: X\nchapter: C4\n---\n"
    widget = "```{widget} answers\nlabel: a\n```\n"
    near = markdown.render_lesson(head + "前言。\n\n" + widget, markdown.Page("lessons/x.md", NUMBERS, widgets=WIDGETS))
    assert near.first_paint_after == markdown.FIRST_WIDGET_MARK
    assert near.body.count(f'<div id="{markdown.FIRST_WIDGET_MARK}" hidden></div>') == 1
    filler = "".join(f"第 {i} 段：" + "很长的正文。" * 40 + "\n\n" for i in range(100))   # 100 x 720 B
    assert len(filler.encode("utf-8")) > markdown.FIRST_WIDGET_WITHIN
    far = markdown.render_lesson(head + filler + widget, markdown.Page("lessons/x.md", NUMBERS, widgets=WIDGETS))
    assert far.first_paint_after is None
    assert markdown.FIRST_WIDGET_MARK not in far.body and '<p class="answers">a</p>' in far.body
    none = markdown.render_lesson(head + "```{widget} demo\nmodel: anchor\n```\n",
                                  markdown.Page("lessons/x.md", NUMBERS, widgets=WIDGETS))
    assert none.first_paint_after is None and markdown.FIRST_WIDGET_MARK not in none.body


def test_front_matter_is_parsed_and_not_rendered():
    lesson = markdown.render_lesson((FIXTURES / "front-matter.md").read_text(encoding="utf-8"),
                                    page_for(FIXTURES / "front-matter.md"))
    assert lesson.meta == {"id": "front-matter", "title": "一个 Transformer 块", "chapter": "C4", "order": 1,
                           "summary": "参数花在哪。", "reading_minutes": 12}
    assert "reading_minutes" not in lesson.body and lesson.body.strip() == "<p>正文从这里开始。</p>"


def test_unknown_number_names_file_line_and_reference():
    _, errors = render_case(FIXTURES / "number-unknown.md")
    assert errors[0].startswith("lessons/number-unknown.md:3: unknown number 'anchor.fnn' in {n}`anchor.fnn`")
    assert "did you mean 'anchor.ffn'" in errors[0]
    assert errors[1].startswith("lessons/number-unknown.md:4: unknown number 'nobody.total'")
    assert len(errors) == 2  # every problem, not just the first


def test_number_is_described_by_its_ledger_entry():
    """Every use of a number points (aria-describedby) at its one 数字口径 entry, which carries the value, label and
    derivation rows: nothing is repeated per use (data-style is the build's note of the style, see changes.py)."""
    out, _ = render_case(FIXTURES / "number-role.md")
    nums = re.findall(r'<span class="num" tabindex="0" aria-describedby="([^"]+)" data-style="(\w+)">', out)
    assert nums == [("num-anchor.ffn", "n"), ("num-anchor.ffn", "B"), ("num-anchor.ffn_share", "pct")]
    assert markdown.derivation_id("anchor.ffn") == "num-anchor.ffn"
    assert "num-popover" not in out and "= L · 3 · d · d_ff" not in out

    page = page_for(FIXTURES / "number-role.md")
    markdown.render_markdown((FIXTURES / "number-role.md").read_text(encoding="utf-8"), page)
    entries = ledger_entries(page, NUMBERS)
    assert [(e["name"], e["id"], e["display"]) for e in entries] == [
        ("anchor.ffn", "num-anchor.ffn", "17,112,760,320"), ("anchor.ffn_share", "num-anchor.ffn_share", "61.6%")]
    assert entries[0]["label"] == "锚点：FFN 参数（全部层）"
    rows = entries[0]["rows"]   # calculation lines carry no class (course.css styles them by structure)
    assert rows[:3] == [("", "= L · 3 · d · d_ff"), ("", "= 64 × 3 × 5,120 × 17,408"), ("", "= 17,112,760,320")]
    assert [cls for cls, _ in rows[3:]] == ["where", "sources", "check ok"] and "✓" in rows[-1][1]


def test_each_scrolling_table_is_named_by_its_plain_column_headings():
    page = markdown.Page(file="lessons/x.md")
    _, out = markdown.render_markdown("| **模型** | `d_ff` | [链接](http://a.b) |\n|---|---|---|\n| a | b | c |\n\n"
                                      "| 层 | 参数 |\n|---|---|\n| 1 | 2 |\n", page)
    labels = re.findall(r'<div class="table-scroll" role="region" tabindex="0" aria-label="([^"]+)">', out)
    assert labels == ["表 1：模型、d_ff、链接（可横向滚动）", "表 2：层、参数（可横向滚动）"]


def test_numbers_used_are_recorded_in_first_use_order():
    page = page_for(FIXTURES / "number-role.md")
    markdown.render_markdown((FIXTURES / "number-role.md").read_text(encoding="utf-8"), page)
    assert page.used == {"anchor.ffn": "n", "anchor.ffn_share": "pct"}


def test_widget_numbers_count_as_used():
    page = page_for(FIXTURES / "widget.md")
    markdown.render_markdown((FIXTURES / "widget.md").read_text(encoding="utf-8"), page)
    assert list(page.used) == ["anchor.ffn", "anchor.total"]


def test_unknown_widget_is_an_error_with_file_and_line():
    _, errors = render_case(FIXTURES / "widget-unknown.md")
    assert errors == ["lessons/widget-unknown.md:3: unknown widget 'no-such-widget' (known: answers, demo)"]


def test_numbers_unavailable_render_placeholders_without_errors():
    page = markdown.Page("lessons/x.md", None)
    _, out = markdown.render_markdown("{n}`anchor.total`", page)
    assert page.errors == [] and 'class="num num-missing"' in out


@pytest.mark.parametrize("value, text", [(27781427952, "27,781,427,952"), (0.5, "≈ 0.5"),
                                         (Fraction(660480, 27781427952), "≈ 0.0000237742"), (87040.25, "≈ 87,040.2"),
                                         (Sym("a", 6).value / 3, "2"), (Const(1).value / 3, "≈ 0.333333"),
                                         (3.1e-314, "≈ 3.1 × 10⁻³¹⁴"), (Fraction(3e-314), "≈ 3 × 10⁻³¹⁴"),
                                         (2.5e-6, "≈ 0.0000025"), (Fraction(10**20, 3), "≈ 3.33333 × 10¹⁹"),
                                         (3.8e25, "≈ 3.8 × 10²⁵"), (10**20, "100,000,000,000,000,000,000")])
def test_exact_text(value, text):
    """Decimals between 10⁻⁶ and 10¹⁵; beyond them (a p-value of 10⁻³¹⁴, a FLOP count that is not an integer)
    mantissa × 10^exponent, never hundreds of zeros; exact integers in full."""
    assert exact_text(value) == text


def test_no_inline_style_attributes():
    """The Content-Security-Policy refuses style="..."; aligned table cells get classes instead."""
    out, _ = render_case(FIXTURES / "headings-table.md")
    assert not re.search(r"\sstyle=", out) and '<th class="align-right">FFN</th>' in out
