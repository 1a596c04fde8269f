"""C9's exercise (issue #48): the model-state bytes of one recipe on one GPU, mixed-precision AdamW under ZeRO.

The learner writes zero_state_bytes(params, stage, dp): the bytes one data-parallel rank holds for the weights
(BF16, 2 B), the gradients (BF16, 2 B) and the optimiser's K = 12 B per parameter (FP32 master copy, m and v),
with ZeRO stage 0-3 sharding them over dp ranks. The reference is the training-memory ledger's own
experiments.ledger.training.zero_model_states (ZeRO paper, figure 1; rounded up to whole bytes). The cases are
the parameter counts of the course's models (their ledgers' totals): the anchor model shown in the page at two
stages, others at every stage, and one model, stage and rank count drawn with the page's seed.
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.ledger import ledger_of

SHOWN = "qwen3.8-27b"                 # the course's anchor model
OTHERS = ("llama-2-7b", "deepseek-v3")


def _model(models, folder: str) -> dict:
    return next(m for m in models.values() if m["id"] == folder)


def zero_cases(models, rng) -> list[Case]:
    cases = []
    anchor = _model(models, SHOWN)
    n = ledger_of(anchor["config"]).total
    cases += [Case(f"{anchor['name']}，ZeRO-{stage}，{dp} 卡", (n, stage, dp), shown=True)
              for stage, dp in ((0, 8), (2, 8))]
    for folder in OTHERS:
        m = _model(models, folder)
        total = ledger_of(m["config"]).total
        cases += [Case(f"{m['name']}，ZeRO-{stage}，64 卡", (total, stage, 64)) for stage in (1, 2, 3)]
    drawn = rng.choice(sorted(m["id"] for m in models.values()))
    m = _model(models, drawn)
    stage, dp = rng.randrange(4), rng.choice((3, 16, 128, 1024))
    cases.append(Case(f"随机抽到的 {m['name']}，ZeRO-{stage}，{dp} 卡", (ledger_of(m["config"]).total, stage, dp)))
    return cases


SOLUTION = '''import math

def zero_state_bytes(params, stage, dp):
    K = 12                                   # 优化器：FP32 主副本、m、v 各 4 字节
    if stage == 0:                           # 不切分：权重 2 + 梯度 2 + 优化器 K
        return (2 + 2 + K) * params
    if stage == 1:                           # 只切优化器状态
        return 4 * params + math.ceil(K * params / dp)
    if stage == 2:                           # 再切梯度
        return 2 * params + math.ceil((2 + K) * params / dp)
    return math.ceil((2 + 2 + K) * params / dp)   # ZeRO-3：权重也切
'''
