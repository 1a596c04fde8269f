"""The learning-rate sweep group of precomputed runs (data/train_lr_sweep.json, lesson C8), made by
`python -m experiments.train.runs --group lr_sweep` from the same trainer the page runs.

Wortsman et al. 2023 ("Small-scale proxies for large-scale Transformer training instabilities", arXiv 2309.14322)
judge a stability intervention by its final loss against the learning rate: a fix that matters lets a wider range
of learning rates train. Their summary is the LR sensitivity, the expected deviation from the best loss over the
swept range, E_lr[min(loss(lr), loss_0) - min_lr loss(lr)], with loss_0 the loss at initialisation (a diverged
run counts as loss_0); the lesson computes it from this file (lessons/c8-training-stability/calc.py).

- sweep: the stability grid's small live model and schedule (runs_stability.spec: AdamW, cosine to 10%, clipping
  at 1.0, runs_stability.STEPS steps) with no fix and with each fix of FIXES alone (and all of them at once), at
  the learning rates LRS (C5's usual AdamW lr times 10^(k/2): from a tenth of it to a thousand times it, C8's
  grid lr among them), on SEEDS (the seed draws the init and the batches). Per run: the training loss per step,
  the held-out loss at the end (None when the run diverged) and the step it diverged at.
- depth: a deeper, narrower model (DEEP: 12 layers of width 32) with Post-LN without warmup, Post-LN with
  runs_stability.WARMUP steps of warmup, and Pre-LN without warmup, at DEPTH_LRS on the same SEEDS, recorded
  the same way: where Xiong et al. 2020 (arXiv 2002.04745) and Liu et al. 2020 (arXiv 2004.08249) find Post-LN
  needs warmup, if a model this size shows it.
"""
from __future__ import annotations

from typing import Any

from . import runs_stability as S
from .runs import RACE_LR, sig

BASE_LR = RACE_LR["adamw"]                       # C5's usual AdamW lr
LR_EXPONENTS = tuple(range(-2, 7))               # lr = BASE_LR x 10^(k/2): 3e-4 ... 3 (k = 2 is C8's grid lr)
FIXES = (("none", ()), ("warmup", ("warmup",)), ("qk_norm", ("qk_norm",)), ("z_loss", ("z_loss",)),
         ("softcap", ("softcap",)), ("qk_clip", ("qk_clip",)),
         ("all", ("warmup", "qk_norm", "qk_clip", "z_loss", "softcap")))
SEEDS = (0, 1, 2)
DEEP: dict[str, Any] = {"d_model": 32, "n_layers": 12, "n_heads": 2, "n_kv_heads": 1, "d_ff": 86}
DEPTH_SETTINGS = (("post", ("post_ln",)), ("post_warmup", ("post_ln", "warmup")), ("pre", ()))
DEPTH_LRS = (BASE_LR, BASE_LR * 10, BASE_LR * 100)
WORKERS = 2                                      # processes computing the runs (they are independent)


def lr_of(k: int) -> float:
    return BASE_LR * 10.0 ** (k / 2)


def sweep_spec(on: tuple, lr: float, seed: int, vocab_size: int, **model_changes):
    """The stability grid's run with the toggles in `on` switched on, at peak lr `lr` on `seed`."""
    from dataclasses import replace
    spec = S.spec({name: int(name in on) for name, _ in S.TOGGLES}, vocab_size, **model_changes)
    return replace(spec, schedule=replace(spec.schedule, peak=lr), seed=seed)


def jobs() -> dict[str, tuple[tuple, float, int, dict]]:
    """name -> (toggles on, lr, seed, model changes) for every run of the group: 'sweep:<fix>:<k>:<seed>' and
    'depth:<setting>:<lr>:<seed>'."""
    # (mypy infers out's value type from the first toggles; an annotation would change the code the runs are hashed on)
    out = {f"sweep:{fix}:{k}:{seed}": (on, lr_of(k), seed, {})   # type: ignore[var-annotated]
           for fix, on in FIXES for k in LR_EXPONENTS for seed in SEEDS}
    out.update({f"depth:{name}:{lr:g}:{seed}": (on, lr, seed, DEEP)   # type: ignore[misc]
                for name, on in DEPTH_SETTINGS for lr in DEPTH_LRS for seed in SEEDS})
    return out


def record(spec, train_ids, held_ids) -> dict:
    """One run: its spec, the training loss per step, the held-out loss at the end (None if it diverged) and the
    largest attention logit of the last step (where a soft-cap holds it, if it does)."""
    from .runs import run
    r = run(spec, train_ids, held_ids, S.STEPS, eval_every=S.STEPS)
    return {"spec": r["spec"], "loss": [None if v is None else sig(v, 5) for v in r["loss"]],
            "held_out": sig(r["eval_loss"][-1], 5) if r["eval_loss"] else None, "diverged_at": r["diverged_at"],
            "last_attn_logit": r["max_attn_logit"][-1]}


def _job(on: tuple, lr: float, seed: int, changes: dict, text: str) -> dict:
    import numpy as np

    from .data import course_ids
    tok, train_ids, held_ids = course_ids(text)
    with np.errstate(over="ignore", invalid="ignore"):
        return record(sweep_spec(on, lr, seed, tok.vocab_size, **changes), train_ids, held_ids)


def compute(text: str, inputs_sha256: str, progress=None) -> dict:
    from concurrent.futures import ProcessPoolExecutor

    from .data import course_ids
    tok, _, _ = course_ids(text)
    result: dict = {"inputs_sha256": inputs_sha256, "steps": S.STEPS, "base_lr": BASE_LR,
                    "lr_exponents": list(LR_EXPONENTS), "lrs": [lr_of(k) for k in LR_EXPONENTS],
                    "fixes": {fix: list(on) for fix, on in FIXES}, "seeds": list(SEEDS), "warmup": S.WARMUP,
                    "vocab_size": tok.vocab_size, "sweep": {},
                    "depth": {"model": DEEP, "settings": {name: list(on) for name, on in DEPTH_SETTINGS},
                              "lrs": list(DEPTH_LRS), "runs": {}}}
    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        futures = {name: pool.submit(_job, *job, text) for name, job in jobs().items()}
        for name, fut in futures.items():
            rec = fut.result()
            if progress:
                progress(f"done {name}")
            part, rest = name.split(":", 1)
            (result["sweep"] if part == "sweep" else result["depth"]["runs"])[rest] = rec
    return result
