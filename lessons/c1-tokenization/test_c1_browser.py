"""Lesson C1's trainer widget in real headless Chromium: the build's first state is on the page before Python; the
page's training worker trains the merges CPython trains, and draws the same split, readouts and merge rows (build ==
browser); the merges slider moves back without retraining and forward by training on; a new sentence is split again;
bad input in every box is one inline Chinese message and the widget keeps working; the shared training panel counts
merges and draws the text's tokens. C1's fair comparison (c1-fair): the stored table, and the page's rerun repeating
the build's first evaluation.

Every wait is on a condition (the widget's data-state and data-merged, a course:updated event), never on time.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import open_lesson, updates, wait_update
from experiments.lessons.c1_tokenization import BPE_DEFAULTS, live

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "data" / "texts" / "sishu.txt").read_text(encoding="utf-8")
STATS = json.loads((ROOT / "data" / "tokenizer_stats.json").read_text(encoding="utf-8"))
PAGE = "c1-tokenization.html"
SEL = ".c1-bpe"
TRAIN_MS = 240_000           # generous: the machine running the tests may be busy


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c1-kn", f"{SEL} .train-start")


def field(page, testid):
    return page.locator(f'{SEL} [data-testid="{testid}"]')


def pieces(page) -> list[list[str]]:
    return page.eval_on_selector_all(f'{SEL} [data-testid="c1-pieces"] > span',
                                     "ss => ss.map(s => [s.textContent, s.title, s.className])")


def merge_rows(page) -> list[list[str]]:
    return page.eval_on_selector_all(f'{SEL} [data-testid="c1-merge-rows"] > tr',
                                     "rs => rs.map(r => Array.from(r.cells, c => c.textContent))")


def expected(k: int, sentence: str, text: str = TEXT) -> dict:
    """What CPython computes after training k merges on a text (the page's entry points, in process)."""
    sid = live.start(text, "gpt2", str(k))["session"]
    while not live.step(sid)["done"]:
        pass
    return live.show(sid, str(k), sentence)


def as_shown(x: dict) -> tuple:
    return ([[p["text"], p["title"], p["cls"]] for p in x["pieces"]],
            [[m["rank"], m["token"], m["parts"], m["count"]] for m in x["merges"]], x["tokens"], x["cpt"], x["bpt"])


def on_page(page) -> tuple:
    text = lambda t: field(page, t).text_content().strip()     # noqa: E731
    return pieces(page), merge_rows(page), text("c1-tokens"), text("c1-cpt"), text("c1-bpt")


def set_merges(page, k, state="done"):
    field(page, "c1-kn").fill(str(k))
    field(page, "c1-kn").dispatch_event("change")
    page.wait_for_function(f"() => document.querySelector('{SEL}').dataset.state === '{state}'"
                           f" && document.querySelector('{SEL}').dataset.merged === '{k}'"
                           f" && !document.querySelector('{SEL}').dataset.busy", timeout=TRAIN_MS)


def error(page) -> str:
    err = page.locator(f"{SEL} .widget-error")
    return err.text_content() if err.is_visible() else ""


def test_first_state_is_the_builds(page):
    merges = live.merges_from(STATS["widget"]["merges"])
    built = live.state(merges, len(TEXT), len(TEXT.encode("utf-8")), BPE_DEFAULTS["merges"],
                       BPE_DEFAULTS["sentence"], "gpt2")
    assert on_page(page) == as_shown(built)
    assert page.locator(SEL).get_attribute("data-state") == "idle"


def test_training_in_the_page_equals_cpython(page):
    set_merges(page, 60)
    assert on_page(page) == as_shown(expected(60, BPE_DEFAULTS["sentence"]))


def test_slider_back_redraws_forward_trains_on(page):
    set_merges(page, 60)
    coarse = pieces(page)
    set_merges(page, 5)                          # fewer merges than learned: drawn at once from those learned
    fine = pieces(page)
    assert len(fine) > len(coarse)               # the split changes: more, smaller tokens
    assert on_page(page) == as_shown(expected(5, BPE_DEFAULTS["sentence"]))
    set_merges(page, 90)                         # more than learned: trains on
    assert on_page(page) == as_shown(expected(90, BPE_DEFAULTS["sentence"]))


def test_own_sentence_is_split_again(page):
    set_merges(page, 90)
    before = updates(page, "c1-bpe")
    field(page, "c1-sentence").fill("君子不器。Hello!")
    wait_update(page, "c1-bpe", before)
    page.wait_for_function(f"() => !document.querySelector('{SEL}').dataset.busy")
    shown = pieces(page)
    assert sum(int(p[1].split("，")[1].split(" ")[0]) for p in shown) == len("君子不器。Hello!".encode())
    assert shown == as_shown(expected(90, "君子不器。Hello!"))[0]


def test_bad_input_is_one_inline_message_and_the_widget_keeps_working(page):
    set_merges(page, 90)
    field(page, "c1-kn").fill("99999")
    field(page, "c1-kn").dispatch_event("change")
    page.wait_for_function(f"() => document.querySelector('{SEL} .widget-error').textContent.includes('合并次数')")
    assert "0 到 4,096 之间的整数" in error(page)
    before = updates(page, "c1-bpe")
    field(page, "c1-sentence").fill("")
    wait_update(page, "c1-bpe", before)
    assert "句子是空的" in error(page)
    field(page, "c1-sentence").fill("学而时习之")
    set_merges(page, 30)
    assert error(page) == "" and pieces(page) == as_shown(expected(30, "学而时习之"))[0]
    page.select_option(f'{SEL} [data-testid="c1-source"]', "own")       # an empty text of one's own
    page.wait_for_function(f"() => document.querySelector('{SEL}').dataset.state === 'error'", timeout=TRAIN_MS)
    assert "训练文本是空的" in error(page)
    page.eval_on_selector(f'{SEL} [data-testid="c1-own"]',
                          "t => { t.value = '学而时习之'.repeat(20000); t.dispatchEvent(new Event('change')); }")
    page.wait_for_function(f"() => document.querySelector('{SEL} .widget-error').textContent.includes('最多')",
                           timeout=TRAIN_MS)
    assert "最多接受" in error(page)
    page.eval_on_selector(f'{SEL} [data-testid="c1-own"]',
                          "t => { t.value = '学而\\ud800时习'; t.dispatchEvent(new Event('change')); }")
    page.wait_for_function(f"() => document.querySelector('{SEL} .widget-error').textContent.includes('代理')",
                           timeout=TRAIN_MS)
    own = "学而时习之，学而时习之。"
    page.eval_on_selector(f'{SEL} [data-testid="c1-own"]',
                          "(t, v) => { t.value = v; t.dispatchEvent(new Event('change')); }", own)
    page.wait_for_function(f"() => document.querySelector('{SEL}').dataset.state === 'done'", timeout=TRAIN_MS)
    x = expected(30, "学而时习之", own)
    assert error(page) == "" and x["learned"] < 30            # the short text runs out of pairs: said, not an error
    assert page.locator(SEL).get_attribute("data-merged") == str(x["k"])
    assert on_page(page) == as_shown(x)
    assert "合并停在" in page.locator(f"{SEL} .train-state").text_content()


def chart_spec(page, widget: str) -> dict:
    return json.loads(page.eval_on_selector(f"{widget} figure.chart script.chart-spec", "n => n.textContent"))


def test_training_panel_counts_merges_and_draws_the_texts_tokens(page):
    """The shared training panel: its step counter counts merges, its speed is in merges per second, and its live
    curve is the training text's tokens after each merge, which on the course text is the build's curve."""
    page.select_option(f'{SEL} [data-testid="c1-source"]', "course")     # a fresh run on the course text
    page.wait_for_function(f"() => document.querySelector('{SEL}').dataset.state === 'done'", timeout=TRAIN_MS)
    field(page, "c1-reset").click()                                       # forget it: the next run starts at 0
    page.wait_for_function(f"() => document.querySelector('{SEL}').dataset.state === 'idle'")
    set_merges(page, 40)
    assert field(page, "c1-step").text_content() == "40"
    assert field(page, "c1-speed").text_content().startswith("每秒合并")
    live, built = chart_spec(page, SEL)["series"]
    assert live["x"] == list(range(1, 41)) and live["y"] == built["y"][1:41]
    counts = [c for _, _, c in STATS["widget"]["merges"][:40]]
    assert built["y"][40] == len(TEXT.encode("utf-8")) - sum(counts)


def test_fair_rerun_repeats_the_builds_first_evaluation(page):
    """c1-fair: the table is the stored group's; 重跑 trains both models in the page, and their first held-out
    evaluation equals the group's seed-0 one (the page's numpy kernels differ from the build's in rounding only)."""
    doc = json.loads((ROOT / "data" / "train_bpe.json").read_text(encoding="utf-8"))
    fair = ".c1-fair"
    cells = page.eval_on_selector_all(f'{fair} [data-testid="c1-fair-bpc"]', "cs => cs.map(c => c.textContent)")
    assert cells == [f"{sum(r['bits_per_char'] for r in doc[k]['runs']) / len(doc[k]['runs']):.3f}"
                     for k in ("char", "bpe")]
    page.click(f'{fair} [data-testid="c1-fair-start"]')
    page.wait_for_function(f"() => document.querySelector('{fair} [data-testid=\"c1-fair-bpe\"]').textContent"
                           " !== '—'", timeout=TRAIN_MS)
    page.click(f'{fair} [data-testid="c1-fair-pause"]')
    page.wait_for_function(f"() => document.querySelector('{fair}').dataset.state === 'paused'", timeout=TRAIN_MS)
    live = chart_spec(page, fair)["series"][:2]
    for kind, series in zip(("char", "bpe"), live):
        step, bits = doc[kind]["runs"][0]["eval"][0]
        assert series["x"][0] == step == doc["eval_every"]
        assert series["y"][0] == pytest.approx(bits, rel=1e-3)
        shown = page.locator(f'{fair} [data-testid="c1-fair-{kind}"]').text_content()
        assert shown == f"{series['y'][-1]:.3f}"
