"""Lesson C4+ FFN 精读 (lesson.md): its numbers, calculators and widgets.

calc.py holds the calculators (the same functions give the build's first state and the browser's answers),
numbers.py the lesson's numbers (ffn.*), widgets.py the build-time views, browser entry points and the states the
build answers ahead of time (``states``). Each widget's
defaults are declared here, once: the calculators take every input explicitly, and the lesson's numbers that
describe a widget's first state read these dictionaries.
"""
from typing import Any

from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C4FFN_SWIGLU_COUNT_SOLUTION

_FFN = "script.js"
_EXTRA = "script.js"

# (a widget's options: JSON values of any kind)
SWIGLU_DEFAULTS: dict[str, Any] = {"d": 4096, "ratio": "8/3", "matrices": 3, "align": 256}
MEMORY_DEFAULTS: dict[str, Any] = {"models": ["llama7b", "llama_2_13b", "llama70b"], "model": "llama7b",
                                   "dtype": "BF16", "batch": 1, "gpu": "h100"}
TRAINING_DEFAULTS: dict[str, Any] = {"model": "llama7b", "recipe": "mixed_adamw", "batch": 4, "seq": 4096,
                                     "checkpointing": False}
FLOPS_DEFAULTS: dict[str, Any] = {"model": "llama7b", "tokens_b": "2000", "gpus": 1024,
                                  "tflops": None}   # None: cited sustained
MOE_DEFAULTS: dict[str, Any] = {"models": [], "model": "qwen3_30b_a3b",
                                "experts": None, "top_k": None, "width": None}   # None: the model's own
INT4_DEFAULTS: dict[str, Any] = {"rows": 1024, "cols": 64, "outlier_pct": "1", "outlier_scale": "10", "seed": 0}
PREFILL_DEFAULTS: dict[str, Any] = {"model": "llama7b", "dtype": "BF16", "gpu": "h100", "prompt": 2048, "batch": 1}
SHARE_DEFAULTS: dict[str, Any] = {"matrices": 3, "kv": "1"}
DEPTH_DEFAULTS: dict[str, Any] = {"budgets": ["llama7b", "llama_2_13b", "llama70b"], "budget": "llama7b", "L": 32,
                                  "T": 4096}
GPUS = {"h100": "H100 SXM", "a100": "A100 80GB SXM"}   # bandwidth and peak: data/citations.json <key>_*

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("ffn-swiglu-budget", "ffn_swiglu.html", "widgets:swiglu_view", SWIGLU_DEFAULTS, script=_FFN,
               states="widgets:swiglu_states",
               calls={"ffn_swiglu_budget": "calc:swiglu_budget", "ffn_config_family": "widgets:config_family_call"}),
        Widget("ffn-memory", "ffn_memory.html", "widgets:memory_view", MEMORY_DEFAULTS, script=_FFN,
               states="widgets:memory_states",
               calls={"ffn_memory": "calc:decode", "ffn_batch_series": "calc:batch_series"}),
        Widget("ffn-training-memory", "ffn_training.html", "widgets:training_view", TRAINING_DEFAULTS, script=_FFN,
               states="widgets:training_states", calls={"ffn_training_memory": "calc:training_memory"}),
        Widget("ffn-flops", "ffn_flops.html", "widgets:flops_view", FLOPS_DEFAULTS, script=_FFN,
               states="widgets:flops_states", calls={"ffn_flops": "calc:flops_budget"}),
        Widget("ffn-moe", "ffn_moe.html", "widgets:moe_view", MOE_DEFAULTS, script=_FFN,
               states="widgets:moe_states", calls={"ffn_moe": "calc:moe_explore"}),
        Widget("ffn-int4", "ffn_int4.html", "widgets:int4_view", INT4_DEFAULTS, script=_FFN, needs=("charts.js",),
               calls={"ffn_int4_probe": "calc:int4_probe"}),
        # the sources' missing parts (extra.py): prefill vs decode, the share formula, depth vs width
        Widget("ffn-prefill-decode", "ffn_prefill_decode.html", "extra:prefill_decode_view", PREFILL_DEFAULTS,
               script=_EXTRA, calls={"ffn_prefill_decode": "extra:prefill_decode"}),
        Widget("ffn-share-formula", "ffn_share_formula.html", "extra:share_view", SHARE_DEFAULTS, script=_EXTRA,
               needs=("charts.js",), calls={"ffn_share_chart": "extra:share_chart_call"}),
        Widget("ffn-depth-width", "ffn_depth_width.html", "extra:depth_width_view", DEPTH_DEFAULTS, script=_EXTRA,
               states="extra:depth_width_states",
               calls={"ffn_depth_width_table": "extra:depth_width_table",
                      "ffn_depth_width_now": "extra:depth_width_now"}),
        exercise("c4ffn-swiglu-count", function="swiglu_ffn_params",
                 params=("hidden", "intermediate", "n_layers"),
                 reference="experiments.lessons.c4_ffn_deep_read.exercises:ffn",
                 cases="experiments.lessons.c4_ffn_deep_read.exercises:ffn_cases",
                 compare="number", rtol=0.0, solution=_C4FFN_SWIGLU_COUNT_SOLUTION,
                 title="练习：数一个模型的 SwiGLU FFN"),
    ),
)
