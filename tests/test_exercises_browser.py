"""Exercises graded in the page (issue #48) in real headless Chromium, on C5's AdamW step: a wrong answer is told
what differs (the case, the largest difference and where); bad input gets one Chinese line naming the def expected;
an endless loop is stopped in time, the page keeps answering, and the next check works (a fresh worker); the right
answer is solved, and after a reload the page still says so and keeps the code; the outline counts it; 重新开始
forgets it; hints come one at a time and the solution only on request; the page's Python computes the shown cases'
answers exactly as the build wrote them (build == browser for the reference).

Every wait is on a condition (the feedback's data-state, data-solved, data-ready), never on time.
"""
from __future__ import annotations

import json

import pytest

from browser_fixtures import wait_runtime_ready
from experiments import lessons
from experiments.exercise import MAX_MEMORY
from test_exercises import ROOT, WRONG

PAGE = "c5-optimization.html"
NAME = "c5-adamw-step"
ROOTSEL = f".widget[data-widget={NAME}] .exercise"
CHECK_MS = 120_000   # generous: the cells' worker starts (numpy included) on the first check


def solution() -> str:
    return lessons.course(ROOT).widgets()[NAME].defaults["solution"]


@pytest.fixture(scope="module")
def page(module_guard, site):
    p = module_guard.new_page()
    p.goto(site + PAGE)
    wait_runtime_ready(p)
    p.wait_for_selector(f"{ROOTSEL}[data-ready]", state="attached")
    p.evaluate("localStorage.clear()")
    return p


def check(page, source: str) -> tuple[str, str]:
    """Write source into the exercise, press 检查, wait for the grade: (data-state, the feedback's text)."""
    page.fill(f"{ROOTSEL} .exercise-source", source)
    page.click(f"{ROOTSEL} .exercise-check")
    page.wait_for_function("(sel) => { const r = document.querySelector(sel);"
                           " const f = r.querySelector('.exercise-feedback');"
                           " return !r.dataset.busy && ['solved', 'wrong', 'bad'].includes(f.dataset.state); }",
                           arg=ROOTSEL, timeout=CHECK_MS)
    return (page.eval_on_selector(f"{ROOTSEL} .exercise-feedback", "f => f.dataset.state"),
            page.inner_text(f"{ROOTSEL} .exercise-feedback"))


def test_a_wrong_answer_is_told_what_differs(page):
    state, text = check(page, solution().replace(" - lr * weight_decay * p", ""))
    assert state == "wrong"
    assert "课程的设定" in text and "最大相差" in text and "在位置" in text, text
    assert page.eval_on_selector(ROOTSEL, "r => r.dataset.solved") is None


def test_bad_input_is_one_chinese_line_naming_the_def(page):
    state, text = check(page, "def adamw_step(p, g):\n    return p\n")
    assert state == "bad"
    assert "函数的参数不对" in text and "def adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay)" in text
    state, text = check(page, "def adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay)\n    return p\n")
    assert state == "bad" and "语法错误" in text and "Traceback" not in text


def test_an_endless_loop_is_stopped_and_the_next_check_works(page):
    page.evaluate("courseRuntime.cells.timeLimitMs = 4000")
    try:
        state, text = check(page, "def adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay):\n"
                                  "    while True:\n        pass\n")
        assert state == "bad" and "死循环" in text, text
        assert page.evaluate("courseRuntime.call('experiments.api:ping', [])") is not None   # the page answers
    finally:
        page.evaluate("courseRuntime.cells.timeLimitMs = 10000")
    state, _ = check(page, solution().replace("beta1 ** t", "beta1 ** (t + 1)"))
    assert state == "wrong"


def test_an_allocation_without_end_is_stopped_in_chinese_and_the_worker_memory_stays_bounded(page):
    """The memory bound (experiments.exercise._memory_bound) in the page's Pyodide: a function that keeps adding
    to a list is stopped with one Chinese line naming the limit, the worker's WebAssembly memory has grown by about
    that limit (not to the 4 GB WebAssembly allows), and the next check works."""
    heap = "import pyodide_js\nprint(pyodide_js._module.HEAP8.length)\n"

    def wasm_bytes() -> int:
        r = page.evaluate("(src) => courseRuntime.cells.submit(src, null, null, {}).done", heap)
        return int(r["stdout"].strip())

    page.evaluate("courseRuntime.cells.timeLimitMs = 120000")
    try:
        before = wasm_bytes()
        state, text = check(page, "def adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay):\n"
                                  "    kept = []\n    while True:\n        kept.append([0.0] * 100000)\n")
        assert state == "bad" and "内存" in text and f"{MAX_MEMORY // 2**20} MB" in text, text
        assert wasm_bytes() - before < 2 * MAX_MEMORY
    finally:
        page.evaluate("courseRuntime.cells.timeLimitMs = 10000")
    state, _ = check(page, solution().replace("beta1 ** t", "beta1 ** (t + 1)"))
    assert state == "wrong"


def test_hints_one_at_a_time_and_the_solution_on_request(page):
    hidden = f"{ROOTSEL} .exercise-hints li[hidden]"
    n = page.locator(hidden).count()
    assert n >= 2
    page.click(f"{ROOTSEL} .exercise-hint")
    assert page.locator(hidden).count() == n - 1
    assert page.eval_on_selector(f"{ROOTSEL} .exercise-solution", "s => s.hidden")
    page.click(f"{ROOTSEL} .exercise-show-solution")
    assert not page.eval_on_selector(f"{ROOTSEL} .exercise-solution", "s => s.hidden")


def test_the_right_answer_is_solved_and_stays_solved_after_a_reload(page, site):
    state, text = check(page, solution())
    assert state == "solved" and "都对了" in text
    page.reload()
    page.wait_for_selector(f"{ROOTSEL}[data-ready]", state="attached")
    assert page.eval_on_selector(ROOTSEL, "r => r.dataset.solved") == "true"
    assert page.input_value(f"{ROOTSEL} .exercise-source").strip() == solution().strip()
    assert "完成过" in page.inner_text(f"{ROOTSEL} .exercise-feedback")
    page.goto(site + "index.html")
    counted = page.eval_on_selector(f'.chapter-exercises[data-exercises*="{NAME}"]', "e => e.dataset.solved")
    assert counted == "1"
    page.goto(site + PAGE)
    wait_runtime_ready(page)
    page.wait_for_selector(f"{ROOTSEL}[data-solved][data-ready]", state="attached")
    page.click(f"{ROOTSEL} .exercise-reset")
    assert page.eval_on_selector(ROOTSEL, "r => r.dataset.solved") is None
    assert page.evaluate(f"localStorage.getItem('course.exercise.{NAME}')") is None


def page_of(name: str) -> str:
    """The page an exercise is on (the lesson whose package declares it)."""
    widget = lessons.course(ROOT).widgets()[name]
    return widget.package.rsplit(".", 1)[-1].replace("_", "-") + ".html"


def exercise_names() -> list[str]:
    return sorted(n for n, w in lessons.course(ROOT).widgets().items() if w.template == "exercise.html")


@pytest.mark.parametrize("name", exercise_names())
def test_every_exercise_in_its_page_build_equals_browser_and_its_solution_is_solved(name, guarded_page, site):
    """build == browser for the reference: the page's Python (the cells' worker, with the built-in models) recomputes
    the shown cases' answers and writes them as the build did (experiments.exercise.show_value); the declared
    solution, typed into the page, is graded solved there, and its first wrong answer (tests/test_exercises.py's
    WRONG) is told, in the page's words, which case differs."""
    page = guarded_page
    root = f".widget[data-widget={name}] .exercise"
    page.goto(site + page_of(name))
    wait_runtime_ready(page)
    page.wait_for_selector(f"{root}[data-ready]", state="attached")
    built = page.eval_on_selector_all(f"{root} .exercise-expected", "es => es.map((e) => e.textContent)")
    assert built
    spec = json.loads(page.eval_on_selector(root, "r => r.dataset.spec"))
    program = ("import json\nimport experiments.api as api\n"
               "from experiments.exercise import expected, make_cases, show_value\n"
               "from experiments.widget import resolve\n"
               f"spec = json.loads({json.dumps(json.dumps(spec))})\n"
               "models = json.loads(api._MODELS_TEXT[0])\n"
               "ref = resolve(spec['reference'])\n"
               "print(json.dumps([show_value(expected(ref, c)) for c in make_cases(spec, models, 0) if c.shown]))\n")
    result = page.evaluate("(src) => courseRuntime.cells.submit(src, null, null, { models: true }).done", program)
    assert result["ok"], result
    assert json.loads(result["stdout"].strip().splitlines()[-1]) == built
    solution_text = lessons.course(ROOT).widgets()[name].defaults["solution"]
    page.fill(f"{root} .exercise-source", solution_text)
    page.click(f"{root} .exercise-check")
    page.wait_for_selector(f"{root}[data-solved]", state="attached", timeout=CHECK_MS)
    # its first deliberately wrong answer is told what differs, in words the page has for that feedback
    _, (old, new), key = WRONG[name][0]
    page.fill(f"{root} .exercise-source", solution_text.replace(old, new, 1))
    page.click(f"{root} .exercise-check")
    page.wait_for_function("(sel) => { const r = document.querySelector(sel);"
                           " return !r.dataset.busy && r.querySelector('.exercise-feedback').dataset.state"
                           " === 'wrong'; }", arg=root, timeout=CHECK_MS)
    text = page.inner_text(f"{root} .exercise-feedback")
    assert "例子「" in text and "{" not in text, (key, text)
    page.evaluate(f"localStorage.removeItem('course.exercise.{name}')")
