"""Lesson C15 分歧：2026 年的架构岔路 (lesson.md).

calc.py words the engine's fork cards and cost models (experiments/ledger/forks.py) for the widgets, numbers.py
holds the lesson's numbers (c15.*), widgets.py the build-time views and the states the build answers ahead of
time. Each widget's defaults are declared here, once.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C15_KV_BYTES_SOLUTION

_C15 = "script.js"
# the fork map's rows: this year's releases beside the course's earlier models (aliases from data/course.json or
# model ids with dots and dashes as underscores)
FORK_MODELS = ["llama7b", "deepseek_v3", "deepseek_v3_2", "glm_5", "kimi_k2_5", "minimax_m2_5", "qwen3_next_80b_a3b",
               "qwen3_5_35b_a3b", "anchor", "gpt_oss_120b", "mimo_v2_flash", "gemma_2_9b", "gemma_4_26b_a4b",
               "llama_4_scout_17b_16e"]
MAP_DEFAULTS = {"models": FORK_MODELS, "sort": "listed"}
# the context chart's lines: one model per way of keeping the cache (GQA everywhere, MLA, MLA + DSA, sliding window,
# linear attention, chunked + NoPE)
CHART_MODELS = ["minimax_m2_5", "kimi_k2_5", "deepseek_v3_2", "mimo_v2_flash", "qwen3_5_35b_a3b",
                "llama_4_scout_17b_16e"]
CONTEXT_DEFAULTS = {"models": FORK_MODELS, "chart": CHART_MODELS, "T": 131072}
WHAT_IF_DEFAULTS = {"models": FORK_MODELS, "model": "deepseek_v3_2", "swap": "no_indexer", "T": 131072,
                    "kv_heads": 8}

# this lesson's own declaration: alike every lesson's in form, its widgets, views and calls are its own
LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c15-fork-map", "c15_fork_map.html", "widgets:map_view", MAP_DEFAULTS, script=_C15,
               states="widgets:map_states", calls={"c15_fork_map": "calc:fork_map"}),
        Widget("c15-context", "c15_context.html", "widgets:context_view", CONTEXT_DEFAULTS, script=_C15,
               needs=("charts.js",),
               states="widgets:context_states", calls={"c15_context": "calc:context_rows"}),
        Widget("c15-what-if", "c15_what_if.html", "widgets:what_if_view", WHAT_IF_DEFAULTS, script=_C15,
               states="widgets:what_if_states", calls={"c15_what_if": "calc:what_if_view"}),
        exercise("c15-kv-bytes", function="kv_cache_bytes",
                 params=("n_layers", "n_kv_heads", "head_dim", "tokens", "bytes_per_elem"),
                 reference="experiments.lessons.c15_architecture_forks.exercises:kv",
                 cases="experiments.lessons.c15_architecture_forks.exercises:kv_cases",
                 compare="number", rtol=0.0, solution=_C15_KV_BYTES_SOLUTION,
                 title="练习：一条岔路的 KV cache"),
    ),
)
