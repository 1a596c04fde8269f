"""LG AI's EXAONE 4.0 (transformers Exaone4Config / modeling_exaone4.py): OLMo-2-style post-norm layers
(post_attention_layernorm, post_feedforward_layernorm; no input_layernorm), per-head q_norm / k_norm, SwiGLU,
GQA without biases, untied embeddings by default, and a hybrid of sliding-window layers (RoPE, window
``sliding_window``) with global layers (no positional encoding).

Which layers slide: ``layer_types`` if listed; else none when ``sliding_window`` is null; else
``sliding_window_pattern``, an int p (layer i global when i + 1 is a multiple of p, default 4) or a string such
as "LLLG" (L local = sliding, G global, repeated over the layers).
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, norm, swiglu
from ..config import Reader
from ..tree import leaf
from ._common import BASE_SYMBOLS, build_layers, heads, lm_head, text_tree
from ._windows import every_nth_global, listed_layer_types, window_of


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
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    d_ff = r.int("intermediate_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size")
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=2048)
    types = exaone4_layer_types(r, L)
    window = window_of(r, types, 4096)
    layers = build_layers(types, types, [False] * L,
                          lambda _: attention(d, n_heads, n_kv, head_dim, qk_norm=True),
                          lambda _: swiglu(d, d_ff),
                          lambda: [norm("post_attention_layernorm", d), norm("post_feedforward_layernorm", d)])
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))
    symbols = dict(BASE_SYMBOLS, d_ff="intermediate_size")
    if window:
        symbols.update(W="sliding_window", L_full="layer_types")
    arch = Arch(family="exaone4", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                tied_embeddings=tied, sliding_window=window, kv_elems_per_token=2 * n_kv * head_dim,
                score_width=2 * n_heads * head_dim, symbols=symbols)
    return Model(text, arch)
