"""The attention group (data/train_attention.json, lesson C3): what removing the causal mask does to training.
Made by `python -m experiments.train.runs --group attention` (skipped when its inputs are unchanged).

Two runs of lesson C2's speaker architecture (runs_speaker.SPEAKER: d 32, 2 layers, 4 query heads sharing 2
key/value heads), identical but for ModelConfig.causal: True (the mask, every position sees itself and the
positions before it) and False (no mask: every position also sees the token it is asked to predict, the next
input). Same seed, data order, AdamW (runs.ADAMW) at peak lr LR, cosine to 10% with a 5% warmup, STEPS steps of
BATCH x SEQ characters. Stored for each: the training loss every LOG_EVERY steps, and every HELD_EVERY steps the
held-out loss evaluated with the mask on (what generation faces: the next token is not there yet) and, for the
run without the mask, also evaluated as it was trained (the future visible). And each run's greedy continuation of
PROMPT, written with the mask on as generation must (the run without it never learnt to predict).
"""
from __future__ import annotations

from .runs import ADAMW, sig
from .schedule import Schedule

STEPS, BATCH, SEQ, LR, SEED = 600, 16, 64, 1e-2, 0
LOG_EVERY, HELD_EVERY = 10, 100
HELD_WINDOWS = 16
PROMPT, SAMPLE_TOKENS, CONTEXT = "子曰：“", 30, 64


def attention_spec(vocab_size: int, causal: bool, steps: int = STEPS, seed: int = SEED):
    """The run of either arm: the speaker's architecture with the mask on or off."""
    from .runs_speaker import speaker_config
    from .trainer import RunSpec
    return RunSpec(model=speaker_config(vocab_size).with_(causal=bool(causal)), optimizer="adamw", hyper=ADAMW,
                   schedule=Schedule("cosine", LR, steps, steps // 20, 0.1), batch_size=BATCH, seq_len=SEQ,
                   clip=1.0, seed=seed)


def held_out(params, cfg, held_ids, seq_len: int, causal: bool) -> float:
    """The mean cross-entropy on the first HELD_WINDOWS held-out windows, with the mask on or off."""
    from . import model as M
    from .data import eval_windows
    x, y = eval_windows(held_ids, seq_len, HELD_WINDOWS)
    return M.loss_only(params, x, y, cfg.with_(causal=causal))


def _run(spec, train_ids, held_ids, tok, progress) -> dict:
    from . import generate as G
    from .trainer import Trainer
    tr = Trainer(spec, train_ids)
    loss, held, held_leak = [], [], []
    for s in range(STEPS):
        d = tr.step(detail=False)
        if s % LOG_EVERY == 0 or s == STEPS - 1:
            loss.append([d["step"], sig(d["loss"])])
        if d["step"] % HELD_EVERY == 0:
            held.append([d["step"], sig(held_out(tr.params, spec.model, held_ids, SEQ, True))])
            if not spec.model.causal:
                held_leak.append([d["step"], sig(held_out(tr.params, spec.model, held_ids, SEQ, False))])
        if progress and s % 100 == 0:
            progress(f"attention causal={spec.model.causal} step {s}")
    causal_cfg = spec.model.with_(causal=True)
    text = tok.decode(G.generate(tr.params, causal_cfg, tok.encode(PROMPT), SAMPLE_TOKENS, temperature=0,
                                 context=CONTEXT, use_cache=False))
    out = {"causal": spec.model.causal, "loss": loss, "held_out": held, "sample": text}
    if held_leak:
        out["held_out_leak"] = held_leak
    return out


def compute(text: str, inputs_sha256: str, progress=None) -> dict:
    from .data import course_ids
    from .runs import TEXT_FILE
    tok, train_ids, held_ids = course_ids(text)
    runs = {name: _run(attention_spec(tok.vocab_size, causal), train_ids, held_ids, tok, progress)
            for name, causal in (("causal", True), ("leak", False))}
    return {"inputs_sha256": inputs_sha256,
            "text": {"file": TEXT_FILE, "characters": len(text), "vocab_size": tok.vocab_size},
            "spec": attention_spec(tok.vocab_size, True).to_json(), "steps": STEPS, "log_every": LOG_EVERY,
            "held_every": HELD_EVERY, "held_windows": HELD_WINDOWS, "prompt": PROMPT, "runs": runs}
