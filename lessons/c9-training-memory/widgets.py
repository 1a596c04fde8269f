"""C9's widgets at build time: each view computes the first state with calc.py (the functions the browser calls as
experiments.api:c9_*); ``states`` lists the calls the build answers ahead of time (every listed model's first
state, each choice of every select for the first model, the others as built, and its ZeRO stages at each
data-parallel count), so those controls answer before the browser's Python is ready. script.js (this folder) makes
the markup live.
"""
from __future__ import annotations

from fractions import Fraction

from ...format import n, pct
from ...ledger import training as T
from ...toolkit import devices as DV
from ...toolkit.stored import stored
from ...widget import model_ref
from . import calc

STEP_CONTROLS = ("recipe", "batch", "seq", "recompute", "kernel", "zero", "ranks", "tp", "gpu")


def _choices() -> dict[str, list[tuple[str, str]]]:
    return {"recipe": list(calc.RECIPE_ZH.items()), "batch": [(b, b) for b in calc.BATCHES],
            "seq": [(s, n(int(s))) for s in calc.SEQS], "recompute": list(calc.RECOMPUTE_ZH.items()),
            "kernel": list(calc.KERNEL_ZH.items()),
            "zero": [(z, "不分片" if z == "0" else f"阶段 {z}") for z in calc.ZEROS],
            "ranks": [(r, r) for r in calc.RANKS],
            "tp": [(t, t.replace("+SP", " + 序列并行")) for t in calc.TPS],
            "gpu": [(g, calc.device_label(DV.DEVICES[g])) for g in calc.GPUS]}


def _models(o: dict, data) -> list:
    out = [data.model(a, key="models") for a in o["models"]]
    if o["model"] not in dict(out):
        raise data.option_error("model", "one of the aliases in 'models'", o["model"])
    return out


def _step_args(o: dict) -> list[str]:
    return [str(o[k]) for k in STEP_CONTROLS]


def step_view(o: dict, data) -> dict:
    models = _models(o, data)
    choices = _choices()
    for key in STEP_CONTROLS:
        if str(o[key]) not in dict(choices[key]):
            raise data.option_error(key, "one of " + ", ".join(dict(choices[key])), o[key])
    config = dict(models)[o["model"]].doc["config"]
    return {"alias": o["model"], "models": models, "choices": choices, "o": {k: str(o[k]) for k in STEP_CONTROLS},
            "x": calc.step_memory(config, *_step_args(o)), "parts": calc.BAR_PARTS}


def step_states(o: dict, data) -> list:
    """Every listed model at the defaults; for the first model each choice of every select changed alone, and each
    ZeRO stage at each data-parallel count (the page disables ZeRO while there is one card: its stages are chosen
    after the count)."""
    models = _models(o, data)
    args = _step_args(o)
    out = [("c9_step", [model_ref(a), *args]) for a, _ in models]
    for i, key in enumerate(STEP_CONTROLS):
        for value, _ in _choices()[key]:
            if value != args[i]:
                out.append(("c9_step", [model_ref(o["model"]), *args[:i], value, *args[i + 1:]]))
    z, r = STEP_CONTROLS.index("zero"), STEP_CONTROLS.index("ranks")
    for ranks, _ in _choices()["ranks"]:
        for zero, _ in _choices()["zero"]:
            if ranks != args[r] and zero != args[z]:
                grid = list(args)
                grid[z], grid[r] = zero, ranks
                out.append(("c9_step", [model_ref(o["model"]), *grid]))
    return out


def seq_view(o: dict, data) -> dict:
    models = _models(o, data)
    return {"alias": o["model"], "models": models, "x": calc.seq_curve(dict(models)[o["model"]].doc["config"]),
            "modes": calc.CURVE_MODES}


def seq_states(o: dict, data) -> list:
    return [("c9_seq", [model_ref(a)]) for a, _ in _models(o, data)]


def recipes_view(o: dict, data) -> dict:
    gpu = o["gpu"]
    if str(gpu) not in DV.DEVICES:
        raise data.option_error("gpu", "one of the device table's keys " + ", ".join(DV.DEVICES), gpu)
    dev = DV.DEVICES[str(gpu)]
    rows = []
    for alias in o["models"]:
        _, mn = data.model(alias, key="models")
        cells = []
        for recipe in T.RECIPES:
            size = T.training_memory(mn.ledger, recipe=recipe, seq_len=128).part("states")
            cells.append({"text": calc.gb(size), "fits": DV.fits(size, dev)})
        rows.append({"name": mn.name, "params": n(mn.ledger.total), "cells": cells})
    heads = [{"label": calc.RECIPE_ZH[r], "bpp": n(T.bytes_per_param(r))} for r in T.RECIPES]
    return {"rows": rows, "heads": heads, "device": calc.device_label(dev), "marketed": dev.marketed_gb,
            "muon_matrix": n(T.bytes_per_param("muon", "matrix")),
            "muon_other": n(T.bytes_per_param("muon")), "block": n(T.BLOCK_8BIT)}


# Korthikanti et al.'s terms (their section 4.1) in units of s·b·h bytes (or a·s²·b for the score terms), and the
# ledger's tensors each corresponds to in a real block
KORTHIKANTI_TERMS = (
    ("两个 LayerNorm 的输入", 4, 0, ("norm1/", "norm2/")),
    ("QKV 投影的输入", 2, 0, ("attn/in",)),
    ("Q 和 K", 4, 0, ("attn/q", "attn/k", "attn/q_norm/", "attn/k_norm/", "attn/qk_norm/")),
    ("softmax 的输出", 0, 2, ("attn/scores", "attn/lse")),
    ("softmax 后 dropout 的掩码", 0, 1, ("attn/scores_dropout_mask",)),
    ("dropout 之后的概率", 0, 2, ("attn/scores_dropout",)),
    ("V", 2, 0, ("attn/v",)),
    ("输出投影的输入", 2, 0, ("attn/o_in", "attn/gate", "attn/core_out")),
    ("注意力输出的 dropout 掩码", 1, 0, ("attn/out_dropout_mask",)),
    ("MLP 的输入", 2, 0, ("ffn/in",)),
    ("GELU 的输入（4h 宽）", 8, 0, ("ffn/pre_act", "ffn/gate", "ffn/up")),
    ("GELU 的输出（第二个矩阵的输入）", 8, 0, ("ffn/act", "ffn/product")),
    ("MLP 输出的 dropout 掩码", 1, 0, ("ffn/out_dropout_mask",)),
)


def _matches(key: str, prefixes) -> bool:
    return any(key == p or key.startswith(p) if p.endswith("/") else key == p for p in prefixes)


def korthikanti_view(o: dict, data) -> dict:
    _, mn = data.model(o["model"])
    s, b = int(o["seq"]), 1
    a = mn.arch
    layer = mn.ledger.layer_types[0]
    real = T.training_memory(mn.ledger, seq_len=s, micro_batch=b)
    per = {i.key.split("/", 2)[2]: i.per_layer for i in real.items if i.key.startswith(f"activations/{layer}/")}
    rows, used = [], set()
    for label, sbh, score, prefixes in KORTHIKANTI_TERMS:
        theirs = sbh * s * b * a.d_model + score * a.n_heads * s * s * b
        keys = [k for k in per if _matches(k, prefixes)]
        used.update(keys)
        mine = sum(per[k] for k in keys)
        rows.append({"label": label, "theirs": calc.gb(theirs), "mine": calc.gb(mine),
                     "tensors": "、".join(calc.TENSOR_ZH.get(k.rsplit("/", 1)[-1]) or calc.tensor_zh(k) for k in keys)
                     or "没有（不用 dropout）"})
    rest = [k for k in per if k not in used]
    if rest:
        rows.append({"label": "其余", "theirs": calc.gb(0), "mine": calc.gb(sum(per[k] for k in rest)),
                     "tensors": "、".join(calc.tensor_zh(k) for k in rest)})
    formula = T.korthikanti_bytes(s, b, a.d_model, a.n_heads)
    total = sum(per.values())
    return {"name": mn.name, "rows": rows, "s": n(s), "theirs": calc.gb(formula), "mine": calc.gb(total),
            "ratio": pct(Fraction(total, formula)), "d_ff": n(a.d_ff), "h": n(a.d_model), "heads": n(a.n_heads),
            "kv": n(a.n_kv_heads)}


def measured_view(o: dict, data) -> dict:
    doc = stored(data, "train_memory")
    if "baseline" not in doc:
        raise data.option_error("data", "data/train_memory.json with a 'baseline' step (make it with: "
                                "python -m experiments.train.memory)")
    recorded = doc["baseline"]
    _, mn = data.model(o["model"])
    if mn.id != "baseline":
        raise data.option_error("model", "the course baseline (the recorded step is the baseline's)", o["model"])
    x = calc.compare_rows(recorded, mn.doc["config"])
    for key, choices in (("batches", calc.BATCHES), ("seqs", calc.MEASURE_SEQS)):
        if not o[key] or any(str(v) not in choices for v in o[key]):
            raise data.option_error(key, "values among " + ", ".join(choices), o[key])
    return {"x": x, "batches": [str(v) for v in o["batches"]], "seqs": [str(v) for v in o["seqs"]],
            "batch": x["batch"], "seq": x["seq"], "platform": doc.get("platform", ""), "alias": o["model"]}


def measured_states(o: dict, data) -> list:
    """The ledger's column for every batch and length the selects offer (the measured one waits for the button)."""
    return [("c9_predicted", [model_ref(o["model"]), str(b), str(s)]) for b in o["batches"] for s in o["seqs"]]
