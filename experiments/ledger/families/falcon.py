"""falcon (Falcon-7B/40B/180B, Falcon-RW) (transformers FalconConfig / FalconModel).

Attention is one fused ``self_attention.query_key_value`` projection plus ``self_attention.dense``, biases on both
(and on the MLP) when ``bias``. Its key/value heads: new_decoder_architecture (40B, 180B) uses num_kv_heads
(grouped), otherwise multi_query (7B) gives ONE shared key/value head, otherwise every head has its own. head_dim is
hidden_size / num_attention_heads (transformers refuses widths that do not divide). The MLP is
dense_h_to_4h / dense_4h_to_h of width ffn_hidden_size (default 4·hidden_size). Norms are LayerNorms with bias:
a sequential block has input_layernorm + post_attention_layernorm; a parallel block (parallel_attn, or the new
architecture) has one input_layernorm, or ln_attn + ln_mlp when num_ln_in_parallel_attn is 2 (the new
architecture's default). Positions are rotary or ALiBi (``alibi``); neither has parameters. The head is tied by
default.
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import decoder_layer, fused_attention, mlp2, norm
from ..config import Reader
from ..family import Family
from ..tree import leaf
from ._common import gqa_arch, lm_head, sizes, text_tree, tied_context


def build_falcon(r: Reader) -> Model:
    d, L, V = sizes(r)
    n_heads = r.int("num_attention_heads")
    if d % n_heads:
        r.fail("num_attention_heads", f"a divisor of the hidden size ({d})", n_heads, involves=("hidden_size",))
    head_dim = max(d // n_heads, 1)
    new_arch = r.bool("new_decoder_architecture", default=False)
    multi_query = r.bool("multi_query", default=True)
    if new_arch:
        n_kv = r.int("num_kv_heads", default=n_heads)
        if n_heads % n_kv:
            r.fail("num_kv_heads", f"a divisor of num_attention_heads ({n_heads})", n_kv,
                   involves=("num_attention_heads",))
    else:
        n_kv = 1 if multi_query else n_heads
    parallel = r.bool("parallel_attn", default=True)
    n_ln = r.int("num_ln_in_parallel_attn", default=2 if new_arch else None, maximum=2)
    bias = r.bool("bias", default=False)
    d_ff = r.int("ffn_hidden_size", default=4 * d)
    tied, ctx = tied_context(r, True, 2048)
    r.bool("alibi", default=False)   # ALiBi or rotary: no parameters either way
    if not parallel:
        norms = [norm("post_attention_layernorm", d, True), norm("input_layernorm", d, True)]
    elif n_ln == 2:
        norms = [norm("ln_attn", d, True), norm("ln_mlp", d, True)]
    else:
        norms = [norm("input_layernorm", d, True)]
    mixer = fused_attention(d, n_heads * head_dim, n_kv * head_dim, qkv="query_key_value", out="dense", bias=bias,
                            name="self_attention")
    layer = decoder_layer(mixer, mlp2(d, d_ff, "dense_h_to_4h", "dense_4h_to_h", bias), norms, "full_attention", L,
                          kind="parallel" if parallel or new_arch else "")
    text = text_tree([leaf("word_embeddings.weight", V, d, matmul=False)], [layer], norm("ln_f", d, True),
                     lm_head(V, d, tied))
    kv_key = "num_kv_heads" if new_arch else "multi_query (1) or num_attention_heads"
    arch = gqa_arch("falcon", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=2, layer_types=["full_attention"] * L, tied_embeddings=tied,
                    symbols={"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size",
                             "d_ff": "ffn_hidden_size (or 4·hidden_size)", "h": "num_attention_heads", "h_kv": kv_key,
                             "T_max": "max_position_embeddings"})
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("falcon", build_falcon, ('FalconForCausalLM',)),
)
