"""Lesson C8 训练稳定性：warmup、归一化与 QK 约束 (lesson.md): its numbers and widgets.

The numbers (numbers.py, c8.*) come from the trainer's stability runs (data/train_stability.json, made by
`python -m experiments.train.runs --group stability`), the course's model configs read by the ledger engine, and
cited figures; the widgets (widgets.py): "break it, then fix it" (the precomputed run of every toggle setting,
and the same run live in the page's training worker, script.js), the table of stability
devices the course's configs use, and final loss against learning rate for each fix with the deeper model's
Post-LN runs (data/train_lr_sweep.json, `python -m experiments.train.runs --group lr_sweep`).
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C8_Z_LOSS_SOLUTION

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c8-break-fix", "c8_break_fix.html", "widgets:break_fix_view",
               {"warmup": 0, "post_ln": 0, "qk_norm": 0, "qk_clip": 0, "z_loss": 0, "softcap": 0},
               script="script.js", needs=("training.js", "charts.js"),
               calls={"c8_train_start": "widgets:train_start", "c8_train_step": "widgets:train_step"}),
        Widget("c8-devices", "c8_devices.html", "widgets:devices_view", {}),
        Widget("c8-lr-sweep", "c8_lr_sweep.html", "widgets:lr_sweep_view", {}),
        exercise("c8-z-loss", function="objective_with_z_loss",
                 params=("logits", "targets", "z_coeff"),
                 reference="experiments.lessons.c8_training_stability.exercises:objective",
                 cases="experiments.lessons.c8_training_stability.exercises:z_loss_cases",
                 compare="number", rtol=1e-9, solution=_C8_Z_LOSS_SOLUTION,
                 title="练习：加上 z-loss 的训练目标"),
    ),
)
