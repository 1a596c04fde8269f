"""FFN 精读：参数、显存与计算三本账 — the numbers the FFN deep-read lesson needs beyond the generic ones.

Names are ``ffn.<quantity>``. As in lesson C4's numbers, every number is one expression tree (experiments.expr)
whose formula, substituted values and value come from the same object; where the ledger engine (or calc.py) has its own
value for the same quantity it is passed as ``value=`` and the Registry asserts both agree. Figures from papers and
data sheets (GPT-3's 300B tokens, H100's 3.35 TB/s ...) are ``cited.*`` numbers from data/citations.json; numbers
built on them are skipped when the citations are not loaded. Units other than parameters and bytes are written
into the number: ``*_gb`` values are in 10⁹ bytes, ``*_ms`` in milliseconds, ``*_zflops`` in 10²¹ FLOPs.

The INT4 probe's numbers are floats from real numpy (calc.int4_probe, fixed seed); they have no
expression, and the lesson prints them with the same formatting the in-page probe uses.
"""
from __future__ import annotations

from fractions import Fraction

from ...expr import Const, Sym, group_digits
from ...ledger import views
from ...toolkit.model_numbers import LEDGER
from . import DEPTH_DEFAULTS, INT4_DEFAULTS, MEMORY_DEFAULTS, PREFILL_DEFAULTS, TRAINING_DEFAULTS, extra
from . import calc as ffn

GB = Const(10**9)
TERA = Const(10**12)

# the lesson's illustrative settings (not measurements): the widgets' first states, and one MoE what-if
ACT_BATCH, ACT_SEQ = TRAINING_DEFAULTS["batch"], TRAINING_DEFAULTS["seq"]
PROBE = INT4_DEFAULTS
MOE_WHAT_IF = {"model": "qwen3_30b_a3b", "n_experts": 64, "top_k": 6}
MEMORY_MODELS = tuple(MEMORY_DEFAULTS["models"])
DTYPES = ("FP16", "INT8", "INT4")


def decimal_text(value) -> str:
    """An exact value as a decimal when it terminates (67/20 -> '3.35', 1/2 -> '0.5'), else as group_digits does."""
    x = Fraction(value)
    if x.denominator == 1:
        return group_digits(x.numerator)
    for k in range(1, 40):
        scaled = x * 10**k
        if scaled.denominator == 1:
            digits = str(abs(scaled.numerator)).rjust(k + 1, "0")
            return ("-" if x < 0 else "") + f"{int(digits[:-k]):,}.{digits[-k:]}"
    return group_digits(x)


class Dec(Sym):
    """A symbol whose exact value is a terminating decimal, substituted as that decimal (3.35, not 67/20); the
    decimal text evaluates back to exactly the same Fraction (experiments.expr.evaluate)."""

    def substituted(self) -> str:
        return decimal_text(self._value)


def register(reg, models, course=None) -> None:
    cited = {k.removeprefix("cited."): v for k, v in reg.numbers.items() if k.startswith("cited.")}
    _dtype_bytes(reg)
    if "gpt3" in models:
        _gpt3(reg, models["gpt3"], cited)
    if "llama7b" in models:
        _llama7b(reg, models["llama7b"], cited)
        _swiglu(reg, models["llama7b"], models.get("llama_2_13b"), cited)
        _config_family(reg, models)
        _activations(reg, models["llama7b"])
        _limits(reg, models["llama7b"])
    if "llama70b" in models:
        _llama70b(reg, models["llama70b"])
    _memory(reg, models, cited)
    _training(reg, models)
    _compute(reg, models, cited)
    _moe(reg, models)
    _int4(reg)
    _prefill_decode(reg, models, cited)
    _share_formula(reg, models)
    _depth_width(reg, models)


def _src(mn, *symbols):
    return mn.src(*symbols)


def _leaf_count(mn, name: str) -> int:
    for node in mn.ledger.root.walk():
        if node.shape is not None and node.key.endswith("/" + name):
            return node.count
    raise KeyError(f"{mn.id}: no tensor {name!r}")


def _c(cited, name):
    """Sym of a cited figure (or None when citations are not loaded)."""
    return cited.get(name)


# -- bytes per parameter ----------------------------------------------------------------------------------------
def _dtype_bytes(reg) -> None:
    for t in ("FP32", "BF16", "FP16", "FP8", "INT8", "INT4"):
        bits = Sym(f"{t} 位数", views.DTYPE_BITS[t])
        reg.add(f"ffn.bytes.{t}", f"{t} 每个参数占的字节", bits / Const(8), kind="bytes", style="x1",
                sources=("每种数据类型的位数 ÷ 8",))


# -- GPT-3: one layer, the whole model, and why 175.2B is not the engine's count ---------------------------------
def _gpt3(reg, mn, cited) -> None:
    c, L = mn.cfg(), mn.ledger
    layer = L.layer("full_attention")
    ffn_w = layer.sum_where(lambda leaf, kinds: "ffn" in kinds and leaf.matmul) // layer.n
    attn_w = layer.sum_where(lambda leaf, kinds: "attention" in kinds and leaf.matmul) // layer.n
    kw = {"symbols": mn.keys}
    d, d_ff, Ls, V = c["d"], c["d_ff"], c["L"], c["V"]
    ffn_e = Const(2) * d * d_ff
    attn_e = Const(4) * d ** 2
    reg.add("ffn.gpt3_ffn_layer", "GPT-3 一层 FFN 的两个权重矩阵 2·d·d_ff（不含偏置）", ffn_e, value=ffn_w,
            sources=_src(mn, "d", "d_ff"), check="与账本引擎一层里 FFN 的矩阵权重之和一致", **kw)
    reg.add("ffn.gpt3_attn_layer", "GPT-3 一层注意力的四个 d × d 权重矩阵 4·d²（不含偏置）", attn_e, value=attn_w,
            sources=_src(mn, "d"), check="与账本引擎一层里注意力的矩阵权重之和一致", **kw)
    F, A = Sym("FFN 矩阵", ffn_w), Sym("注意力矩阵", attn_w)
    reg.add("ffn.gpt3_layer_share", "GPT-3 一层权重矩阵里 FFN 的占比", F / (F + A), kind="ratio", style="pct",
            sources=(mn.where + LEDGER,))
    reg.add("ffn.gpt3_layer_weights", "GPT-3 一层的权重矩阵合计 12·d²", Const(12) * d ** 2, value=ffn_w + attn_w,
            sources=_src(mn, "d"), **kw)
    reg.add("ffn.gpt3_ffn_all", "GPT-3 全部层的 FFN 权重矩阵 L·2·d·d_ff", Ls * ffn_e,
            sources=_src(mn, "L", "d", "d_ff"), **kw)
    reg.add("ffn.gpt3_attn_all", "GPT-3 全部层的注意力权重矩阵 L·4·d²", Ls * attn_e, sources=_src(mn, "L", "d"), **kw)
    reg.add("ffn.gpt3_layers_all", "GPT-3 全部层的权重矩阵 L·12·d²", Ls * Const(12) * d ** 2,
            sources=_src(mn, "L", "d"), **kw)
    wte = _leaf_count(mn, "wte.weight")
    reg.add("ffn.gpt3_vocab_matrix", "GPT-3 的词表矩阵 V·d", V * d, value=wte, sources=_src(mn, "V", "d"), **kw)
    weights = Ls * (Const(4) * d ** 2 + Const(2) * d * d_ff) + Const(2) * V * d
    reg.add("ffn.gpt3_weights_total", "只数权重矩阵、输入词表与输出投影各算一份时 GPT-3 的参数量",
            weights, sources=_src(mn, "L", "d", "d_ff", "V"), **kw)
    # the engine's count: biases, LayerNorms and learned positions in; the output projection tied (one copy)
    biases = L.root.sum_where(lambda leaf, kinds: leaf.name.endswith("bias") and "norm" not in kinds)
    reg.add("ffn.gpt3_biases", "GPT-3 全部线性层的偏置 L·(3d + d + d_ff + d)",
            Ls * (Const(3) * d + d + d_ff + d), value=biases, sources=_src(mn, "L", "d", "d_ff"), **kw)
    npos = Sym("n_positions", mn.arch.context_length)
    wpe = _leaf_count(mn, "wpe.weight")
    reg.add("ffn.gpt3_positions", "GPT-3 可学习位置嵌入 n_positions·d", npos * d, value=wpe,
            symbols={**mn.keys, "n_positions": "n_positions"}, sources=_src(mn, "T_max", "d"))
    norms = mn.reg[f"{mn.p}.part.norm"].value
    reg.add("ffn.gpt3_norms", "GPT-3 全部 LayerNorm（每层两个、最后一个，各有权重和偏置）",
            Ls * Const(2) * Const(2) * d + Const(2) * d, value=norms, sources=_src(mn, "L", "d"), **kw)
    gap = (Sym("第二份词表矩阵", wte) - Sym("偏置", biases) - Sym("LayerNorm", norms) - Sym("位置嵌入", wpe))
    reg.add("ffn.gpt3_total_gap", "「只数矩阵、输出不共享」的总数减去引擎逐张量的总数", gap,
            value=weights.value - L.total, sources=(mn.where + LEDGER,))
    T = Sym("T", mn.arch.context_length)
    reg.add("ffn.gpt3_intermediate_mb", "GPT-3 一条满长序列在一层 FFN 中间层的激活（BF16，单位 10⁶ 字节）",
            T * d_ff * Const(2) / Const(10**6), kind="bytes", style="x0",
            symbols={**mn.keys, "T": "n_positions"}, sources=_src(mn, "T_max", "d_ff"))
    reg.add("ffn.gpt3_width", "GPT-3 的 d_ff / d", d_ff / d, kind="ratio", style="x0", sources=_src(mn, "d_ff", "d"),
            **kw)
    paper = cited.get("gpt3_paper_total")
    if paper is not None:
        reg.add("ffn.gpt3_weights_vs_paper", "「只数矩阵」的总数比论文标称的多出的比例",
                Sym("只数矩阵的总数", weights.value) / Sym("论文标称", paper.value) - Const(1), kind="ratio",
                style="pct2", sources=(paper.sources[0], mn.where))
    ppl = [cited.get(f"vaswani_ppl_{k}") for k in ("small", "base", "large")]
    if all(x is not None for x in ppl):
        for name, a, b, label in (("ffn.vaswani_gain_small", ppl[0], ppl[1], "d_ff 从 1024 加到 2048"),
                                  ("ffn.vaswani_gain_large", ppl[1], ppl[2], "d_ff 从 2048 加到 4096")):
            reg.add(name, f"原版 Transformer 消融：{label}，开发集困惑度降了多少",
                    Dec("前", a.value) - Dec("后", b.value), kind="ratio", style="x2",
                    sources=(f"{a.sources[0]}；{b.sources[0]}",))
    dmodel, dff = cited.get("vaswani_d_model"), cited.get("vaswani_dff_base")
    if dmodel is not None and dff is not None:
        reg.add("ffn.vaswani_width", "原版 Transformer（base）的 d_ff / d_model",
                Sym("d_ff", dff.value) / Sym("d_model", dmodel.value), kind="ratio", style="x0",
                sources=(dff.sources[0],))


# -- Llama-2-7B: the four recounting pitfalls, layer vs whole-model share, KV cache -----------------------------------
def _llama7b(reg, mn, cited) -> None:
    c, L = mn.cfg(), mn.ledger
    kw = {"symbols": mn.keys}
    N = Sym("总参数", L.total)
    d, d_ff, Ls, V = c["d"], c["d_ff"], c["L"], c["V"]
    missed = Ls * d * d_ff
    reg.add("ffn.pit_matrices", "把 SwiGLU 当两矩阵数时漏掉的参数 L·d·d_ff", missed, value=L.ffn // 3,
            sources=_src(mn, "L", "d", "d_ff"), **kw)
    reg.add("ffn.pit_matrices_share", "漏掉的第三个矩阵占总参数的比例", Sym("漏数", missed.value) / N,
            kind="ratio", style="pct", sources=(mn.where + LEDGER,))
    biases = Ls * (Const(4) * d + Const(2) * d_ff + d)
    reg.add("ffn.pit_biases", "若给每个线性层都加上偏置（Llama 2 没有）会多数的参数 L·(4d + 2·d_ff + d)", biases,
            sources=_src(mn, "L", "d", "d_ff"), **kw)
    reg.add("ffn.pit_biases_share", "多数的偏置占总参数的比例", Sym("偏置", biases.value) / N, kind="ratio",
            style="pct2", sources=(mn.where + LEDGER,))
    head = mn.reg[f"{mn.p}.part.lm_head"].value
    reg.add("ffn.pit_tied", "不共享的输出投影 V·d（误当共享时漏掉）", V * d, value=head, sources=_src(mn, "V", "d"),
            **kw)
    reg.add("ffn.pit_tied_share", "输出投影占总参数的比例", Sym("lm_head", head) / N, kind="ratio", style="pct",
            sources=(mn.where + LEDGER,))
    norm = mn.reg[f"{mn.p}.part.norm"].value
    reg.add("ffn.pit_norms", "全部 RMSNorm 的参数 L·2d + d", Ls * Const(2) * d + d, value=norm,
            sources=_src(mn, "L", "d"), **kw)
    reg.add("ffn.pit_norms_share", "归一化层占总参数的比例", Sym("归一化", norm) / N, kind="ratio", style="pct3",
            sources=(mn.where + LEDGER,))
    reg.add("ffn.llama7b_attn_layer", "Llama 2 7B 一层注意力 4·d²（MHA，无偏置）", Const(4) * d ** 2,
            value=mn.reg[f"{mn.p}.mixer.full_attention"].value, sources=_src(mn, "d"), **kw)
    reg.add("ffn.llama7b_width", "Llama 2 7B 的 d_ff / d", d_ff / d, kind="ratio", style="x2",
            sources=_src(mn, "d_ff", "d"), **kw)
    kv = views.kv_bytes_per_token(L)
    kv_e = Const(2) * Ls * c["h_kv"] * c["d_h"] * Const(2)
    reg.add("ffn.llama7b_kv_token", "Llama 2 7B 每个 token 的 KV cache（K、V × 层 × KV 头 × 头宽 × BF16 的 2 字节）",
            kv_e, value=kv, kind="bytes", sources=_src(mn, "L", "h_kv", "d_h"), **kw)
    reg.add("ffn.llama7b_kv_context_gb", "Llama 2 7B 一条满长上下文的 KV cache（GB）",
            Sym("每 token 字节", kv) * c["T_max"] / GB, kind="bytes", style="x2", sources=_src(mn, "T_max"), **kw)


def _llama70b(reg, mn) -> None:
    c = mn.cfg()
    kw = {"symbols": mn.keys}
    d = c["d"]
    attn = mn.reg[f"{mn.p}.mixer.full_attention"].value
    gqa = d * (c["h"] * c["d_h"]) + Const(2) * d * (c["h_kv"] * c["d_h"]) + c["h"] * c["d_h"] * d
    reg.add("ffn.llama70b_gqa_attn", "Llama 2 70B 一层 GQA 注意力 d·h·d_h + 2·d·h_kv·d_h + h·d_h·d", gqa, value=attn,
            sources=_src(mn, "d", "h", "h_kv", "d_h"), **kw)
    reg.add("ffn.llama70b_mha_attn", "Llama 2 70B 若用 MHA（KV 头 = 查询头）一层注意力 4·d²", Const(4) * d ** 2,
            sources=_src(mn, "d"), **kw)
    reg.add("ffn.llama70b_attn_d2", "Llama 2 70B 一层 GQA 注意力是 d² 的几倍", Sym("注意力", attn) / d ** 2,
            kind="ratio", style="x2", sources=_src(mn, "d"), **kw)
    reg.add("ffn.llama70b_width", "Llama 2 70B 的 d_ff / d", c["d_ff"] / d, kind="ratio", style="x1",
            sources=_src(mn, "d_ff", "d"), **kw)
    reg.add("ffn.llama70b_mha_share", "Llama 2 70B 若用 MHA，一层（不计归一化）里 FFN 的占比",
            Sym("FFN", mn.reg[f"{mn.p}.ffn_per_layer"].value)
            / (Sym("FFN", mn.reg[f"{mn.p}.ffn_per_layer"].value) + Sym("4d²", 4 * mn.arch.d_model ** 2)),
            kind="ratio", style="pct", sources=(mn.where + LEDGER,))


# -- SwiGLU: the third matrix and 8/3·d ------------------------------------------------------------------------------
def _swiglu(reg, mn, mn13, cited) -> None:
    c = mn.cfg()
    kw = {"symbols": mn.keys}
    d = c["d"]
    reg.add("ffn.swiglu_two_4d", "经典两矩阵、宽 4d 的一层 FFN：2·d·4d", Const(2) * d * (Const(4) * d),
            sources=_src(mn, "d"), **kw)
    reg.add("ffn.swiglu_three_4d", "三矩阵却仍取 4d 宽的一层 FFN：3·d·4d", Const(3) * d * (Const(4) * d),
            sources=_src(mn, "d"), **kw)
    reg.add("ffn.swiglu_three_llama", "Llama 2 7B 一层 SwiGLU：3·d·d_ff", Const(3) * d * c["d_ff"],
            value=mn.reg[f"{mn.p}.ffn_per_layer"].value, sources=_src(mn, "d", "d_ff"), **kw)
    nominal = Const(8) / Const(3) * d
    reg.add("ffn.swiglu_nominal", "名义宽度 8/3·d", nominal, kind="config", sources=_src(mn, "d"), **kw)
    reg.add("ffn.swiglu_added", "对齐后比名义宽度多出的通道 d_ff − 8/3·d", c["d_ff"] - nominal,
            sources=_src(mn, "d_ff", "d"), **kw)
    three, two = mn.reg[f"{mn.p}.ffn_per_layer"].value, 2 * mn.arch.d_model * 4 * mn.arch.d_model
    reg.add("ffn.swiglu_align_error", "对齐后的三矩阵比 8d² 多出的比例",
            Sym("3·d·d_ff", three) / Sym("8d²", two) - Const(1), kind="ratio", style="pct2",
            sources=_src(mn, "d", "d_ff"))
    reg.add("ffn.swiglu_unshrunk_over", "三矩阵不缩宽时 FFN 比 8d² 多出的比例", Const(12) / Const(8) - Const(1),
            kind="ratio", style="pct0", sources=("3·d·4d = 12d² 对比 8d²",))
    reg.add("ffn.swiglu_unshrunk_share", "三矩阵不缩宽时 FFN 占一层（12d² + 4d²）的比例",
            Const(12) / (Const(12) + Const(4)), kind="ratio", style="pct0", sources=("12d² / (12d² + 4d²)",))
    multiple = cited.get("llama_multiple_of")
    if multiple is not None:
        m = Sym("multiple_of", multiple.value)
        blocks = -(-Fraction(8 * mn.arch.d_model, 3) // multiple.value)
        reg.add("ffn.swiglu_aligned", "8/3·d 向上取到 multiple_of 的倍数", Sym("⌈8/3·d ÷ multiple_of⌉", blocks) * m,
                value=mn.arch.d_ff, sources=(multiple.sources[0], *_src(mn, "d")),
                check="等于 Llama 2 7B config 的 intermediate_size")
        if mn13 is not None:
            b13 = -(-Fraction(8 * mn13.arch.d_model, 3) // multiple.value)
            reg.add("ffn.swiglu_aligned_13b", "Llama 2 13B：8/3·d 向上取到 multiple_of 的倍数",
                    Sym("⌈8/3·d ÷ multiple_of⌉", b13) * m, value=mn13.arch.d_ff,
                    sources=(multiple.sources[0], *_src(mn13, "d")),
                    check="等于 Llama 2 13B config 的 intermediate_size")
            reg.add("ffn.swiglu_nominal_13b", "Llama 2 13B 的名义宽度 8/3·d", Const(8) / Const(3) * mn13.cfg()["d"],
                    kind="config", symbols=mn13.keys, sources=_src(mn13, "d"))
        _alignment_table(reg, multiple)


def _alignment_table(reg, multiple) -> None:
    """The alignment table the SwiGLU widget shows (its d column, calc.ALIGN_DS): for each d, how far
    3·d·d_ff lands above 8d² once 8/3·d is rounded up to a multiple of `multiple_of`."""
    m = Sym("multiple_of", multiple.value)
    for d_value in ffn.ALIGN_DS:
        d = Sym("d", d_value)
        blocks = -(-Fraction(8 * d_value, 3) // multiple.value)
        d_ff = Sym("⌈8/3·d ÷ multiple_of⌉", blocks) * m
        reg.add(f"ffn.align_d.d{d_value}", "对齐误差表里的一档 d_model", d, kind="config",
                symbols={"d": "对齐误差表的 d 取值"}, sources=("对齐误差表的 d 取值（示意设定）",))
        reg.add(f"ffn.align_error.d{d_value}", f"d = {d_value:,} 时，8/3·d 向上对齐后三矩阵 FFN 比 8d² 多出的比例",
                Const(3) * d * d_ff / (Const(8) * d * d) - Const(1), value=Fraction(3 * d_value * ffn.aligned_width(
                    d_value, Fraction(8, 3), multiple.value)[1], 8 * d_value ** 2) - 1, kind="ratio", style="pct2",
                symbols={"d": "对齐误差表的 d 取值", "multiple_of": "Llama 参考实现的对齐倍数"},
                sources=(multiple.sources[0],))


FAMILY_RATIOS = {"r8_3": Fraction(8, 3), "r7_2": Fraction(7, 2)}   # 8/3 and Llama-2-70B's 28,672 / 8,192


def _config_family(reg, models) -> None:
    """The SwiGLU widget's config generator (calc.FAMILY, aligned to 256): each size's FFN share of
    one layer at width 8/3·d and at Llama-2-70B's 3.5·d, counted by the ledger engine."""
    from ...ledger import build_ledger
    big = models.get("llama70b")
    if big is not None and Fraction(big.arch.d_ff, big.arch.d_model) != FAMILY_RATIOS["r7_2"]:
        raise AssertionError("FAMILY_RATIOS['r7_2'] must be Llama 2 70B's d_ff / d")
    for key, ratio in FAMILY_RATIOS.items():
        for n_layers, d in ffn.FAMILY:
            _, d_ff = ffn.aligned_width(d, ratio, 256)
            ledger = build_ledger(ffn.llama_config(n_layers, d, d_ff))
            layer = ledger.layer("full_attention")
            f = layer.sum_where(lambda leaf, kinds: "ffn" in kinds) // layer.n
            reg.add(f"ffn.family_share_layer.{key}.d{d}",
                    f"配置生成器：d = {d:,}、宽 {ratio.numerator}/{ratio.denominator}·d（对齐到 256）"
                    "时一层里 FFN 的占比",
                    Sym("FFN", f) / Sym("一层", layer.per_copy), kind="ratio", style="pct",
                    sources=("配置生成器的 Llama 式 config" + LEDGER,))


# -- memory: weights per dtype, decode bounds -----------------------------------------------------------------------
def _memory(reg, models, cited) -> None:
    bw, peak = cited.get("h100_bandwidth_tbps"), cited.get("h100_bf16_tflops")
    for alias in MEMORY_MODELS:
        mn = models.get(alias)
        if mn is None:
            continue
        N = Sym("参数", mn.ledger.total)
        read = Sym("每步读取的矩阵权重", views.matmul_weights(mn.ledger))
        for t in DTYPES:
            b = Dec(f"{t} 字节", Fraction(views.DTYPE_BITS[t], 8))
            reg.add(f"ffn.weights_gb.{alias}.{t}", f"{mn.name} 的权重在 {t} 下占的显存（GB）", N * b / GB,
                    kind="bytes", style="x1", sources=(mn.where + LEDGER, "每种数据类型的位数"))
            if bw is None:
                continue
            B = Dec("带宽 TB/s", bw.value)
            seconds = read * b / (B * TERA)
            reg.add(f"ffn.decode_ms.{alias}.{t}",
                    f"{mn.name} 在 {t}、H100 带宽下批 1 解码每个 token 至少要读权重的时间（ms）",
                    seconds * Const(1000), kind="ratio", style="x1",
                    sources=(mn.where + LEDGER, bw.sources[0]))
            reg.add(f"ffn.decode_tps.{alias}.{t}", f"{mn.name} 在 {t}、H100 带宽下批 1 解码的速度上限（token/s）",
                    B * TERA / (read * b), kind="ratio", style="x0",
                    sources=(mn.where + LEDGER, bw.sources[0]))
        fp16, int4 = Dec("FP16 字节", 2), Dec("INT4 字节", Fraction(1, 2))
        reg.add(f"ffn.int4_saving_gb.{alias}", f"{mn.name} 从 FP16 压到 INT4 省下的显存（GB）", N * (fp16 - int4) / GB,
                kind="bytes", style="x1", sources=(mn.where + LEDGER,))
        F = Sym("FFN 参数", mn.ledger.ffn)
        reg.add(f"ffn.int4_saving_ffn_gb.{alias}", f"{mn.name} 省下的显存里来自 FFN 的部分（GB）",
                F * (fp16 - int4) / GB, kind="bytes", style="x1", sources=(mn.where + LEDGER,))
        reg.add(f"ffn.int4_saving_rest_gb.{alias}", f"{mn.name} 省下的显存里来自其余部分的（GB）",
                (N - F) * (fp16 - int4) / GB, kind="bytes", style="x1", sources=(mn.where + LEDGER,))
        ffn_read = views.matmul_weights(mn.ledger, lambda kinds: "ffn" in kinds)
        reg.add(f"ffn.decode_ffn_share.{alias}", f"{mn.name} 批 1 解码每步读取的权重里 FFN 的占比",
                Sym("FFN 矩阵权重", ffn_read) / read, kind="ratio", style="pct", sources=(mn.where + LEDGER,))
        reg.add(f"ffn.read_gb.{alias}.FP16", f"{mn.name} 批 1 解码每步读取的矩阵权重（FP16，GB）",
                read * Sym("FP16 字节", 2) / GB, kind="bytes", style="x2", sources=(mn.where + LEDGER,))
    if bw is not None and peak is not None:
        for t in ("BF16", "INT4"):
            b = Dec(f"{t} 字节", Fraction(views.DTYPE_BITS[t], 8))
            reg.add(f"ffn.takeover_batch.{t}", f"权重为 {t} 时，H100 上稠密模型解码从带宽瓶颈转为算力瓶颈的批大小",
                    Dec("峰值 TFLOPS", peak.value) * b / (Const(2) * Dec("带宽 TB/s", bw.value)), kind="ratio",
                    style="x0", sources=(peak.sources[0],
                                         bw.sources[0]))
            cont = Fraction(peak.value) * Fraction(views.DTYPE_BITS[t], 8) / (2 * Fraction(bw.value))
            whole = -(-cont // 1)
            reg.add(f"ffn.takeover_batch_min.{t}", f"权重为 {t} 时，H100 上稠密模型解码由算力接管的最小整数批大小"
                    "（上一个数向上取整，与显存与解码计算器一致）", Sym("⌈接管批大小⌉", whole), kind="tokens",
                    style="n", symbols={"⌈接管批大小⌉": "峰值 × 字节 ÷ (2 × 带宽)，向上取整"},
                    sources=(peak.sources[0], bw.sources[0]))


# -- training memory ------------------------------------------------------------------------------------------------
def _training(reg, models) -> None:
    for recipe, parts in views.TRAINING_RECIPES.items():
        reg.add(f"ffn.train_bytes.{recipe}", f"{ffn.RECIPE_ZH[recipe]}：每个参数训练时占的字节",
                sum((Sym(k, v) for k, v in list(parts.items())[1:]), Sym(*list(parts.items())[0])),
                kind="bytes", style="x0", sources=("训练配方里每个参数要存的各项字节",))
    for alias in ("llama7b", "llama70b"):
        mn = models.get(alias)
        if mn is None:
            continue
        for recipe in ("mixed_adamw", "mixed_sgd_momentum", "mixed_adamw_8bit"):
            per = Sym("每参数字节", views.training_bytes_per_param(recipe))
            reg.add(f"ffn.train_gb.{alias}.{recipe}",
                    f"{mn.name} 用{ffn.RECIPE_ZH[recipe]}训练时权重、梯度和优化器状态（GB）",
                    Sym("参数", mn.ledger.total) * per / GB, kind="bytes", style="x1",
                    sources=(mn.where + LEDGER, "训练配方里每个参数要存的各项字节"))


def _activations(reg, mn) -> None:
    c = mn.cfg()
    kw = {"symbols": {**mn.keys, "B": "示意设定", "T": "示意设定"}}
    B, T = Sym("B", ACT_BATCH), Sym("T", ACT_SEQ)
    reg.add("ffn.act_batch", "激活显存示例的批大小（示意设定）", B, kind="config", sources=("示意设定",), **kw)
    reg.add("ffn.act_seq", "激活显存示例的序列长度（示意设定）", T, kind="config", sources=("示意设定",), **kw)
    per_layer = B * T * (c["d"] + Const(3) * c["d_ff"]) * Const(2) / GB
    elems, one = ffn.ffn_activation_elems(mn.ledger)
    src = (*_src(mn, "d", "d_ff", "L"), "B、T 为示意设定")
    reg.add("ffn.act_layer_gb", "Llama 2 7B 一层 FFN 为反向保存的激活：B·T·(d + 3·d_ff)·2 字节（GB）", per_layer,
            value=Fraction(ACT_BATCH * ACT_SEQ * one * 2, 10**9), kind="bytes", style="x2", sources=src, **kw)
    reg.add("ffn.act_all_gb", "Llama 2 7B 全部层 FFN 为反向保存的激活（GB）", c["L"] * per_layer,
            value=Fraction(ACT_BATCH * ACT_SEQ * elems * 2, 10**9), kind="bytes", style="x1", sources=src, **kw)
    ckpt = B * T * (c["L"] * c["d"] + c["d"] + Const(3) * c["d_ff"]) * Const(2) / GB
    reg.add("ffn.act_ckpt_gb", "整层重算：每层只存输入，反向时重算一层（GB）", ckpt, kind="bytes", style="x1",
            sources=src, **kw)


# -- compute: 2N, 6ND, GPU-days, tokens per parameter ----------------------------------------------------------------
def _compute(reg, models, cited) -> None:
    mn = models.get("llama7b")
    tokens, hours, sustained = cited.get("llama2_train_tokens"), cited.get("llama2_7b_gpu_hours"), \
        cited.get("sustained_tflops")
    if mn is not None:
        N = Sym("N", mn.ledger.total)
        reg.add("ffn.llama7b_fwd_gflops", "Llama 2 7B 每个 token 前向约 2N FLOPs（单位 10⁹）", Const(2) * N / GB,
                kind="flops", style="x1", symbols={"N": "全部参数"}, sources=(mn.where + LEDGER,))
        reg.add("ffn.llama7b_ffn_flops_share", "Llama 2 7B 每 token 前向矩阵乘 FLOPs 里 FFN 的占比",
                Sym("FFN FLOPs", views.ffn_flops_per_token(mn.ledger))
                / Sym("全部矩阵乘 FLOPs", views.param_flops_per_token(mn.ledger)), kind="ratio", style="pct",
                sources=(mn.where + LEDGER,))
        if tokens is not None:
            D = Sym("D", tokens.value)
            train = Const(6) * N * D
            reg.add("ffn.llama7b_train_zflops", "Llama 2 7B 预训练 6·N·D（单位 10²¹ FLOPs）", train / Const(10**21),
                    kind="flops", style="x1", symbols={"N": "全部参数", "D": "cited.llama2_train_tokens"},
                    sources=(mn.where + LEDGER, tokens.sources[0]))
            reg.add("ffn.llama7b_train_flops", "Llama 2 7B 预训练 6·N·D（FLOPs）", train, kind="flops", style="e2",
                    symbols={"N": "全部参数", "D": "Llama 2 的预训练 token 数"},
                    sources=(mn.where + LEDGER, tokens.sources[0]))
            reg.add("ffn.llama2_tokens_t", "Llama 2 的预训练 token 数（单位万亿）", D / TERA, kind="tokens", style="x1",
                    sources=(tokens.sources[0],))
            reg.add("ffn.llama7b_tokens_per_param", "Llama 2 7B 每个参数分到的训练 token", D / N, kind="ratio",
                    style="x0", sources=(mn.where + LEDGER, tokens.sources[0]))
            if sustained is not None:
                S = Sym("每卡持续 TFLOPS", sustained.value)
                reg.add("ffn.llama7b_gpu_days", "Llama 2 7B 预训练按假设的持续吞吐折算的 GPU 日",
                        train / (S * TERA) / Const(86400), kind="ratio", style="x0",
                        sources=(sustained.sources[0],
                                 tokens.sources[0]))
            if hours is not None:
                H = Sym("GPU 小时", hours.value)
                reg.add("ffn.llama7b_gpu_days_reported", "Llama 2 论文报告的 7B 预训练 A100 GPU 日", H / Const(24),
                        kind="ratio", style="x0", sources=(hours.sources[0],))
                implied = train / (H * Const(3600)) / TERA
                reg.add("ffn.llama7b_implied_tflops", "由 6·N·D 和报告的 GPU 小时反推的每卡持续吞吐（TFLOPS）", implied,
                        kind="ratio", style="x0", sources=(hours.sources[0],
                                                           tokens.sources[0]))
                a100 = cited.get("a100_bf16_tflops")
                if a100 is not None:
                    reg.add("ffn.llama7b_implied_mfu", "反推的持续吞吐占 A100 稠密 BF16 峰值的比例",
                            implied / Dec("A100 峰值", a100.value), kind="ratio",
                            style="pct0", sources=(a100.sources[0],))
    peak = cited.get("h100_bf16_tflops")
    if sustained is not None and peak is not None:
        reg.add("ffn.sustained_vs_h100", "假设的持续吞吐占 H100 稠密 BF16 峰值的比例",
                Sym("持续", sustained.value) / Dec("峰值", peak.value), kind="ratio", style="pct0",
                sources=(sustained.sources[0],))
    g3 = models.get("gpt3")
    gt = cited.get("gpt3_train_tokens")
    if g3 is not None and gt is not None:
        N3, D3 = Sym("N", g3.ledger.total), Sym("D", gt.value)
        reg.add("ffn.gpt3_tokens_per_param", "GPT-3 每个参数分到的训练 token", D3 / N3, kind="ratio", style="x1",
                sources=(g3.where + LEDGER, gt.sources[0]))
        flops_cited = cited.get("gpt3_train_flops_e21")
        e = Const(6) * N3 * D3 / Const(10**21)
        check = None
        if flops_cited is not None:
            check = (f"GPT-3 论文表 D.1 给出 {float(flops_cited.value) / 100:.2f}E+23 FLOPs："
                     + ("✓" if round(float(e.value)) == int(flops_cited.value) else "✗"))
        reg.add("ffn.gpt3_train_flops", "GPT-3 训练 6·N·D（FLOPs）", Const(6) * N3 * D3, kind="flops", style="e2",
                sources=(g3.where + LEDGER, gt.sources[0]))
        if flops_cited is not None:
            reg.add("ffn.gpt3_train_flops_paper", "GPT-3 论文给出的 175B 模型训练总计算量（FLOPs）",
                    Sym("论文数（10²¹ FLOPs）", flops_cited.value) * Const(10**21), kind="flops", style="e2",
                    sources=(flops_cited.sources[0],))
        reg.add("ffn.gpt3_train_zflops", "GPT-3 训练 6·N·D（单位 10²¹ FLOPs）", e, kind="flops", style="x0",
                sources=(g3.where + LEDGER, gt.sources[0]), check=check)
    cp, ct = cited.get("chinchilla_params"), cited.get("chinchilla_tokens")
    if cp is not None and ct is not None:
        reg.add("ffn.chinchilla_tokens_per_param", "Chinchilla 每个参数分到的训练 token",
                Sym("D", ct.value) / Sym("N", cp.value), kind="ratio", style="x0",
                sources=(ct.sources[0],))
        reg.add("ffn.chinchilla_tokens_t", "Chinchilla 的训练 token 数（单位万亿）", Sym("D", ct.value) / TERA,
                kind="tokens", style="x1", sources=(ct.sources[0],))


# -- MoE -------------------------------------------------------------------------------------------------------------
def _moe(reg, models) -> None:
    for alias, mn in models.items():
        if not mn.arch.moe:
            continue
        # (ffn.moe_ratio.<alias>, cited by C11 too, is registered by toolkit/shared_numbers.py)
        reg.add(f"ffn.moe_experts.{alias}", f"{mn.name} 每个 MoE 层的路由专家数", Sym("E", mn.arch.moe.n_experts),
                kind="config", symbols={"E": "路由专家数"}, sources=(mn.where,))
        reg.add(f"ffn.moe_top_k.{alias}", f"{mn.name} 每个 token 选的专家数", Sym("k", mn.arch.moe.top_k),
                kind="config", symbols={"k": "num_experts_per_tok"}, sources=(mn.where,))
    what = models.get(MOE_WHAT_IF["model"])
    if what is not None:
        r = ffn.moe_explore(what.doc["config"], MOE_WHAT_IF["n_experts"], MOE_WHAT_IF["top_k"])
        src = (f"{what.where} 改成 {MOE_WHAT_IF['n_experts']} 个专家、每个 token 选 {MOE_WHAT_IF['top_k']} 个后，"
               "由课程的账本引擎重数",)
        reg.add("ffn.moe_whatif_experts", "改造示例的专家数", Sym("E", MOE_WHAT_IF["n_experts"]), kind="config",
                symbols={"E": "示意设定"}, sources=("示意设定",))
        reg.add("ffn.moe_whatif_top_k", "改造示例每个 token 选的专家数", Sym("k", MOE_WHAT_IF["top_k"]), kind="config",
                symbols={"k": "示意设定"}, sources=("示意设定",))
        reg.add("ffn.moe_whatif_total",
                f"{what.name} 改成 {MOE_WHAT_IF['n_experts']} 个专家、top-{MOE_WHAT_IF['top_k']} 后的总参数",
                value=r["now"]["total_raw"], sources=src)
        reg.add("ffn.moe_whatif_active", "改造后每 token 激活的参数", value=r["now"]["active_raw"], sources=src)
        reg.add("ffn.moe_whatif_ratio", "改造后总参数是激活参数的几倍",
                Sym("总参数", r["now"]["total_raw"]) / Sym("激活", r["now"]["active_raw"]), kind="ratio", style="x1",
                sources=src)


# -- limits: too narrow, too wide ------------------------------------------------------------------------------------
def _limits(reg, mn) -> None:
    from ...ledger import build_ledger
    c, L = mn.cfg(), mn.ledger
    kw = {"symbols": mn.keys}
    N = Sym("原总数", L.total)
    narrow_cfg = dict(mn.doc["config"], intermediate_size=mn.arch.d_model)
    narrow = build_ledger(narrow_cfg)
    reg.add("ffn.narrow_total", "Llama 2 7B 把 d_ff 压到 d 之后的总参数",
            N - c["L"] * Const(3) * c["d"] * (c["d_ff"] - c["d"]), value=narrow.total,
            sources=(mn.where + LEDGER, "把 intermediate_size 改成 hidden_size 后由课程的账本引擎重数"), **kw)
    reg.add("ffn.narrow_share", "压窄后 FFN 占总参数的比例", Sym("FFN", narrow.ffn) / Sym("总参数", narrow.total),
            kind="ratio", style="pct", sources=("把 intermediate_size 改成 hidden_size 后由课程的账本引擎重数",))
    wide_cfg = dict(mn.doc["config"], intermediate_size=2 * mn.arch.d_ff)
    wide = build_ledger(wide_cfg)
    reg.add("ffn.wide_total", "Llama 2 7B 把 d_ff 加宽一倍之后的总参数", N + c["L"] * Const(3) * c["d"] * c["d_ff"],
            value=wide.total, sources=(mn.where + LEDGER, "把 intermediate_size 改成两倍后由课程的账本引擎重数"), **kw)
    reg.add("ffn.wide_read_increase", "d_ff 加宽一倍后，批 1 解码每步多读的权重比例",
            Sym("加宽后每步读取", views.matmul_weights(wide)) / Sym("原每步读取", views.matmul_weights(L)) - Const(1),
            kind="ratio", style="pct", sources=(mn.where + LEDGER,))


# -- the INT4 probe's first state ------------------------------------------------------------------------------------
def _int4(reg) -> None:
    reg.add("ffn.int4_bits_g128", "分组 128、每组一个 FP16 缩放因子时每个权重的平均位数 4 + 16/128",
            Const(4) + Const(16) / Const(128), kind="ratio", style="x3", sources=("INT4 的 4 位 + FP16 缩放因子分摊",))
    reg.add("ffn.int4_scale_overhead", "分组 128 时缩放因子相对 4 位权重的额外开销", Const(16) / Const(128) / Const(4),
            kind="ratio", style="pct", sources=("(16/128) / 4",))
    p = PROBE
    r = ffn.int4_probe(p["rows"], p["cols"], p["outlier_pct"], p["outlier_scale"], p["seed"])
    src = (f"页内 INT4 探针（{p['rows']} 行 × {p['cols']} 列，离群行 {p['outlier_pct']}% × "
           f"{p['outlier_scale']}，种子 {p['seed']}）：numpy 现算，浏览器里同一种子得到同样的数",)
    for key, label in (("rows", "探针矩阵的行数（输入维）"), ("cols", "探针矩阵的列数（输出维）"),
                       ("seed", "探针的随机种子")):
        reg.add(f"ffn.int4_{key}", label, Sym(key, p[key]), kind="config", symbols={key: "示意设定"},
                sources=("示意设定",))
    reg.add("ffn.int4_outlier_pct", "探针里离群行的占比（示意设定）", Dec("k", Fraction(p["outlier_pct"]) / 100),
            kind="ratio", style="pct0", symbols={"k": "示意设定"}, sources=("示意设定",))
    reg.add("ffn.int4_outlier_scale", "探针里离群行被放大的倍数（示意设定）", Dec("s", Fraction(p["outlier_scale"])),
            kind="config", style="x0", symbols={"s": "示意设定"}, sources=("示意设定",))
    reg.add("ffn.int4_outliers", "探针矩阵里的离群行数", value=int(r["outliers"].replace(",", "")), sources=src)
    for g in r["groups"]:
        size = g["group"]
        reg.add(f"ffn.int4_group.g{size}", f"探针的分组大小 {size}", Sym("G", size), kind="config",
                symbols={"G": "分组大小"}, sources=("INT4 探针比较的几种分组大小",))
        reg.add(f"ffn.int4_rel.g{size}", f"分组 {size} 时的相对均方根误差（含离群行）", value=g["rel_value"],
                kind="ratio", style="pct2", sources=src)
        reg.add(f"ffn.int4_rel_normal.g{size}", f"分组 {size} 时普通行的相对均方根误差", value=g["rel_normal_value"],
                kind="ratio", style="pct2", sources=src)
        reg.add(f"ffn.int4_rel_plain.g{size}", f"分组 {size} 时同一矩阵不放大离群行的相对均方根误差",
                value=g["rel_plain_value"], kind="ratio", style="pct2", sources=src)


# -- prefill vs decode (extra.prefill_decode) --------------------------------------------------------------------------
def _prefill_decode(reg, models, cited) -> None:
    """The ffn-prefill-decode widget's first state: PREFILL_DEFAULTS' model, precision and prompt on an H100."""
    o = PREFILL_DEFAULTS
    mn = models.get(o["model"])
    bw, peak = cited.get(f"{o['gpu']}_bandwidth_tbps"), cited.get(f"{o['gpu']}_bf16_tflops")
    if mn is None or bw is None or peak is None:
        return
    src = (mn.where + LEDGER, peak.sources[0], bw.sources[0])
    B, P = Dec("带宽 TB/s", bw.value), Dec("峰值 TFLOPS", peak.value)
    b = Dec(f"{o['dtype']} 字节", Fraction(views.DTYPE_BITS[o["dtype"]], 8))
    W = Sym("每步读取的矩阵权重", views.matmul_weights(mn.ledger))
    N = Sym("N", o["prompt"])
    r = extra.prefill_decode(mn.doc["config"], o["dtype"], bw.value, peak.value, o["prompt"], o["batch"])
    reg.add("ffn.pd_ridge", "H100 的「算力 ÷ 带宽」：每读 1 字节要做多少 FLOPs 才不等数据（FLOP/字节）", P / B,
            kind="ratio", style="x0", sources=(peak.sources[0], bw.sources[0]))
    reg.add("ffn.pd_prompt", "prefill 示例的提示词长度（示意设定）", N, kind="tokens", symbols={"N": "示意设定"},
            sources=("示意设定",))
    w = ffn.step_weights(mn.ledger)
    nbytes = Fraction(views.DTYPE_BITS[o["dtype"]], 8)
    pre = Fraction(2 * w.active * o["prompt"]) / (w.read(o["prompt"]) * nbytes)
    reg.add("ffn.pd_intensity_prefill", f"{mn.name} prefill {o['prompt']:,} 个 token：每读 1 字节权重做的 FLOPs",
            Const(2) * W * N / (W * b), value=pre, kind="ratio", style="x0", symbols={"N": "示意设定"}, sources=src)
    reg.add("ffn.pd_intensity_decode", f"{mn.name} 批 1 解码：每读 1 字节权重做的 FLOPs",
            Const(2) * W / (W * b), kind="ratio", style="x0", sources=src)
    reg.add("ffn.pd_prefill_mem_ms", f"{mn.name} prefill {o['prompt']:,} 个 token 时读一遍权重的时间（ms）",
            W * b / (B * TERA) * Const(1000), kind="ratio", style="x2", sources=src)
    reg.add("ffn.pd_prefill_cmp_ms", f"{mn.name} prefill {o['prompt']:,} 个 token 的矩阵乘按峰值算力要的时间（ms）",
            Const(2) * W * N / (P * TERA) * Const(1000), kind="ratio", style="x1", symbols={"N": "示意设定"},
            sources=src)
    reg.add("ffn.pd_decode_cmp_ms", f"{mn.name} 批 1 解码一步的矩阵乘按峰值算力要的时间（ms）",
            Const(2) * W / (P * TERA) * Const(1000), kind="ratio", style="x3", sources=src)
    reg.add("ffn.pd_decode_use", f"{mn.name} 批 1 解码时算力最多用上峰值的比例（读权重的时间里只算这么多）",
            (Const(2) * W / (P * TERA)) / (W * b / (B * TERA)), kind="ratio", style="pct2", sources=src)
    pre_tps = N / (Const(2) * W * N / (P * TERA))
    dec_tps = B * TERA / (W * b)
    reg.add("ffn.pd_prefill_tps", f"{mn.name} prefill 每秒最多处理的提示词 token（算力上限）", pre_tps,
            value=Fraction(o["prompt"]) / max(r_raw for r_raw in _times(w, o["prompt"], nbytes, bw, peak)),
            kind="ratio", style="x0", symbols={"N": "示意设定"}, sources=src)
    reg.add("ffn.pd_decode_tps", f"{mn.name} 批 1 解码每秒最多生成的 token（带宽上限）", dec_tps,
            value=1 / max(_times(w, 1, nbytes, bw, peak)), kind="ratio", style="x0", sources=src)
    reg.add("ffn.pd_speedup", "同一张卡上 prefill 每秒处理的 token 是批 1 解码每秒生成的几倍",
            pre_tps / dec_tps, kind="ratio", style="x1", sources=src)
    assert r["prefill"]["bound"] == "算力" and r["decode"]["bound"] == "带宽"


def _times(w, tokens, nbytes, bw, peak):
    return ffn._step_times(w, tokens, nbytes, Fraction(bw.value), Fraction(peak.value))


# -- the FFN share formula (extra.formula_share) ----------------------------------------------------------------------
def _share_formula(reg, models) -> None:
    """Per model: the formula m·r / (m·r + 2 + 2·h_kv/h) beside the engine's count of one layer (its weight
    matrices only, and the whole layer)."""
    for alias, mn in models.items():
        if mn.arch.moe:
            continue
        s = extra.model_layer_shares(mn.ledger)
        c = mn.cfg()
        M = Sym("m", mn.arch.ffn_matrices)
        r = c["d_ff"] / c["d"]
        g = c["h_kv"] / c["h"]
        kw = {"symbols": {**mn.keys, "m": "FFN 的矩阵数"}, "sources": _src(mn, "d_ff", "d", "h_kv", "h")}
        reg.add(f"ffn.sf_r.{alias}", f"{mn.name} 的 r = d_ff / d", r, kind="ratio", style="x2", **kw)
        reg.add(f"ffn.sf_kv.{alias}", f"{mn.name} 的 h_kv / h", g, kind="ratio", style="x3", **kw)
        reg.add(f"ffn.sf_formula.{alias}", f"{mn.name}：公式 m·r / (m·r + 2 + 2·h_kv/h) 给出的 FFN 占比",
                M * r / (M * r + Const(2) + Const(2) * g), value=s["formula"], kind="ratio", style="pct2", **kw)
        lt = s["layer_type"]
        node = mn.ledger.layer(lt)
        fm = node.sum_where(lambda leaf, kinds: "ffn" in kinds and leaf.matmul) // node.n
        am = node.sum_where(lambda leaf, kinds: leaf.matmul and any(k in kinds for k in views.MIXER_KINDS)) // node.n
        F, A = Sym("FFN 矩阵", fm), Sym("注意力矩阵", am)
        reg.add(f"ffn.sf_matrices.{alias}", f"{mn.name}：账本引擎数一层（{lt}）的权重矩阵，FFN 的占比",
                F / (F + A), value=s["matrices"], kind="ratio", style="pct2", sources=(mn.where + LEDGER,))
        reg.add(f"ffn.sf_whole.{alias}", f"{mn.name}：账本引擎数一整层（{lt}，含归一化和偏置），FFN 的占比",
                Sym("FFN", node.sum_where(lambda leaf, kinds: "ffn" in kinds) // node.n) / Sym("一层", node.per_copy),
                value=s["whole"], kind="ratio", style="pct2", sources=(mn.where + LEDGER,))
    for m in (2, 3):
        M = Sym("m", m)
        reg.add(f"ffn.sf_r23.m{m}", f"{m} 个矩阵、MHA 时，FFN 占三分之二所需的 r（解 m·r / (m·r + 4) = 2/3）",
                Const(2) * Const(4) / M, value=extra.r_for_share(m, 1, Fraction(2, 3)), kind="ratio", style="x2",
                symbols={"m": "FFN 的矩阵数"}, sources=("由公式 m·r / (m·r + 4) 解出",))
        reg.add(f"ffn.sf_r50.m{m}", f"{m} 个矩阵、MHA 时，FFN 占一半所需的 r（解 m·r / (m·r + 4) = 1/2）",
                Const(4) / M, value=extra.r_for_share(m, 1, Fraction(1, 2)), kind="ratio", style="x2",
                symbols={"m": "FFN 的矩阵数"}, sources=("由公式 m·r / (m·r + 4) 解出",))
    g = Sym("h_kv/h", Fraction(1, 8))
    reg.add("ffn.sf_attn_d2.kv8", "h_kv/h = 1/8 时一层注意力是 d² 的几倍：2 + 2·h_kv/h", Const(2) + Const(2) * g,
            kind="ratio", style="x2", symbols={"h_kv/h": "KV 头数 / 查询头数"},
            sources=("Q、O 各 d²，K、V 各 h_kv/h · d²",))
    reg.add("ffn.sf_r23.m3kv8", "3 个矩阵、h_kv/h = 1/8 时，FFN 占三分之二所需的 r",
            Const(2) * (Const(2) + Const(2) * g) / Const(3), value=extra.r_for_share(3, Fraction(1, 8), Fraction(2, 3)),
            kind="ratio", style="x2", symbols={"h_kv/h": "KV 头数 / 查询头数"}, sources=("由公式解出",))


# -- depth vs width at a fixed budget (extra.depth_width) -------------------------------------------------------------
DW_PROSE_LAYERS = (16, 32, 64)


def _depth_width(reg, models) -> None:
    o = DEPTH_DEFAULTS
    mn = models.get(o["budget"])
    if mn is None:
        return
    budget, T = mn.ledger.total, o["T"]
    reg.add("ffn.dw_budget", f"深度与宽度示例的参数预算（{mn.name} 的总数）", Sym("预算", budget),
            sources=(mn.where + LEDGER,))
    reg.add("ffn.dw_T", "深度与宽度示例的上下文长度 T（示意设定）", Sym("T", T), kind="tokens",
            symbols={"T": "示意设定"}, sources=("示意设定",))
    src = (f"按 {mn.name} 的总数为预算，对每个层数 L 取总数最接近预算的 Llama 式 config（头宽 {extra.HEAD_DIM}、"
           f"SwiGLU 宽 8/3·d 对齐到 {extra.ALIGN}、词表 {extra.VOCAB:,}），由课程的账本引擎现数",)
    for L in DW_PROSE_LAYERS:
        row = extra.depth_width_row(budget, L, T)["raw"]
        Ls, d, d_ff = Sym("L", L), Sym("d", row["d"]), Sym("d_ff", row["d_ff"])
        sym = {"L": "层数（示意设定）", "d": "按预算搜出的宽度", "d_ff": "8/3·d 向上对齐到 256"}
        reg.add(f"ffn.dw_L.L{L}", f"深度与宽度示例的层数 {L}", Ls, kind="config", symbols=sym, sources=("示意设定",))
        reg.add(f"ffn.dw_d.L{L}", f"预算固定、{L} 层时的宽度 d", d, kind="config", symbols=sym, sources=src)
        reg.add(f"ffn.dw_d_ff.L{L}", f"预算固定、{L} 层时的 FFN 中间维", d_ff, kind="config", symbols=sym, sources=src)
        reg.add(f"ffn.dw_total.L{L}", f"预算固定、{L} 层时引擎数出的总参数", value=row["total"], sources=src)
        reg.add(f"ffn.dw_off.L{L}", f"预算固定、{L} 层时总参数比预算多出的比例", Sym("总参数", row["total"])
                / Sym("预算", budget) - Const(1), kind="ratio", style="pct2", sources=src)
        reg.add(f"ffn.dw_share_total.L{L}", f"预算固定、{L} 层时 FFN 占全部参数的比例", value=row["ffn_share_total"],
                kind="ratio", style="pct", sources=src)
        reg.add(f"ffn.dw_share_layer.L{L}", f"预算固定、{L} 层时 FFN 占一层的比例", value=row["ffn_share_layer"],
                kind="ratio", style="pct", sources=src)
        reg.add(f"ffn.dw_kv.L{L}", f"预算固定、{L} 层时每个 token 的 KV cache（字节，BF16，MHA）：2 × L × d × 2",
                Const(2) * Ls * d * Const(2), value=row["kv"], kind="bytes", symbols=sym, sources=src)
        reg.add(f"ffn.dw_score.L{L}", f"预算固定、{L} 层时，T 个历史 token 的注意力打分 FLOPs（每生成一个 token）",
                Ls * Const(2) * Const(2) * d * Sym("T", T), value=row["score"], kind="flops", style="e2",
                symbols={**sym, "T": "示意设定"}, sources=src)
        reg.add(f"ffn.dw_ffn_flops.L{L}", f"预算固定、{L} 层时 FFN 每 token 的 FLOPs：2 × 3 × d × d_ff × L",
                Const(2) * Const(3) * d * d_ff * Ls, value=row["ffn_flops"], kind="flops", style="e2", symbols=sym,
                sources=src)
        reg.add(f"ffn.dw_crossover.L{L}", f"预算固定、{L} 层时注意力打分追上 FFN 的上下文长度：3 · d_ff / 2",
                Const(3) * d_ff / Const(2), value=row["crossover"], kind="tokens", symbols=sym, sources=src)
