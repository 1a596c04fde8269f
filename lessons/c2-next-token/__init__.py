"""Lesson C2 从向量到下一个 token (lesson.md): its numbers and its two widgets.

The numbers (numbers.py, c2.*) come from the trainer's stored speaker model (data/train_speaker.json, made by
`python -m experiments.train.runs --group speaker`), from the trainer's own functions (softmax cross-entropy and
its gradient, the embedding lookup) and from the published configs (tied and untied heads, Gemma 2's soft-cap).
The widgets (widgets.py): c2-heads, a static table of every course model's embedding and output head (tied or
not, their share of all parameters, from the ledger engine); c2-speak lets the stored model continue a learner's
prompt under greedy, temperature, top-k and top-p decoding, shows the next-token distribution, and trains the same
architecture from scratch in the page's training worker (script.js), speaking every few steps.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SOLUTION as _C2_TOP_P_SOLUTION
from .numbers import SPEAK_PROMPT

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c2-speak", "c2_speak.html", "widgets:speak_view",
               {"prompt": SPEAK_PROMPT, "temperature": 1, "top_k": 0, "top_p": 1, "seed": 0},
               script="script.js", needs=("training.js", "charts.js"), states="widgets:speak_states",
               calls={"c2_speak": "widgets:speak", "c2_train_start": "widgets:train_start",
                      "c2_train_step": "widgets:train_step", "c2_train_speak": "widgets:train_speak"},
               script_keys=("line",)),   # the live run's log rows: the script writes each continuation
        Widget("c2-heads", "c2_heads.html", "widgets:heads_view", {}),
        exercise("c2-top-p", function="sample_top_p",
                 params=("logits", "temperature", "top_p", "rng"),
                 reference="experiments.lessons.c2_next_token.exercises:distribution",
                 cases="experiments.lessons.c2_next_token.exercises:sampler_cases",
                 compare="distribution", rtol=1e-6, draws=2000,
                 test="experiments.train.speculative:chi_square", solution=_C2_TOP_P_SOLUTION,
                 title="练习：自己写 top-p 采样"),
    ),
)
