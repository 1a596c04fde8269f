"""C11's associative-recall experiment: store N key→value pairs, then ask for each value back by its key.

Three memories hold the same N pairs (random unit vectors in d_k dimensions, values of the same size d_v = d_k):

- softmax attention keeps every pair (its KV cache grows with N) and reads o = Σᵢ softmax(√d_k · q·kᵢ) vᵢ
  (Vaswani et al. 2017: the 1/√d scale for keys with unit-variance entries is √d_k for unit keys);
- linear attention keeps one d_v × d_k matrix, S = Σᵢ vᵢ kᵢᵀ, and reads o = S q (Katharopoulos et al. 2020);
- the delta rule keeps the same matrix but writes S ← α (S − β (S k) kᵀ) + β v kᵀ (Schlag et al. 2021, with
  β = 1 for unit keys; a gate α < 1 is Gated DeltaNet's decay, Yang et al. 2024).

A pair is recalled when the stored value nearest to the read-out (largest dot product) is its own. A d_v × d_k
matrix holds at most d_k independent keys exactly, so the two fixed states lose pairs once N passes d_k, while
softmax attention, whose memory grows with N, keeps them. The delta rule keeps the pairs written last; counted
over all N pairs it need not recall more than plain addition (``delta_behind`` counts the N ≥ d_k at which it
recalls fewer: at the widget's first setting, every one of them).

The pairs of every N are the first N of one stream (numpy's PCG64 from the seed: the same doubles on every
platform). The figures are counts of argmax decisions on einsum products; a summation order that differs in the
last bit between CPython's numpy and Pyodide's could flip one only if two stored values tied to about 1e-15, and
tests/test_lesson_c11_browser.py checks that the page's counts equal CPython's.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ...format import pct
from ...toolkit.inputs import parse_fraction, parse_int
from ...widget import uses
from . import RECALL_DEFAULTS

N_POINTS = (8, 16, 32, 64, 128, 256)   # stored pairs, the first N of one stream
D_K_CHOICES = (16, 32, 64, 128)
GATE_CHOICES = ("1", "0.99", "0.95", "0.9")
MEMORIES = ("softmax", "linear", "delta")
MEMORY_ZH = {"softmax": "softmax 注意力（存下全部 N 对）", "linear": "线性注意力（只做加法的状态）",
             "delta": "delta 规则（Gated DeltaNet 式的状态）"}
MEMORY_SHORT = {"softmax": "softmax 注意力", "linear": "加法状态", "delta": "delta 规则"}   # the table's headers


def _dots(a, b):
    """(m, n) matrix of a[i]·b[j] for a (m, d), b (n, d) (einsum: without BLAS it beats @ under Pyodide)."""
    import numpy as np
    return np.einsum("id,jd->ij", a, b)


def _unit_rows(rng, rows: int, d: int):
    """rows random directions in d dimensions: approximately normal entries (four uniforms, Irwin–Hall), each row
    divided by its length."""
    import numpy as np
    x = rng.random((rows, d), dtype=np.float64)
    for _ in range(3):
        x = x + rng.random((rows, d), dtype=np.float64)
    x = x - 2.0
    return x / np.sqrt(np.einsum("id,id->i", x, x))[:, None]


def _softmax_read(keys, values, d_k: int):
    import numpy as np
    logits = _dots(keys, keys) * math.sqrt(d_k)
    w = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    w /= np.sum(w, axis=1, keepdims=True)
    return _dots(w, values.T.copy())


def _delta_states(keys, values, gate: float, points):
    """{N: the delta-rule state after writing the first N pairs} (one pass over the stream, β = 1)."""
    import numpy as np
    S = np.zeros((values.shape[1], keys.shape[1]), dtype=np.float64)
    out = {}
    for t in range(keys.shape[0]):
        k, v = keys[t], values[t]
        S = (S - np.multiply.outer(np.einsum("ij,j->i", S, k), k)) * gate + np.multiply.outer(v, k)
        if t + 1 in points:
            out[t + 1] = S
    return out


def recall_counts(d_k: int, seed: int, gate: Fraction, points=N_POINTS) -> dict[str, Any]:
    """{memory: {N: pairs recalled out of N}} for one stream of max(points) pairs (each N its first N), and for the
    two fixed states at the largest N, "<memory>_recent" / "<memory>_older": recalled among the d_k pairs written
    last and among the ones before them."""
    import numpy as np
    rng = np.random.default_rng(seed)
    n_max = max(points)
    keys = _unit_rows(rng, n_max, d_k)
    values = _unit_rows(rng, n_max, d_k)
    delta = _delta_states(keys, values, float(gate), set(points))
    out: dict[str, Any] = {m: {} for m in MEMORIES}
    for n in points:
        K, V = keys[:n], values[:n]
        reads = {"softmax": _softmax_read(K, V, d_k),
                 "linear": _dots(K, _dots(V.T.copy(), K.T.copy())),     # S = Σ v kᵀ (d_v × d_k), read S k
                 "delta": _dots(K, delta[n])}
        for m, o in reads.items():
            hit = _hits(o, V)
            out[m][n] = int(np.count_nonzero(hit))
            if n == n_max and m != "softmax":
                out[m + "_recent"] = int(np.count_nonzero(hit[n - d_k:]))
                out[m + "_older"] = int(np.count_nonzero(hit[:n - d_k]))
    return out


def delta_behind(counts, d_k: int, points=N_POINTS) -> tuple[int, int]:
    """(how many of the N ≥ d_k the delta rule recalls fewer pairs than plain addition at, how many N ≥ d_k)."""
    big = [n for n in points if n >= d_k]
    return sum(counts["delta"][n] < counts["linear"][n] for n in big), len(big)


def _hits(out, values):
    """Which read-outs have their own value as the nearest (largest dot product) of the stored values."""
    import numpy as np
    return np.argmax(_dots(out, values), axis=1) == np.arange(values.shape[0])


def parse_settings(d_k, seed, gate) -> tuple[int, int, Fraction]:
    d = parse_int(d_k, "键的维数 d_k", 1, 4096)
    if d not in D_K_CHOICES:
        raise ValueError("键的维数 d_k 需要是 " + "、".join(map(str, D_K_CHOICES)) + f" 之一，得到 {d}")
    s = parse_int(seed, "随机种子", 0, 2**32 - 1)
    g = parse_fraction(gate, "遗忘门 α", high=Fraction(1), example="0.99")
    return d, s, g


def _share(count: int, of: int) -> str:
    return pct(Fraction(count, of), 0)


@uses("numpy")
def recall_experiment(d_k=RECALL_DEFAULTS["d_k"], seed=RECALL_DEFAULTS["seed"], gate=RECALL_DEFAULTS["gate"]) -> dict:
    """The widget's answer: each memory's recall at every N as text, the chart, a summary and the exact counts."""
    d, s, g = parse_settings(d_k, seed, gate)
    c = recall_counts(d, s, g)
    n_max = N_POINTS[-1]
    rows = [{"n": f"{n:,}", "over": f"{float(Fraction(n, d)):g}", **{m: _share(c[m][n], n) for m in MEMORIES}}
            for n in N_POINTS]
    summary = (f"存入 {n_max} 对时，softmax 注意力找回 {_share(c['softmax'][n_max], n_max)}，"
               f"delta 规则 {_share(c['delta'][n_max], n_max)}，只做加法的线性注意力 "
               f"{_share(c['linear'][n_max], n_max)}。delta 规则在最后写入的 {d} 对里找回 "
               f"{_share(c['delta_recent'], d)}，更早的 {n_max - d} 对里只找回 {_share(c['delta_older'], n_max - d)}："
               f"它记住的是最近写进去的。{_behind_text(c, d)}")
    return {"d_k": str(d), "seed": str(s), "gate": _gate_text(g), "rows": rows, "summary": summary,
            "counts": {m: [c[m][n] for n in N_POINTS] for m in MEMORIES},
            "chart": recall_chart(c, d)}


def _behind_text(counts, d: int) -> str:
    behind, big = delta_behind(counts, d)
    if not big:
        return ""
    if behind == big:
        return f"但按总数算，N ≥ {d} 的每一档都是只做加法的状态找回得更多。"
    return f"按总数算，N ≥ {d} 的 {big} 档里有 {behind} 档只做加法的状态找回得更多。"


def _gate_text(g: Fraction) -> str:
    return str(g.numerator) if g.denominator == 1 else f"{float(g):g}"


def recall_chart(counts, d: int) -> dict:
    """The 'lines' chart spec (site/static/js/charts.js): recall (%) against the number of stored pairs."""
    return {"kind": "lines", "title": f"找回率 vs 存入的键值对数（d_k = {d}）", "x": list(N_POINTS), "xlog": True,
            "xtitle": "存入的键值对数 N（对数轴）", "ytitle": "找回率（%）",
            "series": [{"name": MEMORY_ZH[m], "y": [round(100 * counts[m][n] / n, 2) for n in N_POINTS]}
                       for m in MEMORIES]}
