"""deepseek_v2: multi-head latent attention in every layer (queries through q_proj when ``q_lora_rank`` is null,
as in DeepSeek-V2-Lite, else through the q_a/q_b bottleneck); the first ``first_k_dense_replace`` layers dense,
the others MoE with routed experts and ``n_shared_experts`` always-active shared experts of
``moe_intermediate_size`` each; a softmax router with no correction bias (transformers DeepseekV2Config /
DeepseekV2DecoderLayer; ``mlp_bias`` adds biases to the dense MLP and the shared experts).

transformers (and the checkpoint) store the shared experts as ONE MLP of width n_shared · moe_intermediate_size;
the ledger lists them as n_shared copies of one expert's width, as deepseek_v3 does: the same count.

Also the DeepSeek-V3-style next-token-prediction (nextn / MTP) module both this family's relatives use
(``nextn_mtp``): per module an own embed_tokens copy, enorm / hnorm, eh_proj (2d -> d), one decoder layer and
shared_head.{norm, head}, stored as checkpoint layer num_hidden_layers + k (DeepSeek-V3 README_WEIGHTS.md).
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import mla, moe, norm, swiglu
from ..config import Reader
from ..tree import Node, group, leaf
from ._common import (BASE_SYMBOLS, build_layers, dense_d_ff, experts, group_names, layer_norms,
                      lm_head, moe_info, text_tree)


# ---------------------------------------------------------------------------------------------------------------
# shared by deepseek_v2 / glm4_moe: dense-first layer flags and the nextn MTP module
def first_dense_flags(r: Reader, L: int, default: int) -> tuple[list[bool], int]:
    """MoE from layer first_k_dense_replace on (transformers DeepseekV2/Glm4Moe DecoderLayer)."""
    first_dense = r.int("first_k_dense_replace", default=default, minimum=0)
    if first_dense > L:
        r.fail("first_k_dense_replace", f"an integer <= num_hidden_layers ({L})", first_dense,
               involves=("num_hidden_layers",))
    return [i >= first_dense for i in range(L)], first_dense

def nextn_mtp(n_mtp: int, moe_layer: bool, layer_flags: list[bool], V: int, d: int, mixer, ffn) -> Node | None:
    """n_mtp nextn modules after the last layer (checkpoint layers L .. L + n_mtp - 1), each: embed_tokens,
    enorm, hnorm, eh_proj, one decoder layer (MoE when moe_layer), shared_head.norm and shared_head.head. Layer
    groups are named as the text layers are (suffix _moe/_dense only when the text layers mix both)."""
    if not n_mtp:
        return None
    name = "full_attention" + (("_moe" if moe_layer else "_dense") if len(set(layer_flags)) > 1 else "")
    module = group(name, [leaf("embed_tokens.weight", V, d, kind="embedding", matmul=False),
                          norm("enorm", d), norm("hnorm", d), leaf("eh_proj.weight", d, 2 * d),
                          mixer(), ffn(moe_layer)] + layer_norms(d)
                   + [group("shared_head", [norm("norm", d), leaf("head.weight", V, d)])], n=n_mtp)
    return group("mtp", [group("layers", [module])], kind="mtp")


# ---------------------------------------------------------------------------------------------------------------
# deepseek_v2: MLA (optional q bottleneck), dense first layers, routed + shared experts, softmax router
def build_deepseek_v2(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads = r.int("num_attention_heads")
    n_kv = r.int("num_key_value_heads", default=n_heads)     # MLA expands K/V per head; no effect on shapes
    if n_heads % n_kv:
        r.fail("num_key_value_heads", f"a divisor of num_attention_heads ({n_heads})", n_kv,
               involves=("num_attention_heads",))
    # the MLA widths are required, as for deepseek_v3; q_lora_rank null means one q_proj (DeepSeek-V2-Lite)
    if "q_lora_rank" not in r.config:
        r.fail("q_lora_rank", "an integer >= 1, or null for a plain q_proj (the key is missing)")
    q_lora = r.int("q_lora_rank", default=None)
    kv_lora = r.int("kv_lora_rank")
    nope, rope, v_dim = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim"), r.int("v_head_dim")
    attn_bias = r.bool("attention_bias", default=False)
    mlp_bias = r.bool("mlp_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=2048)
    n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    n_shared = r.int("n_shared_experts", default=2, minimum=0)
    flags, _ = first_dense_flags(r, L, default=0)
    d_ff = dense_d_ff(r, flags)
    mixers = ["full_attention"] * L
    names = group_names(mixers, flags)

    def mixer(_=None):
        return mla(d, n_heads, q_lora, kv_lora, nope, rope, v_dim, attn_bias)

    def ffn(moe_layer):
        if not moe_layer:
            return swiglu(d, d_ff, mlp_bias)
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=n_shared, shared_d_ff=expert_d_ff,
                   shared_bias=mlp_bias)

    layers = build_layers(names, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))
    has_dense = not all(flags)
    arch = Arch(family="deepseek_v2", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=nope + rope, d_ff=d_ff if has_dense else expert_d_ff, ffn_matrices=3,
                layer_types=mixers, tied_embeddings=tied, kv_elems_per_token=kv_lora + rope,
                score_width=n_heads * (nope + rope + v_dim),
                moe=moe_info(n_experts, top_k, expert_d_ff, n_shared, expert_d_ff, flags),
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             d_h="qk_nope_head_dim + qk_rope_head_dim", E="n_routed_experts",
                             k="num_experts_per_tok", d_e="moe_intermediate_size", E_shared="n_shared_experts",
                             L_dense="first_k_dense_replace", d_c="kv_lora_rank", d_cq="q_lora_rank",
                             d_rope="qk_rope_head_dim", d_nope="qk_nope_head_dim", d_v="v_head_dim"))
    return Model(text, arch)
