"""C8's exercise (issue #48): the training objective with z-loss.

The learner writes objective_with_z_loss(logits, targets, z_coeff): the mean cross-entropy of each row's target
plus z_coeff times the mean over rows of (log Z)^2, log Z = logsumexp of the row's logits (PaLM's auxiliary loss,
which pulls the softmax's normaliser towards 0). The reference is the course trainer's own objective,
experiments.train.model._objective with ModelConfig(z_loss=z_coeff) (``objective``). The cases are logits with
the large common offsets that make log Z drift in a long run (a numerically naive logsumexp overflows on some),
two shown, others, and one drawn with the page's seed: two rows as wide as the vocabulary of a course model drawn
with that seed (its ledger's vocab_size), the width a real output head's logits have.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from experiments.exercise import Case
from experiments.ledger import ledger_of

if TYPE_CHECKING:   # (numpy is imported where it is used: the page's worker reads this lesson before numpy)
    import numpy as np

DRAWN_ROWS = 2   # rows of the drawn case's logits, each as wide as a real vocabulary (up to 262,144 numbers a row)


def objective(logits, targets, z_coeff) -> float:
    """The trainer's objective (cross-entropy + z-loss) on these logits."""
    import numpy as np

    from experiments.train.model import ModelConfig, _objective
    z = np.asarray(logits, dtype=np.float64)
    return float(_objective(z, np.asarray(targets, dtype=np.int64), ModelConfig(z_loss=float(z_coeff)))[1])


def _case(rng: np.random.Generator, label: str, rows: int, vocab: int, offset: float, z_coeff: float,
          shown: bool = False) -> Case:
    import numpy as np
    logits = np.round(rng.normal(0.0, 2.0, (rows, vocab)) + offset, 2).tolist()
    targets = [int(t) for t in rng.integers(0, vocab, rows)]
    return Case(label, (logits, targets, z_coeff), shown=shown)


def z_loss_cases(models, rng) -> list[Case]:
    import numpy as np
    name, config = rng.choice(sorted((m["name"], m["config"]) for m in models.values()))
    vocab = ledger_of(config).arch.vocab_size      # the drawn model's output width: one logit per vocabulary row
    seed = rng.randrange(2**32)
    return [_case(np.random.default_rng(1), "两行、四个候选", 2, 4, 0.0, 1e-4, shown=True),
            _case(np.random.default_rng(2), "两行、四个候选，logits 整体抬高 30", 2, 4, 30.0, 1e-4, shown=True),
            _case(np.random.default_rng(3), "八行、五十个候选，抬高 800", 8, 50, 800.0, 1e-4),
            _case(np.random.default_rng(4), "十六行、一百个候选，系数 0.01", 16, 100, 5.0, 1e-2),
            _case(np.random.default_rng(seed),
                  f"随机抽到的 {name} 的词表宽度（{vocab:,} 个候选），两行 logits（种子 {seed}）", DRAWN_ROWS, vocab,
                  float(np.random.default_rng(seed).choice([0.0, 50.0, 900.0])), 1e-3)]


SOLUTION = '''import numpy as np

def objective_with_z_loss(logits, targets, z_coeff):
    z = np.asarray(logits, dtype=float)
    top = z.max(axis=1, keepdims=True)                  # 先减去每行最大值，exp 才不会溢出
    log_z = np.log(np.exp(z - top).sum(axis=1)) + top[:, 0]
    rows = np.arange(len(z))
    cross_entropy = np.mean(log_z - z[rows, targets])   # −log softmax(目标)
    return float(cross_entropy + z_coeff * np.mean(log_z ** 2))
'''
