"""The stability group of precomputed runs (data/train_stability.json, lesson C8), made by
`python -m experiments.train.runs --group stability` from the same trainer the page runs.

- grid: the small live model (runs.LIVE: d 64, 2 layers, 4 heads) trained with AdamW at ten times C5's usual
  lr (3e-2, cosine to 10%, gradient clipping at 1.0, seed 0, the same batches) for STEPS steps, once for every
  setting of the six toggles (TOGGLES: warmup, Pre/Post-LN, QK-norm, QK-Clip at Kimi K2's tau = 100, z-loss
  at PaLM's 1e-4, Gemma 2's soft-caps 50 / 30), 2^6 runs. Per step: cross-entropy, global gradient norm (before
  clipping), max attention logit, the output's mean log Z; at the end the held-out loss and each layer's max
  logit; the step with the largest gradient norm and every tensor's gradient norm there.
- residual_init: the grid's all-off run again with residual-scaled init off (o_proj and down_proj at std 0.02).
- seeds: a few of the grid's settings (SEED_SETTINGS) again on other seeds (OTHER_SEEDS: the model's init and the
  batches both follow the seed), their loss, gradient-norm and max-logit series: at this learning rate a single
  run is partly chance, and the lesson says how often a comparison comes out the same way.
- xiong: at initialisation the gradient norm of every layer's down_proj for Pre-LN and Post-LN at depths DEPTHS,
  each the mean over XIONG_SAMPLES pairs of (batch, init seed): one batch of 4 x 32 characters moves the ratio
  between depths by a quarter either way. Xiong et al. 2020 (arXiv 2002.04745) predict the last layer's stays
  flat with depth for Post-LN and falls as 1/sqrt(L) for Pre-LN.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

from .runs import ADAMW, LIVE, RACE_LR, SEED, sig
from .schedule import Schedule

LR_FACTOR = 10                       # x C5's usual AdamW lr
STEPS = 120
WARMUP = 15                          # steps of linear warmup when the toggle is on
BATCH, SEQ, CLIP = 4, 32, 1.0
KIMI_TAU = 100.0                     # Kimi K2's QK-Clip threshold (arXiv 2507.20534)
PALM_Z = 1e-4                        # PaLM's z-loss coefficient (arXiv 2204.02311)
GEMMA2_CAPS = (50.0, 30.0)           # Gemma 2's attn_logit_softcapping, final_logit_softcapping
# each toggle: its name, and the model / schedule settings of its two positions (off, on)
TOGGLES = (
    ("warmup", ({"warmup": 0}, {"warmup": WARMUP})),
    ("post_ln", ({"norm_position": "pre"}, {"norm_position": "post"})),
    ("qk_norm", ({"qk_norm": False}, {"qk_norm": True})),
    ("qk_clip", ({"qk_clip": 0.0}, {"qk_clip": KIMI_TAU})),
    ("z_loss", ({"z_loss": 0.0}, {"z_loss": PALM_Z})),
    ("softcap", ({"attn_softcap": 0.0, "logit_softcap": 0.0},
                 {"attn_softcap": GEMMA2_CAPS[0], "logit_softcap": GEMMA2_CAPS[1]})),
)
DEPTHS = (1, 2, 4, 8, 16)
XIONG_SAMPLES = 8                    # (batch, init seed) pairs averaged at initialisation
OTHER_SEEDS = (1, 2, 3, 4)
SEED_SETTINGS = ((), ("warmup",), ("post_ln",), ("post_ln", "warmup"), ("qk_norm",), ("warmup", "qk_norm", "z_loss"))
WORKERS = 3                          # processes computing the grid (its runs are independent)


def key(setting: dict) -> str:
    """{'warmup': 1, 'post_ln': 0, ...} (every toggle 0 or 1) -> 'warmup1-post_ln0-...' in TOGGLES' order."""
    return "-".join(f"{name}{int(setting[name])}" for name, _ in TOGGLES)


def settings() -> list[dict]:
    return [dict(zip([t[0] for t in TOGGLES], bits)) for bits in itertools.product((0, 1), repeat=len(TOGGLES))]


def spec(setting: dict, vocab_size: int, **model_changes):
    from .model import ModelConfig
    from .trainer import RunSpec
    model: dict[str, Any] = {"vocab_size": vocab_size, **LIVE}
    warmup = 0
    for name, positions in TOGGLES:
        chosen: dict[str, Any] = dict(positions[int(setting[name])])
        warmup = int(chosen.pop("warmup", warmup))
        model.update(chosen)
    model.update(model_changes)
    cfg = ModelConfig(**model).validate()
    return RunSpec(model=cfg, optimizer="adamw", hyper=ADAMW,
                   schedule=Schedule("cosine", RACE_LR["adamw"] * LR_FACTOR, STEPS, warmup, 0.1),
                   batch_size=BATCH, seq_len=SEQ, clip=CLIP, seed=SEED)


def record(spec_, train_ids, held_ids, steps: int = STEPS) -> dict:
    """One run's series and end figures (stops at a non-finite loss: diverged_at)."""
    from .trainer import Trainer
    tr = Trainer(spec_, train_ids)
    out = {"spec": spec_.to_json(), "loss": [], "grad_norm": [], "max_attn_logit": [], "log_z": [],
           "qk_clipped_heads": 0, "diverged_at": None}
    spike, spike_step = -1.0, 0
    for _ in range(steps):
        d = tr.step(detail=True)
        for k, src in (("loss", "loss"), ("grad_norm", "grad_norm"), ("max_attn_logit", "max_attn_logit"),
                       ("log_z", "log_z_mean")):
            out[k].append(sig(d[src], 5))
        out["qk_clipped_heads"] += d.get("qk_clipped_heads", 0)
        if math.isfinite(d["grad_norm"]) and d["grad_norm"] > spike:
            spike, spike_step = d["grad_norm"], d["step"]
            out["spike"] = {"step": spike_step, "grad_norms": {k: sig(v, 4) for k, v in d["grad_norms"].items()}}
        out["last_layer_max_logit"] = [sig(v, 5) for v in d["max_attn_logit_per_layer"]]
        if not math.isfinite(d["loss"]):
            out["diverged_at"] = d["step"]
            break
    out["eval_loss"] = sig(tr.evaluate(held_ids), 5) if out["diverged_at"] is None else None
    return out


def xiong(train_ids, vocab_size: int) -> dict:
    """Every layer's down_proj gradient norm at initialisation, Pre-LN and Post-LN, with residual-scaled init (gpt2)
    and without (none, the plain init Xiong et al. analyse): the mean over XIONG_SAMPLES pairs of a batch (seed
    SEED + 1 + k) and an init (seed SEED + k)."""
    from . import model as M
    from .data import Batches
    batches = [Batches(train_ids, BATCH, SEQ, seed=SEED + 1 + k).next() for k in range(XIONG_SAMPLES)]
    out: dict = {"depths": list(DEPTHS), "samples": XIONG_SAMPLES}
    for init in ("gpt2", "none"):
        for norm in ("pre", "post"):
            rows = []
            for L in DEPTHS:
                dims: dict[str, Any] = {**LIVE, "vocab_size": vocab_size, "n_layers": L, "norm_position": norm,
                                        "residual_init": init}
                cfg = M.ModelConfig(**dims).validate()
                total = [0.0] * L
                for k, (x, y) in enumerate(batches):
                    _, grads, _ = M.loss_and_grads(M.init_params(cfg, seed=SEED + k), x, y, cfg)
                    for i in range(L):
                        g = grads[f"layers.{i}.mlp.down_proj.weight"].astype("float64")
                        total[i] += math.sqrt(float((g ** 2).sum()))
                rows.append([sig(t / XIONG_SAMPLES, 5) for t in total])
            out[f"{norm}_{init}"] = rows
    return out


def compute(text: str, inputs_sha256: str, progress=None) -> dict:
    import numpy as np

    from .data import course_ids
    tok, train_ids, held_ids = course_ids(text)
    result: dict = {"inputs_sha256": inputs_sha256, "steps": STEPS, "lr": RACE_LR["adamw"] * LR_FACTOR,
                    "lr_factor": LR_FACTOR, "warmup": WARMUP, "tau": KIMI_TAU, "z_loss": PALM_Z,
                    "caps": list(GEMMA2_CAPS), "toggles": [t[0] for t in TOGGLES], "vocab_size": tok.vocab_size,
                    "grid": {}}
    off = {name: 0 for name, _ in TOGGLES}
    jobs: dict[str, tuple[dict, dict]] = {key(s): (s, {}) for s in settings()}
    jobs["residual_init_none"] = (off, {"residual_init": "none"})
    seeded = {f"{seed}:{key(s)}": (s, seed) for seed in OTHER_SEEDS
              for s in ({**off, **{name: 1 for name in on}} for on in SEED_SETTINGS)}
    result["seeds"] = {"seeds": list(OTHER_SEEDS), "runs": {}}
    # the runs are independent: a few processes (each run is the same computation wherever it runs)
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        futures = {name: pool.submit(_record_job, s, changes, text) for name, (s, changes) in jobs.items()}
        seed_futures = {name: pool.submit(_record_job, s, {}, text, seed) for name, (s, seed) in seeded.items()}
        for name, fut in futures.items():
            rec = fut.result()
            if progress:
                progress(f"done {name}")
            if name == "residual_init_none":
                result[name] = rec
            else:
                result["grid"][name] = rec
        for name, fut in seed_futures.items():
            rec = fut.result()
            if progress:
                progress(f"done seed {name}")
            result["seeds"]["runs"][name] = {k: rec[k] for k in ("loss", "grad_norm", "max_attn_logit", "diverged_at")}
    with np.errstate(over="ignore", invalid="ignore"):
        result["xiong"] = xiong(train_ids, tok.vocab_size)
    return result


def _record_job(setting: dict, changes: dict, text: str, seed: int = SEED) -> dict:
    from dataclasses import replace

    import numpy as np

    from .data import course_ids
    tok, train_ids, held_ids = course_ids(text)
    run_spec = spec(setting, tok.vocab_size, **changes)
    if seed != run_spec.seed:
        run_spec = replace(run_spec, seed=seed)
    with np.errstate(over="ignore", invalid="ignore"):
        return record(run_spec, train_ids, held_ids)
