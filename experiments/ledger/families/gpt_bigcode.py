"""gpt_bigcode (StarCoder, SantaCoder, Granite-Code-20B/34B, WizardCoder, OctoCoder) (transformers GPTBigCodeConfig /
modeling_gpt_bigcode.py): GPT-2's layout (learned positions, LayerNorms with bias, a biased two-matrix GELU MLP
of ``n_inner``, default 4·n_embd, a tied head) with multi-query attention: with ``multi_query`` (default true)
one key/value head is shared by all ``n_head`` query heads, so the fused ``c_attn`` is n_embd + 2·head_dim wide
instead of 3·n_embd. Defaults are GPTBigCodeConfig's.
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import decoder_layer, gelu_mlp, linear, norm
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import group, leaf
from ._common import heads, text_tree
from ._parts import with_defaults

_DEFAULTS = {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}   # the class's


def build_gpt_bigcode(r: Reader) -> Model:
    r = with_defaults(r, _DEFAULTS)
    d, L = r.int("n_embd"), r.int("n_layer", maximum=MAX_LAYERS)
    V, n_pos = r.int("vocab_size"), r.int("n_positions")
    n_heads, _, head_dim = heads(r, d, "n_head", None, None, "n_embd")
    n_kv = 1 if r.bool("multi_query", default=True) else n_heads
    d_ff = r.int("n_inner", default=4 * d)
    mixer = group("attn", linear("c_attn", d, d + 2 * n_kv * head_dim, True) + linear("c_proj", d, d, True),
                  kind="attention")
    layer = decoder_layer(mixer, gelu_mlp(d, d_ff), [norm("ln_1", d, True), norm("ln_2", d, True)],
                          "full_attention", L)
    text = text_tree([leaf("wte.weight", V, d, matmul=False), leaf("wpe.weight", n_pos, d, matmul=False)],
                     [layer], norm("ln_f", d, True), None)
    arch = Arch(family="gpt_bigcode", d_model=d, n_layers=L, vocab_size=V, context_length=n_pos, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff, ffn_matrices=2, layer_types=["full_attention"] * L,
                tied_embeddings=True, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                symbols={"d": "n_embd", "L": "n_layer", "V": "vocab_size", "d_ff": "n_inner (or 4·n_embd)",
                         "h": "n_head", "h_kv": "multi_query (1 head, or n_head)", "T_max": "n_positions"})
    return Model(text, arch)


FAMILIES = (
    Family("gpt_bigcode", build_gpt_bigcode, ("GPTBigCodeForCausalLM",)),
)
