"""FFN 精读 (lesson c4-ffn-deep-read): the lesson's computations, as pure functions returning JSON-ready data.

The lesson's calculators, each used twice: by the build (widgets.py's views render their first state into HTML)
and by the browser (experiments.api.ffn_* under Pyodide, when the learner moves a control). Their inputs' defaults
are the widgets' defaults, declared once in this lesson's __init__.py:

- ``swiglu_budget``     SwiGLU's third matrix and the 8/3·d rule: width, alignment, parameters vs 8d²
- ``config_family``     layers × d_model -> aligned d_ff, FFN share, total (counted by the ledger engine)
- ``decode``            weight memory, bytes read per decode step, ms/token and tokens/s bounds at a bandwidth
- ``training_memory``   bytes per parameter by optimizer recipe, FFN activations with and without checkpointing
- ``flops_budget``      2N per token, 6·N·D, GPU-days at a sustained throughput, tokens per parameter
- ``moe_explore``       experts / top-k / expert width -> total vs active parameters (ledger engine)
- ``int4_probe``        real numpy: group-wise symmetric INT4 on a matrix with outlier rows -> RMS error

Rules that make the build-time page and the in-browser page agree digit for digit:
- counts are Python ints and ratios exact Fractions until the moment they are formatted, here, in Python;
- the INT4 probe draws only uniform doubles from ``np.random.default_rng(seed)`` (integer bit-twiddling, no libm),
  uses only elementwise IEEE operations (+ − × ÷, abs, max, round-half-even, clip) on explicit float64 arrays, and
  sums with a fixed pairwise tree of elementwise adds (``tree_sum``). No matmul, no np.sum, no exp/log: the same
  seed gives bit-identical floats in CPython and in Pyodide's wasm32 numpy.
"""
from __future__ import annotations

import copy
import functools
import math
from fractions import Fraction

from ...format import GB, format_value, gb, ms, n, pct, per_second, ratio_text, sci, signed_pct, trim_decimal
from ...ledger import build_ledger, unwrap, views
from ...toolkit.config_text import ledger_of_input as _ledger
from ...toolkit.decode import TERA, StepWeights, dtype_bytes, step_weights
from ...toolkit.inputs import parse_fraction, parse_int
from ...toolkit.moe import get_key, moe_keys, set_key
from ...widget import uses
from . import INT4_DEFAULTS

SECONDS_PER_DAY = 86400


# ==============================================================================================================
# 1. SwiGLU's third matrix and the 8/3·d rule
# ==============================================================================================================
ALIGN_DS = (512, 768, 1024, 2048, 4096, 5120, 8192)


def aligned_width(d: int, ratio: Fraction, align: int) -> tuple[Fraction, int]:
    """(nominal width ratio·d, that width rounded UP to a multiple of `align`)."""
    nominal = Fraction(ratio) * d
    return nominal, math.ceil(nominal / align) * align


def _budget_row(label: str, d: int, ratio: Fraction, matrices: int, align: int) -> dict:
    nominal, d_ff = aligned_width(d, ratio, align)
    ffn = matrices * d * d_ff
    base = 8 * d * d
    attn = 4 * d * d
    return {"label": label, "matrices": matrices, "ratio": ratio_text(ratio), "align": align,
            "nominal": format_value(nominal, "n2") if nominal.denominator != 1 else n(int(nominal)),
            "d_ff": n(d_ff), "d_ff_raw": d_ff, "ffn": n(ffn), "ffn_raw": ffn,
            "vs_8d2": format_value(Fraction(ffn, base), "x3"), "over_8d2": signed_pct(Fraction(ffn, base) - 1),
            "layer_share": pct(Fraction(ffn, ffn + attn))}


def alignment_table(ratio: Fraction, align: int, ds=ALIGN_DS, known: list | None = None) -> list[dict]:
    """Per d_model: the nominal 8/3·d (or ratio·d), the aligned width and how far 3·d·d_ff lands from 8d²."""
    rows = []
    for d in ds:
        nominal, d_ff = aligned_width(d, ratio, align)
        extra = Fraction(3 * d * d_ff, 8 * d * d) - 1
        names = [name for name, kd, kff in (known or []) if kd == d and kff == d_ff]
        rows.append({"d": n(d), "nominal": format_value(nominal, "n2") if nominal.denominator != 1 else n(int(nominal)),
                     "d_ff": n(d_ff), "added": format_value(d_ff - nominal, "n2") if (d_ff - nominal).denominator != 1
                     else n(int(d_ff - nominal)), "error": signed_pct(extra), "models": "、".join(names)})
    return rows


def swiglu_budget(d, ratio, matrices, align, known: list | None = None) -> dict:
    """The explorer: your (d, ratio, matrices, alignment) next to the three reference designs at the same d."""
    d = parse_int(d, "d_model", 64, 65536)
    r = parse_fraction(ratio, "倍数 d_ff / d", high=Fraction(64), example="8/3、3.5")
    matrices = parse_int(matrices, "矩阵数", 2, 3)
    align = parse_int(align, "对齐粒度", 1, 4096)
    mine = _budget_row("你的设定", d, r, matrices, align)
    refs = [_budget_row("经典两矩阵，4d", d, Fraction(4), 2, 1),
            _budget_row("三矩阵，宽度仍取 4d", d, Fraction(4), 3, 1),
            _budget_row(f"三矩阵，8/3·d 向上对齐到 {align}", d, Fraction(8, 3), 3, align)]
    return {"d": n(d), "d_raw": d, "ratio": ratio_text(r), "matrices": matrices, "align": align,
            "eight_d2": n(8 * d * d), "attn": n(4 * d * d), "mine": mine, "refs": refs,
            "alignment": alignment_table(r if matrices == 3 else Fraction(8, 3), align, known=known)}


# -- a family of configs, counted by the ledger engine ---------------------------------------------------------
FAMILY = ((12, 768), (24, 1536), (32, 4096), (40, 5120), (80, 8192))


def llama_config(n_layers: int, d: int, d_ff: int, vocab: int = 32000, head_dim: int = 128) -> dict:
    """A Llama-style config.json (SwiGLU, RMSNorm, MHA with 128-wide heads, untied lm_head)."""
    if d % head_dim:
        raise ValueError(f"d_model {d:,} 不是头宽 {head_dim} 的整数倍")
    return {"model_type": "llama", "hidden_size": d, "intermediate_size": d_ff, "num_hidden_layers": n_layers,
            "num_attention_heads": d // head_dim, "num_key_value_heads": d // head_dim, "vocab_size": vocab,
            "max_position_embeddings": 4096, "tie_word_embeddings": False}


def config_family(rows, ratio, align, vocab=32000) -> dict:
    r = parse_fraction(ratio, "倍数 d_ff / d", high=Fraction(64), example="8/3、3.5")
    align = parse_int(align, "对齐粒度", 1, 4096)
    vocab = parse_int(vocab, "词表", 1, 10**6)
    out = []
    for L, d in rows:
        L, d = parse_int(L, "层数", 1, 512), parse_int(d, "d_model", 128, 65536)
        _, d_ff = aligned_width(d, r, align)
        ledger = build_ledger(llama_config(L, d, d_ff, vocab))
        layer = ledger.layer("full_attention")
        ffn = layer.sum_where(lambda leaf, kinds: "ffn" in kinds) // layer.n
        out.append({"L": L, "d": n(d), "d_ff": n(d_ff), "width": format_value(Fraction(d_ff, d), "x2"),
                    "share_layer": pct(Fraction(ffn, layer.per_copy)),
                    "share_total": pct(Fraction(ledger.ffn, ledger.total)),
                    "total": format_value(ledger.total, "B2"), "total_raw": ledger.total})
    return {"ratio": ratio_text(r), "align": align, "vocab": n(vocab), "rows": out}


# ==============================================================================================================
# 2. memory and decode
# ==============================================================================================================
def read_params(ledger, batch: int) -> Fraction:
    """Weights one decode step must read: every weight that multiplies an activation for the step's tokens (the
    embedding table is only looked up, one row per token; routed experts: only those some token chose)."""
    return step_weights(ledger).read(batch)


def _step_times(w: StepWeights, batch: int, nbytes: Fraction, bw: Fraction, peak: Fraction):
    t_mem = w.read(batch) * nbytes / (bw * TERA)
    t_cmp = 2 * w.active * batch / (peak * TERA)
    return t_mem, t_cmp


@functools.lru_cache(maxsize=64)   # the memory widget asks for one step and then a batch table of the same model
def compute_takeover_batch(w: StepWeights, nbytes: Fraction, bw: Fraction, peak: Fraction, limit: int = 1 << 20):
    """Smallest batch at which the step's matmul FLOPs at peak take as long as reading its weights (None above
    `limit`)."""
    def compute_wins(b):
        t_mem, t_cmp = _step_times(w, b, nbytes, bw, peak)
        return t_cmp >= t_mem
    if not w.E:   # dense: both sides are linear in batch or constant -> exact
        m = w.active
        b = math.ceil(Fraction(m) * nbytes / (bw * TERA) / (2 * Fraction(m) / (peak * TERA)))
        return max(1, b)
    lo, hi = 1, 1
    while not compute_wins(hi):
        if hi >= limit:
            return None
        lo, hi = hi, min(hi * 2, limit)
    while lo < hi:
        mid = (lo + hi) // 2
        if compute_wins(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _decode_inputs(config, dtype, bandwidth_tbps, peak_tflops):
    ledger = _ledger(config)
    bw = parse_fraction(bandwidth_tbps, "显存带宽（TB/s）", high=Fraction(1000), example="3.35")
    peak = parse_fraction(peak_tflops, "峰值算力（TFLOPS）", high=Fraction(100000), example="989.4")
    return ledger, step_weights(ledger), dtype_bytes(dtype), bw, peak


def decode(config, dtype, bandwidth_tbps, batch, peak_tflops) -> dict:
    """Weight memory and the decode-step bounds of one model at one precision, bandwidth and batch size."""
    ledger, w, nbytes, bw, peak = _decode_inputs(config, dtype, bandwidth_tbps, peak_tflops)
    batch = parse_int(batch, "批大小", 1, 65536)
    N, ffn = ledger.total, ledger.ffn
    step = _decode_step(w, batch, nbytes, bw, peak)
    read, ffn_read = w.read(batch), w.ffn_read(batch)
    takeover = compute_takeover_batch(w, nbytes, bw, peak)
    return {"model_type": ledger.arch.family, "dtype": dtype, "bandwidth": format_value(bw, "x2"),
            "peak": format_value(peak, "x1"), "batch": n(batch), "moe": bool(ledger.arch.moe),
            "params": n(N), "params_b": format_value(N, "B2"), "weights": gb(N * nbytes),
            "ffn_weights": gb(ffn * nbytes), "ffn_share": pct(Fraction(ffn, N)),
            "read": gb(read * nbytes), "read_ffn_share": pct(ffn_read / read),
            "t_mem": step["t_mem"], "t_compute": step["t_compute"], "t_step": step["t_step"], "bound": step["bound"],
            "tok_s_stream": step["tok_s_stream"], "tok_s_total": step["tok_s_total"],
            "takeover": "—" if takeover is None else n(takeover)}


def _decode_step(w: StepWeights, batch: int, nbytes: Fraction, bw: Fraction, peak: Fraction) -> dict:
    """One decode step of `batch` tokens: its time bounds and throughput, as display strings."""
    t_mem, t_cmp = _step_times(w, batch, nbytes, bw, peak)
    step = max(t_mem, t_cmp)
    return {"batch": n(batch), "t_mem": ms(t_mem), "t_compute": ms(t_cmp), "t_step": ms(step),
            "bound": "带宽" if t_mem >= t_cmp else "算力",
            "tok_s_stream": per_second(1 / step), "tok_s_total": per_second(batch / step)}


def weights_table(models: list, dtypes=("FP16", "INT8", "INT4")) -> dict:
    """[(label, config)] -> weight GB per dtype and where the INT4 saving comes from (FFN vs the rest)."""
    rows = []
    for label, config in models:
        ledger = _ledger(config)
        N, ffn = ledger.total, ledger.ffn
        save = N * (dtype_bytes("FP16") - dtype_bytes("INT4"))
        save_ffn = ffn * (dtype_bytes("FP16") - dtype_bytes("INT4"))
        rows.append({"label": label, "params": format_value(N, "B2"),
                     "cells": [gb(N * dtype_bytes(t)) for t in dtypes],
                     "saving": gb(save), "saving_ffn": gb(save_ffn), "saving_rest": gb(save - save_ffn),
                     "ffn_share": pct(Fraction(ffn, N))})
    return {"dtypes": list(dtypes), "bytes": [format_value(dtype_bytes(t), "x1") for t in dtypes], "rows": rows}


def decode_table(models: list, bandwidth_tbps, peak_tflops, dtypes=("FP16", "INT8", "INT4")) -> dict:
    """[(label, config)] -> batch-1 ms/token and tokens/s per dtype."""
    rows = []
    for label, config in models:
        cells = []
        for t in dtypes:
            r = decode(config, t, bandwidth_tbps, 1, peak_tflops)
            cells.append({"ms": r["t_step"], "tok_s": r["tok_s_stream"]})
        rows.append({"label": label, "cells": cells})
    return {"dtypes": list(dtypes), "rows": rows}


def batch_series(config, dtype, bandwidth_tbps, peak_tflops,
                 batches=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)) -> dict:
    """Per batch size: step time, per-stream and total tokens/s, which bound (the amortisation table)."""
    ledger, w, nbytes, bw, peak = _decode_inputs(config, dtype, bandwidth_tbps, peak_tflops)
    rows = []
    for b in batches:
        r = _decode_step(w, b, nbytes, bw, peak)
        rows.append({k: r[k] for k in ("batch", "t_step", "tok_s_stream", "tok_s_total", "bound")})
    takeover = compute_takeover_batch(w, nbytes, bw, peak)
    return {"rows": rows, "takeover": "—" if takeover is None else n(takeover)}


# ==============================================================================================================
# 3. training memory
# ==============================================================================================================
RECIPE_ZH = {"mixed_adamw": "混合精度 AdamW", "fp32_adamw": "全 FP32 AdamW",
             "mixed_adamw_8bit": "混合精度 + 8-bit Adam 状态", "mixed_sgd_momentum": "混合精度 SGD + 动量",
             "bf16_adamw_pure": "纯 BF16 AdamW（不留 FP32 主权重）"}
ACT_BYTES = 2   # activations kept in BF16


def ffn_activation_elems(ledger) -> tuple[int, int]:
    """(elements per token summed over all layers that the FFN keeps for backward, elements of the largest single
    layer). Per layer: its input (d) plus m tensors as wide as the active FFN width — gate, up and their product
    for a gated FFN (m = 3), pre- and post-activation for a GELU MLP (m = 2). Routed experts count top-k widths."""
    a = ledger.arch
    m = 3 if a.ffn_matrices == 3 else 2
    moe = a.moe
    n_moe = moe.n_moe_layers if moe else 0
    moe_width = moe.top_k * moe.expert_d_ff + moe.n_shared * moe.shared_d_ff if moe else 0
    dense_layers = a.n_layers - n_moe
    per_dense = a.d_model + m * a.d_ff
    per_moe = a.d_model + m * moe_width
    return dense_layers * per_dense + n_moe * per_moe, max(per_dense if dense_layers else 0, per_moe if n_moe else 0)


def training_memory(config, recipe, batch, seq, checkpointing) -> dict:
    ledger = _ledger(config)
    if recipe not in views.TRAINING_RECIPES:
        raise ValueError(f"优化器方案 {recipe!r} 未知（可选：{'、'.join(views.TRAINING_RECIPES)}）")
    batch = parse_int(batch, "批大小", 1, 4096)
    seq = parse_int(seq, "序列长度", 1, 10**6)
    checkpointing = bool(checkpointing)
    N, ffn = ledger.total, ledger.ffn
    parts = views.TRAINING_RECIPES[recipe]
    per_param = views.training_bytes_per_param(recipe)
    tokens = batch * seq
    all_elems, one_layer = ffn_activation_elems(ledger)
    d, L = ledger.arch.d_model, ledger.arch.n_layers
    if checkpointing:
        act = tokens * (L * d + one_layer) * ACT_BYTES
    else:
        act = tokens * all_elems * ACT_BYTES
    states = N * per_param
    rows = [{"label": label, "bytes": str(b), "total": gb(N * b)} for label, b in parts.items()]
    recipes = [{"key": k, "label": RECIPE_ZH[k], "bytes": str(views.training_bytes_per_param(k)),
                "total": gb(N * views.training_bytes_per_param(k)), "selected": k == recipe}
               for k in views.TRAINING_RECIPES]
    return {"recipe": recipe, "recipe_zh": RECIPE_ZH[recipe], "params": format_value(N, "B2"),
            "per_param": str(per_param), "rows": rows, "states": gb(states),
            "ffn_states": gb(ffn * per_param), "ffn_share": pct(Fraction(ffn, N)),
            "batch": n(batch), "seq": n(seq), "tokens": n(tokens), "checkpointing": checkpointing,
            "activations": gb(act), "act_full": gb(tokens * all_elems * ACT_BYTES),
            "act_ckpt": gb(tokens * (L * d + one_layer) * ACT_BYTES),
            "act_layer": gb(tokens * one_layer * ACT_BYTES),
            "total": gb(states + act), "recipes": recipes}


# ==============================================================================================================
# 4. compute: 2N per token, 6·N·D, GPU-days
# ==============================================================================================================
def flops_budget(config, tokens_b, sustained_tflops, gpus, tokens_per_param) -> dict:
    """Training compute of one model on D tokens: 6·N·D with N the parameters each token passes through."""
    ledger = _ledger(config)
    tokens = parse_fraction(tokens_b, "训练 token 数（十亿）", high=Fraction(10**6), example="2000") * GB
    if tokens.denominator != 1:
        raise ValueError("训练 token 数需要是整数个 token")
    D = int(tokens)
    s = parse_fraction(sustained_tflops, "每卡持续吞吐（TFLOPS）", high=Fraction(100000), example="400")
    gpus = parse_int(gpus, "GPU 数", 1, 10**6)
    chin = parse_fraction(tokens_per_param, "每参数 token 数参考值", high=Fraction(10**4), example="20")
    N_total, N = ledger.total, ledger.active_per_token
    matmul = views.matmul_weights(ledger)
    fwd = 2 * N
    train = 6 * N * D
    gpu_days = Fraction(train) / (s * TERA) / SECONDS_PER_DAY
    return {"params": format_value(N_total, "B2"), "active": format_value(N, "B2"), "moe": N != N_total,
            "fwd": sci(fwd), "fwd_g": format_value(Fraction(fwd, GB), "x1"),
            "fwd_matmul": sci(2 * matmul), "ffn_flops_share": pct(Fraction(views.ffn_flops_per_token(ledger),
                                                                           2 * matmul)),
            "tokens": sci(D), "train": sci(train), "gpu_days": format_value(gpu_days, "x0"),
            "wall_days": format_value(gpu_days / gpus, "x1"), "gpus": n(gpus), "sustained": format_value(s, "x0"),
            "tokens_per_param": format_value(Fraction(D, N_total), "x1"),
            "chinchilla_tokens": sci(chin * N_total), "chinchilla_ratio": format_value(chin, "x0")}


# ==============================================================================================================
# 5. MoE: total vs active
# ==============================================================================================================
def explorable(ledger) -> bool:
    """Whether moe_explore can vary this model's experts, top-k and expert width (the engine's MoE facts name
    their config keys, and the width's key sizes nothing but the experts)."""
    moe = ledger.arch.moe
    return bool(moe and moe.experts_key and moe.top_k_key and moe.expert_d_ff_key and moe.expert_d_ff_own)


def explorable_keys(config: dict) -> tuple[str, str, str]:
    """The config keys (experiments.toolkit.moe.moe_keys) of (expert count, experts per token, expert width) of a
    model moe_explore can vary: all three, the width's sizing nothing but the experts."""
    _ledger(config)                       # (a config the engine refuses: its problems, in Chinese)
    k_n, k_k, k_w = moe_keys(config)
    if k_w is None:
        raise ValueError("这个模型的专家宽度与稠密层共用一个键，不能在这里单独改")
    return k_n, k_k, k_w


def moe_summary(ledger) -> dict:
    moe = ledger.arch.moe
    E, k, width, shared = (moe.n_experts, moe.top_k, moe.expert_d_ff, moe.n_shared) if moe else (0, 0, 0, 0)
    total = ledger.text_backbone
    active = ledger.active_per_token
    ffn_active = ledger.sum_kind("ffn", active=True)
    shape = f'{n(E)} / {n(k)} / {n(width)}'
    return {"experts": n(E), "top_k": n(k), "shape": shape, "width": n(width), "shared": n(shared),
            "total": format_value(total, "B1"), "total_raw": total, "active": format_value(active, "B2"),
            "active_raw": active, "ratio": format_value(Fraction(total, active), "x1"),
            "ffn_share_total": pct(Fraction(ledger.ffn, total)),
            "ffn_share_active": pct(Fraction(ffn_active, active)),
            "weights_bf16": gb(total * 2), "active_bf16": gb(active * 2), "mtp": n(ledger.mtp)}


def moe_explore(config, n_experts=None, top_k=None, width=None) -> dict:
    """Change a real MoE config's expert count, top-k and expert width; count the result with the ledger."""
    config = unwrap(config)
    k_n, k_k, k_w = explorable_keys(config)
    cfg = copy.deepcopy(config)
    if n_experts is not None:
        set_key(cfg, k_n, parse_int(n_experts, "专家数", 1, 4096))
    if top_k is not None:
        set_key(cfg, k_k, parse_int(top_k, "每个 token 选几个专家", 1, 4096))
        if "experts_per_token" in cfg:          # gpt-oss repeats top-k under a key the engine does not read
            cfg["experts_per_token"] = get_key(cfg, k_k)
    if width is not None:
        set_key(cfg, k_w, parse_int(width, "专家宽度", 1, 10**6))
    E, k = get_key(cfg, k_n), get_key(cfg, k_k)
    if k > E:
        raise ValueError(f"每个 token 选的专家数（{k}）不能多于专家总数（{E}）")
    base = moe_summary(_ledger(config))
    out = moe_summary(build_ledger(cfg))
    return {"model_type": cfg["model_type"], "keys": [k_n, k_k, k_w], "base": base, "now": out}


def moe_table(models: list) -> list[dict]:
    """[(label, config)] of real MoE configs -> one summary row each."""
    return [{"label": label, **moe_summary(_ledger(config))} for label, config in models]


# ==============================================================================================================
# 6. the INT4 probe (real numpy, bit-identical in CPython and Pyodide)
# ==============================================================================================================
INT4_LEVELS = 7            # symmetric: q in [-7, 7], scale = absmax / 7
SIGMA = 0.02               # the weights' standard deviation (GPT-style init scale)
PROBE_GROUPS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
# the page recomputes the probe on every change: up to 1,024 × 64 weights keeps that within a frame or two
MAX_PROBE_WEIGHTS = 1024 * 64
# the probe's first state: the lesson's figures, the page's controls and the browser API all start from it
PROBE_DEFAULTS = INT4_DEFAULTS   # the ffn-int4 widget's first state (this lesson's __init__.py)


def _approx_normal(rng, shape, sigma: float):
    """Approximately normal float64 values from uniforms only: (U1 + U2 + U3 + U4 − 2)·√3·σ has mean 0 and
    standard deviation σ (Irwin–Hall). Only adds and multiplies, so every platform gets the same bits."""
    import numpy as np
    w = rng.random(shape, dtype=np.float64)
    for _ in range(3):
        w += rng.random(shape, dtype=np.float64)
    w -= 2.0
    w *= math.sqrt(3.0) * sigma
    return w


def probe_matrix(rows: int, cols: int, outlier_pct: Fraction, outlier_scale: Fraction, seed: int):
    """(W, outlier row mask, W before the outliers were scaled). Outlier rows are input channels picked by
    sorting one uniform per row (a stable argsort of distinct doubles: platform-independent)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    w = _approx_normal(rng, (rows, cols), SIGMA)
    keys = rng.random(rows, dtype=np.float64)
    n_out = int(math.floor(Fraction(rows) * outlier_pct / 100 + Fraction(1, 2)))
    mask = np.zeros(rows, dtype=bool)
    mask[np.argsort(keys, kind="stable")[:n_out]] = True
    plain = w.copy()
    w[mask, :] *= float(outlier_scale)
    return w, mask, plain


def quantize_int4(w, group: int, group_max=None):
    """Symmetric INT4, one scale per group of `group` consecutive input channels (rows) in each column: the
    group's largest |w| / 7, and every weight rounded to a multiple of it. (|w| ≤ that largest, so the rounded
    multiple already lies in −7..7: no clip needed.) group_max: the groups' largest |w|, if already known."""
    import numpy as np
    rows, cols = w.shape
    blocks = w.reshape(rows // group, group, cols)
    if group_max is None:
        group_max = np.max(np.abs(blocks), axis=1)
    scale = group_max[:, None, :] / float(INT4_LEVELS)
    safe = np.where(scale > 0.0, scale, 1.0)
    q = np.round(blocks / safe)
    q *= safe
    return q.reshape(rows, cols)


def group_maxima(w, groups):
    """{g: the largest |w| of each group of g rows in each column}, for group sizes that each divide the next
    (powers of two): each from the one before, max of maxima (a max has no rounding: any order gives the same)."""
    import numpy as np
    rows, cols = w.shape
    out, prev, prev_g = {}, None, 1
    for g in sorted(groups):
        if prev is None:
            prev = np.max(np.abs(w).reshape(rows // g, g, cols), axis=1)
        else:
            prev = np.max(prev.reshape(rows // g, g // prev_g, cols), axis=1)
        out[g], prev_g = prev, g
    return out


def tree_sum(a) -> float:
    """Sum of a float64 array by a fixed tree built from elementwise adds only: pad with zeros to a power of two,
    then add the second half to the first half until one value is left. Each step is an elementwise IEEE
    addition on contiguous halves, so the result does not depend on the platform's reduction kernels (np.sum may
    use SIMD partial sums whose grouping differs between machines)."""
    import numpy as np
    return float(row_sums(np.asarray(a, dtype=np.float64).reshape(1, -1))[0])


def row_sums(a):
    """Each row's sum of a 2-D float64 array, by the same fixed tree as tree_sum, applied to all rows at once."""
    import numpy as np
    a = np.ascontiguousarray(a, dtype=np.float64)
    rows, n = a.shape
    size = 1
    while size < n:
        size *= 2
    if size != n:
        a = np.concatenate([a, np.zeros((rows, size - n), dtype=np.float64)], axis=1)
    while a.shape[1] > 1:
        half = a.shape[1] // 2
        a = a[:, :half] + a[:, half:]
    return a[:, 0] if n else np.zeros(rows, dtype=np.float64)


def _row_sq(a):
    return row_sums(a * a)


def _sig(x: float, digits: int = 4) -> str:
    """A float to `digits` significant digits, trailing zeros kept (0.002000 next to 0.001622, not 0.002)."""
    return f"{x:#.{digits}g}".rstrip(".")


@uses("numpy")
def int4_probe(rows=PROBE_DEFAULTS["rows"], cols=PROBE_DEFAULTS["cols"], outlier_pct=PROBE_DEFAULTS["outlier_pct"],
               outlier_scale=PROBE_DEFAULTS["outlier_scale"], seed=PROBE_DEFAULTS["seed"], groups=PROBE_GROUPS) -> dict:
    """RMS error of group-wise INT4 on a real numpy matrix with a share of outlier rows, per group size."""
    rows = parse_int(rows, "行数（输入维）", 16, 4096)
    cols = parse_int(cols, "列数（输出维）", 1, 4096)
    if rows & (rows - 1):
        raise ValueError(f"行数需要是 2 的幂（分组要整除行数），得到 {rows}")
    if rows * cols > MAX_PROBE_WEIGHTS:
        raise ValueError(f"矩阵太大：行数 × 列数不能超过 {MAX_PROBE_WEIGHTS:,}")
    p = parse_fraction(outlier_pct, "离群行占比（%）", high=Fraction(100), inclusive_low=True, example="1、2.5")
    s = parse_fraction(outlier_scale, "离群行放大倍数", high=Fraction(1000), example="10")
    seed = parse_int(seed, "随机种子", 0, 2**32 - 1)
    w, mask, plain = probe_matrix(rows, cols, p, s, seed)
    normal = ~mask
    any_normal = bool(normal.any())

    def sums(row_sq):   # (all rows, the normal rows), each by the fixed tree
        return tree_sum(row_sq), (tree_sum(row_sq[normal]) if any_normal else 0.0)
    w_sq, w_sq_normal = sums(_row_sq(w))
    plain_sq = tree_sum(_row_sq(plain))
    count = rows * cols
    groups = [int(g) for g in groups if int(g) <= rows and rows % int(g) == 0]
    w_max, plain_max = group_maxima(w, groups), group_maxima(plain, groups)
    out = []
    for g in groups:
        e_sq, e_sq_normal = sums(_row_sq(quantize_int4(w, g, w_max[g]) - w))
        e_plain = tree_sum(_row_sq(quantize_int4(plain, g, plain_max[g]) - plain))
        rms = math.sqrt(e_sq / count)
        rel = math.sqrt(e_sq / w_sq)
        rel_normal = math.sqrt(e_sq_normal / w_sq_normal) if w_sq_normal else None   # None: no ordinary rows
        rel_plain = math.sqrt(e_plain / plain_sq)
        out.append({"group": g, "group_label": n(g) + ("（整列一组）" if g == rows else ""),
                    "rms": _sig(rms), "rel": f"{rel * 100:.2f}%",
                    "rel_normal": "—" if rel_normal is None else f"{rel_normal * 100:.2f}%",
                    "rel_plain": f"{rel_plain * 100:.2f}%",
                    "bits": format_value(4 + Fraction(16, g), "x3"),
                    "raw": {"rms": repr(rms), "rel": repr(rel), "rel_normal": repr(rel_normal),
                            "rel_plain": repr(rel_plain)},
                    "rel_value": rel, "rel_normal_value": rel_normal, "rel_plain_value": rel_plain})
    return {"rows": n(rows), "cols": n(cols), "shape": f"{rows} × {cols}", "weights": n(count),
            "outliers": n(int(mask.sum())),
            "chart": int4_chart(out),
            "outlier_pct": trim_decimal(p) + "%", "outlier_scale": trim_decimal(s),
            "seed": seed, "sigma": repr(SIGMA), "rms_w": _sig(math.sqrt(w_sq / count)),
            "checksum": _sig(w_sq, 8), "checksum_raw": repr(w_sq), "groups": out}


def int4_chart(groups: list[dict]) -> dict:
    """The 'lines' chart spec (site/static/js/charts.js) of relative RMS error (%) against group size."""
    def series(key):   # (no ordinary rows: no point)
        return [None if g[key] is None else float(f"{g[key] * 100:.4f}") for g in groups]
    return {"kind": "lines", "title": "INT4 相对均方根误差 vs 分组大小", "x": [g["group"] for g in groups],
            "xlog": True,
            "xtitle": "分组大小（共享一个缩放因子的输入通道数，对数轴）", "ytitle": "相对均方根误差（%）",
            "series": [{"name": "整个矩阵（含离群行）", "y": series("rel_value")},
                       {"name": "只看普通行", "y": series("rel_normal_value")},
                       {"name": "同一矩阵、不放大离群行", "y": series("rel_plain_value")}]}
