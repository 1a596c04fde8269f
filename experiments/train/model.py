"""The course's decoder as a trainable numpy network: forward pass, loss and a hand-written backward pass.

Architecture (the course baseline of lesson C4, experiments/baseline.py, at any size): token embedding, L decoder
layers of [pre-RMSNorm -> causal attention with grouped key/value heads and RoPE -> residual add] and [pre-RMSNorm ->
SwiGLU FFN -> residual add], a final RMSNorm, an output head tied to the embedding, and the mean next-token cross-
entropy. No biases. Initialisation as GPT-2 (normal, std 0.02; the two residual output projections o_proj and
down_proj scaled by 1/sqrt(2L)), drawn in the same order as experiments.baseline.init_params, so the baseline size
starts from the very weights the C4 page runs.

The stability variants of lesson C8, each a ModelConfig field whose default is the baseline above:
- norm_position "post": Post-LN (Vaswani et al. 2017; Xiong et al. 2020, arXiv 2002.04745): x <- norm(x + f(x))
  per sublayer, input_layernorm after the attention residual, post_attention_layernorm after the FFN's, and no
  final norm (the last layer's output is already normalised; norm.weight is then not a parameter).
- qk_norm: RMSNorm over head_dim on every head's q and k before RoPE, with gains self_attn.q_norm.weight and
  self_attn.k_norm.weight (head_dim each; Qwen3's and OLMo 2's q_norm / k_norm).
- attn_softcap c: attention logits c tanh(s / c) before the mask (Gemma 2, arXiv 2408.00118: 50).
- logit_softcap c: output logits c tanh(z / c) (Gemma 2: 30).
- z_loss: the objective adds z_loss * mean over rows of (log Z)^2, log Z = logsumexp of the row's output logits
  (PaLM, arXiv 2204.02311: 1e-4). The reported loss stays the cross-entropy.
- residual_init "none": o_proj and down_proj drawn with init_std, not init_std / sqrt(2L).
- qk_clip tau (Kimi K2, arXiv 2507.20534) rescales weights after the optimiser's step: experiments.train.trainer.

Attention (lesson C3): scaled dot-product attention (Vaswani et al. 2017, arXiv 1706.03762), softmax(q k^T /
sqrt(hd) + mask) v per head, the mask -inf above the diagonal (causal: position t sees positions <= t). Keys and
values have n_kv_heads heads that groups of G = n_heads / n_kv_heads query heads share (grouped-query attention,
Ainslie et al. 2023, arXiv 2305.13245): G = 1 is multi-head attention, n_kv_heads = 1 multi-query attention
(Shazeer 2019, arXiv 1911.02150). Query head h reads key/value head h // G, as Hugging Face's repeat_kv expands
them; the backward sums the G query heads' gradients into their shared head. RoPE (Su et al., RoFormer, arXiv
2104.09864) rotates q and k by their absolute positions, so their product depends only on the offset.
- causal False removes the mask (lesson C3's leak: every position sees the token it is asked to predict).
- forward(..., kv=KV cache) runs new positions after cached ones (KV-cached decoding, experiments/train/generate.py).

Symbols: B sequences of T tokens, N = B*T token rows, d = d_model, H query heads of head_dim hd = d/H, Hkv =
n_kv_heads key/value heads, G = H / Hkv, F = d_ff, V = vocab_size. Weights are stored (out, in) under Hugging Face's
names. The backward pass is the chain rule written out per operation (each step names the forward line it undoes);
tests check it against central finite differences in float64 and against torch autograd.

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
    "norm_position": ("pre", "post"),   # Pre-LN / Post-LN
    "qk_norm": (False, True),           # RMSNorm on q and k per head
    "residual_init": ("gpt2", "none"),  # std / sqrt(2L) on o_proj and down_proj, or plain std
    "causal": (True, False),            # the causal mask, or none (lesson C3's leak of the future)
}
# Non-negative numbers, 0 = off: QK-Clip's threshold tau, the z-loss coefficient, the two soft-caps.
NON_NEGATIVE_OPTIONS = ("qk_clip", "z_loss", "logit_softcap", "attn_softcap")


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
    attn_softcap: float = 0.0
    n_kv_heads: int = 2                 # grouped key/value heads: 4 query heads share 2 (GQA, group of 2)
    causal: bool = True

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def group(self) -> int:
        """G: the query heads that share one key/value head."""
        return self.n_heads // self.n_kv_heads

    @property
    def kv_dim(self) -> int:
        """The width of k_proj's and v_proj's outputs: n_kv_heads * head_dim."""
        return self.n_kv_heads * self.head_dim

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
        kv = self.n_kv_heads
        if not problems and (not isinstance(kv, int) or isinstance(kv, bool) or kv <= 0 or self.n_heads % kv):
            problems.append(f"n_kv_heads: expected a positive divisor of n_heads {self.n_heads}, got {kv!r}")
        for key, allowed in IMPLEMENTED_OPTIONS.items():
            if getattr(self, key) not in allowed:
                problems.append(f"{key}: expected one of {list(allowed)} (others not implemented yet), "
                                f"got {getattr(self, key)!r}")
        for key in NON_NEGATIVE_OPTIONS:
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < math.inf):
                problems.append(f"{key}: expected a non-negative number (0 = off), got {v!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @classmethod
    def from_hf(cls, config: dict, **options) -> ModelConfig:
        """From a llama-style config.json (the course baseline's data/models/baseline/config.json)."""
        if not config.get("tie_word_embeddings", False):
            raise ValueError("tie_word_embeddings: expected true (the trainer's head is tied), got "
                             f"{config.get('tie_word_embeddings')!r}")
        fields = dict(d_model=config["hidden_size"], n_layers=config["num_hidden_layers"],
                      n_heads=config["num_attention_heads"], d_ff=config["intermediate_size"],
                      vocab_size=config["vocab_size"], rms_eps=config.get("rms_norm_eps", 1e-5),
                      rope_base=config.get("rope_theta", 10000.0),
                      n_kv_heads=config.get("num_key_value_heads", config["num_attention_heads"]))
        return cls(**{**fields, **options}).validate()

    def with_(self, **changes) -> ModelConfig:
        return replace(self, **changes).validate()

    def to_json(self) -> dict:
        return asdict(self)


def param_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every array's shape, in the order init_params draws them (the order of experiments.baseline)."""
    d, F, V = cfg.d_model, cfg.d_ff, cfg.vocab_size
    shapes: dict[str, tuple[int, ...]] = {"embed_tokens.weight": (V, d)}
    for i in range(cfg.n_layers):
        pre = f"layers.{i}."
        shapes[pre + "self_attn.q_proj.weight"] = (d, d)
        shapes[pre + "self_attn.k_proj.weight"] = (cfg.kv_dim, d)
        shapes[pre + "self_attn.v_proj.weight"] = (cfg.kv_dim, d)
        shapes[pre + "self_attn.o_proj.weight"] = (d, d)
        shapes[pre + "mlp.gate_proj.weight"] = (F, d)
        shapes[pre + "mlp.up_proj.weight"] = (F, d)
        shapes[pre + "mlp.down_proj.weight"] = (d, F)
        shapes[pre + "input_layernorm.weight"] = (d,)
        shapes[pre + "post_attention_layernorm.weight"] = (d,)
        if cfg.qk_norm:                         # gains start at 1: no draw, the other weights stay the same
            shapes[pre + "self_attn.q_norm.weight"] = (cfg.head_dim,)
            shapes[pre + "self_attn.k_norm.weight"] = (cfg.head_dim,)
    if cfg.norm_position == "pre":              # Post-LN's last layer ends in a norm already
        shapes["norm.weight"] = (d,)
    return shapes


def init_std(cfg: ModelConfig, name: str) -> float:
    """The standard deviation a weight is drawn with (0 for the RMSNorm gains, which start at 1)."""
    if name.endswith(("layernorm.weight", "_norm.weight")) or name == "norm.weight":
        return 0.0
    if name.endswith(("o_proj.weight", "down_proj.weight")) and cfg.residual_init == "gpt2":
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


def param_count(cfg: ModelConfig) -> int:
    """The parameters a config makes (what count_params gives of its init_params, without drawing them)."""
    return sum(math.prod(shape) for shape in param_shapes(cfg).values())


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


def rope_tables(T: int, hd: int, base: float, dtype, start: int = 0):
    """cos and sin of position t times inv_freq_j = base^(-2j/hd) for t = start .. start+T-1, (T, hd/2), computed
    in float64 and cast (as experiments.baseline.rope does)."""
    inv = base ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
    ang = np.arange(start, start + T, dtype=np.float64)[:, None] * inv[None, :]
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
    loss, probs, _ = cross_entropy_log_z(logits, targets)
    return loss, probs


def cross_entropy_log_z(logits, targets):
    """The mean cross-entropy, the softmax, and each row's log Z = logsumexp(logits) (the softmax's log
    normaliser, which z-loss pulls towards 0)."""
    top = logits.max(axis=-1, keepdims=True)
    z = logits - top
    ez = np.exp(z)
    sum_ez = ez.sum(axis=-1, keepdims=True)
    rows = np.arange(logits.shape[0])
    log_sum = np.log(sum_ez[:, 0])
    nll = log_sum - z[rows, targets]
    return float(np.mean(nll)), ez / sum_ez, log_sum + top[:, 0]


def softcap(x, cap):
    """c tanh(x / c) (Gemma 2's soft-capping) and the tanh, which its backward needs."""
    c = x.dtype.type(cap)
    t = np.tanh(x / c)
    return c * t, t


def softcap_backward(dy, t):
    """d/dx of c tanh(x / c) = 1 - tanh^2."""
    return dy * (1 - t * t)


# ---- the network ------------------------------------------------------------------------------------------

def _heads(a, B, T, H, hd):
    """(N, d) -> (B, H, T, hd)."""
    return a.reshape(B, T, H, hd).transpose(0, 2, 1, 3)


def _merge(a, B, T, d):
    """(B, H, T, hd) -> (N, d)."""
    return a.transpose(0, 2, 1, 3).reshape(B * T, d)


def repeat_kv(a, G: int):
    """(B, Hkv, S, hd) -> (B, Hkv*G, S, hd): key/value head j serves query heads j*G .. j*G+G-1 (Hugging Face's
    repeat_kv)."""
    return a if G == 1 else np.repeat(a, G, axis=1)


def sum_groups(da, G: int):
    """repeat_kv's backward: (B, Hkv*G, S, hd) -> (B, Hkv, S, hd), each shared head's gradient summed over the G
    query heads that read it."""
    if G == 1:
        return da
    B, H, S, hd = da.shape
    return da.reshape(B, H // G, G, S, hd).sum(axis=2)


def attention_tables(cfg: ModelConfig, B: int, T: int, dtype, past: int = 0):
    """What every layer's attention shares for B sequences of T new positions after `past` cached ones: RoPE's cos
    and sin at positions past .. past+T-1, the scale sqrt(hd) and the additive mask (T, past+T): -inf where a query
    at position past+i would see a key at a later position (none when cfg.causal is False)."""
    cos, sin = rope_tables(T, cfg.head_dim, cfg.rope_base, dtype, start=past)
    mask = np.zeros((T, past + T), dtype=dtype)
    if cfg.causal:
        mask = np.triu(np.full((T, past + T), -np.inf, dtype=dtype), k=past + 1)
    return B, T, cos, sin, dtype.type(math.sqrt(cfg.head_dim)), mask


def _attention(params, pre, h1, cfg, K, tables, c, past=None):
    """o_proj(softmax(cap(rope(q) rope(k)^T / sqrt(hd)) + mask) v) on h1 (N, d), k and v read through repeat_kv;
    past: the cached (rotated keys, values) of earlier positions, each (B, Hkv, S, hd), put before the new ones.
    Records in c what the backward needs (kr and v: all positions' rotated keys and values, Hkv heads: what a KV
    cache keeps); returns the output (N, d), the largest logit entering the softmax and each query head's largest
    raw logit q.k / sqrt(hd) (before any soft-cap: QK-Clip's S_max)."""
    B, T, cos, sin, scale, mask = tables
    d, H, Hkv, hd, eps = cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim, cfg.rms_eps
    q = _heads(K.x_wT(h1, params[pre + "self_attn.q_proj.weight"]), B, T, H, hd)
    k = _heads(K.x_wT(h1, params[pre + "self_attn.k_proj.weight"]), B, T, Hkv, hd)
    v = _heads(K.x_wT(h1, params[pre + "self_attn.v_proj.weight"]), B, T, Hkv, hd)
    if cfg.qk_norm:                                                                # q <- rmsnorm_hd(q) * g_q
        q, c["qn"] = rms_norm(q, params[pre + "self_attn.q_norm.weight"], eps)
        k, c["kn"] = rms_norm(k, params[pre + "self_attn.k_norm.weight"], eps)
    qr, kr = rope(q, cos, sin), rope(k, cos, sin)
    if past is not None:                                                           # cached positions first
        kr, v = np.concatenate([past[0], kr], axis=2), np.concatenate([past[1], v], axis=2)
    S = K.bmm(qr, repeat_kv(kr, cfg.group).transpose(0, 1, 3, 2)) / scale          # (B, H, T, past+T)
    if cfg.attn_softcap:                                                           # s <- c tanh(s / c)
        head_max = (S + mask).max(axis=(0, 2, 3))
        S, c["t_att"] = softcap(S, cfg.attn_softcap)
        S = S + mask
    else:
        S = S + mask
        head_max = S.max(axis=(0, 2, 3))
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    att = _merge(K.bmm(P, repeat_kv(v, cfg.group)), B, T, d)                       # (N, d)
    c.update(h1=h1, qr=qr, kr=kr, v=v, P=P, att=att)
    return K.x_wT(att, params[pre + "self_attn.o_proj.weight"]), float(S.max()), [float(m) for m in head_max]


def _attention_backward(params, pre, dy, cfg, K, tables, L, g):
    """Gradients of _attention's weights into g, given dL/d(output) dy (N, d); returns dL/dh1."""
    B, T, cos, sin, scale, _ = tables
    d, H, hd, G = cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.group
    # out = att @ Wo.T
    g[pre + "self_attn.o_proj.weight"] = K.dyT_x(dy, L["att"])
    datt = _heads(K.dy_w(dy, params[pre + "self_attn.o_proj.weight"]), B, T, H, hd)
    # att = P @ repeat_kv(v): the G query heads' gradients of a shared value head add up
    P, v = L["P"], repeat_kv(L["v"], G)
    dP = K.bmm(datt, v.transpose(0, 1, 3, 2))
    dv = sum_groups(K.bmm(P.transpose(0, 1, 3, 2), datt), G)
    # P = softmax(S): dS = P * (dP - sum(dP * P));  S = qr @ kr.T / scale + mask
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    if cfg.attn_softcap:
        dS = softcap_backward(dS, L["t_att"])
    dS = dS / scale
    dqr = K.bmm(dS, repeat_kv(L["kr"], G))
    dkr = sum_groups(K.bmm(dS.transpose(0, 1, 3, 2), L["qr"]), G)
    dq, dk = rope_backward(dqr, cos, sin), rope_backward(dkr, cos, sin)
    if cfg.qk_norm:
        dq, g[pre + "self_attn.q_norm.weight"] = rms_norm_backward(dq, params[pre + "self_attn.q_norm.weight"],
                                                                   L["qn"])
        dk, g[pre + "self_attn.k_norm.weight"] = rms_norm_backward(dk, params[pre + "self_attn.k_norm.weight"],
                                                                   L["kn"])
    dq, dk, dv = _merge(dq, B, T, d), _merge(dk, B, T, cfg.kv_dim), _merge(dv, B, T, cfg.kv_dim)
    h1 = L["h1"]
    dh1 = 0
    for name, dyp in (("q_proj", dq), ("k_proj", dk), ("v_proj", dv)):
        g[pre + f"self_attn.{name}.weight"] = K.dyT_x(dyp, h1)
        dh1 = dh1 + K.dy_w(dyp, params[pre + f"self_attn.{name}.weight"])
    return dh1


def _ffn(params, pre, h2, K, c):
    """down(silu(gate(h2)) * up(h2))."""
    a = K.x_wT(h2, params[pre + "mlp.gate_proj.weight"])
    b = K.x_wT(h2, params[pre + "mlp.up_proj.weight"])
    sa = silu(a)
    m = sa * b
    c.update(h2=h2, a=a, b=b, sa=sa, m=m)
    return K.x_wT(m, params[pre + "mlp.down_proj.weight"])


def _ffn_backward(params, pre, dy, K, L, g):
    """Gradients of _ffn's weights into g, given dL/d(output) dy; returns dL/dh2."""
    # out = m @ Wd.T
    g[pre + "mlp.down_proj.weight"] = K.dyT_x(dy, L["m"])
    dm = K.dy_w(dy, params[pre + "mlp.down_proj.weight"])
    # m = silu(a) * b
    da = dm * L["b"] * silu_grad(L["a"])
    db = dm * L["sa"]
    g[pre + "mlp.gate_proj.weight"] = K.dyT_x(da, L["h2"])
    g[pre + "mlp.up_proj.weight"] = K.dyT_x(db, L["h2"])
    return K.dy_w(da, params[pre + "mlp.gate_proj.weight"]) + K.dy_w(db, params[pre + "mlp.up_proj.weight"])


def new_kv_cache(cfg: ModelConfig) -> dict:
    """An empty KV cache for forward(..., kv=): per layer the rotated keys and the values of every position so far,
    each (B, n_kv_heads, positions, head_dim), and the number of positions ("pos")."""
    return {"k": [None] * cfg.n_layers, "v": [None] * cfg.n_layers, "pos": 0}


def forward(params, ids, cfg: ModelConfig, kernels=None, keep=True, kv=None):
    """Logits (N, V) for token ids (B, T), the per-layer max attention logit, and (if keep) the activations
    the backward pass needs (the cache also holds each layer's per-head max raw logit, "head_max").
    kv (new_kv_cache's dict): the ids are positions kv["pos"] .. kv["pos"]+T-1 after the cached ones, which they
    attend to; each layer's new rotated keys and values are appended to kv and kv["pos"] advances by T. Decoding
    only: a causal model, no backward (keep must be False)."""
    K = _kernels.get(kernels)
    ids = np.asarray(ids)
    if ids.ndim == 1:
        ids = ids[None, :]
    B, T = ids.shape
    eps = cfg.rms_eps
    dtype = params["embed_tokens.weight"].dtype
    if kv is not None and (keep or not cfg.causal):
        raise ValueError("kv: a KV cache decodes a causal model without a backward pass (keep=False, causal=True)")
    tables = attention_tables(cfg, B, T, dtype, past=kv["pos"] if kv is not None else 0)
    post = cfg.norm_position == "post"
    x = params["embed_tokens.weight"][ids.reshape(-1).astype(np.int64)]          # (N, d)
    layers, max_logits, head_max = [], [], []
    for i in range(cfg.n_layers):
        pre = f"layers.{i}."
        c: dict = {}
        past = (kv["k"][i], kv["v"][i]) if kv is not None and kv["pos"] else None
        g_in, g_post = params[pre + "input_layernorm.weight"], params[pre + "post_attention_layernorm.weight"]
        if post:    # Post-LN: x <- norm(x + attn(x)), then x <- norm(x + ffn(x))
            out, top, heads = _attention(params, pre, x, cfg, K, tables, c, past)
            x, c["n1"] = rms_norm(x + out, g_in, eps)
            out = _ffn(params, pre, x, K, c)
            x, c["n2"] = rms_norm(x + out, g_post, eps)
        else:       # Pre-LN: x <- x + attn(norm(x)), then x <- x + ffn(norm(x))
            h1, c["n1"] = rms_norm(x, g_in, eps)
            out, top, heads = _attention(params, pre, h1, cfg, K, tables, c, past)
            x = x + out
            h2, c["n2"] = rms_norm(x, g_post, eps)
            x = x + _ffn(params, pre, h2, K, c)
        max_logits.append(top)
        head_max.append(heads)
        if kv is not None:
            kv["k"][i], kv["v"][i] = c["kr"], c["v"]
        if keep:
            layers.append(c)
    if kv is not None:
        kv["pos"] += T
    if post:
        hf, nf = x, None
    else:
        hf, nf = rms_norm(x, params["norm.weight"], eps)
    logits = K.x_wT(hf, params["embed_tokens.weight"])                              # tied head, (N, V)
    t_out = None
    if cfg.logit_softcap:                                                            # z <- c tanh(z / c)
        logits, t_out = softcap(logits, cfg.logit_softcap)
    cache = {"ids": ids, "tables": tables, "layers": layers, "hf": hf, "nf": nf, "t_out": t_out,
             "head_max": head_max}
    return logits, max_logits, (cache if keep else None)


def _objective(logits, targets, cfg: ModelConfig):
    """Cross-entropy, the training objective (+ z-loss), the softmax and log Z per row."""
    loss, probs, log_z = cross_entropy_log_z(logits, targets)
    z_term = cfg.z_loss * float(np.mean(np.square(log_z, dtype=np.float64))) if cfg.z_loss else 0.0
    return loss, loss + z_term, z_term, probs, log_z


def loss_and_grads(params, ids, targets, cfg: ModelConfig, kernels=None):
    """Mean cross-entropy of predicting targets (B, T) from ids (B, T), the gradient of the training objective
    (cross-entropy + z-loss) for every parameter (same names, shapes and dtype), and the forward's diagnostics:
    max attention logit (overall, per layer, per layer and head before any soft-cap), the objective and its
    z-loss term, and the output's log Z (mean and max over the rows)."""
    K = _kernels.get(kernels)
    logits, max_logits, c = forward(params, ids, cfg, K, keep=True)
    ids = c["ids"]
    B, T = ids.shape
    N = B * T
    t = np.asarray(targets).reshape(-1).astype(np.int64)
    loss, objective, z_term, probs, log_z = _objective(logits, t, cfg)
    tables = c["tables"]
    g: dict = {}
    # loss = mean(lse - logit[t])  ->  dlogits = (softmax - onehot) / N
    dz = None
    if cfg.z_loss:     # z_loss * mean(lse^2)  ->  + 2 z_loss lse softmax / N
        dz = probs * (log_z[:, None] * probs.dtype.type(2 * cfg.z_loss / N))
    dlogits = probs
    dlogits[np.arange(N), t] -= 1
    dlogits /= dlogits.dtype.type(N)
    if dz is not None:
        dlogits = dlogits + dz
    if c["t_out"] is not None:
        dlogits = softcap_backward(dlogits, c["t_out"])
    E = params["embed_tokens.weight"]
    g["embed_tokens.weight"] = K.dyT_x(dlogits, c["hf"])                            # head's share of dE
    dx = K.dy_w(dlogits, E)
    post = cfg.norm_position == "post"
    if not post:
        dx, g["norm.weight"] = rms_norm_backward(dx, params["norm.weight"], c["nf"])
    for i in reversed(range(cfg.n_layers)):
        pre, L = f"layers.{i}.", c["layers"][i]
        g_in, g_post = params[pre + "input_layernorm.weight"], params[pre + "post_attention_layernorm.weight"]
        if post:
            # x = norm(r2), r2 = x_mid + ffn(x_mid)
            dr, g[pre + "post_attention_layernorm.weight"] = rms_norm_backward(dx, g_post, L["n2"])
            dx = dr + _ffn_backward(params, pre, dr, K, L, g)
            # x_mid = norm(r1), r1 = x_in + attn(x_in)
            dr, g[pre + "input_layernorm.weight"] = rms_norm_backward(dx, g_in, L["n1"])
            dx = dr + _attention_backward(params, pre, dr, cfg, K, tables, L, g)
        else:
            dh2 = _ffn_backward(params, pre, dx, K, L, g)
            dx2, g[pre + "post_attention_layernorm.weight"] = rms_norm_backward(dh2, g_post, L["n2"])
            dx = dx + dx2
            dh1 = _attention_backward(params, pre, dx, cfg, K, tables, L, g)
            dx1, g[pre + "input_layernorm.weight"] = rms_norm_backward(dh1, g_in, L["n1"])
            dx = dx + dx1
    # x0 = E[ids]: scatter-add each row's gradient onto its token's embedding row
    np.add.at(g["embed_tokens.weight"], ids.reshape(-1).astype(np.int64), dx)
    grads = {name: g[name] for name in params}
    diag = {"max_attn_logit": max(max_logits), "max_attn_logit_per_layer": max_logits,
            "max_attn_logit_per_head": c["head_max"], "objective": objective, "z_loss": z_term,
            "log_z_mean": float(np.mean(log_z, dtype=np.float64)), "log_z_max": float(np.max(log_z))}
    return loss, grads, diag


def attention_maps(params, cfg: ModelConfig, ids, kernels=None) -> np.ndarray:
    """The attention probabilities of one sequence of token ids (length T >= 1), (n_layers, n_heads, T, T):
    [layer, query head, query position, key position], each row a softmax summing to 1, zero above the diagonal
    when cfg.causal (the forward pass's own P, in the weights' dtype)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if ids.size == 0:
        raise ValueError("ids: expected at least one token, got none")
    _, _, c = forward(params, ids[None, :], cfg, kernels, keep=True)
    return np.stack([layer["P"][0] for layer in c["layers"]])


def loss_only(params, ids, targets, cfg: ModelConfig, kernels=None) -> float:
    """The mean cross-entropy (what a held-out evaluation reports)."""
    logits, _, _ = forward(params, ids, cfg, kernels, keep=False)
    return cross_entropy(logits, np.asarray(targets).reshape(-1).astype(np.int64))[0]


def objective_only(params, ids, targets, cfg: ModelConfig, kernels=None) -> float:
    """The training objective loss_and_grads differentiates: cross-entropy + z-loss."""
    logits, _, _ = forward(params, ids, cfg, kernels, keep=False)
    return _objective(logits, np.asarray(targets).reshape(-1).astype(np.int64), cfg)[1]
