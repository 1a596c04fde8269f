"""Lesson C1 分词 (lessons/c1-tokenization/lesson.md, issue #39): its numbers and its three widgets.

- numbers.py registers the vocabulary ledger (vocab.py: every config's embedding table and output head, their
  shares, the padded vocabulary) and, through tokstats.py, the real tokenizers measured at build time and the
  course's own BPE (data/tokenizer_stats.json, made by `python -m sitegen.real_tokenizers`).
- c1-bpe: byte-level BPE (experiments/train/bpe.py) trained in the page's training worker (live.py, script.js),
  its first state drawn by the build from the stored first merges; c1-real: the measured tokenizers beside the
  course's BPE; c1-vocab: the vocabulary ledger of every model config (widgets.py); c1-fair (fair.py): the same
  model trained on characters and on BPE tokens at the same compute, in bits per character, rerun in the page.
"""
from ...exercise import exercise
from ...widget import Lesson, Widget
from .exercises import SENTENCE
from .exercises import SOLUTION as _C1_MERGE_SOLUTION

BPE_DEFAULTS = {"merges": 200, "sentence": SENTENCE}   # (the sentence the exercise merges too)

LESSON = Lesson(
    numbers="numbers:register",
    widgets=(
        Widget("c1-bpe", "c1_bpe.html", "widgets:bpe_view", BPE_DEFAULTS, script="script.js", needs=("training.js",),
               calls={"c1_bpe_start": "widgets:bpe_start", "c1_bpe_step": "widgets:bpe_step",
                      "c1_bpe_target": "widgets:bpe_target", "c1_bpe_show": "widgets:bpe_show"}),
        Widget("c1-fair", "c1_fair.html", "fair:view", {}, script="script.js", needs=("training.js", "charts.js"),
               calls={"c1_fair_start": "fair:start", "c1_fair_step": "fair:step"}),
        Widget("c1-real", "c1_real.html", "widgets:real_view", {}),
        Widget("c1-vocab", "c1_vocab.html", "widgets:vocab_view", {}),
        exercise("c1-bpe-merge", function="bpe_merge_step", params=("words", "counts", "new_id"),
                 reference="experiments.lessons.c1_tokenization.exercises:merged",
                 cases="experiments.lessons.c1_tokenization.exercises:merge_cases",
                 compare="sequences", rtol=0.0, solution=_C1_MERGE_SOLUTION,
                 title="练习：BPE 合并一次"),
    ),
)
