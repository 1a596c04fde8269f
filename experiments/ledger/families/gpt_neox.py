"""gpt_neox (GPT-NeoX-20B, Pythia) (transformers GPTNeoXConfig / GPTNeoXModel).

Every layer has two LayerNorms with bias (input_layernorm before attention, post_attention_layernorm before the
MLP), q, k and v fused into ``attention.query_key_value`` (3·d, bias = attention_bias) and the output projection
``attention.dense``, and a two-matrix MLP dense_h_to_4h / dense_4h_to_h with biases. With use_parallel_residual
(the default) the block is parallel: x + attn(ln1(x)) + mlp(ln2(x)); the parameters are the same either way.
The embedding is ``embed_in``; the untied output matrix the checkpoint calls ``embed_out`` is transformers 5's
``lm_head``. Partial rotary (rotary_pct) has no parameters.
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import decoder_layer, fused_attention, mlp2, norm
from ..config import Reader
from ..family import Family
from ..tree import leaf
from ._common import heads, lm_head, sizes, text_tree, tied_context


def build_gpt_neox(r: Reader) -> Model:
    d, L, V, d_ff = sizes(r, "intermediate_size")
    n_heads, _, head_dim = heads(r, d, "num_attention_heads", None, None, "hidden_size")
    bias = r.bool("attention_bias", default=True)
    parallel = r.bool("use_parallel_residual", default=True)
    tied, ctx = tied_context(r, False, 2048)
    mixer = fused_attention(d, d, d, qkv="query_key_value", out="dense", bias=bias, name="attention")
    layer = decoder_layer(mixer, mlp2(d, d_ff, "dense_h_to_4h", "dense_4h_to_h", bias=True),
                          [norm("input_layernorm", d, True), norm("post_attention_layernorm", d, True)],
                          "full_attention", L, kind="parallel" if parallel else "")
    text = text_tree([leaf("embed_in.weight", V, d, matmul=False)], [layer], norm("final_layer_norm", d, True),
                     lm_head(V, d, tied))
    arch = Arch(family="gpt_neox", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_heads, head_dim=head_dim, d_ff=d_ff, ffn_matrices=2, layer_types=["full_attention"] * L,
                tied_embeddings=tied, kv_elems_per_token=2 * d, score_width=2 * n_heads * head_dim,
                symbols={"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size",
                         "d_ff": "intermediate_size", "h": "num_attention_heads", "T_max": "max_position_embeddings"})
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("gpt_neox", build_gpt_neox, ('GPTNeoXForCausalLM',)),
)
