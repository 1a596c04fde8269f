"""The one map from the ledger's keys to the Chinese a learner reads: purpose categories, layer types, the items
of the classic estimate's gap. Tables, formulas, widgets and the browser all label through here.
"""
from __future__ import annotations

# what each purpose category of the ledger (ledger.views.CATEGORIES) is called, in tables and in formulas
PART_ZH = {"embedding": "嵌入 embedding", "attention": "全注意力", "linear_attention": "线性注意力 (Gated DeltaNet)",
           "ffn": "FFN", "norm": "归一化", "lm_head": "lm_head（不共享）", "mtp": "MTP", "vision": "视觉塔",
           "mamba": "Mamba 状态空间层"}
# a decoder-layer group is named by its token mixer, suffixed _dense / _moe when a model has both FFN kinds
LAYER_ZH = {"full_attention": "全注意力层", "linear_attention": "Gated DeltaNet 层",
            "sliding_attention": "滑窗注意力层",
            # hybrid and SSM families (llama4, gemma4, nemotron_h, jamba, falcon_h1)
            "chunked_attention": "分块注意力层", "mamba": "Mamba-2 层", "mamba1": "Mamba 层",
            "mlp": "纯 FFN 层", "moe": "纯 MoE FFN 层", "hybrid": "注意力 + Mamba-2 并行层"}
FFN_SUFFIX_ZH = {"_dense": "（稠密 FFN）", "_moe": "（MoE FFN）"}
# the shape of a decoder-layer group's block, where it is not the usual sequential one (ledger kind on the group)
BLOCK_ZH = {"parallel": "并行块：注意力与 FFN 读同一个归一化输出，两者之和加回残差"}


GAP_ZH = {"ffn": "FFN：实际 − 公式的 8·L·d²", "embedding": "embedding：实际 − 公式的 V·d",
          "norm": "归一化（公式不计）", "lm_head": "独立的 lm_head（公式假设与 embedding 共享）",
          "mtp": "MTP 模块（公式不计）", "vision": "视觉塔（公式不计）"}


def gap_label(name: str) -> str:
    """Chinese label of a classic-gap item (views.classic_gap)."""
    if name.startswith("mixer/"):
        layer = name.split("/", 1)[1]
        return f"{layer_label(layer)}的 token mixer：实际 − 公式的 4d² × 层数"
    return GAP_ZH.get(name, name)


def layer_label(layer_type: str) -> str:
    """全注意力层, 全注意力层（MoE FFN）...; an unknown group name is shown as it is."""
    for suffix, zh in FFN_SUFFIX_ZH.items():
        if layer_type.endswith(suffix) and layer_type[:-len(suffix)] in LAYER_ZH:
            return LAYER_ZH[layer_type[:-len(suffix)]] + zh
    return LAYER_ZH.get(layer_type, layer_type)


# the parts of a decoder layer a transformers-style tensor name (layers.0.self_attn.o_proj.weight) is made of, and
# the tensors outside the layers: what a table of tensors shows instead of the name (tensor_label)
TENSOR_PART_ZH = {
    "self_attn.q_proj": "注意力的查询投影 q_proj", "self_attn.k_proj": "注意力的键投影 k_proj",
    "self_attn.v_proj": "注意力的值投影 v_proj", "self_attn.o_proj": "注意力的输出投影 o_proj",
    "self_attn.q_norm": "注意力里 QK-norm 的 q_norm", "self_attn.k_norm": "注意力里 QK-norm 的 k_norm",
    "mlp.gate_proj": "FFN 的门控投影 gate_proj", "mlp.up_proj": "FFN 的升维投影 up_proj",
    "mlp.down_proj": "FFN 的降维投影 down_proj",
    "input_layernorm": "注意力子层的归一化", "post_attention_layernorm": "FFN 子层的归一化",
    "embed_tokens": "词嵌入 embedding", "norm": "输出前的归一化", "lm_head": "输出投影 lm_head",
}
TENSOR_KIND_ZH = {"weight": "", "bias": "的偏置"}


def tensor_label(name: str) -> str:
    """A tensor's name in a checkpoint, said in Chinese: 'layers.0.self_attn.o_proj.weight' -> '第 1 层注意力的输出
    投影 o_proj' (layers counted from 1), 'embed_tokens.weight' -> '词嵌入 embedding'. A name whose part is not in
    TENSOR_PART_ZH raises KeyError: a table must not fall back to showing the raw name."""
    stem, _, kind = name.rpartition(".")
    if kind not in TENSOR_KIND_ZH:
        stem, kind = name, "weight"
    layer = ""
    if stem.startswith("layers."):
        index, _, stem = stem[len("layers."):].partition(".")
        layer = f"第 {int(index) + 1} 层"
    part, tail = TENSOR_PART_ZH[stem], TENSOR_KIND_ZH[kind]
    return (layer + (" " if layer and part[0].isascii() else "") + part
            + (" " if tail and part[-1].isascii() else "") + tail)
