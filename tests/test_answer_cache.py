"""The widget answers' cache (sitegen/answer_cache.py): an answer is read back only while the Python that computes it
and its arguments are unchanged, and a build that reads it writes the same page as one that computes everything.

The cache itself, on a made-up code folder: a second build hits what the first computed; a change of the
arguments, of a byte of the code, or a new module in its folder misses; "off" computes every time; an entry that
does not read back as JSON is computed again; pruning removes the least recently used. Then a real build (the
fixture course with C3's KV-cache widget, answered for every model the course has) in this process, three times into
one cache folder: computed, read back (the same pages byte for byte, and the same as a build with no cache), and
after an edit of the lesson's Python that changes its answers: computed again, and the page shows the new answer.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from build_fixtures import copy_course
from sitegen.answer_cache import ENV, AnswerCache, default_folder
from sitegen.widgets import read_precomputed


def _counting():
    calls = []

    def compute(value):
        calls.append(value)
        return json.dumps({"value": value})
    return calls, compute


def test_a_second_build_reads_what_the_first_computed(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "calc.py").write_text("ANSWER = 1\n")
    calls, compute = _counting()
    first = AnswerCache(tmp_path / "cache")
    assert first.answer((code,), "f", lambda: [1, {"a": 2}], lambda: compute(1)) == {"value": 1}
    assert (first.hits, first.misses) == (0, 1)
    second = AnswerCache(tmp_path / "cache")
    assert second.answer((code,), "f", lambda: [1, {"a": 2}], lambda: compute(99)) == {"value": 1}
    assert (second.hits, second.misses) == (1, 0) and calls == [1]


def test_other_arguments_or_other_code_miss(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "calc.py").write_text("ANSWER = 1\n")
    calls, compute = _counting()
    AnswerCache(tmp_path / "cache").answer((code,), "f", lambda: [1], lambda: compute("first"))
    cache = AnswerCache(tmp_path / "cache")
    assert cache.answer((code,), "f", lambda: [2], lambda: compute("args")) == {"value": "args"}
    assert cache.answer((code,), "g", lambda: [1], lambda: compute("name")) == {"value": "name"}
    (code / "calc.py").write_text("ANSWER = 2\n")
    assert AnswerCache(tmp_path / "cache").answer((code,), "f", lambda: [1], lambda: compute("edit"))["value"] == "edit"
    (code / "more.py").write_text("")
    assert AnswerCache(tmp_path / "cache").answer((code,), "f", lambda: [1], lambda: compute("new"))["value"] == "new"
    assert calls == ["first", "args", "name", "edit", "new"]


def test_off_computes_every_time_and_a_broken_entry_is_computed_again(tmp_path, monkeypatch):
    code = tmp_path / "code"
    code.mkdir()
    calls, compute = _counting()
    off = AnswerCache(None)
    off.answer((code,), "f", lambda: [], lambda: compute(1))
    off.answer((code,), "f", lambda: [], lambda: compute(2))
    assert calls == [1, 2] and not (tmp_path / "cache").exists()
    monkeypatch.setenv(ENV, "off")
    assert default_folder(tmp_path) is None
    monkeypatch.setenv(ENV, str(tmp_path / "elsewhere"))
    assert default_folder(tmp_path) == tmp_path / "elsewhere"
    monkeypatch.delenv(ENV)
    assert default_folder(tmp_path) == tmp_path / ".cache" / "answers"

    cache = AnswerCache(tmp_path / "cache")
    cache.answer((code,), "f", lambda: [], lambda: compute(3))
    [entry] = (tmp_path / "cache").glob("*/*.json")
    entry.write_text('{"value": ')   # cut short
    again = AnswerCache(tmp_path / "cache")
    assert again.answer((code,), "f", lambda: [], lambda: compute(4)) == {"value": 4} and again.misses == 1
    assert json.loads(entry.read_text()) == {"value": 4}


def test_pruning_keeps_the_most_recently_used(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    cache = AnswerCache(tmp_path / "cache")
    for i in range(10):
        cache.answer((code,), "f", lambda i=i: [i], lambda i=i: json.dumps("x" * 100 + str(i)))
    entries = sorted((tmp_path / "cache").glob("*/*.json"))
    for age, path in enumerate(entries):   # the first written is the least recently used
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    size = sum(p.stat().st_size for p in entries)
    AnswerCache(tmp_path / "cache").prune(limit=size - 1)   # a build that stored nothing leaves it as it is
    assert sorted((tmp_path / "cache").glob("*/*.json")) == entries
    cache.prune(limit=size - 1)
    left = sorted((tmp_path / "cache").glob("*/*.json"))
    assert 0 < len(left) < len(entries) and sum(p.stat().st_size for p in left) <= (size - 1) // 2
    assert left == entries[len(entries) - len(left):]   # the newest kept
    cache.prune(limit=size)   # under the limit: nothing removed
    assert sorted((tmp_path / "cache").glob("*/*.json")) == left


def _answers(html: str) -> dict:
    found = re.findall(r'<script type="application/gzip\+base64" class="precomputed"[^>]*>([^<]*)</script>', html)
    return {k: v for text in found for k, v in read_precomputed(text).items()}


def _course_with_kv(tmp: Path) -> Path:
    """The fixture course, its first lesson showing C3's KV-cache widget (answers computed by its Python)."""
    root = copy_course(tmp / "course")
    lesson = root / "lessons" / "c4-fixture" / "lesson.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\n```{widget} c3-kv\n```\n", encoding="utf-8")
    return root


def test_a_build_reading_the_cache_writes_the_same_page_and_an_edit_is_computed_again(tmp_path):
    import build
    root = _course_with_kv(tmp_path)
    cache = tmp_path / "cache"

    def pages(out: str, folder) -> tuple[dict, AnswerCache]:
        site = build.build(root, tmp_path / out, steps=[], cache=folder)
        return dict(site.pages), site.answers

    computed, first = pages("computed", cache)
    answers = _answers(computed["c4-fixture.html"])
    assert answers and first.misses == len(answers) and first.hits == 0
    read, second = pages("read", cache)
    assert (second.hits, second.misses) == (len(answers), 0)
    assert read == computed
    uncached, none = pages("uncached", False)
    assert uncached == computed and (none.hits, none.misses) == (0, 0)

    calc = root / "lessons" / "c3-attention" / "calc.py"
    source = calc.read_text(encoding="utf-8")
    assert source.count('"context": n(T)') == 1
    calc.write_text(source.replace('"context": n(T)', '"context": n(T) + " 个"'), encoding="utf-8")
    edited, third = pages("edited", cache)
    assert (third.hits, third.misses) == (0, len(answers))
    contexts = [answer["context"] for answer in _answers(edited["c4-fixture.html"]).values()]
    assert len(contexts) == len(answers) and all(c.endswith(" 个") for c in contexts)


def test_build_py_has_a_no_cache_switch(tmp_path, monkeypatch, capsys):
    import build
    root = _course_with_kv(tmp_path)
    monkeypatch.setenv(ENV, str(tmp_path / "cache"))
    assert build.main(["--root", str(root), "--out", str(tmp_path / "site"), "--no-cache"]) == 0
    assert "built " in capsys.readouterr().out and not (tmp_path / "cache").exists()
    assert build.main(["--root", str(root), "--out", str(tmp_path / "site")]) == 0
    assert list((tmp_path / "cache").glob("*/*.json"))


def test_a_call_is_keyed_by_its_model_config_and_data_part_not_by_their_names():
    """The same alias with another config, or the same data path holding other values, is another key (a build
    whose config changed never reads the old config's answer); the same content under the same name, the same key."""
    from types import SimpleNamespace

    from experiments.widget import WidgetData
    from sitegen.widgets import _keyed

    def key(config, runs):
        data = WidgetData({"m": SimpleNamespace(doc={"config": config})}, {"runs": {"race": runs}})
        return json.dumps(_keyed(["x", {"$model": "m"}, {"$data": "runs/race"}], data, AnswerCache(None)))
    base = key({"hidden_size": 8}, [1, 2])
    assert key({"hidden_size": 8}, [1, 2]) == base
    assert key({"hidden_size": 16}, [1, 2]) != base
    assert key({"hidden_size": 8}, [1, 3]) != base
    assert '"$model": "m"' in base and '"hidden_size"' not in base
