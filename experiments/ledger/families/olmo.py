"""AI2's OLMo models: olmo (OLMo-1B/7B, transformers OlmoConfig), olmo2 (OLMo-2, Olmo2Config) and olmo3 (OLMo-3,
Olmo3Config).

- olmo: pre-norm layers whose LayerNorms are *non-parametric* (OlmoLayerNorm: F.layer_norm with no weight and
  no bias), so input_layernorm, post_attention_layernorm and the final norm hold 0 parameters; they are listed
  with 0 so the ledger shows where they sit. SwiGLU FFN; q/k/v/o biases with ``attention_bias``; clip_qkv only
  clamps activations.
- olmo2: RMSNorm *after* each sub-block (post_attention_layernorm, post_feedforward_layernorm; no
  input_layernorm) and q_norm / k_norm over all heads at once (widths heads x head_dim and KV heads x head_dim,
  not per head).
- olmo3: olmo2's layers, three sliding-window layers to one full-attention layer (``layer_types``, by default
  every 4th layer full; window ``sliding_window``, default 4096); its defaults are Olmo3Config's.
None ties embeddings by default.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Model
from ..blocks import attention, norm, swiglu, with_norms
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import build_layers, embed_tokens, gqa_arch, gqa_sizes, lm_head, text_tree, tied_context
from ._parts import with_defaults
from ._windows import every_nth_global, listed_layer_types, window_of, window_symbols


def parameterless_norm(name: str) -> Node:
    """A LayerNorm without affine parameters: present in the model, 0 parameters."""
    return group(name, [], kind="norm")


@dataclass(frozen=True)
class OlmoVariant:
    """Where one model_type puts its norms and whether they hold weights."""
    layer_norms: tuple[str, ...]    # a layer's norms, in order
    parametric: bool                # RMSNorm weights (olmo2), or LayerNorms without parameters (olmo)
    whole_qk_norm: bool             # q_norm / k_norm over all heads at once
    global_every: int | None = None # sliding-window layers, every global_every-th one full (olmo3)
    defaults: tuple[tuple[str, int], ...] = ()   # the config class's defaults for keys a config may leave out
    architectures: tuple[str, ...] = ()


VARIANTS = {
    "olmo": OlmoVariant(("input_layernorm", "post_attention_layernorm"), parametric=False, whole_qk_norm=False,
                        architectures=("OlmoForCausalLM",)),
    "olmo2": OlmoVariant(("post_attention_layernorm", "post_feedforward_layernorm"), parametric=True,
                         whole_qk_norm=True, architectures=("Olmo2ForCausalLM",)),
    "olmo3": OlmoVariant(("post_attention_layernorm", "post_feedforward_layernorm"), parametric=True,
                         whole_qk_norm=True, global_every=4,
                         defaults=(("vocab_size", 50304), ("hidden_size", 4096), ("intermediate_size", 11008),
                                   ("num_hidden_layers", 32), ("num_attention_heads", 32)),
                         architectures=("Olmo3ForCausalLM",)),
}


def build_olmo(r: Reader, model_type: str, variant: OlmoVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    r = with_defaults(r, dict(v.defaults)) if v.defaults else r
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    attn_bias = r.bool("attention_bias", default=False)
    tied, ctx = tied_context(r, False, 2048)
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias)
    if v.whole_qk_norm:
        mixer = with_norms(mixer, [leaf("q_norm.weight", n_heads * head_dim, kind="norm"),
                                   leaf("k_norm.weight", n_kv * head_dim, kind="norm")])

    def a_norm(name: str) -> Node:
        return norm(name, d) if v.parametric else parameterless_norm(name)
    norms = [a_norm(name) for name in v.layer_norms]
    final_norm = a_norm("norm")
    types = ["full_attention"] * L
    if v.global_every:
        types = listed_layer_types(r, L) or every_nth_global(L, v.global_every)
    window = window_of(r, types, 4096)
    layers = build_layers(types, types, [False] * L, lambda _: mixer, lambda _: swiglu(d, d_ff), lambda: norms)
    text = text_tree([embed_tokens(V, d)], layers, final_norm, lm_head(V, d, tied))
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=types, tied_embeddings=tied, sliding_window=window,
                    symbols=window_symbols(window))
    return Model(text, arch)


FAMILIES = tuple(Family(mt, partial(build_olmo, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
