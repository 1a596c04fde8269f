"""The trainer's stability variants (lesson C8): every new operation's hand-written gradient against central
finite differences in float64 and against torch autograd on the same weights (each variant alone and all
together), QK-Clip's rescaling rule, QK-norm's bound, and that the defaults are the C5 network unchanged."""
import math

import numpy as np
import pytest

from experiments.train import model as M
from experiments.train import trainer as T
from tests.test_train_model import TINY, torch_loss

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
    p = M.init_params(cfg, seed=seed, dtype=dtype)
    rng = np.random.default_rng(seed + 100)
    for k in p:
        p[k] = (p[k] + rng.standard_normal(p[k].shape) * (0.3 if p[k].ndim == 1 else 0.5)).astype(dtype)
    ids = rng.integers(0, cfg.vocab_size, size=(2, 6))
    tgt = rng.integers(0, cfg.vocab_size, size=(2, 6))
    return p, ids, tgt


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant_gradients_match_central_finite_differences(variant):
    cfg = TINY.with_(**VARIANTS[variant])
    p, ids, tgt = case(cfg)
    _, grads, diag = M.loss_and_grads(p, ids, tgt, cfg, kernels="matmul")
    assert diag["objective"] == pytest.approx(M.objective_only(p, ids, tgt, cfg, "matmul"), rel=1e-14)
    h, worst = 1e-6, 0.0
    for name, a in p.items():
        num = np.zeros_like(a)
        flat, nflat = a.reshape(-1), num.reshape(-1)
        for j in range(flat.size):
            keep = flat[j]
            flat[j] = keep + h
            up = M.objective_only(p, ids, tgt, cfg, "matmul")
            flat[j] = keep - h
            down = M.objective_only(p, ids, tgt, cfg, "matmul")
            flat[j] = keep
            nflat[j] = (up - down) / (2 * h)
        scale = max(np.abs(num).max(), 1e-3)
        worst = max(worst, float(np.abs(grads[name] - num).max() / scale))
    assert worst < 1e-6, worst


def torch_objective(tp, ids, tgt, cfg):
    """The variants written with torch operations, independently of model.py."""
    import torch
    F = torch.nn.functional
    d, H, hd, eps = cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.rms_eps
    ids_t = torch.as_tensor(np.asarray(ids), dtype=torch.long)
    B, T_ = ids_t.shape

    def norm(x, w):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w

    inv = cfg.rope_base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.arange(T_, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cos(ang), torch.sin(ang)

    def rope(x):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)

    def attn(h, pre):
        q, k, v = (F.linear(h, tp[pre + f"self_attn.{n}_proj.weight"]).view(B, T_, H, hd).transpose(1, 2)
                   for n in "qkv")
        if cfg.qk_norm:
            q, k = norm(q, tp[pre + "self_attn.q_norm.weight"]), norm(k, tp[pre + "self_attn.k_norm.weight"])
        s = rope(q) @ rope(k).transpose(-1, -2) / math.sqrt(hd)
        if cfg.attn_softcap:
            s = cfg.attn_softcap * torch.tanh(s / cfg.attn_softcap)
        s = s.masked_fill(~torch.ones(T_, T_, dtype=torch.bool).tril(), float("-inf"))
        return F.linear((torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T_, d), tp[pre + "self_attn.o_proj.weight"])

    def ffn(h, pre):
        f = F.silu(F.linear(h, tp[pre + "mlp.gate_proj.weight"])) * F.linear(h, tp[pre + "mlp.up_proj.weight"])
        return F.linear(f, tp[pre + "mlp.down_proj.weight"])

    x = tp["embed_tokens.weight"][ids_t]
    for i in range(cfg.n_layers):
        pre = f"layers.{i}."
        if cfg.norm_position == "post":
            x = norm(x + attn(x, pre), tp[pre + "input_layernorm.weight"])
            x = norm(x + ffn(x, pre), tp[pre + "post_attention_layernorm.weight"])
        else:
            x = x + attn(norm(x, tp[pre + "input_layernorm.weight"]), pre)
            x = x + ffn(norm(x, tp[pre + "post_attention_layernorm.weight"]), pre)
    if cfg.norm_position == "pre":
        x = norm(x, tp["norm.weight"])
    logits = F.linear(x, tp["embed_tokens.weight"]).reshape(B * T_, -1)
    if cfg.logit_softcap:
        logits = cfg.logit_softcap * torch.tanh(logits / cfg.logit_softcap)
    t = torch.as_tensor(np.asarray(tgt), dtype=torch.long).reshape(-1)
    ce = F.cross_entropy(logits, t)
    return ce, ce + cfg.z_loss * (torch.logsumexp(logits, -1) ** 2).mean()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant_gradients_equal_torch_autograd(variant):
    torch = pytest.importorskip("torch")
    cfg = TINY.with_(**VARIANTS[variant])
    p, ids, tgt = case(cfg, seed=5)
    loss, grads, diag = M.loss_and_grads(p, ids, tgt, cfg, kernels="matmul")
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    ce, obj = torch_objective(tp, ids, tgt, cfg)
    obj.backward()
    assert abs(loss - ce.item()) < 1e-12 and abs(diag["objective"] - obj.item()) < 1e-12
    biggest = max(float(tp[k].grad.abs().max()) for k in p)
    for k in p:
        assert np.abs(grads[k] - tp[k].grad.numpy()).max() < 1e-10 * biggest, k


def test_torch_rewrite_of_the_default_network_is_c5s():
    """The independent torch network above, with every variant off, is the one tests/test_train_model.py uses."""
    torch = pytest.importorskip("torch")
    p, ids, tgt = case(TINY, seed=6)
    a = torch_objective({k: torch.tensor(v) for k, v in p.items()}, ids, tgt, TINY)[0].item()
    b = torch_loss({k: torch.tensor(v) for k, v in p.items()}, ids, tgt, TINY).item()
    assert a == pytest.approx(b, rel=1e-14)


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
