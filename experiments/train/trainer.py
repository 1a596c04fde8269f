"""One training run: model, optimiser, schedule, global-norm clipping and per-step diagnostics.

A step: loss and gradients on one batch (model.loss_and_grads); the global gradient norm
||g|| = sqrt(sum over tensors of sum g^2); if it exceeds `clip`, every gradient is scaled by clip / (||g|| + 1e-6)
(torch.nn.utils.clip_grad_norm_'s rule); the optimiser's update at the schedule's lr for this step.
Diagnostics per step (plain floats, JSON-ready): loss, lr, the global norm before clipping, each tensor's
gradient norm, each tensor's update RMS / weight RMS (before the update), and the largest attention logit
(q.k / sqrt(hd)) in any layer. Everything is drawn from numpy Generators seeded by `seed`: the same spec gives
the same numbers on every run.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from . import kernels as _kernels
from . import model as M
from . import optim as O
from .data import Batches, eval_windows
from .schedule import Schedule


@dataclass(frozen=True)
class RunSpec:
    """Everything a run depends on besides the token ids."""
    model: M.ModelConfig = field(default_factory=M.ModelConfig)
    optimizer: str = "adamw"
    hyper: tuple = ()                       # optimiser hyperparameters as (key, value) pairs
    schedule: Schedule = field(default_factory=Schedule)
    batch_size: int = 4
    seq_len: int = 32
    clip: float = 1.0                       # 0 = no clipping
    seed: int = 0

    def to_json(self) -> dict:
        d = asdict(self)
        d["hyper"] = dict(self.hyper)
        return d

    @classmethod
    def from_json(cls, d: dict) -> RunSpec:
        return cls(model=M.ModelConfig(**d["model"]).validate(), optimizer=d["optimizer"],
                   hyper=tuple(sorted(d.get("hyper", {}).items())),
                   schedule=Schedule(**d["schedule"]).validate(), batch_size=d["batch_size"],
                   seq_len=d["seq_len"], clip=d["clip"], seed=d["seed"])


def rms(a) -> float:
    return float(np.sqrt(np.mean(np.square(a, dtype=np.float64))))


def global_norm(grads) -> float:
    return math.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads.values()))


class Trainer:
    def __init__(self, spec: RunSpec, train_ids, kernels=None, params=None):
        spec.model.validate()
        spec.schedule.validate()
        self.spec = spec
        self.kernels = _kernels.get(kernels)
        self.params = params if params is not None else M.init_params(spec.model, seed=spec.seed)
        hyper = dict(spec.hyper)
        if spec.optimizer == "muon":
            hyper.setdefault("kernels", self.kernels)
        self.optimizer = O.make(spec.optimizer, **hyper)
        self.batches = Batches(train_ids, spec.batch_size, spec.seq_len, seed=spec.seed + 1)
        self.step_index = 0

    def step(self, detail: bool = True) -> dict:
        """One optimisation step on the next batch; returns its diagnostics."""
        x, y = self.batches.next()
        loss, grads, diag = M.loss_and_grads(self.params, x, y, self.spec.model, self.kernels)
        norms = {k: math.sqrt(float(np.sum(np.square(g, dtype=np.float64)))) for k, g in grads.items()}
        total = math.sqrt(sum(n * n for n in norms.values()))
        clip = self.spec.clip
        if clip and total > clip:
            f = clip / (total + 1e-6)
            for g in grads.values():
                g *= g.dtype.type(f)
        lr = self.spec.schedule.lr(self.step_index)
        w_rms = {k: rms(p) for k, p in self.params.items()} if detail else None
        updates = self.optimizer.step(self.params, grads, lr)
        out = {"step": self.step_index + 1, "lr": lr, "loss": loss, "grad_norm": total,
               "clipped": bool(clip and total > clip), "max_attn_logit": diag["max_attn_logit"]}
        if detail:
            out["grad_norms"] = norms
            out["update_ratio"] = {k: (rms(u) / w_rms[k] if w_rms[k] else 0.0) for k, u in updates.items()}
            out["max_attn_logit_per_layer"] = diag["max_attn_logit_per_layer"]
        self.step_index += 1
        return out

    def evaluate(self, held_out_ids, max_windows: int = 16) -> float:
        x, y = eval_windows(held_out_ids, self.spec.seq_len, max_windows)
        return M.loss_only(self.params, x, y, self.spec.model, self.kernels)
