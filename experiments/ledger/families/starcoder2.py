"""starcoder2 (StarCoder2-3B/7B/15B) (transformers Starcoder2Config / Starcoder2Model).

GQA with biases on q/k/v/o (use_bias, default true), a two-matrix GELU MLP c_fc / c_proj with biases, LayerNorms
with bias before attention and MLP and at the end (``norm``), tied head by default. With ``sliding_window`` set
(4,096 in the released models) every layer attends to at most that many tokens (transformers passes it to every
layer and builds a sliding-window mask), so every layer is a sliding-window layer.
"""
from __future__ import annotations

from ..arch import Arch, Mixer, Model
from ..blocks import attention, decoder_layer, mlp2, norm
from ..config import Reader
from ..tree import leaf
from ._common import BASE_SYMBOLS, heads, lm_head, text_tree


def build_starcoder2(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    d_ff = r.int("intermediate_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size")
    bias = r.bool("use_bias", default=True)
    tied = r.bool("tie_word_embeddings", default=True)
    ctx = r.int("max_position_embeddings", default=4096)
    window = r.int("sliding_window", default=None)
    kind = "sliding_attention" if window else "full_attention"
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=bias, o_bias=bias)
    layer = decoder_layer(mixer, mlp2(d, d_ff, "c_fc", "c_proj", bias),
                          [norm("input_layernorm", d, True), norm("post_attention_layernorm", d, True)], kind, L)
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], [layer], norm("norm", d, True),
                     lm_head(V, d, tied))
    kv, score = 2 * n_kv * head_dim, 2 * n_heads * head_dim
    arch = Arch(family="starcoder2", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff, ffn_matrices=2, layer_types=[kind] * L,
                tied_embeddings=tied, sliding_window=window, kv_elems_per_token=kv, score_width=score,
                mixers={kind: Mixer(kv_elems_per_token=kv, score_width=score, window=window)},
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size", **({"W": "sliding_window"} if window else {})))
    return Model(text, arch)
