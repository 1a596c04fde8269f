"""The estimate path: a config whose ``model_type`` and ``architectures`` name no family the engine knows, but which
has a decoder's usual keys, is read as a generic decoder and its ledger is marked as an estimate.

The generic reading (the Llama / Qwen / Mistral layout most decoders share): token embedding; num_hidden_layers
identical layers of grouped-query attention (q, k, v, o projections; biases with ``attention_bias``) and a gated
FFN (gate, up, down) of intermediate_size, two RMSNorms each; a final RMSNorm; an output head unless
tie_word_embeddings. With an expert count (num_experts / n_routed_experts / num_local_experts ...) and a top-k,
the FFN is routed experts of moe_intermediate_size (shared experts where n_shared_experts or
shared_expert_intermediate_size say so) on every layer from first_k_dense_replace on, unless a true/false MoE
switch (is_moe, use_moe) is false. Nothing else: no vision
tower, no MTP layers, no norms inside attention. What was assumed and which config keys were never read are
returned with the model, for the page and the command line to say.

Measured error on families the engine reads exactly, fed through this path (tests/test_estimate.py): see there.
"""
from __future__ import annotations

import re
from typing import Any

from .arch import Model
from .blocks import attention, moe, swiglu
from .config import Reader
from .families._common import (  # shared helpers: a list alike another family's names the same ones, no repeated code
    BASE_SYMBOLS,
    build_layers,
    gqa_arch,
    gqa_sizes,
    group_names,
    layer_norms,
    moe_info,
    standard_text,
    tied_context,
)
from .tree import Node

# the usual keys: without all of them a config is not read as a decoder at all
REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
EXPERT_COUNT = ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")
EXPERT_TOP_K = ("num_experts_per_tok", "moe_k", "num_selected_experts", "top_k_experts")
# a true/false key whose name has "moe" as a word (is_moe, use_moe): false turns the experts off (Doge's config
# keeps num_experts at its default while is_moe is false, and transformers then builds a dense MLP)
MOE_SWITCH = re.compile(r"(?:^|_)moe(?:_|$)")
# keys that never change a tensor's shape (metadata, numerics, rotary settings, token ids)
NOT_SHAPES = {"architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "bos_token_id",
              "eos_token_id", "pad_token_id", "rope_theta", "rope_scaling", "rope_parameters", "rms_norm_eps",
              "layer_norm_eps", "layer_norm_epsilon", "initializer_range", "use_cache", "hidden_act",
              "attention_dropout", "hidden_dropout", "auto_map", "quantization_config", "_name_or_path",
              "tokenizer_class", "router_aux_loss_coef", "output_router_logits", "norm_topk_prob", "scoring_func",
              "routed_scaling_factor", "topk_method", "n_group", "topk_group", "pretraining_tp",
              "partial_rotary_factor", "max_window_layers", "use_sliding_window", "sliding_window", "layer_types",
              "attn_implementation", "_attn_implementation", "id2label", "label2id", "task_specific_params",
              "torchscript"}


def _moe_switched_off(r: Reader) -> str | None:
    """The key of a true/false MoE switch set to false, if the config has one."""
    return next((k for k, v in r.config.items() if v is False and MOE_SWITCH.search(k)), None)


def _first(r: Reader, keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if isinstance(r.config.get(k), int) and not isinstance(r.config.get(k), bool)),
                None)


def estimable(config: object) -> bool:
    """The config names a model_type and has every usual key as a positive integer, and an FFN width
    (intermediate_size or experts). Without a model_type it is not a transformers config: never estimated."""
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str) or not config["model_type"]:
        return False
    def positive(k: str) -> bool:
        v = config.get(k)
        return isinstance(v, int) and not isinstance(v, bool) and v > 0
    ffn = positive("intermediate_size") or (any(positive(k) for k in EXPERT_COUNT)
                                            and positive("moe_intermediate_size"))
    return all(positive(k) for k in REQUIRED) and ffn


def build_estimate(r: Reader) -> tuple[Model, list[str]]:
    """The generic decoder's Model and the Chinese lines saying what it assumed."""
    assumed = ["按通用解码器读取：每层一个分组查询注意力（q、k、v、o 四个投影）"
               "加一个门控 FFN（gate、up、down 三个矩阵），每层两个 RMSNorm，末尾一个 RMSNorm"]
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r)
    if not r.has("num_key_value_heads"):
        assumed.append("没有 num_key_value_heads：按每个查询头都有自己的 K、V 头计")
    if not r.has("head_dim"):
        assumed.append(f"没有 head_dim：按 hidden_size ÷ num_attention_heads = {head_dim} 计")
    bias = r.bool("attention_bias", default=False)
    tied, ctx = tied_context(r, False, 4096)
    if not r.has("tie_word_embeddings"):
        assumed.append("没有 tie_word_embeddings：按词嵌入与输出头各自一份计")
    count_key, k_key = _first(r, EXPERT_COUNT), _first(r, EXPERT_TOP_K)
    switch = _moe_switched_off(r)
    if switch and count_key:
        r.read.add(switch)
        assumed.append(f"{switch} 为 false：FFN 按稠密计，{count_key} 等专家键不用")
        count_key = k_key = None
    n_experts = r.int(count_key) if count_key else 0
    top_k = r.int(k_key) if count_key and k_key else 0
    if count_key and not k_key:
        assumed.append("有专家数但没有每 token 选几个专家的键：按每 token 选 1 个专家计")
        top_k = 1
    expert_d_ff = r.int("moe_intermediate_size", default=None) if n_experts else None
    if n_experts and expert_d_ff is None:
        assumed.append("没有 moe_intermediate_size：不知道每个专家有多宽，按 intermediate_size 计；"
                       "专家很多而每个专家很窄的设计（例如只有一个神经元的专家）会因此多算许多倍")
    first_dense = r.int("first_k_dense_replace", default=0, minimum=0) if n_experts else L
    flags = [bool(n_experts) and i >= first_dense for i in range(L)]
    d_ff = r.int("intermediate_size", default=None)
    if expert_d_ff is None:
        expert_d_ff = d_ff or 1
    if d_ff is None:
        d_ff = expert_d_ff
    n_shared = r.int("n_shared_experts", default=0, minimum=0) if n_experts else 0
    shared_d_ff = r.int("shared_expert_intermediate_size", default=0, minimum=0) if n_experts else 0
    if n_experts:
        assumed.append(f"有 {n_experts} 个专家：第 {first_dense} 层起每层的 FFN 都是路由专家（每个宽 {expert_d_ff}），"
                       "路由器一个线性层，没有偏置")
    mixers = ["full_attention"] * L

    def ffn(is_moe: bool) -> Node:
        if not is_moe:
            return swiglu(d, d_ff)
        if shared_d_ff:
            return moe(d, n_experts, top_k, expert_d_ff, n_shared=1, shared_d_ff=shared_d_ff,
                       shared_name="shared_expert")
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=n_shared, shared_d_ff=expert_d_ff)

    layers = build_layers(group_names(mixers, flags), mixers, flags,
                          lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=bias, o_bias=bias), ffn,
                          lambda: layer_norms(d))
    assumed.append("没有视觉塔、没有 MTP 层，注意力里没有 q/k 归一化")
    arch = gqa_arch(r.config.get("model_type") or "unknown", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff,
                    ffn_matrices=3, layer_types=mixers, tied_embeddings=tied,
                    moe=moe_info(n_experts, top_k, expert_d_ff, n_shared or int(bool(shared_d_ff)),
                                 shared_d_ff or expert_d_ff, flags),
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size"))
    return Model(standard_text(layers, V, d, tied), arch), assumed


def unread_keys(config: dict[str, Any], read: set[str]) -> list[str]:
    """Top-level keys (and keys of nested objects, as parent.key) the estimate never read and that might change a
    tensor's shape."""
    out = []
    for key, value in config.items():
        if key in NOT_SHAPES or key in read:
            continue
        if isinstance(value, dict):
            out += [f"{key}.{k}" for k in value if f"{key}.{k}" not in read and k not in NOT_SHAPES]
        else:
            out.append(key)
    return out
