"""Lesson C1's BPE trainer in the page: the learner trains byte-level BPE (experiments/train/bpe.py) on the course
text or a text of their own, a few merges per message in the page's training worker, and sees at any merge count k
up to the ones learned: the last merges, the vocabulary's size 256 + k, characters and UTF-8 bytes per token on the
training text, and a sentence of their own cut into tokens.

Tokens on the training text after k merges need no encoding: each merge replaces every occurrence of its pair (its
count, pieces weighted by frequency) by one token, so the text's tokens are its bytes less the first k merges'
counts (the trainer's counts are full recounts: tests/test_bpe.py). The same state is drawn from stored merges by the
build (the first state) and from a live trainer by the page.

Bounds: the text as bpe.MAX_TEXT_BYTES, the merges as bpe.MAX_MERGES, a sentence MAX_SENTENCE characters; every
refusal is one Chinese line (a ValueError carrying it, which the page shows as it is).
"""
from __future__ import annotations

import unicodedata

from ...errors_zh import learner_message
from ...format import n
from ...train import bpe

CHUNK = 8                 # merges per message of the page's training worker (one message = one "step")
MAX_SENTENCE = 500        # characters in the sentence box
SHOWN_MERGES = 12         # the newest merges the list shows
COLOURS = 6               # token colours, in turn
SCHEMES = {"gpt2": "GPT-2 的切分规则", "qwen": "Qwen 的切分规则", "none": "不预切分（整段文字一起合并）"}

_SESSIONS: dict[int, dict] = {}


def refuse(error: Exception) -> ValueError:
    """A refusal as the page shows it: one Chinese line."""
    return ValueError(learner_message(error))


def encodable(text: str) -> str:
    """The text, if UTF-8 can encode it (no lone surrogate); else its refusal, in Chinese."""
    try:
        bpe.utf8(text)
    except bpe.BPEError as e:
        raise refuse(e) from None
    return text


def check_text(text) -> str:
    if not isinstance(text, str) or not text:
        raise ValueError("训练文本是空的：请粘贴一段文字，或改用课程文本")
    return encodable(text)


def check_sentence(sentence) -> str:
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError("句子是空的：请输入一句话")
    if len(sentence) > MAX_SENTENCE:
        raise ValueError(f"句子最长 {MAX_SENTENCE} 个字符，实际有 {len(sentence):,} 个")
    return encodable(sentence)


def check_merges(k) -> int:
    """A merge count from the page (a number or its text), 0..bpe.MAX_MERGES."""
    try:
        value = int(str(k).strip())
    except ValueError:
        value = None
    if value is None or not 0 <= value <= bpe.MAX_MERGES:
        raise ValueError(f"合并次数应为 0 到 {bpe.MAX_MERGES:,} 之间的整数，实际是「{k}」")
    return value


def check_scheme(scheme) -> str:
    if scheme not in SCHEMES:
        raise ValueError(f"没有这种预切分方式：「{scheme}」")
    return scheme


def token_text(data: bytes) -> str:
    """A token as the page shows it: its text when its bytes are whole UTF-8 characters (a space as ␣, a line break
    as ⏎, another control character by its code point), else its bytes in hexadecimal (part of a character)."""
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError:
        return "‹" + "\u00a0".join(f"{b:02X}" for b in data) + "›"   # (no line break inside)
    return "".join("␣" if c == " " else "⏎" if c == "\n" else f"U+{ord(c):04X}"
                   if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in s)


def merges_from(rows) -> list[bpe.Merge]:
    """Merges rebuilt from stored [left, right, count] rows (the ids of bpe.Trainer)."""
    vocab = [bytes([b]) for b in bpe.BYTE_ORDER]
    out = []
    for rank, (left, right, count) in enumerate(rows):
        out.append(bpe.Merge(rank, left, right, 256 + rank, count, vocab[left] + vocab[right]))
        vocab.append(out[-1].bytes)
    return out


def merge_row(m: bpe.Merge, vocab: list[bytes]) -> dict:
    return {"rank": n(m.rank + 1), "token": token_text(m.bytes),
            "parts": f"{token_text(vocab[m.left])} + {token_text(vocab[m.right])}", "count": n(m.count)}


def state(merges: list[bpe.Merge], chars: int, nbytes: int, k: int, sentence: str, scheme: str) -> dict:
    """What the widget shows after the first k of `merges` (k at most the merges learned)."""
    k = max(0, min(k, len(merges)))
    tok = bpe.Tokenizer(merges[:k], scheme)
    tokens = nbytes - sum(m.count for m in merges[:k])
    ids = tok.encode(check_sentence(sentence))
    pieces = [{"text": token_text(tok.vocab[t]), "cls": f"tok tok{j % COLOURS}",
               "title": f"编号 {t}，{len(tok.vocab[t])} 个字节"} for j, t in enumerate(ids)]
    han = sum(any(map(bpe.is_han, v.decode("utf-8", "ignore"))) for v in tok.vocab[256:])
    return {"k": k, "k_text": n(k), "vocab": n(len(tok)), "han": n(han), "tokens": n(tokens),
            "cpt": f"{chars / tokens:.2f}" if tokens else "—", "bpt": f"{nbytes / tokens:.2f}" if tokens else "—",
            "pieces": pieces, "s_chars": n(len(sentence)), "s_tokens": n(len(ids)),
            "merges": [merge_row(m, tok.vocab) for m in reversed(merges[max(0, k - SHOWN_MERGES):k])]}


# -- the page's training worker: one session at a time ------------------------------------------------------------
def start(text, scheme, target) -> dict:
    """A fresh trainer on `text` (the course text or the learner's), to make `target` merges; its session id."""
    text, scheme, target = check_text(text), check_scheme(scheme), check_merges(target)
    try:
        trainer = bpe.Trainer(text, scheme, bpe.MAX_MERGES)
    except bpe.BPEError as e:
        raise refuse(e) from None
    sid = max(_SESSIONS, default=0) + 1
    _SESSIONS.clear()
    nbytes = len(text.encode("utf-8"))
    _SESSIONS[sid] = {"trainer": trainer, "chars": len(text), "bytes": nbytes, "target": target, "scheme": scheme,
                      "tokens": nbytes}
    return {"session": sid, "chars": n(len(text)), "bytes": n(nbytes)}


def reset() -> None:
    """Forget every session, so the next start() is session 1 again (as in a fresh worker: a test replaying the
    page's calls in CPython starts from there)."""
    _SESSIONS.clear()


def _session(session) -> dict:
    run = _SESSIONS.get(session)
    if run is None:
        raise ValueError("这次训练已被重置，请重新开始。")
    return run


def learned_merges(session) -> list[bpe.Merge]:
    """The merges the session has learned so far, in order."""
    return list(_session(session)["trainer"].merges)


def exhausted(run: dict) -> bool:
    return run["trainer"].done or len(run["trainer"].merges) >= bpe.MAX_MERGES


def step(session, steps=1) -> dict:
    """Up to CHUNK × steps more merges toward the session's target: per merge a row for the training panel (the
    merge count as its step, the training text's tokens after it) with the merge's own row; done once the target is
    reached or no pair occurs twice any more."""
    run = _session(session)
    tr = run["trainer"]
    want = max(0, min(CHUNK * max(1, min(int(steps), 50)), run["target"] - len(tr.merges)))
    rows = []
    for m in tr.steps(want):
        run["tokens"] -= m.count
        rows.append({"step": m.rank + 1, "tokens": run["tokens"], "tokens_text": n(run["tokens"]),
                     **merge_row(m, tr.vocab)})
    return {"steps": rows, "learned": len(tr.merges), "done": len(tr.merges) >= run["target"] or exhausted(run)}


def tokens_chart(merges: list[bpe.Merge], nbytes: int, label: str) -> dict:
    """The chart of the training text's tokens against the merge count: the curve of `merges` (the build's, on the
    course text) under the page's live one."""
    tokens = [nbytes]
    for m in merges:
        tokens.append(tokens[-1] - m.count)
    return {"kind": "xy", "title": "训练文本切成的 token 数", "xtitle": "合并次数", "ytitle": "token 数",
            "series": [{"name": label, "color": "#9ecae1", "x": list(range(len(tokens))), "y": tokens,
                        "text": [f"{label} 合并 {k} 次：{n(t)} 个 token" for k, t in enumerate(tokens)]}]}


def retarget(session, target) -> dict:
    """Set how many merges the session trains to; whether that is done already."""
    run = _session(session)
    run["target"] = check_merges(target)
    return {"learned": len(run["trainer"].merges),
            "done": len(run["trainer"].merges) >= run["target"] or exhausted(run)}


def show(session, k, sentence) -> dict:
    """The state after the first k merges of the session (at most those learned)."""
    run = _session(session)
    out = state(run["trainer"].merges, run["chars"], run["bytes"], check_merges(k), sentence, run["scheme"])
    out["learned"] = len(run["trainer"].merges)
    out["exhausted"] = exhausted(run)
    return out
