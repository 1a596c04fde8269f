"""C10's exercise (issue #48): the bytes one rank sends in a ring all-reduce.

The learner writes ring_allreduce_bytes(size_bytes, k): the bytes each of k ranks sends when a buffer of size_bytes
is all-reduced around a ring (a reduce-scatter, then an all-gather: 2(k − 1) rounds, one chunk of size_bytes / k
per round; Patarasuk & Yuan 2009). The reference is the course's own
experiments.toolkit.parallel.collective_bytes("all_reduce", ...) (``allreduce``), the function C10's planner and
its simulated ring are checked against. The cases are what data parallelism all-reduces every step: the BF16
gradients of the course's models (2 bytes per parameter of each config's ledger), shown for two models, others at
other rank counts (a count that does not divide the buffer included), and one model and rank count drawn with the
page's seed from the course's models.
"""
from __future__ import annotations

from fractions import Fraction

from experiments.exercise import Case
from experiments.ledger import ledger_of
from experiments.toolkit.parallel import collective_bytes

GRAD_BYTES = 2    # BF16 gradients: what data parallelism all-reduces, 2 bytes per parameter
SHOWN = (("llama-2-7b", 8), ("qwen3.8-27b", 64))
OTHERS = (("deepseek-v3", 2048), ("gpt3-175b", 1024), ("llama-2-70b", 3), ("qwen3-30b-a3b", 1))
DRAWN_RANKS = (2, 6, 16, 96, 512, 4096)


def allreduce(size_bytes, k) -> Fraction:
    """The course's bytes per rank of a ring all-reduce of size_bytes over k ranks."""
    return collective_bytes("all_reduce", size_bytes, k)


def gradient_bytes(config) -> int:
    """The bytes of one step's gradients of a model (BF16, every parameter of its ledger)."""
    return GRAD_BYTES * ledger_of(config).total


def allreduce_cases(models, rng) -> list[Case]:
    by_id = {m["id"]: m for m in models.values()}

    def case(folder: str, k: int, label: str, shown: bool = False) -> Case:
        return Case(f"{label}{by_id[folder]['name']} 的梯度，{k:,} 张卡", (gradient_bytes(by_id[folder]["config"]), k),
                    shown=shown)

    cases = [case(f, k, "", shown=True) for f, k in SHOWN] + [case(f, k, "") for f, k in OTHERS]
    drawn = rng.choice(sorted(f for f in by_id if f not in dict(SHOWN)))
    return cases + [case(drawn, rng.choice(DRAWN_RANKS), "随机抽到的 ")]


SOLUTION = '''def ring_allreduce_bytes(size_bytes, k):
    chunk = size_bytes / k          # 缓冲区切成 k 块，每一轮每张卡发出一块
    rounds = 2 * (k - 1)            # reduce-scatter k − 1 轮，再 all-gather k − 1 轮
    return rounds * chunk
'''
