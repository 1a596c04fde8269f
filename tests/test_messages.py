"""The learner messages scripts write come from one table, data/messages_zh.json (sitegen/messages.py): no script
holds a Chinese string literal, every key a script uses is in the table with the values its placeholders need (the
build refuses one that is not, at the script's file and line: sitegen/jscheck.py), every key in the table is used,
and every page's script file carries the table ahead of its parts."""
from __future__ import annotations

import re

from build_fixtures import REPO, copy_course, run_build
from sitegen import jscheck, messages, minify
from sitegen.scripts import ScriptBundles

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")   # a message has words (punctuation joining Python's strings is none)


def test_no_script_holds_a_chinese_literal():
    """Minified (comments gone), a script's Chinese could only be in its literals: there is none."""
    found = []
    for rel, path in jscheck.scripts(REPO):
        code = minify.js(path.read_text(encoding="utf-8"))
        found += [f"{rel}: ...{code[max(0, m.start() - 30):m.end() + 30]}..." for m in HAN.finditer(code)][:1]
    # worker.js runs in a worker of its own, which the page's table does not reach (its status texts are shown
    # through runtime-client.js)
    assert [f for f in found if not f.startswith("site/static/js/worker.js")] == []


def test_every_key_used_is_in_the_table_and_every_key_in_the_table_is_used():
    table = messages.load(REPO)
    assert jscheck.message_problems(REPO, table) == []
    namespaces = {key.split(".", 1)[0] for key in table}
    used = {key for _, path in jscheck.scripts(REPO)
            for key in jscheck.message_keys_used(path.read_text(encoding="utf-8"), namespaces)}
    assert sorted(set(table) - used) == []


def test_a_missing_key_and_wrong_values_are_refused_at_the_line(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "messages_zh.json").write_text('{"a.b": "第 {step} 步", "c": "好"}', encoding="utf-8")
    js = tmp_path / "site" / "static" / "js"
    js.mkdir(parents=True)
    (js / "x.js").write_text('const m = W.msg;\nW.msg("a.c");\nW.msg("a.b", { steps: 1 });\n'
                             'W.msg("a.b", { step });\nmsg("c");\nmsg("a.b");\n'
                             'const later = ok ? "a.b" : "a.bb";  // "a.cc" in a comment is no key\n',
                             encoding="utf-8")
    problems = [str(p) for p in jscheck.message_problems(tmp_path, messages.load(tmp_path))]
    assert problems == [
        "site/static/js/x.js:2: message key 'a.c' is not in data/messages_zh.json (did you mean 'a.b'?)",
        "site/static/js/x.js:3: message 'a.b' expects the values {step}, the call gives {steps}",
        "site/static/js/x.js:6: message 'a.b' expects the values {step}, the call gives {}",
        "site/static/js/x.js:7: 'a.bb' names no message of data/messages_zh.json (did you mean 'a.b'?)",
    ]


def test_every_script_file_starts_with_the_table(tmp_path):
    js = tmp_path / "site" / "static" / "js"
    js.mkdir(parents=True)
    (js / "messages.js").write_text((REPO / "site/static/js/messages.js").read_text(encoding="utf-8"),
                                    encoding="utf-8")
    (js / "a.js").write_text("window.a = window.courseMessages.msg('k', { n: 2 });\n", encoding="utf-8")
    bundles = ScriptBundles(js, {"k": "第 {n} 步"})
    name = bundles(["a.js"])
    text = bundles.files()["static/js/" + name]
    assert ScriptBundles.parts_of(text) == ["a.js"]
    assert text.index("window.courseMessageTable = {\"k\": \"第 {n} 步\"};") < text.index("/* ---- a.js ---- */")


def test_the_build_refuses_a_key_the_table_lacks(tmp_path):
    """A misspelt key in a shared script (the code cells') fails the build at its file and line, with the others;
    so does a misspelt reason of a lesson's disabled control (C15's KV-head field)."""
    root = copy_course(tmp_path)
    script = root / "site" / "static" / "js" / "code-cell.js"
    text = script.read_text(encoding="utf-8")
    assert 'msg("cell.no_output")' in text
    script.write_text(text.replace('msg("cell.no_output")', 'msg("cell.no_outptu")', 1), encoding="utf-8")
    line = text[:text.index('msg("cell.no_output")')].count("\n") + 1
    lesson = root / "lessons" / "c15-architecture-forks" / "script.js"
    reason = 'reason: "c15.what_if.kv_unused"'
    own = lesson.read_text(encoding="utf-8")
    assert reason in own
    lesson.write_text(own.replace(reason, 'reason: "c15.what_if.kv_unsued"', 1), encoding="utf-8")
    reason_line = own[:own.index(reason)].count("\n") + 1
    result = run_build(root, runtime=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert (f"site/static/js/code-cell.js:{line}: message key 'cell.no_outptu' is not in data/messages_zh.json "
            "(did you mean 'cell.no_output'?)") in result.stderr.splitlines()
    assert (f"lessons/c15-architecture-forks/script.js:{reason_line}: the reason 'c15.what_if.kv_unsued' of "
            "disabled.kv (widget 'c15-what-if') is not a key of data/messages_zh.json (did you mean "
            "'c15.what_if.kv_unused'?)") in result.stderr.splitlines()
