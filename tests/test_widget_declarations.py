"""The build resolves every reference a lesson package declares (experiments.widget.Lesson / Widget): view, states,
calls, numbers (functions), template (its lesson's templates/, then site/templates/widgets/), script and needs
(its lesson's folder, then site/static/js/). A problem fails
the build with one line naming the package's file and the field; all the problems are reported together and the
previous site is left as it was. In-process: sitegen.widgets' declaration_problems directly, and build.build() on a
small copy of the course (it stops before writing).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from build_fixtures import copy_course
from experiments import lessons
from experiments.widget import Lesson, Widget, WidgetData
from sitegen.errors import BuildError
from sitegen.widgets import declaration_problems

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "experiments.lessons.c4_transformer_block"   # a real package: its modules resolve the good references
FILE = "lessons/c4-transformer-block/__init__.py"
IN_TEMPLATES = "lessons/c4-transformer-block/templates/ or site/templates/widgets/"
IN_SCRIPTS = "lessons/c4-transformer-block/ or site/static/js/"


def lesson(**changes) -> Lesson:
    """One widget as the C4 ledger-total declares it, with `changes` applied."""
    good = dict(name="kit-total", template="ledger_total.html", view="widgets:ledger_total_view",
                defaults={"model": "anchor"}, script="lessons/c4-transformer-block/script.js",
                states="widgets:ledger_total_states",
                calls={"total_view": "widgets:total_view_call"}, needs=("charts.js",))
    return Lesson(widgets=(Widget(**{**good, **changes}),), numbers="numbers:register", package=PACKAGE)


def lines(declared) -> list[str]:
    return [line for error, _ in declaration_problems(declared, ROOT, lessons.course(ROOT)) for line in error.lines()]


def test_the_course_declarations_resolve():
    assert lines(lessons.course(ROOT).lessons) == []
    assert lines([lesson()]) == []


def test_a_misspelt_calls_entry_names_the_package_and_the_field():
    assert lines([lesson(calls={"total_view": "widgets:total_veiw_call"})]) == [
        f"{FILE}: key 'widgets[kit-total].calls.total_view': expected a function total_veiw_call in "
        f"{PACKAGE}.widgets, got 'widgets:total_veiw_call'"]
    assert lines([lesson(calls={"total_view": "widget:total_view_call"})])[0].startswith(
        f"{FILE}: key 'widgets[kit-total].calls.total_view': expected a module {PACKAGE}.widget (")
    assert lines([lesson(calls={"total_view": "total_view_call"})]) == [
        f"{FILE}: key 'widgets[kit-total].calls.total_view': expected \"module:function\" (module relative to the "
        f"lesson package), got 'total_view_call'"]


def test_a_missing_template_or_script_names_the_field():
    assert lines([lesson(template="ledger_totl.html")]) == [
        f"{FILE}: key 'widgets[kit-total].template': expected a file in {IN_TEMPLATES}, got 'ledger_totl.html'"]
    assert lines([lesson(script="scrpt.js")]) == [
        f"{FILE}: key 'widgets[kit-total].script': expected a file in {IN_SCRIPTS}, got 'scrpt.js'"]
    assert lines([lesson(needs=("chart.js",))]) == [
        f"{FILE}: key 'widgets[kit-total].needs': expected a file in {IN_SCRIPTS}, got 'chart.js'"]


def test_view_states_and_numbers():
    bad = Lesson(numbers="numbers:registr", package=PACKAGE,
                 widgets=lesson(view="widgets:ledger_total_veiw", states="widgets:nope").widgets)
    assert lines([bad]) == [
        f"{FILE}: key 'numbers': expected a function registr in {PACKAGE}.numbers, got 'numbers:registr'",
        f"{FILE}: key 'widgets[kit-total].view': expected a function ledger_total_veiw in {PACKAGE}.widgets, "
        f"got 'widgets:ledger_total_veiw'",
        f"{FILE}: key 'widgets[kit-total].states': expected a function nope in {PACKAGE}.widgets, got 'widgets:nope'"]


def test_the_build_fails_with_every_problem_and_leaves_the_site(tmp_path):
    """The three together, through build.build(): one line each, and nothing written."""
    import build
    root = copy_course(tmp_path, fixture_lessons=False)
    out = root / "_site"
    out.mkdir()
    (out / "index.html").write_text("previous", encoding="utf-8")
    bad = lesson(calls={"total_view": "widgets:total_veiw_call"}, template="no_such.html", script="no-such.js")
    with pytest.raises(BuildError) as caught:
        build.build(root, out, lessons=(*lessons.course(root).lessons, bad), steps=[])
    got = [line for line in caught.value.lines() if line.startswith(FILE)]
    assert got == [f"{FILE}: key 'widgets[kit-total].calls.total_view': expected a function total_veiw_call in "
                   f"{PACKAGE}.widgets, got 'widgets:total_veiw_call'",
                   f"{FILE}: key 'widgets[kit-total].template': expected a file in {IN_TEMPLATES}, "
                   f"got 'no_such.html'",
                   f"{FILE}: key 'widgets[kit-total].script': expected a file in {IN_SCRIPTS}, got 'no-such.js'"]
    assert [p.name for p in out.iterdir()] == ["index.html"]
    assert (out / "index.html").read_text(encoding="utf-8") == "previous"


def test_the_view_is_given_its_widget():
    """A view names neither itself nor its widget: data.model(alias) and data.option_error(...) know it."""
    from experiments.errors import CourseError
    w = lesson().widgets[0]
    data = WidgetData({}, {}, w)
    with pytest.raises(CourseError, match=r"^widget kit-total: unknown model 'nope' in option 'model'"):
        data.model("nope")
    with pytest.raises(CourseError, match=r"^widget kit-total: unknown model 'nope' in option 'compare'"):
        data.model("nope", key="compare")
    with pytest.raises(CourseError, match=r"^widget kit-total: unknown model 'nope' in option 'compare'"):
        data.model("kit-total", "nope", "compare")   # (the older form, which repeats the name, still works)
    assert str(data.option_error("T", "one of 1, 2", 3)) == "widget kit-total: option 'T': expected one of 1, 2, got 3"
    import re
    names = "|".join(re.escape(n) for n in lessons.widgets())
    repeats = re.compile(rf'(?:OptionError|model|_scalar)\(\s*"(?:{names})"')
    for w in lessons.widgets().values():
        for ref in (w.view, w.states):
            if ref:
                source = Path(w.resolve(ref).__code__.co_filename).read_text(encoding="utf-8")
                assert not repeats.findall(source), f"{ref} repeats a widget's name: {repeats.findall(source)}"
