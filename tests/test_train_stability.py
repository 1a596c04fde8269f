"""The trainer's stability variants (lesson C8): every new operation's hand-written gradient against central
finite differences in float64 and against torch autograd on the same weights (each variant alone and all
together), QK-Clip's rescaling rule, QK-norm's bound, and that the defaults are the C5 network unchanged."""
import math

import numpy as np
import pytest

from experiments.train import model as M
from experiments.train import trainer as T
from tests.gradient_reference import central_differences, torch_disagreement, worst_relative_difference
from tests.test_train_model import TINY, tiny_case

VARIANTS = {
    "post_ln": {"norm_position": "post"},
    "qk_norm": {"qk_norm": True},
    "z_loss": {"z_loss": 0.05},                 # large enough that its share of the gradient is visible
    "logit_softcap": {"logit_softcap": 1.5},     # small caps: tanh is far from linear on these logits
    "attn_softcap": {"attn_softcap": 0.7},
    "residual_init": {"residual_init": "none"},
    "all": {"norm_position": "post", "qk_norm": True, "z_loss": 0.05, "logit_softcap": 1.5, "attn_softcap": 0.7},
}


def case(cfg, dtype=np.float64, seed=3):
    """test_train_model's tiny case, with larger weights (so the caps and the norms are far from linear)."""
    return tiny_case(dtype, seed, cfg, spread=0.5)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant_gradients_match_central_finite_differences(variant):
    cfg = TINY.with_(**VARIANTS[variant])
    p, ids, tgt = case(cfg)
    _, grads, diag = M.loss_and_grads(p, ids, tgt, cfg, kernels="matmul")
    assert diag["objective"] == pytest.approx(M.objective_only(p, ids, tgt, cfg, "matmul"), rel=1e-14)
    numeric = central_differences(lambda: M.objective_only(p, ids, tgt, cfg, "matmul"), p)
    worst = worst_relative_difference(grads, numeric)
    assert worst < 1e-6, worst


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant_gradients_equal_torch_autograd(variant):
    pytest.importorskip("torch")
    cfg = TINY.with_(**VARIANTS[variant])
    p, ids, tgt = case(cfg, seed=5)
    d_loss, d_objective, worst = torch_disagreement(p, ids, tgt, cfg)
    assert d_loss < 1e-12 and d_objective < 1e-12 and worst < 1e-10


def test_shapes_of_the_variants():
    base = M.param_shapes(TINY)
    qk = M.param_shapes(TINY.with_(qk_norm=True))
    post = M.param_shapes(TINY.with_(norm_position="post"))
    # QK-norm adds 2 head_dim gains per layer; Post-LN drops the final norm
    assert sum(math.prod(s) for s in qk.values()) - sum(math.prod(s) for s in base.values()) == \
        2 * TINY.head_dim * TINY.n_layers
    assert set(base) - set(post) == {"norm.weight"}
    # the gains draw nothing: every weight both configs share starts equal
    a, b = M.init_params(TINY, seed=1), M.init_params(TINY.with_(qk_norm=True), seed=1)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    none = M.init_params(TINY.with_(residual_init="none"), seed=1)
    ratio = float(np.std(none["layers.0.mlp.down_proj.weight"]) / np.std(a["layers.0.mlp.down_proj.weight"]))
    assert ratio == pytest.approx(math.sqrt(2 * TINY.n_layers), rel=1e-6)


def test_refuses_bad_variant_values_by_name():
    for key, bad in (("z_loss", -1.0), ("qk_clip", float("inf")), ("attn_softcap", "50"),
                     ("norm_position", "sandwich"), ("residual_init", "mitchell")):
        with pytest.raises(ValueError, match=key):
            TINY.with_(**{key: bad})


def test_softcap_bounds_the_logits_and_qk_norm_bounds_the_attention_logit():
    cfg = TINY.with_(logit_softcap=2.0, attn_softcap=0.5)
    p, ids, _ = case(cfg)
    logits, tops, _ = M.forward(p, ids, cfg, keep=False)
    assert np.abs(logits).max() < 2.0 and max(tops) < 0.5
    # with QK-norm |q.k| / sqrt(hd) <= sqrt(hd) max|g_q| max|g_k|: at unit gains sqrt(hd)
    qk = TINY.with_(qk_norm=True)
    p = M.init_params(qk, seed=2)
    for k in p:
        if k.endswith(("q_proj.weight", "k_proj.weight")):
            p[k] *= 1000.0                      # weights that would give huge logits without the norm
    _, tops, _ = M.forward(p, ids, qk, keep=False)
    assert max(tops) <= math.sqrt(qk.head_dim) * (1 + 1e-5)
    _, tops_plain, _ = M.forward(p, ids, TINY, keep=False)
    assert max(tops_plain) > 100 * math.sqrt(qk.head_dim)


def test_qk_clip_scales_exactly_the_heads_over_tau_to_tau():
    cfg = TINY.with_(qk_clip=1.5)
    p, ids, tgt = case(cfg, seed=8)
    hd = cfg.head_dim
    p["layers.0.self_attn.q_proj.weight"][hd:2 * hd] *= 0.1       # layer 1's second head stays under tau
    _, _, diag = M.loss_and_grads(p, ids, tgt, cfg)
    heads = diag["max_attn_logit_per_head"]
    over = [(i, h) for i, row in enumerate(heads) for h, s in enumerate(row) if s > 1.5]
    assert over and len(over) < sum(len(r) for r in heads)     # the case has heads on both sides of tau
    before = {k: v.copy() for k, v in p.items()}
    assert T.qk_clip_rescale(p, heads, cfg) == len(over)
    _, _, after = M.loss_and_grads(p, ids, tgt, cfg)
    # the first layer's input is unchanged: its clipped heads now peak at exactly tau, the others as before
    # (later layers see a changed input)
    assert heads[0][0] > 1.5 > heads[0][1]
    for h, s in enumerate(heads[0]):
        assert after["max_attn_logit_per_head"][0][h] == pytest.approx(min(s, 1.5), rel=1e-9)
    q0 = "layers.0.self_attn.q_proj.weight"
    for i, h in over:
        f = math.sqrt(1.5 / heads[i][h])
        for name in ("q_proj", "k_proj"):
            key = f"layers.{i}.self_attn.{name}.weight"
            assert np.allclose(p[key][h * hd:(h + 1) * hd], before[key][h * hd:(h + 1) * hd] * f, rtol=1e-12)
    untouched = [k for k in p if "q_proj" not in k and "k_proj" not in k]
    assert all(np.array_equal(p[k], before[k]) for k in untouched) and q0 in p


def test_log_z_diagnostic_is_the_logsumexp_of_the_output_logits():
    p, ids, tgt = case(TINY, seed=4)
    logits, _, _ = M.forward(p, ids, TINY, keep=False)
    lse = np.log(np.exp(logits).sum(-1))
    diag = M.loss_and_grads(p, ids, tgt, TINY)[2]
    assert diag["log_z_mean"] == pytest.approx(float(lse.mean()), rel=1e-12)
    assert diag["log_z_max"] == pytest.approx(float(lse.max()), rel=1e-12)
    assert diag["z_loss"] == 0.0 and diag["objective"] == M.loss_only(p, ids, tgt, TINY)
