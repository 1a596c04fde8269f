"""qwen3_next: Gated DeltaNet + gated full attention (layer_types / full_attention_interval), an MoE FFN with one
gated shared expert, MTP layer(s) stored under mtp.* (transformers Qwen3NextConfig; MTP not built).
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, decoder_layer, moe, swiglu
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import (
    build_layers,
    gdn_from,
    gqa_arch,
    gqa_sizes,
    group_names,
    hybrid_layer_types,
    layer_norms,
    moe_arch,
    mtp_tree,
    qwen_moe_sizes,
    standard_text,
    tied_context,
)


# ---------------------------------------------------------------------------------------------------------------
# qwen3_next: Gated DeltaNet + gated full attention (layer_types / full_attention_interval), MoE FFN with one
# gated shared expert, MTP layer(s) stored under mtp.* (not built by transformers)
def _shape(tensor: Node) -> tuple[int, ...]:
    assert tensor.shape is not None, f"{tensor.name} is a tensor"
    return tensor.shape


def fused_gdn(node: Node) -> Node:
    """Qwen3-Next stores the Gated DeltaNet input projections fused: in_proj_qkvz = [qkv; z] and
    in_proj_ba = [b; a] (Qwen3.5 later split them). Same counts, the checkpoint's names."""
    by_name = {c.name: c for c in node.children}
    qkv, z = by_name["in_proj_qkv.weight"], by_name["in_proj_z.weight"]
    b, a = by_name["in_proj_b.weight"], by_name["in_proj_a.weight"]
    (qkv_rows, qkv_cols), (z_rows, _), (b_rows, b_cols), (a_rows, _) = (_shape(t) for t in (qkv, z, b, a))
    fused = [leaf("in_proj_qkvz.weight", qkv_rows + z_rows, qkv_cols),
             leaf("in_proj_ba.weight", b_rows + a_rows, b_cols)]
    rest = [c for c in node.children if c.name not in ("in_proj_qkv.weight", "in_proj_z.weight",
                                                       "in_proj_b.weight", "in_proj_a.weight")]
    return group(node.name, fused + rest, kind=node.kind)

def build_qwen3_next(r: Reader) -> Model:
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r, head_dim_default=256)  # Qwen3NextConfig default
    attn_bias = r.bool("attention_bias", default=False)
    tied, ctx = tied_context(r, False, 32768)
    mixers = hybrid_layer_types(r, L)
    gdn, gdn_info = gdn_from(r, d)
    gdn = fused_gdn(gdn)
    n_experts, top_k, expert_d_ff, shared_d_ff, flags, d_ff = qwen_moe_sizes(r, L, shared=True)
    # vLLM's Qwen3NextMTP: getattr(config, "num_nextn_predict_layers", 1); the released checkpoints hold one
    # MTP layer (mtp.*) and their config.json names no count
    n_mtp = r.int("num_nextn_predict_layers", minimum=0, maximum=MAX_LAYERS,
                  default=r.int("mtp_num_hidden_layers", default=1, minimum=0, maximum=MAX_LAYERS))
    names = group_names(mixers, flags)

    def full_attn() -> Node:
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias, qk_norm=True,
                         output_gate=True)

    def mixer(kind: str) -> Node:
        return full_attn() if kind == "full_attention" else gdn

    def ffn(is_moe: bool) -> Node:
        if not is_moe:
            assert d_ff is not None   # (read whenever a layer is dense)
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=1, shared_d_ff=shared_d_ff,
                   shared_name="shared_expert", shared_gate=True)

    layers = build_layers(names, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = standard_text(layers, V, d, tied)
    # MTP: a full-attention decoder layer (MoE when the model has experts), fc and three norms (blocks.mtp_tree)
    mtp_name = "full_attention" + (("_moe" if n_experts else "_dense") if len(set(flags)) > 1 else "")
    mtp = mtp_tree(n_mtp, d, decoder_layer(full_attn(), ffn(n_experts > 0), layer_norms(d), mtp_name, n_mtp)) \
        if n_mtp else None
    arch = gqa_arch("qwen3_next", d, L, V, ctx, n_heads, n_kv, head_dim, layer_types=mixers, tied_embeddings=tied,
                    linear_state_elems=gdn_info["state"],
                    **moe_arch(flags, d_ff, expert_d_ff, n_experts, top_k, 1, shared_d_ff, E="num_experts",
                               k="num_experts_per_tok", d_e="moe_intermediate_size",
                               d_s="shared_expert_intermediate_size",
                               L_full="layer_types" if r.has("layer_types")
                               else "num_hidden_layers ÷ full_attention_interval"))
    return Model(text, arch, mtp)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("qwen3_next", build_qwen3_next, ('Qwen3NextForCausalLM',)),
)
