"""A model continues a learner's prompt: the learner's settings read and clamped (each clamp said in Chinese), the
prompt turned into ids (characters outside the vocabulary dropped and named), the continuation drawn by
experiments.train.generate, and the next-token distribution for the prompt as a bar chart. Lessons C2 (the
stored speaker and its live run) and C5 (its live run) answer with this, so both pages speak the same way.

Bounds (the work per answer stays bounded whatever the learner types): temperature 0 .. generate.TEMPERATURE_MAX
(0 = greedy), top-k 0 .. V (0 = off), top-p 0 .. 1 (1 = off; 0 keeps only the most probable token), at most
MAX_NEW new characters, and the model reads only the last `context` characters of the prompt.
"""
from __future__ import annotations

import math

from ..format import n as n_text
from ..train import generate as G

MAX_NEW = 60
BARS = 12                      # the chart shows the most probable next characters
SHOW = {"\n": "↵", " ": "␣"}


def show(ch: str) -> str:
    """A character as a learner can read it on a bar or in a table (newline and space made visible)."""
    return SHOW.get(ch, ch)


def _number(value, name: str, notes: list) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x):
        notes.append(f"{name}应为一个数，收到的是 {value!r}，已按默认值处理")
        return None
    return x


def settings(temperature, top_k, top_p, vocab_size: int) -> tuple[float, int, float, list[str]]:
    """(temperature, top_k, top_p) clamped into their ranges, and one Chinese note per value changed."""
    notes: list[str] = []
    t = _number(temperature, "温度", notes)
    t = 1.0 if t is None else t
    if t < 0:
        notes.append(f"温度不能为负（收到 {t:g}），已按 0 处理，也就是每步取概率最大的字")
        t = 0.0
    elif t > G.TEMPERATURE_MAX:
        notes.append(f"温度最大取 {G.TEMPERATURE_MAX:g}（收到 {t:g}），已按 {G.TEMPERATURE_MAX:g} 处理")
        t = G.TEMPERATURE_MAX
    k = _number(top_k, "top-k ", notes)
    k = 0 if k is None else k
    if k != int(k):
        notes.append(f"top-k 应为整数（收到 {k:g}），已取 {int(k)}")
    k = int(k)
    if k < 0:
        notes.append(f"top-k 不能为负（收到 {k}），已按 0（不截断）处理")
        k = 0
    elif k > vocab_size:
        notes.append(f"top-k 超过了词表的 {vocab_size} 个字（收到 {k}），等于不截断，已按 0 处理")
        k = 0
    p = _number(top_p, "top-p ", notes)
    p = 1.0 if p is None else p
    if p < 0 or p > 1:
        q = min(max(p, 0.0), 1.0)
        notes.append(f"top-p 应在 0 到 1 之间（收到 {p:g}），已按 {q:g} 处理")
        p = q
    return t, k, p, notes


def prompt_ids(tok, prompt, context: int) -> tuple[list[int], str, list[str]]:
    """The ids the model reads for a prompt (its last `context` known characters), the text they spell, and notes
    on what was dropped. A prompt with no known character is refused with a Chinese message."""
    if not isinstance(prompt, str):
        raise ValueError("开头应为一段文字")
    notes = []
    known = set(tok.chars)
    unknown = sorted(set(prompt) - known)
    if unknown:
        shown = "、".join(f"「{show(c)}」" for c in unknown[:5])
        more = f"等 {len(unknown)} 个" if len(unknown) > 5 else ""
        notes.append(f"课程文本里没有{shown}{more}这些字符，模型不认识，已从开头里去掉")
    kept = "".join(c for c in prompt if c in known)
    if not kept:
        raise ValueError("开头是空的（或者其中的字课程文本里都没有）："
                         "请输入至少一个《论语》《大学》《中庸》里出现过的字，例如「子曰」")
    if len(kept) > context:
        notes.append(f"开头有 {len(kept)} 个字，模型只读最后 {context} 个")
        kept = kept[-context:]
    return [int(i) for i in tok.encode(kept)], kept, notes


def distribution_chart(tok, probs, title: str) -> dict:
    """The BARS most probable next characters under the current settings (a horizontal bar chart)."""
    import numpy as np
    order = [int(i) for i in np.argsort(-probs, kind="stable")[:BARS] if probs[i] > 0]
    labels = [show(tok.chars[i]) for i in order]
    values = [float(f"{probs[i]:.4g}") for i in order]
    return {"kind": "bar", "labels": labels, "values": values, "xtitle": "下一个字的概率",
            "hover": [f"「{lab}」：{100 * v:.1f}%" for lab, v in zip(labels, values)], "title": title}


_STORED: dict[str, tuple] = {}         # inputs_sha256 -> (params, cfg, tok): a stored model, unpacked once


def stored_model(doc: dict) -> tuple:
    """(params, ModelConfig, CharTokenizer) of a stored model document (C2's speaker, data/train_speaker.json: its
    float16 weights, characters and spec), unpacked once per document (the last one is kept)."""
    from ..train.data import CharTokenizer
    from ..train.model import ModelConfig
    if not isinstance(doc, dict) or "model" not in doc or "chars" not in doc:
        raise ValueError("模型：应为课程预先训练好的小模型")
    key = doc.get("inputs_sha256", "")
    if key not in _STORED:
        _STORED.clear()
        _STORED[key] = (G.unpack_params(doc["model"]), ModelConfig(**doc["spec"]["model"]).validate(),
                        CharTokenizer(doc["chars"]))
    return _STORED[key]


def speak(params, cfg, tok, prompt, temperature=1.0, top_k=0, top_p=1.0, seed=0, n_new=40, context=64) -> dict:
    """A continuation of `prompt` by the model (params, cfg, tok), with the settings clamped; JSON-ready: the prompt
    as read, the continuation, the notes, the settings as used, and the next-token distribution's chart and top
    rows."""
    t, k, p, notes = settings(temperature, top_k, top_p, cfg.vocab_size)
    ids, kept, more = prompt_ids(tok, prompt, context)
    notes += more
    n = _number(n_new, "生成字数", notes)
    n = 40 if n is None else min(max(int(n), 1), MAX_NEW)
    s = _number(seed, "随机种子", notes)
    s = 0 if s is None else abs(int(s))
    out = G.generate(params, cfg, ids, n, temperature=t, top_k=k, top_p=p, seed=s, context=context)
    probs = G.next_distribution(G.last_logits(params, cfg, ids, context), t, k, p)
    mode = "贪心（每步取概率最大的字）" if t == 0 else f"温度 {t:g}" + (f"，top-k {k}" if k else "") + \
        (f"，top-p {p:g}" if p < 1 else "")
    kept_n = int((probs > 0).sum())
    return {"prompt": kept, "text": tok.decode(out), "notes": [{"text": t} for t in notes], "mode": mode,
            "settings": {"temperature": t, "top_k": k, "top_p": p, "seed": s},
            "candidates": f"{n_text(kept_n)} 个字",
            "top": f"「{show(tok.chars[int(probs.argmax())])}」 {100 * probs.max():.1f}%",
            "chart": distribution_chart(tok, probs, f"「{kept[-8:]}」之后下一个字的分布（{mode}）")}
