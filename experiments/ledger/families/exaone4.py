"""LG AI's EXAONE 4.0 (transformers Exaone4Config / modeling_exaone4.py): OLMo-2-style post-norm layers
(post_attention_layernorm, post_feedforward_layernorm; no input_layernorm), per-head q_norm / k_norm, SwiGLU,
GQA without biases, untied embeddings by default, and a hybrid of sliding-window layers (RoPE, window
``sliding_window``) with global layers (no positional encoding).

Which layers slide: ``layer_types`` if listed; else none when ``sliding_window`` is null; else
``sliding_window_pattern``, an int p (layer i global when i + 1 is a multiple of p, default 4) or a string such
as "LLLG" (L local = sliding, G global, repeated over the layers).
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, norm, swiglu
from ..config import Reader
from ..family import Family
from ._common import build_layers, gqa_arch, gqa_sizes, standard_text, tied_context
from ._windows import every_nth_global, listed_layer_types, window_of, window_symbols


def exaone4_layer_types(r: Reader, L: int) -> list[str]:
    listed = listed_layer_types(r, L)
    if listed is not None:
        return listed
    if "sliding_window" in r.config and r.config["sliding_window"] is None:
        return ["full_attention"] * L
    pattern = r.config.get("sliding_window_pattern", 4)
    if isinstance(pattern, str) and pattern and set(pattern) <= {"L", "G"}:
        return ["sliding_attention" if pattern[i % len(pattern)] == "L" else "full_attention" for i in range(L)]
    if isinstance(pattern, str):
        r.fail("sliding_window_pattern", "an integer >= 1 or a string of L (local) and G (global)", pattern)
        return ["full_attention"] * L
    return every_nth_global(L, r.int("sliding_window_pattern", default=4))


def build_exaone4(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    tied, ctx = tied_context(r, False, 2048)
    types = exaone4_layer_types(r, L)
    window = window_of(r, types, 4096)
    layers = build_layers(types, types, [False] * L,
                          lambda _: attention(d, n_heads, n_kv, head_dim, qk_norm=True),
                          lambda _: swiglu(d, d_ff),
                          lambda: [norm("post_attention_layernorm", d), norm("post_feedforward_layernorm", d)])
    arch = gqa_arch("exaone4", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                    tied_embeddings=tied, sliding_window=window, symbols=window_symbols(window))
    return Model(standard_text(layers, V, d, tied), arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("exaone4", build_exaone4, ('Exaone4ForCausalLM',)),
)
