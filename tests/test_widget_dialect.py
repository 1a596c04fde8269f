"""One widget dialect (static checks over site/static/js/*.js, each lesson's lessons/<id>/script.js and the templates'
inline scripts).

widgets.js is the one place that fills a widget's markup from an answer (fill / make / rows, driven by data-f,
data-attr, data-fmt, data-if, data-each and <template>s), keeps controls in the URL (bind), picks a model named in
the URL (pickAlias) and turns a Python error into the learner's Chinese line (learnerMessage, inside call and
latest). A lesson's script uses those through window.courseWidgets and defines no helper of that kind of its own;
it builds no rows node by node (a row is a clone of the template the build wrote). No production script selects
by data-testid: those attributes are test hooks only.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments import lessons
from experiments.widget import CORE_SCRIPT
from sitegen.scripts import part_path

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "site" / "static" / "js"
TEMPLATES = ROOT / "site" / "templates"

# helpers of the kinds widgets.js provides, by the names the lesson scripts gave their copies
HELPERS = {"fill", "make", "list", "refill", "rows", "each", "walk", "put", "bind", "persist", "wire",
           "pickAlias", "pick", "learnerMessage", "message", "ask", "errorText"}
DEFINED = re.compile(r"\bfunction\s+(\w+)\s*\("
                     r"|\b(?:const|let|var)\s+(\w+)\s*=\s*(?:function\b|\([^)]*\)\s*=>|\w+\s*=>)")
WALKER_ATTRIBUTES = re.compile(r"data-(?:f|k|each|list|attr|fmt|if)\b|dataset\.(?:f|k|each|list|attr|fmt|if)\b")
ROW_BY_HAND = re.compile(r"""(?:\bel|createElement)\(\s*["'](?:tr|td|th|li)["']""")
EXCEPTION_NAME = re.compile(r"Error\|Exception|Exception\|Error")   # a copy of learnerMessage's class-name regex
# selecting by it
TESTID = re.compile(r"""\[data-testid|dataset\.testid|getAttribute\(\s*["']data-testid""", re.IGNORECASE)


def lesson_scripts() -> list[Path]:
    """Every widget script a lesson package declares, and every lesson's script.js (all but the shared core)."""
    declared = {part_path(ROOT, w.script) for w in lessons.course(ROOT).widgets().values() if w.script}
    return sorted((declared | set((ROOT / "lessons").glob("*/script.js"))) - {JS / CORE_SCRIPT})


def script_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def code(path: Path) -> str:
    """The file without its comments (a comment may name what the code no longer does)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r"(?m)^\s*//.*$|\s//\s.*$", "", text)


def test_there_are_lesson_scripts():
    assert {script_id(p) for p in lesson_scripts()} >= {
        "lessons/c4-transformer-block/script.js", "lessons/c11-moe-linear-attention/script.js",
        "lessons/c4-ffn-deep-read/script.js", "site/static/js/code-cell.js"}


@pytest.mark.parametrize("path", lesson_scripts(), ids=script_id)
def test_a_lesson_script_defines_no_helper_of_its_own(path):
    text = code(path)
    defined = {a or b for a, b in DEFINED.findall(text)}
    assert not defined & HELPERS, f"{script_id(path)} defines {sorted(defined & HELPERS)}: use window.courseWidgets'"
    assert not WALKER_ATTRIBUTES.findall(text), f"{script_id(path)} reads the walker's attributes itself"
    assert not ROW_BY_HAND.findall(text), f"{script_id(path)} builds rows node by node: clone the template (rows())"
    assert not EXCEPTION_NAME.findall(text), f"{script_id(path)} strips exception names itself: call() already does"


def inline_scripts(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return "\n".join(re.findall(r"<script\b(?![^>]*\bsrc=)[^>]*>(.*?)</script>", text, re.DOTALL))


def test_no_production_script_selects_by_testid():
    scripts = sorted(JS.glob("*.js")) + sorted((ROOT / "sitegen").glob("*.js")) + sorted(ROOT.glob("lessons/*/*.js"))
    assert len(scripts) > 10
    bad = [script_id(p) for p in scripts if TESTID.search(code(p))]
    templates = sorted(TEMPLATES.rglob("*.html")) + sorted(ROOT.glob("lessons/*/templates/*.html"))
    bad += [p.relative_to(ROOT).as_posix() for p in templates
            if TESTID.search(inline_scripts(p))]
    assert not bad, f"selects by data-testid (a test hook, not an API): {bad}"


def test_the_walker_is_public():
    core = code(JS / CORE_SCRIPT)
    exported = re.search(r"window\.courseWidgets = \{(.*?)\};", core, re.DOTALL).group(1)
    for name in ("mount", "call", "latest", "setState", "getState", "whenReady", "showError", "models", "el",
                 "fill", "make", "rows", "bind", "declare", "model", "pickAlias"):
        assert re.search(rf"\b{name}: {name}\b", exported), name


def test_the_checks_catch_the_old_dialects():
    """The patterns above find what the lesson scripts used to do (so the checks can fail)."""
    old_c4 = "function refill(node, data) { mine('[data-list]').forEach((n) => list(n, data[n.dataset.list])); }"
    old_c11 = 'function fill(root, x) { root.querySelectorAll("[data-k]").forEach((n) => {}); }'
    old_extra = ("const put = (root, values) => 0;"
                 " function q(root, t) { return root.querySelector('[data-testid=\"' + t + '\"]'); }")
    old_rows = 'W.el("tr", { class: "row" }, [W.el("td", { text: r.label })])'
    old_message = 'e.message.replace(/^[A-Za-z_.]*(Error|Exception): /, "")'
    assert {a or b for a, b in DEFINED.findall(old_c4 + old_c11 + old_extra)} >= {"refill", "fill", "put"}
    assert WALKER_ATTRIBUTES.findall(old_c4) and WALKER_ATTRIBUTES.findall(old_c11)
    assert TESTID.search(old_extra) and ROW_BY_HAND.findall(old_rows) and EXCEPTION_NAME.findall(old_message)
