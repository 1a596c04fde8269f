"""Lesson C8's calculators: what a run of the stability grid shows, and which stability devices a config uses.

Plain functions of plain values (a run record of data/train_stability.json, a ledger), used by the numbers, the
build's widget views and the tests alike.
"""
from __future__ import annotations

import math

TAIL = 10           # steps averaged for a run's "final" training loss


def peak(series: list) -> float:
    """The largest finite value of a recorded series (inf when the run diverged to a non-finite value)."""
    vals = [v for v in series if v is not None]
    return max(vals) if len(vals) == len(series) else math.inf


def final(series: list, tail: int = TAIL) -> float:
    vals = [v for v in series[-tail:] if v is not None]
    return sum(vals) / len(vals) if vals and len(vals) == len(series[-tail:]) else math.inf


def depth_exponent(depths: list, values: list) -> float:
    """The exponent a in value ~ depth^a: the least-squares slope of log(value) against log(depth) (Xiong et al.
    predict a = -1/2 for Pre-LN's last layer at initialisation, 0 for Post-LN's)."""
    xs, ys = [math.log(d) for d in depths], [math.log(v) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def spikes(grad_norm: list, clip: float) -> int:
    """Steps whose gradient norm (before clipping) exceeded `clip` x 5: what a team reads as a spike here."""
    return sum(1 for g in grad_norm if g is None or g > 5 * clip)


def spike_tensors(run: dict, top: int = 5) -> tuple[int, list[tuple[str, float, float]]]:
    """The step of a run's largest gradient norm and, at that step, its `top` tensors by gradient norm: (name,
    norm, share of the squared global norm). The shares are each tensor's ||g_t||^2 over the sum of every
    tensor's (the global norm squared), so they add up to 1 over all tensors."""
    spike = run["spike"]
    norms = spike["grad_norms"]
    total_sq = sum(g * g for g in norms.values())
    ranked = sorted(norms.items(), key=lambda kv: -kv[1])[:top]
    return spike["step"], [(name, g, g * g / total_sq if total_sq else 0.0) for name, g in ranked]


def qk_norm_params(ledger) -> tuple[int, int]:
    """(QK-norm gains in one attention layer, in the whole model) from a ledger's tree: the q_norm / k_norm
    leaves, summed per attention block (the largest block is "per layer"; the whole model counts every copy)."""
    per_block: dict[str, int] = {}
    total = 0
    for node in ledger.root.walk():
        if not node.children and node.key.rsplit("/", 1)[-1].startswith(("q_norm", "k_norm")):
            block = node.key.rsplit("/", 1)[0]
            per_block[block] = per_block.get(block, 0) + node.count
            total += node.count * ledger.root.multiplicity(node.key)
    return max(per_block.values(), default=0), total


def devices(config: dict, ledger) -> dict:
    """Which stability devices a config.json (its text part) records: QK-norm (the ledger has q_norm / k_norm
    gains), the two soft-caps (Gemma 2's keys), the norms around each sublayer, the init std."""
    tc = config.get("text_config", config)
    per_layer, total = qk_norm_params(ledger)
    keys = [n.key for n in ledger.root.walk()]
    sandwich = any(k.endswith(("post_feedforward_layernorm", "post_feedforward_layernorm/weight")) for k in keys)
    return {"qk_norm_per_layer": per_layer, "qk_norm_total": total,
            "attn_softcap": tc.get("attn_logit_softcapping"), "final_softcap": tc.get("final_logit_softcapping"),
            "sandwich_norm": sandwich, "init_std": tc.get("initializer_range"), "total": ledger.total}


# -- the learning-rate sweep (data/train_lr_sweep.json) --------------------------------------------------------------
def capped(held_out, loss0: float) -> float:
    """A run's final loss as Wortsman et al. 2023 count it: its held-out loss, or its loss at initialisation
    loss0 when it diverged (None) or ended above it: min(loss, loss0)."""
    return loss0 if held_out is None or not math.isfinite(held_out) else min(held_out, loss0)


def mean_final(runs: dict, prefix: str, seeds: list) -> float:
    """The mean over seeds of the runs '<prefix>:<seed>' capped final losses (loss0: each run's first-step loss,
    taken before any update)."""
    rs = [runs[f"{prefix}:{s}"] for s in seeds]
    return sum(capped(r["held_out"], r["loss"][0]) for r in rs) / len(rs)


def lr_curve(runs: dict, name: str, exponents: list, seeds: list) -> list[float]:
    """One setting's final loss at each swept lr (data/train_lr_sweep.json's sweep, keyed '<name>:<k>:<seed>')."""
    return [mean_final(runs, f"{name}:{k}", seeds) for k in exponents]


def lr_sensitivity(curve: list) -> float:
    """Wortsman et al. 2023's LR sensitivity (arXiv 2309.14322): the expected deviation from the best
    final loss over the swept lrs, E_lr[min(loss(lr), loss0) - min_lr loss(lr)]; `curve` is already capped."""
    return sum(curve) / len(curve) - min(curve)


def usable_lrs(lrs: list, curve: list, margin: float) -> tuple[float, float]:
    """The lowest and highest lr of the unbroken stretch of swept lrs around the best whose final loss is within
    `margin` of the best one's."""
    best = curve.index(min(curve))
    lo = hi = best
    while lo > 0 and curve[lo - 1] <= curve[best] + margin:
        lo -= 1
    while hi < len(curve) - 1 and curve[hi + 1] <= curve[best] + margin:
        hi += 1
    return lrs[lo], lrs[hi]
