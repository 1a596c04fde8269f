"""deepseek_v3: multi-head latent attention in every layer; the first first_k_dense_replace layers dense, the rest
MoE (routed + shared experts, a sigmoid router whose e_score_correction_bias transformers keeps as a buffer);
num_nextn_predict_layers MTP modules that the checkpoint holds and transformers does not build.
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import mla, moe, norm, swiglu
from ..config import Reader
from ..tree import group, leaf
from ._common import (BASE_SYMBOLS, build_layers, dense_d_ff, experts, group_names, layer_norms, layer_runs,
                      lm_head, moe_info, text_tree)


# ---------------------------------------------------------------------------------------------------------------
# deepseek_v3: multi-head latent attention in every layer; the first first_k_dense_replace layers dense, the rest
# MoE (routed + shared experts, sigmoid router with a correction bias); num_nextn_predict_layers MTP modules
def build_deepseek_v3(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads = r.int("num_attention_heads")
    n_kv = r.int("num_key_value_heads", default=n_heads)     # MLA expands K/V per head; no effect on shapes
    if n_heads % n_kv:
        r.fail("num_key_value_heads", f"a divisor of num_attention_heads ({n_heads})", n_kv,
               involves=("num_attention_heads",))
    if "q_lora_rank" not in r.config:
        r.fail("q_lora_rank", "an integer >= 1, or null for a plain q_proj (the key is missing)")
    q_lora = r.int("q_lora_rank", default=None)
    kv_lora = r.int("kv_lora_rank")
    nope, rope, v_dim = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim"), r.int("v_head_dim")
    attn_bias = r.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=4096)
    n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    n_shared = r.int("n_shared_experts", default=1, minimum=0)
    first_dense = r.int("first_k_dense_replace", default=3, minimum=0)
    if first_dense > L:
        r.fail("first_k_dense_replace", f"an integer <= num_hidden_layers ({L})", first_dense,
               involves=("num_hidden_layers",))
    freq = r.int("moe_layer_freq", default=1)
    n_mtp = r.int("num_nextn_predict_layers", default=0, minimum=0)

    # DeepSeek's modeling_deepseek.py (the checkpoint's own code): MoE from first_k_dense_replace on, every
    # moe_layer_freq-th layer. (transformers ignores moe_layer_freq; every released V3 config has 1.)
    def is_moe(i):
        return i >= first_dense and i % freq == 0

    flags = [is_moe(i) for i in range(L)]
    d_ff = dense_d_ff(r, flags)
    mixers = ["full_attention"] * L
    names = group_names(mixers, flags)

    def mixer(_=None):
        return mla(d, n_heads, q_lora, kv_lora, nope, rope, v_dim, attn_bias)

    def ffn(moe_layer):
        if not moe_layer:
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias", n_shared=n_shared,
                   shared_d_ff=expert_d_ff)

    layers = build_layers(names, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))

    # MTP module k (checkpoint layer L + k): its own embed_tokens copy, enorm / hnorm, eh_proj (2d -> d), one
    # decoder layer, shared_head.norm and shared_head.head (DeepSeek README_WEIGHTS.md)
    mtp = None
    if n_mtp:
        mtp_flags = [is_moe(L + k) for k in range(n_mtp)]
        mixed = len(set(flags + mtp_flags)) > 1            # name MTP layers as the text layers are named
        mtp_names = ["full_attention" + (("_moe" if f else "_dense") if mixed else "") for f in mtp_flags]
        kinds = dict(zip(mtp_names, mtp_flags))
        modules = [group(name, [leaf("embed_tokens.weight", V, d, kind="embedding", matmul=False),
                                norm("enorm", d), norm("hnorm", d), leaf("eh_proj.weight", d, 2 * d),
                                mixer(), ffn(kinds[name])] + layer_norms(d)
                         + [group("shared_head", [norm("norm", d), leaf("head.weight", V, d)])], n=n)
                   for name, n in layer_runs(mtp_names)]
        mtp = group("mtp", [group("layers", modules)], kind="mtp")

    has_dense = not all(flags)
    arch = Arch(family="deepseek_v3", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=nope + rope, d_ff=d_ff if has_dense else expert_d_ff, ffn_matrices=3,
                layer_types=mixers, tied_embeddings=tied, kv_elems_per_token=kv_lora + rope,
                score_width=n_heads * (nope + rope + v_dim),
                moe=moe_info(n_experts, top_k, expert_d_ff, n_shared, expert_d_ff, flags),
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             d_h="qk_nope_head_dim + qk_rope_head_dim", E="n_routed_experts",
                             k="num_experts_per_tok", d_e="moe_intermediate_size", E_shared="n_shared_experts",
                             L_dense="first_k_dense_replace", d_c="kv_lora_rank", d_cq="q_lora_rank",
                             d_rope="qk_rope_head_dim", d_nope="qk_nope_head_dim", d_v="v_head_dim",
                             L_mtp="num_nextn_predict_layers"))
    return Model(text, arch, mtp)
