"""Lesson C8's widgets: "break it, then fix it" and the table of stability devices in the course's configs.

break_fix_view embeds the precomputed run of every toggle setting (data/train_stability.json): the page switches
between them with no Python. train_start / train_step run the same setting live in the page's training worker
(script.js over training.js), one step per message, with the very code that made the stored
runs: on the same seed the live numbers are the stored ones within float32 rounding.
"""
from __future__ import annotations

import math

from ...format import n
from ...labels import tensor_label
from ...toolkit.stored import stored
from ...widget import uses
from . import calc

TOGGLE_ZH = {"warmup": "学习率预热", "post_ln": "Post-LN（归一化放在残差相加之后）", "qk_norm": "QK-norm",
             "qk_clip": "QK-Clip", "z_loss": "z-loss", "softcap": "logit 软封顶"}
SERIES = (("loss", "训练 loss（nats/字）", False), ("grad_norm", "梯度全局范数（裁剪前）", True),
          ("max_attn_logit", "注意力 logit 的最大值", True))
EVERY = 3                       # the page's charts take every 3rd step (and the last)
MAX_STEPS_PER_CALL = 20


def num_text(x, digits: int = 3) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def toggle_label(runs: dict, name: str) -> str:
    extra = {"warmup": f"（{runs['warmup']} 步）", "qk_clip": f"（τ = {runs['tau']:g}）",
             "z_loss": f"（系数 {runs['z_loss']:g}）", "softcap": "（注意力 {:g}、输出 {:g}）".format(*runs["caps"])}
    return TOGGLE_ZH[name] + extra.get(name, "")


def qk_clips(r: dict) -> str:
    """How many (step, head) pairs QK-Clip rescaled in a run: 未打开 when it was off, and why it changed nothing when
    it was on and never fired (with QK-norm on the logits stay under τ: the run is the one without it; issue #49)."""
    if not r["spec"]["model"]["qk_clip"]:
        return "未打开"
    k = r["qk_clipped_heads"]
    return n(k) if k else "0（注意力 logit 从没超过 τ，它一次也没动手，结果和不开一样）"


def run_summary(r: dict, clip: float) -> dict:
    """What the readout shows for one run, as text; with the tensors whose gradients were largest at the step of
    the largest global norm."""
    step, top = calc.spike_tensors(r)
    return {"max_logit": num_text(calc.peak(r["max_attn_logit"])), "loss": num_text(calc.final(r["loss"]), 4),
            "held_out": num_text(r["eval_loss"], 4), "log_z": num_text(calc.final(r["log_z"]), 3),
            "grad_peak": num_text(calc.peak(r["grad_norm"])), "spikes": str(calc.spikes(r["grad_norm"], clip)),
            "spike_step": str(step), "qk_clips": qk_clips(r),
            "spike_top": [{"tensor": tensor_label(name), "norm": num_text(g, 3), "share": f"{share * 100:.1f}%"}
                          for name, g, share in top]}


def _thin(series: list) -> tuple[list, list]:
    idx = list(range(0, len(series), EVERY))
    if idx and idx[-1] != len(series) - 1:
        idx.append(len(series) - 1)
    return [i + 1 for i in idx], [series[i] for i in idx]


def break_fix_tables(runs: dict) -> dict:
    """key -> {summary, series: {metric: {x, y}}} for every run of the grid."""
    out = {}
    for key, r in runs["grid"].items():
        series = {}
        for metric, _, _ in SERIES:
            x, y = _thin(r[metric])
            series[metric] = {"x": x, "y": y, "t": [num_text(v, 4) for v in y]}
        out[key] = {"summary": run_summary(r, r["spec"]["clip"]), "series": series}
    return out


def _series(name: str, color: str, s: dict) -> dict:
    """A chart series from a table's {x, y, t} (the hover text reads "name 第 k 步：value")."""
    return {"name": name, "color": color, "x": s["x"], "y": s["y"],
            "text": [f"{name} 第 {x} 步：{t}" for x, t in zip(s["x"], s["t"])]}


def chart_spec(metric: str, title: str, log: bool, runs_series: list) -> dict:
    spec: dict = {"kind": "xy", "title": title, "xtitle": "训练步", "ytitle": title, "series": runs_series}
    if log:
        spec["ylog"] = True
    return spec


def break_fix_view(o: dict, data) -> dict:
    from ...train.runs import TEXT_FILE
    runs = stored(data, "train_stability")
    toggles = runs["toggles"]
    for name in toggles:
        if o[name] not in (0, 1):
            raise data.option_error(name, "0 or 1", o[name])
    key = "-".join(f"{t}{int(o[t])}" for t in toggles)
    off = "-".join(f"{t}0" for t in toggles)
    tables = break_fix_tables(runs)
    charts = []
    for metric, title, log in SERIES:
        series = [_series("不加任何措施（预先算好）", "#7f7f7f", tables[off]["series"][metric]),
                  _series("当前开关（预先算好）", "#1f77b4", tables[key]["series"][metric])]
        charts.append({"metric": metric, "title": title, "spec": chart_spec(metric, title, log, series)})
    from ...train.model import ModelConfig, param_count
    spec = runs["grid"][off]["spec"]
    m = spec["model"]
    V, d, L, F = m["vocab_size"], m["d_model"], m["n_layers"], m["d_ff"]
    return {"tables": tables, "toggles": [(t, toggle_label(runs, t), int(o[t])) for t in toggles], "names": toggles,
            "tail": calc.TAIL,
            "key": key, "off": off, "x": tables[key]["summary"], "off_x": tables[off]["summary"],
            "charts": charts, "steps": runs["steps"], "lr": f"{runs['lr']:g}", "lr_factor": runs["lr_factor"],
            "model": {"d": d, "L": L, "h": m["n_heads"], "kv": m["n_kv_heads"], "d_ff": F, "V": V},
            "params": n(param_count(ModelConfig(**m))), "text_path": TEXT_FILE}


# -- the live run --------------------------------------------------------------------------------------------------
_SESSION: dict = {}


@uses("numpy")
def train_start(text: str, toggles: dict, seed: int = 0) -> dict:
    """A fresh live run of one grid setting (toggles: name -> 0/1, every toggle of the grid): its session id and the
    tokens each step trains on (the panel's speed)."""
    from ...train import runs_stability as S
    from ...train.data import course_ids
    from ...train.trainer import Trainer
    names = [t for t, _ in S.TOGGLES]
    if not isinstance(toggles, dict) or sorted(toggles) != sorted(names) or \
            any(v not in (0, 1) for v in toggles.values()):
        raise ValueError(f"开关：应为 {'、'.join(names)} 各取 0 或 1，实际是 {toggles!r}")
    tok, train_ids, _ = course_ids(text)
    spec = S.spec(toggles, tok.vocab_size)
    if seed:
        from dataclasses import replace
        spec = replace(spec, seed=int(seed))
    sid = _SESSION.get("id", 0) + 1
    _SESSION.clear()                         # one live run at a time
    _SESSION.update(id=sid, trainer=Trainer(spec, train_ids), total=S.STEPS, key=S.key(toggles))
    return {"session": sid, "key": _SESSION["key"], "steps": S.STEPS, "tokens_per_step": spec.batch_size * spec.seq_len}


@uses("numpy")
def train_step(session: int, steps: int = 1) -> dict:
    """Up to `steps` more steps of the live run: per step its loss, gradient norm, max attention logit, log Z
    (raw floats, None when not finite) and their text."""
    import numpy as np
    if _SESSION.get("id") != session:
        raise ValueError("这次训练已被重置，请重新开始。")
    tr = _SESSION["trainer"]
    rows: list[dict] = []
    with np.errstate(over="ignore", invalid="ignore"):
        while len(rows) < max(1, min(int(steps), MAX_STEPS_PER_CALL)) and tr.step_index < _SESSION["total"]:
            d = tr.step(detail=False)
            row = {"step": d["step"]}
            for k in ("loss", "grad_norm", "max_attn_logit", "log_z_mean"):
                row[k] = d[k] if math.isfinite(d[k]) else None
                row[k + "_text"] = num_text(d[k], 4)
            rows.append(row)
            if row["loss"] is None:
                break
    done = tr.step_index >= _SESSION["total"] or (bool(rows) and rows[-1]["loss"] is None)
    return {"steps": rows, "done": done}


# -- which models use which device -----------------------------------------------------------------------------------
def devices_rows(models) -> list[dict]:
    rows = []
    for _alias, mn in models:
        dev = calc.devices(mn.doc["config"], mn.ledger)
        rows.append({"name": mn.name,
                     "qk_norm": f"有，每层 {n(dev['qk_norm_per_layer'])} 个参数" if dev["qk_norm_per_layer"] else "无",
                     "softcap": (f"注意力 {dev['attn_softcap']:g}、输出 {dev['final_softcap']:g}"
                                 if dev["attn_softcap"] is not None else "无"),
                     "norms": "子层前后各一个（夹心归一化）" if dev["sandwich_norm"] else "子层之前（Pre-LN）",
                     "init": f"{dev['init_std']:g}" if dev["init_std"] is not None else "未写"})
    return rows


def devices_view(o: dict, data) -> dict:
    return {"rows": devices_rows(data.choices())}


# -- final loss against learning rate (data/train_lr_sweep.json) -----------------------------------------------------
FIX_ZH = {"none": "不加措施", "warmup": "只开预热", "qk_norm": "只开 QK-norm", "z_loss": "只开 z-loss",
          "softcap": "只开软封顶", "qk_clip": "只开 QK-Clip", "all": "全部措施一起开"}
DEPTH_ZH = {"post": "Post-LN、不预热", "post_warmup": "Post-LN、预热", "pre": "Pre-LN、不预热"}
COLORS = ("#7f7f7f", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#d62728")


def lr_sweep_chart(doc: dict) -> dict:
    """Final loss against peak lr, one line per fix (log x), each point the mean over seeds (calc.lr_curve)."""
    series = []
    for (fix, _), color in zip(doc["fixes"].items(), COLORS):
        curve = calc.lr_curve(doc["sweep"], fix, doc["lr_exponents"], doc["seeds"])
        text = [f"{FIX_ZH[fix]}，学习率 {lr:.2g}：{num_text(v, 4)}" for lr, v in zip(doc["lrs"], curve)]
        series.append({"name": FIX_ZH[fix], "color": color, "mode": "lines+markers", "x": doc["lrs"], "y": curve,
                       "text": text})
    return {"kind": "xy", "title": "最终 loss 与学习率", "xtitle": "峰值学习率（对数刻度）",
            "ytitle": "训练结束时留出文本上的 loss（nats/字）", "xlog": True, "series": series}


def depth_rows(doc: dict) -> list[dict]:
    """The deeper model's table: per setting, each lr's final loss averaged over seeds (calc.mean_final)."""
    deep = doc["depth"]
    rows = []
    for name in deep["settings"]:
        cells = [num_text(calc.mean_final(deep["runs"], f"{name}:{lr:g}", doc["seeds"]), 4) for lr in deep["lrs"]]
        rows.append({"name": DEPTH_ZH[name], "cells": cells})
    return rows


def lr_sweep_view(o: dict, data) -> dict:
    doc = stored(data, "train_lr_sweep")
    m, deep = doc["sweep"][f"none:{doc['lr_exponents'][0]}:{doc['seeds'][0]}"]["spec"]["model"], doc["depth"]
    return {"sweep_chart": lr_sweep_chart(doc), "steps": doc["steps"], "seeds": len(doc["seeds"]),
            "model": {"d": m["d_model"], "L": m["n_layers"]},
            "deep": {"d": deep["model"]["d_model"], "L": deep["model"]["n_layers"], "warmup": doc["warmup"],
                     "lrs": [f"{lr:g}" for lr in deep["lrs"]], "rows": depth_rows(doc)}}
