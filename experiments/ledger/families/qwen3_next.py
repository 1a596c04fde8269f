"""qwen3_next: Gated DeltaNet + gated full attention (layer_types / full_attention_interval), an MoE FFN with one
gated shared expert, MTP layer(s) stored under mtp.* (transformers Qwen3NextConfig; MTP not built).
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, decoder_layer, moe, norm, swiglu
from ..config import Reader
from ..tree import Node, group, leaf
from ._common import (BASE_SYMBOLS, build_layers, dense_d_ff, experts, gdn_from, group_names, heads,
                      hybrid_layer_types, layer_norms, lm_head, moe_info, mtp_tree, qwen_moe_flags, text_tree)


# ---------------------------------------------------------------------------------------------------------------
# qwen3_next: Gated DeltaNet + gated full attention (layer_types / full_attention_interval), MoE FFN with one
# gated shared expert, MTP layer(s) stored under mtp.* (not built by transformers)
def fused_gdn(node: Node) -> Node:
    """Qwen3-Next stores the Gated DeltaNet input projections fused: in_proj_qkvz = [qkv; z] and
    in_proj_ba = [b; a] (Qwen3.5 later split them). Same counts, the checkpoint's names."""
    by_name = {c.name: c for c in node.children}
    qkv, z = by_name["in_proj_qkv.weight"], by_name["in_proj_z.weight"]
    b, a = by_name["in_proj_b.weight"], by_name["in_proj_a.weight"]
    fused = [leaf("in_proj_qkvz.weight", qkv.shape[0] + z.shape[0], qkv.shape[1]),
             leaf("in_proj_ba.weight", b.shape[0] + a.shape[0], b.shape[1])]
    rest = [c for c in node.children if c.name not in ("in_proj_qkv.weight", "in_proj_z.weight",
                                                       "in_proj_b.weight", "in_proj_a.weight")]
    return group(node.name, fused + rest, kind=node.kind)

def build_qwen3_next(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                                     head_dim_default=256)  # Qwen3NextConfig default
    attn_bias = r.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=32768)
    mixers = hybrid_layer_types(r, L)
    gdn, gdn_info = gdn_from(r, d)
    gdn = fused_gdn(gdn)
    n_experts, top_k, expert_d_ff = experts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             allow_zero=True)
    shared_d_ff = r.int("shared_expert_intermediate_size") if n_experts else 0
    flags = qwen_moe_flags(r, L, n_experts)
    d_ff = dense_d_ff(r, flags)
    # vLLM's Qwen3NextMTP: getattr(config, "num_nextn_predict_layers", 1); the released checkpoints hold one
    # MTP layer (mtp.*) and their config.json names no count
    n_mtp = r.int("num_nextn_predict_layers", minimum=0,
                  default=r.int("mtp_num_hidden_layers", default=1, minimum=0))
    names = group_names(mixers, flags)

    def full_attn():
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias, qk_norm=True,
                         output_gate=True)

    def mixer(kind):
        return full_attn() if kind == "full_attention" else gdn

    def ffn(is_moe):
        if not is_moe:
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=1, shared_d_ff=shared_d_ff,
                   shared_name="shared_expert", shared_gate=True)

    layers = build_layers(names, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))
    # MTP: a full-attention decoder layer (MoE when the model has experts), fc and three norms (blocks.mtp_tree)
    mtp_name = "full_attention" + (("_moe" if n_experts else "_dense") if len(set(flags)) > 1 else "")
    mtp = mtp_tree(n_mtp, d, decoder_layer(full_attn(), ffn(n_experts > 0), layer_norms(d), mtp_name, n_mtp)) \
        if n_mtp else None
    has_dense = not all(flags)
    arch = Arch(family="qwen3_next", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff if has_dense else expert_d_ff, ffn_matrices=3,
                layer_types=mixers,
                tied_embeddings=tied, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                linear_state_elems=gdn_info["state"],
                moe=moe_info(n_experts, top_k, expert_d_ff, 1, shared_d_ff, flags),
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             E="num_experts", k="num_experts_per_tok", d_e="moe_intermediate_size",
                             d_s="shared_expert_intermediate_size",
                             L_full="layer_types" if r.has("layer_types")
                             else "num_hidden_layers ÷ full_attention_interval"))
    return Model(text, arch, mtp)
