"""Lesson C1's widget c1-fair (part ⑤): the same model trained on characters and on the course's BPE tokens at the
same compute, compared in bits per character on the held-out passages. The build draws the stored group
(data/train_bpe.json, experiments/train/runs_bpe.py: what is trained and measured, and why that is the same
compute); the page reruns its seed 0 in the training worker (script.js, the shared training panel) with the group's
own trainers() and advance(), one step of each model per step, so its evaluations are the stored ones.
Every string a learner reads is formatted here.
"""
from __future__ import annotations

from statistics import mean

from ...format import n
from ...toolkit.stored import stored
from ...widget import uses

ROUND = 5                                  # steps (of each model) per request of the page's rerun
NAMES = {"char": "按字", "bpe": "按 BPE token"}
COLOURS = {"char": "#1f77b4", "bpe": "#ff7f0e"}         # the page's live curves
STORED_COLOURS = {"char": "#9ecae1", "bpe": "#fdbe85"}  # the build's curves, lighter

_RUN: dict = {}


def bits_text(b: float) -> str:
    return f"{b:.3f}"


def view(o: dict, data) -> dict:
    from ...train.runs_bpe import KINDS
    doc = stored(data, "train_bpe")
    chars, nbytes = doc["held_out"]["characters"], doc["held_out"]["bytes"]
    rows, series = [], []
    for kind in KINDS:
        k = doc[kind]
        bpc = [r["bits_per_char"] for r in k["runs"]]
        rows.append({"name": NAMES[kind], "V": n(k["vocab_size"]), "params": n(k["params"]),
                     "train": n(k["train_tokens"]), "held": n(k["held_out_tokens"]),
                     "cpt": f"{chars / k['held_out_tokens']:.2f}", "seeds": "、".join(bits_text(b) for b in bpc),
                     "bpc": bits_text(mean(bpc)), "bpb": bits_text(mean(r["bits_per_byte"] for r in k["runs"]))})
        first = k["runs"][0]["eval"]
        series.append({"name": f"{NAMES[kind]}（构建时，种子 {doc['seeds'][0]}）", "color": STORED_COLOURS[kind],
                       "x": [s for s, _ in first], "y": [b for _, b in first],
                       "text": [f"{NAMES[kind]} 第 {s} 步：每字 {bits_text(b)} 比特" for s, b in first]})
    spec = doc["spec"]
    chart = {"kind": "xy", "title": "留出文本上的每字比特数（越低越好）", "xtitle": "训练步（两个模型各走一步）",
             "ytitle": "每字比特（bits/char）", "series": series}
    return {"rows": rows, "spec": chart, "text_path": doc["text"]["file"], "steps": n(spec["schedule"]["total"]),
            "batch": spec["batch_size"], "seq": spec["seq_len"], "chars": n(chars), "bytes": n(nbytes),
            "every": doc["eval_every"], "seeds": len(doc["seeds"]), "seed": doc["seeds"][0], "merges": n(doc["merges"]),
            "colours": COLOURS, "names": NAMES}


# -- the page's rerun of seed 0: one session at a time -------------------------------------------------------------
def reset() -> None:
    """Forget the rerun (the next start() begins a fresh one)."""
    _RUN.clear()


@uses("numpy")
def start(text: str, steps=None, eval_every=None) -> dict:
    """A fresh rerun of the group's seed 0 on the course text (both cuts, both models): its session and the tokens
    each step trains on (both models' batches, the panel's speed)."""
    from ...train import runs_bpe as R
    steps = R.STEPS if steps is None else int(steps)
    every = R.EVAL_EVERY if eval_every is None else int(eval_every)
    cut = R.tokenizations(text)
    sid = _RUN.get("id", 0) + 1
    reset()
    _RUN.update(id=sid, cut=cut, models=R.trainers(cut, R.SEEDS[0], steps), steps=steps, every=every)
    return {"session": sid, "tokens_per_step": len(R.KINDS) * R.BATCH * R.SEQ}


@uses("numpy")
def step(session, rounds=1) -> dict:
    """ROUND × rounds more steps of both models: per step its number and, at an evaluation, each model's held-out
    bits per character (and its text)."""
    from ...train import runs_bpe as R
    if _RUN.get("id") != session:
        raise ValueError("这次重跑已被重置，请重新开始。")
    models, cut = _RUN["models"], _RUN["cut"]
    rows = []
    for _ in range(ROUND * max(1, min(int(rounds), 5))):
        if models["char"].step_index >= _RUN["steps"]:
            break
        row = R.advance(models, cut, _RUN["every"])
        for kind in R.KINDS:
            if kind in row:
                row[kind] = R.sig(R.bits(row[kind], cut["held_chars"]))
                row[kind + "_text"] = bits_text(row[kind])
        rows.append(row)
    return {"steps": rows, "done": models["char"].step_index >= _RUN["steps"]}


# -- the lesson's numbers (c1.fair.*) --------------------------------------------------------------------------------
SOURCE = ("课程的训练器在课程文本上各训练一遍（按字、按本课的 BPE；构建时算出，"
          "每字比特 = 留出文本的总损失 ÷ (ln 2 × 字数)）")


def register(reg, data) -> None:
    """The comparison's settings and results from data/train_bpe.json: per kind its tokens, its held-out bits per
    character and per byte (the mean over the seeds) and their spread over the seeds (largest less smallest)."""
    from ...toolkit.stored import document
    from ...train.runs_bpe import KINDS
    doc = document(data, "train_bpe")
    src = (SOURCE,)
    spec = doc["spec"]
    reg.add("c1.fair.steps", "对比里每个模型训练的步数", value=spec["schedule"]["total"], sources=src, kind="value")
    reg.add("c1.fair.batch", "对比里每步的段数", value=spec["batch_size"], sources=src, kind="value")
    reg.add("c1.fair.seq", "对比里每段的 token 数", value=spec["seq_len"], sources=src, kind="value")
    reg.add("c1.fair.seeds", "对比重复的随机种子数", value=len(doc["seeds"]), sources=src, kind="value")
    reg.add("c1.fair.d", "对比用的模型的隐藏维 d", value=spec["model"]["d_model"], sources=src, kind="config")
    reg.add("c1.fair.layers", "对比用的模型的层数", value=spec["model"]["n_layers"], sources=src, kind="config")
    reg.add("c1.fair.merges", "对比用的 BPE 的合并次数（词表与字表一样大）", value=doc["merges"], sources=src)
    reg.add("c1.fair.vocab", "对比里两种切法共同的词表大小", value=doc["char"]["vocab_size"], sources=src)
    reg.add("c1.fair.held_chars", "留出文本的字数", value=doc["held_out"]["characters"], sources=src)
    reg.add("c1.fair.held_bytes", "留出文本的 UTF-8 字节数", value=doc["held_out"]["bytes"], sources=src)
    names = {"char": "按字", "bpe": "按 BPE token"}
    for kind in KINDS:
        k, p, name = doc[kind], f"c1.fair.{kind}", names[kind]
        reg.add(f"{p}.params", f"{name}训练的模型的参数量", value=k["params"], sources=src)
        reg.add(f"{p}.train_tokens", f"{name}切出的训练文本 token 数", value=k["train_tokens"], sources=src)
        reg.add(f"{p}.held_tokens", f"{name}切出的留出文本 token 数", value=k["held_out_tokens"], sources=src)
        bpc = [r["bits_per_char"] for r in k["runs"]]
        reg.add(f"{p}.bpc", f"{name}训练的模型在留出文本上的每字比特（各种子平均）", value=mean(bpc), sources=src,
                kind="measured", style="x2")
        reg.add(f"{p}.bpb", f"{name}训练的模型在留出文本上的每字节比特（各种子平均）",
                value=mean(r["bits_per_byte"] for r in k["runs"]), sources=src, kind="measured", style="x2")
        reg.add(f"{p}.spread", f"{name}的每字比特在各种子间的极差", value=max(bpc) - min(bpc), sources=src,
                kind="measured", style="x2")
    held_cpt = doc["held_out"]["characters"] / doc["bpe"]["held_out_tokens"]
    reg.add("c1.fair.bpe.cpt", "BPE 在留出文本上平均每个 token 的字数", value=held_cpt, sources=src, kind="ratio",
            style="x2")
    reg.add("c1.fair.bpe.train_cpt", "BPE 在训练文本上平均每个 token 的字数",
            value=doc["char"]["train_tokens"] / doc["bpe"]["train_tokens"], sources=src, kind="ratio", style="x2")
    reg.add("c1.fair.gap", "两种切法的每字比特之差（BPE 减按字）",
            value=mean(r["bits_per_char"] for r in doc["bpe"]["runs"])
            - mean(r["bits_per_char"] for r in doc["char"]["runs"]), sources=src, kind="measured", style="x2")
