"""Views of one ledger: purpose breakdown, classic estimate and its gap, compute per token, KV cache, bytes.

Formulas and conventions:
- Classic estimate: 12·L·d² + V·d (4d² attention + 8d² two-matrix FFN per layer, plus the embedding), as in
  Kaplan et al. 2020 and most tutorials. The gap to the true count is itemised by purpose so the items sum
  exactly to (true - classic).
- Forward compute per token: 2 FLOPs per active weight that multiplies an activation (Kaplan et al. 2020);
  embedding lookups are free. Attention scores add, per full-attention layer and per cached token,
  2 steps (q·k, then the weighted sum of v) × 2 FLOPs × heads × head_dim; sliding-window layers stop growing at
  their window; linear-attention layers do not grow with context at all.
- KV cache per token: K and V for every attention layer; linear-attention and Mamba (SSM) layers instead keep a
  fixed-size state; windowed and chunked layers hold at most their window.
- Weight bytes: parameters × bits / 8. Training bytes per parameter: see TRAINING_RECIPES.
"""
from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from . import Ledger

# purpose categories, in the order a learner reads a ledger; the first matching kind on a leaf's path wins
CATEGORIES = ("vision", "mtp", "ffn", "attention", "linear_attention", "mamba", "embedding", "lm_head", "norm")
# kinds of a token mixer (attention, Gated DeltaNet, Mamba)
MIXER_KINDS = ("attention", "linear_attention", "mamba")


def category_of(kinds: tuple[str, ...]) -> str:
    for cat in CATEGORIES:
        if cat in kinds:
            return cat
    raise ValueError(f"leaf with kinds {kinds} has no category")


def breakdown(ledger: Ledger, active: bool = False) -> dict[str, int]:
    """Parameters by purpose over the whole checkpoint; sums exactly to ledger.total (or active parameters)."""
    return dict(ledger.memo(("breakdown", active), lambda: _breakdown(ledger, active)))


def _breakdown(ledger: Ledger, active: bool) -> dict[str, int]:
    out = ledger.root.sum_by(lambda leaf, kinds: category_of(kinds), active)
    order = ("embedding", "attention", "linear_attention", "mamba", "ffn", "norm", "lm_head", "mtp", "vision")
    return {cat: out.get(cat, 0) for cat in order if out.get(cat) or cat in ("embedding", "attention", "ffn", "norm")}


def denominators(ledger: Ledger) -> dict[str, int]:
    """The figures a parameter count can mean, one rule for every family (docs/adding-a-family.md, "Denominators"):
    ``checkpoint`` every tensor the published checkpoint holds (= ledger.total: text backbone, MTP layers, vision
    tower, and the persistent buffers transformers keeps outside parameters(), such as a router's
    e_score_correction_bias); ``mtp`` and ``buffers`` those two parts of it; ``transformers`` what transformers
    builds as parameters (checkpoint − mtp − buffers); ``text_backbone``; ``active`` the text parameters one token
    passes through, and ``active_without_embedding`` the same without the input embedding table (labs publish
    both)."""
    text = ledger.part("text")
    assert text is not None   # every ledger has its text part
    embedding = text.sum_where(lambda leaf, kinds: "embedding" in kinds)
    return {"checkpoint": ledger.total, "mtp": ledger.mtp, "buffers": ledger.hf_buffers,
            "transformers": ledger.hf_count, "text_backbone": ledger.text_backbone, "vision": ledger.vision,
            "active": ledger.active_per_token, "active_without_embedding": ledger.active_per_token - embedding}


def mixer_per_layer(ledger: Ledger, layer_type: str) -> int:
    """Token-mixer parameters of one layer of a type (attention, GDN or Mamba, incl. their internal norms)."""
    node = ledger.layer(layer_type)
    return node.sum_where(lambda leaf, kinds: any(k in kinds for k in MIXER_KINDS)) // node.n


# -- the classic estimate ---------------------------------------------------------------------------------------
def classic_estimate(ledger: Ledger) -> int:
    a = ledger.arch
    return 12 * a.n_layers * a.d_model ** 2 + a.vocab_size * a.d_model


def classic_gap(ledger: Ledger) -> list[tuple[str, int]]:
    """Items (name, true - classic) that sum exactly to ledger.total - classic_estimate(ledger)."""
    a, parts = ledger.arch, breakdown(ledger)
    d2 = a.d_model ** 2
    items = [("ffn", parts["ffn"] - 8 * a.n_layers * d2)]
    for layer_type in ledger.layer_types:
        node = ledger.layer(layer_type)
        mixer = node.sum_where(lambda leaf, kinds: any(k in kinds for k in MIXER_KINDS))
        items.append((f"mixer/{layer_type}", mixer - 4 * d2 * node.n))
    items += [("embedding", parts["embedding"] - a.vocab_size * a.d_model), ("norm", parts["norm"])]
    for cat in ("lm_head", "mtp", "vision"):
        if parts.get(cat):
            items.append((cat, parts[cat]))
    return items


# -- compute ---------------------------------------------------------------------------------------------------
def matmul_weights(ledger: Ledger, where: Callable[[tuple[str, ...]], bool] = lambda kinds: True,
                   active: bool = True) -> int:
    return ledger.root.find("text").sum_where(lambda leaf, kinds: leaf.matmul and where(kinds), active)


def ffn_flops_per_token(ledger: Ledger) -> int:
    return 2 * matmul_weights(ledger, lambda kinds: "ffn" in kinds)


def param_flops_per_token(ledger: Ledger) -> int:
    """Forward FLOPs per token of every active weight matmul (incl. lm_head), context-independent."""
    return 2 * matmul_weights(ledger)


def score_flops_per_context_token(ledger: Ledger) -> int:
    """Extra forward FLOPs per generated token for each additional cached token, over the layers whose attention
    covers the whole context (windowed, chunked and linear layers stop growing)."""
    return sum(2 * m.score_width * k for m, k in ledger.arch.mixer_counts if m.window is None)


def attention_score_flops(ledger: Ledger, T: int) -> int:
    """Score work (q·k and weighted sum of v) for a token attending to T cached tokens: each layer attends to
    min(T, its window) of them."""
    return sum(2 * m.score_width * m.attended(T) * k for m, k in ledger.arch.mixer_counts)


def crossover_T(ledger: Ledger) -> Fraction | None:
    """Context length at which full-attention score work equals FFN work per token (None if no full attention)."""
    per_T = score_flops_per_context_token(ledger)
    if not per_T:
        return None
    return Fraction(ffn_flops_per_token(ledger), per_T)


# -- memory ----------------------------------------------------------------------------------------------------
DTYPE_BITS = {"FP32": 32, "BF16": 16, "FP16": 16, "FP8": 8, "INT8": 8, "INT4": 4}


def weight_bytes(params: int, dtype: str) -> int:
    bits = DTYPE_BITS[dtype]
    return -(-params * bits // 8)


# bytes held per parameter while training, by component (weights, gradients, optimizer state, master copy)
TRAINING_RECIPES = {
    "mixed_adamw": {"权重 BF16": 2, "梯度 BF16": 2, "FP32 主权重": 4, "Adam m FP32": 4, "Adam v FP32": 4},
    "fp32_adamw": {"权重 FP32": 4, "梯度 FP32": 4, "Adam m FP32": 4, "Adam v FP32": 4},
    "mixed_adamw_8bit": {"权重 BF16": 2, "梯度 BF16": 2, "FP32 主权重": 4, "Adam m INT8": 1, "Adam v INT8": 1},
    "mixed_sgd_momentum": {"权重 BF16": 2, "梯度 BF16": 2, "FP32 主权重": 4, "动量 FP32": 4},
    "bf16_adamw_pure": {"权重 BF16": 2, "梯度 BF16": 2, "Adam m BF16": 2, "Adam v BF16": 2},
}


def training_bytes_per_param(recipe: str) -> int:
    return sum(TRAINING_RECIPES[recipe].values())


def kv_bytes_per_token(ledger: Ledger, bytes_per_elem: int = 2) -> int:
    """Cache bytes each new token adds, over layers whose cache grows with context (full attention)."""
    return sum(m.kv_elems_per_token for m in ledger.arch.per_layer if m.window is None) * bytes_per_elem


def cache_bytes_per_sequence(ledger: Ledger, T: int, bytes_per_elem: int = 2) -> int:
    """Per layer: K/V (or a latent) for min(T, its window) tokens, plus any fixed recurrent state."""
    elems = sum(m.kv_elems_per_token * m.attended(T) + m.state_elems for m in ledger.arch.per_layer)
    return elems * bytes_per_elem
