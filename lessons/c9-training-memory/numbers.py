"""Lesson C9's numbers (c9.*): bytes per parameter by recipe, model states of the course's models, ZeRO's example,
Korthikanti's formula against the ledger, logits, recomputation, and the trainer's measured step.

Every byte count comes from the training-memory ledger (experiments/ledger/training.py) on a model's config, from a
cited figure (data/citations.json) or from the recorded measurement of the numpy trainer (data/train_memory.json,
written by ``python -m experiments.train.memory``). GB are 10^9 bytes, as ZeRO's paper counts them.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ...errors import CourseError
from ...expr import Const, Sym
from ...ledger import training as T
from ...train import memory as MM
from . import calc

LEDGER = "训练显存账本逐张量现算"
MEASURED = "课程训练代码构建时真跑一步、逐个数组数出的字节（numpy 的 nbytes）"
MODELS = ("baseline", "gpt2", "llama7b", "qwen3_8b", "anchor")
SEQ = 4096                                       # the sequence length the prose compares at (micro-batch 1)
CE_CHUNK = 1024                                  # tokens per chunk of the chunked cross-entropy the prose shows
SIGNIFICAND_BITS = {"bf16": 8, "fp32": 24}       # 7 and 23 stored, plus the implicit leading 1
FORMAT_SRC = "IEEE 754 的 binary32 与 Google 的 bfloat16 格式说明：BF16 是 1 位符号、8 位指数、7 位尾数"


def _gb(x: int) -> Fraction:
    return Fraction(x, T.GB)


def _src(mn, extra: str = LEDGER) -> tuple[str, ...]:
    return (f"{mn.where}；{extra}",)


def register(reg, models, course=None, data=None) -> None:
    if data is None:            # (a caller without the data documents: this lesson's measured numbers need one)
        return
    for recipe in T.RECIPES:
        reg.add(f"c9.bpp.{recipe}", f"{calc.RECIPE_ZH[recipe]}：每个参数占的字节（非矩阵参数）",
                value=T.bytes_per_param(recipe), sources=("ZeRO 论文的记账法，按配方逐项相加",), kind="bytes")
    comps = {c.key: c.bytes for c in T.RECIPES["mixed_adamw"]}
    reg.add("c9.bpp.muon_matrix", "Muon：一个隐藏层矩阵参数占的字节（一个动量缓冲）",
            value=T.bytes_per_param("muon", "matrix"), sources=("按配方逐项相加",), kind="bytes")
    reg.add("c9.bpp.muon_saving", "Muon 的隐藏层矩阵参数比混合精度 AdamW 少占的字节",
            Sym("AdamW", T.bytes_per_param("mixed_adamw")) - Sym("Muon", T.bytes_per_param("muon", "matrix")),
            sources=("按配方逐项相加",), kind="bytes")
    reg.add("c9.bpp.weights_adam_only", "只算 BF16 权重和 FP32 的 Adam m、v（不算梯度和主权重）",
            Sym("权重", comps["weights"]) + Sym("m", comps["adam_m"]) + Sym("v", comps["adam_v"]),
            sources=("按配方逐项相加",), kind="bytes")
    reg.add("c9.bpp.zero_K", "ZeRO 记账里混合精度 Adam 的优化器状态 K：FP32 主权重、m、v（字节/参数）",
            Sym("主权重", comps["master"]) + Sym("m", comps["adam_m"]) + Sym("v", comps["adam_v"]),
            sources=("ZeRO 论文第 3.1 节",), kind="bytes")
    reg.add("c9.bpp.bf16_state", "混合精度 AdamW：BF16 的权重、梯度每个参数各占的字节", value=comps["weights"],
            sources=("ZeRO 论文第 3.1 节",), kind="bytes")
    reg.add("c9.adam8_block", "8-bit Adam 每个 FP32 缩放因子管的值数（块大小）", value=T.BLOCK_8BIT,
            sources=("Dettmers 等 2021，8-bit Optimizers via Block-wise Quantization",), kind="config")
    reg.add("c9.seq", "正文比较时用的序列长度（token）", value=SEQ, sources=("本课的设定",), kind="config")
    reg.add("c9.ce_chunk", "分块交叉熵每块的 token 数", value=CE_CHUNK, sources=("本课的设定",), kind="config")
    reg.add("c9.try.long_seq", "「试一试」里的长序列（token）", value=32768, sources=("本课的设定",), kind="config")
    _precision(reg)
    for alias in MODELS:
        if alias in models:
            _states(reg, models[alias])
    _zero(reg)
    if "gpt2" in models:
        _korthikanti(reg, models["gpt2"], "gpt2")
    if "qwen3_8b" in models:
        _korthikanti(reg, models["qwen3_8b"], "qwen3_8b")
        _logits(reg, models["qwen3_8b"], "qwen3_8b")
        _crossover(reg, models["qwen3_8b"], "c9.qwen3_8b.cross", ("eager",))
    if "anchor" in models:
        _logits(reg, models["anchor"], "anchor")
        _mixers_and_mtp(reg, models["anchor"])
    if "llama7b" in models:
        _recompute(reg, models["llama7b"])
    if "baseline" in models:
        _measured(reg, models["baseline"], (data or {}).get("train_memory"))


def _precision(reg) -> None:
    """What a BF16 number can hold against FP32: significand bits (the stored ones and the implicit leading 1),
    the decimal digits they make (bits·log10 2), and how much smaller than a weight an update can be before
    round-to-nearest drops it whole (below half the spacing, 2^-(bits+1) of the weight at worst)."""
    for name, bits in SIGNIFICAND_BITS.items():
        reg.add(f"c9.{name}.bits", f"{name.upper()} 的尾数位数（含不存的最高位 1）", value=bits, kind="config",
                sources=(FORMAT_SRC,))
        reg.add(f"c9.{name}.digits", f"{name.upper()} 约合几位十进制有效数字：尾数位 × log₁₀2",
                value=bits * math.log10(2), kind="ratio", style="x1", sources=(FORMAT_SRC,))
    reg.add("c9.bf16.lost_ratio", "更新量不到权重的几分之一时，加到 BF16 的权重上一定被舍掉：2^(尾数位 + 1)",
            value=2 ** (SIGNIFICAND_BITS["bf16"] + 1), kind="ratio", sources=(FORMAT_SRC,))


def _states(reg, mn) -> None:
    p = f"c9.{mn.p}"
    if mn.p == "llama7b":
        reg.add(f"{p}.bf16_weights", f"{mn.name}：参数 × 2 字节（BF16 权重，GB）",
                Sym("参数", mn.ledger.total) * Const(2) / Const(T.GB), kind="bytes", style="x1", sources=_src(mn))
    for recipe in T.RECIPES:
        mem = T.training_memory(mn.ledger, recipe=recipe, seq_len=128)
        reg.add(f"{p}.states.{recipe}", f"{mn.name}：{calc.RECIPE_ZH[recipe]}的模型状态（GB）",
                value=_gb(mem.part("states")), sources=_src(mn), kind="bytes", style="x1")


def _zero(reg) -> None:
    cited = reg.numbers
    if "cited.zero_example_params" not in cited:
        return
    psi = cited["cited.zero_example_params"].value
    nd = cited["cited.zero_example_ranks"].value
    P, N = Sym("Ψ", psi), Sym("N_d", nd)
    k = Const(12)
    exprs = {0: (Const(2) + Const(2) + k) * P, 1: Const(4) * P + k * P / N, 2: Const(2) * P + (Const(2) + k) * P / N,
             3: (Const(4) + k) * P / N}
    for stage, expr in exprs.items():
        value = Fraction(T.zero_model_states(int(psi), stage, int(nd)), 1)
        reg.add(f"c9.zero.s{stage}", f"ZeRO 论文的例子（Ψ = 75 亿参数，N_d = 64）：阶段 {stage} 每张卡的模型状态（GB）",
                expr / Const(T.GB), value=value / T.GB, sources=("ZeRO 论文的公式，用论文例子的 Ψ 和 N_d 现算",),
                kind="bytes", style="x2")


def _per_layer(mem: T.TrainMemory, layer_type: str | None = None) -> int:
    return sum(i.per_layer for i in mem.items if i.layers and (layer_type is None or
                                                                 i.key.startswith(f"activations/{layer_type}/")))


def _korthikanti(reg, mn, name: str) -> None:
    a = mn.arch
    cited = reg.numbers
    c34, c5 = cited["cited.korthikanti_const"].value, cited["cited.korthikanti_score_coeff"].value
    s, b = (1024, 1) if name == "gpt2" else (SEQ, 1)
    S, B, H, A = Sym("s", s), Sym("b", b), Sym("h", a.d_model), Sym("a", a.n_heads)
    formula = S * B * H * (Sym("34", c34) + Sym("5", c5) * A * S / H)
    p = f"c9.kor.{name}"
    reg.add(f"{p}.s", f"对照 Korthikanti 公式时 {mn.name} 用的序列长度", value=s, sources=("本课的设定",),
            kind="config")
    layer = mn.ledger.layer_types[0]
    reg.add(f"{p}.formula", f"Korthikanti 等的公式给 {mn.name} 一层的激活（字节，s = {s}，b = {b}）", formula,
            sources=("Korthikanti 等 2022，式 (1)", mn.where), kind="bytes")
    mem = T.training_memory(mn.ledger, T.KORTHIKANTI, seq_len=s, micro_batch=b)
    reg.add(f"{p}.ledger", f"账本按他们的假设（16 位激活、dropout、保存打分矩阵）给 {mn.name} 一层的激活（字节）",
            value=_per_layer(mem, layer), sources=_src(mn), kind="bytes")
    real = T.training_memory(mn.ledger, seq_len=s, micro_batch=b)
    reg.add(f"{p}.real", f"{mn.name} 真实的块（无 dropout、融合注意力内核、BF16）一层的激活（字节）",
            value=_per_layer(real, layer), sources=_src(mn), kind="bytes")


def _logits(reg, mn, name: str) -> None:
    mem = T.training_memory(mn.ledger, seq_len=SEQ)
    chunked = T.training_memory(mn.ledger, seq_len=SEQ, ce_chunk=CE_CHUNK)
    p = f"c9.logits.{name}"
    logits = mem.part("loss/logits") + mem.part("loss/softmax_fp32")
    reg.add(f"{p}.bytes", f"{mn.name}：一条 {SEQ} token 的序列，BF16 logits 加 FP32 softmax（GB）",
            Sym("s", SEQ) * Sym("V", mn.arch.vocab_size) * (Const(2) + Const(4)) / Const(T.GB),
            value=_gb(logits), sources=_src(mn), kind="bytes", style="x2")
    reg.add(f"{p}.chunked", f"{mn.name}：同一条序列，每次只算 {CE_CHUNK} 个 token 的交叉熵时 logits 占的（GB）",
            value=_gb(chunked.part("loss/logits") + chunked.part("loss/softmax_fp32")), sources=_src(mn),
            kind="bytes", style="x2")
    layer = max(mn.ledger.layer_types, key=lambda t: _per_layer(mem, t))
    reg.add(f"{p}.layer", f"{mn.name}：同一条序列，激活最多的一层（GB）", value=_gb(_per_layer(mem, layer)),
            sources=_src(mn), kind="bytes", style="x2")
    reg.add(f"c9.{mn.p}.V", f"{mn.name} 的词表大小 V", value=mn.arch.vocab_size, sources=(mn.where + "：vocab_size",),
            kind="config")


def _mixers_and_mtp(reg, mn) -> None:
    """Per token and layer, what a Gated DeltaNet mixer and an attention block keep (if the model has both), and
    what its MTP modules keep (if it has them), at the prose's sequence length."""
    mem = T.training_memory(mn.ledger, seq_len=SEQ)
    p = f"c9.{mn.p}"
    per = {t: {i.key.split("/", 2)[2]: i.per_layer for i in mem.items if i.key.startswith(f"activations/{t}/")}
           for t in mn.ledger.layer_types}
    if "linear_attention" in per and "full_attention" in per:
        reg.add("c9.gdn_chunk", "Gated DeltaNet 训练内核的块长（token）：WY 矩阵每头每 token 存这么多个数",
                value=T.GDN_CHUNK, sources=("flash-linear-attention，chunk_gated_delta_rule 的默认块长",),
                kind="config")
        gdn = sum(v for k, v in per["linear_attention"].items() if k.startswith("mixer/"))
        attn = sum(v for k, v in per["full_attention"].items() if k.startswith("attn/"))
        reg.add(f"{p}.gdn_token", f"{mn.name}：一层 Gated DeltaNet 的 token 混合器每个 token 留给反向的字节",
                value=Fraction(gdn, SEQ), sources=_src(mn), kind="bytes")
        reg.add(f"{p}.attn_token", f"{mn.name}：一层全注意力（融合内核）每个 token 留给反向的字节",
                value=Fraction(attn, SEQ), sources=_src(mn), kind="bytes")
    if mem.part("activations/mtp"):
        reg.add(f"{p}.mtp_acts", f"{mn.name}：一条 {SEQ} token 的序列，MTP 模块留给反向的激活（GB）",
                value=_gb(mem.part("activations/mtp")), sources=_src(mn), kind="bytes", style="x2")
        reg.add(f"{p}.mtp_logits", f"{mn.name}：同一条序列，MTP 多出来的一份 logits 和 FP32 softmax（GB）",
                value=_gb(mem.part("loss/mtp/logits") + mem.part("loss/mtp/softmax_fp32")), sources=_src(mn),
                kind="bytes", style="x2")


def _recompute(reg, mn) -> None:
    p = "c9.rec"
    runs = {m: T.training_memory(mn.ledger, seq_len=SEQ, recompute=m, kernel="eager") for m in T.RECOMPUTE}
    for m, mem in runs.items():
        reg.add(f"{p}.{m}", f"{mn.name}：s = {SEQ}、b = 1、朴素注意力，{calc.RECOMPUTE_ZH[m]}时的激活（GB）",
                value=_gb(mem.part("activations")), sources=_src(mn), kind="bytes", style="x1")
        if m != "none":
            reg.add(f"{p}.{m}_extra", f"{mn.name}：{calc.RECOMPUTE_ZH[m]}多做的计算占一步的比例",
                    value=Fraction(mem.recompute_flops, mem.step_flops), sources=_src(mn), kind="ratio", style="pct")
    reg.add(f"{p}.states", f"{mn.name}：混合精度 AdamW 的模型状态（GB）", value=_gb(runs["none"].part("states")),
            sources=_src(mn), kind="bytes", style="x1")
    _crossover(reg, mn, "c9.cross", T.KERNELS)


def _crossover(reg, mn, prefix: str, kernels) -> None:
    """For each attention kernel, the shortest sequence (a power of two, micro-batch 1, no recomputation) whose
    activations and logits exceed the model's mixed-precision AdamW states."""
    for kernel in kernels:
        cross = calc.crossover_seq(mn.ledger, "none", kernel)
        reg.add(f"{prefix}.{kernel}",
                f"{mn.name}：micro-batch 1、不重算（{calc.KERNEL_ZH[kernel]}），激活和 logits 超过模型状态的最短序列",
                value=cross or 0, sources=_src(mn), kind="count")


def _measured(reg, mn, doc) -> None:
    if not doc or "baseline" not in doc:
        raise CourseError("data/train_memory.json: missing or without 'baseline'; make it with: "
                          "python -m experiments.train.memory")
    m = doc["baseline"]
    b, s = m["batch_size"], m["seq_len"]
    mem = T.training_memory(mn.ledger, MM.ledger_setup(b, s))
    src = (MEASURED + f"（batch {b} × {s} token）",)
    held = m["param_bytes"] + m["grad_bytes"] + m["optimizer_bytes"]
    reg.add("c9.meas.batch", "实测那一步的 batch（条序列）", value=b, sources=src, kind="config")
    reg.add("c9.meas.seq", "实测那一步的序列长度（token）", value=s, sources=src, kind="config")
    reg.add("c9.meas.states", "课程基线实测：参数、梯度和 AdamW 状态的字节", value=held, sources=src, kind="bytes")
    reg.add("c9.meas.activations", "课程基线实测：前向留给反向的全部数组（含 logits）的字节",
            value=m["activation_bytes"], sources=src, kind="bytes")
    reg.add("c9.meas.peak", "课程基线实测：一步里 Python 内存追踪到的峰值（字节）", value=m["peak_step_bytes"],
            sources=src, kind="bytes")
    reg.add("c9.ledger.states", "账本预言：课程基线这一步的模型状态（字节）", value=mem.part("states"),
            sources=_src(mn), kind="bytes")
    reg.add("c9.ledger.activations", "账本预言：课程基线这一步前向留下的激活和 logits（字节）",
            value=mem.part("activations") + mem.part("loss"), sources=_src(mn), kind="bytes")
    reg.add("c9.ledger.total", "账本预言：课程基线这一步一共（字节）", value=mem.total, sources=_src(mn), kind="bytes")
    reg.add("c9.meas.over", "实测峰值比账本多出的比例",
            Sym("峰值", m["peak_step_bytes"]) / Sym("账本", mem.total) - Const(1), sources=src, kind="ratio",
            style="pct")
