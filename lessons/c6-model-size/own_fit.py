"""C6's own IsoFLOP fit: Chinchilla's approach 2 (Hoffmann et al. 2022, arXiv 2203.15556, section 3.2 and
figure 3) on the course trainer's grid (data/train_isoflop.json, experiments/train/runs_isoflop.py).

At each budget C every size N was trained on D = C / (6·N) tokens. Through each budget's held-out losses a
parabola in x = log10 N is fitted by least squares, L(x) = p·x² + q·x + r; its lowest point x* = −q / (2p) is that
budget's optimum N* = 10^x*, with D* = C / (6·N*). Across budgets a straight line through (log10 C, log10 N*) gives
N* ∝ C^a, and one through (log10 C, log10 D*) gives D* ∝ C^b (b = 1 − a, since D* = C / (6N*)).

Plain Python (no numpy, no I/O): the build's numbers, the widget's first state and the page's refit after a rerun
all call these functions.
"""
from __future__ import annotations

import math


def solve3(m: list[list[float]], v: list[float]) -> list[float]:
    """The solution of a 3 × 3 linear system m·x = v (Gaussian elimination with partial pivoting)."""
    a = [row[:] + [b] for row, b in zip(m, v)]
    for col in range(3):
        pivot = max(range(col, 3), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-300:
            raise ValueError("拟合：点太少或横坐标相同，解不出抛物线")
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, 3):
            f = a[r][col] / a[col][col]
            for c in range(col, 4):
                a[r][c] -= f * a[col][c]
    x = [0.0, 0.0, 0.0]
    for r in (2, 1, 0):
        x[r] = (a[r][3] - sum(a[r][c] * x[c] for c in range(r + 1, 3))) / a[r][r]
    return x


def parabola(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Least-squares (p, q, r) of y = p·x² + q·x + r through at least three points (the normal equations,
    x centred on its mean for a well-conditioned system, then moved back)."""
    if len(xs) < 3 or len(xs) != len(ys):
        raise ValueError(f"拟合抛物线：至少要 3 个点，得到 {len(xs)} 个")
    m = sum(xs) / len(xs)
    us = [x - m for x in xs]
    s = [sum(u ** k for u in us) for k in range(5)]
    t = [sum(y * u ** k for u, y in zip(us, ys)) for k in range(3)]
    p, q, r = solve3([[s[4], s[3], s[2]], [s[3], s[2], s[1]], [s[2], s[1], s[0]]], [t[2], t[1], t[0]])
    # p·(x − m)² + q·(x − m) + r in powers of x
    return p, q - 2 * p * m, p * m * m - q * m + r


def line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares (slope, intercept) of y = slope·x + intercept through at least two points."""
    if len(xs) < 2 or len(xs) != len(ys):
        raise ValueError(f"拟合直线：至少要 2 个点，得到 {len(xs)} 个")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("拟合直线：横坐标全都相同")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def budget_optimum(C: float, points: list[tuple[int, float]]) -> dict:
    """One budget's parabola through its (N, loss) points and its lowest point: N*, D* = C/(6N*), the fitted loss
    there, and whether N* lies inside the sizes trained (outside it is an extrapolation)."""
    xs = [math.log10(N) for N, _ in points]
    ys = [L for _, L in points]
    p, q, r = parabola(xs, ys)
    if not p > 0:
        raise ValueError(f"C = {C:.3g} 的损失曲线没有向上弯（抛物线开口向下），找不到最低点")
    x_star = -q / (2 * p)
    N_star = 10 ** x_star
    return {"C": C, "coef": [p, q, r], "N": N_star, "D": C / (6 * N_star), "loss": r - q * q / (4 * p),
            "inside": min(xs) <= x_star <= max(xs), "points": sorted(points)}


def fit(runs: list[dict]) -> dict:
    """The whole fit from the grid's runs (each {budget, N, held_out}): every budget's optimum (in increasing C)
    and the exponents a of N* ∝ C^a and b of D* ∝ C^b with their coefficients (N* = 10^k_N · C^a)."""
    by_budget: dict[float, list[tuple[int, float]]] = {}
    for r in runs:
        if r.get("held_out") is None:
            continue
        by_budget.setdefault(float(r["budget"]), []).append((int(r["N"]), float(r["held_out"])))
    if len(by_budget) < 2:
        raise ValueError(f"拟合指数：至少要 2 个算力预算，得到 {len(by_budget)} 个")
    optima = [budget_optimum(C, pts) for C, pts in sorted(by_budget.items())]
    logC = [math.log10(o["C"]) for o in optima]
    a, kN = line(logC, [math.log10(o["N"]) for o in optima])
    b, kD = line(logC, [math.log10(o["D"]) for o in optima])
    return {"optima": optima, "a": a, "b": b, "kN": kN, "kD": kD}


def parabola_curve(opt: dict, points: int = 41) -> tuple[list[float], list[float]]:
    """The fitted parabola of one budget across the sizes trained (and out to N* when it lies outside), for a chart."""
    xs = [math.log10(N) for N, _ in opt["points"]] + [math.log10(opt["N"])]
    lo, hi = min(xs), max(xs)
    p, q, r = opt["coef"]
    grid = [lo + (hi - lo) * i / (points - 1) for i in range(points)]
    return [10 ** x for x in grid], [p * x * x + q * x + r for x in grid]


# -- what the page shows ---------------------------------------------------------------------------------------------
BUDGET_COLORS = ("#3b7dd8", "#e07b00", "#2a9d55", "#9b59b6", "#d33")


def budget_text(C: float) -> str:
    """2e10 -> '2 × 10¹⁰', 5.76e23 -> '5.76 × 10²³' (as the chart's legend and the tables read it)."""
    from ...format import sci
    m = C / 10 ** math.floor(math.log10(C))
    return sci(C, 0 if abs(m - round(m)) < 1e-9 else 2)


def _params_text(N: float) -> str:
    return f"{N / 1000:,.0f}K" if N < 1e6 else f"{N / 1e6:,.2f}M"


def own_isoflop(runs: list, train_tokens: int) -> dict:
    """The widget's state from the grid's runs (each {budget, width, N, steps, D, held_out}): the chart (every
    budget's losses, its parabola and its optimum), one table row per budget, and the fitted exponents as text.
    train_tokens: the training passages' characters, so D* reads as passes over them."""
    f = fit(runs)
    series: list[dict] = []
    rows = []
    for i, opt in enumerate(f["optima"]):
        color, label = BUDGET_COLORS[i % len(BUDGET_COLORS)], f"C = {budget_text(opt['C'])}"
        pts = [r for r in runs if float(r["budget"]) == opt["C"] and r.get("held_out") is not None]
        pts.sort(key=lambda r: r["N"])
        series.append({"name": f"{label} 各模型的留出损失", "mode": "markers", "color": color,
                       "x": [r["N"] for r in pts], "y": [r["held_out"] for r in pts],
                       "text": [f"{label}：d = {r['width']}，N = {r['N']:,}，训练 {r['steps']:,} 步（D = {r['D']:,}），"
                                f"留出损失 {r['held_out']:.4f}" for r in pts]})
        xs, ys = parabola_curve(opt)
        # (parameter counts drawn as whole numbers: exp/log's last bits differ between the browser's libm and CPython's)
        series.append({"name": f"{label} 的抛物线", "mode": "lines", "color": color, "x": [round(x) for x in xs],
                       "y": [round(y, 5) for y in ys], "text": [f"{label} 的拟合：N = {_params_text(x)}，损失 {y:.4f}"
                                                                 for x, y in zip(xs, ys)]})
        series.append({"name": f"{label} 的最低点", "mode": "markers", "color": color, "size": 16, "symbol": "diamond",
                       "x": [round(opt["N"])],
                       "y": [round(opt["loss"], 5)],
                       "text": [f"{label} 的最优：N* = {_params_text(opt['N'])}，D* = {opt['D']:,.0f}，"
                                f"拟合损失 {opt['loss']:.4f}"]})
        rows.append({"C": budget_text(opt["C"]), "N": _params_text(opt["N"]), "D": f"{opt['D']:,.0f}",
                     "tpp": f"{opt['D'] / opt['N']:.2f}", "epochs": f"{opt['D'] / train_tokens:.1f}",
                     "loss": f"{opt['loss']:.3f}",
                     "inside": "在训练过的尺寸之间" if opt["inside"] else "在训练过的尺寸之外（外推）"})
    losses = [y for s in series for y in s["y"]]
    chart = {"kind": "xy", "series": series, "xlog": True, "xtitle": "参数量 N（对数，含 embedding）",
             "yrange": [math.floor(min(losses) * 10) / 10 - 0.1, math.ceil(max(losses) * 10) / 10 + 0.1],
             "ytitle": "留出文本上的损失（nats/字）", "title": "课程小模型的 IsoFLOP 剖面"}
    return {"rows": rows, "a": f"{f['a']:.2f}", "b": f"{f['b']:.2f}", "chart": chart,
            "sentence": (f"按这 {len(f['optima'])} 个预算的最低点拟合：N* ∝ C^{f['a']:.2f}，D* ∝ C^{f['b']:.2f}；"
                         f"算力每翻 10 倍，最优模型变成 {10 ** f['a']:.1f} 倍，数据变成 {10 ** f['b']:.1f} 倍。")}
