"""C14 推理 — the lesson's numbers (c14.*), beyond the generic ones.

Serving figures come from experiments/toolkit/serving.py on the device table's H100 SXM (toolkit/devices.py:
bandwidth and dense tensor FLOP/s from NVIDIA's datasheet, memory as the driver reports it); where a figure has a
short formula it is an expression over the config's values and the device's, and the toolkit's own value is passed
as ``value=`` so the Registry asserts both agree. Speculative-sampling figures are read from the stored measurement
(data/train_speculative.json, `python -m experiments.train.runs --group speculative`); the chi-square p-values
are recomputed here from the stored statistics. Units are in the names:
``*_gb`` 10⁹ bytes, ``*_ms`` milliseconds, ``*_kb`` 10³ bytes.
"""
from __future__ import annotations

from fractions import Fraction

from ...expr import Const, Sym
from ...format import n
from ...toolkit import devices as DV
from ...toolkit import serving as S
from ...toolkit.stored import document
from ...train import speculative as SP
from . import BATCHING_DEFAULTS, SERVE_DEFAULTS

GB = Const(10**9)
DEV = DV.H100
DEV_SRC = (DEV.speed_source,)
MODEL = "qwen3_8b"            # the dense GQA model the text follows
MOE = "qwen3_30b_a3b"         # the MoE beside it
RESERVED = 32768              # the paging example: a request of the serving widget's `used` tokens in a 32K reservation
B_MID, B_BIG = 64, 256        # the batch sizes the text quotes


def register(reg, models, course=None, data=None) -> None:
    bw = Sym("带宽（字节/秒）", DEV.bandwidth)
    peak = Sym("BF16 峰值（FLOP/s）", DEV.bf16_flops)
    reg.add("c14.h100.bw_tbps", f"{DEV.name} 的显存带宽（TB/s）", bw / Const(10**12), kind="ratio", style="x2",
            sources=DEV_SRC)
    reg.add("c14.h100.bf16_tflops", f"{DEV.name} 的稠密 BF16 张量峰值（TFLOPS）", peak / Const(10**12),
            kind="ratio", style="x0", sources=DEV_SRC)
    reg.add("c14.h100.fp8_tflops", f"{DEV.name} 的稠密 FP8 张量峰值（TFLOPS）",
            Sym("FP8 峰值（FLOP/s）", DEV.fp8_flops) / Const(10**12), kind="ratio", style="x0", sources=DEV_SRC)
    reg.add("c14.ridge", "BF16 权重的解码由带宽转为算力的批大小（不计 KV cache）：峰值 × 2 字节 ÷（2 × 带宽）",
            peak * Const(2) / (Const(2) * bw), kind="ratio", style="x1", sources=DEV_SRC)
    reg.add("c14.h100.gb", f"{DEV.name} 驱动报告的显存（GB）", value=Fraction(DEV.bytes, 10**9), kind="bytes",
            style="x1", sources=(DEV.source,))
    reg.add("c14.b_mid", "正文举例用的中等批大小", value=B_MID, style="n",
            sources=("本课的设定：正文举例的批大小",))
    reg.add("c14.b_big", "正文举例用的大批大小", value=B_BIG, style="n",
            sources=("本课的设定：正文举例的批大小",))
    if MODEL in models:
        _dense(reg, models[MODEL])
    if MOE in models:
        _moe(reg, models[MOE])
    if BATCHING_DEFAULTS["model"] in models:
        _batching(reg, models[BATCHING_DEFAULTS["model"]])
    if data is not None:      # a caller with no data files (a test of another lesson's numbers) skips the runs
        _speculative(reg, data)


def _dense(reg, mn) -> None:
    led = mn.ledger
    p = "c14.q8"
    T = SERVE_DEFAULTS["context"]                 # the serving widget's first context: the text's example
    used = SERVE_DEFAULTS["used"]
    src = (mn.where + "（逐个张量由账本引擎数出）", DEV.speed_source)
    w = S.quantized_weight_bytes(led)
    reg.add(f"{p}.weights_gb", f"{mn.name} 的文本模型权重（BF16，GB）", value=w / 10**9, kind="bytes", style="x1",
            sources=src)
    kv_tok = S.kv_bytes(led, 1)
    a = mn.arch
    reg.add(f"{p}.kv_kb", f"{mn.name} 每个 token 的 KV cache（BF16，KB）：2 × 层数 × KV 头数 × 头维 × 2 字节",
            Const(2) * Sym("L", a.n_layers) * Sym("h_kv", a.n_kv_heads) * Sym("d_h", a.head_dim) * Const(2)
            / Const(1000), value=Fraction(kv_tok, 1000), kind="bytes", style="x0", symbols=mn.keys,
            sources=(mn.where + "：num_hidden_layers、num_key_value_heads、head_dim",))
    r1 = S.roofline(led, DEV, 1, T)
    reg.add(f"{p}.b1_ms", f"{mn.name} 批大小 1、上下文 {n(T)} 的一步解码至少要多久（ms，H100，BF16）",
            value=r1["step_time"] * 1000, kind="ratio", style="x2", sources=src)
    reg.add(f"{p}.b1_tps", f"{mn.name} 批大小 1 时每秒 token 上限（H100，BF16，上下文 {n(T)}）",
            value=r1["tokens_per_s"], kind="ratio", style="x0", sources=src)
    reg.add(f"{p}.b1_flop_ms", f"{mn.name} 批大小 1 时这一步的矩阵乘按峰值算完要多久（ms）",
            value=r1["compute_time"] * 1000, kind="ratio", style="x3", sources=src)
    reg.add(f"{p}.naive_tps", f"{mn.name} 只按峰值算力估的每秒 token 数（批大小 1）", value=1 / r1["compute_time"],
            kind="ratio", style="x0", sources=src)
    reg.add(f"{p}.b1_read_gb", f"{mn.name} 批大小 1、上下文 {n(T)} 时一步要读的字节（权重 + KV cache，GB）",
            value=(r1["weight_bytes"] + r1["kv_bytes"]) / 10**9, kind="bytes", style="x1", sources=src)
    r64 = S.roofline(led, DEV, B_MID, T)
    reg.add(f"{p}.b64_tps", f"{mn.name} 批大小 {B_MID} 时整张卡每秒 token 上限（上下文 {n(T)}）",
            value=r64["tokens_per_s"],
            kind="ratio", style="x0", sources=src)
    reg.add(f"{p}.b64_tps_user", f"{mn.name} 批大小 {B_MID} 时每个用户每秒 token 上限（上下文 {n(T)}）",
            value=r64["tokens_per_s_per_user"], kind="ratio", style="x1", sources=src)
    r256 = S.roofline(led, DEV, B_BIG, T)
    reg.add(f"{p}.b256_flop_share", f"{mn.name} 批大小 {B_BIG}、上下文 {n(T)}：算力时间占带宽时间的比例",
            value=r256["compute_time"] / r256["memory_time"], kind="ratio", style="pct1", sources=src)
    reg.add("c14.ctx_k", "正文例子的上下文长度（K = 1,024 个 token）", value=Fraction(T, 1024), style="n",
            sources=("本课的设定：推理面板默认的上下文长度",))
    reg.add(f"{p}.room", f"{mn.name} 在 H100 上权重之外放得下几条正文例子长度的序列（BF16 cache）",
            value=S.fits_kv(led, DEV, T)["sequences"], style="n", sources=src)
    reg.add(f"{p}.crossover0", f"{mn.name} 上下文为 0（只读权重）时解码转为算力瓶颈的批大小",
            value=S.crossover_batch(led, DEV, 0), kind="ratio", style="n", sources=src)
    for c in S.CONTEXTS:
        f = S.fits_kv(led, DEV, c)
        reg.add(f"{p}.seqs_{c // 1024}k",
                f"{mn.name} 在 H100 上权重之外放得下几条 {c // 1024}K 上下文的序列（BF16 cache）",
                value=f["sequences"], kind="count", style="n", sources=src)
        reg.add(f"{p}.seq_gb_{c // 1024}k", f"{mn.name} 一条 {c // 1024}K 上下文序列的 KV cache（BF16，GB）",
                value=Fraction(f["per_sequence"], 10**9), kind="bytes", style="x2", sources=src)
    fp8 = S.fits_kv(led, DEV, 32768, kv="FP8")
    reg.add(f"{p}.seqs_32k_fp8", f"{mn.name} 用 FP8 存 KV cache 时放得下几条 32K 序列", value=fp8["sequences"],
            kind="count", style="n", sources=src)
    rows = {q["scheme"]: q for q in S.quantization_table(led, DEV, 1, T)}
    for s in S.SCHEMES:
        reg.add(f"{p}.w_{s.lower()}_gb", f"{mn.name} 的权重按 {s} 存（GB，INT8/INT4 含每 128 个一组的 BF16 缩放）",
                value=rows[s]["weights"] / 10**9, kind="bytes", style="x1", sources=src)
        reg.add(f"{p}.speedup_{s.lower()}", f"{mn.name} 批大小 1 时 {s} 权重比 BF16 快几倍（上下文 {n(T)}）",
                value=rows[s]["speedup"], kind="ratio", style="x2", sources=src)
    reg.add("c14.page_tokens", "vLLM 默认的 KV 块大小（token）", value=S.PAGE_TOKENS, style="n",
            sources=("Kwon 等 2023（PagedAttention，arXiv 2309.06180）与 vLLM 的默认设置",))
    reg.add("c14.group_size", "INT8/INT4 每组共用一个缩放系数的权重个数", value=S.GROUP_SIZE, style="n",
            sources=("GPTQ（Frantar 等 2022，arXiv 2210.17323）与 AWQ 常用的分组大小",))
    reg.add("c14.int4_bits", "INT4 每个权重实占的位数：4 + 16 ÷ 128（每 128 个权重共用一个 BF16 缩放）",
            Const(4) + Const(16) / Sym("分组大小", S.GROUP_SIZE), value=S.bits_per_weight("INT4"), kind="ratio",
            style="x3", sources=("INT4 的 4 位 + 每组一个 BF16 缩放（16 位）分摊到组里的每个权重",))
    pre = S.prefill(led, DEV, T)
    reg.add(f"{p}.prefill_ms_token", f"{mn.name} 预填充 {n(T)} 个 token 的提示时平均每个提示 token 的时间（ms）",
            value=pre["time_per_token"] * 1000, kind="ratio", style="x3", sources=src)
    reg.add(f"{p}.decode_over_prefill", f"{mn.name} 解码一个 token 的时间是预填充摊到每个 token 的几倍",
            value=r1["step_time"] / pre["time_per_token"], kind="ratio", style="x0", sources=src)
    g = S.paging(led, DEV, used, RESERVED)
    reg.add("c14.paging.used", "分页例子里一条请求实际用到的 token 数", value=used, style="n",
            sources=("本课的设定：推理面板默认的已用 token 数",))
    reg.add("c14.paging.reserved", "分页例子里整块预留的 token 数（32K）", value=RESERVED, style="n",
            sources=("本课的设定：按 32K 上下文整块预留",))
    reg.add(f"{p}.block_mb", f"{mn.name} 一个 16 token 的 KV 块（所有层，BF16，MB）",
            value=Fraction(g["block_bytes"], 10**6), kind="bytes", style="x2", sources=src)
    reg.add(f"{p}.contiguous_seqs", f"{mn.name} 每条请求整块预留 32K 时放得下几条", value=g["contiguous"]["sequences"],
            style="n", sources=src)
    reg.add(f"{p}.paged_seqs", f"{mn.name} 按 16 token 的块分页时放得下几条（每条实际 1,000 token）",
            value=g["paged"]["sequences"], style="n", sources=src)
    reg.add(f"{p}.contiguous_waste", f"{mn.name} 整块预留时 KV 显存闲置的比例", value=g["contiguous"]["waste"],
            kind="ratio", style="pct1", sources=src)
    reg.add(f"{p}.paged_waste", f"{mn.name} 分页时 KV 显存闲置的比例（最后一块没用满的部分）",
            value=g["paged"]["waste"], kind="ratio", style="pct1", sources=src)


def _batching(reg, mn) -> None:
    """The batching widget's first state: the course's trace on the H100, static against continuous batching with
    contiguous reservations, and continuous batching with paged cache."""
    o = BATCHING_DEFAULTS
    dev = DV.device(o["device"])
    r = S.batching(mn.ledger, dev, o["batch"], o["seed"])
    p = "c14.cb"
    setting = ("本课的设定：批处理比较用的请求（长度均匀随机、种子固定）",)
    src = (mn.where + "（逐个张量由账本引擎数出）", dev.speed_source, "本课的批处理模拟（按步计时，屋顶线）")
    reg.add(f"{p}.requests", "批处理比较里排队的请求数", value=len(r["requests"]), style="n", sources=setting)
    reg.add(f"{p}.prompt_max", "请求的提示最长几个 token（1 到它之间均匀抽）", value=S.TRACE["prompt"][1], style="n",
            sources=setting)
    reg.add(f"{p}.output_max", "请求最多生成几个 token（1 到它之间均匀抽）", value=S.TRACE["output"][1], style="n",
            sources=setting)
    reg.add(f"{p}.reserve", "服务器最长支持的上下文：整段预留时每条请求预留的 token 数", value=r["reserve"], style="n",
            sources=("本课的设定：服务器最长上下文 4K",))
    reg.add(f"{p}.max_batch", "批处理比较里的批大小上限", value=o["batch"], style="n",
            sources=("本课的设定：批处理面板默认的批大小上限",))
    reg.add(f"{p}.tokens", "这批请求一共要生成的 token 数", value=sum(g for _, g in r["requests"]), style="n",
            sources=setting)
    reg.add(f"{p}.fit", f"{mn.name} 在 {dev.name} 上按整段预留放得下几条请求", value=r["fit"], style="n", sources=src)
    for way, short, label in (("static", "static", "静态批处理"), ("continuous", "cont", "连续批处理（整段预留）"),
                              ("paged", "paged", "连续批处理加分页")):
        w = r[way]
        reg.add(f"{p}.{short}_tps", f"{label}整张卡每秒生成的 token 数", value=w["tokens_per_s"], kind="ratio",
                style="x0", sources=src)
        reg.add(f"{p}.{short}_batch", f"{label}平均每步同时解码几条序列", value=w["mean_batch"], kind="ratio",
                style="x1", sources=src)
        if way != "paged":
            reg.add(f"{p}.{short}_idle", f"{label}空着的槽占全部槽位步数的比例", value=w["idle"], kind="ratio",
                    style="pct1", sources=src)
    reg.add(f"{p}.gain", "连续批处理比静态批处理每秒多出几倍 token（同样的整段预留）",
            Sym("连续批处理 token/s", r["continuous"]["tokens_per_s"]) / Sym("静态批处理 token/s",
                                                                         r["static"]["tokens_per_s"]),
            kind="ratio", style="x2", sources=src)
    reg.add(f"{p}.paged_gain", "加上分页后又快几倍",
            Sym("分页 token/s", r["paged"]["tokens_per_s"]) / Sym("整段预留 token/s", r["continuous"]["tokens_per_s"]),
            kind="ratio", style="x2", sources=src)


def _moe(reg, mn) -> None:
    led = mn.ledger
    p = "c14.moe"
    src = (mn.where + "（逐个张量由账本引擎数出）", DEV.speed_source)
    w = S.step_weights(led)
    reg.add(f"{p}.active_gb", f"{mn.name} 批大小 1 时一步读的权重（BF16，GB）", value=Fraction(w.read(1) * 2, 10**9),
            kind="bytes", style="x1", sources=src)
    reg.add(f"{p}.b64_gb", f"{mn.name} 批大小 {B_MID} 时一步读的权重（BF16，GB）",
            value=Fraction(w.read(B_MID) * 2, 10**9),
            kind="bytes", style="x1", sources=src)
    reg.add(f"{p}.all_gb", f"{mn.name} 全部矩阵权重（BF16，GB）", value=Fraction(w.all * 2, 10**9), kind="bytes",
            style="x1", sources=src)
    reg.add(f"{p}.crossover0", f"{mn.name} 上下文为 0 时解码转为算力瓶颈的批大小", value=S.crossover_batch(led, DEV, 0),
            style="n", sources=src)


def _speculative(reg, data) -> None:
    doc = document(data, "train_speculative")
    src = ("课程自己的两个小模型的投机采样实测（构建前用课程的训练代码跑出）",)
    rows = {r["gamma"]: r for r in doc["acceptance"]}
    t, d = doc["target_spec"]["model"], doc["draft_spec"]["model"]
    reg.add("c14.spec.target_params", "目标模型（C2 的小模型）的参数量", value=doc["params"]["target"], sources=src)
    reg.add("c14.spec.draft_params", "草稿模型的参数量", value=doc["params"]["draft"], sources=src)
    reg.add("c14.spec.target_d", "目标模型的宽度 d", value=t["d_model"], sources=src)
    reg.add("c14.spec.draft_d", "草稿模型的宽度 d", value=d["d_model"], sources=src)
    reg.add("c14.spec.target_layers", "目标模型的层数", value=t["n_layers"], sources=src)
    reg.add("c14.spec.draft_layers", "草稿模型的层数", value=d["n_layers"], sources=src)
    reg.add("c14.spec.target_loss", "目标模型在留出文本上的 loss", value=Fraction(str(doc["held_out_loss"]["target"])),
            kind="ratio", style="x2", sources=src)
    reg.add("c14.spec.draft_loss", "草稿模型在留出文本上的 loss", value=Fraction(str(doc["held_out_loss"]["draft"])),
            kind="ratio", style="x2", sources=src)
    reg.add("c14.spec.runs", "每个 γ 生成的段数", value=doc["runs"], sources=src)
    for g in (1, 4, 8):
        r = rows[g]
        reg.add(f"c14.spec.g{g}.alpha", f"γ = {g} 时实测的 α（目标看过的草稿 token 上 Σmin(p, q) 的平均）",
                value=Fraction(str(r["alpha"])), kind="ratio", style="x2", sources=src)
        reg.add(f"c14.spec.g{g}.rate", f"γ = {g} 时目标看过的草稿 token 里被接受的比例",
                value=Fraction(r["accepted"], r["looked"]), kind="ratio", style="x2", sources=src)
        a = Fraction(str(r["alpha"]))
        reg.add(f"c14.spec.g{g}.expected", f"γ = {g} 时按实测 α 由 (1 − α^(γ+1)) / (1 − α) 算出的每步 token 数",
                value=(1 - a ** (g + 1)) / (1 - a), kind="ratio", style="x2", sources=src)
        reg.add(f"c14.spec.g{g}.measured", f"γ = {g} 时实测每次目标前向产出的 token 数",
                Sym("产出 token", r["tokens"]) / Sym("目标前向次数", r["steps"]), kind="ratio", style="x2",
                sources=src)
    dist = doc["distribution"]
    reg.add("c14.spec.dist.trials", "分布检验的投机采样次数", value=dist["trials"], sources=src)
    reg.add("c14.spec.dist.bins", "分布检验分成的格数", value=dist["bins"], sources=src)
    for who, label, style in (("speculative", "投机采样", "x2"), ("draft", "草稿模型自己采样", "e1")):
        stat, df = dist[who]["statistic"], dist[who]["df"]      # the p-value from the stored statistic, here
        reg.add(f"c14.spec.dist.p_{'spec' if who == 'speculative' else who}",
                f"{label}的首字频数对目标分布的卡方检验 p 值（统计量 {stat}，自由度 {df}）",
                value=Fraction(SP.chi2_sf(stat, df)), kind="ratio", style=style, sources=src)
    low = reg.numbers.get("cited.deepseek_v3_mtp_accept_low")
    high = reg.numbers.get("cited.deepseek_v3_mtp_accept_high")
    if low is not None and high is not None:
        for name, c in (("low", low), ("high", high)):
            acc = Sym("α", Fraction(str(c.value)))
            reg.add(f"c14.mtp.expected_{name}",
                    f"DeepSeek-V3 的 MTP 当草稿（γ = 1）时按 α = {float(c.value):.2f} 算出的每步 token 数：1 + α",
                    (Const(1) - acc ** 2) / (Const(1) - acc), kind="ratio", style="x2", sources=tuple(c.sources))
