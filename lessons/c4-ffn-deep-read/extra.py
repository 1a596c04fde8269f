"""FFN 精读, the sources' missing parts: prefill vs decode, the FFN share formula, depth vs width at a fixed budget.

Pure functions returning JSON-ready data, used twice like calc.py's: by the build (the views at the end render the
widgets' first states) and by the browser (experiments.api:ffn_prefill_decode, ffn_share_chart,
ffn_depth_width_table and ffn_depth_width_now).
Formulas and where they come from:

- ``prefill_decode``  one forward pass over N tokens reads the step's weights once (calc.StepWeights.read(N)) and
  does 2 FLOPs per active matmul weight per token: arithmetic intensity = 2·W_active·N / (W_read·bytes). The GPU's
  ridge point is peak FLOP/s ÷ bandwidth (data/citations.json, H100 / A100); above it a pass is compute-bound.
  A prompt of N tokens and a decode step of a batch of N streams are the same pass for the weights, so the
  crossover is calc.compute_takeover_batch. Attention-score work is left out (it adds FLOPs, not weight reads).
- ``share_formula``   per layer, in units of d²: FFN m·r (m matrices of d × r·d), attention Q and O 2·(h·d_h/d), K
  and V 2·(h_kv·d_h/d); with h·d_h = d the FFN share is m·r / (m·r + 2 + 2·h_kv/h) (FFN source §7.1). The table
  puts it beside the ledger engine's own count of each model's layer: its weight matrices only, and the whole
  layer (norms, biases); the chart draws the curve with the models as points.
- ``depth_width``     at a fixed parameter budget, each layer count L gets the widest Llama-style config (MHA, head
  width 128, SwiGLU at 8/3·d aligned to 256, Llama 2's vocabulary, calc.llama_config) whose ledger total is closest
  to the budget; the engine counts it, and views give FFN share, attention-score FLOPs at T and KV cache per token.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

from ...format import format_value, gb, ms, n, pct, per_second, signed_pct, trim_decimal
from ...ledger import build_ledger, views
from ...toolkit.inputs import parse_fraction, parse_int
from . import calc

# ==============================================================================================================
# 1. prefill vs decode
# ==============================================================================================================
PD_TOKENS = (1, 4, 16, 64, 256, 1024, 4096, 16384)   # the table's passes: tokens per forward pass


def _pass(w: calc.StepWeights, tokens: int, nbytes: Fraction, bw: Fraction, peak: Fraction) -> dict:
    """One forward pass over `tokens` tokens: bytes of weights read, matmul FLOPs, their ratio, time bounds."""
    read = w.read(tokens) * nbytes
    flops = 2 * w.active * tokens
    t_mem, t_cmp = calc._step_times(w, tokens, nbytes, bw, peak)
    step = max(t_mem, t_cmp)
    return {"tokens": n(tokens), "read": gb(read), "flops": format_value(flops, "e2"),
            "intensity": format_value(Fraction(flops) / read, "x1" if Fraction(flops) / read < 100 else "x0"),
            "t_mem": ms(t_mem), "t_compute": ms(t_cmp), "t_step": ms(step), "tok_s": per_second(tokens / step),
            "bound": "带宽" if t_mem > t_cmp else "算力", "use": pct(t_cmp / step),
            "raw": {"intensity": Fraction(flops) / read, "t_mem": t_mem, "t_compute": t_cmp}}


def prefill_decode(config, dtype, bandwidth_tbps, peak_tflops, prompt, batch) -> dict:
    """A prompt of `prompt` tokens read in one pass (prefill) beside one decode step for `batch` streams."""
    ledger, w, nbytes, bw, peak = calc._decode_inputs(config, dtype, bandwidth_tbps, peak_tflops)
    prompt = parse_int(prompt, "提示词长度（token）", 1, 10**6)
    batch = parse_int(batch, "解码批大小", 1, 65536)
    ridge = peak / bw          # (10¹² FLOP/s) / (10¹² B/s): FLOPs per byte at which both take the same time
    crossover = calc.compute_takeover_batch(w, nbytes, bw, peak)
    pre, dec = _pass(w, prompt, nbytes, bw, peak), _pass(w, batch, nbytes, bw, peak)
    strip = lambda r: {k: v for k, v in r.items() if k != "raw"}  # noqa: E731
    speedup = (prompt / max(pre["raw"]["t_mem"], pre["raw"]["t_compute"])) / \
        (batch / max(dec["raw"]["t_mem"], dec["raw"]["t_compute"]))
    return {"dtype": dtype, "bytes": trim_decimal(nbytes), "ridge": format_value(ridge, "x0"),
            "crossover": "—" if crossover is None else n(crossover), "moe": bool(ledger.arch.moe),
            "prefill": strip(pre), "decode": strip(dec), "speedup": format_value(speedup, "x1"),
            "rows": [strip(_pass(w, t, nbytes, bw, peak)) for t in PD_TOKENS]}


# ==============================================================================================================
# 2. the FFN share formula
# ==============================================================================================================
def formula_share(matrices, r, kv_ratio) -> Fraction:
    """m·r / (m·r + 2 + 2·h_kv/h): the FFN share of a layer's weight matrices, d² units, h·d_h = d."""
    m, r, g = Fraction(matrices), Fraction(r), Fraction(kv_ratio)
    return m * r / (m * r + 2 + 2 * g)


def r_for_share(matrices, kv_ratio, share) -> Fraction:
    """The width ratio r = d_ff / d at which the formula gives `share`: r = s·(2 + 2g) / (m·(1 − s))."""
    m, g, s = Fraction(matrices), Fraction(kv_ratio), Fraction(share)
    return s * (2 + 2 * g) / (m * (1 - s))


def _layer_type(ledger) -> str:
    """The layer the formula describes: a full-attention layer (an MoE one if the model has both), else the first
    layer type with attention."""
    types = ledger.layer_types
    for lt in ("full_attention_moe", "full_attention", "sliding_attention"):
        if lt in types:
            return lt
    return next((lt for lt in types if "attention" in lt and "linear" not in lt), types[0])


def model_layer_shares(ledger) -> dict:
    """One layer of the model as the ledger engine counts it, beside the formula: exact Fractions and the reasons
    the two can differ (what the layer has beyond m matrices of d × d_ff and Q, K, V, O with h·d_h = d)."""
    a = ledger.arch
    lt = _layer_type(ledger)
    node = ledger.layer(lt)
    per = lambda pred: node.sum_where(pred) // node.n  # noqa: E731
    ffn_mat = per(lambda leaf, kinds: "ffn" in kinds and leaf.matmul)
    mix_mat = per(lambda leaf, kinds: leaf.matmul and any(k in kinds for k in views.MIXER_KINDS))
    ffn_all = per(lambda leaf, kinds: "ffn" in kinds)
    biases = per(lambda leaf, kinds: not leaf.matmul and leaf.name.endswith("bias") and "norm" not in kinds
                 and "norm" not in leaf.name)
    d, q = a.d_model, a.n_heads * a.head_dim
    kv_ratio = Fraction(a.n_kv_heads, a.n_heads)
    r = Fraction(a.d_ff, d)
    attn_expected = 2 * d * q + 2 * d * a.n_kv_heads * a.head_dim
    reasons = []
    if a.moe:
        reasons.append("MoE：一层里是一组专家，FFN 的宽度不是一个 r")
    if q != d:
        reasons.append(f"查询头拼起来 {n(q)} 维，不等于 d = {n(d)}")
    if not a.moe and mix_mat != attn_expected:
        reasons.append("注意力里还有别的矩阵（输出门）")
    if any("linear" in t or "mamba" in t for t in ledger.layer_types):
        reasons.append("另有不是全注意力的层，公式只描述这一种")
    formula = None if a.moe else formula_share(a.ffn_matrices, r, kv_ratio)
    matrices = Fraction(ffn_mat, ffn_mat + mix_mat)
    whole = Fraction(ffn_all, node.per_copy)
    extra = node.per_copy - ffn_mat - mix_mat
    return {"layer_type": lt, "matrices_n": a.ffn_matrices, "r": r, "kv_ratio": kv_ratio, "formula": formula,
            "matrices": matrices, "whole": whole, "biases": biases, "other": extra - biases, "reasons": reasons,
            "agrees": formula is not None and formula == matrices}


def _frac_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def share_rows(models: list) -> list[dict]:
    """[(alias, name, ledger)] -> the table: formula, engine (matrices only), engine (whole layer), why."""
    rows = []
    for alias, name, ledger in models:
        s = model_layer_shares(ledger)
        why = list(s["reasons"])
        if s["biases"]:
            why.append(f"整层还有偏置 {n(s['biases'])} 个")
        if s["other"]:
            why.append(f"整层还有归一化 {n(s['other'])} 个")
        rows.append({"alias": alias, "name": name, "m": str(s["matrices_n"]),
                     "r": "—" if s["formula"] is None else format_value(s["r"], "x2"),
                     "kv": _frac_text(s["kv_ratio"]), "formula": "—" if s["formula"] is None else pct(s["formula"], 2),
                     "matrices": pct(s["matrices"], 2), "whole": pct(s["whole"], 2),
                     "agrees": "✓ 完全一致" if s["agrees"] else "✗ 不同",
                     "why": "；".join(why) if why else "层里只有这些矩阵（和两个归一化）", "_s": s})
    return rows


SHARE_R = tuple(Fraction(k, 20) for k in range(10, 161))   # the curve: r from 0.5 to 8 in steps of 0.05
KV_CHOICES = ("1", "1/2", "1/4", "1/6", "1/7", "1/8")


def share_chart(matrices, kv_ratio, points: list) -> dict:
    """The chart (kind "xy", site/static/js/charts.js) and readouts for one curve: m matrices at h_kv/h = kv_ratio;
    points: [{name, m, r, kv, share}] (raw values from share_points) of the course's dense models."""
    m = parse_int(matrices, "FFN 矩阵数", 2, 3)
    g = parse_fraction(kv_ratio, "KV 头数 / 查询头数", high=Fraction(1))
    ys = [float(formula_share(m, r, g)) for r in SHARE_R]
    on: list[dict] = []
    off: list[dict] = []
    for p in points:
        same = int(p["m"]) == m and Fraction(p["kv"]) == g and p["fits"]
        (on if same else off).append(p)

    def series(name, ps, mode, color):
        return {"name": name, "mode": mode, "color": color, "x": [float(Fraction(p["r"])) for p in ps],
                "y": [float(Fraction(p["share"])) * 100 for p in ps],
                "text": [f"{p['name']}：r = {format_value(Fraction(p['r']), 'x2')}，引擎数出 "
                         f"{pct(Fraction(p['share']), 2)}" for p in ps]}
    curve = {"name": f"公式：{m} 个矩阵，h_kv/h = {_frac_text(g)}", "mode": "lines", "color": "#3b7dd8",
             "x": [float(r) for r in SHARE_R], "y": [y * 100 for y in ys],
             "text": [f"r = {format_value(r, 'x2')}：{pct(formula_share(m, r, g), 1)}" for r in SHARE_R]}
    spec = {"kind": "xy", "title": "FFN 占一层权重矩阵的比例 vs 宽度倍数 r = d_ff / d",
            "xtitle": "r = d_ff / d", "ytitle": "FFN 占一层权重矩阵（%）",
            "series": [curve, series("同样的 m 和 h_kv/h、Q 宽等于 d 的模型", on, "markers", "#d33"),
                       series("其他稠密模型", off, "markers", "#888")]}
    attn = 2 + 2 * g
    return {"m": m, "kv": _frac_text(g), "attn_d2": format_value(attn, "x2"),
            "r_two_thirds": format_value(r_for_share(m, g, Fraction(2, 3)), "x2"),
            "r_half": format_value(r_for_share(m, g, Fraction(1, 2)), "x2"),
            "on_curve": "、".join(p["name"] for p in on) or "（没有）", "chart": spec}


def share_points(rows: list[dict]) -> list[dict]:
    """The chart's points, as JSON (exact values as text): each dense model's r and its engine share."""
    return [{"name": r["name"], "m": r["_s"]["matrices_n"], "r": str(r["_s"]["r"]), "kv": str(r["_s"]["kv_ratio"]),
             "share": str(r["_s"]["matrices"]), "fits": r["_s"]["agrees"]}
            for r in rows if r["_s"]["formula"] is not None]


# ==============================================================================================================
# 3. depth vs width at a fixed budget
# ==============================================================================================================
HEAD_DIM, ALIGN, VOCAB = 128, 256, 32000
DW_LAYERS = (8, 16, 24, 32, 48, 64, 96, 128)


@functools.lru_cache(maxsize=1024)
def _family_ledger(L: int, d: int, vocab: int):
    """The family's L-layer, d-wide config, counted (a ledger is never modified, so one copy is shared: the slider
    and the table ask for the same few dozen configs again and again while a learner drags)."""
    _, d_ff = calc.aligned_width(d, Fraction(8, 3), ALIGN)
    return build_ledger(calc.llama_config(L, d, d_ff, vocab, HEAD_DIM))


@functools.lru_cache(maxsize=4096)
def _per_width(k: int, vocab: int) -> tuple[int, int]:
    """(rest, per_layer) at width d = k·d_h, counted by the engine on a one-layer config: the layer's count and
    everything else (the two vocabulary matrices, the final norm). Every layer of the family is the same, so an
    L-layer config totals rest + L·per_layer (tests compare that with the engine's own L-layer ledgers); kept per
    width, one count serves every L and every budget."""
    ledger = _family_ledger(1, k * HEAD_DIM, vocab)
    per_layer = ledger.layer("full_attention").per_copy
    return ledger.total - per_layer, per_layer


def _width_estimate(budget: int, L: int, k: int, vocab: int) -> int:
    """Where the total reaches `budget`, seen from width k·d_h: a layer grows as d², the rest as d, so solve
    L·per_layer·x² + rest·x = budget for x = k'/k (integer square root: exact ints under Pyodide too)."""
    rest, per_layer = _per_width(k, vocab)
    a, b = L * per_layer, rest
    return max(1, k * (math.isqrt(b * b + 4 * a * budget) - b) // (2 * a))


K_MAX = 4096          # widest d searched: K_MAX head widths


@functools.lru_cache(maxsize=1024)
def width_for(budget: int, L: int, vocab: int = VOCAB) -> int:
    """The d (a multiple of the head width) whose L-layer config's ledger total is closest to `budget`; ties go to
    the narrower. The total grows with d, so this is the smallest k with total(k·d_h) >= budget, or its neighbour
    below. The search starts from an estimate made twice (from 16 head widths, then from the first estimate: the
    d_ff rounding is all that is left), gallops outwards until the answer is bracketed, then bisects: usually three
    widths are counted, and each is kept for every other L and budget (_per_width)."""
    def total(k: int) -> int:
        rest, per_layer = _per_width(k, vocab)
        return rest + L * per_layer

    if total(K_MAX) < budget:
        raise ValueError(f"预算 {budget:,} 太大：{L} 层时 d 超过 {K_MAX * HEAD_DIM:,}")
    first = min(K_MAX, _width_estimate(budget, L, 16, vocab))
    guess = min(K_MAX, _width_estimate(budget, L, first, vocab))
    lo, hi, step = guess, guess, 1         # invariant once bracketed: total(lo) < budget <= total(hi), lo = 0 allowed
    if total(guess) >= budget:
        while lo > 0 and total(lo) >= budget:
            hi, lo, step = lo, max(0, lo - step), step * 2
    else:
        while total(hi) < budget:
            lo, hi, step = hi, min(K_MAX, hi + step), step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if total(mid) >= budget else (mid, hi)
    k = hi
    if k > 1 and budget - total(k - 1) <= total(k) - budget:
        k -= 1
    return k * HEAD_DIM


def depth_width_row(budget: int, L: int, T: int, vocab: int = VOCAB) -> dict:
    """One config of the fixed-budget family, counted by the engine; raw values under "raw"."""
    d = width_for(budget, L, vocab)
    _, d_ff = calc.aligned_width(d, Fraction(8, 3), ALIGN)
    ledger = _family_ledger(L, d, vocab)
    layer = ledger.layer("full_attention")
    ffn_layer = layer.sum_where(lambda leaf, kinds: "ffn" in kinds) // layer.n
    score = views.attention_score_flops(ledger, T)
    ffn_flops = views.ffn_flops_per_token(ledger)
    kv = views.kv_bytes_per_token(ledger)
    cross = views.crossover_T(ledger)
    raw = {"L": L, "d": d, "d_ff": d_ff, "total": ledger.total, "ffn_share_layer": Fraction(ffn_layer, layer.per_copy),
           "ffn_share_total": Fraction(ledger.ffn, ledger.total), "score": score, "ffn_flops": ffn_flops,
           "kv": kv, "crossover": cross, "emb_share": Fraction(2 * vocab * d, ledger.total)}
    return {"L": n(L), "d": n(d), "heads": n(d // HEAD_DIM), "d_ff": n(d_ff), "total": format_value(ledger.total, "B2"),
            "off": signed_pct(Fraction(ledger.total - budget, budget)), "share_layer": pct(raw["ffn_share_layer"]),
            "share_total": pct(raw["ffn_share_total"]), "emb_share": pct(raw["emb_share"]),
            "score": format_value(score, "e2"), "ffn_flops": format_value(ffn_flops, "e2"),
            "score_vs_ffn": format_value(Fraction(score, ffn_flops), "x2"),
            "kv": n(kv), "kv_T": gb(kv * T), "crossover": n(math.floor(cross)) if cross else "—", "raw": raw}


@functools.lru_cache(maxsize=1024)
def _shown_row(budget: int, L: int, T: int, vocab: int) -> dict:
    """depth_width_row without "raw": what the widget shows (kept, never modified: callers get copies; a learner
    dragging the slider back and forth asks for the same rows again)."""
    return {k: v for k, v in depth_width_row(budget, L, T, vocab).items() if k != "raw"}


def _dw_inputs(budget, T, vocab) -> tuple[int, int, int]:
    return (parse_int(budget, "参数预算", 10**6, 10**12), parse_int(T, "上下文长度 T", 1, 10**7),
            parse_int(vocab, "词表", 1, 10**6))


def depth_width_table(budget, T, vocab=VOCAB) -> dict:
    """The table over DW_LAYERS at one budget and context T. It does not depend on the slider, so the browser asks
    for it apart from the slider's row (experiments.api:ffn_depth_width_table) and the build answers it per budget."""
    budget, T, vocab = _dw_inputs(budget, T, vocab)
    return {"budget": format_value(budget, "B2"), "T": n(T),
            "rows": [dict(_shown_row(budget, x, T, vocab)) for x in DW_LAYERS]}


def depth_width_now(budget, L, T, vocab=VOCAB) -> dict:
    """The slider's config: L layers at the budget and context T (experiments.api:ffn_depth_width_now)."""
    budget, T, vocab = _dw_inputs(budget, T, vocab)
    L = parse_int(L, "层数 L", 1, 512)
    return {"T": n(T), "now": dict(_shown_row(budget, L, T, vocab))}


def depth_width(budget, L, T, vocab=VOCAB) -> dict:
    """The slider's config (L layers) and the table over DW_LAYERS, all at the same budget and context T."""
    now = depth_width_now(budget, L, T, vocab)
    return dict(depth_width_table(budget, T, vocab), now=now["now"])


# ==============================================================================================================
# build-time views (templates/ffn_*.html)
# ==============================================================================================================
def _scalar(data, o: dict, key: str):
    v = o[key]
    if isinstance(v, bool) or not isinstance(v, (int, str, float)):
        raise data.option_error(key, "a number or text", v)
    return v


def prefill_decode_view(o: dict, data) -> dict:
    from .widgets import DTYPE_CHOICES, gpus
    alias, mn = data.model(o["model"])
    presets = gpus(data)
    gpu = next((g for g in presets if g["key"] == o["gpu"]), None)
    if gpu is None:
        raise data.option_error("gpu", "one of " + ", ".join(g["key"] for g in presets), o["gpu"])
    dtype = str(_scalar(data, o, "dtype"))
    prompt, batch = _scalar(data, o, "prompt"), _scalar(data, o, "batch")
    return {"alias": alias, "model": mn, "gpu": gpu, "gpus": presets, "dtype": dtype, "dtypes": DTYPE_CHOICES,
            "prompt": prompt, "batch": batch, "choices": data.choices(),
            "p": prefill_decode(mn.doc["config"], dtype, gpu["bw"], gpu["peak"], prompt, batch)}


def dense_models(data) -> list:
    """(alias, name, ledger) of the course's models, dense first (by name), then the MoE ones."""
    ms = data.choices()
    return [(a, mn.name, mn.ledger) for a, mn in ms if not mn.arch.moe] + \
        [(a, mn.name, mn.ledger) for a, mn in ms if mn.arch.moe]


def share_view(o: dict, data) -> dict:
    rows = share_rows(dense_models(data))
    points = share_points(rows)
    m, kv = _scalar(data, o, "matrices"), str(_scalar(data, o, "kv"))
    if kv not in KV_CHOICES:
        raise data.option_error("kv", "one of " + ", ".join(KV_CHOICES), kv)
    return {"rows": [{k: v for k, v in r.items() if k != "_s"} for r in rows], "points": points,
            "c": share_chart(m, kv, points), "m": int(m), "kv": kv, "kvs": KV_CHOICES}


def share_chart_call(matrices, kv_ratio, points) -> dict:
    return share_chart(matrices, kv_ratio, points)


def depth_width_view(o: dict, data) -> dict:
    budgets = []
    for a in o["budgets"]:
        _, mn = data.model(a, key="budgets")
        budgets.append({"alias": a, "name": mn.name, "total": mn.ledger.total,
                        "label": f"{mn.name} 的总数 {format_value(mn.ledger.total, 'B2')}"})
    chosen = next((b for b in budgets if b["alias"] == o["budget"]), None)
    if chosen is None:
        raise data.option_error("budget", "one of the budgets", o["budget"])
    L, T = _scalar(data, o, "L"), _scalar(data, o, "T")
    return {"budgets": budgets, "budget": chosen, "L": L, "T": T, "layers": DW_LAYERS, "head_dim": HEAD_DIM,
            "align": ALIGN, "vocab": VOCAB,
            "x": depth_width(chosen["total"], L, T)}


def depth_width_states(o: dict, data) -> list:
    """The budget picker is enumerable: for each budget, the table at the built T and the slider's row at the built L
    and T (the args as the browser sends them: the option's value, the slider's number, the field's text). Other
    slider values and T are free: Python."""
    v = depth_width_view(o, data)
    L, T = int(v["L"]), str(v["T"])
    return [call for b in v["budgets"] for call in (("ffn_depth_width_table", [str(b["total"]), T]),
                                                    ("ffn_depth_width_now", [str(b["total"]), L, T]))]
