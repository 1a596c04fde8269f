"""One training run: model, optimiser, schedule, global-norm clipping and per-step diagnostics.

A step: loss and gradients on one batch (model.loss_and_grads); the global gradient norm
||g|| = sqrt(sum over tensors of sum g^2); if it exceeds `clip`, every gradient is scaled by clip / (||g|| + 1e-6)
(torch.nn.utils.clip_grad_norm_'s rule); the optimiser's update at the schedule's lr for this step.
Diagnostics per step (plain floats, JSON-ready): loss, lr, the global norm before clipping, each tensor's
gradient norm, each tensor's update RMS / weight RMS (before the update), and the largest attention logit
(q.k / sqrt(hd)) in any layer; with the stability diagnostics (stability_diagnostics, lesson C8) also each
layer's max logit, the output's log Z (mean and max over the batch's rows) and the z-loss term. After the update,
QK-Clip (qk_clip_rescale) when the model sets qk_clip. Everything is drawn from numpy Generators seeded by `seed`:
the same spec gives the same numbers on every run.
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
        w_rms = {k: rms(p) for k, p in self.params.items()} if detail else {}
        updates = self.optimizer.step(self.params, grads, lr)
        out = {"step": self.step_index + 1, "lr": lr, "loss": loss, "grad_norm": total,
               "clipped": bool(clip and total > clip), "max_attn_logit": diag["max_attn_logit"]}
        out.update(stability_diagnostics(diag))
        if self.spec.model.qk_clip:
            out["qk_clipped_heads"] = qk_clip_rescale(self.params, diag["max_attn_logit_per_head"],
                                                      self.spec.model)
        if detail:
            out["grad_norms"] = norms
            out["update_ratio"] = {k: (rms(u) / w_rms[k] if w_rms[k] else 0.0) for k, u in updates.items()}
            out["max_attn_logit_per_layer"] = diag["max_attn_logit_per_layer"]
        self.step_index += 1
        return out

    def evaluate(self, held_out_ids, max_windows: int = 16) -> float:
        x, y = eval_windows(held_out_ids, self.spec.seq_len, max_windows)
        return M.loss_only(self.params, x, y, self.spec.model, self.kernels)


# ---- lesson C8's additions: the stability diagnostics and QK-Clip ---------------------------------------------

def stability_diagnostics(diag: dict) -> dict:
    """The forward's stability readings as plain floats: each layer's max attention logit, the output's log Z
    (mean and max over the rows) and the z-loss term of the objective (0 when off)."""
    return {"max_attn_logit_per_layer": list(diag["max_attn_logit_per_layer"]),
            "log_z_mean": diag["log_z_mean"], "log_z_max": diag["log_z_max"], "z_loss": diag["z_loss"]}


def qk_clip_rescale(params: dict, head_max: list, cfg: M.ModelConfig) -> int:
    """QK-Clip (Kimi K2, arXiv 2507.20534, section 2.1): for each layer and query head whose largest logit
    S_max = max q.k / sqrt(hd) over this step's batch exceeded tau = cfg.qk_clip, gamma = tau / S_max is split
    between the head's rows of W_q and of W_k (sqrt(gamma) each) when the key head is the query head's own, so
    that the same q.k would now give exactly tau (RoPE is linear, so the rotation does not change this). A key
    head that several query heads share (grouped-query attention, group > 1) is left alone and the query head's
    rows take the whole gamma: the paper's rule for MLA's shared rotary key, which would otherwise also shrink the
    other heads' logits. Applied after the optimiser's update; returns how many query heads it scaled."""
    tau, hd, shared = cfg.qk_clip, cfg.head_dim, cfg.group > 1
    scaled = 0
    for i, per_head in enumerate(head_max):
        for h, s_max in enumerate(per_head):
            if not s_max > tau:
                continue
            gamma = tau / s_max
            wq = params[f"layers.{i}.self_attn.q_proj.weight"]
            if shared:
                wq[h * hd:(h + 1) * hd] *= wq.dtype.type(gamma)
            else:
                f = math.sqrt(gamma)
                for name in ("q_proj", "k_proj"):
                    w = params[f"layers.{i}.self_attn.{name}.weight"]
                    w[h * hd:(h + 1) * hd] *= w.dtype.type(f)
            scaled += 1
    return scaled
