"""C6's calculators: the IsoFLOP explorer, the budget -> (N, D, days) calculator and the device-speed probe.

Each is a browser entry point (experiments.api:c6_*) and, for the build, the widget's first state and the
answers to its enumerable controls (``states``), so both sides run this code. Every string a learner reads is
formatted here. The formulas are experiments/scaling.py's; nothing here fits anything.
"""
from __future__ import annotations

import math

from ...format import format_value, n, sci
from ...toolkit import scaling as S
from ...widget import uses

FIT_ZH = {"chinchilla": "Chinchilla 原文拟合（四舍五入值）", "epoch": "Epoch AI 重新拟合"}
FIT_COLOR = {"chinchilla": "#d33", "epoch": "#3b7dd8"}
MODEL_COLOR = "#2a9d55"
N_RANGE = (1e6, 1e13)          # the explorer's x axis, the same at every budget (the models stay put)
LOSS_BELOW, LOSS_SPAN = 0.25, 2.0   # its y axis: from a little below the lower optimum, this many nats up
CURVE_POINTS = 61
MAX_BUDGET = 1e30


def budget_of(text, what: str = "算力预算 C（FLOPs）") -> float:
    """A budget typed as text ("5.76e23", "1e24", "3×10^22") -> FLOPs; a ValueError in Chinese otherwise."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    elif isinstance(text, str):
        t = text.strip().replace(",", "").replace("×10^", "e").replace("x10^", "e").replace("*10**", "e")
        try:
            value = float(t)
        except ValueError:
            raise ValueError(f"{what}：请填一个正数，例如 5.76e23，得到 {text!r}") from None
    else:
        raise ValueError(f"{what}：请填一个正数，例如 5.76e23")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what}：需要是正数，得到 {text!r}")
    if not 1e6 <= value <= MAX_BUDGET:
        raise ValueError(f"{what}：请填 1e6 到 1e30 之间的数，得到 {text!r}")
    return value


def positive_number(text, what: str, low: float, high: float, example: str) -> float:
    try:
        value = float(str(text).strip().replace(",", ""))
    except ValueError:
        raise ValueError(f"{what}：请填一个数，例如 {example}，得到 {text!r}") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{what}：需要在 {format_value(low, 'x0') if low >= 1 else low} 到 "
                         f"{format_value(high, 'x0')} 之间，得到 {text!r}")
    return value


def sig(x: float, digits: int = 3) -> str:
    """A float to `digits` significant figures, with digit groups (no e-notation below 10^15)."""
    if x == 0:
        return "0"
    if abs(x) >= 1e15:
        return sci(float(f"{x:.{digits}g}"), digits - 1)
    places = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{places}f}"


def params_text(N: float) -> str:
    """A parameter count as learners read it: 32.2B, 850M, 3.7M."""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if N >= size:
            return f"{sig(N / size)}{unit}"
    return sig(N)


def tokens_text(D: float) -> str:
    """A token count in 万亿 / 亿 / 万 (2 万亿, 7,377 万)."""
    for unit, size in (("万亿", 1e12), ("亿", 1e8), ("万", 1e4)):
        if D >= size:
            return f"{sig(D / size)} {unit}"
    return sig(D)


def duration_zh(seconds: float) -> str:
    for unit, size in (("年", 365 * 86400), ("天", 86400), ("小时", 3600), ("分钟", 60)):
        if seconds >= size:
            return f"{sig(seconds / size)} {unit}"
    return f"{sig(seconds)} 秒"


# -- the IsoFLOP explorer --------------------------------------------------------------------------------------------
def _placed(placed) -> list[tuple[str, int, int]]:
    out = []
    for item in placed or []:
        name, N, D = item
        if not (isinstance(N, int) and isinstance(D, int) and N > 0 and D > 0):
            raise ValueError("模型的参数量和 token 数需要是正整数")
        out.append((str(name), N, D))
    return out


def model_rows(placed, fit: S.ParametricFit = S.EPOCH) -> list[dict]:
    """The course's models with a published training-token figure: exact N, sourced D, tokens per parameter, their
    budget C = 6ND and what the fit would have chosen at that budget."""
    rows = []
    for name, N, D in _placed(placed):
        C = 6 * N * D
        N_opt, D_opt = fit.optimum(C)
        rows.append({"name": name, "N": n(N), "D": tokens_text(D), "tpp": sig(D / N), "C": sci(C, 2),
                     "N_opt": params_text(N_opt), "vs_opt": sig(N / N_opt, 2),
                     "loss": f"{fit.loss(N, D):.3f}", "loss_opt": f"{fit.loss(N_opt, D_opt):.3f}"})
    return rows


def isoflop(budget, placed=None) -> dict:
    """At one budget C: each fit's loss against N (each N trained on C/(6N) tokens), its optimum, and the course's
    models at their own (N, D) (their loss under Epoch's fit, which reproduces Chinchilla's own optimum)."""
    C = budget_of(budget)
    Ns = S.log_grid(N_RANGE[0], N_RANGE[1], CURVE_POINTS)
    floor = min(fit.loss(*fit.optimum(C)) for fit in S.FITS.values())
    y_range = [round(floor - LOSS_BELOW, 2), round(floor - LOSS_BELOW + LOSS_SPAN, 2)]
    series, fits = [], []
    for fit in S.FITS.values():
        N_opt, D_opt = fit.optimum(C)
        L_opt = fit.loss(N_opt, D_opt)
        keep = [(N, fit.loss_at_budget(C, N)) for N in Ns]
        keep = [(N, L) for N, L in keep if L <= y_range[1] + 0.5]
        series.append({"name": FIT_ZH[fit.key], "mode": "lines", "color": FIT_COLOR[fit.key],
                       "x": [N for N, _ in keep], "y": [round(L, 5) for _, L in keep],
                       "text": [f"{FIT_ZH[fit.key]}：N = {params_text(N)}，D = {tokens_text(C / (6 * N))}，"
                                f"损失 {L:.3f}" for N, L in keep]})
        series.append({"name": f"{FIT_ZH[fit.key]}的最优点", "mode": "markers", "color": FIT_COLOR[fit.key],
                       "x": [N_opt], "y": [round(L_opt, 5)],
                       "text": [f"最优：N = {params_text(N_opt)}，D = {tokens_text(D_opt)}，"
                                f"{sig(D_opt / N_opt)} token/参数，损失 {L_opt:.3f}"]})
        fits.append({"key": fit.key, "label": FIT_ZH[fit.key], "N": params_text(N_opt), "D": tokens_text(D_opt),
                     "tpp": sig(D_opt / N_opt), "loss": f"{L_opt:.3f}"})
    models = _placed(placed)
    if models:
        series.append({"name": "课程里的真实模型（按 Epoch 拟合估损失）", "mode": "markers", "color": MODEL_COLOR,
                       "x": [N for _, N, _ in models], "y": [round(S.EPOCH.loss(N, D), 5) for _, N, D in models],
                       "text": [f"{name}：N = {n(N)}，D = {tokens_text(D)}，{sig(D / N)} token/参数，"
                                f"C = 6ND = {sci(6 * N * D, 2)}" for name, N, D in models]})
    chart = {"kind": "xy", "series": series, "xlog": True, "xrange": list(N_RANGE), "yrange": y_range,
             "xtitle": "参数量 N（对数）", "ytitle": "预测损失（nats/token）",
             "title": f"C = {sci(C, 2)} FLOPs 时的 IsoFLOP 曲线"}
    ratio = S.EPOCH.optimum(C)[0] / S.CHINCHILLA.optimum(C)[0]
    return {"budget": sci(C, 2), "fits": fits, "ratio": sig(ratio, 2),
            "sentence": (f"在 C = {sci(C, 2)} FLOPs 时，两条拟合给出的最优模型相差 {sig(ratio, 2)} 倍："
                         f"{fits[0]['N']} 对 {fits[1]['N']}。"),
            "chart": chart}


# -- budget -> N, D, days --------------------------------------------------------------------------------------------
def budget_plan(budget, peak_tflops, gpus, mfu_percent) -> dict:
    """For a budget: each fit's N_opt and D_opt (and DeepSeek's M_opt, D_opt), and how long the budget takes on
    `gpus` devices of `peak_tflops` each at `mfu_percent` of peak."""
    C = budget_of(budget)
    peak = positive_number(peak_tflops, "每卡峰值算力（TFLOPS）", 0.001, 100000, "989.4") * 1e12
    count = positive_number(gpus, "GPU 数量", 1, 1_000_000, "1024")
    if count != int(count):
        raise ValueError(f"GPU 数量：需要是整数，得到 {gpus!r}")
    mfu = positive_number(mfu_percent, "利用率（%）", 1, 100, "40") / 100
    rows = []
    for fit in S.FITS.values():
        N, D = fit.optimum(C)
        rows.append({"label": FIT_ZH[fit.key], "N": params_text(N), "D": tokens_text(D), "tpp": sig(D / N)})
    M, D = S.DEEPSEEK.optimum(C)
    rows.append({"label": "DeepSeek LLM 拟合（M 代替 6N）",
                 "N": f"M = {sci(M, 2)} FLOPs/token（相当于 6N 里的 N ≈ {params_text(M / 6)}）",
                 "D": tokens_text(D), "tpp": sig(D / (M / 6))})
    seconds = S.training_seconds(C, int(count), peak, mfu)
    return {"budget": sci(C, 2), "rows": rows, "days": sig(seconds / 86400), "duration": duration_zh(seconds),
            "gpu_hours": sig(seconds * count / 3600),
            "sentence": (f"{int(count):,} 张卡、每张峰值 {peak / 1e12:,.6g} TFLOPS、利用率 {mfu * 100:.6g}%："
                         f"跑完 {sci(C, 2)} FLOPs 要 {duration_zh(seconds)}（{sig(seconds * count / 3600)} 卡时）。")}


# -- this device -----------------------------------------------------------------------------------------------------
def baseline_budget() -> dict:
    """The course baseline at 20 tokens per parameter: N, D = 20N, C = 6ND and the exact per-token count."""
    from ...baseline import CONFIG
    from ...ledger import ledger_of
    L = ledger_of(CONFIG)
    N = L.total
    D = 20 * N
    per = S.training_flops_per_token(L)
    return {"N": N, "D": D, "C": 6 * N * D, "C_exact": per["total"] * D, "seq": per["seq"]}


@uses("numpy")
def device_speed(seq=32, repeats=1, batch=4) -> dict:
    """Time the course trainer's own training step (lesson C5's experiments.train: forward, hand-written backward,
    clipping and AdamW) on the course baseline at its full size, `batch` sequences of `seq` tokens per step (C5's
    batch: a step's fixed costs, AdamW's among them, weigh as they do in its runs), best of `repeats` steps after
    one to warm up; its FLOP/s is the step's FLOPs counted from the baseline's ledger
    (training_flops_per_token at that sequence length) over its time. Then: how long this device would take to
    train the baseline to 20 tokens per parameter at that speed (C = 6ND, and the exact count at its own
    sequence length)."""
    import time

    import numpy as np

    from ...baseline import CONFIG
    from ...ledger import ledger_of
    from ...train import model as M
    from ...train import trainer as T
    from ...train.schedule import Schedule
    if isinstance(seq, bool) or not isinstance(seq, int) or not 8 <= seq <= 128:
        raise ValueError("序列长度需要是 8 到 128 之间的整数")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= 5:
        raise ValueError("重复次数需要是 1 到 5 之间的整数")
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 8:
        raise ValueError("每步的序列条数需要是 1 到 8 之间的整数")
    model = M.ModelConfig.from_hf(CONFIG)
    ids = [int(i) for i in np.random.default_rng(0).integers(0, model.vocab_size, size=8 * batch * seq + 1)]
    spec = T.RunSpec(model=model, schedule=Schedule("constant", 1e-3, repeats + 1, 0), batch_size=batch, seq_len=seq)
    run = T.Trainer(spec, ids)
    run.step(detail=False)            # warm
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        run.step(detail=False)
        best = min(best, time.perf_counter() - t0)
    best = max(best, 1e-6)
    step_flops = S.training_flops_per_token(ledger_of(CONFIG), seq)["total"] * batch * seq
    flops = step_flops / best
    base = baseline_budget()
    seconds = base["C"] / flops
    seconds_exact = base["C_exact"] / flops
    return {"seq": seq, "batch": batch, "seconds": best, "step_flops": step_flops, "flops": flops,
            "gflops": sig(flops / 1e9), "ms": sig(best * 1000), "duration": duration_zh(seconds),
            "duration_exact": duration_zh(seconds_exact),
            "sentence": (f"这台设备在本页的 Python 里用课程的训练代码把课程基线训练一步（{batch} × {seq} 个 token，"
                         f"{sci(step_flops, 2)} FLOPs）用了 {sig(best * 1000)} 毫秒，约 {sig(flops / 1e9)} GFLOP/s。"
                         f"照这个速度，把课程基线训练到 20 token/参数（C = 6ND = {sci(base['C'], 2)} FLOPs）要 "
                         f"{duration_zh(seconds)}；算上序列长 {base['seq']} 时的注意力（{sci(base['C_exact'], 2)} "
                         f"FLOPs）要 {duration_zh(seconds_exact)}。")}
