"""Speculative sampling (lesson C14 推理) on the course trainer's models: a small draft model proposes gamma tokens,
the target model scores all of them in one forward pass, and an accept/reject rule keeps the output distributed
exactly as the target's own sampling. No I/O; the precomputed measurement (runs_speculative.py) and the page's
worker run this same code.

The rule (Leviathan, Kalman & Matias 2023, "Fast Inference from Transformers via Speculative Decoding", arXiv
2211.17192, Algorithm 1; Chen et al. 2023, "Accelerating Large Language Model Decoding with Speculative Sampling",
arXiv 2302.01318, Algorithm 2):
- the draft samples x_1..x_gamma one at a time from its distributions q_1..q_gamma;
- the target's one forward pass over prefix + x_1..x_gamma gives p_1..p_{gamma+1} (a causal model's logits at every
  position at once: this is why checking gamma tokens costs one target step);
- x_i is accepted with probability min(1, p_i(x_i) / q_i(x_i)), in order; at the first rejection the token is drawn
  instead from the residual max(0, p_i − q_i), renormalised, and the step ends; if all gamma are accepted, one more
  token is drawn from p_{gamma+1}. Every step so emits between 1 and gamma + 1 tokens, and each emitted token is
  distributed as p (the papers' theorem; tests/test_speculative.py checks it exactly on small vectors and
  statistically on the course's models).
- beta_i = Σ_x min(p_i(x), q_i(x)) is the chance the i-th draft token is accepted; Leviathan's alpha is its
  expectation. If every beta equalled alpha, a step would emit (1 − alpha^(gamma+1)) / (1 − alpha) tokens on
  average (Leviathan, eq. 1), which `expected_tokens` computes.

The models attend over at most `context` positions; a generation stops at `context` tokens, so one forward pass over
the whole sequence gives exactly the distributions plain token-by-token sampling would use (RoPE positions from the
sequence's start, no window cut). Distributions are float64 (generate.next_distribution: temperature only) and every
draw is one rng.random() through generate.draw, so a seed gives the same tokens on every platform.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import generate as G
from . import model as M

GAMMA_MAX = 8             # the draft lengths the lesson weighs: 1 .. 8
Model = tuple[Any, M.ModelConfig]    # a model: its parameters (name -> array) and its config


def distributions(params, cfg: M.ModelConfig, ids, n_last: int, temperature: float = 1.0) -> np.ndarray:
    """(n_last, V): the next-token distribution after each of the last n_last positions of `ids`, one forward pass."""
    logits, _, _ = M.forward(params, np.asarray(ids, dtype=np.int64)[None, :], cfg, keep=False)
    rows = np.asarray(logits[-n_last:], dtype=np.float64)
    return np.stack([G.next_distribution(z, temperature) for z in rows])


def overlap(p, q) -> float:
    """beta = Σ min(p, q): the probability that a token drawn from q is accepted against p."""
    return float(np.minimum(p, q).sum())


def residual(p, q) -> np.ndarray:
    """max(0, p − q), renormalised: what the target draws from after rejecting a draft token (p itself if the two
    distributions are equal, where no rejection can happen)."""
    r = np.maximum(np.asarray(p, dtype=np.float64) - q, 0.0)
    s = r.sum()
    return np.asarray(p, dtype=np.float64) if s <= 0 else r / s


def verify(p_rows, q_rows, drafted, rng) -> tuple[list[int], int]:
    """The accept/reject pass over the drafted tokens, given the target's gamma + 1 distributions p_rows and the
    draft's gamma distributions q_rows: (the emitted tokens, how many draft tokens were accepted)."""
    out: list[int] = []
    for i, x in enumerate(drafted):
        p, q = p_rows[i], q_rows[i]
        if rng.random() * q[x] < p[x]:          # u < p(x) / q(x), without dividing (q(x) > 0: x was drawn from q)
            out.append(int(x))
            continue
        out.append(G.draw(residual(p, q), rng.random()))
        return out, i
    out.append(G.draw(p_rows[len(drafted)], rng.random()))
    return out, len(drafted)


def step(target: Model, draft: Model, ids: list[int], gamma: int, rng, temperature: float = 1.0) -> dict:
    """One speculative step after `ids`: target and draft are (params, cfg) pairs. Returns the emitted tokens, how
    many of the gamma drafted were accepted, and beta for each draft token the target looked at (up to and
    including the first rejected one)."""
    seq = [int(i) for i in ids]
    drafted: list[int] = []
    q_rows = []
    for _ in range(gamma):
        q = distributions(draft[0], draft[1], seq + drafted, 1, temperature)[0]
        q_rows.append(q)
        drafted.append(G.draw(q, rng.random()))
    p_rows = distributions(target[0], target[1], seq + drafted, gamma + 1, temperature)
    tokens, accepted = verify(p_rows, q_rows, drafted, rng)
    looked = min(accepted + 1, gamma)
    return {"tokens": tokens, "drafted": drafted, "accepted": accepted,
            "betas": [overlap(p_rows[i], q_rows[i]) for i in range(looked)]}


def generate(target: Model, draft: Model, prompt_ids, gamma: int, context: int, seed: int = 0,
             temperature: float = 1.0, max_steps: int | None = None) -> dict:
    """Speculative sampling from `prompt_ids` until the sequence holds `context` tokens (or after max_steps target
    steps): the new tokens and every step's record. Near the end a step drafts only as many tokens as leave room for
    the target's own one (so the last steps may draft fewer than gamma)."""
    ids = [int(i) for i in prompt_ids]
    if not ids or len(ids) >= context:
        raise ValueError(f"prompt: expected 1 to {context - 1} tokens, got {len(ids)}")
    if not 1 <= gamma <= GAMMA_MAX:
        raise ValueError(f"gamma: expected 1 to {GAMMA_MAX}, got {gamma}")
    rng = np.random.default_rng(seed)
    steps: list[dict] = []
    while len(ids) < context and (max_steps is None or len(steps) < max_steps):
        g = min(gamma, context - len(ids) - 1)
        if g == 0:                              # room for one token: the target alone
            p = distributions(target[0], target[1], ids, 1, temperature)[0]
            s: dict = {"tokens": [G.draw(p, rng.random())], "drafted": [], "accepted": 0, "betas": []}
        else:
            s = step(target, draft, ids, g, rng, temperature)
        ids.extend(s["tokens"])
        steps.append({**s, "gamma": g})
    return {"tokens": ids[len(prompt_ids):], "steps": steps}


def expected_tokens(alpha: float, gamma: int) -> float:
    """Leviathan et al.'s expected tokens per target step, (1 − alpha^(gamma+1)) / (1 − alpha) (gamma + 1 at
    alpha = 1)."""
    if alpha >= 1:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def output_distribution(p, q) -> np.ndarray:
    """The exact distribution of the first emitted token when one token is drafted from q and checked against p:
    q(x)·min(1, p(x)/q(x)) + (1 − beta)·residual(x). The theorem says it is p."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    return np.minimum(p, q) + (1 - overlap(p, q)) * residual(p, q)


# ---- Pearson's chi-square against a known distribution (the check that the output is the target's) ---------------

def chi_square_bins(p, trials: int, min_expected: float = 5) -> list[int]:
    """The tokens expected at least `min_expected` times in `trials` draws from p, most probable first; the rest
    form one pooled bin (Pearson's test needs expected counts of about 5 or more per bin)."""
    order = np.argsort(-np.asarray(p, dtype=np.float64), kind="stable")
    return [int(i) for i in order if p[i] * trials >= min_expected]


def chi_square(counts, p, bins: list[int]) -> dict:
    """Pearson's statistic of observed `counts` (per token) against p over `bins` plus the pooled rest, its degrees
    of freedom (bins − 1) and its p-value (the chance of a statistic at least as large if the counts were drawn
    from p)."""
    counts = np.asarray(counts, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    n = counts.sum()
    obs = [float(counts[i]) for i in bins]
    exp = [float(p[i] * n) for i in bins]
    obs.append(n - sum(obs))
    exp.append(n - sum(exp))
    stat = sum((o - e) ** 2 / e for o, e in zip(obs, exp) if e > 0)
    df = len(obs) - 1
    return {"statistic": stat, "df": df, "p_value": chi2_sf(stat, df)}


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X ~ chi-square with df degrees of freedom: the regularised upper incomplete gamma Q(df/2, x/2),
    by its series below a + 1 and its continued fraction above (Numerical Recipes, 3rd ed., section 6.2)."""
    import math
    a, z = df / 2, x / 2
    if z <= 0:
        return 1.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:                               # P by the series, Q = 1 − P
        term = total = 1 / a
        k = a
        while abs(term) > abs(total) * 1e-15:
            k += 1
            term *= z / k
            total += term
        return max(0.0, 1 - total * math.exp(log_front))
    tiny = 1e-300                               # Q by Lentz's continued fraction
    b = z + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_front) * h
