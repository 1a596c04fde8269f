"""The course's decoder as a trainable numpy network: forward pass, loss and a hand-written backward pass.

Architecture (the course baseline of lesson C4, experiments/baseline.py, at any size): token embedding, L
decoder layers of [pre-RMSNorm -> causal multi-head attention with RoPE -> residual add] and [pre-RMSNorm ->
SwiGLU FFN -> residual add], a final RMSNorm, an output head tied to the embedding, and the mean next-token
cross-entropy. No biases. Initialisation as GPT-2 (normal, std 0.02; the two residual output projections
o_proj and down_proj scaled by 1/sqrt(2L)), drawn in the same order as experiments.baseline.init_params, so the
baseline size starts from the very weights the C4 page runs.

Symbols: B sequences of T tokens, N = B*T token rows, d = d_model, H heads of head_dim hd = d/H, F = d_ff,
V = vocab_size. Weights are stored (out, in) under Hugging Face's names. The backward pass is the chain rule
written out per operation (each step names the forward line it undoes); tests check it against central finite
differences in float64 and against torch autograd.

Block variants are data (ModelConfig fields), not code branches at call sites: a variant that is declared but
not implemented yet is refused by ModelConfig.validate() with a message naming the field.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from . import kernels as _kernels

# Each option a later lesson may switch on, with the values this module implements so far. validate() refuses
# any other value by name, so adding a variant means adding its value here and its forward/backward lines.
IMPLEMENTED_OPTIONS = {
    "norm_position": ("pre",),          # "post" (Post-LN) is planned for C8
    "qk_norm": (False,),                # RMSNorm on q and k per head (C8)
    "qk_clip": (0.0,),                  # Kimi's QK-Clip threshold (C8); 0 = off
    "z_loss": (0.0,),                   # coefficient of mean(logsumexp^2) (C8); 0 = off
    "logit_softcap": (0.0,),            # cap * tanh(logits / cap) (C8); 0 = off
    "residual_init": ("gpt2",),         # std / sqrt(2L) on o_proj and down_proj
}


@dataclass(frozen=True)
class ModelConfig:
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 172
    vocab_size: int = 256
    rms_eps: float = 1e-5
    rope_base: float = 10000.0
    init_std: float = 0.02
    norm_position: str = "pre"
    qk_norm: bool = False
    qk_clip: float = 0.0
    z_loss: float = 0.0
    logit_softcap: float = 0.0
    residual_init: str = "gpt2"

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> ModelConfig:
        problems = []
        for key in ("d_model", "n_layers", "n_heads", "d_ff", "vocab_size"):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                problems.append(f"{key}: expected a positive integer, got {v!r}")
        if not problems and self.d_model % self.n_heads:
            problems.append(f"n_heads: expected a divisor of d_model {self.d_model}, got {self.n_heads}")
        if not problems and self.head_dim % 2:
            problems.append(f"n_heads: RoPE needs an even head_dim, got d_model/n_heads = {self.head_dim}")
        for key, allowed in IMPLEMENTED_OPTIONS.items():
            if getattr(self, key) not in allowed:
                problems.append(f"{key}: expected one of {list(allowed)} (others not implemented yet), "
                                f"got {getattr(self, key)!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @classmethod
    def from_hf(cls, config: dict, **options) -> ModelConfig:
        """From a llama-style config.json (the course baseline's data/models/baseline/config.json)."""
        if not config.get("tie_word_embeddings", False):
            raise ValueError("tie_word_embeddings: expected true (the trainer's head is tied), got "
                             f"{config.get('tie_word_embeddings')!r}")
        kv = config.get("num_key_value_heads", config["num_attention_heads"])
        if kv != config["num_attention_heads"]:
            raise ValueError(f"num_key_value_heads: expected {config['num_attention_heads']} (multi-head "
                             f"attention), got {kv!r}")
        return cls(d_model=config["hidden_size"], n_layers=config["num_hidden_layers"],
                   n_heads=config["num_attention_heads"], d_ff=config["intermediate_size"],
                   vocab_size=config["vocab_size"], rms_eps=config.get("rms_norm_eps", 1e-5),
                   rope_base=config.get("rope_theta", 10000.0), **options).validate()

    def with_(self, **changes) -> ModelConfig:
        return replace(self, **changes).validate()

    def to_json(self) -> dict:
        return asdict(self)


def param_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every array's shape, in the order init_params draws them (the order of experiments.baseline)."""
    d, F, V = cfg.d_model, cfg.d_ff, cfg.vocab_size
    shapes = {"embed_tokens.weight": (V, d)}
    for i in range(cfg.n_layers):
        pre = f"layers.{i}."
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            shapes[pre + f"self_attn.{name}.weight"] = (d, d)
        shapes[pre + "mlp.gate_proj.weight"] = (F, d)
        shapes[pre + "mlp.up_proj.weight"] = (F, d)
        shapes[pre + "mlp.down_proj.weight"] = (d, F)
        shapes[pre + "input_layernorm.weight"] = (d,)
        shapes[pre + "post_attention_layernorm.weight"] = (d,)
    shapes["norm.weight"] = (d,)
    return shapes


def init_std(cfg: ModelConfig, name: str) -> float:
    """The standard deviation a weight is drawn with (0 for the RMSNorm gains, which start at 1)."""
    if name.endswith("layernorm.weight") or name == "norm.weight":
        return 0.0
    if name.endswith(("o_proj.weight", "down_proj.weight")):
        return cfg.init_std / math.sqrt(2 * cfg.n_layers)
    return cfg.init_std


def init_params(cfg: ModelConfig, seed: int = 0, dtype=np.float32) -> dict[str, np.ndarray]:
    """Named arrays drawn from one numpy Generator in a fixed order: the same seed gives the same weights on
    every platform (and, at the baseline size, the same weights as experiments.baseline.init_params)."""
    cfg.validate()
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(cfg).items():
        std = init_std(cfg, name)
        if std == 0.0:
            params[name] = np.ones(shape, dtype=dtype)
        else:
            params[name] = (rng.standard_normal(shape) * std).astype(np.float32).astype(dtype)
    return params


def count_params(params: dict[str, np.ndarray]) -> int:
    return sum(int(a.size) for a in params.values())


# ---- the pieces, each with its backward -------------------------------------------------------------------

def rms_norm(x, w, eps):
    """h = x / s * w with s = sqrt(mean(x^2) + eps) over the last axis; returns h and (n = x/s, s)."""
    s = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    n = x / s
    return n * w, (n, s)


def rms_norm_backward(dh, w, cache):
    """dL/dx and dL/dw of h = n * w, n = x / s:  dx = (dn - n * mean(dn * n)) / s with dn = dh * w."""
    n, s = cache
    dw = np.sum((dh * n).reshape(-1, n.shape[-1]), axis=0)
    dn = dh * w
    dx = (dn - n * np.mean(dn * n, axis=-1, keepdims=True)) / s
    return dx, dw


def rope_tables(T: int, hd: int, base: float, dtype):
    """cos and sin of position t times inv_freq_j = base^(-2j/hd), (T, hd/2), computed in float64 and cast
    (as experiments.baseline.rope does)."""
    inv = base ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
    ang = np.arange(T, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)


def rope(x, cos, sin):
    """Rotate the two halves of the last axis: (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos)."""
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def rope_backward(dy, cos, sin):
    """The transpose of the rotation: dx1 = dy1 cos + dy2 sin, dx2 = -dy1 sin + dy2 cos."""
    h = dy.shape[-1] // 2
    d1, d2 = dy[..., :h], dy[..., h:]
    return np.concatenate([d1 * cos + d2 * sin, d2 * cos - d1 * sin], axis=-1)


def silu(a):
    return a / (1.0 + np.exp(-a))


def silu_grad(a):
    """d silu(a) / da = sigma(a) (1 + a (1 - sigma(a)))."""
    sig = 1.0 / (1.0 + np.exp(-a))
    return sig * (1.0 + a * (1.0 - sig))


def cross_entropy(logits, targets):
    """Mean of -log softmax(logits)[target] over the N rows of a (N, V) array; also returns the softmax."""
    z = logits - logits.max(axis=-1, keepdims=True)
    ez = np.exp(z)
    sum_ez = ez.sum(axis=-1, keepdims=True)
    rows = np.arange(logits.shape[0])
    nll = np.log(sum_ez[:, 0]) - z[rows, targets]
    return float(np.mean(nll)), ez / sum_ez


# ---- the network ------------------------------------------------------------------------------------------

def _heads(a, B, T, H, hd):
    """(N, d) -> (B, H, T, hd)."""
    return a.reshape(B, T, H, hd).transpose(0, 2, 1, 3)


def _merge(a, B, T, d):
    """(B, H, T, hd) -> (N, d)."""
    return a.transpose(0, 2, 1, 3).reshape(B * T, d)


def forward(params, ids, cfg: ModelConfig, kernels=None, keep=True):
    """Logits (N, V) for token ids (B, T), the per-layer max attention logit, and (if keep) the activations
    the backward pass needs."""
    K = _kernels.get(kernels)
    ids = np.asarray(ids)
    if ids.ndim == 1:
        ids = ids[None, :]
    B, T = ids.shape
    d, H, hd, eps = cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.rms_eps
    dtype = params["embed_tokens.weight"].dtype
    cos, sin = rope_tables(T, hd, cfg.rope_base, dtype)
    scale = dtype.type(math.sqrt(hd))
    mask = np.triu(np.full((T, T), -np.inf, dtype=dtype), k=1)
    x = params["embed_tokens.weight"][ids.reshape(-1).astype(np.int64)]          # (N, d)
    layers, max_logits = [], []
    for i in range(cfg.n_layers):
        pre = f"layers.{i}."
        c = {}
        # attention sublayer: x + o_proj(attn(rope(q), rope(k), v)) on h1 = norm(x)
        h1, c["n1"] = rms_norm(x, params[pre + "input_layernorm.weight"], eps)
        q = _heads(K.x_wT(h1, params[pre + "self_attn.q_proj.weight"]), B, T, H, hd)
        k = _heads(K.x_wT(h1, params[pre + "self_attn.k_proj.weight"]), B, T, H, hd)
        v = _heads(K.x_wT(h1, params[pre + "self_attn.v_proj.weight"]), B, T, H, hd)
        qr, kr = rope(q, cos, sin), rope(k, cos, sin)
        S = K.bmm(qr, kr.transpose(0, 1, 3, 2)) / scale + mask                    # (B, H, T, T)
        max_logits.append(float(S.max()))
        P = np.exp(S - S.max(-1, keepdims=True))
        P = P / P.sum(-1, keepdims=True)
        att = _merge(K.bmm(P, v), B, T, d)                                         # (N, d)
        x = x + K.x_wT(att, params[pre + "self_attn.o_proj.weight"])
        # FFN sublayer: x + down(silu(gate(h2)) * up(h2)) on h2 = norm(x)
        h2, c["n2"] = rms_norm(x, params[pre + "post_attention_layernorm.weight"], eps)
        a = K.x_wT(h2, params[pre + "mlp.gate_proj.weight"])
        b = K.x_wT(h2, params[pre + "mlp.up_proj.weight"])
        sa = silu(a)
        m = sa * b
        x = x + K.x_wT(m, params[pre + "mlp.down_proj.weight"])
        if keep:
            c.update(h1=h1, qr=qr, kr=kr, v=v, P=P, att=att, h2=h2, a=a, b=b, sa=sa, m=m)
            layers.append(c)
    hf, nf = rms_norm(x, params["norm.weight"], eps)
    logits = K.x_wT(hf, params["embed_tokens.weight"])                              # tied head, (N, V)
    cache = {"ids": ids, "cos": cos, "sin": sin, "scale": scale, "layers": layers, "hf": hf, "nf": nf}
    return logits, max_logits, (cache if keep else None)


def loss_and_grads(params, ids, targets, cfg: ModelConfig, kernels=None):
    """Mean cross-entropy of predicting targets (B, T) from ids (B, T), the gradient of every parameter
    (same names, shapes and dtype), and the forward's diagnostics."""
    K = _kernels.get(kernels)
    logits, max_logits, c = forward(params, ids, cfg, K, keep=True)
    ids = c["ids"]
    B, T = ids.shape
    N, d, H, hd, eps = B * T, cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.rms_eps
    t = np.asarray(targets).reshape(-1).astype(np.int64)
    loss, probs = cross_entropy(logits, t)
    cos, sin, scale = c["cos"], c["sin"], c["scale"]
    g = {}
    # loss = mean(lse - logit[t])  ->  dlogits = (softmax - onehot) / N
    dlogits = probs
    dlogits[np.arange(N), t] -= 1
    dlogits /= dlogits.dtype.type(N)
    E = params["embed_tokens.weight"]
    g["embed_tokens.weight"] = K.dyT_x(dlogits, c["hf"])                            # head's share of dE
    dx, g["norm.weight"] = rms_norm_backward(K.dy_w(dlogits, E), params["norm.weight"], c["nf"])
    for i in reversed(range(cfg.n_layers)):
        pre, L = f"layers.{i}.", c["layers"][i]
        # x = x + m @ Wd.T
        Wd = params[pre + "mlp.down_proj.weight"]
        g[pre + "mlp.down_proj.weight"] = K.dyT_x(dx, L["m"])
        dm = K.dy_w(dx, Wd)
        # m = silu(a) * b
        da = dm * L["b"] * silu_grad(L["a"])
        db = dm * L["sa"]
        g[pre + "mlp.gate_proj.weight"] = K.dyT_x(da, L["h2"])
        g[pre + "mlp.up_proj.weight"] = K.dyT_x(db, L["h2"])
        dh2 = K.dy_w(da, params[pre + "mlp.gate_proj.weight"]) + K.dy_w(db, params[pre + "mlp.up_proj.weight"])
        dx2, g[pre + "post_attention_layernorm.weight"] = rms_norm_backward(
            dh2, params[pre + "post_attention_layernorm.weight"], L["n2"])
        dx = dx + dx2
        # x = x + att @ Wo.T
        g[pre + "self_attn.o_proj.weight"] = K.dyT_x(dx, L["att"])
        datt = _heads(K.dy_w(dx, params[pre + "self_attn.o_proj.weight"]), B, T, H, hd)
        # att = P @ v
        P, v = L["P"], L["v"]
        dP = K.bmm(datt, v.transpose(0, 1, 3, 2))
        dv = K.bmm(P.transpose(0, 1, 3, 2), datt)
        # P = softmax(S): dS = P * (dP - sum(dP * P));  S = qr @ kr.T / scale + mask
        dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
        dS = dS / scale
        dqr = K.bmm(dS, L["kr"])
        dkr = K.bmm(dS.transpose(0, 1, 3, 2), L["qr"])
        dq = _merge(rope_backward(dqr, cos, sin), B, T, d)
        dk = _merge(rope_backward(dkr, cos, sin), B, T, d)
        dv = _merge(dv, B, T, d)
        h1 = L["h1"]
        dh1 = 0
        for name, dy in (("q_proj", dq), ("k_proj", dk), ("v_proj", dv)):
            g[pre + f"self_attn.{name}.weight"] = K.dyT_x(dy, h1)
            dh1 = dh1 + K.dy_w(dy, params[pre + f"self_attn.{name}.weight"])
        dx1, g[pre + "input_layernorm.weight"] = rms_norm_backward(
            dh1, params[pre + "input_layernorm.weight"], L["n1"])
        dx = dx + dx1
    # x0 = E[ids]: scatter-add each row's gradient onto its token's embedding row
    np.add.at(g["embed_tokens.weight"], ids.reshape(-1).astype(np.int64), dx)
    grads = {name: g[name] for name in params}
    return loss, grads, {"max_attn_logit": max(max_logits), "max_attn_logit_per_layer": max_logits}


def loss_only(params, ids, targets, cfg: ModelConfig, kernels=None) -> float:
    logits, _, _ = forward(params, ids, cfg, kernels, keep=False)
    return cross_entropy(logits, np.asarray(targets).reshape(-1).astype(np.int64))[0]
