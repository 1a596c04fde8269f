"""C8 训练稳定性 — the lesson's numbers (c8.*): measured by the trainer's stability runs
(data/train_stability.json, passed in as data["train_stability"]), read from the course's configs through the
ledger engine, and cited figures (kind "cited", named c8.cited_*).

A measured number names the run it comes from; a comparison between runs is left to the lesson's claims.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ...errors import CourseError
from ...expr import Const, RealDiv, Sqrt, Sym
from ...toolkit.stored import document
from . import calc

RUNS = "课程训练代码预先算好的稳定性训练记录"      # data/train_stability.json
TRAINER = "课程的训练代码"

CITED = {
    "k2_tau": (100, "Kimi K2 训练时 QK-Clip 的阈值 τ",
               "Kimi 团队 2025（Kimi K2 技术报告，arXiv 2507.20534）：训练 K2 时 QK-Clip 取 τ = 100", "n"),
    "k2_tokens_t": ("15.5", "Kimi K2 预训练的 token 数（万亿）",
                    "Kimi 团队 2025（Kimi K2 技术报告）：15.5T token，全程没有 loss 尖峰", "x1"),
    "palm_z": ("0.0001", "PaLM 的 z-loss 系数",
               "Chowdhery 等 2022（PaLM，arXiv 2204.02311）训练设置：z_loss = 10⁻⁴·log²Z", "e0"),
    "clip": ("1.0", "常用的梯度全局范数裁剪阈值", "Touvron 等 2023（Llama 2 论文）2.2 节：gradient clipping 1.0", "x1"),
}

# the grid's settings the lesson cites, as toggles switched on (everything else off)
ONLY = {"off": (), "warm": ("warmup",), "post": ("post_ln",), "post_warm": ("post_ln", "warmup"),
        "qknorm": ("qk_norm",), "clip": ("qk_clip",), "z": ("z_loss",), "cap": ("softcap",),
        "all": ("warmup", "qk_norm", "z_loss")}
ONLY_ZH = {"off": "不加任何措施", "warm": "只开预热", "post": "Post-LN、不预热", "post_warm": "Post-LN 加预热",
           "qknorm": "只开 QK-norm", "clip": "只开 QK-Clip", "z": "只开 z-loss", "cap": "只开软封顶",
           "all": "预热 + QK-norm + z-loss"}


def grid_key(toggles: list, on: tuple) -> str:
    return "-".join(f"{t}{int(t in on)}" for t in toggles)


def _f(x) -> Fraction:
    return Fraction(str(x))


def _c5_logit_growth(reg, data) -> None:
    """C5's baseline run (data/train_runs.json, the common learning rate with warmup), which C8 opens with: its
    largest attention logit over the run against the first step's."""
    series = ((data.get("train_runs") or {}).get("baseline") or {}).get("warmup30", {}).get("max_attn_logit")
    if not series:
        raise CourseError("data/train_runs.json: no baseline/warmup30 run with max_attn_logit; make it with: "
                          "python -m experiments.train.runs")
    reg.add("c8.c5_logit_growth", "C5 的基线训练（常用学习率、预热）中注意力最大 logit 的峰值是第 1 步的几倍",
            RealDiv(Sym("峰值", calc.peak(series)), Sym("第 1 步", float(series[0]))), kind="ratio", style="x0",
            sources=("课程训练代码预先算好的 C5 基线训练记录：预热 30 步",))


SWEEP = "课程训练代码预先算好的学习率扫描记录"      # data/train_lr_sweep.json
LR_MARGIN = Fraction(1, 5)       # nats: a learning rate "trains" when its final loss is within this of the best


def _lr_sweep(reg, data) -> None:
    """Final loss against learning rate for each fix (Wortsman et al. 2023's LR sensitivity and the range of lrs
    within LR_MARGIN of the best), and the deeper model's Post-LN runs with and without warmup."""
    from .widgets import DEPTH_ZH, FIX_ZH
    doc = document(data, "train_lr_sweep")
    setting, lrs, seeds = SWEEP + "的设定", doc["lrs"], doc["seeds"]
    reg.add("c8.lrs.n", "学习率扫描里的学习率个数", value=len(lrs), sources=(setting,), kind="count")
    reg.add("c8.lrs.seeds", "学习率扫描每个设定重跑的随机种子数", value=len(seeds), sources=(setting,), kind="count")
    reg.add("c8.lrs.low", "扫描的最小学习率", value=_f(lrs[0]), sources=(setting,), kind="value", style="e0")
    reg.add("c8.lrs.high", "扫描的最大学习率", value=_f(lrs[-1]), sources=(setting,), kind="value", style="x0")
    reg.add("c8.lrs.step", "相邻两个学习率之比（√10）", RealDiv(Sym("第 2 个", lrs[1]), Sym("第 1 个", lrs[0])),
            kind="ratio", style="x1", sources=(setting,))
    reg.add("c8.lrs.margin", "「能用」的学习率：最终 loss 与最好的相差不超过这么多（nats/字）", value=LR_MARGIN,
            sources=("本课的约定",), kind="value", style="x1")
    every = list(doc["sweep"].values())
    reg.add("c8.lrs.diverged", "学习率扫描里发散（loss 变成非有限值）的训练次数",
            value=sum(r["diverged_at"] is not None for r in every), sources=(SWEEP,), kind="measured")
    reg.add("c8.lrs.runs", "学习率扫描的训练次数", value=len(every), sources=(setting,), kind="count")
    for fix in doc["fixes"]:
        curve = calc.lr_curve(doc["sweep"], fix, doc["lr_exponents"], seeds)
        lo, hi = calc.usable_lrs(lrs, curve, float(LR_MARGIN))
        zh, src = FIX_ZH[fix], (SWEEP + "：" + FIX_ZH[fix],)
        best = curve.index(min(curve))
        reg.add(f"c8.lrs.{fix}.sens", f"{zh}：LR 敏感度（Wortsman 等的定义：各学习率最终 loss 与最好者之差的平均）",
                value=_f(round(calc.lr_sensitivity(curve), 6)), sources=src, kind="measured", style="x2")
        reg.add(f"c8.lrs.{fix}.best", f"{zh}：各学习率里最低的最终 loss", value=_f(round(curve[best], 6)),
                sources=src, kind="measured", style="x2")
        reg.add(f"c8.lrs.{fix}.best_lr", f"{zh}：最终 loss 最低的学习率", value=_f(lrs[best]), sources=src,
                kind="measured", style="e0")
        reg.add(f"c8.lrs.{fix}.top", f"{zh}：最大学习率下的最终 loss", value=_f(round(curve[-1], 6)), sources=src,
                kind="measured", style="x2")
        reg.add(f"c8.lrs.{fix}.lo", f"{zh}：能用的学习率的下限", value=_f(lo), sources=src, kind="measured",
                style="e1")
        reg.add(f"c8.lrs.{fix}.hi", f"{zh}：能用的学习率的上限", value=_f(hi), sources=src, kind="measured",
                style="e1")
        reg.add(f"c8.lrs.{fix}.span", f"{zh}：能用的学习率上限是下限的几倍",
                RealDiv(Sym("上限", hi), Sym("下限", lo)), kind="ratio", style="x0", sources=src)
        reg.add(f"c8.lrs.{fix}.seeds_lower", f"{zh}：单看一个种子，LR 敏感度比不加措施低的种子数",
                value=sum(calc.lr_sensitivity(calc.lr_curve(doc["sweep"], fix, doc["lr_exponents"], [s]))
                          < calc.lr_sensitivity(calc.lr_curve(doc["sweep"], "none", doc["lr_exponents"], [s]))
                          for s in seeds), sources=src, kind="measured")
    top = [r for k in doc["lr_exponents"][-2:] for s in seeds for r in (doc["sweep"][f"softcap:{k}:{s}"],)]
    reg.add("c8.lrs.softcap.top_logit", "只开软封顶、最大的两个学习率：最后一步注意力 logit 最大值里最小的一个",
            value=_f(min(r["last_attn_logit"] for r in top)), sources=(SWEEP + "：只开软封顶",), kind="measured",
            style="x1")
    reg.add("c8.lrs.softcap.top_held", "只开软封顶、最大的两个学习率：训练结束时留出 loss 里最小的一个",
            value=_f(min(r["held_out"] for r in top if r["held_out"] is not None)), sources=(SWEEP + "：只开软封顶",),
            kind="measured", style="x1")
    reg.add("c8.lrs.loss0", "学习率扫描：初始化时（第 1 步更新之前）的 loss，各次训练里最大的一个",
            value=_f(max(r["loss"][0] for r in every)), sources=(SWEEP,), kind="measured", style="x2")

    deep = doc["depth"]
    reg.add("c8.deep.L", "更深模型的层数", value=deep["model"]["n_layers"], sources=(setting,), kind="value")
    reg.add("c8.deep.d", "更深模型的宽度 d", value=deep["model"]["d_model"], sources=(setting,), kind="value")
    reg.add("c8.deep.n", "更深模型每个设定试的学习率个数", value=len(deep["lrs"]), sources=(setting,), kind="count")
    reg.add("c8.deep.lr_lo", "更深模型试的最小学习率", value=_f(deep["lrs"][0]), sources=(setting,), kind="value",
            style="e0")
    reg.add("c8.deep.lr_hi", "更深模型试的最大学习率", value=_f(deep["lrs"][-1]), sources=(setting,), kind="value",
            style="e0")

    def held(name: str, lr: float, seed: int) -> float:
        return calc.mean_final(deep["runs"], f"{name}:{lr:g}", [seed])

    def mean(name: str, lr: float) -> float:
        return calc.mean_final(deep["runs"], f"{name}:{lr:g}", seeds)

    deep_src = (SWEEP + "：更深更窄的模型",)
    for i, lr in enumerate(deep["lrs"]):
        for name in deep["settings"]:
            reg.add(f"c8.deep.{name}.lr{i}", f"更深模型，{DEPTH_ZH[name]}，学习率 {lr:g}：留出 loss（种子平均）",
                    value=_f(round(mean(name, lr), 6)), sources=deep_src, kind="measured", style="x2")
    pairs = [(lr, s) for lr in deep["lrs"] for s in seeds]
    reg.add("c8.deep.pairs", "更深模型的（学习率, 种子）组数", value=len(pairs), sources=(setting,), kind="count")
    reg.add("c8.deep.warm_wins", "更深模型 Post-LN：加预热后留出 loss 更低的（学习率, 种子）组数",
            value=sum(held("post_warmup", lr, s) < held("post", lr, s) for lr, s in pairs), sources=deep_src,
            kind="measured")
    reg.add("c8.deep.warm_gap", "更深模型 Post-LN：加不加预热，种子平均留出 loss 之差的最大绝对值",
            value=_f(round(max(abs(mean("post_warmup", lr) - mean("post", lr)) for lr in deep["lrs"]), 6)),
            sources=deep_src, kind="measured", style="x2")
    reg.add("c8.deep.pre_gap", "更深模型：各学习率下 Post-LN（不预热）比 Pre-LN 高出的留出 loss 的最小值",
            value=_f(round(min(mean("post", lr) - mean("pre", lr) for lr in deep["lrs"]), 6)),
            sources=deep_src, kind="measured", style="x2")


def register(reg, models, course=None, data=None) -> None:
    if data is None:
        return
    runs = document(data, "train_stability")
    _c5_logit_growth(reg, data)
    _lr_sweep(reg, data)
    for name, (value, label, src, style) in CITED.items():
        reg.add(f"c8.cited_{name}", label, value=Fraction(value) if isinstance(value, str) else value,
                sources=(src,), kind="cited", style=style)
    setting = RUNS + "的设定"
    reg.add("c8.lr", "稳定性实验的峰值学习率（AdamW）", value=_f(runs["lr"]), sources=(setting,), kind="value",
            style="e0")
    reg.add("c8.lr_factor", "它是 C5 里 AdamW 常用学习率的几倍", value=runs["lr_factor"], sources=(setting,),
            kind="value")
    reg.add("c8.steps", "稳定性实验每次训练的步数", value=runs["steps"], sources=(setting,), kind="value")
    reg.add("c8.warmup", "打开预热时的预热步数", value=runs["warmup"], sources=(setting,), kind="value")
    reg.add("c8.tail", "一次训练的「最后 loss」取最后几步的平均", value=calc.TAIL, sources=(TRAINER,), kind="value")
    reg.add("c8.runs", "预先算好的开关组合数", value=len(runs["grid"]), sources=(setting,), kind="count")
    reg.add("c8.tau", "实验里 QK-Clip 的阈值 τ（与 Kimi K2 相同）", value=_f(runs["tau"]), sources=(setting,),
            kind="value", style="n")
    reg.add("c8.z", "实验里 z-loss 的系数（与 PaLM 相同）", value=_f(runs["z_loss"]), sources=(setting,),
            kind="value", style="e0")
    spec = runs["grid"][grid_key(runs["toggles"], ())]["spec"]
    hd = spec["model"]["d_model"] // spec["model"]["n_heads"]
    reg.add("c8.hd", "小模型每个头的维度 head_dim", value=hd, sources=(setting,), kind="value")
    reg.add("c8.live_L", "稳定性实验里小模型的层数", value=spec["model"]["n_layers"], sources=(setting,), kind="value")
    reg.add("c8.heads", "稳定性实验里小模型的查询头数", value=spec["model"]["n_heads"], sources=(setting,),
            kind="value")
    reg.add("c8.kv_heads", "稳定性实验里小模型的 KV 头数（几个查询头共用一个）", value=spec["model"]["n_kv_heads"],
            sources=(setting,), kind="value")
    reg.add("c8.qk_bound", "QK-norm 后、增益为 1 时注意力 logit 的上界 √head_dim",
            Sqrt(Sym("head_dim", hd)), kind="ratio", style="x0", sources=(TRAINER,))
    reg.add("c8.clip_model", "实验里的梯度裁剪阈值", value=_f(spec["clip"]), sources=(setting,), kind="value",
            style="x1")

    for short, on in ONLY.items():
        r = runs["grid"][grid_key(runs["toggles"], on)]
        run_src = (RUNS + "：" + ONLY_ZH[short],)
        reg.add(f"c8.logit_{short}", f"{ONLY_ZH[short]}：训练中注意力 logit 的最大值",
                value=_f(calc.peak(r["max_attn_logit"])), sources=run_src, kind="measured", style="x1")
        reg.add(f"c8.loss_{short}", f"{ONLY_ZH[short]}：最后 {calc.TAIL} 步训练 loss 的平均",
                value=_f(round(calc.final(r["loss"]), 6)), sources=run_src, kind="measured", style="x2")
        reg.add(f"c8.held_{short}", f"{ONLY_ZH[short]}：训练结束时留出文本上的 loss",
                value=_f(r["eval_loss"]), sources=run_src, kind="measured", style="x2")
        reg.add(f"c8.logz_{short}", f"{ONLY_ZH[short]}：最后 {calc.TAIL} 步输出 log Z 的平均",
                value=_f(round(calc.final(r["log_z"]), 6)), sources=run_src, kind="measured", style="x2")
        reg.add(f"c8.gnorm_{short}", f"{ONLY_ZH[short]}：训练中梯度全局范数（裁剪前）的最大值",
                value=_f(calc.peak(r["grad_norm"])), sources=run_src, kind="measured", style="x1")
        reg.add(f"c8.gnorm0_{short}", f"{ONLY_ZH[short]}：第 1 步的梯度全局范数",
                value=_f(r["grad_norm"][0]), sources=run_src, kind="measured", style="x2")
        reg.add(f"c8.spikes_{short}", f"{ONLY_ZH[short]}：梯度范数超过裁剪阈值 5 倍的步数",
                value=calc.spikes(r["grad_norm"], spec["clip"]), sources=run_src, kind="measured")
    # the same comparisons on other seeds: how often each comes out the same way (seed 0 is the grid's run)
    seeds = runs["seeds"]
    every_seed = [0, *seeds["seeds"]]

    def on_seed(seed: int, on: tuple) -> dict:
        k = grid_key(runs["toggles"], on)
        return runs["grid"][k] if seed == 0 else seeds["runs"][f"{seed}:{k}"]

    def seeds_where(test) -> int:
        return sum(1 for s in every_seed if test(lambda on, s=s: on_seed(s, on)))

    seed_src = (RUNS + "：同样的设定换随机种子各跑一遍（种子决定初始化和批次）",)
    reg.add("c8.seeds_n", "换种子重跑的种子个数（含主实验的种子 0）", value=len(every_seed), sources=seed_src,
            kind="count")
    reg.add("c8.postwarm_wins", "Post-LN：加预热后最后 loss 比不加更低的种子数",
            value=seeds_where(lambda r: calc.final(r(("post_ln", "warmup"))["loss"])
                              < calc.final(r(("post_ln",))["loss"])), sources=seed_src, kind="measured")
    reg.add("c8.warm_loses", "Pre-LN：只开预热后最后 loss 反而更高的种子数",
            value=seeds_where(lambda r: calc.final(r(("warmup",))["loss"]) > calc.final(r(())["loss"])),
            sources=seed_src, kind="measured")
    fixes = ONLY["all"]
    reg.add("c8.gnorm_halved", "预热 + QK-norm + z-loss：梯度范数最大值不到不加措施一半的种子数",
            value=seeds_where(lambda r: calc.peak(r(fixes)["grad_norm"]) < calc.peak(r(())["grad_norm"]) / 2),
            sources=seed_src, kind="measured")
    reg.add("c8.logit_tamed", "预热 + QK-norm + z-loss：注意力 logit 最大值不到不加措施十分之一的种子数",
            value=seeds_where(lambda r: calc.peak(r(fixes)["max_attn_logit"])
                              < calc.peak(r(())["max_attn_logit"]) / 10), sources=seed_src, kind="measured")

    # where the no-fix run's largest gradient norm sits: its step and how much of it one tensor carries
    off = runs["grid"][grid_key(runs["toggles"], ())]
    step, top = calc.spike_tensors(off, top=len(off["spike"]["grad_norms"]))
    spike_src = (RUNS + "：不加措施，梯度范数最大那一步每个张量的梯度范数",)
    reg.add("c8.spike_step_off", "不加措施：梯度全局范数最大的那一步", value=step, sources=spike_src, kind="measured")
    reg.add("c8.spike_share_off", "不加措施：那一步梯度最大的一个张量占全局范数平方的比例",
            value=_f(round(top[0][2], 6)), sources=spike_src, kind="measured", style="pct0")
    reg.add("c8.spike_share3_off", "不加措施：那一步梯度最大的三个张量合计占全局范数平方的比例",
            value=_f(round(sum(t[2] for t in top[:3]), 6)), sources=spike_src, kind="measured", style="pct0")
    reg.add("c8.spike_tensors", "小模型的张量个数（那一步分摊梯度的张量）", value=len(top), sources=spike_src,
            kind="count")
    # step 1 runs before any update: every setting that keeps the model's structure starts from this logit
    reg.add("c8.logit0", "第 1 步（更新之前）注意力 logit 的最大值，取自只开预热那次",
            value=_f(runs["grid"][grid_key(runs["toggles"], ("warmup",))]["max_attn_logit"][0]),
            sources=(RUNS + "：只开预热，第 1 步",), kind="measured", style="x2")
    reg.add("c8.clipped_heads", "只开 QK-Clip 时，被缩放过的（步, 头）次数",
            value=runs["grid"][grid_key(runs["toggles"], ("qk_clip",))]["qk_clipped_heads"],
            sources=(RUNS + "：只开 QK-Clip",), kind="measured")
    reg.add("c8.qknorm_factor", "不加措施与只开 QK-norm 的最大注意力 logit 之比",
            RealDiv(Sym("不加措施", float(reg["c8.logit_off"].value)),
                    Sym("QK-norm", float(reg["c8.logit_qknorm"].value))),
            kind="ratio", style="x0", sources=(RUNS,))
    ri = runs["residual_init_none"]
    reg.add("c8.logit_resnone", "不做残差缩放初始化（其余不加措施）：最大注意力 logit",
            value=_f(calc.peak(ri["max_attn_logit"])), sources=(RUNS + "：残差缩放初始化关闭",), kind="measured",
            style="x1")
    reg.add("c8.gnorm0_resnone", "不做残差缩放初始化：第 1 步的梯度全局范数", value=_f(ri["grad_norm"][0]),
            sources=(RUNS + "：残差缩放初始化关闭",), kind="measured", style="x2")

    # Xiong et al.'s scaling at initialisation: the last layer's down_proj gradient vs depth
    xi = runs["xiong"]
    depths = xi["depths"]
    reg.add("c8.depth_max", "初始化梯度实验的最大层数", value=depths[-1], sources=(setting,), kind="value")
    for key, zh in (("pre_none", "Pre-LN、普通初始化"), ("post_none", "Post-LN、普通初始化"),
                    ("pre_gpt2", "Pre-LN、残差缩放初始化")):
        for i, L in ((0, depths[0]), (-1, depths[-1])):
            reg.add(f"c8.xg_{key}_{L}", f"{zh}，{L} 层时最后一层 down_proj 的初始梯度范数",
                    value=_f(xi[key][i][-1]), sources=(RUNS + f"：初始化时第一批数据，{zh}",), kind="measured",
                    style="e1" if key.startswith("post") else "x3")
    reg.add("c8.xiong_samples", "初始化梯度实验每个层数平均的（批次, 初始化种子）组数", value=xi["samples"],
            sources=(setting,), kind="value")
    for key, zh in (("pre_none", "Pre-LN"), ("post_none", "Post-LN")):
        reg.add(f"c8.xiong_exp_{key.split('_')[0]}",
                f"{zh}（普通初始化）最后一层 down_proj 初始梯度范数随层数 L 变化的指数"
                "（对 log 范数与 log L 做最小二乘拟合的斜率）",
                value=_f(calc.depth_exponent(depths, [row[-1] for row in xi[key]])),
                sources=(RUNS + f"：初始化时，{zh}、普通初始化",), kind="measured", style="x2")
    reg.add("c8.xiong_exp_theory", "Xiong 等预言的 Pre-LN 最后一层梯度随层数变化的指数（1/√L）", value=Fraction(-1, 2),
            sources=("Xiong 等 2020（arXiv 2002.04745）定理 1",), kind="cited", style="x1")
    reg.add("c8.xiong_sqrt", f"√{depths[-1]}（Xiong 等预言的 Pre-LN 缩小倍数）",
            Sqrt(Sym("L", depths[-1])), kind="ratio", style="x0", sources=("Xiong 等 2020（arXiv 2002.04745）定理 1",))

    # residual-scaled init: the anchor's residual stream at initialisation, and the baseline's std
    anchor = models.get("anchor")
    base = models.get("baseline")
    if anchor is not None:
        L = anchor.cfg()["L"]
        reg.add("c8.anchor_L", "锚点模型的层数", L, sources=anchor.src("L"), kind="config", symbols=anchor.keys)
        reg.add("c8.resid_std_plain", "不缩放：2L 次单位方差写入后残差流的标准差 √(1 + 2L)",
                Sqrt(Const(1) + Const(2) * L), kind="ratio", style="x2", sources=anchor.src("L"))
        reg.add("c8.resid_std_scaled", "每次写入方差缩到 1/(2L)：标准差 √(1 + 2L · 1/(2L))",
                Sqrt(Const(1) + Const(2) * L * (Const(1) / (Const(2) * L))), kind="ratio", style="x2",
                sources=anchor.src("L"))
    if base is not None:
        from ...train import model as M
        from ...train.runs import BASELINE
        cfg = M.ModelConfig.from_hf(BASELINE)
        std = RealDiv(Sym("σ", cfg.init_std), Sqrt(Const(2) * Sym("L", cfg.n_layers)))
        assert math.isclose(std.value, M.init_std(cfg, "layers.0.mlp.down_proj.weight"))
        reg.add("c8.base_std_out", "基线 o_proj、down_proj 的初始化标准差 0.02/√(2L)", std, kind="ratio",
                style="x5", sources=(TRAINER + "：GPT-2 式初始化，基线 L = " + str(cfg.n_layers),))

    # which models use what, from their configs
    for alias in ("qwen3_8b", "gemma_2_9b", "anchor", "llama7b"):
        mn = models.get(alias)
        if mn is None:
            continue
        dev = calc.devices(mn.doc["config"], mn.ledger)
        reg.add(f"c8.{alias}_qknorm_layer", f"{mn.name} 每个注意力层 QK-norm 的参数",
                value=dev["qk_norm_per_layer"], sources=(mn.where + "：q_norm、k_norm（账本引擎）",), kind="count")
        reg.add(f"c8.{alias}_qknorm_total", f"{mn.name} 全部 QK-norm 的参数", value=dev["qk_norm_total"],
                sources=(mn.where + "：q_norm、k_norm（账本引擎）",), kind="count")
        reg.add(f"c8.{alias}_qknorm_share", f"{mn.name} 的 QK-norm 参数占总参数的比例",
                RealDiv(Sym("QK-norm", dev["qk_norm_total"]), Sym("总参数", dev["total"])), kind="ratio",
                style="pct", sources=(mn.where,))
        if dev["attn_softcap"] is not None:
            reg.add(f"c8.{alias}_attn_cap", f"{mn.name} 的注意力 logit 封顶值", value=_f(dev["attn_softcap"]),
                    sources=(mn.where + "：attn_logit_softcapping",), kind="config", style="n")
            reg.add(f"c8.{alias}_final_cap", f"{mn.name} 的输出 logit 封顶值", value=_f(dev["final_softcap"]),
                    sources=(mn.where + "：final_logit_softcapping",), kind="config", style="n")
