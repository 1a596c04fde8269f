"""The course baseline as a real numpy model: its arrays add up to the ledger engine's 3,688,704."""
import subprocess
import sys
from pathlib import Path

import numpy as np

from experiments.baseline import CONFIG, count_params, forward, init_params, summary, toy_token_ids
from experiments.ledger import build_ledger

ROOT = Path(__file__).resolve().parent.parent


def test_arrays_add_up_to_the_engine_count():
    params = init_params()
    assert count_params(params) == build_ledger(CONFIG).total == 3_688_704
    assert "lm_head.weight" not in params                      # tied: the head reuses embed_tokens
    assert all(a.dtype == np.float32 for a in params.values())


def test_forward_pass_on_the_five_token_example():
    params = init_params(seed=1)
    ids = toy_token_ids(["小明", "把", "苹果", "给了", "小王"])
    logits, probs, stages = forward(params, ids)
    assert logits.shape == (5, 2048) and probs.shape == (2048,)
    assert abs(float(probs.sum()) - 1.0) < 1e-5 and np.isfinite(logits).all()
    assert [name for name, _ in stages] == ["tokens", "embedding", "layer 0", "layer 1", "layer 2", "layer 3",
                                            "final_norm", "lm_head", "softmax"]
    # causal: the first position's logits do not depend on later tokens
    other = forward(params, ids[:1] + [7, 7, 7, 7])[0]
    assert np.allclose(logits[0], other[0], atol=1e-5)


def test_summary_is_deterministic():
    assert summary(0) == summary(0)


def test_command_line_prints_the_count():
    r = subprocess.run([sys.executable, "-m", "experiments.baseline"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0
    assert "number of parameters: 3,688,704" in r.stdout and "lm_head     -> (5, 2048)" in r.stdout
