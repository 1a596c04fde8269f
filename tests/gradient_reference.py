"""What the trainer's hand-written gradients are checked against: central finite differences of a loss function
(float64), and the network written a second time with torch operations, independently of
experiments/train/model.py, for autograd: the baseline block with grouped key/value heads (k and v expanded with
repeat_interleave, as Hugging Face's repeat_kv), without the causal mask when causal is False, and every stability
variant of ModelConfig (Post-LN, QK-norm, the two soft-caps, z-loss). torch is a test dependency.
"""
from __future__ import annotations

import math

import numpy as np


def central_differences(loss, params: dict, h: float = 1e-6) -> dict:
    """(loss(w + h) - loss(w - h)) / 2h for every element of every array in params (perturbed in place and put
    back); loss() reads params."""
    out = {}
    for name, a in params.items():
        num = np.zeros_like(a)
        flat, nflat = a.reshape(-1), num.reshape(-1)
        for j in range(flat.size):
            keep = flat[j]
            flat[j] = keep + h
            up = loss()
            flat[j] = keep - h
            down = loss()
            flat[j] = keep
            nflat[j] = (up - down) / (2 * h)
        out[name] = num
    return out


def worst_relative_difference(grads: dict, numeric: dict) -> float:
    """The largest |analytic - numeric| over each tensor, relative to that tensor's largest numeric gradient (at
    least 1e-3, so a tensor whose gradient is near zero is judged on absolute error)."""
    return max(float(np.abs(grads[k] - num).max() / max(np.abs(num).max(), 1e-3)) for k, num in numeric.items())


def torch_disagreement(p, ids, tgt, cfg) -> tuple[float, float, float]:
    """How far the trainer's float64 loss_and_grads is from torch autograd on the same weights: the cross-entropy's
    and the objective's absolute differences, and the largest gradient difference over the largest torch gradient."""
    import torch

    from experiments.train import model as M
    loss, grads, diag = M.loss_and_grads(p, ids, tgt, cfg, kernels="matmul")
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    ce, obj = torch_objective(tp, ids, tgt, cfg)
    obj.backward()
    biggest = max(float(tp[k].grad.abs().max()) for k in p)
    worst = max(float(np.abs(grads[k] - tp[k].grad.numpy()).max()) for k in p) / biggest
    return abs(loss - ce.item()), abs(diag["objective"] - obj.item()), worst


def torch_objective(tp, ids, tgt, cfg):
    """The variants written with torch operations, independently of model.py."""
    import torch
    F = torch.nn.functional
    d, H, Hkv, hd, eps = cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim, cfg.rms_eps
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
        q, k, v = (F.linear(h, tp[pre + f"self_attn.{n}_proj.weight"]).view(B, T_, heads, hd).transpose(1, 2)
                   for n, heads in (("q", H), ("k", Hkv), ("v", Hkv)))
        if cfg.qk_norm:
            q, k = norm(q, tp[pre + "self_attn.q_norm.weight"]), norm(k, tp[pre + "self_attn.k_norm.weight"])
        k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
        s = rope(q) @ rope(k).transpose(-1, -2) / math.sqrt(hd)
        if cfg.attn_softcap:
            s = cfg.attn_softcap * torch.tanh(s / cfg.attn_softcap)
        if cfg.causal:
            s = s.masked_fill(~torch.ones(T_, T_, dtype=torch.bool).tril(), float("-inf"))
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T_, d)
        return F.linear(o, tp[pre + "self_attn.o_proj.weight"])

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
