"""sitegen/changes.py on its own: ids on number uses, numbers.json snapshots, the comparison in page formats,
the claims a change touches, and the report's lines (the build-level behaviour is in test_build.py and
test_instructor_loop.py)."""
import json
from fractions import Fraction

from experiments.numbers import Number
from sitegen import changes


def span(name, style, text):   # as sitegen.markdown.number_html writes it
    return f'<span class="num" tabindex="0" aria-describedby="num-{name}" data-style="{style}">{text}</span>'


def test_mark_uses_numbers_each_use_of_a_name_in_page_order():
    page = f"<p>{span('a.total', 'n', '1')} and {span('b.x', 'pct', '2%')} and {span('a.total', 'yi', '3 亿')}</p>"
    marked, uses = changes.mark_uses(page, "p.html")
    assert [u["id"] for u in uses] == ["use-a.total-1", "use-b.x-1", "use-a.total-2"]
    assert [u["name"] for u in uses] == ["a.total", "b.x", "a.total"]
    assert [u["style"] for u in uses] == ["n", "pct", "yi"]
    # the id takes data-style's place (the style is kept in numbers.json, nothing in the browser reads it)
    assert marked == ('<p><span class="num" tabindex="0" aria-describedby="num-a.total" id="use-a.total-1">1</span>'
                      ' and <span class="num" tabindex="0" aria-describedby="num-b.x" id="use-b.x-1">2%</span>'
                      ' and <span class="num" tabindex="0" aria-describedby="num-a.total" id="use-a.total-2">'
                      '3 亿</span></p>')


def _numbers(total, share):
    return {"a.total": Number("a.total", total, "总数"),
            "a.share": Number("a.share", share, "占比", default_style="pct")}


def _snap(total, share):
    uses = [{"name": "a.total", "page": "p.html", "id": "use-a.total-1", "style": "yi"},
            {"name": "a.share", "page": "p.html", "id": "use-a.share-1", "style": "pct"},
            {"name": "a.share", "page": "q.html", "id": "use-a.share-1", "style": "pct0"}]
    return changes.snapshot(_numbers(total, share), uses)


def test_snapshot_is_exact_and_lists_every_use():
    snap = _snap(27_781_427_952, Fraction(2, 3))
    assert snap["a.total"]["value"] == "27781427952"
    assert snap["a.share"]["value"] == "2/3"
    assert snap["a.share"]["pages"] == ["p.html", "q.html"]
    assert json.loads(changes.snapshot_json(snap)) == snap


def test_compare_reports_in_the_formats_the_pages_use_and_names_the_claims():
    old, new = _snap(27_781_427_952, Fraction(2, 3)), _snap(26_781_427_952, Fraction(3, 5))
    claims = [{"id": "lessons/x.md:7", "text": "a.share > 1/2", "numbers": ["a.share"]},
              {"id": "lessons/x.md:9", "text": "a.total > 0", "numbers": ["a.total"]}]
    found = {c.name: c for c in changes.compare(old, new, claims=claims)}
    assert set(found) == {"a.total", "a.share"}
    assert found["a.total"].shown == [{"style": "yi", "old": "278 亿", "new": "268 亿"}]
    assert found["a.share"].shown == [{"style": "pct", "old": "66.7%", "new": "60.0%"},
                                      {"style": "pct0", "old": "67%", "new": "60%"}]
    assert found["a.share"].claims == [{"id": "lessons/x.md:7", "text": "a.share > 1/2"}]
    assert found["a.share"].describe() == ("changed a.share: 66.7% -> 60.0%; 67% -> 60% "
                                           "(p.html: 1 place, q.html: 1 place); claims: lessons/x.md:7")


def test_unchanged_display_still_reports_the_exact_values():
    found = changes.compare(_snap(10**9, Fraction(2, 3)), _snap(10**9 + 1, Fraction(2, 3)))
    assert [c.name for c in found] == ["a.total"]
    assert found[0].shown_text() == "10 亿 -> 10 亿 (same as shown; exact 1000000000 -> 1000000001)"


def test_added_and_removed_numbers_and_the_first_build():
    old = _snap(1, Fraction(1, 2))
    new = dict(old)
    del new["a.share"]
    new["b.new"] = {"value": "5", "display": "5", "label": "新", "default_style": "n", "pages": [], "uses": []}
    found = {c.name: c for c in changes.compare(old, new)}
    assert found["a.share"].new is None and found["a.share"].describe().startswith("removed a.share (was 50.0%)")
    assert found["b.new"].old is None and found["b.new"].describe() == "added   b.new = 5 (no page shows it)"
    assert changes.compare(None, new) == []


def test_summary_lines():
    assert changes.summary([], False, claims=3) == ["numbers: no previous numbers.json to compare with (first build)",
                                                   "claims: 3 claims checked, all hold"]
    assert changes.summary([], True) == ["numbers: unchanged since the previous build"]
    found = changes.compare(_snap(1, Fraction(1, 2)), _snap(2, Fraction(1, 2)))
    assert changes.summary(found, True)[0] == "numbers: 1 changed since the previous build (every place: changes.html)"


def test_read_previous_tolerates_a_missing_or_broken_file(tmp_path):
    assert changes.read_previous(tmp_path) is None
    (tmp_path / changes.NUMBERS_FILE).write_text("{not json", encoding="utf-8")
    assert changes.read_previous(tmp_path) is None
    (tmp_path / changes.NUMBERS_FILE).write_text('{"a": {"value": "1"}}', encoding="utf-8")
    assert changes.read_previous(tmp_path) == {"a": {"value": "1"}}
