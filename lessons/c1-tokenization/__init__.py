"""Lesson C1 分词 (issue #39): the vocabulary ledger's numbers (c1.*). No page or widget yet: the lesson's Markdown
file and widgets come later; until then this package only registers numbers, which the build allows.

vocab.py is the vocabulary ledger (every config's embedding table and output head, their shares, the padded
vocabulary), numbers.py registers it. The byte-level BPE the lesson trains is shared code,
experiments/toolkit/bpe.py.
"""
from ...widget import Lesson

LESSON = Lesson(numbers="numbers:register")
