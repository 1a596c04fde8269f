"""C10's calculators, as the page shows them: the planner (every layout of a step over some GPUs that fits, with its
memory per GPU, bytes per step and estimated time, from experiments/toolkit/parallel.py) and one real step of the
course's trainer over simulated ranks (experiments/toolkit/ranks.py, which needs numpy).

Each takes the plain values a page sends (a model's config, the controls' values as text) and returns JSON-ready
data with every number formatted; the build's first states and the browser's answers come from these functions.
A value that is not a whole number in range, a count that does not divide, or a layout that cannot fit is
answered in Chinese, naming it.
"""
from __future__ import annotations

from fractions import Fraction

from ...format import fixed, n, pct
from ...ledger import ledger_of, unwrap
from ...ledger.training import GB, RECOMPUTE
from ...toolkit import devices as DV
from ...toolkit import parallel as P
from ...widget import uses

# A cluster: the device table's memory and FLOP/s, and the links between its GPUs.
CLUSTERS = {"h100": ("80", "h100", "H100 SXM 80GB（NVLink 4 + 每卡 400 Gb/s）"),
            "h800": ("80", "h800", "H800 80GB（DeepSeek-V3 报告的链路）"),
            "h200": ("141", "h100", "H200 141GB（链路同 H100 SXM）")}
SEQS = ("2048", "4096", "8192", "32768", "131072")
RECOMPUTE_ZH = {"none": "不重算", "selective": "选择性重算", "full": "整层重算"}
SHOWN = 10                     # rows of the planner's table
LAYOUT_ZH = {"dp": "数据并行", "zero3": "ZeRO-3", "tp": "张量并行"}
RANK_CHOICES = ("1", "2", "3", "4")
KIND_ZH = {"dp": "数据并行", "tp": "张量", "pp": "流水线", "ep": "专家", "cp": "上下文"}


def whole(text, what: str, low: int, high: int) -> int:
    """A control's text as an int in [low, high]; a ValueError in Chinese naming the control otherwise."""
    s = str(text).strip().replace(",", "")
    if not s.isdigit() or not low <= int(s) <= high:
        raise ValueError(f"{what}：应为 {n(low)} 到 {n(high)} 的整数，实际是「{text}」")
    return int(s)


def secs(x: Fraction) -> str:
    return fixed(x, 2) if x < 100 else n(round(x))


def layout_text(lay: P.Layout) -> str:
    parts = [f"TP {lay.tp}", f"PP {lay.pp}", f"CP {lay.cp}", f"DP {lay.dp}"]
    if lay.ep > 1:
        parts.append(f"EP {lay.ep}")
    return " · ".join(parts) + f" · ZeRO-{lay.zero}"


def layout_cells(lay: P.Layout) -> dict:
    """A layout as the tables' three cells: TP·PP·CP·DP, EP (— for none), the ZeRO stage."""
    return {"layout": f"{lay.tp}·{lay.pp}·{lay.cp}·{lay.dp}", "ep": str(lay.ep) if lay.ep > 1 else "—",
            "zero": str(lay.zero)}


def plan_row(p: P.Plan) -> dict:
    t = p.timing
    assert t is not None   # (a row is a layout that fits, and the planner times every one that fits)
    top = max(P.SERIAL + P.OVERLAPPED, key=lambda k: t.comm[k])
    return {**layout_cells(p.layout), "memory": fixed(Fraction(p.memory["total"], GB), 1),
            "comm": fixed(Fraction(p.comm["total"], GB), 1), "bubble": pct(t.bubble),
            "step": secs(t.step), "mfu": pct(t.mfu),
            "top": f"{KIND_ZH[top]} {secs(t.comm[top])} 秒" if t.comm[top] else "—"}


def planner(config: dict, gpus: str = "2048", cluster: str = "h800", seq: str = "4096", batch: str = "15360",
            recompute: str = "full") -> dict:
    """The layouts of one step that fit, fastest first (the first SHOWN of them), and how many there were."""
    if cluster not in CLUSTERS:
        raise ValueError(f"集群：应为 {'、'.join(CLUSTERS)} 之一，实际是「{cluster}」")
    if recompute not in RECOMPUTE:
        raise ValueError(f"重算：应为 {'、'.join(RECOMPUTE_ZH.values())} 之一，实际是「{recompute}」")
    g = whole(gpus, "GPU 数", 1, P.MAX_GPUS)
    s = whole(seq, "序列长度", 1, 1 << 20)
    b = whole(batch, "全局 batch（条序列）", 1, 1 << 20)
    dev_key, fab_key, label = CLUSTERS[cluster]
    dev, fab = DV.DEVICES[dev_key], DV.FABRICS[fab_key]
    ledger = ledger_of(unwrap(config))
    every = P.plan(ledger, g, dev, s, b, recompute=recompute, fab=fab, fitting_only=False, timed=False)
    if not every:
        raise ValueError(f"没有一种切法能把 {n(b)} 条序列平均分下去：数据并行的份数（GPU 数 {n(g)} 除以 TP·PP·CP）"
                         f"要整除全局 batch {n(b)}，序列长度 {n(s)} 也要能被 CP 整除")
    fitting = [p for p in every if p.fits]
    out = {"cluster": label, "gpus": n(g), "candidates": n(len(every)), "fitting": n(len(fitting)),
           "rows": [plan_row(p) for p in fitting[:SHOWN]], "message": ""}
    if not fitting:
        least = min(every, key=lambda p: p.memory["total"])
        out["message"] = (f"{n(len(every))} 种切法都装不下：最省显存的 {layout_text(least.layout)} 每张卡也要 "
                          f"{fixed(Fraction(least.memory['total'], GB), 1)} GB，一张 {label.split('（')[0]} 只有 "
                          f"{fixed(Fraction(dev.bytes, GB), 1)} GB。试试整层重算、更多 GPU 或更短的序列。")
    return out


# -- the published layouts -------------------------------------------------------------------------------------
L3_KEYS = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
           "vocab_size")
L3_BASE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "max_position_embeddings": 131072,
           "tie_word_embeddings": False, "rms_norm_eps": 1e-5, "hidden_act": "silu"}
# Llama 3 table 4's other two rows: (GPUs, CP, DP, sequence length, sequences per step, measured BF16 MFU); the
# 16K-GPU row at 8K tokens is the widget's own setting (gpus, seq, batch) with TP 8, PP 16, MFU 41%
L3_TP, L3_PP = 8, 16
L3_ROWS = {"r8k": (8192, 1, 64, 8192, 2048, Fraction(43, 100)),
           "rcp": (16384, 16, 8, 131072, 128, Fraction(38, 100))}
L3_MFU_16K = Fraction(41, 100)
# DeepSeek-V3 (arXiv 2412.19437 section 3.2, 4.2): 2,048 H800, PP 16, EP 64, ZeRO-1 over DP 128, batch 15,360 x 4K;
# the ledger fits it only with full recomputation (DeepSeek recomputes parts of each layer and keeps some
# activations in FP8, which the ledger does not model)
DS_LAYOUT = P.Layout(pp=16, dp=128, ep=64, zero=1, seq_len=4096, micro_batches=120, recompute="full")


def llama3_config(o: dict) -> dict:
    """Llama 3 405B's config from the widget's options (its paper's table 3 by default)."""
    return {**L3_BASE, **{k: int(o[k]) for k in L3_KEYS}}


def llama3_layouts(o: dict) -> dict[str, tuple[P.Layout, Fraction]]:
    """Table 4's three layouts (all ZeRO-3: FSDP), each with its measured BF16 MFU."""
    g, s, b = int(o["gpus"]), int(o["seq"]), int(o["batch"])
    dp = g // (L3_TP * L3_PP)
    out = {"r16k": (P.Layout(tp=L3_TP, pp=L3_PP, dp=dp, zero=3, seq_len=s, micro_batches=b // dp), L3_MFU_16K)}
    for key, (_gpus, cp, dp, seq, batch, mfu) in L3_ROWS.items():
        out[key] = (P.Layout(tp=L3_TP, pp=L3_PP, cp=cp, dp=dp, zero=3, seq_len=seq, micro_batches=batch // dp), mfu)
    return out


def weigh(ledger, lay: P.Layout, cluster: str, hidden: tuple[str, ...] = P.OVERLAPPED) -> dict:
    """A layout's memory per GPU, bytes per step and timing on a cluster of CLUSTERS."""
    dev_key, fab_key, _ = CLUSTERS[cluster]
    dev = DV.DEVICES[dev_key]
    comm = P.per_step_comm(ledger, lay)
    return {"memory": P.memory_per_gpu(ledger, lay), "comm": comm, "device": dev,
            "timing": P.step_time(ledger, lay, dev, DV.FABRICS[fab_key], comm, hidden=hidden)}


def published_rows(o: dict, ds_config: dict) -> list[dict]:
    """The published layouts weighed by the course's formulas, as the table shows them."""
    rows = []
    l3 = ledger_of(llama3_config(o))
    names = {"r8k": "8K 序列", "r16k": "8K 序列", "rcp": "128K 序列"}
    for key in ("r8k", "r16k", "rcp"):
        lay, mfu = llama3_layouts(o)[key]
        w = weigh(l3, lay, "h100")
        rows.append(_published_row(f"Llama 3 405B，{n(lay.gpus)} 张 H100，{names[key]}", lay, w, f"实测 {pct(mfu, 0)}"))
    ds = ledger_of(unwrap(ds_config))
    w = weigh(ds, DS_LAYOUT, "h800")
    rows.append(_published_row(f"DeepSeek-V3，{n(DS_LAYOUT.gpus)} 张 H800，4K 序列，整层重算", DS_LAYOUT, w,
                               "报告没给 MFU"))
    return rows


def _published_row(name: str, lay: P.Layout, w: dict, measured: str) -> dict:
    t, dev = w["timing"], w["device"]
    return {"name": name, **layout_cells(lay), "memory": fixed(Fraction(w["memory"]["total"], GB), 1),
            "fits": "装得下" if DV.fits(w["memory"]["total"], dev) else "装不下",
            "comm": "；".join(f"{KIND_ZH[k]} {fixed(Fraction(w['comm'][k], GB), 1)}" for k in P.SERIAL + P.OVERLAPPED
                             if w["comm"][k]),
            "bubble": pct(t.bubble), "step": secs(t.step), "mfu": pct(t.mfu), "measured": measured}


def _bytes_text(x) -> str:
    return n(int(x)) if Fraction(x).denominator == 1 else fixed(Fraction(x), 1)


@uses("numpy")
def ranks_step(layout: str = "zero3", k: str = "4") -> dict:
    """One AdamW step of the course's small model over k simulated ranks, beside the step in one piece."""
    from ...toolkit import ranks as R
    if layout not in R.LAYOUTS:
        raise ValueError(f"切法：应为 {'、'.join(LAYOUT_ZH.values())} 之一，实际是「{layout}」")
    kk = whole(k, "卡数", 1, 64)
    bad = R.problems(layout, kk)
    if bad:
        raise ValueError(f"{LAYOUT_ZH[layout]}分到 {kk} 张卡上分不开：" + "；".join(bad))
    x = R.run(layout, kk)
    kinds = list(x["sent"])
    rows = []
    for r, sh in enumerate(x["shards"]):
        a, b = sh["batch"]
        hold = f"全部 {n(x['params'])} 个" if x["held"][r] == x["params"] else \
            f"{n(x['held'][r])} 个（{pct(Fraction(x['held'][r], x['params']))}）"
        what = (f"全部 {R.BATCH} 条序列" if b - a == R.BATCH else f"第 {b} 条序列" if b - a == 1
                else f"第 {a + 1}–{b} 条序列")
        if layout == "tp":
            what += f"；注意力头 {sh['heads'][0] + 1}–{sh['heads'][1]}，FFN 第 {sh['ffn'][0] + 1}–{sh['ffn'][1]} 列"
        rows.append({"rank": f"第 {r} 张", "data": what, "holds": hold, "total": n(x["per_rank"][r])})
    same_split = all(x["sent"][kind] == [x["sent"][kind][0]] * kk for kind in kinds)
    split = "；".join(f"{kind} {n(x['sent'][kind][0])}" for kind in kinds)
    if not kinds:
        split = "一张卡不用发任何东西"
    elif same_split:
        split = "每张卡都一样：" + split
    else:
        split = "；".join(f"第 {r} 张：" + "，".join(f"{kind} {n(x['sent'][kind][r])}" for kind in kinds)
                         for r in range(kk))
    same = x["grad_diff"] <= 1e-12 * x["grad_scale"] and x["weight_diff"] <= 1e-12
    return {"layout": LAYOUT_ZH[layout], "k": str(kk), "rows": rows, "split": split,
            "formula": _bytes_text(x["formula"]),
            "agree": "一致" if x["per_rank"] == [x["formula"]] * kk else "不一致",
            "same": ("相同：梯度与更新后的权重和一张卡跑出的最多差 10⁻¹²，是浮点加法换了顺序的舍入" if same
                     else "不同：和一张卡的结果差超过了 10⁻¹²"),
            "loss": fixed(x["loss"], 4), "params": n(x["params"])}
