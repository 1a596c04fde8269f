"""Lesson C11 MoE 与线性注意力：总参数与激活参数分家 (lesson.md).

calc.py holds the calculators (the build's first states and answers, and the browser's), numbers.py the
lesson's numbers (c11.*), widgets.py the build-time views. Each widget's defaults are declared here, once.
recall.py is the associative-recall experiment (numpy, in the page's worker as at build time), layouts.py counts
the layer types of hybrid configs the engine does not read. The decode-bandwidth calculator counts with the
toolkit's (experiments/toolkit/decode.py: step_weights, StepWeights.touched_extra / read), and the expert controls
change the config keys the engine's MoE facts name.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C11_ACTIVE_PARAMS_SOLUTION

_C11 = "script.js"
MOE_MODELS = ["qwen3_30b_a3b", "qwen3_235b_a22b", "deepseek_v3", "gpt_oss_120b", "qwen3_next_80b_a3b",
              "mixtral_8x7b", "jamba_v0_1"]
LEDGER_DEFAULTS = {"models": MOE_MODELS, "model": "qwen3_30b_a3b"}
HYBRID_DEFAULTS = {"model": "anchor", "n_full": 16, "T": 32768}
BATCH_DEFAULTS = {"models": MOE_MODELS, "model": "qwen3_30b_a3b", "batch": 16, "dtype": "BF16"}
RECALL_DEFAULTS = {"d_k": 32, "seed": 0, "gate": "1"}   # the recall experiment (recall.py): key size, stream, α

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c11-moe-ledger", "c11_moe_ledger.html", "widgets:ledger_view", LEDGER_DEFAULTS, script=_C11,
               states="widgets:ledger_states", calls={"c11_moe_ledger": "calc:moe_ledger"},
               script_keys=("name",)),   # the chosen model's name, from the page's model list
        Widget("c11-hybrid-memory", "c11_hybrid_memory.html", "widgets:hybrid_view", HYBRID_DEFAULTS, script=_C11,
               needs=("charts.js",), states="widgets:hybrid_states",
               calls={"c11_hybrid_memory": "calc:hybrid_memory", "c11_hybrid_chart": "calc:hybrid_chart"}),
        Widget("c11-batch-experts", "c11_batch_experts.html", "widgets:batch_view", BATCH_DEFAULTS, script=_C11,
               needs=("charts.js",), states="widgets:batch_states",
               calls={"c11_batch_read": "calc:batch_read", "c11_batch_chart": "calc:batch_chart"}),
        Widget("c11-recall", "c11_recall.html", "widgets:recall_view", RECALL_DEFAULTS, script=_C11,
               needs=("charts.js",), states="widgets:recall_states",
               calls={"c11_recall": "recall:recall_experiment"}),
        exercise("c11-active-params", function="active_params",
                 params=("backbone", "moe_layers", "experts", "top_k", "hidden", "expert_ffn"),
                 reference="experiments.lessons.c11_moe_linear_attention.exercises:active",
                 cases="experiments.lessons.c11_moe_linear_attention.exercises:active_cases",
                 compare="number", rtol=0.0, solution=_C11_ACTIVE_PARAMS_SOLUTION,
                 title="练习：每个 token 用到多少参数"),
    ),
)
