"""mimo_v2_flash (Xiaomi MiMo-V2-Flash): GQA attention whose value head (v_head_dim) is narrower than its query/key
head, on two layer types: full attention, and sliding-window attention with twice the KV heads and one learned
sink logit per head; a dense SwiGLU first layer, then MoE layers of routed experts (no shared expert) behind a
sigmoid router whose e_score_correction_bias transformers keeps as a buffer (transformers MiMoV2FlashConfig,
modeling_mimo_v2_flash.py).

Which layers slide and which are MoE: ``layer_types`` / ``mlp_layer_types`` (transformers), else Xiaomi's
published ``hybrid_layer_pattern`` (1 = sliding) and ``moe_layer_freq`` (1 = MoE) lists, else transformers'
defaults (layer 0 and every 6th layer full; layer 0 dense). The sliding layers' sizes are Xiaomi's
``swa_num_key_value_heads`` / ``swa_head_dim`` / ``swa_v_head_dim`` where given, else transformers' rule (twice
num_key_value_heads, the full layers' head sizes). transformers builds no MTP layers and the config names none.
"""
from __future__ import annotations

from ..arch import Mixer, Model
from ..blocks import attention, moe, swiglu
from ..config import Reader
from ..family import Family
from ..tree import Node
from ._common import (  # shared helpers: a list alike another family's names the same ones, no repeated code
    BASE_SYMBOLS,
    build_layers,
    experts,
    gqa_arch,
    gqa_sizes,
    group_names,
    layer_norms,
    moe_info,
    standard_text,
    tied_context,
)
from ._parts import flag_list, listed


def _flags(r: Reader, L: int, key: str, published: str, choices: tuple[str, str], default: list[bool]) -> list[bool]:
    """Per layer, True for choices[1]: from ``key`` (names), else the published 0 / 1 list, else default."""
    names = listed(r, key, L, choices)
    if names is not None:
        return [t == choices[1] for t in names]
    flags = flag_list(r, published, L)
    return flags if flags is not None else default


def build_mimo_v2_flash(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size", head_dim_default=192)
    v_dim = r.int("v_head_dim", default=128)
    swa_heads = r.int("swa_num_attention_heads", default=n_heads)
    swa_kv = r.int("swa_num_key_value_heads", default=2 * n_kv)
    swa_dim, swa_v = r.int("swa_head_dim", default=head_dim), r.int("swa_v_head_dim", default=v_dim)
    bias = r.bool("attention_bias", default=False)
    tied, ctx = tied_context(r, False, 131072)
    window = r.int("sliding_window", default=129)
    n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    sliding = _flags(r, L, "layer_types", "hybrid_layer_pattern", ("full_attention", "sliding_attention"),
                     [not (i == 0 or (i + 1) % 6 == 0) for i in range(L)])
    flags = _flags(r, L, "mlp_layer_types", "moe_layer_freq", ("dense", "sparse"), [i > 0 for i in range(L)])
    mixers = ["sliding_attention" if s else "full_attention" for s in sliding]

    def mixer(kind: str) -> Node:
        if kind == "sliding_attention":
            return attention(d, swa_heads, swa_kv, swa_dim, qkv_bias=bias, sinks=True, v_head_dim=swa_v)
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=bias, v_head_dim=v_dim)

    def ffn(is_moe: bool) -> Node:
        return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias") if is_moe \
            else swiglu(d, d_ff)

    layers = build_layers(group_names(mixers, flags), mixers, flags, mixer, ffn, lambda: layer_norms(d))
    arch = gqa_arch("mimo_v2_flash", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3,
                    layer_types=mixers, tied_embeddings=tied, sliding_window=window,
                    mixers={"full_attention": Mixer(kv_elems_per_token=n_kv * (head_dim + v_dim),
                                                    score_width=n_heads * (head_dim + v_dim)),
                            "sliding_attention": Mixer(kv_elems_per_token=swa_kv * (swa_dim + swa_v),
                                                       score_width=swa_heads * (swa_dim + swa_v), window=window)},
                    moe=moe_info(n_experts, top_k, expert_d_ff, 0, 0, flags),
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size", W="sliding_window", E="n_routed_experts",
                                 k="num_experts_per_tok", d_e="moe_intermediate_size", d_v="v_head_dim"))
    return Model(standard_text(layers, V, d, tied), arch)


FAMILIES = (
    Family("mimo_v2_flash", build_mimo_v2_flash, ("MiMoV2FlashForCausalLM",)),
)
