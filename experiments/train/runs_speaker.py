"""The speaker group (data/train_speaker.json, lesson C2): a small model trained by the course's trainer at build
time, stored small enough for the page, so the page can continue a prompt before the learner trains anything.
Made by `python -m experiments.train.runs --group speaker` (skipped when its inputs are unchanged).

- the model: SPEAKER (d 32, 2 layers, 4 query heads sharing 2 key/value heads, FFN 88; the vocabulary is the course
  text's characters), trained with AdamW (runs.ADAMW) at peak lr 1e-2, cosine to 10% with a 5% warmup, STEPS steps of
  BATCH x SEQ characters, seed 0; its weights stored as float16 (generate.pack_params), the tokenizer's characters,
  the spec, the loss every LOG_EVERY steps and the held-out loss at the end;
- the initial loss: the same architecture at the trainer's initialisation (std 0.02) on INIT_SEEDS seeds, the
  cross-entropy of its first batch, against ln V (a model that spreads its mass evenly over V tokens);
- samples: the stored (float16) model's greedy continuation of each prompt in PROMPTS, the text the page shows
  first; the browser's Python recomputes it from the same stored weights.
"""
from __future__ import annotations

from typing import Any

from .runs import ADAMW, sig
from .schedule import Schedule

SPEAKER: dict[str, Any] = {"d_model": 32, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "d_ff": 88}   # + vocab
STEPS, BATCH, SEQ, LR, SEED = 1500, 16, 64, 1e-2, 0
LOG_EVERY = 25
INIT_SEEDS = (0, 1, 2, 3, 4)
CONTEXT = 64                      # the positions generation attends over (= the training windows)
PROMPTS = ("子曰", "学而")
SAMPLE_TOKENS = 40


def speaker_config(vocab_size: int):
    from .model import ModelConfig
    return ModelConfig(vocab_size=vocab_size, **SPEAKER).validate()


def speaker_spec(vocab_size: int, steps: int = STEPS):
    from .trainer import RunSpec
    return RunSpec(model=speaker_config(vocab_size), optimizer="adamw", hyper=ADAMW,
                   schedule=Schedule("cosine", LR, steps, steps // 20, 0.1), batch_size=BATCH, seq_len=SEQ,
                   clip=1.0, seed=SEED)


def compute(text: str, inputs_sha256: str, progress=None) -> dict:
    from . import generate as G
    from .data import course_ids
    from .runs import TEXT_FILE
    from .trainer import Trainer
    tok, train_ids, held_ids = course_ids(text)
    spec = speaker_spec(tok.vocab_size)
    init = []
    for seed in INIT_SEEDS:
        tr0 = Trainer(spec.__class__(**{**spec.__dict__, "seed": seed}), train_ids)
        init.append(sig(tr0.step(detail=False)["loss"]))
    tr = Trainer(spec, train_ids)
    loss = []
    for s in range(STEPS):
        d = tr.step(detail=False)
        if s % LOG_EVERY == 0 or s == STEPS - 1:
            loss.append([d["step"], sig(d["loss"])])
        if progress and s % 250 == 0:
            progress(f"speaker step {s}")
    packed = G.pack_params(tr.params)
    stored = G.unpack_params(packed)
    samples = {p: tok.decode(G.generate(stored, spec.model, tok.encode(p), SAMPLE_TOKENS, temperature=0,
                                        context=CONTEXT)) for p in PROMPTS}
    return {"inputs_sha256": inputs_sha256,
            "text": {"file": TEXT_FILE, "characters": len(text), "vocab_size": tok.vocab_size},
            "spec": spec.to_json(), "context": CONTEXT, "chars": tok.chars,
            "init_loss": {"seeds": list(INIT_SEEDS), "loss": init},
            "loss": loss, "held_out_loss": sig(tr.evaluate(held_ids)),
            "samples": samples, "model": packed}
