"""starcoder2 (StarCoder2-3B/7B/15B) (transformers Starcoder2Config / Starcoder2Model).

GQA with biases on q/k/v/o (use_bias, default true), a two-matrix GELU MLP c_fc / c_proj with biases, LayerNorms
with bias before attention and MLP and at the end (``norm``), tied head by default. With ``sliding_window`` set
(4,096 in the released models) every layer attends to at most that many tokens (transformers passes it to every
layer and builds a sliding-window mask), so every layer is a sliding-window layer.
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, decoder_layer, mlp2, norm
from ..config import Reader
from ..family import Family
from ._common import embed_tokens, every_layer_windowed, gqa_arch, gqa_sizes, lm_head, text_tree, tied_context


def build_starcoder2(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    bias = r.bool("use_bias", default=True)
    tied, ctx = tied_context(r, True, 4096)
    window = r.int("sliding_window", default=None)
    kind = "sliding_attention" if window else "full_attention"
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=bias, o_bias=bias)
    layer = decoder_layer(mixer, mlp2(d, d_ff, "c_fc", "c_proj", bias),
                          [norm("input_layernorm", d, True), norm("post_attention_layernorm", d, True)], kind, L)
    text = text_tree([embed_tokens(V, d)], [layer], norm("norm", d, True),
                     lm_head(V, d, tied))
    arch = gqa_arch("starcoder2", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=2,
                    tied_embeddings=tied, **every_layer_windowed(kind, L, window, n_heads, n_kv, head_dim))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("starcoder2", build_starcoder2, ('Starcoder2ForCausalLM',)),
)
