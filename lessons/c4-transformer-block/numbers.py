"""C4 一个 Transformer 块：参数到底花在哪 — the numbers its argument needs beyond the generic ones.

Every number here is one expression tree (experiments.expr) over config values, so the formula the popover
shows, the substituted values and the value itself come from the same object. Where the ledger engine has its
own value for the same quantity (a tensor's shape, a part's count, a model's total), it is passed as ``value=``
and the Registry asserts that both agree.

Three figures need real (floating-point) arithmetic: √(1 + 2·L), 0.02 / √(2·L) and SiLU(x)·x. The small node
types below compute them in floats in exactly the order Python evaluates their substituted form, so
``eval(to_python(expr.substituted()))`` reproduces the value bit for bit (SiLU needs ``exp`` = math.exp).

Names are ``c4.<quantity>``. Numbers whose inputs are cited (the old plan's 6 layers / 384 / 8K vocabulary) are
built from data/citations.json and are skipped when the citations are not loaded; gpt-oss's swiglu_limit is
skipped while the gpt_oss family cannot be built (its model is then absent from ``models``).
"""
from __future__ import annotations

from ...expr import Const, Exp, Neg, RealDiv, Sqrt, Sym
from ...toolkit.config_text import text_config_of
from ...toolkit.model_numbers import LEDGER
from ...toolkit.shared_numbers import layer_tensor


# -- helpers ---------------------------------------------------------------------------------------------------
def _count_where(mn, layer_type: str, kind: str) -> int:
    node = mn.ledger.layer(layer_type)
    return node.sum_where(lambda leaf, kinds: kind in kinds) // node.n


# -- the registrations -----------------------------------------------------------------------------------------
def register(reg, models, course: dict | None = None) -> None:
    if "anchor" in models:
        _anchor(reg, models["anchor"])
    if "baseline" in models:
        _baseline(reg, models["baseline"], models.get("gpt2"))
    if "gpt2" in models:
        _gpt2(reg, models["gpt2"])
    _old_plan(reg)
    _silu(reg)
    if "gpt_oss_120b" in models:
        _gpt_oss(reg, models["gpt_oss_120b"])
    if course is not None:
        tokens = (course.get("tracker") or {}).get("example_tokens")
        if tokens:
            reg.add("c4.example_tokens", "贯穿例句切成的 token 数", value=len(tokens), kind="tokens",
                    sources=("课程大纲里贯穿例句的分词结果",))


def _anchor(reg, mn) -> None:
    c, L = mn.cfg(), mn.ledger
    src = mn.src
    # FFN width
    reg.add("c4.anchor_ffn_width", "锚点模型 FFN 中间维是隐藏维的几倍", c["d_ff"] / c["d"], kind="ratio",
            style="x1", symbols=mn.keys, sources=src("d_ff", "d"))
    reg.add("c4.anchor_ffn_layer_d2", "锚点模型每层 FFN 参数是 d² 的几倍（三矩阵）", Const(3) * c["d_ff"] / c["d"],
            kind="ratio", style="x1", symbols=mn.keys, sources=src("d_ff", "d"))
    # gated full attention: widths of the projections, checked against the tensors' shapes
    if "full_attention" in L.layer_types:
        q = layer_tensor(mn, "full_attention", "q_proj.weight")
        k = layer_tensor(mn, "full_attention", "k_proj.weight")
        reg.add("c4.anchor_kv_width", "锚点模型 K（或 V）头拼起来的宽度 h_kv·d_h（GQA）", c["h_kv"] * c["d_h"],
                value=k.shape[0], symbols=mn.keys, sources=src("h_kv", "d_h"), check="与 k_proj 权重的输出维一致")
        reg.add("c4.anchor_q_proj_out", "锚点模型 q_proj 的输出维（一半是输出门）", Const(2) * c["h"] * c["d_h"],
                value=q.shape[0], symbols=mn.keys, sources=src("h", "d_h"), check="与 q_proj 权重的输出维一致")
        mats = (c["d"] * (Const(2) * c["h"] * c["d_h"]) + Const(2) * c["d"] * (c["h_kv"] * c["d_h"])
                + c["h"] * c["d_h"] * c["d"])
        mat_value = sum(layer_tensor(mn, "full_attention", f"{m}_proj.weight").count for m in "qkvo")
        reg.add("c4.anchor_attn_matrices", "锚点模型一层门控全注意力的四个投影矩阵（q 含输出门）合计", mats,
                value=mat_value, symbols=mn.keys, sources=src("d", "h", "h_kv", "d_h"))
        reg.add("c4.anchor_attn_4d2", "经典公式给一层注意力的 4d²", Const(4) * c["d"] ** 2, symbols=mn.keys,
                sources=src("d"))
        reg.add("c4.anchor_qk_norms", "锚点模型一层全注意力里 q_norm 与 k_norm 的参数", Const(2) * c["d_h"],
                value=layer_tensor(mn, "full_attention", "q_norm.weight").count
                + layer_tensor(mn, "full_attention", "k_norm.weight").count, symbols=mn.keys, sources=src("d_h"))
    # the two vocabulary matrices together
    parts = {k: mn.reg[f"{mn.p}.part.{k}"].value for k in ("embedding", "lm_head")
             if f"{mn.p}.part.{k}" in mn.reg.numbers}
    if "lm_head" in parts:
        reg.add("c4.anchor_vocab_share", "锚点模型输入 embedding 与 lm_head 两张词表矩阵合占全部参数的比例",
                (Sym("embedding", parts["embedding"]) + Sym("lm_head", parts["lm_head"])) / Sym("总参数", L.total),
                kind="ratio", style="pct", sources=(mn.where + LEDGER,))
    # every normalisation weight of the text backbone: the per-layer RMSNorms and the final one (the ledger's
    # "norm" part) plus the norms that sit inside the mixers (q_norm, k_norm; the GDN's output norm)
    if f"{mn.p}.part.norm" in mn.reg.numbers and set(L.layer_types) == {"full_attention", "linear_attention"}:
        layer_norms = Sym("层内两个 RMSNorm 与最终 RMSNorm", mn.reg[f"{mn.p}.part.norm"].value)
        tc, pre = text_config_of(mn.doc["config"])
        d_v = Sym("d_v", tc["linear_value_head_dim"])
        reg.add("c4.anchor_gdn_norm", "锚点模型一层 GDN 内部输出归一化的参数（每个值头宽 d_v 一份权重）", d_v,
                value=layer_tensor(mn, "linear_attention", "norm.weight").count,
                symbols={"d_v": pre + "linear_value_head_dim"}, sources=src("d"))
        n_full = Sym("全注意力层数", L.layer("full_attention").n)
        n_lin = Sym("GDN 层数", L.layer("linear_attention").n)
        text_norms = layer_norms + n_full * (Const(2) * c["d_h"]) + n_lin * d_v
        counted = L.part("text").sum_where(lambda leaf, kinds: "norm" in leaf.key)
        reg.add("c4.anchor_text_norms", "锚点模型文本主干里全部归一化的参数（层内 RMSNorm、最终 RMSNorm、"
                "q_norm、k_norm、GDN 的输出归一化）", text_norms, value=counted,
                symbols={**mn.keys, "d_v": pre + "linear_value_head_dim"}, sources=src("d_h"))
        reg.add("c4.anchor_norm_share", "锚点模型文本主干的全部归一化参数占整个 checkpoint 的比例",
                Sym("归一化", text_norms.value) / Sym("总参数", L.total), kind="ratio", style="pct3",
                sources=(mn.where + LEDGER,))
    # residual stream: 2 writes per layer, variance grows by one per write
    writes = Const(2) * c["L"]
    reg.add("c4.residual_writes", "锚点模型残差流的写入次数（每层两个子层）", writes, kind="count",
            symbols=mn.keys, sources=src("L"))
    reg.add("c4.residual_var", "残差流经 2·L 次单位方差独立写入后的方差（初始为 1）", Const(1) + writes,
            symbols=mn.keys, sources=src("L"))
    reg.add("c4.residual_std", "残差流的标准差（设每次写入互不相关、方差都是 1）", Sqrt(Const(1) + writes),
            kind="ratio", style="x2", symbols=mn.keys, sources=src("L"))
    # zero-centred RMSNorm eps
    tc, pre = text_config_of(mn.doc["config"])
    if "rms_norm_eps" in tc:
        reg.add("c4.anchor_rms_eps", "锚点模型 RMSNorm 的 eps", Sym("eps", tc["rms_norm_eps"]), kind="config",
                style="e0", symbols={"eps": pre + "rms_norm_eps"}, sources=(f"{mn.where}：{pre}rms_norm_eps",))


def _baseline(reg, mn, gpt2) -> None:
    c, L = mn.cfg(), mn.ledger
    if not mn.arch.tied_embeddings:
        raise AssertionError("the C4 hand count assumes the baseline ties lm_head to the embedding")
    kw = {"symbols": mn.keys}
    layer = "full_attention"
    emb = c["V"] * c["d"]
    attn = Const(4) * c["d"] * c["d"]
    ffn = Const(3) * c["d"] * c["d_ff"]
    norms = Const(2) * c["d"]
    final = c["d"]
    reg.add("c4.baseline_embedding", "基线的词表矩阵（输入、输出共用这一张，计一次）", emb,
            value=mn.reg[f"{mn.p}.part.embedding"].value, sources=mn.src("V", "d"), **kw)
    reg.add("c4.baseline_attn_per_layer", "基线一层注意力的四个投影（MHA，不带偏置）", attn,
            value=mn.reg[f"{mn.p}.mixer.{layer}"].value, sources=mn.src("d"), **kw)
    reg.add("c4.baseline_ffn_per_layer", "基线每层 FFN（SwiGLU 三矩阵）", ffn,
            value=_count_where(mn, layer, "ffn"), sources=mn.src("d", "d_ff"), **kw)
    reg.add("c4.baseline_norms_per_layer", "基线每层两个 RMSNorm", norms,
            value=_count_where(mn, layer, "norm"), sources=mn.src("d"), **kw)
    reg.add("c4.baseline_final_norm", "基线最终 RMSNorm", final, value=L.part("text").find("text/norm").count,
            sources=mn.src("d"), **kw)
    reg.add("c4.baseline_layer", "基线一层的全部参数", attn + ffn + norms,
            value=mn.reg[f"{mn.p}.layer.{layer}"].value, sources=mn.src("d", "d_ff"), **kw)
    hand = emb + c["L"] * (attn + ffn + norms) + final
    reg.add("c4.baseline_hand_total", "基线手算总数 V·d + L·(4d² + 3·d·d_ff + 2d) + d", hand, value=L.total,
            sources=mn.src("V", "d", "L", "d_ff"), check="与账本引擎逐张量计数、页内 numpy 基线模型的数组元素总数一致",
            **kw)
    reg.add("c4.baseline_ffn_share", "基线 FFN 占全部参数的比例",
            c["L"] * Sym("每层 FFN", ffn.value) / Sym("总参数", hand.value), kind="ratio", style="pct",
            sources=mn.src("L"), **kw)
    # GPT-2's init std scaled by 1/√N for the residual output projections, N = 2·L residual layers
    n_res = Const(2) * c["L"]
    reg.add("c4.baseline_residual_layers", "基线的残差子层数 N = 2·L", n_res, sources=mn.src("L"), **kw)
    if gpt2 is not None and "initializer_range" in gpt2.doc["config"]:
        std = Sym("σ", gpt2.doc["config"]["initializer_range"])
        cited = reg.numbers.get("cited.gpt2_init_std")
        check = None
        if cited is not None:
            mark = "✓" if float(cited.value) == std.value else "✗"
            check = f"GPT-2 论文给的初始化标准差（{cited.sources[0]}）：{float(cited.value)} {mark}"
        reg.add("c4.baseline_init_std_out", "基线残差输出投影的初始化标准差 σ / √(2·L)", RealDiv(std, Sqrt(n_res)),
                kind="ratio", style="x5", symbols={**mn.keys, "σ": "initializer_range"},
                sources=(f"{gpt2.where}：initializer_range", *mn.src("L")), check=check)


def _gpt2(reg, mn) -> None:
    c = mn.cfg()
    npos = Sym("n_positions", mn.arch.context_length)
    buffers = c["L"] * npos * npos
    keys = {**mn.keys, "n_positions": mn.keys.get("T_max", "n_positions")}
    reg.add("c4.gpt2_mask_buffers", "GPT-2 checkpoint 里每层一张因果掩码缓冲区的元素合计（不是参数）", buffers,
            symbols=keys, sources=mn.src("L", "T_max"))
    hub = mn.meta.get("hub_page_total")
    check = None
    if isinstance(hub, int):
        check = f"Hugging Face 上 GPT-2 模型页显示的参数数：{hub:,} " + \
                ("✓" if hub == mn.ledger.total + buffers.value else "✗")
    reg.add("c4.gpt2_hub_total", "GPT-2 在 Hugging Face 页面上显示的「参数」数（可学习参数 + 掩码缓冲区）",
            Sym("可学习参数", mn.ledger.total) + buffers,
            symbols=keys, sources=(mn.where + LEDGER, *mn.src("L", "T_max")),
            check=check)


def _old_plan(reg) -> None:
    names = ("old_plan_layers", "old_plan_d", "old_plan_vocab")
    cited = {k: reg.numbers.get(f"cited.{k}") for k in names}
    if any(v is None for v in cited.values()):
        return
    L, d, V = (Sym(s, cited[k].value) for s, k in zip(("L", "d", "V"), names))
    sources = tuple(dict.fromkeys(cited[k].sources[0] for k in names))
    syms = {"L": "旧版计划的层数", "d": "旧版计划的隐藏维", "V": "旧版计划的词表"}
    layers = Const(12) * L * d ** 2
    emb = V * d
    reg.add("c4.old_plan_layers_part", "旧版计划按经典公式的层内部分 12·L·d²", layers, symbols=syms, sources=sources)
    reg.add("c4.old_plan_embedding", "旧版计划的 embedding V·d（输入、输出共用，计一次）", emb, symbols=syms,
            sources=sources)
    total = reg.add("c4.old_plan_classic", "旧版计划按经典公式 12·L·d² + V·d 的估计", layers + emb, symbols=syms,
                    sources=sources)
    claim = reg.numbers.get("cited.old_plan_claim")
    if claim is not None:
        reg.add("c4.old_plan_overclaim", "旧版计划声称的参数量是经典公式估计的几倍",
                Sym("声称", claim.value) / Sym("估计", total.value), kind="ratio", style="x1",
                sources=tuple(dict.fromkeys((claim.sources[0], *sources))))


def _silu(reg) -> None:
    x = Sym("x", 10)
    reg.add("c4.silu_x", "SiLU 示意用的输入值 x", x, kind="config", symbols={"x": "示意输入"},
            sources=("示意输入（不是任何模型的测量值）",))
    reg.add("c4.silu_example", "SwiGLU 门与 up 投影都等于 x 时的输出 SiLU(x)·x（x = 10，示意）",
            RealDiv(x, Const(1) + Exp(Neg(x))) * x, kind="ratio", style="x3",
            sources=("SiLU(x) = x / (1 + exp(-x))；x = 10 是示意输入",), symbols={"x": "示意输入"})


def _gpt_oss(reg, mn) -> None:
    config = mn.doc["config"]
    if "swiglu_limit" not in config:
        return
    reg.add("c4.gpt_oss_swiglu_limit", "gpt-oss-120b 的 SwiGLU 截断值", Sym("swiglu_limit", config["swiglu_limit"]),
            kind="config", style="x0", symbols={"swiglu_limit": "swiglu_limit"}, sources=(f"{mn.where}：swiglu_limit",))
