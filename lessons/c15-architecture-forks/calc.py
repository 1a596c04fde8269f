"""C15's calculators: the fork map, the context slider and the one-fork what-if, as plain JSON in and out.

Every figure is the engine's (experiments/ledger/forks.py: fork_card, attention_flops, what_if; views.py for the
cache); this module only words and formats it. The build's first states and the browser's answers are the same
calls (experiments.api:c15_*), so they agree to the digit.
"""
from __future__ import annotations

from fractions import Fraction

from ...format import format_value, gb, n, pct, sci, signed_pct
from ...ledger import forks as F
from ...ledger import ledger_of

# context lengths the slider stops at: 4K to 1M tokens, each power of two
T_STOPS = [2 ** e for e in range(12, 21)]
KIND_ZH = {"mha": "MHA", "gqa": "GQA", "mqa": "MQA", "mla": "MLA", "sliding": "滑窗", "chunked": "分块",
           "linear": "线性 GDN", "mamba": "Mamba", "sparse": "MLA + DSA 稀疏", "compressed": "压缩注意力",
           "none": "无注意力"}
PLACEMENT_ZH = {"pre": "Pre-LN", "sandwich": "夹心归一化", "post": "Post-LN", "other": "其他位置"}
NORM_ZH = {"rmsnorm": "RMSNorm", "layernorm": "LayerNorm", "other": "其他"}
KV_MAX = 1024           # the what-if's KV-head field: its max (templates/c15_what_if.html)
SWAP_ZH = {"none": "不换（原 config）", "no_linear": "不要线性层：GDN / Mamba 层全换成本模型的全注意力层",
           "no_sliding": "不要滑窗：窗口层改看全部上下文", "mla_to_gqa": "MLA 换成 GQA（KV 头数可选）",
           "no_indexer": "去掉 DSA 索引器：回到稠密 MLA", "no_shared": "去掉共享专家"}
SWAP_NOTE = {"none": "原 config，什么都不换。",
             "no_linear": "每个线性注意力（或 Mamba）层换成这个模型自己的一层全注意力：参数照它数，缓存和打分照它算。",
             "no_sliding": "窗口层保留自己的头，只是不再只看最近的窗口，而是看全部上下文。",
             "mla_to_gqa": "MLA 的潜向量换成 GQA 的 K、V：K 的头宽取 qk_nope_head_dim + qk_rope_head_dim，V 取 "
                           "v_head_dim，q、k、v、o 四个投影按这个宽度重数参数；有索引器的一并去掉。",
             "no_indexer": "去掉每层的 DSA 索引器：缓存少了索引键，注意力回到对全部 T 个 token 做 MLA。",
             "no_shared": "去掉每个 MoE 层里人人都用的共享专家，路由专家不变。"}
SORTS = ("listed", "kv", "active", "vocab")
SORT_ZH = {"listed": "课程顺序", "kv": "每 token 缓存（小到大）", "active": "激活比例（小到大）",
           "vocab": "词表（大到小）"}


def _tokens(T: int) -> str:
    return f"{T // 1024}K" if T < 1 << 20 else f"{T // (1 << 20)}M"


def attention_text(card: dict) -> str:
    parts = []
    for run in card["attention"]:
        label = KIND_ZH[run["kind"]]
        if run["window"]:
            label += f" {n(run['window'])}"
        parts.append(f"{label} × {run['layers']}")
    return "，".join(parts)


def hybrid_text(card: dict) -> str:
    full, bounded = card["full_layers"], card["bounded_layers"]
    if not bounded:
        return f"{full} 层全部看全文"
    return f"{bounded} 层有界 : {full} 层看全文"


def moe_text(card: dict) -> str:
    m = card["moe"]
    if m is None:
        return "稠密"
    out = f"{m['experts']} 选 {m['top_k']}"
    if m["shared"]:
        out += f" + {m['shared']} 共享"
    if m["dense_layers"]:
        out += f"，{m['dense_layers']} 层稠密"
    return out


def ffn_text(card: dict) -> str:
    f = card["ffn"]
    act = f["act"] or ""
    if f["gated"]:
        return "SwiGLU" if act in ("silu", "swish") else "GeGLU" if act.startswith("gelu") else f"门控（{act}）"
    return f"两层 MLP（{act or '未注明'}）"


def norm_text(card: dict) -> str:
    x = card["norm"]
    out = f"{NORM_ZH[x['type']]}（{PLACEMENT_ZH[x['placement']]}）"
    extra = []
    if x["qk_norm"]:
        extra.append("QK-norm")
    if x["softcap"]:
        extra.append("软封顶 " + "/".join(format_value(Fraction(str(v)), "x0") for v in x["softcap"].values()))
    if x["sinks"]:
        extra.append("sinks")
    return out + ("，" + "、".join(extra) if extra else "")


def position_text(card: dict) -> str:
    p = card["position"]
    if p["scheme"] == "learned":
        return "学习的绝对位置"
    out = "RoPE" if p["rope_share"] == 1 else f"RoPE（头宽的 {pct(Fraction(str(p['rope_share'])), 0)}）"
    if p["nope_layers"]:
        out += f"，{p['nope_layers']} 层 NoPE"
    return out


def vocab_text(card: dict) -> str:
    e = card["embedding"]
    return f"{n(e['vocab'])}{'，共享' if e['tied'] else ''}（占 {pct(Fraction(e['params'], card['total']))}）"


def mtp_text(card: dict) -> str:
    m = card["mtp"]
    if not m["modules"]:
        return "无"
    return f"{m['modules']} 个，{format_value(Fraction(m['params'], 10**9), 'x1')}B 参数"


def card_row(name: str, card: dict) -> dict:
    return {"name": name, "attention": attention_text(card), "hybrid": hybrid_text(card), "moe": moe_text(card),
            "ffn": ffn_text(card), "active": pct(Fraction(card["active"], card["total"])), "norm": norm_text(card),
            "position": position_text(card), "vocab": vocab_text(card), "mtp": mtp_text(card),
            "kv": n(card["kv_bytes_per_token"])}


def _sort_key(sort: str):
    return {"listed": lambda x: 0, "kv": lambda x: x[1]["kv_bytes_per_token"],
            "active": lambda x: Fraction(x[1]["active"], x[1]["total"]),
            "vocab": lambda x: -x[1]["embedding"]["vocab"]}[sort]


def fork_map(models: list, sort: str = "listed") -> dict:
    """models: [[name, config], ...] -> {"rows": one row of fork cells per model, in the chosen order}."""
    if sort not in SORTS:
        raise ValueError(f"sort: expected one of {', '.join(SORTS)}, got {sort!r}")
    cards = [(name, F.fork_card(config)) for name, config in models]
    cards.sort(key=_sort_key(sort))
    return {"rows": [card_row(name, card) for name, card in cards], "sort": SORT_ZH[sort]}


def context_rows(models: list, T: int) -> dict:
    """models: [[name, config], ...] at context T -> each model's cache (BF16) and attention FLOPs per token."""
    T = int(T)
    if not 1 <= T <= 1 << 24:
        raise ValueError(f"T: expected 1..{1 << 24} tokens, got {T}")
    rows = []
    for name, config in models:
        ledger = ledger_of(config)
        f = F.attention_flops(config, ledger, T)
        beyond = T > ledger.arch.context_length
        rows.append({"name": name, "cache": gb(F.kv_bytes_at(ledger, T)), "flops": sci(f["total"]),
                     "dense": sci(f["dense"]) if f["dense"] != f["total"] else "—",
                     "note": f"超出原生长度 {n(ledger.arch.context_length)}" if beyond else ""})
    return {"T": n(T), "T_short": _tokens(T), "rows": rows}


def context_chart(models: list) -> dict:
    """The 'lines' chart: each model's cache per sequence (GB, BF16) against T, over the slider's stops up to the
    model's own context length (a series stops there)."""
    series = []
    for name, config in models:
        ledger = ledger_of(config)
        y = [float(Fraction(F.kv_bytes_at(ledger, T), 10**9)) if T <= ledger.arch.context_length else None
             for T in T_STOPS]
        series.append({"name": name, "y": y})
    return {"kind": "lines", "title": "一条序列的缓存随上下文变长", "x": list(T_STOPS), "xlog": True,
            "xtitle": "上下文长度 T（对数轴）", "ytitle": "缓存（GB，BF16）", "series": series}


def what_if_view(config: dict, swap: str, T: int, kv_heads: int = 8) -> dict:
    """One model with one fork swapped: the base and the swapped values side by side, and the change."""
    card = F.fork_card(config)
    allowed = F.what_if_options(card)
    try:
        T, kv_heads = int(T), int(kv_heads)
    except ValueError:
        raise ValueError("上下文长度和 KV 头数都应是正整数") from None
    if not 1 <= T <= 1 << 24:
        raise ValueError(f"上下文长度应在 1 到 {n(1 << 24)} 之间，实际是 {n(T)}")
    h = card["heads"]
    if not 1 <= kv_heads <= KV_MAX:   # whatever the swap: a count out of the field's range is never read silently
        raise ValueError(f"KV 头数应在 1 到 {n(KV_MAX)} 之间，实际是 {n(kv_heads)}")
    # (only the MLA -> GQA swap reads the count: under the others the page disables its field, with the reason)
    if swap == "mla_to_gqa" and (kv_heads > h or h % kv_heads):
        raise ValueError(f"KV 头数应能整除注意力头数 {h}，实际是 {kv_heads}")
    if swap not in allowed:
        return {"applies": False, "note": f"这个模型没有这条岔路可换：{SWAP_ZH.get(swap, swap)}。", "rows": [],
                "allowed": allowed}
    x = F.what_if(config, swap, T, kv_heads)
    b, s = x["base"], x["swapped"]
    rows = []
    for key, label, fmt in (("cache_bytes", f"一条 {n(T)} token 序列的缓存（BF16）", gb),
                            ("attn_flops", "每生成一个 token 的注意力计算（FLOPs）", sci),
                            ("total", "总参数", n), ("active", "每 token 激活参数", n)):
        change = Fraction(s[key], b[key]) - 1 if b[key] else Fraction(0)
        rows.append({"label": label, "base": fmt(b[key]), "swapped": fmt(s[key]),
                     "change": "不变" if s[key] == b[key] else signed_pct(change, 2 if abs(change) < Fraction(1, 100)
                                                                         else 1)})
    return {"applies": True, "note": SWAP_NOTE[swap], "rows": rows, "allowed": allowed}
