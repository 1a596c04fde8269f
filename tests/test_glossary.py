"""One name for one device: data/glossary.json is the course's list of the devices it names in several places, each
with the one name a learner reads, a one-line gloss and the other names it must not use; and no learner sees a raw
Python dict or a transformers tensor name (layers.0.self_attn.o_proj.weight) without its Chinese.

- Every text a learner may read is searched for a glossary entry's other names: the lessons' Markdown (prose, tables,
  code cells), the widget templates, the Chinese string literals of the scripts (site/static/js) and of the Python
  that words what a page shows (experiments/, sitegen/; docstrings and comments are for maintainers and are left
  out), and the Chinese strings of data/*.json. The entry's own name, and "name（English）" on a first use, are
  allowed.
- Every lesson's code cell is run as its default source in CPython (the code the page offers, run as the page's
  worker runs it: the repository's experiments package importable) and what it prints may hold neither a dict
  literal nor a dotted tensor name.
- Every page of a real build (tests/build_fixtures.py: repo_site) is read as a learner reads it (test_language's
  visible text: no code, scripts or templates) for the same two things.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_language import CJK, visible_runs

REPO = Path(__file__).resolve().parent.parent
GLOSSARY = json.loads((REPO / "data" / "glossary.json").read_text(encoding="utf-8"))["terms"]
# a Python dict as repr() or json.dumps() prints it: an opening brace, then a quoted key and a colon
DICT_LITERAL = re.compile(r"""\{\s*['"][^'"]*['"]\s*:""")
# a checkpoint tensor's name: dotted parts ending in weight / bias (embed_tokens.weight, layers.0.mlp.up_proj.weight)
TENSOR_NAME = re.compile(r"\b[a-z_]+(?:\.[a-z0-9_]+)*\.(?:weight|bias)\b")
JS_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`""")
CELL_TIMEOUT_S = 120


# -- where a learner reads names --------------------------------------------------------------------------------
def _python_strings(path: Path):
    """(line, text) of each string literal with Chinese in it, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and CJK.search(node.value)):
            yield node.lineno, node.value


def _json_strings(doc, line=None):
    if isinstance(doc, str):
        if CJK.search(doc):
            yield line, doc
    elif isinstance(doc, dict):
        for v in doc.values():
            yield from _json_strings(v, line)
    elif isinstance(doc, list):
        for v in doc:
            yield from _json_strings(v, line)


def _lines(text: str):
    yield from enumerate(text.splitlines(), 1)


def learner_texts(root: Path = REPO):
    """(file, line, text) of everything the course may show a learner, as written in the repository."""
    for path in sorted((root / "lessons").glob("*/lesson.md")):
        for i, line in _lines(path.read_text(encoding="utf-8")):
            yield path, i, line
    for path in sorted((root / "site" / "templates").rglob("*.html")) + sorted(root.glob("lessons/*/templates/*.html")):
        for i, line in _lines(path.read_text(encoding="utf-8")):
            yield path, i, line
    for path in sorted((root / "site" / "static" / "js").glob("*.js")) + sorted(root.glob("lessons/*/script.js")):
        for i, line in _lines(path.read_text(encoding="utf-8")):
            for m in JS_STRING.finditer(line):
                if CJK.search(m.group()):
                    yield path, i, m.group()
    for folder in ("experiments", "sitegen", "lessons"):
        for path in sorted(p for p in (root / folder).rglob("*.py") if not p.name.startswith("test_")):
            for i, text in _python_strings(path):
                yield path, i, text
    for path in sorted((root / "data").glob("*.json")):
        if path.name != "glossary.json" and not path.name.startswith("train_"):
            for i, text in _json_strings(json.loads(path.read_text(encoding="utf-8"))):
                yield path, i, text


def other_names(text: str, terms=GLOSSARY) -> list[tuple[str, str]]:
    """(other name, the glossary's name) for each glossary entry's other name in `text`."""
    found = []
    for t in terms:
        text = text.replace("{term}`" + t.get("id", "") + "`", t["name"])   # a lesson's role for the name
    for t in terms:
        own = re.sub(re.escape(t["name"]) + r"[\s*]*（" + re.escape(t["en"]), "", text)   # name（English）, first use
        own = own.replace(t["name"], "")
        found += [(v, t["name"]) for v in t["avoid"] if v in own]
    return found


# -- the glossary itself ------------------------------------------------------------------------------------------
def test_glossary_entries_are_whole_and_distinct():
    ids = [t["id"] for t in GLOSSARY]
    names = [t["name"] for t in GLOSSARY]
    assert len(set(ids)) == len(ids) and len(set(names)) == len(names)
    for t in GLOSSARY:
        assert set(t) == {"id", "name", "en", "gloss", "avoid"}, t["id"]
        assert CJK.search(t["gloss"]) and "\n" not in t["gloss"], t["id"]
        assert t["avoid"] and all(v and v != t["name"] for v in t["avoid"]), t["id"]
    # no entry's name is another entry's forbidden name
    assert not [(t["name"], u["id"]) for t in GLOSSARY for u in GLOSSARY if t["name"] in u["avoid"]]


def test_other_names_are_found_and_the_own_name_is_not():
    terms = [{"name": "软封顶", "en": "soft-cap", "avoid": ["soft-cap", "软上限"]},
             {"name": "负载均衡损失", "en": "load-balancing loss", "avoid": ["均衡损失"]}]
    assert other_names("注意力软封顶与 **软封顶**（soft-cap，Gemma 2）", terms) == []
    assert other_names("加一项负载均衡损失", terms) == []
    assert other_names("- **{term}`softcap`**（soft-cap，Gemma 2）", [{"id": "softcap", **terms[0]}]) == []
    assert other_names("Gemma 2 的 soft-cap 和软上限", terms) == [("soft-cap", "软封顶"), ("软上限", "软封顶")]
    assert other_names("只加均衡损失", terms) == [("均衡损失", "负载均衡损失")]


def test_the_search_reads_python_labels_not_docstrings(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "m.py").write_text(
        '"""The soft-cap, 软上限 in a docstring."""\nLABEL = {"cap": "只开软上限"}  # 软上限 in a comment\n',
        encoding="utf-8")
    texts = [(p.name, i, t) for p, i, t in learner_texts(tmp_path)]
    assert texts == [("m.py", 2, "只开软上限")]


def test_one_name_per_device_everywhere():
    problems = [f"{path.relative_to(REPO)}:{line}: {other!r}, the course says {name!r}"
                for path, line, text in learner_texts() for other, name in other_names(text)]
    assert problems == []


# -- what a code cell prints ----------------------------------------------------------------------------------------
def code_cells():
    """(lesson file, line, source) of every code cell's default source."""
    for path in sorted((REPO / "lessons").glob("*/lesson.md")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^```\{widget\} code\n(.*?)^```$", text, flags=re.S | re.M):
            yield path.parent.name, text[:m.start()].count("\n") + 1, yaml.safe_load(m.group(1))["source"]


def raw_shown(text: str) -> list[str]:
    return [m.group() for m in DICT_LITERAL.finditer(text)] + [m.group() for m in TENSOR_NAME.finditer(text)]


def test_raw_shown_finds_dicts_and_tensor_names():
    assert raw_shown("{'placement': 'pre', 'type': 'rmsnorm'}") == ["{'placement':"]
    assert raw_shown('{"experts": 128}') == ['{"experts":']
    assert raw_shown("最大的是 layers.0.self_attn.o_proj.weight 与 embed_tokens.weight") == [
        "layers.0.self_attn.o_proj.weight", "embed_tokens.weight"]
    assert raw_shown("第 1 层注意力的输出投影 o_proj；集合 {1, 2}；c·tanh(x/c)") == []


@pytest.mark.parametrize("lesson,line,source", list(code_cells()), ids=lambda x: str(x)[:40])
def test_code_cell_prints_no_raw_dict_or_tensor_name(lesson, line, source):
    run = subprocess.run([sys.executable, "-c", source], cwd=REPO, capture_output=True, text=True,
                         timeout=CELL_TIMEOUT_S, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, f"{lesson}:{line}: {run.stderr}"
    assert run.stdout.strip() and CJK.search(run.stdout), f"{lesson}:{line} prints no Chinese"
    assert raw_shown(run.stdout) == [], f"{lesson}:{line}"


# -- every built page ---------------------------------------------------------------------------------------------
def test_no_built_page_shows_a_raw_dict_or_tensor_name(repo_site):
    shown = {page.name: raw_shown("\n".join(visible_runs(page.read_text(encoding="utf-8"))))
             for page in sorted(Path(repo_site.out).glob("*.html"))}
    assert "c8-training-stability.html" in shown
    assert {name: raw for name, raw in shown.items() if raw} == {}


def test_no_built_page_uses_another_name(repo_site):
    found = {page.name: other_names("\n".join(visible_runs(page.read_text(encoding="utf-8"))))
             for page in sorted(Path(repo_site.out).glob("*.html"))}
    assert {name: other for name, other in found.items() if other} == {}


# -- the {term} role --------------------------------------------------------------------------------------------------
def test_term_role_shows_the_one_name_with_its_gloss():
    from sitegen.markdown import Page, render_markdown
    page = Page("lessons/x.md", numbers={}, data={"glossary": {"terms": GLOSSARY}})
    _, out = render_markdown("只开{term}`softcap`时\n\n再开{term}`softcapp`\n", page)
    soft = next(t for t in GLOSSARY if t["id"] == "softcap")
    assert f'<span class="term" title="{soft["gloss"]}">软封顶</span>' in out
    assert [(e.line, e.message) for e in page.errors] == [
        (3, "unknown term 'softcapp' in {term}`softcapp`: expected an id in data/glossary.json (did you mean "
            "'softcap'?)")]


# -- tensor names -----------------------------------------------------------------------------------------------------
def test_every_trainer_tensor_has_a_chinese_label():
    """Each tensor the course's trainer has (QK-norm's gains included) is said in Chinese, layer counted from 1,
    with no dotted name left; a part the table does not know raises instead of showing the name."""
    from experiments.labels import tensor_label
    from experiments.train.model import ModelConfig, param_shapes
    names = list(param_shapes(ModelConfig(d_model=32, n_layers=2, n_heads=2, d_ff=64, vocab_size=40, qk_norm=True)))
    labels = [tensor_label(name) for name in names]
    assert len(set(labels)) == len(names) and not [x for x in labels if raw_shown(x) or not CJK.search(x)]
    assert tensor_label("layers.0.self_attn.o_proj.weight") == "第 1 层注意力的输出投影 o_proj"
    assert tensor_label("layers.1.mlp.up_proj.bias") == "第 2 层 FFN 的升维投影 up_proj 的偏置"
    with pytest.raises(KeyError):
        tensor_label("layers.0.self_attn.rotary.weight")


def test_widget_templates_write_the_name_through_the_same_tool():
    """{{ term("id") }} in a widget template is the {term} role's HTML; an unknown id is an error at the widget."""
    from sitegen.markdown import Page, WidgetContext
    from sitegen.widgets import _tools
    page = Page("lessons/x.md", numbers={}, data={"glossary": {"terms": GLOSSARY}})
    term = _tools(WidgetContext("c8-devices", "lessons/x.md", 7, page))["term"]
    clip = next(t for t in GLOSSARY if t["id"] == "qk_clip")
    assert str(term("qk_clip")) == f'<span class="term" title="{clip["gloss"]}">QK-Clip</span>'
    term("qkclip")
    assert [(e.line, e.message.split(":")[0]) for e in page.errors] == [(7, "unknown term 'qkclip' in {term}`qkclip`")]
