"""qwen3_5: hybrid Gated DeltaNet + gated full attention, MTP, a Qwen3-VL vision tower, text_config nesting
(transformers Qwen3_5Config; the MTP layers are in the checkpoint but not built by transformers).
"""
from __future__ import annotations


from ..family import Family
from ..arch import Model
from ..blocks import attention, decoder_layer, linear, norm, swiglu
from ..config import Reader
from ..tree import Node, group, leaf
from ._common import gdn_from, gqa_arch, gqa_heads, hybrid_layer_types, layer_runs, mtp_tree, sizes, standard_text


def build_qwen3_5(r: Reader) -> Model:
    t = r.sub("text_config") if r.has("text_config") else r
    d, L, V, d_ff = sizes(t, "intermediate_size")
    n_heads, n_kv, head_dim = gqa_heads(t, d)
    gate = t.bool("attn_output_gate", default=True)
    attn_bias = t.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=t.bool("tie_word_embeddings", default=False))
    ctx = t.int("max_position_embeddings", default=262144)
    types = hybrid_layer_types(t, L)
    gdn, gdn_info = gdn_from(t, d)
    n_mtp = t.int("mtp_num_hidden_layers", default=0, minimum=0)

    def full_attn():
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias, qk_norm=True,
                         output_gate=gate)

    def layer_norms():
        return [norm("input_layernorm", d), norm("post_attention_layernorm", d)]

    mixers = {"full_attention": full_attn(), "linear_attention": gdn}
    layers = [decoder_layer(mixers[kind], swiglu(d, d_ff), layer_norms(), kind, n) for kind, n in layer_runs(types)]
    text = standard_text(layers, V, d, tied)
    mtp = mtp_tree(n_mtp, d, decoder_layer(full_attn(), swiglu(d, d_ff), layer_norms(), "full_attention", n_mtp)) \
        if n_mtp else None
    vision = build_vision(r.sub("vision_config")) if r.has("vision_config") else None
    arch = gqa_arch("qwen3_5", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                    tied_embeddings=tied,
                    linear_state_elems=gdn_info["state"],
                    symbols={"d": "text_config.hidden_size", "L": "text_config.num_hidden_layers",
                             "V": "text_config.vocab_size", "d_ff": "text_config.intermediate_size",
                             "h": "text_config.num_attention_heads", "h_kv": "text_config.num_key_value_heads",
                             "d_h": "text_config.head_dim", "T_max": "text_config.max_position_embeddings",
                             "L_full": "text_config.num_hidden_layers ÷ text_config.full_attention_interval"})
    return Model(text, arch, mtp, vision)

def build_vision(v: Reader) -> Node:
    """Qwen3-VL style ViT: conv3d patch embedding, learned positions, pre-LN blocks with fused qkv and a GELU
    MLP (all with biases), and a patch merger (LayerNorm + 2-layer MLP) into the language model's width."""
    depth, w, w_ff = v.int("depth", maximum=10**4), v.int("hidden_size"), v.int("intermediate_size")
    c_in, p, tp = v.int("in_channels", default=3), v.int("patch_size"), v.int("temporal_patch_size", default=2)
    merge, out = v.int("spatial_merge_size", default=2), v.int("out_hidden_size")
    n_pos = v.int("num_position_embeddings")
    v.int("num_heads")
    block = group("blocks", [norm("norm1", w, True), norm("norm2", w, True),
                             group("attn", linear("qkv", w, 3 * w, True) + linear("proj", w, w, True)),
                             group("mlp", linear("linear_fc1", w, w_ff, True) + linear("linear_fc2", w_ff, w, True))],
                  n=depth)
    merged = w * merge * merge
    return group("vision", [
        group("patch_embed", [leaf("proj.weight", w, c_in, tp, p, p, matmul=True), leaf("proj.bias", w, matmul=False)]),
        leaf("pos_embed.weight", n_pos, w, matmul=False), block,
        group("merger", [norm("norm", w, True)] + linear("linear_fc1", merged, merged, True)
              + linear("linear_fc2", merged, out, True)),
    ], kind="vision")


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("qwen3_5", build_qwen3_5, ('Qwen3_5ForConditionalGeneration', 'Qwen3_5ForCausalLM')),
)
