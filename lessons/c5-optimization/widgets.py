"""Lesson C5's widgets: what each shows, as JSON-ready data, and the training worker's entry points.

Build-time views read the precomputed runs (data/train_runs.json, made by `python -m experiments.train.runs`)
and the schedules (experiments.train.schedule); the race and the schedule explorer are entry points whose every
stop the build answers (states), the race's from the stored runs (sent as a data_ref placeholder); every string a
learner reads is formatted here. The live run and
the first-step panel run in the page's training worker (script.js, a worker of its own), which
calls train_start / train_step / first_step below with the course's text, one step per message: the very code
that made the precomputed runs.
"""
from __future__ import annotations

import math

from ...format import n
from ...labels import tensor_label
from ...toolkit.live_run import loss_text
from ...toolkit.stored import stored
from ...widget import data_ref, uses

OPT_ZH = {"sgd": "SGD（动量）", "adam": "Adam", "adamw": "AdamW", "muon": "Muon"}
COLORS = {"sgd": "#8c564b", "adam": "#ff7f0e", "adamw": "#1f77b4", "muon": "#2ca02c", "live": "#d62728",
          "warmup30": "#1f77b4", "warmup0": "#9467bd"}
KIND_ZH = {"constant": "恒定", "cosine": "预热 + 余弦", "wsd": "WSD（预热-平稳-衰减）",
           "multistep": "DeepSeek 多段阶梯", "minimind": "minimind 的余弦（无预热）"}
RUN_ZH = {"warmup30": "基线 · AdamW · 预热 30 步", "warmup0": "基线 · AdamW · 不预热"}
SCHEDULE_WARMUPS = (0, 15, 30)          # warmup steps offered by the schedule explorer (of 300)
SCHEDULE_STEPS = 300
LIVE_LR = {"sgd": 0.5, "adam": 3e-3, "adamw": 3e-3, "muon": 3e-3}     # = experiments.train.runs.RACE_LR
LIVE_MULTIPLIERS = (-3, -2, -1, 0, 1, 2, 3)
MAX_LIVE_STEPS = 2000
MAX_STEPS_PER_CALL = 20
SPEAK_PROMPT, SPEAK_SETTINGS = "子曰：“", (0.8, 0, 0.95, 0)    # temperature, top-k, top-p, seed (lesson C2)
SPEAK_EVERY = 25                                                 # the page asks for a continuation this often


def lr_text(x: float) -> str:
    """3e-3 -> '3×10⁻³'; 0.5 -> '0.5'."""
    if x >= 0.01:
        return f"{x:.3g}"
    e = math.floor(math.log10(x))
    m = x / 10 ** e
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    mant = f"{m:.2g}"
    return (f"{mant}×" if mant != "1" else "") + "10" + str(e).translate(sup)


def multiplier_text(k: int) -> str:
    return "×1" if k == 0 else (f"×{3 ** k}" if k > 0 else f"×1/{3 ** -k}")


def _every(seq, k):
    """Indices 0, k, 2k, ... and the last one."""
    idx = list(range(0, len(seq), k))
    if idx and idx[-1] != len(seq) - 1:
        idx.append(len(seq) - 1)
    return idx


# -- optimiser race (the stored runs: the same seed and batches, each optimiser at its usual lr x 3^k) -------------
def race(multiplier: int, stored: dict) -> dict:
    """The race at one multiplier (lr = each optimiser's usual value x 3^multiplier), from the stored race of
    data/train_runs.json (`stored`, its "race" part): the slider's label, the table's rows and the chart."""
    if not isinstance(stored, dict) or not isinstance(stored.get("runs"), dict):
        raise ValueError("赛跑记录：应为课程预先算好的训练记录里的 race 一节")
    if isinstance(multiplier, bool) or multiplier not in stored.get("multipliers", ()):
        raise ValueError(f"学习率倍数：应为 {stored.get('multipliers')} 之一，实际是 {multiplier!r}")
    k = int(multiplier)
    series, rows = [], []
    for name in stored["lr"]:
        r = stored["runs"][f"{name}:{k}"]
        loss = r["loss"]
        idx = _every(loss, 2)
        lr = lr_text(r["lr"])
        series.append({"name": f"{OPT_ZH[name]} lr {lr}", "color": COLORS[name], "x": [i + 1 for i in idx],
                       "y": [loss[i] for i in idx],
                       "text": [f"{OPT_ZH[name]} 第 {i + 1} 步：{loss_text(loss[i])}" for i in idx]})
        last = [v for v in loss[-10:] if v is not None]
        rows.append({"name": OPT_ZH[name], "lr": lr,
                     "final": "发散（第 " + str(r["diverged_at"]) + " 步出现非有限值）" if r["diverged_at"]
                     else loss_text(sum(last) / len(last)),
                     "held_out": loss_text(r["eval_loss"][-1]) if r["eval_loss"] else "—"})
    return {"label": multiplier_text(k), "rows": rows,
            "chart": {"kind": "xy", "title": f"四种优化器，学习率为各自常用值的 {multiplier_text(k)}",
                      "xtitle": "训练步", "ytitle": "训练 loss（nats/字）", "series": series}}


RACE_RUNS = data_ref("train_runs/race")     # what the race's calls send: the stored race (the build's, or fetched)


def race_view(o: dict, data) -> dict:
    runs = stored(data, "train_runs")
    ks = runs["race"]["multipliers"]
    k = int(o["multiplier"])
    if k not in ks:
        raise data.option_error("multiplier", f"one of {ks}", k)
    return {"ks": ks, "k": k, "index": ks.index(k), "x": race(k, runs["race"]), "runs_ref": RACE_RUNS,
            "steps": runs["race"]["steps"], "batch": runs["baseline"]["warmup0"]["spec"]["batch_size"],
            "seq": runs["baseline"]["warmup0"]["spec"]["seq_len"]}


def race_states(o: dict, data) -> list:
    """Every stop of the lr slider (the race's one control), answered by the build from the stored runs."""
    return [("c5_race", [k, RACE_RUNS]) for k in stored(data, "train_runs")["race"]["multipliers"]]


# -- schedule explorer (the trainer's own Schedule, computed in Python) --------------------------------------------
SCHEDULE_PEAK = 3e-3


def schedule(kind: str, warmup) -> dict:
    """One schedule of the explorer: `kind` (experiments.train.schedule.KINDS) over SCHEDULE_STEPS steps at peak
    SCHEDULE_PEAK with `warmup` steps of warmup (one of SCHEDULE_WARMUPS, as the picker's text or a number)."""
    from ...train.schedule import KINDS, Schedule
    if kind not in KINDS:
        raise ValueError(f"调度：应为 {'、'.join(KINDS)} 之一，实际是 {kind!r}")
    try:
        w = int(str(warmup))
    except ValueError:
        w = None
    if w not in SCHEDULE_WARMUPS:
        raise ValueError(f"预热步数：应为 {'、'.join(map(str, SCHEDULE_WARMUPS))} 之一，实际是 {warmup!r}")
    # (the chart's values to 6 significant digits: Pyodide's libm may differ from CPython's in the last bit of a
    # cosine, and the build's answer and the browser's must be the same)
    curve = Schedule(kind, SCHEDULE_PEAK, SCHEDULE_STEPS, w, 0.1, 0.2).validate().curve()
    idx = _every(curve, 5)
    warm = "（本身不预热）" if kind == "minimind" else (f"，预热 {w} 步" if w else "，不预热")
    return {"label": KIND_ZH[kind] + warm,
            "first": lr_text(curve[0]), "peak": lr_text(max(curve)), "last": lr_text(curve[-1]),
            "mean_share": f"{100 * sum(curve) / (len(curve) * SCHEDULE_PEAK):.0f}%",
            "chart": {"kind": "xy", "title": f"学习率：{KIND_ZH[kind]}{warm}", "xtitle": "训练步",
                      "ytitle": "学习率", "series": [{"name": KIND_ZH[kind], "color": "#1f77b4",
                                                      "x": [i + 1 for i in idx],
                                                      "y": [float(f"{curve[i]:.6g}") for i in idx],
                                                      "text": [f"第 {i + 1} 步：{lr_text(curve[i])}"
                                                               for i in idx]}]}}


def schedule_view(o: dict, data) -> dict:
    from ...train.schedule import KINDS
    if o["kind"] not in KINDS:
        raise data.option_error("kind", f"one of {list(KINDS)}", o["kind"])
    if o["warmup"] not in SCHEDULE_WARMUPS:
        raise data.option_error("warmup", f"one of {list(SCHEDULE_WARMUPS)}", o["warmup"])
    return {"kinds": [(k, KIND_ZH[k]) for k in KINDS], "warmups": SCHEDULE_WARMUPS, "kind": o["kind"],
            "warmup": int(o["warmup"]), "x": schedule(o["kind"], o["warmup"]), "total": SCHEDULE_STEPS,
            "peak": lr_text(SCHEDULE_PEAK)}


def schedule_states(o: dict, data) -> list:
    """Each schedule with the built warmup, and each warmup with the built schedule (the pickers' neighbours),
    as the pickers send them (text); the other pairs are Python's."""
    from ...train.schedule import KINDS
    pairs = [(k, o["warmup"]) for k in KINDS] + [(o["kind"], w) for w in SCHEDULE_WARMUPS]
    return [("c5_schedule", [k, str(w)]) for k, w in dict.fromkeys(pairs)]


# -- first step at the baseline size --------------------------------------------------------------------------------
def percent(r: float) -> str:
    """15.0%, 0.42%, 0.0031%: one decimal from 1% up, two significant digits below (SGD's steps are tiny)."""
    p = 100 * r
    if p >= 1 or p == 0:
        return f"{p:.1f}%"
    return f"{p:.{1 - math.floor(math.log10(p))}f}%"


def first_step_rows(update_ratio: dict, shapes: dict, stds: dict) -> list[dict]:
    rows = []
    for name, r in update_ratio.items():
        if len(shapes[name]) != 2:
            continue
        tied = "（与输出层共享）" if name == "embed_tokens.weight" else ""   # the baseline ties its embedding
        rows.append({"name": tensor_label(name) + tied, "shape": " × ".join(str(s) for s in shapes[name]),
                     "std": f"{stds[name]:.5f}".rstrip("0"), "ratio": percent(r)})
    return rows


def _baseline_shapes():
    from ...train import model as M
    from ...train.runs import BASELINE
    cfg = M.ModelConfig.from_hf(BASELINE)
    shapes = M.param_shapes(cfg)
    return cfg, shapes, {k: M.init_std(cfg, k) for k in shapes}


def first_step_view(o: dict, data) -> dict:
    runs = stored(data, "train_runs")
    r = runs["baseline"]["warmup0"]
    cfg, shapes, stds = _baseline_shapes()
    return {"rows": first_step_rows(r["first_step"]["update_ratio"], shapes, stds), "optimizer": "adamw",
            "text_path": runs["text"]["file"],
            "options": [(k, v) for k, v in OPT_ZH.items()], "lr": lr_text(r["spec"]["schedule"]["peak"]),
            "params": n(sum(math.prod(s) for s in shapes.values()))}


@uses("numpy")
def first_step(text: str, optimizer: str = "adamw", lr: float = 3e-3) -> dict:
    """One step from the baseline's initial weights on the first batch of the course's text (as the
    precomputed run takes it), with `optimizer` at a constant `lr`: update RMS / weight RMS per weight matrix."""
    from ...train import trainer as T
    from ...train.data import course_ids
    from ...train.runs import HYPER, baseline_specs
    from ...train.schedule import Schedule
    if optimizer not in OPT_ZH:
        raise ValueError(f"优化器：应为 {'、'.join(OPT_ZH)} 之一，实际是 {optimizer!r}")
    if not (isinstance(lr, (int, float)) and 0 < lr <= 10):
        raise ValueError(f"学习率：应为 0 到 10 之间的正数，实际是 {lr!r}")
    tok, train_ids, _ = course_ids(text)
    base = baseline_specs(tok.vocab_size)["warmup0"]
    spec = T.RunSpec(model=base.model, optimizer=optimizer, hyper=HYPER[optimizer],
                     schedule=Schedule("constant", float(lr), 1, 0), batch_size=base.batch_size,
                     seq_len=base.seq_len, clip=base.clip, seed=base.seed)
    d = T.Trainer(spec, train_ids).step()
    _, shapes, stds = _baseline_shapes()
    return {"rows": first_step_rows(d["update_ratio"], shapes, stds), "optimizer": OPT_ZH[optimizer],
            "lr": lr_text(lr), "loss": loss_text(d["loss"])}


# -- the live run ------------------------------------------------------------------------------------------------------
def live_view(o: dict, data) -> dict:
    runs = stored(data, "train_runs")
    series = []
    for key in ("warmup30", "warmup0"):
        r = runs["baseline"][key]
        idx = _every(r["loss"], 3)
        series.append({"name": RUN_ZH[key] + "（预先算好）", "color": COLORS[key], "x": [i + 1 for i in idx],
                       "y": [r["loss"][i] for i in idx],
                       "text": [f"{RUN_ZH[key]} 第 {i + 1} 步：{loss_text(r['loss'][i])}" for i in idx]})
    chart = {"kind": "xy", "title": "训练 loss：基线与你的小模型", "xtitle": "训练步",
             "ytitle": "训练 loss（nats/字）", "series": series}
    from ...train.model import param_count
    from ...train.runs import LIVE, live_config
    text = runs["text"]
    live = {"d": LIVE["d_model"], "L": LIVE["n_layers"], "h": LIVE["n_heads"], "kv": LIVE["n_kv_heads"],
            "d_ff": LIVE["d_ff"],
            "V": text["vocab_size"]}
    params = param_count(live_config(live["V"]))
    return {"spec": chart, "live": live, "text_path": text["file"], "params": n(params),
            "options": [(k, v) for k, v in OPT_ZH.items()],
            "multipliers": [(k, multiplier_text(k)) for k in LIVE_MULTIPLIERS], "optimizer": o["optimizer"],
            "multiplier": int(o["multiplier"]), "max_steps": MAX_LIVE_STEPS,
            "baseline_final": loss_text(runs["baseline"]["warmup30"]["loss"][-1]),
            "baseline_steps": len(runs["baseline"]["warmup30"]["loss"]),
            "chars": n(text["characters"]), "vocab": n(text["vocab_size"]), "speak_every": SPEAK_EVERY,
            "speak_prompt": SPEAK_PROMPT}


_SESSIONS: dict[int, dict] = {}


@uses("numpy")
def train_start(text: str, optimizer: str = "adamw", multiplier: int = 0, seed: int = 0) -> dict:
    """A fresh live run (the race's small model and schedule, steps up to MAX_LIVE_STEPS): its session id and the
    tokens each step trains on (the panel's speed)."""
    from ...train import trainer as T
    from ...train.data import course_ids
    from ...train.runs import HYPER, RACE_LR, live_config
    from ...train.schedule import Schedule
    if optimizer not in OPT_ZH:
        raise ValueError(f"优化器：应为 {'、'.join(OPT_ZH)} 之一，实际是 {optimizer!r}")
    if multiplier not in LIVE_MULTIPLIERS:
        raise ValueError(f"学习率倍数：应为 {list(LIVE_MULTIPLIERS)} 之一，实际是 {multiplier!r}")
    tok, train_ids, held = course_ids(text)
    lr = RACE_LR[optimizer] * 3.0 ** multiplier
    spec = T.RunSpec(model=live_config(tok.vocab_size), optimizer=optimizer, hyper=HYPER[optimizer],
                     schedule=Schedule("cosine", lr, MAX_LIVE_STEPS, 10, 0.1), batch_size=4, seq_len=32,
                     clip=1.0, seed=int(seed))
    sid = max(_SESSIONS, default=0) + 1
    _SESSIONS.clear()                       # one live run at a time: a reset drops the previous weights
    _SESSIONS[sid] = {"trainer": T.Trainer(spec, train_ids), "held": held, "tok": tok}
    return {"session": sid, "optimizer": OPT_ZH[optimizer], "lr": lr_text(lr),
            "tokens_per_step": spec.batch_size * spec.seq_len}


@uses("numpy")
def train_step(session: int, steps: int = 1) -> dict:
    """`steps` more steps of a live run: each step's number, loss (raw and as shown) and lr; the held-out loss
    every 50 steps."""
    import numpy as np
    run = _SESSIONS.get(session)
    if run is None:
        raise ValueError("这次训练已被重置，请重新开始。")
    tr = run["trainer"]
    steps = max(1, min(int(steps), MAX_STEPS_PER_CALL))
    out = []
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            if tr.step_index >= MAX_LIVE_STEPS:
                break
            d = tr.step(detail=False)
            finite = math.isfinite(d["loss"])
            row = {"step": d["step"], "loss": d["loss"] if finite else None, "loss_text": loss_text(d["loss"]),
                   "lr": lr_text(d["lr"]), "grad_norm": f"{d['grad_norm']:.3g}" if finite else "—"}
            if finite and d["step"] % 50 == 0:
                v = tr.evaluate(run["held"])
                row["held_out"], row["held_out_text"] = (v if math.isfinite(v) else None), loss_text(v)
            out.append(row)
            if not finite:
                break
    return {"steps": out, "done": tr.step_index >= MAX_LIVE_STEPS or not out or out[-1]["loss"] is None}




@uses("numpy")
def train_speak(session: int) -> dict:
    """The live model's continuation of SPEAK_PROMPT as it is now (experiments.toolkit.speak: lesson C2's sampling),
    so the learner sees the text it would write at this step."""
    from ...toolkit.speak import speak
    run = _SESSIONS.get(session)
    if run is None:
        raise ValueError("这次训练已被重置，请重新开始。")
    tr = run["trainer"]
    out = speak(tr.params, tr.spec.model, run["tok"], SPEAK_PROMPT, *SPEAK_SETTINGS, n_new=30,
                context=tr.spec.seq_len)
    return {"step": tr.step_index, "line": f"第 {tr.step_index} 步：{out['prompt']}{out['text']}"}
