"""Lesson C3 注意力：token 之间怎样交换信息 (lessons/c3-attention/lesson.md): causal attention, grouped KV heads,
RoPE and the KV cache, computed from every config in data/models and shown on the course's trained small model.

calc.py holds the calculators from a config (the build's first states and the browser's answers): each layer
type's cache entry by the ledger engine's rules, a full context's cache, attention FLOPs against T and C4's
crossover (experiments.ledger.views), and every config's RoPE settings. numbers.py the lesson's numbers (c3.*),
widgets.py the build-time views and states. Each widget's defaults are declared here, once.
"""
from typing import Any

from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C3_GQA_SOLUTION

KV_DEFAULTS: dict[str, Any] = {"model": "llama70b", "context": 4096}
MAPS_DEFAULTS: dict[str, Any] = {"sentence": "学而时习之，不亦说乎？", "layer": 2, "head": 1}
MASK_DEFAULTS: dict[str, Any] = {"leak": "1"}
CACHE_DEFAULTS: dict[str, Any] = {"prompt": "子曰：", "n_new": 40}

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c3-kv", "c3_kv.html", "widgets:kv_view", KV_DEFAULTS, script="script.js",
               states="widgets:kv_states", calls={"c3_kv": "calc:kv"}),
        Widget("c3-rope", "c3_rope.html", "widgets:rope_view", {}),
        Widget("c3-maps", "c3_maps.html", "widgets:maps_view", MAPS_DEFAULTS, script="script.js",
               needs=("charts.js",), states="widgets:maps_states", calls={"c3_maps": "trained:maps"}),
        Widget("c3-mask", "c3_mask.html", "widgets:mask_view", MASK_DEFAULTS, script="script.js",
               needs=("training.js", "charts.js"), states="widgets:mask_states",
               calls={"c3_mask": "trained:mask", "c3_train_start": "trained:train_start",
                      "c3_train_step": "trained:train_step"}),
        Widget("c3-cache", "c3_cache.html", "widgets:cache_view", CACHE_DEFAULTS, script="script.js",
               calls={"c3_decode": "trained:decode"}),
        exercise("c3-gqa", function="causal_gqa", params=("q", "k", "v"),
                 reference="experiments.lessons.c3_attention.exercises:attention",
                 cases="experiments.lessons.c3_attention.exercises:gqa_cases", compare="arrays", rtol=1e-6,
                 solution=_C3_GQA_SOLUTION, title="练习：带因果掩码的 GQA"),
    ),
)
