"""The IsoFLOP group of precomputed runs (data/train_isoflop.json, lesson C6), made by
`python -m experiments.train.runs --group isoflop` from the same trainer the page runs.

Chinchilla's approach 2 (Hoffmann et al. 2022, arXiv 2203.15556, section 3.2) at the course's scale: at each of a
few compute budgets C, models of several sizes N are each trained on the D = C / (6·N) tokens the budget leaves
them, and the final held-out loss of each is recorded; lesson C6 fits a parabola in log N through each budget's
losses (its lowest point is that budget's optimum N*) and a power law through the optima across budgets.

- Sizes (SIZES): the small live model's shape (runs.LIVE: 2 layers, 4 query heads sharing 2 key/value heads,
  d_ff = d_model × 172/64) at several
  widths d_model. N is the trainer's own count (model.count_params over init_params): every parameter, the tied
  embedding included, as Chinchilla counts (at this size the 1,549-character embedding is most of N).
- Budgets (BUDGETS): C = 6·N·D FLOPs, D counted in training tokens (steps × batch × seq); a run's steps are
  round(C / (6·N·BATCH·SEQ)), and its realised D and C = 6·N·D are stored beside the nominal budget.
- Training: AdamW at C5's usual lr (runs.RACE_LR), cosine to 10% over each run's own length (Chinchilla's point:
  a schedule longer than the run under-rates short runs) with WARMUP_SHARE of the steps as warmup, clipping 1.0,
  seed 0, batches of 4 × 32 characters from the training passages (every tenth passage held out, data.course_ids).
- Seeds: the smallest budget's runs again on OTHER_SEEDS (the init and the batches both follow the seed): how far
  one run's loss, and the optimum it gives, moves by chance alone.
- The loss recorded is the held-out loss over every whole window of seq characters in the held-out passages
  (all of them, not the trainer's default 16 windows: the fit reads differences of a few hundredths of a nat).

This module holds the grid and the computation; the page's rerun (lesson C6's widgets.own_start / own_step) trains
plan()'s runs with spec() and held_out_loss(), so its runs are these runs.
"""
from __future__ import annotations

from typing import Any

from .runs import ADAMW, LIVE, RACE_LR, SEED, sig
from .schedule import Schedule

WIDTHS = (16, 24, 32, 48, 64, 96, 128)       # d_model of each size; everything else is runs.LIVE's
BUDGETS = (2e10, 6e10, 2e11)             # C in FLOPs (6·N·D)
BATCH, SEQ, CLIP = 4, 32, 1.0
SEED_BUDGET, OTHER_SEEDS = 0, (1, 2)     # the smallest budget again on other seeds (init and batches): the noise
WARMUP_SHARE = 0.1                       # of each run's steps, linear warmup
MIN_RATIO = 0.1                          # cosine down to 10% of the peak
WORKERS = 2                              # processes computing the grid (its runs are independent)


def model_config(width: int, vocab_size: int):
    """The live model's shape at d_model = width (d_ff scaled with it, at the live model's ratio)."""
    from .model import ModelConfig
    d_ff = round(width * LIVE["d_ff"] / LIVE["d_model"])
    return ModelConfig(vocab_size=vocab_size, d_model=width, n_layers=LIVE["n_layers"], n_heads=LIVE["n_heads"],
                       n_kv_heads=LIVE["n_kv_heads"], d_ff=d_ff).validate()


def params_of(width: int, vocab_size: int) -> int:
    """N: the trainer's own count of the model's parameters (every array init_params makes)."""
    from .model import count_params, init_params
    return count_params(init_params(model_config(width, vocab_size), seed=SEED))


def steps_for(budget: float, n_params: int) -> int:
    """The steps a budget of C = 6·N·D FLOPs leaves a model of N parameters: D / (batch × seq), rounded."""
    return max(1, round(budget / (6 * n_params * BATCH * SEQ)))


def spec(width: int, steps: int, vocab_size: int, seed: int = SEED):
    from .trainer import RunSpec
    return RunSpec(model=model_config(width, vocab_size), optimizer="adamw", hyper=ADAMW,
                   schedule=Schedule("cosine", RACE_LR["adamw"], steps, round(WARMUP_SHARE * steps), MIN_RATIO),
                   batch_size=BATCH, seq_len=SEQ, clip=CLIP, seed=seed)


def held_out_loss(trainer, held_ids) -> float:
    """The mean next-character loss over every whole window of SEQ characters in the held-out passages."""
    return trainer.evaluate(held_ids, max_windows=(len(held_ids) - 1) // SEQ)


def plan(vocab_size: int) -> list[dict]:
    """Every run of the grid, budget by budget and size by size: budget, width, N, steps, D and the realised C."""
    out = []
    for budget in BUDGETS:
        for width in WIDTHS:
            N = params_of(width, vocab_size)
            steps = steps_for(budget, N)
            D = steps * BATCH * SEQ
            out.append({"budget": budget, "width": width, "N": N, "steps": steps, "D": D, "C": 6 * N * D})
    return out


def run_one(width: int, steps: int, text: str, seed: int = SEED) -> dict:
    """One run of the grid: its held-out loss at the end and its last training loss."""
    import numpy as np

    from .data import course_ids
    from .trainer import Trainer
    tok, train_ids, held_ids = course_ids(text)
    tr = Trainer(spec(width, steps, tok.vocab_size, seed), train_ids)
    with np.errstate(over="ignore", invalid="ignore"):
        last = float("nan")
        for _ in range(steps):
            last = tr.step(detail=False)["loss"]
        return {"held_out": sig(held_out_loss(tr, held_ids), 5), "train_last": sig(last, 5)}


def compute(text: str, inputs_sha256: str, progress=None) -> dict:
    from concurrent.futures import ProcessPoolExecutor

    from .data import course_ids
    tok, train_ids, held_ids = course_ids(text)
    runs = plan(tok.vocab_size)
    result: dict[str, Any] = {
        "inputs_sha256": inputs_sha256, "budgets": list(BUDGETS), "widths": list(WIDTHS),
        "batch": BATCH, "seq": SEQ, "lr": RACE_LR["adamw"], "warmup_share": WARMUP_SHARE, "min_ratio": MIN_RATIO,
        "n_layers": LIVE["n_layers"], "n_heads": LIVE["n_heads"], "vocab_size": tok.vocab_size,
        "train_tokens": int(len(train_ids)), "held_out_tokens": int(len(held_ids)), "runs": runs}
    # the runs are independent: a few processes, longest first (each run is the same computation wherever it runs)
    order = sorted(range(len(runs)), key=lambda i: -runs[i]["steps"])
    seeded = [{**r, "seed": seed} for seed in OTHER_SEEDS for r in runs if r["budget"] == BUDGETS[SEED_BUDGET]]
    result["seeds"] = {"budget": BUDGETS[SEED_BUDGET], "seeds": [SEED, *OTHER_SEEDS], "runs": seeded}
    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        futures = {i: pool.submit(run_one, runs[i]["width"], runs[i]["steps"], text) for i in order}
        seed_futures = [pool.submit(run_one, r["width"], r["steps"], text, r["seed"]) for r in seeded]
        for i in order:
            runs[i].update(futures[i].result())
            if progress:
                progress(f"C {runs[i]['budget']:g} d {runs[i]['width']}: {runs[i]['held_out']}")
        for r, fut in zip(seeded, seed_futures):
            r.update(fut.result())
            if progress:
                progress(f"seed {r['seed']} C {r['budget']:g} d {r['width']}: {r['held_out']}")
    return result
