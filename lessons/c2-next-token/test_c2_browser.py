"""Lesson C2's widget in real headless Chromium: the page speaks before any training (the build's continuation and
distribution); changing the temperature changes the distribution; the browser's Python writes exactly what CPython
writes for the same prompt, settings and seed (build == browser); bad input gives an inline Chinese message or a
stated clamp and the widget keeps working; the live run trains in the training worker and its continuations
change as it learns; C5's live run speaks too.

Every wait is on a condition (a data-state, a count of continuations, a widget's course:updated event), never on
time.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import open_lesson, updates, wait_update
from experiments.lessons.c2_next_token import widgets as C2

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c2-next-token.html"
DOC = json.loads((ROOT / "data" / "train_speaker.json").read_text(encoding="utf-8"))
ROOT_SEL = ".c2-speak"
TRAIN_MS = 240_000           # generous: the machine running the tests may be busy


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c2-prompt", '[data-testid="c2-start"]')


def field(page, testid):
    return page.locator(f'{ROOT_SEL} [data-testid="{testid}"]')


def shown(page, testid) -> str:
    return field(page, testid).text_content().strip()


def bars(page) -> dict:
    spec = json.loads(page.eval_on_selector(f"{ROOT_SEL} figure.chart script.chart-spec", "n => n.textContent"))
    return dict(zip(spec["labels"], spec["values"]))


def set_fields(page, **values):
    """Type each value into its field, commit the last one (one change event: the widget reads every field when
    it answers) and wait for the widget's answer."""
    before = updates(page, "c2-speak")
    for testid, v in values.items():
        field(page, testid).fill(str(v))
    field(page, testid).dispatch_event("change")
    wait_update(page, "c2-speak", before)
    page.wait_for_function("() => !document.querySelector('.c2-speak').dataset.busy")


def test_the_page_speaks_before_training(page):
    built = C2.speak("子曰：“", "1", "0", "1", "0", DOC)
    assert field(page, "c2-text").text_content() == built["prompt"] + built["text"]
    assert "构建时训练好的模型" in shown(page, "c2-who")
    assert bars(page) == dict(zip(built["chart"]["labels"], built["chart"]["values"]))


def test_temperature_changes_the_distribution(page):
    set_fields(page, **{"c2-prompt": "君子", "c2-temp": "1", "c2-topk": "0", "c2-topp": "1", "c2-seed": "0"})
    warm = bars(page)
    set_fields(page, **{"c2-temp": "0.4"})
    cold = bars(page)
    top = max(warm, key=warm.get)
    assert cold[top] > warm[top] and len(cold) <= len(warm)
    set_fields(page, **{"c2-temp": "0"})
    assert shown(page, "c2-candidates") == "1 个字"


def test_build_equals_browser(page):
    """The browser's Python writes, character for character, what CPython writes with the same seed."""
    cpython = C2.speak("学而", "0.7", "20", "0.9", "5", DOC)
    set_fields(page, **{"c2-prompt": "学而", "c2-temp": "0.7", "c2-topk": "20", "c2-topp": "0.9", "c2-seed": "5"})
    assert field(page, "c2-text").text_content() == cpython["prompt"] + cpython["text"]
    assert bars(page) == dict(zip(cpython["chart"]["labels"], cpython["chart"]["values"]))


def test_bad_input_is_said_inline_and_the_widget_keeps_working(page):
    err = page.locator(f"{ROOT_SEL} .widget-error")
    set_fields(page, **{"c2-prompt": "", "c2-temp": "1", "c2-topk": "0", "c2-topp": "1", "c2-seed": "0"})
    assert err.is_visible() and "开头是空的" in err.text_content()
    set_fields(page, **{"c2-prompt": "子曰xyz", "c2-temp": "-5", "c2-topp": "3"})
    assert not err.is_visible()
    notes = shown(page, "c2-notes")
    assert "温度不能为负" in notes and "top-p 应在 0 到 1 之间" in notes and "「x」" in notes
    assert shown(page, "c2-text").startswith("子曰")
    set_fields(page, **{"c2-prompt": "子曰：“学而时习之。”" * 500, "c2-temp": "1", "c2-topp": "1"})
    assert not err.is_visible(), err.text_content()
    assert "模型只读最后" in shown(page, "c2-notes")


def test_live_run_speaks_as_it_learns(page):
    set_fields(page, **{"c2-prompt": "子曰：“", "c2-temp": "0.8", "c2-topk": "0", "c2-topp": "0.95", "c2-seed": "0"})
    page.click('[data-testid="c2-start"]')
    page.wait_for_function("() => Number(document.querySelector('.c2-speak').dataset.spoken) >= 3",
                           timeout=TRAIN_MS)
    page.click('[data-testid="c2-pause"]')
    page.wait_for_function("() => window.courseTraining.inflight === 0", timeout=TRAIN_MS)
    lines = page.eval_on_selector_all(f'{ROOT_SEL} [data-testid="c2-log"] li', "ls => ls.map(l => l.textContent)")
    assert lines[0].startswith("第 1 步：") and lines[1].startswith("第 25 步：")
    assert len({line.split("：", 1)[1] for line in lines}) == len(lines)       # what it writes changes
    assert all(line.split("步：", 1)[1].startswith("子曰：“") for line in lines)
    assert "你正在训练的模型" in shown(page, "c2-who")
    assert float(shown(page, "c2-loss")) < 7.0
    page.click('[data-testid="c2-reset"]')
    page.wait_for_function("() => document.querySelector('.c2-speak').dataset.state === 'idle'")
    page.wait_for_function("() => document.querySelector('[data-testid=\"c2-who\"]').textContent.includes('构建时')")


def test_c5s_live_run_speaks(module_guard, site):
    p = open_lesson(module_guard, site + "c5-optimization.html", '[data-testid="c5-live-start"]')
    p.click('[data-testid="c5-live-start"]')
    p.wait_for_function("() => document.querySelector('[data-testid=\"c5-live-speak\"]').textContent"
                        ".startsWith('第 1 步：子曰')", timeout=TRAIN_MS)
    p.click('[data-testid="c5-live-pause"]')
    p.wait_for_function("() => window.courseTraining.inflight === 0", timeout=TRAIN_MS)
    p.close()
