"""C11 MoE 与线性注意力 — the numbers the lesson needs beyond the generic ones (course_numbers) and C4's.

Names are ``c11.<quantity>``. As in the other lessons, a number is one expression tree (experiments.expr) over
config values where the quantity has a short formula; where the ledger engine (or calc.py, which only asks the
engine) has its own value for it, that value is passed as ``value=`` and the Registry asserts both agree. What-if
numbers (the anchor with another hybrid ratio, Qwen3-30B-A3B with its experts split or merged, Jamba with
attention on every layer) come from configs changed in a few keys and counted again by the engine; their
sources say which keys. Units other than parameters are written into the name: ``*_gb`` in 10⁹ bytes, ``*_mb``
in 10⁶ bytes, ``*_gflops`` in 10⁹ FLOPs; caches are BF16 (2 bytes per element), weights BF16 unless named.
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction

from ...errors import CourseError
from ...expr import Const, Sym
from ...ledger import build_ledger, views
from ...toolkit import devices as DV
from ...toolkit.config_text import text_config_of
from ...toolkit.model_numbers import LEDGER
from ...toolkit.moe import get_key, moe_keys
from . import MOE_MODELS, RECALL_DEFAULTS, calc, layouts, recall

GB, MB = Const(10**9), Const(10**6)
BF16 = Const(2)
T_POINTS = {"t4k": 4096, "t32k": 32768, "t256k": 262144}
HYBRID_PRESETS = calc.FULL_PRESETS
BATCHES = (1, 16, 64, 256)
GRANULARITY = {"m1_8": "1/8", "m1_4": "1/4", "m1": "1", "m4": "4"}
GRAN_MODEL = "qwen3_30b_a3b"


def register(reg, models, course=None, data=None) -> None:
    for alias in MOE_MODELS:
        if alias in models:
            _moe_model(reg, models[alias])
    if GRAN_MODEL in models:
        _granularity(reg, models[GRAN_MODEL])
        _hand_count(reg, models[GRAN_MODEL])
    for alias in ("qwen3_30b_a3b", "deepseek_v3"):
        if alias in models:
            _batch(reg, models[alias])
    if "anchor" in models:
        _anchor_hybrid(reg, models["anchor"])
    if "qwen3_next_80b_a3b" in models:
        _next(reg, models["qwen3_next_80b_a3b"])
    if "jamba_v0_1" in models:
        _jamba(reg, models["jamba_v0_1"])
    _serving(reg, models)
    if "deepseek_v3" in models:
        _mla(reg, models["deepseek_v3"])
    for alias in ("gpt_oss_120b", "gemma_2_9b"):
        if alias in models:
            _sliding(reg, models[alias])
    if "anchor" in models:
        _anchor_key_dim(reg, models["anchor"])
    _recall(reg)
    _layouts(reg, (data or {}).get("hybrid_layouts") or {})


def _syms(mn) -> dict:
    moe = mn.arch.moe
    return {"E": Sym("E", moe.n_experts), "k": Sym("k", moe.top_k), "w": Sym("w", moe.expert_d_ff),
            "L_moe": Sym("L_moe", moe.n_moe_layers), "d": Sym("d", mn.arch.d_model)}


def _keys(mn) -> dict:
    moe = mn.arch.moe
    return {**mn.keys, "E": moe.experts_key, "k": moe.top_k_key, "w": moe.expert_d_ff_key,
            "L_moe": "MoE 层数（由 config 的层规则数出）"}


def _one_expert(mn) -> int:
    for node in mn.ledger.part("text").walk():
        if node.n_active is not None and node.n_active != node.n:
            return node.per_copy
    raise KeyError(f"{mn.id}: no routed experts")


def _src(mn, *keys):
    return (f"{mn.where}：" + "、".join(keys),) if keys else (mn.where,)


# -- one MoE model's two ledgers ------------------------------------------------------------------------------
def _moe_model(reg, mn) -> None:
    s = calc.moe_summary(mn.ledger)
    rows = s["rows"]
    y, keys = _syms(mn), _keys(mn)
    p = f"c11.{_alias(mn)}"
    cfg_src = _src(mn, keys["E"], keys["k"], keys["w"])
    kw = {"symbols": keys}
    reg.add(f"{p}.E", f"{mn.name} 每个 MoE 层的路由专家数 E", y["E"], kind="config", sources=cfg_src, **kw)
    reg.add(f"{p}.k", f"{mn.name} 每个 token 选的专家数 k", y["k"], kind="config", sources=cfg_src, **kw)
    reg.add(f"{p}.w", f"{mn.name} 一个路由专家的中间维 w", y["w"], kind="config", sources=cfg_src, **kw)
    reg.add(f"{p}.moe_layers", f"{mn.name} 的 MoE 层数", y["L_moe"], kind="config", sources=(mn.where + LEDGER,), **kw)
    dense = mn.arch.moe.n_dense_layers
    if dense:
        reg.add(f"{p}.dense_layers", f"{mn.name} 的稠密 FFN 层数", value=dense, kind="config",
                sources=(mn.where + LEDGER,))
    one = _one_expert(mn)
    gated = Const(3) * y["d"] * y["w"]
    expert = gated if gated.value == one else Sym("一个专家", one)
    reg.add(f"{p}.one_expert", f"{mn.name} 一个路由专家的参数", expert, value=one, sources=cfg_src, **kw)
    router_layer = rows["router"][0] // s["moe_layers"]
    r_expr = y["E"] * y["d"]
    if r_expr.value != router_layer:
        r_expr = r_expr + y["E"] if (r_expr + y["E"]).value == router_layer else Sym("一层路由器", router_layer)
    reg.add(f"{p}.router", f"{mn.name} 全部路由器的参数（每层一个 E × d 的打分矩阵，有的带每个专家一个偏置）",
            y["L_moe"] * r_expr, value=rows["router"][0], sources=cfg_src, **kw)
    backbone = Sym("文本主干", s["total"])
    reg.add(f"{p}.router_share", f"{mn.name} 路由器占文本主干的比例", Sym("路由器", s["router"]) / backbone,
            kind="ratio", style="pct3", sources=(mn.where + LEDGER,))
    reg.add(f"{p}.routed_total", f"{mn.name} 全部路由专家的参数 L_moe × E × 一个专家",
            y["L_moe"] * y["E"] * Sym("一个专家", one), value=s["routed_total"], sources=cfg_src, **kw)
    reg.add(f"{p}.routed_active", f"{mn.name} 一个 token 经过的路由专家参数 L_moe × k × 一个专家",
            y["L_moe"] * y["k"] * Sym("一个专家", one), value=s["routed_active"], sources=cfg_src, **kw)
    reg.add(f"{p}.routed_share", f"{mn.name} 路由专家占文本主干的比例", Sym("路由专家", s["routed_total"]) / backbone,
            kind="ratio", style="pct", sources=(mn.where + LEDGER,))
    active = Sym("激活参数", s["active"])
    always = active - Sym("激活的路由专家", s["routed_active"])
    reg.add(f"{p}.always", f"{mn.name} 每个 token 都要经过的参数（激活参数减去被选中的路由专家）", always,
            value=s["always"], sources=(mn.where + LEDGER,))
    reg.add(f"{p}.always_share", f"{mn.name} 激活参数里「人人都用」的部分所占比例",
            Sym("人人都用", s["always"]) / active,
            kind="ratio", style="pct", sources=(mn.where + LEDGER,))
    reg.add(f"{p}.active_share", f"{mn.name} 每 token 激活参数占文本主干的比例", active / backbone, kind="ratio",
            style="pct", sources=(mn.where + LEDGER,))
    emb = rows["embedding"][0]
    if emb:
        # the convention some labs publish (OpenAI for gpt-oss): the input embedding is a table look-up, no matmul,
        # so it is left out of the active count; lm_head stays in
        reg.add(f"{p}.active_no_embedding", f"{mn.name} 每 token 激活参数，不算输入 embedding",
                active - Sym("输入 embedding", emb), sources=(mn.where + LEDGER,))
    for row, label in (("shared", "共享专家"), ("dense_ffn", "前几层稠密 FFN"), ("attention", "注意力"),
                       ("linear_attention", "Gated DeltaNet"), ("mamba", "Mamba 层"), ("embedding", "输入 embedding")):
        if rows[row][0]:
            reg.add(f"{p}.row.{row}", f"{mn.name} 的{label}参数（全部层）", value=rows[row][0],
                    sources=(mn.where + LEDGER,))
    every = 2 * views.matmul_weights(mn.ledger, active=False)
    reg.add(f"{p}.flops_all", f"{mn.name} 若每个 token 都过全部专家，每 token 的权重矩阵乘 FLOPs",
            Const(2) * Sym("全部矩阵权重", every // 2), sources=(mn.where + LEDGER,), kind="flops")
    reg.add(f"{p}.flops_ratio", f"{mn.name} 全部专家都算与只算 top-k 的每 token FLOPs 之比",
            Sym("全部专家", every) / Sym("只算 top-k", s["flops"]), kind="ratio", style="x1",
            sources=(mn.where + LEDGER,))
    reg.add(f"{p}.flops_share", f"{mn.name} 只算 top-k 与全部专家都算的每 token 权重矩阵乘 FLOPs 之比",
            Sym("只算 top-k", s["flops"]) / Sym("全部专家", every), kind="ratio", style="pct",
            sources=(mn.where + LEDGER,))
    reg.add(f"{p}.weights_gb", f"{mn.name} 整个 checkpoint 按 BF16 存放要占的显存（GB）",
            Sym("全部参数", mn.ledger.total) * BF16 / GB, kind="bytes", style="x1", sources=(mn.where + LEDGER,))
    reg.add(f"{p}.active_gb", f"{mn.name} 每 token 激活参数按 BF16 计（GB）", active * BF16 / GB, kind="bytes",
            style="x1", sources=(mn.where + LEDGER,))
    reg.add(f"{p}.h100_cards", f"{mn.name} 的 BF16 权重至少要几张 H100 的显存（驱动报告的字节）才放得下",
            value=-(-mn.ledger.total * 2 // DV.H100.bytes), kind="count",
            sources=(mn.where + LEDGER, DV.H100.source))
    reg.add(f"{p}.choices", f"{mn.name} 一层里一个 token 可能被送去的专家组合数 C(E, k)",
            value=math.comb(s["E"], s["k"]), style="e2", sources=cfg_src)
    _routing(reg, mn, p)


# the routing settings a config states: the balance loss's weight, and DeepSeek-V3's group-limited, bias-balanced
# sigmoid routing (n_group groups of experts, a token's k experts drawn from its topk_group best groups)
ROUTING_KEYS = {"router_aux_loss_coef": ("aux_coef", "训练时负载均衡损失的系数", "x3"),
                "n_group": ("n_group", "路由专家分成的组数", "n"),
                "topk_group": ("topk_group", "每个 token 只从得分最高的几组里选专家", "n"),
                "routed_scaling_factor": ("routed_scale", "路由专家输出之和再乘的系数", "x1")}


def _routing(reg, mn, p) -> None:
    tc, pre = text_config_of(mn.doc["config"])
    for key, (name, label, style) in ROUTING_KEYS.items():
        v = tc.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        v = v if isinstance(v, int) else Fraction(str(v))
        reg.add(f"{p}.{name}", f"{mn.name} 的 {key}：{label}", Sym(key, v), kind="config", style=style,
                symbols={key: pre + key}, sources=(f"{mn.where}：{pre}{key}",))


def _alias(mn) -> str:
    return mn.p


# -- granularity: the same FFN budget cut into fewer or more experts --------------------------------------------
def _granularity(reg, mn) -> None:
    keys = moe_keys(mn.doc["config"])
    for key, m in GRANULARITY.items():
        cfg = calc.with_experts(mn.doc["config"], split=m)
        s = calc.moe_summary(build_ledger(cfg))
        src = (f"{mn.where} 把每个专家按 {m} 倍拆分（专家数 × {m}、top-k × {m}、专家宽度 ÷ {m}）后，"
               "由课程的账本引擎重数",)
        p = f"c11.gran.{key}"
        reg.add(f"{p}.E", f"拆分 {m} 倍后的专家数", Sym("E", get_key(cfg, keys[0])), kind="config", sources=src,
                symbols={"E": keys[0]})
        reg.add(f"{p}.k", f"拆分 {m} 倍后的 top-k", Sym("k", get_key(cfg, keys[1])), kind="config", sources=src,
                symbols={"k": keys[1]})
        width_key = keys[2]
        assert width_key is not None, f"{mn.where}: the experts' width has no key of its own"
        reg.add(f"{p}.w", f"拆分 {m} 倍后的专家宽度", Sym("w", get_key(cfg, width_key)), kind="config", sources=src,
                symbols={"w": width_key})
        reg.add(f"{p}.total", f"拆分 {m} 倍后的文本主干参数", value=s["total"], sources=src)
        reg.add(f"{p}.active", f"拆分 {m} 倍后每 token 激活的参数", value=s["active"], sources=src)
        reg.add(f"{p}.router", f"拆分 {m} 倍后全部路由器的参数", value=s["router"], sources=src)
        reg.add(f"{p}.choices", f"拆分 {m} 倍后一层里的专家组合数 C(E, k)", value=calc.choices_count(s["E"], s["k"]),
                style="e2", sources=src)


# -- the hand count of Qwen3-30B-A3B's two ledgers ---------------------------------------------------------------
def _hand_count(reg, mn) -> None:
    c, y = mn.cfg(), _syms(mn)
    keys = _keys(mn)
    kw = {"symbols": keys}
    L = mn.ledger
    attn = c["d"] * (c["h"] * c["d_h"]) + Const(2) * c["d"] * (c["h_kv"] * c["d_h"]) \
        + c["h"] * c["d_h"] * c["d"] + Const(2) * c["d_h"]
    src = _src(mn, keys["d"], keys["h"], keys["h_kv"], keys["d_h"])
    reg.add("c11.hand.attn", "Qwen3-30B-A3B 一层注意力：q、k、v、o 投影 + q_norm、k_norm", attn,
            value=views.mixer_per_layer(L, "full_attention"), sources=src, **kw)
    reg.add("c11.hand.router", "Qwen3-30B-A3B 一层路由器 E × d", y["E"] * c["d"],
            sources=_src(mn, keys["E"], keys["d"]), **kw)
    reg.add("c11.hand.expert", "Qwen3-30B-A3B 一个专家 3 × d × w", Const(3) * c["d"] * y["w"],
            value=_one_expert(mn), sources=_src(mn, keys["d"], keys["w"]), **kw)
    reg.add("c11.hand.norms", "每层两个 RMSNorm 2 × d", Const(2) * c["d"], sources=_src(mn, keys["d"]), **kw)
    reg.add("c11.hand.emb", "输入 embedding V × d", c["V"] * c["d"], value=L.root.find("text/embedding").count,
            sources=_src(mn, keys["V"], keys["d"]), **kw)
    reg.add("c11.hand.head", "lm_head V × d（不共享）", c["V"] * c["d"], value=mn.reg[f"{mn.p}.part.lm_head"].value,
            sources=_src(mn, keys["V"], keys["d"]), **kw)
    per_active = attn + y["E"] * c["d"] + y["k"] * (Const(3) * c["d"] * y["w"]) + Const(2) * c["d"]
    per_total = attn + y["E"] * c["d"] + y["E"] * (Const(3) * c["d"] * y["w"]) + Const(2) * c["d"]
    reg.add("c11.hand.layer_active", "一层里一个 token 经过的参数：注意力 + 路由器 + k 个专家 + 两个 RMSNorm",
            per_active, sources=src, **kw)
    reg.add("c11.hand.layer_total", "一层存下的参数：注意力 + 路由器 + E 个专家 + 两个 RMSNorm", per_total,
            value=L.layer("full_attention").per_copy, sources=src, **kw)
    both = c["V"] * c["d"] * Const(2) + c["d"]
    reg.add("c11.hand.outside", "层外：embedding + lm_head + 最终 RMSNorm", both, sources=src, **kw)
    reg.add("c11.hand.active", "手算的每 token 激活参数", both + c["L"] * per_active, value=L.active_per_token,
            sources=src, check="与账本引擎逐张量计数一致", **kw)
    reg.add("c11.hand.total", "手算的总参数", both + c["L"] * per_total, value=L.total, sources=src,
            check="与账本引擎逐张量计数一致", **kw)


# -- a decode step of B tokens --------------------------------------------------------------------------------
def _batch(reg, mn) -> None:
    p = f"c11.batch.{mn.p}"
    src = (mn.where + LEDGER + "；每个 token 独立、均匀地从 E 个专家里选 k 个时，"
           "一步碰到的专家数期望为 E·(1 − (1 − k/E)^B)",)
    for B in BATCHES:
        x = calc.batch_point(mn.doc["config"], B)
        reg.add(f"{p}.b{B}.batch", "批大小 B（示意设定）", Sym("B", B), kind="config", symbols={"B": "示意设定"},
                sources=("示意设定",))
        reg.add(f"{p}.b{B}.touched", f"{mn.name} 批大小 {B} 时一层里被碰到的专家数（期望）", value=x["touched"],
                kind="ratio", style="x1", sources=src)
        reg.add(f"{p}.b{B}.touched_share", f"{mn.name} 批大小 {B} 时被碰到的专家占全部专家的比例",
                value=x["touched"] / x["E"], kind="ratio", style="pct", sources=src)
        reg.add(f"{p}.b{B}.read_gb", f"{mn.name} 批大小 {B} 时一步要读的权重（BF16，GB）", value=x["read"] * 2 / 10**9,
                kind="bytes", style="x1", sources=src)
        reg.add(f"{p}.b{B}.per_token_gb", f"{mn.name} 批大小 {B} 时每个 token 分摊的权重读取（BF16，GB）",
                value=x["per_token"] * 2 / 10**9, kind="bytes", style="x2", sources=src)
    x = calc.batch_point(mn.doc["config"], 1)
    reg.add(f"{p}.all_gb", f"{mn.name} 全部矩阵权重（BF16，GB）", Sym("全部矩阵权重", x["all"]) * BF16 / GB,
            kind="bytes", style="x1", sources=(mn.where + LEDGER,))


# -- Gated DeltaNet against full attention on the anchor ------------------------------------------------------
def _gdn_syms(mn):
    tc = calc._text(mn.doc["config"])
    names = {"n_k": "linear_num_key_heads", "d_k": "linear_key_head_dim", "n_v": "linear_num_value_heads",
             "d_v": "linear_value_head_dim", "K": "linear_conv_kernel_dim"}
    pre = "text_config." if isinstance(mn.doc["config"].get("text_config"), dict) else ""
    return {s: Sym(s, tc[k]) for s, k in names.items()}, {s: pre + k for s, k in names.items()}


def _anchor_hybrid(reg, mn) -> None:
    c, a = mn.cfg(), mn.arch
    g, gkeys = _gdn_syms(mn)
    keys = {**mn.keys, **gkeys}
    conv = Const(2) * g["n_k"] * g["d_k"] + g["n_v"] * g["d_v"]
    state = g["n_v"] * g["d_k"] * g["d_v"] + (g["K"] - Const(1)) * conv
    gsrc = (f"{mn.where}：" + "、".join(gkeys.values()),)
    reg.add("c11.gdn_state_elems", "锚点模型一层 GDN 的固定状态：n_v·d_k·d_v 的记忆矩阵 + (K − 1) 步卷积缓冲",
            state, value=a.linear_state_elems, symbols=keys, sources=gsrc)
    reg.add("c11.gdn_matrix_elems", "锚点模型一层 GDN 的记忆矩阵 n_v·d_k·d_v", g["n_v"] * g["d_k"] * g["d_v"],
            symbols=keys, sources=gsrc)
    reg.add("c11.gdn_state_mb", "锚点模型一层 GDN 的固定状态（BF16，MB）", state * BF16 / MB, kind="bytes",
            style="x2", symbols=keys, sources=gsrc)
    kv = Const(2) * c["h_kv"] * c["d_h"]
    reg.add("c11.attn_kv_elems", "锚点模型一层全注意力每个 token 留下的 K、V 元素 2·h_kv·d_h", kv,
            value=a.kv_elems_per_token, symbols=mn.keys, sources=mn.src("h_kv", "d_h"))
    reg.add("c11.attn_kv_bytes", "锚点模型一层全注意力每个 token 的 KV cache（BF16，字节）", kv * BF16, kind="bytes",
            symbols=mn.keys, sources=mn.src("h_kv", "d_h"))
    reg.add("c11.gdn_break_even_T", "一层 GDN 的固定状态相当于一层全注意力多少个 token 的 KV cache",
            Sym("GDN 状态", state.value) / Sym("每 token KV", kv.value), kind="tokens", sources=gsrc)
    for tk, T in T_POINTS.items():
        reg.add(f"c11.T.{tk}", "比较缓存与计算时取的上下文长度 T（示意设定）", Sym("T", T), kind="config",
                symbols={"T": "示意设定"}, sources=("示意设定",))
    src_of = {}
    for f in HYBRID_PRESETS:
        src_of[f] = (f"{mn.where} 把 layer_types 改成 {calc.ratio_label(f, a.n_layers)}（全注意力层均匀分布）后，"
                     "由课程的账本引擎重数",)
        p = f"c11.hyb.f{f}"
        pt = calc.hybrid_point(mn.doc["config"], f, 1)
        reg.add(f"{p}.n_full", "这一混合比例的全注意力层数", Sym("n_full", f), kind="config",
                symbols={"n_full": "改写后的 layer_types"}, sources=src_of[f])
        reg.add(f"{p}.n_linear", "这一混合比例的 GDN 层数", Sym("L", a.n_layers) - Sym("n_full", f), kind="config",
                symbols={"L": "text_config.num_hidden_layers", "n_full": "改写后的 layer_types"}, sources=src_of[f])
        reg.add(f"{p}.state_gb", f"{calc.ratio_label(f, a.n_layers)}：固定状态（BF16，GB）",
                value=Fraction(pt["state"], 10**9),
                kind="bytes", style="x2", sources=src_of[f])
        reg.add(f"{p}.state_mb", f"{calc.ratio_label(f, a.n_layers)}：固定状态（BF16，MB）",
                value=Fraction(pt["state"], 10**6),
                kind="bytes", style="x1", sources=src_of[f])
        reg.add(f"{p}.total", f"{calc.ratio_label(f, a.n_layers)}：checkpoint 全部参数", value=pt["total"],
                sources=src_of[f])
        for tk, T in T_POINTS.items():
            pt = calc.hybrid_point(mn.doc["config"], f, T)
            lab = f"{calc.ratio_label(f, a.n_layers)}，T = {T:,}"
            reg.add(f"{p}.{tk}.kv_gb", f"{lab}：KV cache（BF16，GB）", value=Fraction(pt["kv"], 10**9), kind="bytes",
                    style="x2", sources=src_of[f])
            reg.add(f"{p}.{tk}.cache_gb", f"{lab}：KV cache + 固定状态（BF16，GB）", value=Fraction(pt["cache"], 10**9),
                    kind="bytes", style="x2", sources=src_of[f])
            reg.add(f"{p}.{tk}.gflops", f"{lab}：每生成一个 token 的权重矩阵乘 + 全注意力打分（10⁹ FLOPs）",
                    value=Fraction(pt["flops"], 10**9), kind="flops", style="x1", sources=src_of[f])
            reg.add(f"{p}.{tk}.score_share", f"{lab}：全注意力打分占每 token 计算的比例",
                    value=Fraction(pt["score_flops"], pt["flops"]), kind="ratio", style="pct", sources=src_of[f])
    for tk, T in T_POINTS.items():
        mine = calc.hybrid_point(mn.doc["config"], 16, T)
        full = calc.hybrid_point(mn.doc["config"], a.n_layers, T)
        reg.add(f"c11.hyb.cache_ratio.{tk}", f"T = {T:,}：锚点模型的缓存是全部用全注意力时的几分之几",
                Sym("混合", mine["cache"]) / Sym("全注意力", full["cache"]), kind="ratio", style="pct",
                sources=(src_of[16][0], src_of[a.n_layers][0]))
        reg.add(f"c11.hyb.flops_ratio.{tk}", f"T = {T:,}：锚点模型每 token 计算是全部用全注意力时的几分之几",
                Sym("混合", mine["flops"]) / Sym("全注意力", full["flops"]), kind="ratio", style="pct",
                sources=(src_of[16][0], src_of[a.n_layers][0]))
        reg.add(f"c11.hyb.f{a.n_layers}.{tk}.h100_share",
                f"T = {T:,}：全部用全注意力时一条序列的缓存占一张 H100 实有显存（驱动报告的字节）的比例",
                Sym("缓存字节", full["cache"]) / Sym("H100 字节", DV.H100.bytes), kind="ratio", style="pct0",
                sources=(src_of[a.n_layers][0], DV.H100.source))
    mine, full = (calc.hybrid_point(mn.doc["config"], f, 1)["total"] for f in (16, a.n_layers))
    reg.add("c11.hyb.param_diff", f"锚点模型比同样 {a.n_layers} 层全用全注意力多出的参数",
            Sym("混合", mine) - Sym("全注意力", full), sources=(src_of[16][0], src_of[a.n_layers][0]))


def _next(reg, mn) -> None:
    a = mn.arch
    cfg = mn.doc["config"]
    T = a.context_length
    mine = calc.hybrid_point(cfg, a.n_full, T)
    full = calc.hybrid_point(cfg, a.n_layers, T)
    src = (mn.where + LEDGER,)
    wsrc = (f"{mn.where} 把 layer_types 改成全部用全注意力后，由课程的账本引擎重数",)
    reg.add("c11.next.n_linear", f"{mn.name} 的 GDN 层数", value=a.layer_types.count("linear_attention"),
            kind="config", sources=src)
    reg.add("c11.next.n_full", f"{mn.name} 的全注意力层数", value=a.n_full, kind="config", sources=src)
    reg.add("c11.next.T_max", f"{mn.name} 的原生上下文长度", value=T, kind="config",
            sources=_src(mn, "max_position_embeddings"))
    reg.add("c11.next.cache_gb", f"{mn.name} 一条满长序列的缓存（BF16，GB）", value=Fraction(mine["cache"], 10**9),
            kind="bytes", style="x1", sources=src)
    reg.add("c11.next.full_cache_gb",
            f"{mn.name} 若全部 {a.n_layers} 层都用全注意力，一条满长序列的 KV cache（BF16，GB）",
            value=Fraction(full["cache"], 10**9), kind="bytes", style="x1", sources=wsrc)


def _jamba(reg, mn) -> None:
    a = mn.arch
    cfg = mn.doc["config"]
    mixer = a.mixer("mamba1")
    d = Sym("d", a.d_model)
    expand, N, K = Sym("expand", cfg["mamba_expand"]), Sym("N", cfg["mamba_d_state"]), Sym("K", cfg["mamba_d_conv"])
    state = expand * d * N + (K - Const(1)) * (expand * d)
    keys = {"d": "hidden_size", "expand": "mamba_expand", "N": "mamba_d_state", "K": "mamba_d_conv"}
    src = _src(mn, *keys.values())
    reg.add("c11.jamba.state_elems", "Jamba 一层 Mamba 的固定状态：(expand·d)·N 的 SSM 状态 + (K − 1) 步卷积缓冲",
            state, value=mixer.state_elems, symbols=keys, sources=src)
    reg.add("c11.jamba.n_mamba", "Jamba 的 Mamba 层数", value=a.layer_types.count("mamba1"), kind="config",
            sources=(mn.where + LEDGER,))
    reg.add("c11.jamba.n_attn", "Jamba 的注意力层数", value=a.layer_types.count("full_attention"), kind="config",
            sources=(mn.where + LEDGER,))
    T = a.context_length
    reg.add("c11.jamba.T_max", "Jamba 的原生上下文长度", value=T, kind="config",
            sources=_src(mn, "max_position_embeddings"))
    real = build_ledger(cfg)
    every = copy.deepcopy(cfg)
    every.update(attn_layer_period=1, attn_layer_offset=0)
    allattn = build_ledger(every)
    reg.add("c11.jamba.cache_gb", "Jamba 一条满长序列的缓存（BF16，GB）",
            value=Fraction(views.cache_bytes_per_sequence(real, T), 10**9), kind="bytes", style="x1",
            sources=(mn.where + LEDGER,))
    reg.add("c11.jamba.full_cache_gb", "Jamba 若每层都用注意力，一条满长序列的 KV cache（BF16，GB）",
            value=Fraction(views.cache_bytes_per_sequence(allattn, T), 10**9), kind="bytes", style="x1",
            sources=(f"{mn.where} 把 attn_layer_period 改成 1、attn_layer_offset 改成 0 后，由课程的账本引擎重数",))


# -- serving and the other answers to the cache ledger ------------------------------------------------------------
# Dense ridge: at batch B a BF16 weight (2 bytes) does 2·B FLOPs, so the step turns compute-bound when B reaches
# peak FLOP/s ÷ bandwidth (bytes/s). In an MoE layer each expert sees about B·k/E of the batch's tokens (uniform
# routing), so the same intensity needs a batch E/k times larger. All-to-all: with expert parallelism a token's
# d-dimensional hidden vector is sent to each of its k experts and k outputs come back, per MoE layer (an upper
# bound: BF16, every expert on another device).
def _serving(reg, models) -> None:
    tflops, tbps = reg.numbers.get("cited.h100_bf16_tflops"), reg.numbers.get("cited.h100_bandwidth_tbps")
    if tflops is None or tbps is None:
        return
    ridge = Sym("峰值 TFLOPS", Fraction(str(tflops.value))) / Sym("带宽 TB/s", Fraction(str(tbps.value)))
    hsrc = tuple(dict.fromkeys((tflops.sources[0], tbps.sources[0])))
    reg.add("c11.dense_ridge_batch", "H100 上 BF16 稠密层由算力接管的批大小（峰值算力 ÷ 带宽）", ridge, kind="ratio",
            style="x0", sources=hsrc)
    for alias in MOE_MODELS:
        if alias not in models:
            continue
        mn = models[alias]
        y, keys = _syms(mn), _keys(mn)
        p = f"c11.{_alias(mn)}"
        cfg_src = _src(mn, keys["E"], keys["k"])
        reg.add(f"{p}.e_over_k", f"{mn.name} 的 E/k：一个专家平均分到批里 token 的几分之一", y["E"] / y["k"],
                kind="ratio", style="x0", symbols=keys, sources=cfg_src)
        reg.add(f"{p}.moe_ridge_batch", f"{mn.name} 的 MoE 层由算力接管所需的批大小（稠密交叉点 × E/k）",
                Sym("稠密交叉点", ridge.value) * y["E"] / y["k"], kind="ratio", style="x0", symbols=keys,
                sources=(*hsrc, *cfg_src))
        reg.add(f"{p}.a2a_mb_token", f"{mn.name} 专家并行时每个 token 的分发与汇合字节上限（BF16，MB）",
                Const(2) * y["k"] * y["d"] * BF16 * y["L_moe"] / MB, kind="bytes", style="x1", symbols=keys,
                sources=_src(mn, keys["k"], keys["d"]))


def _mla(reg, mn) -> None:
    """DeepSeek-V3's latent cache (kv_lora_rank + qk_rope_head_dim per token per layer) against the K and V that
    full multi-head attention with the same heads would keep."""
    tc, pre = text_config_of(mn.doc["config"])
    need = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "num_attention_heads")
    if any(not isinstance(tc.get(k), int) for k in need):
        return
    r, rope, nope, dv, h = (Sym(k, tc[k]) for k in need)
    keys = {k: pre + k for k in need}
    src = (f"{mn.where}：" + "、".join(keys.values()),)
    latent = reg.add("c11.mla.latent_elems", "DeepSeek-V3 每个 token 每层缓存的元素：压缩潜向量 + 共享的 RoPE 键",
                     r + rope, symbols=keys, sources=src)
    mha = reg.add("c11.mla.mha_elems",
                  "同样头数的多头注意力每个 token 每层要缓存的 K、V 元素 h·(d_nope + d_rope + d_v)",
                  h * (nope + rope + dv), symbols=keys, sources=src)
    reg.add("c11.mla.ratio", "多头注意力与 MLA 每个 token 缓存之比", Sym("多头", mha.value) / Sym("MLA", latent.value),
            kind="ratio", style="x0", sources=src)


def _sliding(reg, mn) -> None:
    """A model that alternates sliding-window and full layers: the cache of one sequence at its native length,
    against the same model with every layer full (BF16; a sliding layer keeps at most `window` tokens)."""
    tc, pre = text_config_of(mn.doc["config"])
    window = tc.get("sliding_window")
    n_slide = mn.ledger.layer("sliding_attention").n if "sliding_attention" in mn.ledger.layer_types else 0
    n_full = mn.ledger.layer("full_attention").n if "full_attention" in mn.ledger.layer_types else 0
    if not isinstance(window, int) or not n_slide or not n_full:
        return
    c = mn.cfg()
    p = f"c11.swa.{_alias(mn)}"
    w = Sym("window", window)
    T = Sym("T_max", mn.arch.context_length)
    keys = {**mn.keys, "window": pre + "sliding_window", "T_max": mn.keys.get("T_max", "max_position_embeddings")}
    per_layer = Const(2) * c["h_kv"] * c["d_h"] * BF16
    ns, nf = Sym("滑窗层数", n_slide), Sym("全注意力层数", n_full)
    reg.add(f"{p}.window", f"{mn.name} 滑窗层只看最近多少个 token", w, kind="config", symbols=keys,
            sources=(f"{mn.where}：{pre}sliding_window",))
    reg.add(f"{p}.n_sliding", f"{mn.name} 的滑窗层数", value=n_slide, kind="count", sources=(mn.where + LEDGER,))
    mixed = per_layer * (nf * T + ns * w)
    full = per_layer * (nf + ns) * T
    reg.add(f"{p}.cache_gb", f"{mn.name} 一条原生长度序列的 KV cache（BF16，GB）", mixed / GB, kind="bytes",
            style="x2", symbols=keys, sources=(mn.where + LEDGER,))
    reg.add(f"{p}.full_cache_gb", f"{mn.name} 若每层都是全注意力，同一序列的 KV cache（BF16，GB）", full / GB,
            kind="bytes", style="x2", symbols=keys, sources=(mn.where + LEDGER,))
    reg.add(f"{p}.cache_ratio", f"{mn.name} 的缓存是全用全注意力时的几成",
            Sym("混合", mixed.value) / Sym("全注意力", full.value),
            kind="ratio", style="pct", sources=(mn.where + LEDGER,))


# -- the associative-recall experiment (recall.py) at the recall widget's first setting ---------------------------
def _anchor_key_dim(reg, mn) -> None:
    g, gkeys = _gdn_syms(mn)
    reg.add("c11.gdn_d_k", "锚点模型 GDN 每个头的键维数 d_k", g["d_k"], kind="config", symbols=gkeys,
            sources=(f"{mn.where}：{gkeys['d_k']}",))


def _recall(reg) -> None:
    d, seed, gate = recall.parse_settings(RECALL_DEFAULTS["d_k"], RECALL_DEFAULTS["seed"], RECALL_DEFAULTS["gate"])
    c = recall.recall_counts(d, seed, gate)
    src = (f"课程的联想记忆实验（numpy，d_k = {d}，种子 {seed}，α = {recall._gate_text(gate)}），构建时运行",)
    reg.add("c11.recall.d_k", "联想记忆实验的键维数 d_k", value=d, kind="config", sources=src)
    reg.add("c11.recall.n_max", "联想记忆实验最多存入的键值对数", value=recall.N_POINTS[-1], kind="config", sources=src)
    for m in recall.MEMORIES:
        for n in recall.N_POINTS:
            reg.add(f"c11.recall.{m}.n{n}", f"联想记忆实验：存入 {n} 对时{recall.MEMORY_ZH[m]}的找回率",
                    value=Fraction(c[m][n], n), kind="ratio", style="pct0", sources=src)
    n_max = recall.N_POINTS[-1]
    for m in ("linear", "delta"):
        reg.add(f"c11.recall.{m}_recent",
                f"联想记忆实验：存入 {n_max} 对时，{recall.MEMORY_ZH[m]}在最后写入的 d_k 对里的找回率",
                value=Fraction(c[m + "_recent"], d), kind="ratio", style="pct0", sources=src)
        reg.add(f"c11.recall.{m}_older",
                f"联想记忆实验：存入 {n_max} 对时，{recall.MEMORY_ZH[m]}在更早写入的对里的找回率",
                value=Fraction(c[m + "_older"], n_max - d), kind="ratio", style="pct0", sources=src)
    behind, big = recall.delta_behind(c, d)
    reg.add("c11.recall.n_from_dk", "联想记忆实验里存入量 N ≥ d_k 的档数", value=big, kind="count", sources=src)
    reg.add("c11.recall.delta_behind", "这些档里 delta 规则找回的对数少于只做加法的状态的档数", value=behind,
            kind="count", sources=src)


# -- hybrid layouts of models the engine does not read (data/hybrid_layouts.json, counted by layouts.py) ----------
LAYOUT_NAMES = {"minimax-m1": "minimax", "kimi-linear-48b-a3b": "kimi"}


def _layouts(reg, docs: dict) -> None:
    for model_id, short in LAYOUT_NAMES.items():
        doc = docs.get(model_id)
        if not isinstance(doc, dict):
            continue
        try:
            n = layouts.layer_counts(doc.get("config") or {})
        except ValueError as e:
            raise CourseError(f"data/hybrid_layouts.json: key '{model_id}.config': {e}") from None
        where = f"{doc['source_zh']}：{doc['layer_key']}"
        p = f"c11.{short}"
        lin = reg.add(f"{p}.n_linear", f"{doc['name']} 的线性注意力层数", value=n["linear"], kind="config",
                      sources=(where,))
        full = reg.add(f"{p}.n_full", f"{doc['name']} 的全注意力层数", value=n["full"], kind="config", sources=(where,))
        reg.add(f"{p}.L", f"{doc['name']} 的层数", value=n["L"], kind="config",
                sources=(f"{doc['source_zh']}：num_hidden_layers",))
        reg.add(f"{p}.full_share", f"{doc['name']} 全注意力层占全部层的比例",
                Sym("全注意力层数", full.value) / Sym("层数", n["L"]), kind="ratio", style="pct", sources=(where,))
        reg.add(f"{p}.linear_per_full", f"{doc['name']} 每层全注意力对应几层线性注意力",
                Sym("线性注意力层数", lin.value) / Sym("全注意力层数", full.value), kind="ratio", style="x2",
                sources=(where,))
