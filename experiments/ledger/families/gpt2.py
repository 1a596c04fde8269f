"""gpt2: learned positions, LayerNorm with bias, fused qkv with bias, a two-matrix GELU MLP, tied head
(transformers GPT2Config / GPT2Model).
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import decoder_layer, gelu_mlp, norm
from ..config import Reader
from ..family import Family
from ..tree import group, leaf
from ._common import heads, text_tree


# ---------------------------------------------------------------------------------------------------------------
# gpt2: learned positions, LayerNorm with bias, fused qkv with bias, two-matrix GELU MLP, tied head
def build_gpt2(r: Reader) -> Model:
    d, L, V = r.int("n_embd"), r.int("n_layer", maximum=10**4), r.int("vocab_size")
    n_pos = r.int("n_positions")
    n_heads, _, head_dim = heads(r, d, "n_head", None, None, "n_embd")
    d_ff = r.int("n_inner", default=4 * d)
    mixer = group("attn", [leaf("c_attn.weight", d, 3 * d), leaf("c_attn.bias", 3 * d, matmul=False),
                           leaf("c_proj.weight", d, d), leaf("c_proj.bias", d, matmul=False)], kind="attention")
    layer = decoder_layer(mixer, gelu_mlp(d, d_ff), [norm("ln_1", d, True), norm("ln_2", d, True)],
                          "full_attention", L)
    text = text_tree([leaf("wte.weight", V, d, matmul=False), leaf("wpe.weight", n_pos, d, matmul=False)],
                     [layer], norm("ln_f", d, True), None)
    arch = Arch(family="gpt2", d_model=d, n_layers=L, vocab_size=V, context_length=n_pos, n_heads=n_heads,
                n_kv_heads=n_heads, head_dim=head_dim, d_ff=d_ff, ffn_matrices=2, layer_types=["full_attention"] * L,
                tied_embeddings=True,
                kv_elems_per_token=2 * d, score_width=2 * n_heads * head_dim,
                symbols={"d": "n_embd", "L": "n_layer", "V": "vocab_size", "d_ff": "n_inner (or 4·n_embd)",
                         "h": "n_head", "T_max": "n_positions"})
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("gpt2", build_gpt2, ('GPT2LMHeadModel', 'GPT2Model')),
)
