"""The tokenizer group (data/train_bpe.json, lesson C1 part ⑤): the same model trained on the course text cut two
ways, characters and the course's byte-level BPE, at the same compute, compared in bits per character on the
held-out passages. Made by `python -m experiments.train.runs --group bpe` (skipped when its inputs are unchanged).

- the text: data.split_passages (every tenth passage held out). Characters: data.CharTokenizer over the whole
  text (data.course_ids, the tokenizer of C2, C5 and C6). BPE: the course's byte-level BPE (bpe.py,
  GPT-2's pre-tokenisation) trained on the training passages only, with V_char - 256 merges, so that both
  vocabularies have the same V_char entries; a held-out character BPE never saw falls back to its bytes.
- the model: C5's live model (runs.live_config: d 64, 2 layers, 4 heads, FFN 172) with V_char rows either way,
  so both models hold exactly the same parameters; trained with AdamW (runs.ADAMW) at lr 3e-3 (runs.RACE_LR),
  cosine to 10% with a 10% warmup, STEPS steps of BATCH x SEQ tokens, clipping 1.0, seeds SEEDS (the seed draws
  the initial weights and the batches).
- same compute: the same steps of the same BATCH x SEQ tokens through the same parameters, so every step costs
  the same FLOPs (the body's 6·N per token, the attention's over SEQ positions, the V_char-row head). What differs
  is what a token holds: a BPE token covers more text, so the BPE model reads more of the text per step; that is
  what a tokenizer buys.
- the measure: each model reads a line break, then predicts every token of the held-out passages (windows of SEQ
  tokens, the last one shorter; held_out_nats): the total cross-entropy in nats of the whole held-out text, which
  is the same text for both, so bits/char = nats / (ln 2 × characters) and bits/byte = nats / (ln 2 × UTF-8 bytes)
  compare them (loss per token does not: a token holds more text in one model than in the other). Recorded every
  EVAL_EVERY steps and at the end.

This module holds the setup and the computation; lesson C1's page reruns seed 0 (lessons/c1-tokenization/fair.py)
with trainers() and advance(), so its runs are these runs.
"""
from __future__ import annotations

import math
from typing import Any

from .runs import ADAMW, RACE_LR, live_config, sig
from .schedule import Schedule

STEPS, BATCH, SEQ, CLIP = 600, 8, 32, 1.0
WARMUP_SHARE, MIN_RATIO = 0.1, 0.1
SEEDS = (0, 1, 2)
EVAL_EVERY = 50
SCHEME = "gpt2"                  # the pre-tokenisation of the course's BPE (as C1's measured BPE)
KINDS = ("char", "bpe")


def spec(vocab_size: int, seed: int = 0, steps: int = STEPS):
    from .trainer import RunSpec
    return RunSpec(model=live_config(vocab_size), optimizer="adamw", hyper=ADAMW,
                   schedule=Schedule("cosine", RACE_LR["adamw"], steps, round(WARMUP_SHARE * steps), MIN_RATIO),
                   batch_size=BATCH, seq_len=SEQ, clip=CLIP, seed=seed)


def tokenizations(text: str) -> dict[str, Any]:
    """Both cuts of the text: per kind its vocabulary size, training ids and held-out ids (a line break first, then
    the held-out passages' tokens), with the held-out passages' characters and UTF-8 bytes and the BPE's merges."""
    import numpy as np

    from . import bpe
    from .data import course_ids, split_passages
    chars, train_chars, held_chars = course_ids(text)
    train, held = split_passages(text)
    tok = bpe.train(train, chars.vocab_size - len(bpe.BYTE_ORDER), SCHEME)
    newline = tok.encode("\n")
    assert len(newline) == 1
    held_bpe = tok.encode(held)
    out: dict[str, Any] = {"held_chars": len(held), "held_bytes": len(held.encode("utf-8")), "merges": len(tok.merges),
                           "char": {"vocab_size": chars.vocab_size, "train": train_chars,
                                    "held": np.concatenate([chars.encode("\n"), held_chars])},
                           "bpe": {"vocab_size": len(tok), "train": np.array(tok.encode(train), dtype=np.int32),
                                   "held": np.array(newline + held_bpe, dtype=np.int32)}}
    assert out["char"]["vocab_size"] == out["bpe"]["vocab_size"]
    return out


def held_out_nats(trainer, held_ids) -> float:
    """The total cross-entropy (nats) of held_ids[1:], each predicted from the tokens before it in its window:
    windows of SEQ tokens one after another, the last one holding what is left."""
    import numpy as np

    from .model import loss_only
    ids = np.asarray(held_ids, dtype=np.int64)
    n, T = len(ids) - 1, trainer.spec.seq_len
    full = n // T
    total = 0.0
    if full:
        x = ids[:full * T].reshape(full, T)
        y = ids[1:full * T + 1].reshape(full, T)
        total += loss_only(trainer.params, x, y, trainer.spec.model, trainer.kernels) * full * T
    rest = n - full * T
    if rest:
        total += loss_only(trainer.params, ids[full * T:n][None, :], ids[full * T + 1:][None, :],
                           trainer.spec.model, trainer.kernels) * rest
    return float(total)


def bits(nats: float, count: int) -> float:
    """Bits per unit (character or byte) of a total cross-entropy in nats over `count` units."""
    return nats / (math.log(2) * count)


def trainers(cut: dict, seed: int, steps: int = STEPS) -> dict:
    """kind -> a fresh Trainer of that cut's model on its training ids (the seed draws the weights and batches)."""
    from .trainer import Trainer
    return {kind: Trainer(spec(cut[kind]["vocab_size"], seed, steps), cut[kind]["train"]) for kind in KINDS}


def advance(models: dict, cut: dict, eval_every: int = EVAL_EVERY) -> dict:
    """One training step of each model: {"step": its number} and, at every eval_every-th step and the last, each
    kind's held-out nats (held_out_nats)."""
    import numpy as np
    row: dict[str, Any] = {}
    with np.errstate(over="ignore", invalid="ignore"):
        for kind, tr in models.items():
            d = tr.step(detail=False)
            row["step"] = d["step"]
            if d["step"] % eval_every == 0 or d["step"] == tr.spec.schedule.total:
                row[kind] = held_out_nats(tr, cut[kind]["held"])
    return row


def compute(text: str, inputs_sha256: str, progress=None, steps: int = STEPS, seeds=SEEDS,
            eval_every: int = EVAL_EVERY) -> dict:
    from .derived import TEXT_FILE
    from .model import count_params, init_params
    cut = tokenizations(text)
    chars, nbytes = cut["held_chars"], cut["held_bytes"]
    result: dict[str, Any] = {
        "inputs_sha256": inputs_sha256, "text": {"file": TEXT_FILE, "characters": len(text)},
        "spec": spec(cut["char"]["vocab_size"], seeds[0], steps).to_json(), "seeds": list(seeds),
        "held_out": {"characters": chars, "bytes": nbytes}, "merges": cut["merges"], "scheme": SCHEME,
        "eval_every": eval_every}
    for kind in KINDS:
        c = cut[kind]
        result[kind] = {"vocab_size": c["vocab_size"], "train_tokens": int(len(c["train"])),
                        "held_out_tokens": int(len(c["held"]) - 1),
                        "params": count_params(init_params(spec(c["vocab_size"]).model)), "runs": []}
    for seed in seeds:
        if progress:
            progress(f"seed {seed}")
        models = trainers(cut, seed, steps)
        evals: dict[str, list] = {kind: [] for kind in KINDS}
        for _ in range(steps):
            row = advance(models, cut, eval_every)
            for kind in KINDS:
                if kind in row:
                    evals[kind].append([row["step"], sig(bits(row[kind], chars))])
        for kind in KINDS:
            nats = row[kind]
            result[kind]["runs"].append({"seed": seed, "eval": evals[kind], "nats": sig(nats, 8),
                                         "bits_per_char": sig(bits(nats, chars)),
                                         "bits_per_byte": sig(bits(nats, nbytes))})
    return result
