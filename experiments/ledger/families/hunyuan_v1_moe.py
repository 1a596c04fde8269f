"""hunyuan_v1_moe (Hunyuan-A13B): GQA attention with per-head q/k RMSNorm (``query_layernorm`` /
``key_layernorm``), every layer MoE: a router ``gate.wg``, routed experts and an always-active shared MLP
(``shared_mlp``) (transformers HunYuanMoEV1Config / HunYuanMoEV1DecoderLayer).

The published Hunyuan-A13B config.json says ``"model_type": "hunyuan"`` (Tencent's remote code) with
``architectures: ["HunYuanMoEV1ForCausalLM"]``; the engine reads it through that class. It gives the head size as
``attention_head_dim`` (no ``head_dim``), and Tencent's modeling_hunyuan.py (Tencent-Hunyuan/Hunyuan-A13B
models/) shapes the checkpoint as: head size hidden_size / num_attention_heads (= attention_head_dim); experts of
``intermediate_size``; the shared MLP, present with ``use_mixed_mlp_moe``, of intermediate_size ·
``num_shared_expert[0]``; q/k norms with ``use_qk_norm``. ``num_experts`` and ``moe_topk`` may be per-layer lists
(every entry must then be the same here: one expert count and top-k for all layers).
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, moe, norm
from ..config import Reader
from ..family import Family
from ..tree import Node, group
from ._common import (
    BASE_SYMBOLS,
    build_layers,
    gqa_arch,
    gqa_heads,
    layer_norms,
    moe_info,
    sizes,
    standard_text,
    tied_context,
)


# ---------------------------------------------------------------------------------------------------------------
# hunyuan_v1_moe: GQA + q/k norm, routed experts + a shared MLP in every layer
def int_or_uniform_list(r: Reader, key: str, L: int, default: int, minimum: int = 1) -> int:
    """An integer, or a per-layer list whose entries are all that integer (Hunyuan's num_experts / moe_topk /
    num_shared_expert)."""
    if isinstance(r.config.get(key), list):
        values = r.int_list(key, minimum=minimum)
        if values and (len(set(values)) != 1 or len(values) < L):
            r.fail(key, f"an integer, or a list of {L} equal integers (num_hidden_layers)", values,
                   involves=("num_hidden_layers",))
        return values[0] if values else max(minimum, 1)
    return r.int(key, default=default, minimum=minimum)

def build_hunyuan_v1_moe(r: Reader) -> Model:
    d, L, V = sizes(r)
    head_key = "head_dim" if r.has("head_dim") or not r.has("attention_head_dim") else "attention_head_dim"
    n_heads, n_kv, head_dim = gqa_heads(r, d, head_dim_key=head_key)
    attn_bias = r.bool("attention_bias", default=False)
    qk_norm = r.bool("use_qk_norm", default=True)
    tied, ctx = tied_context(r, False, 2048)
    d_ff = r.int("intermediate_size")
    n_experts = int_or_uniform_list(r, "num_experts", L, default=1)
    top_k = int_or_uniform_list(r, "moe_topk", L, default=1)
    if top_k > n_experts:
        r.fail("moe_topk", f"an integer <= num_experts ({n_experts})", top_k, involves=("num_experts",))
    mixed = r.bool("use_mixed_mlp_moe", default=True)
    n_shared = int_or_uniform_list(r, "num_shared_expert", L, default=1, minimum=0) if mixed else 0
    mixers, flags = ["full_attention"] * L, [True] * L

    def mixer(_: str) -> Node:
        node = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias)
        if not qk_norm:
            return node
        return group(node.name, list(node.children) + [norm("query_layernorm", head_dim),
                                                       norm("key_layernorm", head_dim)], kind=node.kind)

    def ffn(_: bool) -> Node:
        return moe(d, n_experts, top_k, d_ff, router_weight="wg.weight", n_shared=n_shared, shared_d_ff=d_ff,
                   shared_name="shared_mlp")

    layers = build_layers(mixers, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = standard_text(layers, V, d, tied)
    arch = gqa_arch("hunyuan_v1_moe", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=mixers, tied_embeddings=tied,
                    moe=moe_info(n_experts, top_k, d_ff, n_shared, d_ff, flags, shared_d_ff_key="intermediate_size"),
                    symbols=dict(BASE_SYMBOLS, d_h=head_key, d_ff="intermediate_size", E="num_experts", k="moe_topk",
                                 d_e="intermediate_size", E_shared="num_shared_expert"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("hunyuan_v1_moe", build_hunyuan_v1_moe, ('HunYuanMoEV1ForCausalLM',)),
)
