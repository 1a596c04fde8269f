"""Lesson C1's page logic and numbers under CPython: the widget's first state (drawn by the build from stored
merges) equals what the page's trainer computes on the course text; the readouts equal an independent encoding;
every bad input is refused with one Chinese line; the vocabulary table covers every model; the tokenizer numbers are
the stored counts' quotients.
"""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.lessons.c1_tokenization import BPE_DEFAULTS, live, widgets
from experiments.train import bpe

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "data" / "texts" / "sishu.txt").read_text(encoding="utf-8")
STATS = json.loads((ROOT / "data" / "tokenizer_stats.json").read_text(encoding="utf-8"))


def run_to(k: int, text: str = TEXT, scheme: str = "gpt2") -> int:
    """A page session trained to k merges, as the page's worker drives it (start, then steps until done)."""
    sid = live.start(text, scheme, str(k))["session"]
    while not live.step(sid)["done"]:
        pass
    return sid


def test_stored_first_merges_are_the_pages():
    sid = run_to(len(STATS["widget"]["merges"]))
    made = live.learned_merges(sid)
    assert [[m.left, m.right, m.count] for m in made] == STATS["widget"]["merges"]
    assert STATS["widget"]["chars"] == len(TEXT) and STATS["widget"]["bytes"] == len(TEXT.encode("utf-8"))


def test_first_state_equals_the_live_one():
    k, sentence = BPE_DEFAULTS["merges"], BPE_DEFAULTS["sentence"]
    merges = live.merges_from(STATS["widget"]["merges"])
    built = live.state(merges, STATS["widget"]["chars"], STATS["widget"]["bytes"], k, sentence, "gpt2")
    sid = run_to(k)
    shown = live.show(sid, str(k), sentence)
    assert {key: shown[key] for key in built} == built
    assert shown["learned"] == k and not shown["exhausted"]


@pytest.mark.parametrize("k", [0, 1, 37, 200])
def test_readouts_equal_an_encoding(k):
    """Tokens on the training text (bytes less the merges' counts) = the encoded text's length; the sentence's
    pieces join back to the sentence."""
    tok = bpe.train(TEXT, k, "gpt2")
    merges = live.merges_from(STATS["widget"]["merges"])
    sentence = "子曰：“学而时习之。” Hello, world!\n第二行"
    x = live.state(merges, len(TEXT), len(TEXT.encode("utf-8")), k, sentence, "gpt2")
    assert x["tokens"] == f"{len(tok.encode(TEXT)):,}"
    assert x["vocab"] == f"{256 + k:,}" and x["s_tokens"] == f"{len(tok.encode(sentence)):,}"
    ids = tok.encode(sentence)
    assert [p["title"] for p in x["pieces"]] == [f"编号 {t}，{len(tok.vocab[t])} 个字节" for t in ids]
    assert len(x["merges"]) == min(k, live.SHOWN_MERGES)


def test_slider_back_and_forth_needs_no_retraining():
    sid = run_to(40)
    small = live.show(sid, "10", "学而时习之")
    assert small["k"] == 10 and live.show(sid, "40", "学而时习之")["k"] == 40
    assert live.retarget(sid, "60") == {"learned": 40, "done": False}
    while not live.step(sid)["done"]:
        pass
    assert live.show(sid, "60", "学而时习之")["learned"] == 60


def test_runs_out_of_pairs():
    sid = run_to(10, "abab abab", "none")
    x = live.show(sid, "10", "ab")
    assert x["learned"] == x["k"] < 10 and x["exhausted"]


@pytest.mark.parametrize(("call", "words"), [
    (lambda: live.start("", "gpt2", "10"), "训练文本是空的"),
    (lambda: live.start("字" * (bpe.MAX_TEXT_BYTES // 3 + 1), "gpt2", "10"), "最多接受"),
    (lambda: live.start("学而\ud800时习", "gpt2", "10"), "代理码位"),
    (lambda: live.start("学而", "gpt2", str(bpe.MAX_MERGES + 1)), "合并次数应为 0 到 4,096"),
    (lambda: live.start("学而", "gpt2", "-1"), "合并次数应为"),
    (lambda: live.start("学而", "gpt2", "十"), "合并次数应为"),
    (lambda: live.start("学而", "bert", "10"), "没有这种预切分方式"),
    (lambda: live.show(run_to(2, "学而学而"), "2", ""), "句子是空的"),
    (lambda: live.show(run_to(2, "学而学而"), "2", "字" * (live.MAX_SENTENCE + 1)), "句子最长"),
    (lambda: live.show(run_to(2, "学而学而"), "2", "\udfff"), "代理码位"),
    (lambda: live.retarget(run_to(2, "学而学而"), "99999"), "合并次数应为"),
    (lambda: live.step(10 ** 6), "重新开始"),
])
def test_bad_input_is_one_chinese_line(call, words):
    with pytest.raises(ValueError) as err:
        call()
    assert words in str(err.value) and "\n" not in str(err.value)


def test_token_text():
    assert live.token_text(b" a\n") == "␣a⏎"
    assert live.token_text("学".encode()[:2]) == "‹E5\u00a0AD›"
    assert live.token_text(b"\x00") == "U+0000"


def test_vocab_table_has_every_model(course):
    from experiments.widget import WidgetData
    reg, per_model = course
    rows = widgets.vocab_view({}, WidgetData(per_model, {}))["rows"]
    assert len(rows) == len(per_model) == reg.numbers["c1.models"].value
    gpt2 = next(r for r in rows if r["name"] == per_model["gpt2"].name)
    assert gpt2["tied"] == "是" and gpt2["V"] == "50,257" and gpt2["m64"] == "否"
    assert sum(r["tied"] == "是" for r in rows) == reg.numbers["c1.tied_models"].value


def test_tokenizer_numbers_are_the_stored_quotients(course):
    reg, _ = course
    nums = reg.numbers
    for t in STATS["tokenizers"]:
        for s, tokens in t["tokens"].items():
            assert nums[f"c1.tok.{t['key']}.cpt.{s}"].value == Fraction(STATS["samples"][s]["chars"], tokens)
            assert nums[f"c1.tok.{t['key']}.bpt.{s}"].value == Fraction(STATS["samples"][s]["bytes"], tokens)
        assert nums[f"c1.tok.{t['key']}.entries"].value == t["entries"]
    assert nums["c1.bpe.after_first"].value == len(TEXT.encode("utf-8")) - STATS["widget"]["merges"][0][2]
    first = bpe.train(TEXT, 1, "gpt2")
    assert nums["c1.bpe.after_first"].value == len(first.encode(TEXT))


def test_real_table_rows():
    from experiments.widget import WidgetData
    view = widgets.real_view({}, WidgetData({}, {"tokenizer_stats": STATS}))
    assert [r["name"] for r in view["rows"][:-1]] == [t["name"] for t in STATS["tokenizers"]]
    qwen = view["rows"][0]
    t = STATS["tokenizers"][0]
    assert qwen["r"]["classical"]["cpt"] == f"{STATS['samples']['classical']['chars'] / t['tokens']['classical']:.2f}"


@pytest.fixture(scope="module")
def course():
    """The course's numbers as the build registers them (generic, shared, this lesson's)."""
    from experiments.course_numbers import generic_numbers, register_shared
    from experiments.lessons.c1_tokenization import numbers as N
    from sitegen.models import load_models
    data = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "data").glob("*.json")}
    reg, per_model = generic_numbers(load_models(ROOT / "data" / "models"), data["course"],
                                     data.get("reference_counts"), data.get("citations"), True)
    register_shared(reg, per_model)
    N.register(reg, per_model, data["course"], data=data)
    return reg, per_model
