"""C10's simulated ranks (experiments/toolkit/ranks.py): one step of the course trainer split over k ranks in one
process equals the step run in one piece (gradients and AdamW's updated weights, to float64 rounding), and the
bytes every rank sent, counted message by message in the ring, equal the formulas recounted here from the
model's shapes (not from toolkit/parallel.py)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from experiments.toolkit import ranks as R
from experiments.train import model as M

CFG = R.SMALL
PSI = sum(int(np.prod(s)) for s in M.param_shapes(CFG).values())     # 115,520 for d 64, 2 layers, F 172, V 256
N = R.BATCH * R.SEQ


def expected_bytes(layout: str, k: int) -> Fraction:
    """Per rank, float64 (8 bytes): an all-reduce is a reduce-scatter plus an all-gather, each k - 1 chunks of
    1/k of the buffer. DP: one all-reduce of the Ψ gradients. ZeRO-3: two all-gathers of the Ψ weights and one
    reduce-scatter of the gradients. TP: per layer 2 all-reduces forward and 2 backward of the N × d activations."""
    share = Fraction(k - 1, k)
    return {"dp": 2 * share * PSI * 8, "zero3": 3 * share * PSI * 8,
            "tp": CFG.n_layers * 4 * 2 * share * N * CFG.d_model * 8}[layout]


@pytest.mark.parametrize("layout", R.LAYOUTS)
@pytest.mark.parametrize("k", [2, 4])
def test_ranks_equal_one_process_and_send_what_the_formulas_say(layout, k):
    x = R.run(layout, k)
    # gradients to float64 rounding of the largest; AdamW's first step is lr·g/|g|, so the weights to ~1e-13
    assert x["grad_diff"] <= 1e-12 * x["grad_scale"]
    assert x["weight_diff"] <= 1e-12
    assert x["per_rank"] == [expected_bytes(layout, k)] * k
    assert x["formula"] == expected_bytes(layout, k)
    assert x["params"] == PSI


def test_what_each_rank_holds():
    assert R.run("dp", 4)["held"] == [PSI] * 4
    assert R.run("zero3", 4)["held"] == [PSI // 4] * 4
    # tensor parallel: q, k, v, o, gate, up, down split 4 ways; embedding and the norms whole on every rank
    d, F, V, L = CFG.d_model, CFG.d_ff, CFG.vocab_size, CFG.n_layers
    split = L * (4 * d * d + 3 * d * F)
    assert R.run("tp", 4)["held"] == [split // 4 + V * d + L * 2 * d + d] * 4


def test_the_ring_splits_by_collective():
    x = R.run("zero3", 2)
    share = PSI * 8 // 2
    assert x["sent"] == {"前向 all-gather 权重": [share] * 2, "反向 all-gather 权重": [share] * 2,
                         "梯度 reduce-scatter": [share] * 2}


def test_one_rank_sends_nothing_and_equals_exactly():
    for layout in R.LAYOUTS:
        x = R.run(layout, 1)
        assert x["per_rank"] == [0] and x["grad_diff"] == 0 and x["weight_diff"] == 0


def test_what_does_not_divide_is_named():
    assert R.problems("tp", 3) == ["注意力头数 4 不能被 3 整除", "FFN 宽度 172 不能被 3 整除",
                                   "token 行数 batch × 序列长 128 不能被 3 整除"]
    assert R.problems("dp", 8) == ["batch 的条数 4 不能被 8 整除", "FFN 宽度 172 不能被 8 整除"]
    with pytest.raises(ValueError, match="不能被 3 整除"):
        R.run("zero3", 3)
    assert R.problems("dp", 0) and R.problems("pp", 2)
