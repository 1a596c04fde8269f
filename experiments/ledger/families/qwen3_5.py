"""qwen3_5 and qwen3_5_moe: hybrid Gated DeltaNet + gated full attention, MTP, a Qwen3-VL vision tower (without
DeepStack), text_config nesting (transformers Qwen3_5Config / Qwen3_5MoeConfig; the MTP layers are in the
checkpoint but not built by transformers). qwen3_5_moe puts Qwen3-Next's MoE FFN (routed experts + one gated
shared expert) in every layer and in the MTP layer; transformers' Qwen3_5MoeTextConfig has no dense layers
(no decoder_sparse_step / mlp_only_layers).
"""
from __future__ import annotations

from functools import partial

from ..arch import Model, layer_runs
from ..blocks import attention, decoder_layer, norm, swiglu
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node
from ._common import (
    experts,
    gdn_from,
    gqa_arch,
    gqa_heads,
    hybrid_layer_types,
    moe_arch,
    mtp_tree,
    sizes,
    standard_text,
)
from ._parts import qwen_moe_ffn, text_config, wrapper_vision
from ._vision import qwen3_vl_vision


def build_qwen3_5(r: Reader, model_type: str = "qwen3_5", moe_model: bool = False) -> Model:
    """Qwen3.5's hybrid stack; ``moe_model``: routed + shared experts in every layer (qwen3_5_moe)."""
    t = text_config(r)
    d, L, V = sizes(t)
    if moe_model:
        n_experts, top_k, expert_d_ff = experts(t, "num_experts", "num_experts_per_tok", "moe_intermediate_size")
        shared_d_ff = t.int("shared_expert_intermediate_size", minimum=0)
        d_ff = None
    else:
        d_ff = t.int("intermediate_size")
    n_heads, n_kv, head_dim = gqa_heads(t, d)
    gate = t.bool("attn_output_gate", default=True)
    attn_bias = t.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=t.bool("tie_word_embeddings", default=False))
    ctx = t.int("max_position_embeddings", default=262144)
    types = hybrid_layer_types(t, L)
    gdn, gdn_info = gdn_from(t, d)
    n_mtp = t.int("mtp_num_hidden_layers", default=0, minimum=0, maximum=MAX_LAYERS)

    def full_attn() -> Node:
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias, qk_norm=True,
                         output_gate=gate)

    def layer_norms() -> list[Node]:
        return [norm("input_layernorm", d), norm("post_attention_layernorm", d)]

    def ffn() -> Node:
        if moe_model:
            return qwen_moe_ffn(d, n_experts, top_k, expert_d_ff, shared_d_ff, None, True)
        assert d_ff is not None   # (read for a dense model)
        return swiglu(d, d_ff)

    mixers = {"full_attention": full_attn(), "linear_attention": gdn}
    layers = [decoder_layer(mixers[kind], ffn(), layer_norms(), kind, n) for kind, n in layer_runs(types)]
    text = standard_text(layers, V, d, tied)
    mtp = mtp_tree(n_mtp, d, decoder_layer(full_attn(), ffn(), layer_norms(), "full_attention", n_mtp)) \
        if n_mtp else None
    v = wrapper_vision(r, text_only_class="Qwen3_5MoeForCausalLM" if moe_model else "Qwen3_5ForCausalLM")
    vision = build_vision(v) if v is not None else None
    if moe_model:
        moe_fields = moe_arch([True] * L, None, expert_d_ff, n_experts, top_k, 1 if shared_d_ff else 0, shared_d_ff)
        moe_fields.pop("symbols")
        ffn_fields = dict(moe_fields)
        d_ff_key = "text_config.moe_intermediate_size"
    else:
        ffn_fields = {"d_ff": d_ff, "ffn_matrices": 3}
        d_ff_key = "text_config.intermediate_size"
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim, layer_types=types,
                    tied_embeddings=tied, **ffn_fields,
                    linear_state_elems=gdn_info["state"],
                    symbols={"d": "text_config.hidden_size", "L": "text_config.num_hidden_layers",
                             "V": "text_config.vocab_size", "d_ff": d_ff_key,
                             "h": "text_config.num_attention_heads", "h_kv": "text_config.num_key_value_heads",
                             "d_h": "text_config.head_dim", "T_max": "text_config.max_position_embeddings",
                             "L_full": "text_config.num_hidden_layers ÷ text_config.full_attention_interval",
                             **({"E": "text_config.num_experts", "k": "text_config.num_experts_per_tok",
                                 "d_e": "text_config.moe_intermediate_size",
                                 "d_s": "text_config.shared_expert_intermediate_size"} if moe_model else {})})
    return Model(text, arch, mtp, vision)

def build_vision(v: Reader) -> Node:
    """Qwen3.5's ViT: Qwen3-VL's tower without DeepStack mergers (_vision.qwen3_vl_vision)."""
    return qwen3_vl_vision(v, deepstack=False)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("qwen3_5", build_qwen3_5, ('Qwen3_5ForConditionalGeneration', 'Qwen3_5ForCausalLM')),
    Family("qwen3_5_moe", partial(build_qwen3_5, model_type="qwen3_5_moe", moe_model=True),
           ('Qwen3_5MoeForConditionalGeneration', 'Qwen3_5MoeForCausalLM')),
)
