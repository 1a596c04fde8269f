"""C3 on the course's trained small model: its attention maps, the causal mask switched off in training, and
decoding with and without the KV cache. The build calls these for each widget's first state and the answers it
embeds; the browser's Python calls the same functions as experiments.api:c3_*.

- maps: lesson C2's stored speaker (data/train_speaker.json, made by `python -m experiments.train.runs --group
  speaker`) reads a sentence; experiments.train.model.attention_maps gives every layer's and head's attention
  probabilities (n_layers, n_heads, T, T), and one (layer, head) is drawn as a heatmap (charts.js kind heatmap).
- mask: the attention group (data/train_attention.json, experiments/train/runs_attention.py) trained the speaker's
  architecture with and without the causal mask; the chart shows one arm's training loss and its held-out loss
  evaluated with the mask on; train_start / train_step rerun either arm in the page's training worker.
- decode: the speaker continues a prompt with experiments.train.generate.generate twice, use_cache True and False,
  each timed here (in the page: in the widgets' worker); the tokens must match. generate.step_flops counts the
  multiply-adds of the last step both ways.
Bounds: a sentence of at most the model's context (64 characters), at most MAX_NEW new characters.
"""
from __future__ import annotations

import time

from ...format import n
from ...toolkit.live_run import advance
from ...widget import uses

# (experiments.toolkit.speak and the trainer import numpy: imported where used, so the unmarked c3_mask answers
# before numpy has loaded)

MAX_NEW = 48                        # characters a decode writes at most (prompt + new stays within the context)
_SESSIONS: dict[int, dict] = {}


def stored_model(doc: dict):
    """(params, ModelConfig, CharTokenizer) of the stored speaker (experiments.toolkit.speak, unpacked once)."""
    from ...toolkit.speak import stored_model as unpack
    return unpack(doc)


def sentence_ids(tok, sentence, context: int, what: str = "句子") -> tuple[list[int], str, str]:
    """The ids of a sentence the model reads whole: empty, unknown-only or longer than the context refused in
    Chinese (the script says the same before asking); characters outside the vocabulary dropped, said in a note."""
    from ...toolkit.speak import show
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"{what}是空的：请输入一句课程文本里的话，例如「学而时习之」")
    if len(sentence) > context:
        raise ValueError(f"{what}有 {n(len(sentence))} 个字，超过了最多 {n(context)} 个字：请缩短")
    known = set(tok.chars)
    kept = "".join(c for c in sentence if c in known)
    dropped = sorted(set(sentence) - known)
    if not kept:
        raise ValueError(f"{what}里的字课程文本里都没有：请输入《论语》《大学》《中庸》里出现过的字")
    shown = "、".join(f"「{show(c)}」" for c in dropped[:5])
    note = f"课程文本里没有{shown}，模型不认识，已去掉" if dropped else ""
    return [int(i) for i in tok.encode(kept)], kept, note


def _index(value, what: str, count: int) -> int:
    try:
        i = int(str(value).strip())
    except ValueError:
        i = -1
    if not 1 <= i <= count:
        raise ValueError(f"{what}：应为 1 到 {count} 之间的整数")
    return i - 1


@uses("numpy")
def maps(sentence, layer, head, stored) -> dict:
    """One layer's and head's attention probabilities on a sentence, as a heatmap (rows: the position reading,
    columns: the position read), and where each of the last position's and the strongest reads go."""
    from ...toolkit.speak import show
    from ...train import model as M
    params, cfg, tok = stored_model(stored)
    ids, kept, note = sentence_ids(tok, sentence, stored["context"])
    li, hi = _index(layer, "层", cfg.n_layers), _index(head, "头", cfg.n_heads)
    P = M.attention_maps(params, cfg, ids)[li, hi]                       # (T, T), rows sum to 1
    chars = [show(c) for c in kept]
    T = len(chars)
    labels = [f"{i + 1} {c}" for i, c in enumerate(chars)]             # (a repeated character stays its own row)
    z = [[round(float(P[t, s]), 4) for s in range(T)] for t in range(T)]
    hover = [[f"第 {t + 1} 个字「{chars[t]}」看第 {s + 1} 个字「{chars[s]}」：{P[t, s]:.1%}" for s in range(T)]
             for t in range(T)]
    last = int(P[-1].argmax())
    above = float(sum(P[t, s] for t in range(T) for s in range(t + 1, T)))
    kv = cfg.group
    return {"chart": {"kind": "heatmap", "x": labels, "y": labels, "z": z, "hover": hover,
                      "title": f"第 {li + 1} 层第 {hi + 1} 个头（与第 {hi // kv + 1} 组的 K、V 头相连）"},
            "tokens": n(T), "note": note,
            "last": (f"最后一个字「{chars[-1]}」在这个头里最看重第 {last + 1} 个字「{chars[last]}」"
                     f"（{P[-1, last]:.1%}）"),
            "above": f"对角线以上（后面的字）的概率之和：{above:.1f}"}


def _points(rows) -> tuple[list, list]:
    return [r[0] for r in rows], [r[1] for r in rows]


def mask(leak, stored) -> dict:
    """One arm of the stored mask experiment ("1": trained without the mask, else with it) as a chart of its
    training loss and its held-out loss (mask on), with the other arm's training loss beside it, and a summary."""
    arm, other = ("leak", "causal") if str(leak) == "1" else ("causal", "leak")
    runs = stored["runs"]
    r, o = runs[arm], runs[other]
    name = {"causal": "有因果掩码", "leak": "去掉因果掩码"}
    xs, ys = _points(r["loss"])
    hx, hy = _points(r["held_out"])
    ox, oy = _points(o["loss"])
    series = [{"name": f"{name[arm]}：训练 loss", "mode": "lines", "color": "#1f77b4", "x": xs, "y": ys,
               "text": [f"第 {x} 步 训练 loss {y:.3f}" for x, y in zip(xs, ys)]},
              {"name": f"{name[arm]}：留出 loss（看不到后文）", "mode": "lines+markers", "color": "#2ca02c", "x": hx,
               "y": hy, "text": [f"第 {x} 步 留出 loss {y:.3f}" for x, y in zip(hx, hy)]},
              {"name": f"{name[other]}：训练 loss", "mode": "lines", "color": "#aaaaaa", "x": ox, "y": oy,
               "text": [f"第 {x} 步 训练 loss {y:.3f}" for x, y in zip(ox, oy)]}]
    out = {"chart": {"kind": "xy", "xtitle": "训练步", "ytitle": "loss（nats/字）", "series": series},
           "arm": name[arm], "train": f"{ys[-1]:.2f}", "held": f"{hy[-1]:.2f}", "sample": r["sample"],
           "prompt": stored["prompt"], "steps": n(stored["steps"]),
           "leak_held": f"{r['held_out_leak'][-1][1]:.2f}" if "held_out_leak" in r else ""}
    return out


# -- the live run: either arm from scratch, in the page's training worker ------------------------------------------
@uses("numpy")
def train_start(text: str, leak, seed: int = 0) -> dict:
    """A fresh run of the chosen arm: its session id and the tokens each step trains on (the panel's speed)."""
    from ...train.data import course_ids
    from ...train.runs_attention import attention_spec
    from ...train.trainer import Trainer
    tok, train_ids, _ = course_ids(text)
    sid = max(_SESSIONS, default=0) + 1
    _SESSIONS.clear()                       # one live run at a time
    spec = attention_spec(tok.vocab_size, causal=str(leak) != "1", seed=int(seed))
    _SESSIONS[sid] = {"trainer": Trainer(spec, train_ids)}
    return {"session": sid, "tokens_per_step": spec.batch_size * spec.seq_len}


@uses("numpy")
def train_step(session: int, steps: int = 1) -> dict:
    """`steps` more steps (at most 10 per call): each step's number and training loss."""
    run = _SESSIONS.get(session)
    if run is None:
        raise ValueError("这次训练已被重置，请重新开始。")
    tr = run["trainer"]
    return advance(tr, steps, tr.spec.schedule.total)


# -- decoding with and without the KV cache ------------------------------------------------------------------------
def _new(value) -> int:
    try:
        k = int(str(value).strip())
    except ValueError:
        k = 0
    if not 1 <= k <= MAX_NEW:
        raise ValueError(f"生成字数：应为 1 到 {MAX_NEW} 之间的整数")
    return k


def decode_text(prompt, n_new, stored) -> dict:
    """The greedy continuation (the KV-cached path) and its step's multiply-adds both ways: the build's first state."""
    from ...train import generate as G
    params, cfg, tok = stored_model(stored)
    k = _new(n_new)
    ids, kept, note = sentence_ids(tok, prompt, stored["context"] - MAX_NEW, "开头")
    out = G.generate(params, cfg, ids, k, temperature=0, context=stored["context"], use_cache=True)
    t = len(ids) + k - 1                                   # positions the last step reads
    return {"prompt": kept, "text": tok.decode(out), "note": note, "n_new": n(k),
            "flops_cached": n(G.step_flops(cfg, t, True)), "flops_full": n(G.step_flops(cfg, t, False)),
            "positions": n(t), "ids": out}


@uses("numpy")
def decode(prompt, n_new, stored) -> dict:
    """decode_text, then both paths timed here: tokens per second each way and whether their tokens match."""
    from ...train import generate as G
    params, cfg, tok = stored_model(stored)
    x = decode_text(prompt, n_new, stored)
    ids = tok.encode(x["prompt"])
    k = len(x["ids"])
    times, outs = {}, {}
    for cached in (True, False):
        t0 = time.perf_counter()
        outs[cached] = G.generate(params, cfg, ids, k, temperature=0, context=stored["context"], use_cache=cached)
        times[cached] = time.perf_counter() - t0
    x.update({"tps_cached": f"{k / times[True]:.0f}", "tps_full": f"{k / times[False]:.0f}",
              "speedup": f"{times[False] / times[True]:.1f}",
              "same": "一样" if outs[True] == outs[False] == x["ids"] else "不一样",
              "text_full": tok.decode(outs[False])})
    return x
