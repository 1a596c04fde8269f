"""C11 MoE 与线性注意力 (lesson c11-moe-linear-attention): the lesson's calculators, pure functions, JSON-ready.

Each one is used twice, like the FFN lesson's calculators: by the build (widgets.py renders the first state, and
the tables of states a widget can show before the browser's Python is ready) and by the browser
(experiments.api.c11_* under Pyodide). Nothing here counts a parameter by itself: every count comes from the
ledger engine (experiments.ledger) on a real config, or on a real config with a few keys changed.

- ``moe_ledger``     the two ledgers of an MoE model: what every token passes through (embedding, attention or
                     its replacement, router, shared experts, dense layers, norms, lm_head) and what is routed
                     (the top-k of E experts), with E and k changeable, and the expert granularity m (E·m experts
                     of width w/m, top k·m: same total, same active size)
- ``hybrid_memory``  a hybrid of Gated DeltaNet and full attention with n of its L layers on full attention:
                     KV cache (grows with T) against the recurrent state (fixed), parameters, per-token compute
- ``batch_read``     a decode step of B tokens: distinct experts it touches, E·(1 − (1 − k/E)^B) per MoE layer
                     under uniform independent routing (toolkit.decode.StepWeights), and the
                     weight bytes read per step and per token

Counts are Python ints and ratios exact Fractions until they are formatted here, so the build and Pyodide agree
digit for digit; chart values are floats made from those exact values at the last step.
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction

from ...format import format_value, gb, n, pct, sci
from ...ledger import build_ledger, ledger_of, unwrap, views
from ...toolkit.config_text import text_config_of
from ...toolkit.decode import step_weights
from ...toolkit.inputs import parse_fraction, parse_int
from ...toolkit.moe import get_key, moe_keys, set_key

BYTES = {"BF16": Fraction(2), "FP8": Fraction(1), "INT4": Fraction(1, 2)}   # bytes per weight the widgets offer
KV_BYTES = 2                                                               # cache elements stored in BF16
ROW_ZH = {"embedding": "嵌入 embedding（查表）", "attention": "注意力",
          "linear_attention": "Gated DeltaNet（线性注意力）",
          "mamba": "Mamba 状态空间层", "router": "路由器", "shared": "共享专家", "dense_ffn": "稠密 FFN 层",
          "routed": "路由专家", "norm": "归一化", "lm_head": "lm_head"}
ROW_ORDER = ("embedding", "attention", "linear_attention", "mamba", "router", "shared", "dense_ffn", "norm",
             "lm_head", "routed")


# ==============================================================================================================
# 1. the two ledgers of an MoE model
# ==============================================================================================================
def with_experts(config, n_experts=None, top_k=None, split=None) -> dict:
    """A copy of a real MoE config with its expert count and top-k changed, and/or every expert split into m
    narrower ones (m = `split`, e.g. 2 or 1/8: E·m experts of width w/m, top k·m, so the stored and the active
    FFN stay the same size). Values are checked; the result is read by the ledger engine."""
    config = unwrap(config)
    k_n, k_k, k_w = moe_keys(config)      # (k_w None: the width's key also sizes dense layers, as in Jamba)
    cfg = copy.deepcopy(config)
    if n_experts is not None:
        set_key(cfg, k_n, parse_int(n_experts, "专家数", 1, 4096))
    if top_k is not None:
        set_key(cfg, k_k, parse_int(top_k, "每个 token 选几个专家", 1, 4096))
    E, k = get_key(cfg, k_n), get_key(cfg, k_k)
    if k > E:
        raise ValueError(f"每个 token 选的专家数（{k:,}）不能多于专家总数（{E:,}）")
    m = Fraction(1) if split is None else parse_fraction(split, "拆细倍数", high=Fraction(64))
    if m != 1:
        if k_w is None:
            raise ValueError("这个模型的专家宽度和稠密层共用同一个 config 键，不能单独拆细专家")
        E, k, w = E * m, k * m, get_key(cfg, k_w) / m
        if E.denominator != 1 or k.denominator != 1 or w.denominator != 1:
            raise ValueError(f"按 {split} 倍拆分后，专家数、top-k 和专家宽度都要是整数"
                             f"（现在是 {format_value(E, 'n2')}、{format_value(k, 'n2')}、{format_value(w, 'n2')}）")
        if E > 4096:
            raise ValueError(f"拆分后专家数 {int(E):,} 太多（最多 4,096）")
        E, k = int(E), int(k)
        set_key(cfg, k_n, E)
        set_key(cfg, k_k, k)
        set_key(cfg, k_w, int(w))
    if k > E:
        raise ValueError(f"每个 token 选的专家数（{k:,}）不能多于专家总数（{E:,}）")
    if "experts_per_token" in cfg:          # gpt-oss repeats top-k under a key the engine does not read
        cfg["experts_per_token"] = k
    return cfg


def _row_of(leaf, kinds, path) -> str:
    """Which row of the two ledgers a tensor of the text backbone belongs to."""
    if "router" in kinds:
        return "router"
    if "ffn" in kinds:
        if any(node.n_active is not None and node.n_active != node.n for node in path):
            return "routed"
        moe_block = any(any(c.kind == "router" for c in node.children) for node in path)
        if moe_block:
            return "shared" if any("shared" in node.name for node in path) else "router"
        return "dense_ffn"
    cat = views.category_of(kinds)
    return cat if cat in ROW_ZH else "norm"


def ledger_rows(ledger) -> dict[str, tuple[int, int]]:
    """Row -> (parameters stored, parameters one token passes through), over the text backbone; the rows sum to
    ledger.text_backbone and ledger.active_per_token."""
    out = {r: [0, 0] for r in ROW_ORDER}

    def go(node, mult, mult_active, kinds, path):
        kinds = kinds + (node.kind,) if node.kind else kinds
        path = path + (node,)
        mult *= node.n
        mult_active *= node.n if node.n_active is None else node.n_active
        if node.shape is not None:
            row = out[_row_of(node, kinds, path)]
            count = math.prod(node.shape)
            row[0] += mult * count
            row[1] += mult_active * count
            return
        for c in node.children:
            go(c, mult, mult_active, kinds, path)
    go(ledger.part("text"), 1, 1, (), ())
    return {r: (a, b) for r, (a, b) in out.items()}


def moe_summary(ledger) -> dict:
    """The numbers the ledger widget and the lesson read, as exact ints (no formatting)."""
    rows = ledger_rows(ledger)
    moe = ledger.arch.moe
    total, active = ledger.text_backbone, ledger.active_per_token
    routed_total, routed_active = rows["routed"]
    E, k, width, shared, moe_layers = ((moe.n_experts, moe.top_k, moe.expert_d_ff, moe.n_shared, moe.n_moe_layers)
                                       if moe else (0, 0, 0, 0, 0))
    return {"rows": rows, "total": total, "active": active, "routed_total": routed_total,
            "routed_active": routed_active, "always": active - routed_active, "router": rows["router"][0],
            "E": E, "k": k, "width": width, "shared": shared, "moe_layers": moe_layers,
            "flops": views.param_flops_per_token(ledger), "mtp": ledger.mtp}


def choices_count(E: int, k: int) -> int:
    """How many different sets of k experts a token may be sent to in one layer: C(E, k)."""
    return math.comb(E, k) if E else 1


def big(x: int) -> str:
    """A count that may be astronomically large: digits up to a billion, then mantissa × 10^exponent."""
    return n(x) if x < 10**9 else sci(x)


def moe_ledger(config, n_experts=None, top_k=None, split=None, dtype="BF16") -> dict:
    """The two ledgers of one MoE model (E, k and the split factor changeable), formatted for the page."""
    cfg = with_experts(config, n_experts, top_k, split)
    if dtype not in BYTES:
        raise ValueError(f"精度 {dtype!r} 未知（可选：{'、'.join(BYTES)}）")
    s = moe_summary(ledger_of(cfg))
    b = BYTES[dtype]
    rows = [{"key": r, "label": ROW_ZH[r], "total": n(t), "active": n(a),
             "kind": "routed" if r == "routed" else "always"}
            for r, (t, a) in s["rows"].items() if t]
    return {"E": n(s["E"]), "k": n(s["k"]), "width": n(s["width"]), "shared": n(s["shared"]),
            "moe_layers": n(s["moe_layers"]), "rows": rows,
            "total": n(s["total"]), "active": n(s["active"]), "total_b": format_value(s["total"], "B1"),
            "active_b": format_value(s["active"], "B2"),
            "ratio": format_value(Fraction(s["total"], s["active"]), "x1"),
            "active_share": pct(Fraction(s["active"], s["total"])),
            "always": n(s["always"]), "always_share": pct(Fraction(s["always"], s["active"])),
            "routed_total": n(s["routed_total"]), "routed_active": n(s["routed_active"]),
            "routed_share": pct(Fraction(s["routed_total"], s["total"])),
            "router": n(s["router"]), "router_share": pct(Fraction(s["router"], s["total"]), 3),
            "flops": n(s["flops"]), "flops_dense": n(2 * s["total"]),
            "weights": gb(s["total"] * b), "active_weights": gb(s["active"] * b), "dtype": dtype,
            "choices": big(choices_count(s["E"], s["k"]))}


def granularity_table(config, splits=("1/8", "1/4", "1", "4")) -> list[dict]:
    """The same model with every expert split m ways (rows m = splits): totals and active sizes stay, the router
    grows m-fold, and the number of expert sets a token can choose explodes."""
    out = []
    for m in splits:
        s = moe_summary(build_ledger(with_experts(config, split=m)))
        out.append({"m": m, "E": s["E"], "k": s["k"], "width": s["width"], "total": s["total"],
                    "active": s["active"], "router": s["router"], "choices": choices_count(s["E"], s["k"])})
    return out


# ==============================================================================================================
# 2. hybrids: Gated DeltaNet (fixed state) and full attention (KV cache growing with T)
# ==============================================================================================================
T_CHOICES = (1024, 4096, 32768, 131072, 262144)
T_SERIES = tuple(2 ** e for e in range(10, 19))           # 1,024 ... 262,144
FULL_PRESETS = (0, 8, 16, 32, 64)                         # full-attention layers of the anchor's 64


def hybrid_layer_types(L: int, n_full: int) -> list[str]:
    """n_full of L layers on full attention, spread evenly (layer i is full when ⌊(i+1)·n/L⌋ steps up); with
    n_full = L / 4 this is the anchor's own pattern (every 4th layer)."""
    return ["full_attention" if (i + 1) * n_full // L > i * n_full // L else "linear_attention" for i in range(L)]


def _text(config: dict) -> dict:
    return text_config_of(config)[0]


HYBRID_TYPES = {"full_attention", "linear_attention"}
NOT_HYBRID = "混合比例只能在 Gated DeltaNet 与全注意力交替的模型上改（Qwen3.8、Qwen3-Next）"


def hybrid_config(config, n_full) -> dict:
    """A copy of a hybrid GDN/full-attention config with n_full full-attention layers, listed in its
    ``layer_types`` (which the engine must then read back: a family that takes its layers from elsewhere is
    refused, as is a model that is not such a hybrid)."""
    config = unwrap(config)
    types = ledger_of(config).arch.layer_types
    if "linear_attention" not in types or not set(types) <= HYBRID_TYPES:
        raise ValueError(NOT_HYBRID)
    cfg = copy.deepcopy(config)
    t = _text(cfg)
    L = len(types)
    n_full = parse_int(n_full, "全注意力层数", 0, L)
    t.pop("full_attention_interval", None)
    t["layer_types"] = hybrid_layer_types(L, n_full)
    if ledger_of(cfg).arch.layer_types != t["layer_types"]:
        raise ValueError(NOT_HYBRID)
    return cfg


def cache_split(ledger, T: int) -> tuple[int, int]:
    """(bytes of K/V that grow with T, bytes of fixed recurrent state) for one sequence of T tokens, BF16."""
    kv = sum(m.kv_elems_per_token * min(T, m.window or T) for m in ledger.arch.per_layer) * KV_BYTES
    state = sum(m.state_elems for m in ledger.arch.per_layer) * KV_BYTES
    assert kv + state == views.cache_bytes_per_sequence(ledger, T, KV_BYTES)
    return kv, state


def hybrid_point(config, n_full, T) -> dict:
    """One hybrid at one context length: cache, parameters and per-token compute, exact ints."""
    led = ledger_of(hybrid_config(config, n_full))
    T = parse_int(T, "上下文长度 T", 1, 1 << 22)
    kv, state = cache_split(led, T)
    weights = views.param_flops_per_token(led)
    scores = views.attention_score_flops(led, T)
    types = led.arch.layer_types
    return {"n_full": types.count("full_attention"), "n_linear": types.count("linear_attention"),
            "L": len(types), "T": T, "kv": kv, "state": state, "cache": kv + state, "total": led.total,
            "weights_flops": weights, "score_flops": scores, "flops": weights + scores}


def _gb_float(nbytes: int) -> float:
    return float(Fraction(nbytes, 10**9))


def hybrid_chart(config, presets=FULL_PRESETS, ts=T_SERIES, current=None) -> dict:
    """The 'lines' chart spec: cache per sequence (GB) against T for each hybrid ratio (and the current one)."""
    L = _text(unwrap(config))["num_hidden_layers"]
    wanted = list(presets) + ([current] if current is not None and current not in presets else [])
    series = []
    for n_full in sorted(wanted, reverse=True):
        led = ledger_of(hybrid_config(config, n_full))
        name = ratio_label(n_full, L)
        series.append({"name": name, "y": [_gb_float(sum(cache_split(led, t))) for t in ts]})
    return {"kind": "lines", "title": "一条序列的缓存：KV cache + 固定状态", "x": list(ts), "xlog": True,
            "xtitle": "上下文长度 T（对数轴）", "ytitle": "缓存（GB，BF16）", "series": series}


def ratio_label(n_full: int, L: int) -> str:
    if n_full == 0:
        return f"全部 {L} 层 GDN"
    if n_full == L:
        return f"全部 {L} 层全注意力"
    return f"{L - n_full} 层 GDN : {n_full} 层全注意力"


def hybrid_memory(config, n_full, T) -> dict:
    """The hybrid widget's readout for one (n_full, T), next to the all-attention model at the same T."""
    p = hybrid_point(config, n_full, T)
    L = p["L"]
    full = hybrid_point(config, L, p["T"])
    return {"label": ratio_label(p["n_full"], L), "n_full": p["n_full"], "n_linear": p["n_linear"], "T": n(p["T"]),
            "kv": gb(p["kv"]), "state": gb(p["state"]), "cache": gb(p["cache"]),
            "vs_full": pct(Fraction(p["cache"], full["cache"])), "full_cache": gb(full["cache"]),
            "total": n(p["total"]), "total_diff": _signed(p["total"] - full["total"]),
            "flops": n(p["flops"]), "score_share": pct(Fraction(p["score_flops"], p["flops"])),
            "flops_vs_full": pct(Fraction(p["flops"], full["flops"]))}


def _signed(v: int) -> str:
    return "0" if v == 0 else ("+" if v > 0 else "−") + n(abs(v))


# ==============================================================================================================
# 3. a decode step of B tokens: how many experts, how many bytes
# ==============================================================================================================
BATCH_EXPONENTS = tuple(range(0, 13))                      # B = 1 ... 4,096


def touched_experts(E: int, k: int, B: int) -> Fraction:
    """Expected distinct experts per MoE layer that B tokens, each choosing k of E uniformly and independently,
    touch: E·(1 − (1 − k/E)^B) (exact)."""
    if not E:
        return Fraction(0)
    return E * (1 - (1 - Fraction(k, E)) ** B)


def batch_point(config, batch) -> dict:
    """Exact values of one decode step of `batch` tokens (weights counted in parameters, not bytes)."""
    led = ledger_of(config)
    if not led.arch.moe:
        raise ValueError("这个模型没有路由专家：每一步都读全部权重")
    B = parse_int(batch, "批大小 B", 1, 65536)
    w = step_weights(led)
    touched = touched_experts(w.E, w.k, B)
    extra = w.touched_extra(B)
    assert touched == w.k + (w.E - w.k) * extra      # StepWeights' formula, written the other way round
    read = w.read(B)
    return {"B": B, "E": w.E, "k": w.k, "touched": touched, "read": read, "per_token": read / B,
            "all": w.all, "active": w.active}


def batch_read(config, batch, dtype="BF16") -> dict:
    """The batch calculator's readout: experts touched, weights and bytes read per step and per token."""
    if dtype not in BYTES:
        raise ValueError(f"精度 {dtype!r} 未知（可选：{'、'.join(BYTES)}）")
    p = batch_point(config, batch)
    b = BYTES[dtype]
    return {"B": n(p["B"]), "E": n(p["E"]), "k": n(p["k"]), "dtype": dtype,
            "touched": format_value(p["touched"], "x1"), "touched_share": pct(p["touched"] / p["E"]),
            "read": gb(p["read"] * b), "per_token": gb(p["per_token"] * b),
            "all": gb(p["all"] * b), "active": gb(p["active"] * b),
            "read_share": pct(p["read"] / p["all"]),
            "per_token_vs_b1": pct(p["per_token"] / p["active"])}


def batch_chart(config, dtype="BF16", exponents=BATCH_EXPONENTS) -> dict:
    """'lines' spec: weight bytes read per token (GB) against B, and the experts touched per layer."""
    led = ledger_of(config)
    w = step_weights(led)
    b = BYTES[dtype]
    xs = [2 ** e for e in exponents]
    per_token = [float(w.read(B) * b / B / 10**9) for B in xs]
    return {"kind": "lines", "title": "批越大，每个 token 分摊的权重读取越少", "x": xs, "xlog": True,
            "xtitle": "批大小 B（对数轴）", "ytitle": f"每个 token 分摊读取的权重（GB，{dtype}）",
            "series": [{"name": "每个 token 分摊的读取量", "y": per_token}]}
