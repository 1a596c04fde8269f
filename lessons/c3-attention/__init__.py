"""Lesson C3 注意力：token 之间怎样交换信息 (lessons/c3-attention/lesson.md): causal attention, grouped KV heads,
RoPE and the KV cache, computed from every config in data/models and shown on the course's trained small model.

calc.py holds the calculators from a config (the build's first states and the browser's answers): each layer
type's cache entry by the ledger engine's rules, a full context's cache, attention FLOPs against T and C4's
crossover (experiments.ledger.views), and every config's RoPE settings. numbers.py the lesson's numbers (c3.*),
widgets.py the build-time views and states. Each widget's defaults are declared here, once.
"""
from typing import Any

from ...widget import Lesson, Widget

KV_DEFAULTS: dict[str, Any] = {"model": "llama70b", "context": 4096}

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c3-kv", "c3_kv.html", "widgets:kv_view", KV_DEFAULTS, script="script.js",
               states="widgets:kv_states", calls={"c3_kv": "calc:kv"}),
        Widget("c3-rope", "c3_rope.html", "widgets:rope_view", {}),
    ),
)
