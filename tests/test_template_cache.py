"""Compiled templates kept by source (sitegen/template_cache.py): the same template in another copy of the course is
not compiled again, an edited one is, and options that change the compiled code keep their own."""
from __future__ import annotations

import jinja2

from sitegen.template_cache import SourceKeyedBytecodeCache

TEMPLATE = "{% for x in xs %}\n  <b>{{ x }}</b>\n{% endfor %}\n"


def _env(folder, cache, **options) -> tuple[jinja2.Environment, list[str]]:
    compiled: list[str] = []
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=True, bytecode_cache=cache,
                             **options)
    compile_source = env.compile

    def counting(source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(name)
        return compile_source(source, name, filename, raw, defer_init)
    env.compile = counting   # type: ignore[method-assign]
    return env, compiled


def test_a_copy_reads_the_compiled_template_and_an_edit_compiles_again(tmp_path):
    cache = SourceKeyedBytecodeCache()
    for copy in ("a", "b", "c"):
        (tmp_path / copy).mkdir()
        (tmp_path / copy / "t.html").write_text(TEMPLATE, encoding="utf-8")
    first, first_compiled = _env(tmp_path / "a", cache, trim_blocks=True)
    assert first.get_template("t.html").render(xs=["<1>", 2]) == "  <b>&lt;1&gt;</b>\n  <b>2</b>\n"
    second, second_compiled = _env(tmp_path / "b", cache, trim_blocks=True)
    assert second.get_template("t.html").render(xs=["<1>", 2]) == "  <b>&lt;1&gt;</b>\n  <b>2</b>\n"
    assert (first_compiled, second_compiled) == (["t.html"], [])

    untrimmed, untrimmed_compiled = _env(tmp_path / "c", cache)   # another option: its own compiled code
    assert untrimmed.get_template("t.html").render(xs=[1]) == "\n  <b>1</b>\n"
    assert untrimmed_compiled == ["t.html"]

    (tmp_path / "b" / "t.html").write_text(TEMPLATE.replace("<b>", "<i>").replace("</b>", "</i>"), encoding="utf-8")
    edited, edited_compiled = _env(tmp_path / "b", cache, trim_blocks=True)
    assert edited.get_template("t.html").render(xs=[3]) == "  <i>3</i>\n"
    assert edited_compiled == ["t.html"]
