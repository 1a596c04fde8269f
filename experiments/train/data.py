"""Training text as token ids: a character tokenizer, a held-out split of whole passages and reproducible batches.
No I/O: the text comes in as a string (the course's text is data/texts/, read by whoever calls this).

One token is one character (a 字, a punctuation mark or a newline). The vocabulary is the sorted set of the
text's characters, so every id means the same character on every platform; a character not in it is refused.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CharTokenizer:
    chars: str

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        return cls("".join(sorted(set(text))))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        index = {ch: i for i, ch in enumerate(self.chars)}
        missing = sorted(set(text) - index.keys())
        if missing:
            raise ValueError(f"text: {len(missing)} characters not in the vocabulary, e.g. {missing[:5]!r}")
        return np.array([index[ch] for ch in text], dtype=np.int32)

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


HELD_OUT_EVERY = 10      # every tenth passage is held out


def split_passages(text: str, every: int = HELD_OUT_EVERY) -> tuple[str, str]:
    """The text's passages (its lines, each with its newline) in two parts, each in the text's order: passages
    every, 2·every, 3·every, ... (counting from 1) held out for validation, the rest for training. Whole passages
    spread over the whole text put the same books, script and style in both parts; a held-out tail would be the
    last book alone."""
    if every < 2:
        raise ValueError(f"held-out split: expected every >= 2 (one passage in `every` held out), got {every}")
    lines = text.splitlines(keepends=True)
    train = "".join(line for i, line in enumerate(lines, 1) if i % every)
    held = "".join(line for i, line in enumerate(lines, 1) if not i % every)
    return train, held


def unseen_share(train_text: str, held_text: str) -> float:
    """The share of the held-out characters (counted with repeats) that never occur in the training part: what no
    training can teach a character model, whatever it memorises."""
    seen = set(train_text)
    return sum(ch not in seen for ch in held_text) / max(len(held_text), 1)


def course_ids(text: str) -> tuple[CharTokenizer, np.ndarray, np.ndarray]:
    """The course's one way from a text to training data: the tokenizer of the whole text's characters, then the
    training and held-out ids of split_passages."""
    tok = CharTokenizer.from_text(text)
    train, held = split_passages(text)
    return tok, tok.encode(train), tok.encode(held)


class Batches:
    """Windows of seq_len + 1 tokens at random offsets from one numpy Generator: inputs ids[:, :-1], targets
    ids[:, 1:]. The same seed gives the same batches on every platform."""

    def __init__(self, ids: np.ndarray, batch_size: int, seq_len: int, seed: int = 0):
        if len(ids) < seq_len + 2:
            raise ValueError(f"text: expected more than {seq_len + 1} tokens, got {len(ids)}")
        self.ids, self.batch_size, self.seq_len = np.asarray(ids, dtype=np.int64), batch_size, seq_len
        self.rng = np.random.default_rng(seed)

    def next(self) -> tuple[np.ndarray, np.ndarray]:
        starts = self.rng.integers(0, len(self.ids) - self.seq_len - 1, size=self.batch_size, dtype=np.int64)
        w = np.stack([self.ids[s:s + self.seq_len + 1] for s in starts])
        return w[:, :-1], w[:, 1:]


def eval_windows(ids: np.ndarray, seq_len: int, max_windows: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Fixed, evenly spaced windows of held-out text (the same every time), for a validation loss."""
    ids = np.asarray(ids, dtype=np.int64)
    n = min(max_windows, (len(ids) - 1) // seq_len)
    if n < 1:
        raise ValueError(f"held-out text: expected at least {seq_len + 1} tokens, got {len(ids)}")
    step = (len(ids) - 1 - seq_len) // max(n - 1, 1) if n > 1 else 0
    w = np.stack([ids[i * step:i * step + seq_len + 1] for i in range(n)])
    return w[:, :-1], w[:, 1:]
