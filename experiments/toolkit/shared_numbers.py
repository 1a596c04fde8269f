"""Numbers that more than one lesson cites, registered once, below the lessons, so that a lesson can be removed
without taking another lesson's numbers with it. Their names are the ones the pages have always used.

- ``c4.anchor_q_width``, ``c4.anchor_mixer_attn``, ``c4.anchor_mixer_gdn``, ``c4.anchor_mixer_diff``: the
  anchor model's (Qwen3.5-style) gated full attention and Gated DeltaNet token mixers, by formula from its config
  keys, each checked against the ledger's count (C4, C4+ and C11 cite them);
- ``ffn.moe_ratio.<model>``: a MoE model's text backbone over its active parameters per token (C4+ and C11);
- ``device.h100.gb``, ``device.h100.mib``: the bytes an H100 SXM 80GB holds, from the device table
  (experiments/toolkit/devices.py: what its driver reports), in GB of 10^9 bytes and in MiB, so that a page
  weighs GB against GB of the same unit (C9 and C11).
"""
from __future__ import annotations

from ..expr import Const, Sym
from . import devices
from .config_text import text_config_of
from .model_numbers import LEDGER


def layer_tensor(mn, layer_type: str, name: str):
    """The tensor called `name` (e.g. 'q_proj.weight') inside one layer of `layer_type`."""
    for node in mn.ledger.layer(layer_type).walk():
        if node.shape is not None and node.name == name:
            return node
    raise KeyError(f"{mn.id}: no tensor {name!r} in a {layer_type} layer")


def register_shared(reg, models: dict) -> None:
    _devices(reg)
    if "anchor" in models:
        _anchor_mixers(reg, models["anchor"])
    for alias, mn in models.items():
        if mn.arch.moe:
            L = mn.ledger
            reg.add(f"ffn.moe_ratio.{alias}", f"{mn.name} 文本主干总参数是每 token 激活参数的几倍",
                    Sym("文本主干", L.text_backbone) / Sym("激活", L.active_per_token), kind="ratio", style="x1",
                    sources=(mn.where + LEDGER,))


def _devices(reg) -> None:
    dev = devices.H100
    reg.add("device.h100.mib", f"{dev.name}：驱动报告的显存总量（MiB，2²⁰ 字节）", value=dev.mib, kind="bytes",
            sources=(dev.source,))
    reg.add("device.h100.gb", f"{dev.name} 实有的显存（GB，10⁹ 字节）：驱动报告的 MiB × 2²⁰ ÷ 10⁹",
            Sym("MiB", dev.mib) * Const(devices.MIB) / Const(10**9), kind="bytes", style="x1", sources=(dev.source,))


def _anchor_mixers(reg, mn) -> None:
    c, L, src = mn.cfg(), mn.ledger, mn.src
    if "full_attention" in L.layer_types:
        o = layer_tensor(mn, "full_attention", "o_proj.weight")
        reg.add("c4.anchor_q_width", "锚点模型 Q 头拼起来的宽度 h·d_h", c["h"] * c["d_h"], value=o.shape[1],
                symbols=mn.keys, sources=src("h", "d_h"), check="与 o_proj 权重的输入维一致")
        attn = (c["d"] * (Const(2) * c["h"] * c["d_h"]) + Const(2) * c["d"] * (c["h_kv"] * c["d_h"])
                + c["h"] * c["d_h"] * c["d"] + Const(2) * c["d_h"])
        reg.add("c4.anchor_mixer_attn", "锚点模型一层门控全注意力的参数（q/k/v/o 投影 + q_norm、k_norm）", attn,
                value=mn.reg[f"{mn.p}.mixer.full_attention"].value, symbols=mn.keys,
                sources=src("d", "h", "h_kv", "d_h"))
    # Gated DeltaNet mixer, from the linear_* config keys
    if "linear_attention" in L.layer_types:
        tc, pre = text_config_of(mn.doc["config"])
        keys = {"n_k": "linear_num_key_heads", "d_k": "linear_key_head_dim", "n_v": "linear_num_value_heads",
                "d_v": "linear_value_head_dim", "k_conv": "linear_conv_kernel_dim"}
        g = {s: Sym(s, tc[k]) for s, k in keys.items()}
        gkeys = {**mn.keys, **{s: pre + k for s, k in keys.items()}}
        d = c["d"]
        qkv = Const(2) * g["n_k"] * g["d_k"] + g["n_v"] * g["d_v"]
        gdn = (d * qkv + d * (g["n_v"] * g["d_v"]) + Const(2) * d * g["n_v"] + qkv * g["k_conv"]
               + Const(2) * g["n_v"] + g["d_v"] + g["n_v"] * g["d_v"] * d)
        gdn_value = mn.reg[f"{mn.p}.mixer.linear_attention"].value
        reg.add("c4.anchor_mixer_gdn", "锚点模型一层 Gated DeltaNet 的参数（in_proj_qkv/z/b/a、conv1d、dt_bias、"
                "A_log、norm、out_proj）", gdn, value=gdn_value, symbols=gkeys,
                sources=(f"{mn.where}：" + "、".join(["text_config.hidden_size"] + [pre + k for k in keys.values()]),))
        if "full_attention" in L.layer_types:
            attn_value = mn.reg[f"{mn.p}.mixer.full_attention"].value
            reg.add("c4.anchor_mixer_diff", "锚点模型单层 GDN 比单层门控全注意力多出的参数",
                    Sym("GDN 层 mixer", gdn_value) - Sym("全注意力层 mixer", attn_value),
                    value=gdn_value - attn_value, sources=(mn.where + LEDGER,))
