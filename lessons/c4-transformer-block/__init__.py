"""Lesson C4 一个 Transformer 块：参数到底花在哪 (lesson.md): its numbers and widgets.

numbers.py holds the lesson's own numbers (c4.*); widgets.py what each widget shows (the build's first state and
the browser's recomputation, through the same functions) and, in ``states``, which answers the build computes
ahead of time so the pickers answer before Python is loaded.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C4_CLASSIC_ESTIMATE_SOLUTION

_C4 = "script.js"

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("tracker", "tracker.html", "widgets:tracker_view", {"model": "anchor", "models": ["anchor", "baseline"]},
               script=_C4, states="widgets:tracker_states",
               calls={"tracker": "widgets:tracker_call", "baseline_forward": "widgets:baseline_forward_call",
                      "baseline_prepare": "widgets:baseline_prepare_call"}),
        Widget("classic-gap", "classic_gap.html", "widgets:classic_gap_view", {"model": "anchor"}),
        Widget("ledger-total", "ledger_total.html", "widgets:ledger_total_view", {"model": "anchor"}, script=_C4,
               states="widgets:ledger_total_states",
               calls={"total_view": "widgets:total_view_call", "ledger_views": "widgets:ledger_views_call"}),
        Widget("ledger-layer", "ledger_layer.html", "widgets:ledger_layer_view", {"model": "anchor"}, script=_C4,
               states="widgets:ledger_layer_states", calls={"layer_view": "widgets:layer_view_call"}),
        Widget("ledger-compare", "ledger_compare.html", "widgets:ledger_compare_view",
               {"models": ["gpt2", "llama7b", "anchor"]}, script=_C4,
               states="widgets:ledger_compare_states", calls={"ledger_compare": "widgets:ledger_compare_call"}),
        Widget("evolution", "evolution.html", "widgets:evolution_view"),
        Widget("crossover", "crossover.html", "widgets:crossover_view", {"model": "anchor"}, script=_C4,
               needs=("charts.js",), states="widgets:crossover_states",
               calls={"crossover_view": "widgets:crossover_view_call", "crossover_at": "widgets:crossover_at_call"}),
        Widget("baseline", "baseline.html", "widgets:baseline_widget_view", {"model": "baseline"}, script=_C4,
               calls={"baseline_forward": "widgets:baseline_forward_call",
                      "baseline_prepare": "widgets:baseline_prepare_call"}),
        # it draws its crossover chart and its numbers' derivations in the browser
        Widget("byo-config", "byo_config.html", "widgets:byo_config_view", {"example": "anchor", "compare": ["gpt2"]},
               script=_C4, needs=("derivation.js", "charts.js"), calls={"byo_views": "widgets:byo_views_call"}),
        exercise("c4-classic-estimate", function="classic_estimate",
                 params=("config",),
                 reference="experiments.lessons.c4_transformer_block.exercises:classic",
                 cases="experiments.lessons.c4_transformer_block.exercises:classic_cases",
                 compare="number", rtol=0.0, solution=_C4_CLASSIC_ESTIMATE_SOLUTION,
                 title="练习：从 config 算经典估算"),
    ),
)
