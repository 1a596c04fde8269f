"""Lesson C5 优化：参数怎么更新得又快又稳 (lesson.md): its numbers and widgets.

The numbers (numbers.py, c5.*) come from the trainer (experiments/train/), its precomputed runs
(data/train_runs.json) and cited figures; the widgets (widgets.py) show the precomputed runs and schedules as
the build answered them ahead of time (``states``: the race from the stored runs, the schedules from the trainer's
Schedule), and run the live training and the baseline's first step in the page's training worker
(script.js), through the entry points declared here.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C5_ADAMW_STEP_SOLUTION

_JS = "script.js"

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c5-race", "c5_race.html", "widgets:race_view", {"multiplier": 0}, script=_JS,
               needs=("training.js", "charts.js"), states="widgets:race_states", calls={"c5_race": "widgets:race"}),
        Widget("c5-schedule", "c5_schedule.html", "widgets:schedule_view", {"kind": "cosine", "warmup": 30},
               script=_JS, needs=("training.js", "charts.js"), states="widgets:schedule_states",
               calls={"c5_schedule": "widgets:schedule"}),
        Widget("c5-first-step", "c5_first_step.html", "widgets:first_step_view", {}, script=_JS, needs=("training.js",),
               calls={"c5_first_step": "widgets:first_step"}),
        Widget("c5-live", "c5_live.html", "widgets:live_view", {"optimizer": "adamw", "multiplier": 0},
               script=_JS, needs=("training.js", "charts.js"),
               calls={"c5_train_start": "widgets:train_start", "c5_train_step": "widgets:train_step",
                      "c5_train_speak": "widgets:train_speak"}),
        exercise("c5-adamw-step", function="adamw_step",
                 params=("p", "g", "m", "v", "t", "lr", "beta1", "beta2", "eps", "weight_decay"),
                 reference="experiments.lessons.c5_optimization.exercises:adamw_step",
                 cases="experiments.lessons.c5_optimization.exercises:adamw_cases",
                 compare="arrays", solution=_C5_ADAMW_STEP_SOLUTION,
                 title="练习：写出 AdamW 的一步"),
    ),
)
