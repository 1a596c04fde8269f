"""C1's exercise (issue #48): one BPE merge step.

The learner writes bpe_merge_step(words, counts, new_id): the training text's distinct pieces as token ids (the
course's byte-level ids, GPT-2's, plus the ids of earlier merges) with how often each piece occurs; count every
adjacent pair weighted by its piece's count, take the most frequent pair (among equal counts the smaller
(left id, right id), the rule of the course's BPE and of the `tokenizers` library), and replace it by new_id in
every piece, left to right (overlaps: only the first). It returns the pieces after the merge, in the same order.
The reference is the course's own BPE trainer, experiments.train.bpe.Trainer (``merged``): the learner's input is
that trainer's state after some merges on a text, the expected answer its state one merge later. The cases: the
lesson's sentence (the first merge and a later one), a Sennrich-style English text in which the counts decide, the
same sentence without pre-splitting, and one text made of the names of course models drawn with the page's seed
(pre-splitting and the number of earlier merges drawn too).
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.train.bpe import BYTE_ID, Trainer, split

SENTENCE = "子曰：学而时习之，不亦说乎？今天我们学习分词。"   # the lesson's BPE widget's sentence too (BPE_DEFAULTS)
ENGLISH = "low low low low lower lower newest newest newest widest widest hmmm hmmm"
SCHEME_NAMES = {"gpt2": "GPT-2 的预切分", "qwen": "Qwen 的预切分", "none": "不预切分"}


def trained(text: str, scheme: str, merges: int) -> Trainer:
    """The course's BPE trainer on text after `merges` merges."""
    trainer = Trainer(text, scheme, merges)
    for _ in trainer:
        pass
    return trainer


def merged(text: str, scheme: str, before: int) -> list[list[int]]:
    """The text's distinct pieces after merge number before + 1 of the course's BPE."""
    return trained(text, scheme, before + 1).pieces()


def state(text: str, scheme: str, before: int) -> tuple[list[list[int]], list[int], int]:
    """The learner's input: the pieces after `before` merges, each piece's count (first-seen order, as the
    trainer lays them out) and the next merge's id (ids 0..255 are the bytes)."""
    counts: dict[str, int] = {}
    for piece in split(text, scheme):
        counts[piece] = counts.get(piece, 0) + 1
    return trained(text, scheme, before).pieces(), list(counts.values()), len(BYTE_ID) + before


def _case(text: str, scheme: str, before: int, label: str = "", shown: bool = False) -> Case:
    short = text if len(text) <= 16 else text[:15] + "…"
    return Case(f"{label}「{short}」，{SCHEME_NAMES[scheme]}，第 {before + 1} 次合并", state(text, scheme, before),
                shown=shown, ref_args=(text, scheme, before))


def merge_cases(models, rng) -> list[Case]:
    cases = [_case(SENTENCE, "gpt2", 0, shown=True), _case(ENGLISH, "gpt2", 0, shown=True),
             _case(SENTENCE, "gpt2", 4), _case(ENGLISH, "gpt2", 3), _case(ENGLISH, "none", 6),
             _case(SENTENCE, "qwen", 2)]
    names = [m["name"] for m in models.values()]
    text = " ".join(rng.sample(sorted(names), min(6, len(names))))
    return cases + [_case(text, rng.choice(sorted(SCHEME_NAMES)), rng.randrange(8), "随机抽到的模型名 ")]


SOLUTION = '''def bpe_merge_step(words, counts, new_id):
    pairs = {}                                    # 每一对相邻 token 出现几次（按片段的次数加权）
    for word, n in zip(words, counts):
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    best = min(pairs, key=lambda p: (-pairs[p], p))   # 次数最多；一样多时编号小的优先
    merged = []
    for word in words:                            # 从左往右换，重叠的只换前一处
        out, i = [], 0
        while i < len(word):
            if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                out.append(new_id)
                i += 2
            else:
                out.append(word[i])
                i += 1
        merged.append(out)
    return merged
'''
