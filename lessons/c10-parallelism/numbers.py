"""Lesson C10's numbers (c10.*): the published layouts of Llama 3 405B and DeepSeek-V3 weighed by the course's
formulas (experiments/toolkit/parallel.py: memory per GPU, bytes per step, the time model), ring collectives, the
expert all-to-all, and the byte counts of the simulated step (experiments/toolkit/ranks.py's formulas; the
simulation itself runs in the widget and in the tests, not here: a build recomputes these numbers many times).

Published figures, each with where it is printed: Llama 3 405B's shapes (arXiv 2407.21783, table 3) and its layouts
with their measured BF16 MFU (table 4); DeepSeek-V3's layout and cluster (arXiv 2412.19437, section 3.2), its batch
(section 4.2: 15,360 sequences of 4K once the batch has ramped up) and its cost (180K H800 GPU hours per trillion
tokens, section 1). GB are 10^9 bytes.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ...expr import Const, Sym
from ...ledger import ledger_of, unwrap
from ...ledger.training import GB, bytes_per_param
from ...toolkit import devices as DV
from ...toolkit import parallel as P
from ...train.model import ModelConfig, param_shapes
from . import PUBLISHED_DEFAULTS, calc

L3_SRC = "Llama 3 论文（arXiv 2407.21783）"
DS_SRC = "DeepSeek-V3 技术报告（arXiv 2412.19437）"
DS = {"gpus": 2048, "pp": 16, "ep": 64, "dp": 128, "seq": 4096, "batch": 15360, "hours": 180000}
DS_ZH = {"gpus": "H800 卡数", "pp": "流水线级数 PP", "ep": "专家并行度 EP", "dp": "数据并行度 DP（ZeRO-1）",
         "seq": "序列长度", "batch": "每步的序列条数"}
L3_ZH = {"gpus": "H100 卡数", "tp": "张量并行度 TP", "pp": "流水线级数 PP", "dp": "数据并行度 DP", "seq": "序列长度",
         "batch": "每步的序列条数", "m": "每个数据并行组每步的 micro-batch 数 m"}
A2A_ZH = {"top_k": "每个 token 选的专家数 k", "hidden_size": "宽度 h", "dispatch": "发往 k 个专家的字节（FP8，k·h）",
          "cross_node_dispatch": "限节点后跨节点发出的字节（每个节点一份，M·h）",
          "nodes_max": "一个 token 最多去的节点数 M", "groups": "专家分成的组数（每组一个节点）"}
RING_N = 8
SIM_K = 4


def _gb(x) -> Fraction:
    return Fraction(x) / GB


def register(reg, models, course=None, data=None) -> None:
    _ring(reg)
    _llama3(reg)
    if "deepseek_v3" in models:
        _deepseek(reg, models["deepseek_v3"])
    _simulation(reg)


def _ring(reg) -> None:
    reg.add("c10.bpp", "混合精度 AdamW 每个参数的模型状态字节（BF16 权重与梯度，FP32 主权重、m、v）",
            value=bytes_per_param("mixed_adamw"), sources=("ZeRO 论文的记账法，按配方逐项相加",), kind="bytes")
    src = ("环形算法：每张卡发 n − 1 块、每块 1/n",)
    reg.add("c10.ring.n", "环形集合通信举例用的卡数 n", value=RING_N, sources=("本课的设定",), kind="config")
    reg.add("c10.ring.ar", "n 张卡的 all-reduce：每张卡发出缓冲区的几倍，2(n − 1)/n",
            Const(2) * (Sym("n", RING_N) - Const(1)) / Sym("n", RING_N), sources=src, kind="ratio", style="x2")
    reg.add("c10.ring.ag", "n 张卡的 all-gather 或 reduce-scatter：每张卡发出缓冲区的几倍，(n − 1)/n",
            (Sym("n", RING_N) - Const(1)) / Sym("n", RING_N), sources=src, kind="ratio", style="x3")
    h100 = DV.FABRICS["h100"]
    reg.add("c10.nvlink_gbs", "H100 SXM 的 NVLink：每张卡单向每秒发出的 GB", value=_gb(h100.nvlink),
            sources=(h100.source,), kind="bytes")
    reg.add("c10.net_gbs", "节点之间：每张卡每秒发出的 GB（400 Gb/s 网卡）", value=_gb(h100.network),
            sources=(h100.source,), kind="bytes")
    reg.add("c10.h800_nvlink_gbs", "H800 的 NVLink：DeepSeek 报告给的每卡带宽（GB/s）",
            value=_gb(DV.FABRICS["h800"].nvlink), sources=(DV.FABRICS["h800"].source,), kind="bytes")


def _llama3(reg) -> None:
    o = PUBLISHED_DEFAULTS
    ledger = ledger_of(calc.llama3_config(o))
    src = (f"{L3_SRC}表 3 的形状；课程的账本与并行公式现算",)
    pub = (f"{L3_SRC}表 4",)
    fab = DV.FABRICS["h100"]
    layouts = calc.llama3_layouts(o)
    lay = layouts["r16k"][0]
    reg.add("c10.l3.params", "Llama 3 405B 的参数量（按论文表 3 的形状逐张量数）", value=ledger.total, sources=src)
    for key, v in (("gpus", lay.gpus), ("tp", lay.tp), ("pp", lay.pp), ("dp", lay.dp), ("seq", lay.seq_len),
                   ("batch", lay.dp * lay.micro_batches), ("m", lay.micro_batches)):
        reg.add(f"c10.l3.{key}", f"Llama 3 405B 在 16K 张卡上的布局：{L3_ZH[key]}", value=v, sources=pub,
                kind="config")
    other, long = layouts["r8k"][0], layouts["rcp"][0]
    reg.add("c10.l3.gpus8k", "Llama 3 405B 较小那一档的 H100 卡数", value=other.gpus, sources=pub, kind="config")
    reg.add("c10.l3.m8k", "那一档每个数据并行组每步的 micro-batch 数", value=other.micro_batches, sources=pub,
            kind="config")
    reg.add("c10.l3.cp", "Llama 3 405B 长上下文阶段的上下文并行度 CP", value=long.cp, sources=pub, kind="config")
    reg.add("c10.l3.cp_seq", "Llama 3 405B 长上下文阶段的序列长度", value=long.seq_len, sources=pub, kind="config")
    weighed = {key: calc.weigh(ledger, layout, "h100") for key, (layout, _) in layouts.items()}
    for key, (layout, mfu) in layouts.items():
        reg.add(f"c10.l3.{key}.mfu_pub", f"Llama 3 405B 论文表 4 实测的 BF16 MFU（{layout.gpus} 张卡，CP {layout.cp}）",
                value=mfu, sources=pub, kind="ratio", style="pct")
        reg.add(f"c10.l3.{key}.mfu", f"本课的时间模型给同一布局估的 MFU 上限（{layout.gpus} 张卡，CP {layout.cp}）",
                value=weighed[key]["timing"].mfu, sources=src, kind="ratio", style="pct")
    # plain data parallelism and ZeRO-3 alone over all the GPUs
    gpus = lay.gpus
    reg.add("c10.l3.dp_states", "Llama 3 405B 纯数据并行：每张卡放一整份模型状态（16 字节/参数，GB）",
            Const(16) * Sym("Ψ", ledger.total) / Const(GB), value=_gb(P.state_bytes(ledger, P.Layout(dp=gpus))),
            sources=src, kind="bytes", style="x0")
    reg.add("c10.l3.zero3_states", f"Llama 3 405B 只用 ZeRO-3 分到 {gpus} 张卡：每张卡的模型状态（GB）",
            value=_gb(P.state_bytes(ledger, P.Layout(dp=gpus, zero=3))), sources=src, kind="bytes", style="x2")
    z3 = P.dp_bytes(ledger.total, gpus, 3)
    reg.add("c10.l3.zero3_comm", f"Llama 3 405B 只用 ZeRO-3 分到 {gpus} 张卡：每张卡每步发出（GB，3Ψ × 2 字节）",
            value=_gb(z3), sources=src, kind="bytes", style="x0")
    reg.add("c10.l3.zero3_comm_s", "这些字节按每卡 50 GB/s 的网卡要发几秒", value=z3 / fab.network, sources=src,
            kind="ratio", style="x0")
    w = weighed["r16k"]
    t, comm = w["timing"], w["comm"]
    reg.add("c10.l3.compute_s", "Llama 3 405B 一步在 16K 张 H100 上按 BF16 峰值算要几秒", value=t.compute,
            sources=src, kind="ratio", style="x2")
    reg.add("c10.l3.mem", "论文布局下每张卡的显存（模型状态 + 第一段流水线的激活，GB）",
            value=_gb(w["memory"]["total"]), sources=src, kind="bytes", style="x1")
    for kind in ("tp", "pp", "dp"):
        reg.add(f"c10.l3.{kind}_gb", f"论文布局下每张卡每步为 {kind.upper()} 发出的 GB", value=_gb(comm[kind]),
                sources=src, kind="bytes", style="x1")
        reg.add(f"c10.l3.{kind}_s", f"论文布局下 {kind.upper()} 的通信要几秒（按它所在的链路）", value=t.comm[kind],
                sources=src, kind="ratio", style="x2")
    reg.add("c10.l3.rcp.mem", "长上下文那一档（CP 16，128K 序列）不重算时每张卡的显存（GB）",
            value=_gb(weighed["rcp"]["memory"]["total"]), sources=src, kind="bytes", style="x1")
    reg.add("c10.l3.tp_s_net", "同样的 TP 字节若走节点之间的网卡要几秒", value=comm["tp"] / fab.network,
            sources=src, kind="ratio", style="x1")
    reg.add("c10.l3.bubble", "论文布局的流水线气泡 (p − 1)/(m + p − 1)", value=t.bubble, sources=src, kind="ratio",
            style="pct")
    reg.add("c10.l3.bubble_v2", "同一布局每张卡放 2 段模型（交错调度）时的气泡 (p − 1)/(2m + p − 1)",
            value=P.bubble(lay.pp, lay.micro_batches, 2), sources=src, kind="ratio", style="pct")
    reg.add("c10.l3.step", "时间模型估的每步秒数（论文布局）", value=t.step, sources=src, kind="ratio", style="x2")


def _deepseek(reg, mn) -> None:
    ledger = mn.ledger
    src = (f"{mn.where}；{DS_SRC} 3.2 节的布局；课程的账本与并行公式现算",)
    pub = (f"{DS_SRC} 3.2 节与 4.2 节",)
    for key, v in DS.items():
        if key != "hours":
            reg.add(f"c10.ds.{key}", f"DeepSeek-V3 的训练布局：{DS_ZH[key]}", value=v, sources=pub, kind="config")
    reg.add("c10.ds.m", "DeepSeek-V3 每个数据并行组每步的 micro-batch 数（按每个 1 条序列）",
            value=DS["batch"] // DS["dp"], sources=pub, kind="config")
    reg.add("c10.ds.hours", "DeepSeek-V3 每训练 1 万亿 token 用的 H800 GPU 小时", value=DS["hours"],
            sources=(f"{DS_SRC}第 1 节",), kind="config")
    config = unwrap(mn.doc["config"])
    a2a = P.ep_all_to_all_bytes_per_token(config)
    if "nodes_max" not in a2a:          # a config without the limit (topk_group >= n_group): every group reachable
        groups = max(1, int(config.get("n_group") or 1))
        experts = mn.arch.moe.n_experts
        a2a |= {"groups": groups, "nodes_max": groups,
                "unlimited_nodes": P.expected_nodes(experts, groups, a2a["top_k"]) if experts % groups == 0
                else Fraction(min(a2a["top_k"], groups)),
                "cross_node_dispatch": min(a2a["top_k"], groups) * a2a["hidden_size"]}
    for key in ("top_k", "hidden_size", "dispatch", "cross_node_dispatch", "nodes_max", "groups"):
        reg.add(f"c10.ds.{key}", f"DeepSeek-V3 每个 token 每个 MoE 层的 all-to-all：{A2A_ZH[key]}", value=a2a[key],
                sources=(mn.where + "：hidden_size、num_experts_per_tok、n_group、topk_group",), kind="bytes")
    reg.add("c10.ds.experts", "DeepSeek-V3 每个 MoE 层的路由专家数", value=mn.arch.moe.n_experts,
            sources=(mn.where + "：n_routed_experts",))
    reg.add("c10.ds.ep_nodes", "专家并行组跨的机器数：EP ÷ 每台 8 张卡",
            value=DS["ep"] // DV.FABRICS["h800"].gpus_per_node, sources=pub, kind="config")
    reg.add("c10.ds.unlimited", "不限节点时一个 token 的 8 个专家平均落在几个节点上（均匀路由）",
            value=a2a["unlimited_nodes"], sources=(mn.where + "：n_routed_experts、n_group、num_experts_per_tok",),
            kind="ratio", style="x1")
    dev = DV.H100
    lay = calc.DS_LAYOUT
    bare = P.memory_per_gpu(ledger, P.Layout(pp=DS["pp"], dp=DS["dp"], ep=DS["ep"], zero=1, seq_len=DS["seq"],
                                             micro_batches=DS["batch"] // DS["dp"]))
    reg.add("c10.ds.mem_full", "DeepSeek-V3 的布局、整层重算时每张卡的显存（GB）",
            value=_gb(P.memory_per_gpu(ledger, lay)["total"]), sources=src, kind="bytes", style="x1")
    reg.add("c10.ds.mem_none", "同一布局不重算时每张卡的显存（GB）", value=_gb(bare["total"]), sources=src,
            kind="bytes", style="x0")
    exposed = calc.weigh(ledger, lay, "h800")["timing"]
    hidden = calc.weigh(ledger, lay, "h800", hidden=("dp", "ep"))["timing"]
    reg.add("c10.ds.compute_s", "DeepSeek-V3 一步在 2,048 张卡上按 BF16 峰值算要几秒（含整层重算）",
            value=exposed.compute, sources=src, kind="ratio", style="x1")
    reg.add("c10.ds.ep_s", "同一步的专家 all-to-all 按 50 GB/s 的 InfiniBand 要几秒", value=exposed.comm["ep"],
            sources=src, kind="ratio", style="x1")
    reg.add("c10.ds.ratio", "计算时间 ÷ all-to-all 时间（Scaling Book 的比值：≥ 1 才藏得住）",
            value=exposed.compute / exposed.comm["ep"], sources=src, kind="ratio", style="x2")
    reg.add("c10.ds.exposed", "时间模型：all-to-all 不藏、加在计算上时每步几秒", value=exposed.step, sources=src,
            kind="ratio", style="x1")
    reg.add("c10.ds.hidden", "时间模型：all-to-all 全藏在计算后面时每步几秒", value=hidden.step, sources=src,
            kind="ratio", style="x1")
    tokens = Sym("批", DS["batch"]) * Sym("s", DS["seq"])
    implied = tokens * Sym("GPU 小时", DS["hours"]) * Const(3600) / (Const(10 ** 12) * Sym("卡", DS["gpus"]))
    reg.add("c10.ds.implied", "按报告的 GPU 小时倒推的每步秒数", implied, sources=pub + (f"{DS_SRC}第 1 节",),
            kind="ratio", style="x1")
    assert dev.bf16_flops is not None   # (the H100 has BF16 tensor cores: devices.py)
    reg.add("c10.ds.implied_mfu", "按报告的 GPU 小时倒推的 MFU（以 BF16 峰值计）",
            value=Fraction(exposed.flops, DS["gpus"] * dev.bf16_flops) / implied.value, sources=src,
            kind="ratio", style="pct")


def _simulation(reg) -> None:
    """The simulated step's sizes and what the formulas say each rank sends (float64, 8 bytes a value)."""
    cfg = ModelConfig(n_kv_heads=ModelConfig().n_heads)     # toolkit/ranks.py's SMALL: every head its own k/v
    psi = sum(math.prod(shape) for shape in param_shapes(cfg).values())
    src = ("课程训练代码的小模型（d = 64，2 层，4 头，FFN 172，词表 256），FP64",)
    reg.add("c10.sim.params", "模拟用的小模型的参数量", value=psi, sources=src)
    reg.add("c10.sim.heads", "模拟用的小模型的注意力头数", value=cfg.n_heads, sources=src, kind="config")
    reg.add("c10.sim.d_ff", "模拟用的小模型的 FFN 宽度", value=cfg.d_ff, sources=src, kind="config")
    reg.add("c10.try.gpus", "「试一试」里规划器的 GPU 数", value=64, sources=("本课的设定",), kind="config")
    reg.add("c10.try.batch", "「试一试」里规划器的全局 batch", value=512, sources=("本课的设定",), kind="config")
    reg.add("c10.try.odd_gpus", "「试一试」里不是 2 的幂的 GPU 数", value=1000, sources=("本课的设定",), kind="config")
    reg.add("c10.sim.k", "模拟的卡数", value=SIM_K, sources=("本课的设定",), kind="config")
    reg.add("c10.sim.batch", "模拟一步的 batch（条序列）", value=4, sources=("本课的设定",), kind="config")
    reg.add("c10.sim.seq", "模拟一步的序列长度", value=32, sources=("本课的设定",), kind="config")
    k = Sym("k", SIM_K)
    share = (k - Const(1)) / k
    reg.add("c10.sim.dp", "数据并行：每张卡发出的字节 2(k − 1)/k × Ψ × 8", Const(2) * share * Sym("Ψ", psi) * Const(8),
            sources=src, kind="bytes")
    reg.add("c10.sim.zero3", "ZeRO-3：每张卡发出的字节 3(k − 1)/k × Ψ × 8", Const(3) * share * Sym("Ψ", psi) * Const(8),
            sources=src, kind="bytes")
    reg.add("c10.sim.tp", "张量并行：每张卡发出的字节 4 × 层数 × 2(k − 1)/k × N·d × 8",
            Const(4) * Sym("层", cfg.n_layers) * Const(2) * share * Sym("N", 4 * 32) * Sym("d", cfg.d_model) * Const(8),
            sources=src, kind="bytes")
