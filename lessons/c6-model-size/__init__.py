"""Lesson C6 模型该多大 (lesson.md): compute budgets, scaling laws and the course's real models on them.

calc.py holds the calculators (the browser's experiments.api:c6_* and the build's first states), widgets.py the
build-time views and the states the build answers ahead of time, numbers.py the lesson's numbers (c6.*), own_fit.py
the IsoFLOP fit of the course trainer's own grid (data/train_isoflop.json). The fits' formulas are
experiments/toolkit/scaling.py's. Each widget's defaults are declared here, once.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C6_CHINCHILLA_OPTIMUM_SOLUTION

_C6 = "script.js"
# budgets the explorer's slider stops at: 1 and 3 per decade from 10^15 (the course baseline's scale) to 10^26,
# and Gopher's / Chinchilla's 5.76 × 10^23
BUDGETS = [f"{m}e{e}" for e in range(15, 26) for m in (1, 3)] + ["1e26"]
BUDGETS = sorted(BUDGETS + ["5.76e23"], key=float)
# the course's models the explorer places (those without a published training-token figure are listed as such)
PLACED = ["gpt2", "gpt3", "llama7b", "llama_2_13b", "llama70b", "mistral_7b_v0_1", "gemma_2_9b", "qwen2_5_7b",
          "qwen3_8b"]
ISOFLOP_DEFAULTS = {"budgets": BUDGETS, "budget": "5.76e23", "models": PLACED}
BUDGET_DEFAULTS = {"budget": "5.76e23", "gpu": "h100", "gpus": 1024, "mfu": 40}
GPUS = {"h100": "H100 SXM", "a100": "A100 80GB SXM"}   # peaks: data/citations.json <key>_bf16_tflops
DEVICE_DEFAULTS = {"seq": 32, "repeats": 1, "batch": 4}
OWN_DEFAULTS = {"budget": 0}          # the grid's budget the rerun starts on (its index: the smallest, the quickest)

LESSON = Lesson(
    id="c6-model-size",
    numbers="numbers:register",
    widgets=(
        Widget("c6-isoflop", "c6_isoflop.html", "widgets:isoflop_view", ISOFLOP_DEFAULTS, script=_C6,
               needs=("charts.js",), states="widgets:isoflop_states", calls={"c6_isoflop": "calc:isoflop"}),
        Widget("c6-budget", "c6_budget.html", "widgets:budget_view", BUDGET_DEFAULTS, script=_C6,
               states="widgets:budget_states", calls={"c6_budget": "calc:budget_plan"}),
        Widget("c6-device", "c6_device.html", "widgets:device_view", DEVICE_DEFAULTS, script=_C6,
               needs=("training.js",), calls={"c6_device_speed": "calc:device_speed"}),
        Widget("c6-own-isoflop", "c6_own_isoflop.html", "widgets:own_view", OWN_DEFAULTS, script=_C6,
               needs=("training.js", "charts.js"),
               calls={"c6_own_refit": "widgets:own_refit", "c6_own_start": "widgets:own_start",
                      "c6_own_step": "widgets:own_step"}),
        exercise("c6-chinchilla-optimum", function="chinchilla_optimum",
                 params=("C", "A", "B", "alpha", "beta"),
                 reference="experiments.lessons.c6_model_size.exercises:optimum",
                 cases="experiments.lessons.c6_model_size.exercises:optimum_cases",
                 compare="arrays", rtol=1e-9, solution=_C6_CHINCHILLA_OPTIMUM_SOLUTION,
                 title="练习：算力最优的闭式解"),
    ),
)
