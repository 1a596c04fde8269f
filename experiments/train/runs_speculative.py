"""The speculative group (data/train_speculative.json, lesson C14 推理): speculative sampling measured on the course's
own models. Made by `python -m experiments.train.runs --group speculative` (skipped when its inputs are unchanged).

- the target: the speaker of lesson C2 (runs_speaker.speaker_spec, trained the same way on the same text with the
  same seed, so its stored float16 weights are data/train_speaker.json's; `target_sha256` records them and a test
  holds the two equal). The page takes the target from that file, this one stores only the draft;
- the draft: DRAFT (d 16, one layer, 2 query heads sharing one key/value head, FFN 44), trained with the same
  recipe, steps and batches; stored as float16 like the speaker. Both models' held-out loss is recorded;
- acceptance: for gamma = 1 .. 8, RUNS generations at temperature 1, each from PROMPT_LEN characters of the held-out
  text (evenly spaced offsets, seed = the run's index) to CONTEXT characters, with speculative.generate. Over the
  steps that drafted the full gamma: tokens per target step, the share of the draft tokens the target looked at
  (up to and including the first rejected one) that it accepted, and alpha = the mean of beta = Σ min(p, q) over
  those tokens; beside them Leviathan et al.'s (1 − alpha^(gamma+1)) / (1 − alpha) at that alpha;
- the distribution check: DIST_TRIALS speculative steps (gamma DIST_GAMMA) after DIST_PROMPT, the first emitted
  character counted, against the target's own distribution p (after the opening of a quotation, where the next
  character is uncertain) (Pearson's chi-square over the characters expected at
  least DIST_MIN_EXPECTED times, the rest pooled); the draft's own samples, as many, against the same p for
  contrast (a test that cannot tell q from p would prove nothing).
"""
from __future__ import annotations

import math
from typing import Any

from .runs import ADAMW, sig
from .schedule import Schedule

DRAFT: dict[str, Any] = {"d_model": 16, "n_layers": 1, "n_heads": 2, "n_kv_heads": 1, "d_ff": 44}    # + vocab
GAMMAS = tuple(range(1, 9))
RUNS, PROMPT_LEN, TEMPERATURE = 24, 8, 1.0
DIST_PROMPT, DIST_GAMMA, DIST_TRIALS, DIST_SEED, DIST_MIN_EXPECTED = "子曰：“", 2, 4000, 12345, 5


def draft_spec(vocab_size: int):
    from .model import ModelConfig
    from .runs_speaker import BATCH, LR, SEED, SEQ, STEPS
    from .trainer import RunSpec
    return RunSpec(model=ModelConfig(vocab_size=vocab_size, **DRAFT).validate(), optimizer="adamw", hyper=ADAMW,
                   schedule=Schedule("cosine", LR, STEPS, STEPS // 20, 0.1), batch_size=BATCH, seq_len=SEQ,
                   clip=1.0, seed=SEED)


def train(spec, train_ids, progress=None, label: str = ""):
    from .trainer import Trainer
    tr = Trainer(spec, train_ids)
    for s in range(spec.schedule.total):
        tr.step(detail=False)
        if progress and s % 500 == 0:
            progress(f"{label} step {s}")
    return tr


def prompts(held_ids, runs: int = RUNS, length: int = PROMPT_LEN) -> list[list[int]]:
    """`runs` prompts of `length` held-out characters at evenly spaced offsets."""
    gap = (len(held_ids) - length) // runs
    return [[int(i) for i in held_ids[r * gap:r * gap + length]] for r in range(runs)]


def measure(target, draft, prompt_list, gamma: int, context: int) -> dict:
    """One gamma's measurement over the prompts (see the module docstring)."""
    from . import speculative as SP
    steps = tokens = drafted = accepted = 0
    betas: list[float] = []
    for r, p in enumerate(prompt_list):
        out = SP.generate(target, draft, p, gamma, context, seed=r, temperature=TEMPERATURE)
        for s in out["steps"]:
            if s["gamma"] != gamma:
                continue
            steps += 1
            tokens += len(s["tokens"])
            drafted += gamma
            accepted += s["accepted"]
            betas.extend(s["betas"])
    alpha = sum(betas) / len(betas)
    return {"gamma": gamma, "steps": steps, "tokens": tokens, "tokens_per_step": sig(tokens / steps),
            "accepted": accepted, "drafted": drafted, "accept_rate": sig(accepted / len(betas)),
            "alpha": sig(alpha), "looked": len(betas), "expected": sig(SP.expected_tokens(alpha, gamma))}


def distribution_check(target, draft, prompt_ids: list[int], chars: str) -> dict:
    """The first emitted character of DIST_TRIALS speculative steps, and as many draft samples, against p."""
    import numpy as np

    from . import generate as G
    from . import speculative as SP
    p = SP.distributions(target[0], target[1], prompt_ids, 1, TEMPERATURE)[0]
    q = SP.distributions(draft[0], draft[1], prompt_ids, 1, TEMPERATURE)[0]
    rng = np.random.default_rng(DIST_SEED)
    spec_counts = np.zeros(len(p), dtype=np.int64)
    for _ in range(DIST_TRIALS):
        spec_counts[SP.step(target, draft, prompt_ids, DIST_GAMMA, rng, TEMPERATURE)["tokens"][0]] += 1
    rng = np.random.default_rng(DIST_SEED + 1)
    draft_counts = np.zeros(len(p), dtype=np.int64)
    for _ in range(DIST_TRIALS):
        draft_counts[G.draw(q, rng.random())] += 1
    bins = SP.chi_square_bins(p, DIST_TRIALS, DIST_MIN_EXPECTED)
    spec, own = SP.chi_square(spec_counts, p, bins), SP.chi_square(draft_counts, p, bins)
    top = [int(i) for i in np.argsort(-p, kind="stable")[:10]]
    return {"prompt": "".join(chars[i] for i in prompt_ids), "gamma": DIST_GAMMA, "trials": DIST_TRIALS,
            "min_expected": DIST_MIN_EXPECTED, "bins": len(bins) + 1,
            "speculative": {k: sig(v) if isinstance(v, float) else v for k, v in spec.items()},
            "draft": {k: sig(v) if isinstance(v, float) else v for k, v in own.items()},
            "top": [{"char": chars[i], "p": sig(float(p[i])), "q": sig(float(q[i])),
                     "speculative": int(spec_counts[i]), "draft": int(draft_counts[i])} for i in top]}


def compute(text: str, inputs_sha256: str, progress=None) -> dict:
    import hashlib
    import json

    from . import generate as G
    from .data import course_ids
    from .runs import TEXT_FILE
    from .runs_speaker import CONTEXT, speaker_spec
    tok, train_ids, held_ids = course_ids(text)
    t_spec, d_spec = speaker_spec(tok.vocab_size), draft_spec(tok.vocab_size)
    t_tr = train(t_spec, train_ids, progress, "target")
    d_tr = train(d_spec, train_ids, progress, "draft")
    t_packed, d_packed = G.pack_params(t_tr.params), G.pack_params(d_tr.params)
    target = (G.unpack_params(t_packed), t_spec.model)
    draft = (G.unpack_params(d_packed), d_spec.model)
    prompt_list = prompts(held_ids)
    rows = []
    for g in GAMMAS:
        rows.append(measure(target, draft, prompt_list, g, CONTEXT))
        if progress:
            progress(f"gamma {g}: {rows[-1]['tokens_per_step']} tokens per step")
    dist = distribution_check(target, draft, [int(i) for i in tok.encode(DIST_PROMPT)], tok.chars)
    n_params = {name: sum(math.prod(v["shape"]) for v in pk.values())
                for name, pk in (("target", t_packed), ("draft", d_packed))}
    return {"inputs_sha256": inputs_sha256,
            "text": {"file": TEXT_FILE, "characters": len(text), "vocab_size": tok.vocab_size},
            "target_sha256": hashlib.sha256(json.dumps(t_packed, sort_keys=True).encode()).hexdigest(),
            "target_spec": t_spec.to_json(), "draft_spec": d_spec.to_json(), "params": n_params,
            "held_out_loss": {"target": sig(t_tr.evaluate(held_ids)), "draft": sig(d_tr.evaluate(held_ids))},
            "context": CONTEXT, "runs": RUNS, "prompt_len": PROMPT_LEN, "temperature": TEMPERATURE,
            "acceptance": rows, "distribution": dist, "draft": d_packed}
