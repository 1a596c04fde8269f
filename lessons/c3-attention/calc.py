"""C3's calculators from a config: what attention caches and computes, by the ledger engine's rules.

The build calls these for each widget's first state and the answers it embeds (widgets.py `states`); the browser's
Python calls the same functions as experiments.api:c3_*, so the two cannot differ in a digit.

- kv(config, context): per layer type of one model, the kind of attention (forks.attention_kind: MHA, GQA, MQA,
  MLA, sliding window, chunked, linear ...), the config values behind its cache entry, the bytes one token leaves
  in one layer (K and V, or MLA's latent and shared RoPE key, BF16), the bytes the layer holds at the chosen
  context (min(T, window) tokens, plus a linear layer's fixed state), and the totals: per token over the layers
  whose cache grows (views.kv_bytes_per_token) and per sequence (views.cache_bytes_per_sequence). Then the
  attention FLOPs against T: per generated token, the score work over T cached tokens (views.attention_score_flops)
  beside the FFN's (views.ffn_flops_per_token), and where full attention overtakes the FFN (views.crossover_T,
  the function lesson C4's crossover uses).
- rope_rows(choices): every model's rope_theta and rope_scaling as its config writes them (top level, text_config
  or rope_parameters), the share of each head RoPE rotates (forks.card_of) and the native context.

Formulas: K and V per token per layer = 2 · num_key_value_heads · head_dim elements (Vaswani et al. 2017; GQA,
Ainslie et al. 2023; MQA, Shazeer 2019: one KV head); MLA caches kv_lora_rank + qk_rope_head_dim elements
(DeepSeek-V2, arXiv 2405.04434), DSA's indexer adds its key (index_head_dim); all by the engine's Mixer.
"""
from __future__ import annotations

from fractions import Fraction

from ...format import gb, n, sci, trim_decimal
from ...ledger import forks as F
from ...ledger import views
from ...ledger.arch import layer_runs
from ...toolkit.config_text import ledger_of_input, text_config_of
from ...toolkit.inputs import parse_int

BF16 = 2                                     # bytes per cached element
CONTEXTS = (4096, 32768, 131072, 1048576)    # the context select's positions
MAX_CONTEXT = 2 ** 20                        # the longest context the calculator takes
FLOP_POINTS = (1024, 4096, 32768, 131072)    # the FLOPs table's rows, beside the chosen context and the crossover

KIND_ZH = {"mha": "多头注意力 MHA", "gqa": "分组查询注意力 GQA", "mqa": "多查询注意力 MQA",
           "mla": "MLA（只存潜向量）", "sparse": "MLA + DSA", "sliding": "滑窗注意力",
           "chunked": "分块注意力", "compressed": "压缩注意力", "linear": "线性注意力",
           "mamba": "Mamba 状态空间层", "none": "无 token 混合"}


# (KV heads, key width, value width or "" for the key's) of layer types whose cache entry the Arch's defaults do not
# give: Gemma 4's full-attention layers, MiMo-V2-Flash's full and sliding layers (K and V of different widths)
OWN_KEYS = (("num_global_key_value_heads", "global_head_dim", ""), ("num_key_value_heads", "head_dim", "v_head_dim"),
            ("swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim"))


def context_label(T: int) -> str:
    """4096 -> 4K, 1048576 -> 1M; other lengths as digits."""
    if T % 2**20 == 0:
        return f"{T // 2**20}M"
    return f"{T // 1024}K" if T % 1024 == 0 else n(T)


def _key(a, symbol: str, default: str) -> str:
    """The config key behind one of the engine's symbols (text_config. prefix dropped: the table names the model)."""
    return str(a.symbols.get(symbol, default)).replace("text_config.", "")


def _int(text: dict, key: str) -> int | None:
    v = text.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def used(config: dict, ledger, kind: str, m) -> str:
    """The config values behind one layer type's cache entry, written as the sum that gives the engine's
    kv_elems_per_token (checked: a sum that does not give it is not shown; the engine's count is)."""
    a = ledger.arch
    text, _ = text_config_of(config)
    elems = m.kv_elems_per_token
    if kind in ("linear", "mamba"):
        return f"不存 K、V：每条序列一份固定大小的状态，{n(m.state_elems)} 个元素"
    if not elems:
        return "不缓存"
    if kind in ("mla", "sparse"):
        dc, dr = _int(text, "kv_lora_rank"), _int(text, "qk_rope_head_dim")
        if dc is not None and dr is not None:
            extra = elems - dc - dr
            out = f"kv_lora_rank {n(dc)} + qk_rope_head_dim {n(dr)}"
            idx = _int(text, "index_head_dim")
            if extra == 0:
                return out + f" = {n(elems)}"
            if idx is not None and extra == idx:
                return out + f" + 索引器的键 index_head_dim {n(idx)} = {n(elems)}"
    elif 2 * a.n_kv_heads * a.head_dim == elems:
        heads = _key(a, "h_kv", _key(a, "h", "num_key_value_heads"))     # GPT-2: n_head, no KV key of its own
        width = _key(a, "d_h", f"{_key(a, 'd', 'hidden_size')} ÷ {_key(a, 'h', 'num_attention_heads')}")
        return f"2 × {heads} {n(a.n_kv_heads)} × {width} {n(a.head_dim)} = {n(elems)}"
    for heads, k_dim, v_dim in OWN_KEYS:    # a layer type with heads and widths of its own (Gemma 4, MiMo)
        h, dk = _int(text, heads), _int(text, k_dim)
        dv = _int(text, v_dim) if v_dim else dk
        if h is not None and dk is not None and dv is not None and h * (dk + dv) == elems:
            if not v_dim:
                return f"2 × {heads} {n(h)} × {k_dim} {n(dk)} = {n(elems)}"
            return f"{heads} {n(h)} × （{k_dim} {n(dk)} + {v_dim} {n(dv)}） = {n(elems)}"
    return f"账本引擎按这一层类型自己的键数得 {n(elems)}"


def size(nbytes: int) -> str:
    """Bytes in decimal units: GB (10⁹) from 1 GB up, else MB (10⁶), else KB (10³), two decimals."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6)):
        if nbytes >= scale:
            return gb(nbytes) if unit == "GB" else f"{float(Fraction(nbytes, scale)):.2f} MB"
    return f"{float(Fraction(nbytes, 10**3)):.2f} KB"


def ratio(x: Fraction) -> str:
    return f"{float(x):.2f}" if x >= Fraction(1, 100) else "< 0.01"


def _window_text(a, m) -> str:
    if m.window is None:
        return "全部"
    key = "W_chunk" if "W_chunk" in a.symbols else "W"
    return f"{n(m.window)}（{_key(a, key, 'sliding_window')}）"


def layer_rows(config: dict, ledger, T: int) -> list[dict]:
    """One row per layer type, in the order the layers first appear."""
    a = ledger.arch
    indexer = F.indexer_of(config, ledger)
    rows = []
    for (t, _), (m, k) in zip(layer_runs(a.layer_types), a.mixer_counts):
        kind = F.attention_kind(ledger, t, indexer)
        per_layer = (m.kv_elems_per_token * m.attended(T) + m.state_elems) * BF16
        rows.append({"type": t, "kind": KIND_ZH.get(kind, kind), "layers": n(k), "used": used(config, ledger, kind, m),
                     "per_token": n(m.kv_elems_per_token * BF16) if m.kv_elems_per_token else "0",
                     "window": _window_text(a, m) if m.kv_elems_per_token else "—",
                     "per_layer": size(per_layer), "all": size(per_layer * k)})
    return rows


def flops_rows(ledger, T: int) -> list[dict]:
    """Attention score FLOPs per generated token at each T (the table's points, the chosen T, the crossover) beside
    the FFN's, and their ratio."""
    ffn = views.ffn_flops_per_token(ledger)
    cross = views.crossover_T(ledger)
    points = set(FLOP_POINTS) | {T}
    if cross is not None and cross.denominator == 1 and cross <= MAX_CONTEXT:
        points.add(int(cross))
    rows = []
    for t in sorted(points):
        att = views.attention_score_flops(ledger, t)
        rows.append({"T": n(t), "attention": sci(att), "ffn": sci(ffn), "ratio": ratio(Fraction(att, ffn)),
                     "mark": ("交叉点" if cross is not None and t == cross else "")
                     + ("（所选上下文）" if t == T else "")})
    return rows


def kv(config, context=4096) -> dict:
    """Everything the cache widget shows for one model at one context length (see the module docstring)."""
    led = ledger_of_input(config)
    if isinstance(config, str):          # a pasted text: read once more for its keys (already parsed once: valid)
        from ...toolkit.config_text import parse_config_text
        config = parse_config_text(config)
    T = parse_int(context, "上下文长度（token）", 1, MAX_CONTEXT)
    a = led.arch
    per_token = views.kv_bytes_per_token(led)
    seq = views.cache_bytes_per_sequence(led, T)
    cross = views.crossover_T(led)
    grows = a.n_full
    return {"context": n(T), "native": n(a.context_length),
            "beyond": f"超出这个模型的原生上下文 {n(a.context_length)}" if T > a.context_length else "",
            "layers": n(a.n_layers), "full_layers": n(grows),
            "rows": layer_rows(config, led, T),
            "per_token": n(per_token), "per_token_layer": n(per_token // grows) if grows else "—",
            "sequence": size(seq),
            "crossover": (f"上下文到 T = {trim_decimal(round(cross, 1))} 时，全注意力的打分计算追上 FFN"
                          if cross is not None else "这个模型没有看全部上下文的注意力层：打分计算不随 T 一直增长"),
            "flops": flops_rows(led, T)}


def rope_text(text: dict) -> tuple[str, str]:
    """(rope_theta, rope_scaling) as the config writes them: at the top, or per layer type in rope_parameters."""
    theta, scaling = text.get("rope_theta"), text.get("rope_scaling")
    params = text.get("rope_parameters")
    if theta is None and isinstance(params, dict):
        if "rope_theta" in params:
            theta = params["rope_theta"]
            kind = params.get("rope_type")
            scaling = scaling or (None if kind in (None, "default") else params)
        else:
            parts = [f"{t}：{trim_decimal(Fraction(str(p['rope_theta'])))}" for t, p in params.items()
                     if isinstance(p, dict) and "rope_theta" in p]
            return "；".join(parts) or "未写", "—"
    theta_text = trim_decimal(Fraction(str(theta))) if isinstance(theta, (int, float)) else "未写"
    if isinstance(scaling, dict):
        kind = scaling.get("rope_type") or scaling.get("type") or "?"
        bits = [str(kind)]
        if "factor" in scaling:
            bits.append(f"factor {trim_decimal(Fraction(str(scaling['factor'])))}")
        if "original_max_position_embeddings" in scaling:
            bits.append(f"原长 {n(scaling['original_max_position_embeddings'])}")
        return theta_text, "，".join(bits)
    return theta_text, "—"


def rope_rows(choices) -> list[dict]:
    """Every model (alias, ModelNumbers): its RoPE base and scaling, RoPE's share of each head, native context."""
    rows = []
    for _, mn in choices:
        config = mn.doc["config"]
        card = F.card_of(config, mn.ledger)
        pos = card["position"]
        text, _ = text_config_of(config)
        if pos["scheme"] == "learned":
            theta, scaling, share = "—（学出来的位置表）", "—", "—"
        else:
            theta, scaling = rope_text(text)
            share = trim_decimal(round(Fraction(pos["rope_share"]), 4))
        rows.append({"name": mn.name, "theta": theta, "scaling": scaling, "share": share,
                     "context": n(mn.arch.context_length)})
    return rows
