"""C5 优化 — the lesson's numbers (c5.*): from the trainer (experiments/train/), its precomputed runs
(data/train_runs.json, passed in as data["train_runs"]), the baseline config, and cited figures.

Cited figures come from data/citations.json (cited.*, with their sources). Numbers measured by the trainer name
the run they come from in their sources. Exact decimals are Fractions, so a claim such as
``c5.b2_torch_horizon > c5.steps`` compares exact values.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ...expr import Const, RealDiv, Sqrt, Sym
from ...labels import tensor_label
from ...toolkit.stored import document

USABLE = Fraction(1, 10)      # a learning rate is usable when its final loss is within 10% of the sweep's best
RUNS = "课程训练代码预先算好的训练记录"      # data/train_runs.json, by python -m experiments.train.runs
TRAINER = "课程的训练代码"                   # experiments/train/

# The cited figures (Adam's usual settings, PyTorch's defaults, schedules, Muon's, DeepSeek LLM's lr and batch fits)
# are in data/citations.json as cited.*, so the claims that rest on them can be tested by moving them.
DS_SRC = ("DeepSeek-AI 2024（DeepSeek LLM，arXiv 2401.02954）3.1 节的拟合：η_opt = 0.3118·C^−0.1250，"
          "B_opt = 0.2920·C^0.3271（C 以 FLOPs 计，B 以 token 计）")
COMPUTE = {"e20": 10 ** 20, "e23": 10 ** 23}


class _WithSources:
    """reg.add with a default source: a number derived from others here says so (every number on a page names
    where it comes from)."""

    def __init__(self, reg):
        self.reg = reg

    def add(self, name, label, expr=None, value=None, *, sources=(), **kw):
        if not sources:
            sources = (TRAINER + "：由本课的其他数推出（见算式）" if expr is not None else TRAINER,)
        return self.reg.add(name, label, expr, value, sources=sources, **kw)

    def __getitem__(self, name):
        return self.reg[name]


def _trainer_config(M, config: dict):
    """The trainer's model (its key/value heads as the config says, tied head) at the sizes of the baseline's config
    in data/models/ (the one the trainer's BASELINE copies), so the numbers derived from its shapes (init std, state
    bytes, Newton-Schulz overhead) move with that config."""
    return M.ModelConfig(d_model=config["hidden_size"], n_layers=config["num_hidden_layers"],
                         n_heads=config["num_attention_heads"], d_ff=config["intermediate_size"],
                         vocab_size=config["vocab_size"],
                         n_kv_heads=config.get("num_key_value_heads", config["num_attention_heads"])).validate()


def register(reg, models, course=None, data=None) -> None:
    from ...train import model as M
    from ...train import optim as O
    from ...train.runs import BASELINE, live_config
    if data is None:          # a caller with no data files (a test of another lesson's numbers): nothing to read
        return
    runs = document(data, "train_runs")
    reg = _WithSources(reg)

    base = runs["baseline"]
    spec = base["warmup0"]["spec"]
    cfg = _trainer_config(M, models["baseline"].doc["config"] if "baseline" in models else BASELINE)
    L = Sym("L", cfg.n_layers)
    lr = Sym("lr", Fraction(str(spec["schedule"]["peak"])))
    std = Sym("σ", Fraction(str(cfg.init_std)))
    src_run = (RUNS + "：基线不预热那次的设定",)
    reg.add("c5.lr", "基线训练的峰值学习率", lr, sources=src_run, style="e0", kind="value")
    reg.add("c5.std", "基线权重的初始化标准差", std, sources=(TRAINER + "：GPT-2 式初始化",), style="x2",
            kind="value")
    std_out = RealDiv(Sym("σ", cfg.init_std), Sqrt(2 * L))          # irrational: a float throughout
    assert math.isclose(std_out.value, M.init_std(cfg, "layers.0.self_attn.o_proj.weight"))
    reg.add("c5.std_out", "o_proj、down_proj 的初始化标准差 σ/√(2L)", std_out, sources=(TRAINER,), style="x5",
            kind="value")
    reg.add("c5.adam_ratio", "Adam 第一步每个权重约移动 lr，相对初始标准差", lr / std, style="pct0", kind="ratio")
    reg.add("c5.adam_ratio_out", "同上，o_proj、down_proj", RealDiv(Sym("lr", float(lr.value)), std_out),
            style="pct0", kind="ratio")

    # measured by the trainer: update RMS / weight RMS at step 1
    for key, run in (("nowarm", "warmup0"), ("warm", "warmup30")):
        ur = base[run]["first_step"]["update_ratio"]
        what = "不预热" if run == "warmup0" else "预热 30 步"
        for t, tensor in (("q", "layers.0.self_attn.q_proj.weight"), ("o", "layers.0.self_attn.o_proj.weight"),
                          ("down", "layers.3.mlp.down_proj.weight"), ("embed", "embed_tokens.weight")):
            reg.add(f"c5.first_{t}_{key}", f"基线{what}第一步 {tensor_label(tensor)} 的更新均方根 ÷ 权重均方根",
                    value=Fraction(str(ur[tensor])), sources=(RUNS + f"：基线{what}，第 1 步",), style="pct1",
                    kind="measured")
    w30 = base["warmup30"]["spec"]["schedule"]
    reg.add("c5.warmup", "基线预热步数", value=w30["warmup"], sources=src_run, style="n", kind="value")
    reg.add("c5.steps", "基线训练步数", value=w30["total"], sources=src_run, style="n", kind="value")
    reg.add("c5.lr_first_warm", "预热时第一步的学习率", lr / Const(w30["warmup"]), style="e0", kind="value")

    from ...train.runs import HYPER
    reg.add("c5.sgd_momentum", "赛跑中 SGD 的动量系数 μ", value=Fraction(str(dict(HYPER["sgd"])["momentum"])),
            sources=(TRAINER,), style="x1", kind="value")
    for sym, v in zip("abc", O.NS_COEFFS):
        reg.add(f"c5.ns_{sym}", f"Newton-Schulz 五次多项式的系数 {sym}", value=Fraction(str(v)),
                sources=("Keller Jordan 2024（Muon 博文与参考实现）",), style="x4", kind="cited")
    from ...train.data import HELD_OUT_EVERY
    reg.add("c5.held_every", "每隔几段留出一段做验证", value=HELD_OUT_EVERY, sources=(TRAINER,), style="n",
            kind="value")
    for key, C in COMPUTE.items():
        reg.add(f"c5.c_{key}", "作为例子的训练计算量（FLOPs）", value=C, sources=(DS_SRC,), style="e0", kind="value")

    # Adam's bias correction and averaging horizons
    b1, b2, b2t = (Sym(s, reg[f"cited.{n}"].value)
                   for s, n in (("β₁", "llm_adam_b1"), ("β₂", "llm_adam_b2"), ("β₂", "torch_adamw_b2")))
    reg.add("c5.bc1", "第 1 步 m 的修正倍数 1/(1−β₁)", 1 / (1 - b1), style="n", kind="ratio")
    reg.add("c5.bc2", "第 1 步 v 的修正倍数 1/(1−β₂)", 1 / (1 - b2), style="n", kind="ratio")
    reg.add("c5.b2_horizon", "β₂ = 0.95 时 v 大约平均的步数 1/(1−β₂)", 1 / (1 - b2), style="n", kind="ratio")
    reg.add("c5.b2_torch_horizon", "β₂ = 0.999 时 v 大约平均的步数", 1 / (1 - b2t), style="n", kind="ratio")

    # batch in tokens
    mb, seq = Sym("micro", spec["batch_size"]), Sym("T", spec["seq_len"])
    reg.add("c5.micro", "每步的序列条数", mb, sources=src_run, style="n", kind="value")
    reg.add("c5.seq", "每条序列的长度（字）", seq, sources=src_run, style="n", kind="value")
    reg.add("c5.batch_tokens", "每步的 token 数（序列条数 × 长度 × 累积 1 × 1 张卡）", mb * seq, style="n")

    # optimiser state for the baseline (float32) and AdamW's for the course's anchor model
    import numpy as np
    params = {k: np.zeros(s, dtype=np.float32) for k, s in M.param_shapes(cfg).items()}   # shapes are what count
    total = M.count_params(params)
    hidden = sum(int(p.size) for k, p in params.items() if O.is_hidden_matrix(k, p))
    N, H = Sym("N", total), Sym("N_hidden", hidden)
    reg.add("c5.params", "基线参数量", N, sources=(TRAINER,), style="n")
    reg.add("c5.hidden", "基线里交给 Muon 的二维隐藏矩阵的参数", H, sources=(TRAINER + "：除词嵌入外的二维权重",),
            style="n")
    adam_bytes = 2 * Const(4) * N
    muon_bytes = Const(4) * H + 2 * Const(4) * (N - H)
    assert adam_bytes.value == O.AdamW().state_bytes(params)
    assert muon_bytes.value == O.Muon().state_bytes(params)
    reg.add("c5.adamw_state_mb", "基线 AdamW 状态（m、v 各一份 float32），MB", adam_bytes / Const(10 ** 6), style="x1",
            kind="bytes")
    reg.add("c5.muon_state_mb", "基线 Muon 状态（隐藏矩阵一份动量，其余 AdamW 两份），MB",
            muon_bytes / Const(10 ** 6), style="x1", kind="bytes")
    reg.add("c5.muon_state_share", "Muon 状态占 AdamW 状态的比例", muon_bytes / adam_bytes, style="pct0",
            kind="ratio")
    if "anchor" in models:
        a = Sym("N", models["anchor"].ledger.total)
        reg.add("c5.anchor_adamw_state_gb", f"{models['anchor'].name} 的 AdamW 状态（两份 float32），GB",
                2 * Const(4) * a / Const(10 ** 9), sources=(models["anchor"].where,), style="x0", kind="bytes")

    # Newton-Schulz overhead ~ T m / B (Keller Jordan's estimate)
    T_ns, m = Sym("T", reg["cited.muon_ns_steps"].value), Sym("m", cfg.d_model)
    reg.add("c5.ns_overhead_baseline", "基线上 Newton-Schulz 相对一步其余计算的开销 T·m/B",
            T_ns * m / (mb * seq), sources=("Keller Jordan 2024（Muon 博文）的估计：开销约 T·m/B",),
            style="x0", kind="ratio")

    # DeepSeek LLM's lr and batch fits
    lr_base, lr_exp, b_base, b_exp = (float(reg[f"cited.deepseek_{k}"].value)
                                      for k in ("lr_base", "lr_exponent", "batch_base", "batch_exponent"))
    for key, C in COMPUTE.items():
        power = f"C = 10^{len(str(C)) - 1} FLOPs"
        reg.add(f"c5.ds_lr_{key}", f"DeepSeek LLM 拟合的最优学习率，{power}", value=lr_base * C ** -lr_exp,
                sources=(DS_SRC,), style="e2", kind="cited")
        reg.add(f"c5.ds_b_{key}", f"DeepSeek LLM 拟合的最优批大小（token），{power}", value=b_base * C ** b_exp,
                sources=(DS_SRC,), style="M1", kind="cited")
    if "anchor" in models:
        d = models["anchor"].arch.d_model
        B = Sym("B", reg["c5.ds_b_e23"].value)
        reg.add("c5.ns_overhead_e23", f"{models['anchor'].name} 宽度、C = 10²³ 的最优批大小下 Newton-Schulz 的开销",
                RealDiv(T_ns * Sym("m", d), B), sources=(models["anchor"].where, DS_SRC), style="pct2", kind="ratio")
        # muP: hidden-layer Adam lr ~ 1 / width
        reg.add("c5.mup_lr_anchor", f"按 μP 把基线的隐藏层学习率搬到 {models['anchor'].name} 的宽度",
                lr * m / Sym("d", d), sources=("Yang 等 2022（μP，arXiv 2203.03466）：隐藏层 Adam 学习率 ∝ 1/宽度",),
                style="e1", kind="value")
        reg.add("c5.anchor_d", f"{models['anchor'].name} 的隐藏维", Sym("d", d), sources=(models["anchor"].where,),
                style="n")

    # the runs themselves
    text = runs["text"]
    reg.add("c5.text_chars", "训练文本的字数（含标点、换行）", value=text["characters"], sources=(RUNS,), style="n")
    reg.add("c5.vocab", "训练文本里不同的字（即字表大小）", value=text["vocab_size"], sources=(RUNS,), style="n")
    reg.add("c5.train_tokens", "训练部分的字数", value=text["train_tokens"], sources=(RUNS,), style="n")
    reg.add("c5.held_tokens", "留出部分的字数", value=text["held_out_tokens"], sources=(RUNS,), style="n")
    reg.add("c5.baseline_vocab", "基线词表大小", value=cfg.vocab_size, sources=(TRAINER,), style="n")
    reg.add("c5.ln_v", "基线什么都不知道时的 loss：ln 2048", value=math.log(cfg.vocab_size), style="x2",
            sources=(TRAINER,), kind="value")
    live = live_config(text["vocab_size"])
    reg.add("c5.live_params", "页面里实时训练的小模型的参数量",
            value=sum(math.prod(s) for s in M.param_shapes(live).values()), sources=(TRAINER,), style="n")
    for key, run in (("warm", "warmup30"), ("nowarm", "warmup0")):
        r = base[run]
        last = r["loss"][-10:]
        src = (RUNS + ("：基线预热 30 步" if run == "warmup30" else "：基线不预热"),)
        reg.add(f"c5.loss0_{key}", "第 1 步的训练 loss", value=Fraction(str(r["loss"][0])), sources=src, style="x2",
                kind="measured")
        reg.add(f"c5.loss10_{key}", "第 10 步的训练 loss", value=Fraction(str(r["loss"][9])), sources=src,
                style="x2", kind="measured")
        reg.add(f"c5.final_{key}", "最后 10 步训练 loss 的平均", value=Fraction(str(sum(last) / len(last))),
                sources=src, style="x2", kind="measured")
        reg.add(f"c5.held_{key}", "最后一步在留出文本上的 loss", value=Fraction(str(r["eval_loss"][-1])),
                sources=src, style="x2", kind="measured")
        reg.add(f"c5.gn0_{key}", "第 1 步的梯度全局范数（裁剪前）", value=Fraction(str(r["grad_norm"][0])),
                sources=src, style="x2", kind="measured")
        clipped = sum(1 for g in r["grad_norm"] if g is not None and g > 1.0)
        reg.add(f"c5.clipped_{key}", "梯度范数超过 1.0、被裁剪的步数", value=clipped, sources=src, style="n",
                kind="measured")
        reg.add(f"c5.max_logit0_{key}", "第 1 步的最大注意力 logit", value=Fraction(str(r["max_attn_logit"][0])),
                sources=src, style="x2", kind="measured")
        reg.add(f"c5.max_logit_{key}", "训练中出现过的最大注意力 logit", value=Fraction(str(max(r["max_attn_logit"]))),
                sources=src, style="x1", kind="measured")
    race = runs["race"]
    for name in race["lr"]:
        for k in race["multipliers"]:
            r = race["runs"][f"{name}:{k}"]
            tag = f"{name}_{'m' if k < 0 else 'p'}{abs(k)}"
            src = (RUNS + f"：优化器赛跑，{name}，学习率为常用值的 3^{k} 倍",)
            if r["diverged_at"]:
                reg.add(f"c5.race_{tag}_diverged", "发散的步数", value=r["diverged_at"], sources=src, style="n",
                        kind="measured")
                final = Fraction(10 ** 9)        # stands for "no finite loss" in comparisons
            else:
                last = [v for v in r["loss"][-10:] if v is not None]
                final = Fraction(str(sum(last) / len(last)))
            reg.add(f"c5.race_{tag}", "最后 10 步训练 loss 的平均（发散记为 10⁹）", value=final, sources=src,
                    style="x2", kind="measured")
    for name in race["lr"]:       # "usable": a final loss within USABLE of the optimiser's own best in the sweep
        finals = [reg[f"c5.race_{name}_{'m' if k < 0 else 'p'}{abs(k)}"].value for k in race["multipliers"]]
        best = min(finals)
        reg.add(f"c5.race_best_{name}", f"赛跑中 {name} 在所有学习率里最好的最后 loss", value=best,
                sources=(RUNS,), style="x2", kind="measured")
        reg.add(f"c5.race_usable_{name}", f"赛跑中 {name} 能用的学习率档数（最后 loss 比它最好的一档高不到一成）",
                value=sum(f <= best * (1 + USABLE) for f in finals), sources=(RUNS,), style="n", kind="measured")
    reg.add("c5.race_loss0", "赛跑第 1 步的训练 loss（四种优化器相同）",
            value=Fraction(str(race["runs"]["adamw:0"]["loss"][0])), sources=(RUNS,), style="x2", kind="measured")
    reg.add("c5.race_ln_v", "小模型什么都不知道时的 loss：ln（字表大小）", value=math.log(text["vocab_size"]),
            sources=(RUNS,), style="x2", kind="value")
    ks = race["multipliers"]
    reg.add("c5.race_x_max", "赛跑里学习率放大的最大倍数", value=3 ** max(ks), sources=(RUNS,), style="n", kind="value")
    reg.add("c5.race_x_2", "赛跑里学习率放大的第二大倍数", value=3 ** sorted(ks)[-2], sources=(RUNS,), style="n",
            kind="value")
    reg.add("c5.race_x_min_inv", "赛跑里学习率缩小的最大倍数（取倒数）", value=3 ** -min(ks), sources=(RUNS,),
            style="n", kind="value")
    reg.add("c5.tail", "取平均的最后几步", value=10, sources=(TRAINER,), style="n", kind="value")
    reg.add("c5.early", "比较早期 loss 的那一步", value=10, sources=(TRAINER,), style="n", kind="value")
    reg.add("c5.race_steps", "赛跑的步数", value=race["steps"], sources=(RUNS,), style="n")
    for name, lr0 in race["lr"].items():
        reg.add(f"c5.race_lr_{name}", f"赛跑中 {name} 的常用学习率（×1）", value=Fraction(str(lr0)), sources=(RUNS,),
                style="e0" if lr0 < 0.01 else "x1", kind="value")
