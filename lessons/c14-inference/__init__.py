"""Lesson C14 推理：把训好的模型部署出去 (lessons/c14-inference/lesson.md): serving a model, computed from configs
and measured on the course's own models.

calc.py holds the calculators (the build's first states and answers, and the browser's), numbers.py the lesson's
numbers (c14.*), widgets.py the build-time views and states. The serving arithmetic is experiments/toolkit/
serving.py (rooflines, crossover batch, KV cache beside the weights, quantization, paging, static against
continuous batching); speculative sampling
is experiments/train/speculative.py, measured by `python -m experiments.train.runs --group speculative`
(data/train_speculative.json). Each widget's defaults are declared here, once.
"""
from typing import Any

from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C14_STEP_SOLUTION

SERVE_DEFAULTS: dict[str, Any] = {"model": "qwen3_8b", "device": "80", "scheme": "BF16", "kv": "BF16",
                  "context": 4096, "batch": 16, "used": 1000}
SPEC_DEFAULTS = {"prompt": "子曰：“", "gamma": 4, "seed": 0}
BATCHING_DEFAULTS: dict[str, Any] = {"model": "qwen3_8b", "device": "80", "batch": 256, "seed": 0}

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c14-serve", "c14_serve.html", "widgets:serve_view", SERVE_DEFAULTS, script="script.js",
               states="widgets:serve_states", calls={"c14_serve": "calc:serve"}),
        Widget("c14-batching", "c14_batching.html", "widgets:batching_view", BATCHING_DEFAULTS, script="script.js",
               states="widgets:batching_states", calls={"c14_batching": "calc:batching"}),
        Widget("c14-speculate", "c14_speculate.html", "widgets:speculate_view", SPEC_DEFAULTS, script="script.js",
               states="widgets:speculate_states", calls={"c14_speculate": "calc:speculate"},
               script_keys=("text",)),   # a note's line: only answers whose prompt was changed carry notes
        exercise("c14-step-time", function="decode_step_time",
                 params=("weight_bytes", "kv_bytes_per_seq", "flops_per_token", "batch", "bandwidth", "peak_flops"),
                 reference="experiments.lessons.c14_inference.exercises:step_time",
                 cases="experiments.lessons.c14_inference.exercises:step_cases",
                 compare="number", rtol=1e-9, solution=_C14_STEP_SOLUTION,
                 title="练习：屋顶线上一步解码要多久"),
    ),
)
