"""glm (GLM-4-9B-Chat-hf, GLM-4-9B-0414's predecessor) and glm4 (GLM-4-9B-0414, GLM-4-32B-0414, GLM-Z1)
(transformers GlmConfig / GlmModel, Glm4Config / Glm4Model).

Both: GQA with biases on q, k and v (attention_bias, default true) but not on o_proj; head_dim defaults to 128
(the config classes' default); gate and up fused into one ``mlp.gate_up_proj``; an RMSNorm before attention
(input_layernorm) and before the MLP (post_attention_layernorm). glm4 adds two more per layer, on the attention
output (post_self_attn_layernorm) and on the MLP output (post_mlp_layernorm). Partial rotary has no parameters.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Model
from ..blocks import attention, decoder_layer, gated_fused, norm
from ..config import Reader
from ..family import Family
from ._common import BASE_SYMBOLS, gqa_arch, gqa_sizes, standard_text, tied_context
from ._parts import with_defaults


@dataclass(frozen=True)
class GlmVariant:
    """A layer's RMSNorms, in order, and the transformers classes a config names the model_type by."""
    layer_norms: tuple[str, ...]
    defaults: tuple[tuple[str, int], ...] = ()   # the config class's defaults for keys a config may leave out
    architectures: tuple[str, ...] = ()


VARIANTS = {
    "glm": GlmVariant(("input_layernorm", "post_attention_layernorm"),
                      defaults=(("vocab_size", 151552), ("hidden_size", 4096), ("intermediate_size", 13696),
                                ("num_hidden_layers", 40), ("num_attention_heads", 32), ("num_key_value_heads", 2)),
                      architectures=("GlmForCausalLM",)),
    "glm4": GlmVariant(("input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm",
                        "post_mlp_layernorm"), architectures=("Glm4ForCausalLM",)),
}


def build_glm(r: Reader, model_type: str, variant: GlmVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    r = with_defaults(r, dict(v.defaults)) if v.defaults else r
    # head_dim 128: the GlmConfig / Glm4Config default
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size", head_dim_default=128)
    bias = r.bool("attention_bias", default=True)
    tied, ctx = tied_context(r, False, 131072)
    layer = decoder_layer(attention(d, n_heads, n_kv, head_dim, qkv_bias=bias), gated_fused(d, d_ff),
                          [norm(name, d) for name in v.layer_norms], "full_attention", L)
    text = standard_text([layer], V, d, tied)
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=["full_attention"] * L, tied_embeddings=tied,
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = tuple(Family(mt, partial(build_glm, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
