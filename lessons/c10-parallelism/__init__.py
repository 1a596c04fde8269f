"""Lesson C10 并行：一个模型分到多张卡 (lesson.md): how one training step is split over many GPUs, what each way of
splitting saves in memory and costs in bytes between the GPUs, and how long the step then takes.

calc.py holds the calculators (the browser's experiments.api:c10_* and the build's first states) over
experiments/toolkit/parallel.py (bytes, memory, the time model, the planner) and experiments/toolkit/ranks.py (one
real step of the course's trainer over simulated ranks); widgets.py the build-time views and the states the build
answers ahead of time; numbers.py the lesson's numbers (c10.*). Each widget's defaults are declared here, once.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C10_RING_SOLUTION

PLANNER_DEFAULTS = {"models": ["llama7b", "llama70b", "gpt3", "anchor", "qwen3_235b_a22b", "deepseek_v3"],
                    "model": "deepseek_v3", "gpus": "2048", "cluster": "h800", "seq": "4096", "batch": "15360",
                    "recompute": "full"}
RANKS_DEFAULTS = {"layout": "zero3", "k": "4"}
# The published layouts' table: Llama 3 405B's shapes (arXiv 2407.21783, table 3; the course keeps no config file
# for it) and its 16K-GPU layout (table 4), beside DeepSeek-V3's config (data/models) and layout (arXiv 2412.19437).
PUBLISHED_DEFAULTS = {"hidden_size": 16384, "intermediate_size": 53248, "num_hidden_layers": 126,
                      "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256,
                      "gpus": 16384, "seq": 8192, "batch": 2048, "model": "deepseek_v3"}

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c10-planner", "c10_planner.html", "widgets:planner_view", PLANNER_DEFAULTS, script="script.js",
               states="widgets:planner_states", calls={"c10_plan": "calc:planner"}),
        Widget("c10-published", "c10_published.html", "widgets:published_view", PUBLISHED_DEFAULTS),
        Widget("c10-ranks", "c10_ranks.html", "widgets:ranks_view", RANKS_DEFAULTS, script="script.js",
               states="widgets:ranks_states", calls={"c10_ranks": "calc:ranks_step"}),
        exercise("c10-ring-bytes", function="ring_allreduce_bytes", params=("size_bytes", "k"),
                 reference="experiments.lessons.c10_parallelism.exercises:allreduce",
                 cases="experiments.lessons.c10_parallelism.exercises:allreduce_cases",
                 compare="number", rtol=1e-12, solution=_C10_RING_SOLUTION,
                 title="练习：环形 all-reduce 每张卡发多少字节"),
    ),
)
