"""C9's calculators: one training step's bytes on one GPU (experiments/ledger/training.py) as the page shows them.

Each function takes the plain values a page sends (a config dict or a pasted config's text, the controls' values as
text) and returns JSON-ready data with every number already formatted; the build's first states and the browser's
answers come from these same functions. ``measure`` runs the numpy trainer's real step (experiments/train/
memory.py) and needs numpy.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from ...format import n, pct
from ...labels import layer_label
from ...ledger import Ledger
from ...ledger import training as T
from ...toolkit import devices as DV
from ...toolkit.config_text import ledger_of_input
from ...widget import uses

RECIPE_ZH = {
    "mixed_adamw": "混合精度 AdamW（BF16 梯度）",
    "mixed_adamw_fp32_grads": "混合精度 AdamW（FP32 梯度累加）",
    "fp32_adamw": "全 FP32 AdamW",
    "adam_8bit": "8-bit Adam（分块量化的 m、v）",
    "bf16_adamw": "纯 BF16 AdamW（没有 FP32 主权重）",
    "sgd_momentum": "SGD + 动量（混合精度）",
    "muon": "Muon（隐藏层矩阵）+ AdamW（其余）",
}
RECOMPUTE_ZH = {"none": "不重算", "selective": "选择性重算（只重算注意力打分）", "full": "整层重算（只存每层输入）"}
KERNEL_ZH = {"fused": "融合注意力内核（FlashAttention 类）", "eager": "朴素注意力（保存 softmax 概率矩阵）"}
BATCHES = ("1", "2", "4", "8", "16")
SEQS = ("512", "1024", "2048", "4096", "8192", "16384", "32768", "131072")
ZEROS = ("0", "1", "2", "3")
RANKS = ("1", "8", "64", "512")
TPS = ("1", "2", "4", "8", "2+SP", "4+SP", "8+SP")
GPUS = tuple(DV.DEVICES)            # the device table's keys (marketed GB); each device's bytes are its own
# the stacked bar's parts, in order, with their colours' CSS classes
BAR_PARTS = (("weights", "权重"), ("grads", "梯度"), ("optimizer", "优化器状态与主权重"), ("activations", "激活"),
             ("loss", "logits 与 loss"))
PART_OF = {"states/weights": "weights", "states/grads": "grads", "states/optimizer": "optimizer",
           "activations": "activations", "loss": "loss"}
STATE_ZH = {"weights": "权重", "grads": "梯度", "grads_fp32": "FP32 梯度累加缓冲", "master": "FP32 主权重",
            "adam_m": "Adam 一阶矩 m", "adam_v": "Adam 二阶矩 v", "momentum": "动量"}
ACT_ZH = {"attn": "注意力", "ffn": "FFN", "norm1": "第一个归一化", "norm2": "第二个归一化",
          "norm3": "第三个归一化", "norm4": "第四个归一化", "norm5": "第五个归一化", "norm6": "第六个归一化",
          "norm7": "第七个归一化", "norm8": "第八个归一化", "mixer": "token 混合器", "indexer": "索引器",
          "experts": "路由专家",
          "checkpoint": "检查点：每层的输入", "recomputed_layer": "反向时临时重算出的一层"}
LOSS_ZH = {"final_norm": "最终归一化", "head_in": "输出头的输入", "logits": "logits（b × s × V）",
           "softmax_fp32": "FP32 softmax（b × s × V，loss 的梯度要用）", "token_ids": "token 编号与目标",
           "rope_tables": "RoPE 的 cos、sin 表", "mtp": "MTP 的输出头输入、logits 与 softmax（每个预测深度一份）"}
TENSOR_ZH = {
    "in": "投影的输入（归一化的输出）", "input": "归一化前的输入", "rstd": "每 token 的 1/rms（FP32）",
    "q": "Q（RoPE 之后）", "k": "K（真实的 KV 头数）", "v": "V（真实的 KV 头数）", "scores": "softmax 概率 b·h·s·s",
    "scores_dropout_mask": "概率上的 dropout 掩码", "scores_dropout": "dropout 之后的概率",
    "lse": "每头每 token 的 log-sum-exp", "o_in": "o_proj 的输入", "out_dropout_mask": "输出的 dropout 掩码",
    "gate": "gate_proj 的输出", "up": "up_proj 的输出",
    "act": "激活函数的输出", "product": "silu(gate)·up（down_proj 的输入）", "pre_act": "激活函数的输入",
    "router_probs": "路由概率（FP32）", "routing_weights": "top-k 权重（FP32）", "core_out": "门控之前的注意力输出",
    "q_latent": "查询潜向量", "kv_latent": "KV 潜向量", "k_rope": "共享的旋转键",
    "chunk_states": "每 64 个 token 的分块状态（估算）", "conv_in": "卷积的输入（卷积前的 q、k、v）",
    "beta": "β = sigmoid(b)", "decay_softplus": "衰减 g 的 softplus 输入与输出（FP32）",
    "decay_cumsum": "g 的块内累加和（FP32）", "qk_normed": "L2 归一化后的 q、k",
    "wy_matrix": "WY 矩阵 A（每头每 token 64 个）",
    "qk_rstd": "q、k 每头的 1/范数（FP32）", "norm_in": "门控归一化的输入", "gate_z": "门控 z",
    "norm_rstd": "门控归一化的 1/rms（FP32）", "out_in": "out_proj 的输入",
    "zxbcdt": "in_proj 的全部输出（z、x、B、C、dt）",
    "scan_out": "扫描的输出（门控之前）", "xz": "in_proj 的输出（x 与 z）", "x_dbl": "x_proj 的输出（dt、B、C）",
    "bc": "B、C 的连续副本", "scan_chunks": "扫描的 FP32 中间量（每 2048 个 token 一块）",
    "wq_b_out": "查询投影的输出", "wk_out": "键投影的输出", "weights_proj_out": "每头权重投影的输出",
    "out": "输出", "in_proj_out": "in_proj 的输出", "x_proj_out": "x_proj 的输出", "dt_proj_out": "dt_proj 的输出",
    "out_proj_in": "out_proj 的输入",
}


def tensor_zh(key: str) -> str:
    """One activation of a layer (the part of a training-ledger key after its layer: 'attn/q', 'ffn/experts/out',
    'norm1/input') in Chinese: its parts through ACT_ZH, its last part through TENSOR_ZH, never the raw key."""
    *parts, last = key.split("/")
    where = "的".join(ACT_ZH[p] for p in parts if p in ACT_ZH)
    what = TENSOR_ZH.get(last) or ACT_ZH.get(last) or "其他中间量"
    return f"{where}：{what}" if where else what
LAST_STEP = 1000     # the stacked bar's width in SVG units


def gb(nbytes) -> str:
    """Bytes as GB (10^9), three significant figures at least, never e-notation."""
    x = float(nbytes) / T.GB
    if x >= 100:
        return f"{x:,.0f} GB"
    if x >= 10:
        return f"{x:.1f} GB"
    if x >= 0.01:
        return f"{x:.2f} GB"
    return f"{float(nbytes) / 1e6:.2f} MB"


def device_label(dev: DV.Device) -> str:
    """A device as the pages name it: the product and the bytes its driver reports, in GB (10^9 bytes)."""
    return f"{dev.name}（实有 {gb(dev.bytes)}）"


def _int(text, name: str, choices) -> int:
    if str(text) not in choices:
        raise ValueError(f"{name}：应为 {'、'.join(choices)} 之一，实际是 {text!r}")
    return int(str(text).removesuffix("+SP"))


def setup_of(recipe: str, batch: str, seq: str, recompute: str, kernel: str, zero: str, ranks: str,
             tp: str) -> T.TrainSetup:
    if recipe not in RECIPE_ZH:
        raise ValueError(f"训练配方：应为 {'、'.join(RECIPE_ZH.values())} 之一，实际是 {recipe!r}")
    if recompute not in RECOMPUTE_ZH:
        raise ValueError(f"重算方式未知：{recompute!r}")
    if kernel not in KERNEL_ZH:
        raise ValueError(f"注意力实现未知：{kernel!r}")
    return T.TrainSetup(recipe=recipe, micro_batch=_int(batch, "micro-batch", BATCHES),
                        seq_len=_int(seq, "序列长度", SEQS), recompute=recompute, kernel=kernel,
                        zero=_int(zero, "ZeRO 阶段", ZEROS), dp=_int(ranks, "数据并行卡数", RANKS),
                        tp=_int(tp, "张量并行度", TPS), sp=str(tp).endswith("+SP"))


def _label(key: str, ledger: Ledger) -> str:
    parts = key.split("/")
    if parts[0] == "states":
        return STATE_ZH.get(parts[-1], parts[-1])
    if parts[0] == "loss":
        return LOSS_ZH.get(parts[1], parts[1])
    if parts[1] == "recomputed_layer":
        return ACT_ZH["recomputed_layer"]
    if parts[1] == "mtp":
        part = {"module": "输入的两路归一化、合并投影与末尾的归一化",
                "checkpoint": "检查点：每个模块新的输入（下一个 token 的 embedding）"}.get(parts[2])
        return f"MTP 模块：{part or layer_label(parts[2]) + '（解码层）'}"
    layer = parts[1]
    count = ledger.layer(layer).n
    return f"{layer_label(layer)} × {count}：{ACT_ZH.get(parts[2], parts[2])}"


def _rows(mem: T.TrainMemory, ledger: Ledger) -> list[dict]:
    """One row per model-state component, per layer type's module (attention, FFN, norms) and per loss tensor."""
    groups: dict[str, int] = {}
    for item in mem.items:
        parts = item.key.split("/")
        key = "/".join(parts[:3]) if parts[0] == "activations" and len(parts) > 2 else (
            "/".join(parts[:2]) if parts[0] == "loss" else item.key)
        groups[key] = groups.get(key, 0) + item.bytes
    total = mem.total or 1
    return [{"label": _label(k, ledger), "bytes": gb(v), "share": pct(Fraction(v, total)),
             "part": PART_OF.get(k.rsplit("/", 1)[0] if k.startswith("states/") else k.split("/")[0], "loss")}
            for k, v in groups.items() if v]


def _bars(mem: T.TrainMemory, gpu_bytes: int) -> tuple[list[dict], int]:
    scale = max(mem.total, gpu_bytes) * 21 // 20 or 1
    x, bars = 0, []
    for key, label in BAR_PARTS:
        size = mem.part({"weights": "states/weights", "grads": "states/grads",
                         "optimizer": "states/optimizer"}.get(key, key))
        w = size * LAST_STEP // scale
        bars.append({"part": key, "label": label, "x": str(x), "w": str(w), "bytes": gb(size)})
        x += w
    return bars, gpu_bytes * LAST_STEP // scale


def moot_notes(ledger: Ledger, setup: T.TrainSetup, total: int) -> list[str]:
    """Why a choice that the rest of the setup makes moot leaves the bytes as they were (issue #49: no control
    changes nothing without saying why): selective recomputation only drops the attention probabilities, which a
    fused kernel never stores. Said only when the ledger's total is indeed the one without that choice. (ZeRO with
    one data-parallel card, which has nothing to split, is not chosen at all: the page disables it, script.js.)"""
    notes = []
    same = lambda **change: T.training_memory(ledger, replace(setup, **change)).total == total  # noqa: E731
    if setup.recompute == "selective" and setup.kernel == "fused" and same(recompute="none"):
        notes.append("选择性重算只在反向时重算注意力的 softmax 概率矩阵；融合注意力内核本来就不保存这个矩阵，"
                     "所以激活和不重算一样。换成朴素注意力，才看得出它省下多少。")
    return notes


def step_memory(config, recipe: str = "mixed_adamw", batch: str = "1", seq: str = "4096", recompute: str = "none",
                kernel: str = "fused", zero: str = "0", ranks: str = "1", tp: str = "1", gpu: str = "80") -> dict:
    """The widget "where every byte of one step lives": the stacked bar, the rows, the verdict against the GPU."""
    ledger = ledger_of_input(config)
    setup = setup_of(recipe, batch, seq, recompute, kernel, zero, ranks, tp)
    dev = DV.device(gpu)
    mem = T.training_memory(ledger, setup)
    bars, gpu_x = _bars(mem, dev.bytes)
    states = mem.part("states")
    fits = DV.fits(mem.total, dev)
    verdict = (f"一共 {gb(mem.total)}，{'装得进' if fits else '装不进'}一张 {device_label(dev)}"
               f"（模型状态 {gb(states)}，{'激活和 logits 另算' if DV.fits(states, dev) else '本身就已经超了'}）。")
    tokens = setup.micro_batch * setup.seq_len * setup.accum * setup.dp
    extra = (f"重算让每步多做 {pct(Fraction(mem.recompute_flops, mem.step_flops))} 的计算。"
             if mem.recompute_flops else "没有重算，不多花计算。")
    notes = moot_notes(ledger, setup, mem.total)
    rough = [i.key for i in mem.items if not i.exact]
    if any("/attn/" in k for k in rough):
        notes.append("这个模型的稀疏注意力索引器另有自己的训练张量，账本只按它几个投影的输出估算"
                     "（它选出的 top-k 下标等还没算），这些层的激活偏少；其余逐张量精确。")
    if any("/mixer/" in k for k in rough):
        notes.append("这个模型的 token 混合器不走账本认得的训练内核（例如 Jamba 的 Mamba 层自己的一串运算），"
                     "这些层的激活是估算，其余逐张量精确。")
    if ledger.vision:
        notes.append("视觉塔的激活没有计入（这里只算文本 token）。")
    if ledger.mtp:
        notes.append("MTP 模块按训练时的用法计入：它的参数算在模型状态里，"
                     "激活和多出来的一份 logits 分别算在激活和 logits 里。")
    return {"total": gb(mem.total), "states": gb(states), "activations": gb(mem.part("activations")),
            "loss": gb(mem.part("loss")), "fits": "yes" if fits else "no", "verdict": verdict,
            "per_param": n(T.bytes_per_param(recipe)), "params": n(mem.params), "params_rank": n(mem.params_per_rank),
            "tokens": n(tokens), "extra": extra, "bars": bars, "gpu_x": str(gpu_x), "gpu": device_label(dev),
            "rows": _rows(mem, ledger), "notes": [{"text": t} for t in notes]}


# -- activations against sequence length ------------------------------------------------------------------------
CURVE_SEQS = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
CURVE_MODES = (("none", "eager", "不重算，朴素注意力"), ("none", "fused", "不重算，融合内核"),
               ("selective", "eager", "选择性重算"), ("full", "fused", "整层重算"))


def _acts(ledger: Ledger, s: int, recompute: str, kernel: str) -> int:
    mem = T.training_memory(ledger, recipe="mixed_adamw", seq_len=s, recompute=recompute, kernel=kernel)
    return mem.part("activations") + mem.part("loss")


def crossover_seq(ledger: Ledger, recompute: str = "none", kernel: str = "eager") -> int | None:
    """The shortest sequence (micro-batch 1, a power of two from 128 to 2^24) whose activations and logits exceed
    the model states of mixed-precision AdamW; None if none does."""
    states = T.training_memory(ledger, recipe="mixed_adamw", seq_len=128).part("states")
    s = 128
    while s <= 1 << 24:
        if _acts(ledger, s, recompute, kernel) > states:
            return s
        s *= 2
    return None


def seq_curve(config) -> dict:
    """The chart: activations (+ logits) of one sequence against its length per recomputation mode, and the model
    states (mixed-precision AdamW) as a flat line; the table: one layer's bytes at each length."""
    ledger = ledger_of_input(config)
    states = T.training_memory(ledger, recipe="mixed_adamw", seq_len=512).part("states")
    series = []
    for recompute, kernel, name in CURVE_MODES:
        series.append({"name": name, "y": [round(_acts(ledger, s, recompute, kernel) / T.GB, 3) for s in CURVE_SEQS]})
    series.append({"name": "模型状态（16 字节/参数）", "y": [round(states / T.GB, 3)] * len(CURVE_SEQS)})
    cross = crossover_seq(ledger)
    first = ledger.layer_types[0]
    rows = []
    for s in CURVE_SEQS[::2]:
        row = {"seq": n(s)}
        for recompute, kernel, _ in CURVE_MODES:
            mem = T.training_memory(ledger, recipe="mixed_adamw", seq_len=s, recompute=recompute, kernel=kernel)
            per = sum(i.per_layer for i in mem.items if i.key.startswith(f"activations/{first}/"))
            row[f"{recompute}_{kernel}"] = gb(per)
        rows.append(row)
    sentence = (f"micro-batch 为 1、朴素注意力、不重算时，序列长到 {n(cross)} 个 token，激活和 logits 就超过模型状态的 "
                f"{gb(states)}。" if cross else f"直到 {n(1 << 24)} 个 token，激活都没有超过模型状态的 {gb(states)}。")
    return {"chart": {"kind": "lines", "x": list(CURVE_SEQS), "series": series, "xlog": True,
                      "xtitle": "序列长度 s（token，对数）", "ytitle": "GB（micro-batch = 1）",
                      "title": "一条序列的激活与 logits，对比模型状态"},
            "rows": rows, "sentence": sentence, "layer": layer_label(first)}


# -- the trainer's real step ---------------------------------------------------------------------------------------
MEASURE_ROWS = (("param_bytes", "参数（FP32）", "states/weights"), ("grad_bytes", "梯度（FP32）", "states/grads"),
                ("optimizer_bytes", "AdamW 的 m 和 v（FP32）", "states/optimizer"))


def compare_rows(measured: dict | None, config: dict, batch: int = 0, seq: int = 0) -> dict:
    """Measured bytes of the trainer's step beside the ledger's prediction, row by row; without a measurement
    (measured None: a size not run yet) the ledger's column alone, the measured one waiting for the button."""
    from ...train import memory as MM
    b, s = (int(measured["batch_size"]), int(measured["seq_len"])) if measured else (batch, seq)
    acts = {k.replace(".", "/"): v for k, v in measured["activations"].items()} if measured else {}
    ledger = ledger_of_input(config)
    mem = T.training_memory(ledger, MM.ledger_setup(b, s))
    rows = []

    def row(label: str, got: int | None, predicted: int) -> dict:
        if got is None:
            return {"label": label, "measured": "—", "ledger": n(predicted), "same": "待实测"}
        return {"label": label, "measured": n(got), "ledger": n(predicted),
                "same": "相等" if got == predicted else "不等"}

    for key, label, part in MEASURE_ROWS:
        rows.append(row(label, measured[key] if measured else None, mem.part(part)))
    by_key: dict[str, int] = {}
    for item in mem.items:
        if not item.key.startswith("states/"):
            by_key[item.key] = by_key.get(item.key, 0) + item.bytes
    for key, ledger_bytes in by_key.items():
        label = _label(key, ledger) + ("：" + TENSOR_ZH.get(key.rsplit("/", 1)[-1], "")
                                       if key.startswith("activations/") else "")
        rows.append(row(label, acts.get(key, 0) if measured else None, ledger_bytes))
    if not measured:
        return {"rows": rows, "batch": str(b), "seq": str(s), "held": "—", "ledger_total": n(mem.total), "peak": "—",
                "over": "—", "all_same": "no"}
    held = measured["param_bytes"] + measured["grad_bytes"] + measured["optimizer_bytes"] + measured["activation_bytes"]
    return {"rows": rows, "batch": str(b), "seq": str(s), "held": n(held), "ledger_total": n(mem.total),
            "peak": n(measured["peak_step_bytes"]), "over": pct(Fraction(measured["peak_step_bytes"] - mem.total,
                                                                         mem.total or 1)),
            "all_same": "yes" if all(r["same"] == "相等" for r in rows) else "no"}


MEASURE_SEQS = ("16", "32", "64")


@uses("numpy")   # (the trainer's setup it predicts for lives in experiments.train, which imports numpy)
def predicted(config: dict, batch: str = "4", seq: str = "32") -> dict:
    """The ledger's column for a batch and length the trainer has not run yet (the build answers every choice)."""
    return compare_rows(None, config, _int(batch, "batch", BATCHES), _int(seq, "序列长度", MEASURE_SEQS))


@uses("numpy")
def measure(config: dict, batch: str = "4", seq: str = "32") -> dict:
    """Run the numpy trainer's step here (the browser's Python, or the build's) and compare it with the ledger."""
    from ...train import memory as MM
    from ...train import model as M
    b, s = _int(batch, "batch", BATCHES), _int(seq, "序列长度", MEASURE_SEQS)
    measured = MM.measure_step(M.ModelConfig.from_hf(config), b, s)
    return compare_rows(measured, config)
