"""The trainer's network: its hand-written gradients against central finite differences (float64, every
parameter) and against torch autograd on the same weights; its loss on the course baseline's initial weights
against experiments.baseline's forward pass; the two kernel sets; determinism.

The torch comparison imports torch (a test dependency). When pyproject gains an `hf` marker for tests that need
torch/transformers, mark test_gradients_equal_torch_autograd with it.
"""
import math

import numpy as np
import pytest

from experiments import baseline
from experiments.train import kernels as K
from experiments.train import model as M
from tests.gradient_reference import central_differences

TINY = M.ModelConfig(d_model=8, n_layers=2, n_heads=2, n_kv_heads=2, d_ff=12, vocab_size=11)   # MHA (grouped: see
# tests/test_train_attention.py)


def tiny_case(dtype=np.float64, seed=3, cfg=TINY, spread=0.2):
    """Tiny weights with every gain and every weight perturbed (so no gradient is trivially symmetric): gains by
    0.3, matrices by `spread` standard deviations."""
    p = M.init_params(cfg, seed=seed, dtype=dtype)
    rng = np.random.default_rng(seed + 100)
    for k in p:
        p[k] = (p[k] + rng.standard_normal(p[k].shape) * (0.3 if p[k].ndim == 1 else spread)).astype(dtype)
    ids = rng.integers(0, cfg.vocab_size, size=(2, 6))
    tgt = rng.integers(0, cfg.vocab_size, size=(2, 6))
    return p, ids, tgt


def test_gradients_match_central_finite_differences_for_every_parameter():
    p, ids, tgt = tiny_case()
    loss, grads, _ = M.loss_and_grads(p, ids, tgt, TINY, kernels="matmul")
    numeric = central_differences(lambda: M.loss_only(p, ids, tgt, TINY, "matmul"), p)
    worst = 0.0
    n_checked = 0
    for name, num in numeric.items():
        a = p[name]
        n_checked += num.size
        g = grads[name]
        assert g.shape == a.shape and g.dtype == np.float64
        scale = max(np.abs(num).max(), 1e-3)
        worst = max(worst, float(np.abs(g - num).max() / scale))
    assert n_checked == M.count_params(p) == sum(math.prod(s) for s in M.param_shapes(TINY).values())
    assert worst < 1e-6, worst


def torch_loss(tp, ids, tgt, cfg):
    """The same network written with torch operations (tests/gradient_reference.py; autograd differentiates it)."""
    from tests.gradient_reference import torch_objective
    return torch_objective(tp, ids, tgt, cfg)[0]


def test_gradients_equal_torch_autograd():
    torch = pytest.importorskip("torch")
    p, ids, tgt = tiny_case(seed=5)
    loss, grads, _ = M.loss_and_grads(p, ids, tgt, TINY, kernels="matmul")
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    tl = torch_loss(tp, ids, tgt, TINY)
    tl.backward()
    assert abs(loss - tl.item()) < 1e-12
    biggest = max(float(tp[k].grad.abs().max()) for k in p)
    for k in p:
        assert np.abs(grads[k] - tp[k].grad.numpy()).max() < 1e-12 * biggest * 100, k


def test_loss_on_the_baseline_initial_weights_equals_experiments_baseline_exactly():
    cfg = M.ModelConfig.from_hf(baseline.CONFIG)
    params = M.init_params(cfg, seed=0)
    ref = baseline.init_params(seed=0)
    assert params.keys() == ref.keys()
    assert all(np.array_equal(params[k], ref[k]) for k in ref)
    assert M.count_params(params) == 3_688_704
    ids = np.array(baseline.toy_token_ids(["小明", "把", "苹果", "给了", "小王", "。", "他", "吃"]))
    targets = np.roll(ids, -1)
    logits_ref, _, _ = baseline.forward(ref, ids.tolist())
    loss_ref = M.cross_entropy(logits_ref, targets)[0]
    # the baseline writes its weight products as einsum: with the same kernels the loss is the same float
    loss = M.loss_only(params, ids[None, :], targets[None, :], cfg, kernels="einsum")
    assert loss == loss_ref
    logits, _, _ = M.forward(params, ids[None, :], cfg, kernels="einsum", keep=False)
    assert np.array_equal(logits, logits_ref)
    # BLAS matmul sums in another order: equal within float32 rounding
    loss_mm = M.loss_only(params, ids[None, :], targets[None, :], cfg, kernels="matmul")
    assert abs(loss_mm - loss_ref) < 1e-5 * loss_ref
    assert 7 < loss_ref < 8.5                     # ~ln 2048 = 7.62 for weights that know nothing yet


def test_the_two_kernel_sets_agree_within_float32_rounding():
    p, ids, tgt = tiny_case(dtype=np.float32, seed=7)
    la, ga, _ = M.loss_and_grads({k: v.copy() for k, v in p.items()}, ids, tgt, TINY, kernels="einsum")
    lb, gb, _ = M.loss_and_grads({k: v.copy() for k, v in p.items()}, ids, tgt, TINY, kernels="matmul")
    assert abs(la - lb) < 1e-5 * la
    for k in p:
        assert ga[k].dtype == np.float32
        assert np.allclose(ga[k], gb[k], rtol=1e-4, atol=1e-6 * float(np.abs(gb[k]).max())), k


def test_platform_choice():
    assert K.for_platform("emscripten") is K.EINSUM
    assert K.for_platform("linux") is K.MATMUL
    with pytest.raises(ValueError, match="kernels"):
        K.get("blas")


def test_max_attention_logit_is_the_largest_scaled_score():
    p, ids, tgt = tiny_case(seed=9)
    _, diag = M.loss_and_grads(p, ids, tgt, TINY)[0], M.loss_and_grads(p, ids, tgt, TINY)[2]
    # recompute layer 0's scores by hand from its q and k
    h, _ = M.rms_norm(p["embed_tokens.weight"][ids], p["layers.0.input_layernorm.weight"], TINY.rms_eps)
    B, T = ids.shape
    cos, sin = M.rope_tables(T, TINY.head_dim, TINY.rope_base, np.float64)
    q = M.rope((h @ p["layers.0.self_attn.q_proj.weight"].T).reshape(B, T, 2, 4).transpose(0, 2, 1, 3), cos, sin)
    k = M.rope((h @ p["layers.0.self_attn.k_proj.weight"].T).reshape(B, T, 2, 4).transpose(0, 2, 1, 3), cos, sin)
    s = q @ k.transpose(0, 1, 3, 2) / 2.0
    s[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
    assert math.isclose(diag["max_attn_logit_per_layer"][0], float(s.max()), rel_tol=1e-12)
    assert diag["max_attn_logit"] == max(diag["max_attn_logit_per_layer"])


def test_same_seed_same_weights_and_gradients():
    a = M.init_params(TINY, seed=4, dtype=np.float32)
    b = M.init_params(TINY, seed=4, dtype=np.float32)
    c = M.init_params(TINY, seed=5, dtype=np.float32)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["embed_tokens.weight"], c["embed_tokens.weight"])
    ids = np.arange(12).reshape(2, 6) % TINY.vocab_size
    ga = M.loss_and_grads(a, ids, ids[:, ::-1], TINY)[1]
    gb = M.loss_and_grads(b, ids, ids[:, ::-1], TINY)[1]
    assert all(np.array_equal(ga[k], gb[k]) for k in ga)


def test_config_refuses_what_is_not_implemented_by_name():
    with pytest.raises(ValueError, match="norm_position"):
        TINY.with_(norm_position="sandwich")     # (pre and post are implemented)
    with pytest.raises(ValueError, match="n_heads"):
        TINY.with_(n_heads=3)
    with pytest.raises(ValueError, match="n_kv_heads"):
        M.ModelConfig.from_hf({**baseline.CONFIG, "num_key_value_heads": 3})    # not a divisor of 8 heads
    assert M.ModelConfig.from_hf(baseline.CONFIG).d_ff == 688
