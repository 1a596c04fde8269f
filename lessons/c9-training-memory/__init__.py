"""Lesson C9 一个参数几个字节：训练显存 (lesson.md): every byte of one training step.

calc.py holds the calculators (the browser's experiments.api:c9_* and the build's first states) over the engine's
training-memory ledger (experiments/ledger/training.py), widgets.py the build-time views and the states the build
answers ahead of time, numbers.py the lesson's numbers (c9.*). Each widget's defaults are declared here, once.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C9_ZERO_BYTES_SOLUTION

_C9 = "script.js"
STEP_MODELS = ["baseline", "gpt2", "llama7b", "qwen3_8b", "anchor", "qwen3_30b_a3b", "deepseek_v3"]
STEP_DEFAULTS = {"models": STEP_MODELS, "model": "qwen3_8b", "recipe": "mixed_adamw", "batch": "1", "seq": "4096",
                 "recompute": "none", "kernel": "fused", "zero": "0", "ranks": "1", "tp": "1", "gpu": "80"}
SEQ_DEFAULTS = {"models": ["gpt2", "llama7b", "qwen3_8b", "anchor"], "model": "llama7b"}
RECIPE_TABLE_DEFAULTS = {"models": ["baseline", "gpt2", "llama7b", "qwen3_8b", "anchor"], "gpu": "80"}
KORTHIKANTI_DEFAULTS = {"model": "qwen3_8b", "seq": 4096}
MEASURED_DEFAULTS = {"model": "baseline", "batches": ["1", "2", "4", "8"], "seqs": ["16", "32", "64"]}

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c9-step", "c9_step.html", "widgets:step_view", STEP_DEFAULTS, script=_C9,
               states="widgets:step_states", calls={"c9_step": "calc:step_memory"}),
        Widget("c9-seq", "c9_seq.html", "widgets:seq_view", SEQ_DEFAULTS, script=_C9, needs=("charts.js",),
               states="widgets:seq_states", calls={"c9_seq": "calc:seq_curve"}),
        Widget("c9-recipes", "c9_recipes.html", "widgets:recipes_view", RECIPE_TABLE_DEFAULTS),
        Widget("c9-korthikanti", "c9_korthikanti.html", "widgets:korthikanti_view", KORTHIKANTI_DEFAULTS),
        Widget("c9-measured", "c9_measured.html", "widgets:measured_view", MEASURED_DEFAULTS, script=_C9,
               states="widgets:measured_states",
               calls={"c9_measure": "calc:measure", "c9_predicted": "calc:predicted"}),
        exercise("c9-zero-bytes", function="zero_state_bytes",
                 params=("params", "stage", "dp"),
                 reference="experiments.ledger.training:zero_model_states",
                 cases="experiments.lessons.c9_training_memory.exercises:zero_cases",
                 compare="number", rtol=0.0, solution=_C9_ZERO_BYTES_SOLUTION,
                 title="练习：一张卡上的模型状态有多少字节"),
    ),
)
