"""The build takes everything from the root it is given (issue #47 part 6): a lesson's Python, its templates, its
Markdown, its script and the data are read from that root, and nothing is kept from one build to the next but what
is keyed by the content it came from (the widget answers, the numbers). So one process builds a modified copy of
the course and then the course itself, and each site is its own.

In a temporary copy of the course, lesson C9's numbers.py registers one more number, its Markdown cites it, one of
its widget templates and its script gain a line each; the copy is built in this process (build.main, as
`python build.py --root COPY` would), then the course itself, and then the copy again.
"""
from __future__ import annotations

import json

from build_fixtures import REPO, copy_course, run_build

LESSON = "lessons/c9-training-memory"
PROBE_NUMBER = "c9.copy_probe"
PROBE_VALUE = 4242                  # (shown as 4,242)
PROBE_TEMPLATE = "副本里的模板"
PROBE_SCRIPT = "courseCopyProbe"


def _append(path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _modified_copy(tmp_path):
    root = copy_course(tmp_path, fixture_lessons=False)
    _append(root / LESSON / "numbers.py", f'''

_register = register


def register(reg, models, course=None, data=None) -> None:   # (the copy's one more number)
    _register(reg, models, course=course, data=data)
    reg.add("{PROBE_NUMBER}", "副本里多出的一个数", value={PROBE_VALUE}, sources=("测试",))
''')
    _append(root / LESSON / "lesson.md", f"\n副本里多出的一个数：{{n}}`{PROBE_NUMBER}`。\n")
    _append(root / LESSON / "templates" / "c9_korthikanti.html", f'<p class="copy-probe" hidden>{PROBE_TEMPLATE}</p>\n')
    _append(root / LESSON / "script.js", f"\nwindow.{PROBE_SCRIPT} = 1;\n")
    return root


def _site(result) -> tuple[str, str, dict]:
    """(the C9 page, its script file, numbers.json) of a build."""
    assert result.returncode == 0, result.stderr
    page = (result.out / "c9-training-memory.html").read_text(encoding="utf-8")
    (script,) = [s for s in page.split('"') if s.startswith("static/js/page-")]
    numbers = json.loads((result.out / "numbers.json").read_text(encoding="utf-8"))
    return page, (result.out / script).read_text(encoding="utf-8"), numbers


def _has_probes(page: str, script: str, numbers: dict) -> list[bool]:
    return [PROBE_NUMBER in json.dumps(numbers), "4,242" in page, PROBE_TEMPLATE in page, PROBE_SCRIPT in script]


def test_a_modified_copy_and_the_course_build_in_one_process(tmp_path):
    copy = _modified_copy(tmp_path / "copy")
    first = _site(run_build(copy, runtime=False))
    assert _has_probes(*first) == [True, True, True, True]       # the copy's Python, Markdown, template, script
    course = _site(run_build(REPO, tmp_path / "course-site", runtime=False))
    assert _has_probes(*course) == [False, False, False, False]  # the course's own, nothing of the copy's
    again = _site(run_build(copy, tmp_path / "copy-again", runtime=False))
    assert _has_probes(*again) == [True, True, True, True]
    assert again[0] == first[0]


def test_a_lesson_folder_still_being_written_is_left_out_until_it_has_its_lesson_md(tmp_path):
    """A folder without lesson.md, its chapter not written, whose Python does not import yet or whose declarations
    do not resolve yet, is left out of the build without a word; with its lesson.md, the same problems fail it."""
    root = copy_course(tmp_path)
    broken = root / "lessons" / "c77-draft"
    broken.mkdir()
    (broken / "__init__.py").write_text("from .not_written_yet import LESSON\n", encoding="utf-8")
    unresolved = root / "lessons" / "c78-draft"
    unresolved.mkdir()
    (unresolved / "__init__.py").write_text(
        "from ...widget import Lesson, Widget\n"
        'LESSON = Lesson(numbers="numbers:register", widgets=(Widget("c78-w", "c78_w.html", "views:view"),))\n',
        encoding="utf-8")
    result = run_build(root, runtime=False)
    assert result.returncode == 0, result.stderr
    assert "c77" not in result.stderr + result.stdout and "c78" not in result.stderr + result.stdout
    (broken / "lesson.md").write_text("---\ntitle: 草稿\nchapter: C77\n---\n\n## 一\n\n正文。\n", encoding="utf-8")
    (unresolved / "lesson.md").write_text("---\ntitle: 草稿\nchapter: C78\n---\n\n## 一\n\n正文。\n", encoding="utf-8")
    failed = run_build(root, runtime=False)
    assert failed.returncode == 1
    lines = failed.stderr.splitlines()
    assert any(line.startswith("lessons/c77-draft/__init__.py: the lesson's Python does not import (ModuleNotFound"
                               "Error") for line in lines), failed.stderr
    assert any(line.startswith("lessons/c78-draft/__init__.py: key 'numbers': expected a module "
                               "experiments.lessons.c78_draft.numbers") for line in lines), failed.stderr
    assert any(line.startswith("lessons/c78-draft/__init__.py: key 'widgets[c78-w].template'") for line in lines)


def test_a_rebuild_reuses_the_numbers_only_while_every_input_is_the_same(tmp_path):
    """The numbers of a build are reused by the next build in the process (build.py _NUMBERS) when the Python
    source, models and data documents are byte for byte the same, whatever the folder: two copies share them. A
    cited figure changed in data/citations.json, or a lesson's numbers.py changed, computes them again, and the
    changed value is the one the new build has."""
    import build
    first = build.build(copy_course(tmp_path / "a"), tmp_path / "a-site", steps=[])
    copy = copy_course(tmp_path / "b")
    second = build.build(copy, tmp_path / "b-site", steps=[])
    assert second.numbers == first.numbers
    assert all(second.numbers[k] is first.numbers[k] for k in first.numbers)   # shared, not recomputed

    citations = copy / "data" / "citations.json"
    cited = json.loads(citations.read_text(encoding="utf-8"))
    cited["vaswani_d_model"]["value"] = 513
    citations.write_text(json.dumps(cited, ensure_ascii=False), encoding="utf-8")
    third = build.build(copy, tmp_path / "c-site", steps=[])
    assert third.numbers["cited.vaswani_d_model"].value == 513 != first.numbers["cited.vaswani_d_model"].value

    _append(copy / LESSON / "numbers.py", "\n# an edit that changes no number still computes them again\n")
    fourth = build.build(copy, tmp_path / "d-site", steps=[])
    assert fourth.numbers["cited.vaswani_d_model"].value == 513
    assert fourth.numbers["cited.vaswani_d_model"] is not third.numbers["cited.vaswani_d_model"]
