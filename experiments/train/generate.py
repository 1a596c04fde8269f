"""Next-token generation on the course trainer's model (experiments/train/model.py): greedy decoding and sampling
with a temperature, top-k and top-p (nucleus), drawn from a seeded numpy Generator. No I/O; the build (the stored
speaker model, lesson C2) and the page's worker run this same code.

One step turns the last position's logits z (length V) into a distribution and picks one token:
- temperature T > 0: p = softmax(z / T) (T = 1 the model's own distribution; T -> 0 puts all the mass on the
  largest logit; T = 0 is greedy decoding, the argmax);
- top-k (Fan, Lewis and Dauphin 2018, arXiv 1805.04833): keep the k largest logits, renormalise;
- top-p, nucleus sampling (Holtzman et al. 2019, arXiv 1904.09751): sort the probabilities in decreasing order and
  keep the smallest prefix whose mass reaches p, renormalise.
Order as nanoGPT's sample.py and Hugging Face's generate: temperature, then top-k, then top-p. Ties are broken
by the lower token id (a stable sort), so every platform keeps the same set.

The distribution is computed in float64 from the model's float32 logits, and a token is drawn by the inverse CDF of
one uniform number u = rng.random() (searchsorted in the cumulative sum): the same seed, logits and settings give
the same token everywhere, whatever the BLAS. The model attends over at most `context` past tokens (the training
windows are short; work per step stays bounded).

KV-cached decoding (lesson C3): prefill runs the prompt once and keeps, per layer, the rotated keys and the values
of its n_kv_heads key/value heads (model.new_kv_cache); each decode_step then runs ONE new position, which attends
to the cached ones, and appends its own key and value. A causal model's earlier positions never see later ones, so
their keys and values do not change and the logits are those of the full forward pass (tests/test_train_attention.py
holds them within 1e-6 in float64). Work per new token at t positions (step_flops): the full pass recomputes all t
positions, 2·P_w·t for the weight products (P_w = the weights multiplied per position, the tied head included)
plus 4·L·H·hd·t² for the scores and the weighted values; the cached step does 2·P_w + 4·L·H·hd·t. The cache costs
2·L·n_kv_heads·hd numbers per position (grouped heads divide it by the group G). Generation attends over at most
`context` positions: while the sequence fits, one cache serves it; past that the window slides, every position's
RoPE position moves, and each step is a prefill of the last `context` tokens (what the uncached path computes), so
both paths give the same tokens.
"""
from __future__ import annotations

import base64
import math

import numpy as np

from . import model as M

TEMPERATURE_MAX = 10.0       # settings outside these bounds are clamped by the callers that take a learner's input


def softmax(z) -> np.ndarray:
    """softmax of a float64 vector (the max subtracted first: no overflow at any temperature)."""
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def top_p_keep(probs, p: float) -> np.ndarray:
    """The token ids of the smallest set of most probable tokens whose total probability reaches p (0 < p <= 1):
    the first tokens in decreasing order of probability (ties: lower id first) until the running sum >= p."""
    order = np.argsort(-np.asarray(probs, dtype=np.float64), kind="stable")
    mass = np.cumsum(np.asarray(probs, dtype=np.float64)[order])
    n = int(np.searchsorted(mass, p * (1 - 1e-12), side="left")) + 1     # first index where mass >= p
    return order[:min(n, len(order))]


def next_distribution(logits, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
    """The distribution the next token is drawn from (float64, sums to 1): one-hot at the argmax when
    temperature == 0 (greedy), else softmax(logits / T) restricted to the top-k (k > 0) and then to the top-p
    nucleus (p < 1), renormalised."""
    z = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        out = np.zeros_like(z)
        out[int(np.argmax(z))] = 1.0
        return out
    probs = softmax(z / temperature)
    if 0 < top_k < len(z):
        keep = np.argsort(-z, kind="stable")[:top_k]
        masked = np.zeros_like(probs)
        masked[keep] = probs[keep]
        probs = masked / masked.sum()
    if top_p < 1:
        keep = top_p_keep(probs, top_p)
        masked = np.zeros_like(probs)
        masked[keep] = probs[keep]
        probs = masked / masked.sum()
    return probs


def draw(probs, u: float) -> int:
    """The token whose cumulative-probability interval holds u in [0, 1) (inverse CDF); never a zero-mass token."""
    cdf = np.cumsum(probs)
    i = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
    i = min(i, len(cdf) - 1)
    while probs[i] == 0 and i > 0:          # u at the very top of the range: the last token with mass
        i -= 1
    return i


def last_logits(params, cfg: M.ModelConfig, ids, context: int) -> np.ndarray:
    """The logits at the last position of a forward pass over the last `context` ids (float64, length V)."""
    window = np.asarray(ids, dtype=np.int64)[-context:]
    logits, _, _ = M.forward(params, window[None, :], cfg, keep=False)
    return np.asarray(logits[-1], dtype=np.float64)


def prefill(params, cfg: M.ModelConfig, ids, max_len: int | None = None):
    """Run the prompt ids (at least one) once: the logits after its last position (float64, length V) and a KV cache
    holding every layer's rotated keys and values of its positions. max_len (default: no bound) bounds the positions
    the cache may hold; decode_step refuses to go past it."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if ids.size == 0:
        raise ValueError("prompt: expected at least one token")
    if max_len is not None and ids.size > max_len:
        raise ValueError(f"prompt: expected at most max_len = {max_len} tokens, got {ids.size}")
    cache = M.new_kv_cache(cfg)
    cache["max_len"] = max_len
    logits, _, _ = M.forward(params, ids[None, :], cfg, keep=False, kv=cache)
    return np.asarray(logits[-1], dtype=np.float64), cache


def decode_step(params, cfg: M.ModelConfig, cache: dict, token_id: int):
    """One new position: token_id after the cache's positions. Its logits (float64, length V) and the cache with
    its key and value appended (the same dict)."""
    if cache.get("max_len") is not None and cache["pos"] >= cache["max_len"]:
        raise ValueError(f"cache: full at max_len = {cache['max_len']} positions")
    logits, _, _ = M.forward(params, np.array([[int(token_id)]], dtype=np.int64), cfg, keep=False, kv=cache)
    return np.asarray(logits[-1], dtype=np.float64), cache


def step_flops(cfg: M.ModelConfig, t: int, use_cache: bool) -> int:
    """Multiply-add FLOPs (2 per multiply-add) of the matrix products that give the next token's logits when the
    sequence has t positions: the cached step runs one position against t keys, the full pass all t positions
    (its scores a full t x t matrix, as forward computes them). P_w = the weights each position multiplies: q, k,
    v, o, the three FFN matrices of every layer and the tied head."""
    d, hd, H = cfg.d_model, cfg.head_dim, cfg.n_heads
    per_layer = d * d * 2 + 2 * cfg.kv_dim * d + 3 * d * cfg.d_ff
    p_w = cfg.n_layers * per_layer + cfg.vocab_size * d
    rows = 1 if use_cache else t
    return 2 * p_w * rows + 4 * cfg.n_layers * H * hd * rows * t


def generate(params, cfg: M.ModelConfig, prompt_ids, n_new: int, temperature: float = 1.0, top_k: int = 0,
             top_p: float = 1.0, seed: int = 0, context: int = 64, use_cache: bool = True) -> list[int]:
    """n_new token ids continuing prompt_ids (at least one id): greedy when temperature == 0, else sampled from
    next_distribution with one rng.random() per token of a Generator seeded with `seed`. use_cache: decode with a
    KV cache while the sequence fits in `context` (the same tokens as without; see the module docstring)."""
    ids = [int(i) for i in prompt_ids]
    if not ids:
        raise ValueError("prompt: expected at least one token")
    rng = np.random.default_rng(seed)
    out: list[int] = []
    cache = None
    for _ in range(n_new):
        if not use_cache or len(ids) > context:
            logits = last_logits(params, cfg, ids, context)
        elif cache is None:
            logits, cache = prefill(params, cfg, ids, max_len=context)
        else:
            logits, cache = decode_step(params, cfg, cache, ids[-1])
        probs = next_distribution(logits, temperature, top_k, top_p)
        tok = int(np.argmax(probs)) if temperature == 0 else draw(probs, rng.random())
        ids.append(tok)
        out.append(tok)
    return out


# ---- a model as JSON (the stored speaker of lesson C2): float16 weights, base64 ----------------------------------

def pack_params(params: dict) -> dict:
    """{name: {"shape": [...], "f16": base64 of the little-endian float16 bytes}}."""
    return {k: {"shape": list(a.shape), "f16": base64.b64encode(a.astype("<f2").tobytes()).decode("ascii")}
            for k, a in params.items()}


def unpack_params(packed: dict) -> dict:
    """pack_params's inverse, as float32 arrays."""
    out = {}
    for k, v in packed.items():
        a = np.frombuffer(base64.b64decode(v["f16"]), dtype="<f2").astype(np.float32)
        if a.size != math.prod(v["shape"]):
            raise ValueError(f"{k}: expected {math.prod(v['shape'])} weights, got {a.size}")
        out[k] = a.reshape(v["shape"])
    return out
