"""Speculative sampling (experiments/train/speculative.py) and its stored measurement (data/train_speculative.json):
the output is distributed as the target's, exactly on small vectors and statistically on the course's models;
the measured tokens per target step agree with Leviathan et al.'s formula at the measured alpha; the stored target
is C2's speaker; the chi-square helper agrees with scipy.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from experiments.train import generate as G
from experiments.train import speculative as SP
from experiments.train.model import ModelConfig

ROOT = Path(__file__).resolve().parent.parent
DOC = json.loads((ROOT / "data" / "train_speculative.json").read_text(encoding="utf-8"))
SPEAKER = json.loads((ROOT / "data" / "train_speaker.json").read_text(encoding="utf-8"))


def models():
    target = (G.unpack_params(SPEAKER["model"]), ModelConfig(**SPEAKER["spec"]["model"]).validate())
    draft = (G.unpack_params(DOC["draft"]), ModelConfig(**DOC["draft_spec"]["model"]).validate())
    return target, draft


def test_one_step_output_is_the_target_distribution_exactly():
    """q·min(1, p/q) + (1 − β)·residual = p for random pairs, disjoint supports and p = q."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        p, q = rng.dirichlet(np.ones(7) * 0.3), rng.dirichlet(np.ones(7) * 0.3)
        assert np.allclose(SP.output_distribution(p, q), p, atol=1e-12)
    p, q = np.array([0.5, 0.5, 0, 0]), np.array([0, 0, 0.5, 0.5])
    assert SP.overlap(p, q) == 0 and np.allclose(SP.output_distribution(p, q), p)
    assert SP.overlap(p, p) == 1 and np.allclose(SP.output_distribution(p, p), p)


def test_verify_emits_between_one_and_gamma_plus_one_tokens():
    rng = np.random.default_rng(1)
    p_rows = rng.dirichlet(np.ones(5), size=4)
    q_rows = rng.dirichlet(np.ones(5), size=3)
    for _ in range(200):
        drafted = [G.draw(q, rng.random()) for q in q_rows]
        out, accepted = SP.verify(p_rows, q_rows, drafted, rng)
        assert len(out) == accepted + 1 and out[:accepted] == drafted[:accepted]
    # a draft equal to the target is always accepted: gamma + 1 tokens a step
    out, accepted = SP.verify(p_rows, p_rows[:3], [0, 1, 2], rng)
    assert accepted == 3 and len(out) == 4


def test_expected_tokens_formula():
    assert SP.expected_tokens(0, 5) == 1 and SP.expected_tokens(1, 5) == 6
    assert SP.expected_tokens(0.5, 1) == pytest.approx(1.5)
    assert SP.expected_tokens(0.8, 4) == pytest.approx(sum(0.8 ** i for i in range(5)))


@pytest.mark.parametrize("x,df", [(3.0, 5), (10.0, 5), (50.0, 30), (1000.0, 40), (0.5, 1), (20.0, 20)])
def test_chi2_sf_agrees_with_scipy(x, df):
    assert SP.chi2_sf(x, df) == pytest.approx(stats.chi2.sf(x, df), rel=1e-9)


def test_stored_target_is_c2s_speaker():
    digest = hashlib.sha256(json.dumps(SPEAKER["model"], sort_keys=True).encode()).hexdigest()
    assert DOC["target_sha256"] == digest
    assert DOC["target_spec"] == SPEAKER["spec"]
    assert DOC["params"]["draft"] < DOC["params"]["target"]


def test_measured_tokens_per_step_follow_leviathans_formula():
    """Each gamma: tokens per step from the counts, between 1 and gamma + 1, within 6% of (1 − α^(γ+1))/(1 − α)
    at the measured α; the accepted share of the looked-at draft tokens is an estimate of the same α."""
    rows = DOC["acceptance"]
    assert [r["gamma"] for r in rows] == list(range(1, 9))
    for r in rows:
        assert r["tokens_per_step"] == pytest.approx(r["tokens"] / r["steps"], rel=1e-5)
        assert 1 < r["tokens_per_step"] < r["gamma"] + 1
        assert r["expected"] == pytest.approx(SP.expected_tokens(r["alpha"], r["gamma"]), rel=1e-5)
        assert abs(r["tokens_per_step"] / r["expected"] - 1) < 0.06
        assert abs(r["accept_rate"] - r["alpha"]) < 0.1
        assert r["tokens"] == r["steps"] + r["accepted"]       # each step: its accepted drafts + one token
    # more drafts never lower the formula's expectation at a fixed alpha, but the measured gain flattens
    assert rows[-1]["tokens_per_step"] < rows[0]["tokens_per_step"] + 1


def test_stored_distribution_check():
    d = DOC["distribution"]
    assert d["speculative"]["p_value"] > 0.01 > d["draft"]["p_value"]
    assert d["bins"] >= 10
    assert sum(t["p"] for t in d["top"]) <= 1


@pytest.mark.slow   # (a statistical sweep: 3,000 speculative steps through both models per case, seconds each)
@pytest.mark.parametrize("gamma", (1, 4))
def test_speculative_samples_are_the_targets_on_the_course_models(gamma):
    """A fresh statistical check, independent of the stored one: the second emitted character after a prompt
    (when the first is the target's most likely), gamma drafts, 3,000 steps, against the target's p by scipy's
    chi-square, and the draft's own q rejected by the same test."""
    target, draft = models()
    tok = SPEAKER["chars"]
    prompt = [tok.index(c) for c in "子曰：“"]
    first = int(np.argmax(SP.distributions(*target, prompt, 1)[0]))
    ctx = prompt + [first]
    p = SP.distributions(*target, ctx, 1)[0]
    q = SP.distributions(*draft, ctx, 1)[0]
    rng = np.random.default_rng(7 + gamma)
    counts = np.zeros(len(p))
    for _ in range(3000):
        counts[SP.step(target, draft, ctx, gamma, rng)["tokens"][0]] += 1
    keep = [i for i in np.argsort(-p) if p[i] * 3000 >= 5]
    obs = np.append(counts[keep], 3000 - counts[keep].sum())
    exp = np.append(p[keep] * 3000, 3000 - (p[keep] * 3000).sum())
    assert stats.chisquare(obs, exp).pvalue > 0.001
    exp_q = np.append(q[keep] * 3000, 3000 - (q[keep] * 3000).sum())
    assert stats.chisquare(obs, exp_q).pvalue < 1e-6


def test_generation_is_seeded_and_bounded():
    target, draft = models()
    prompt = [SPEAKER["chars"].index(c) for c in "学而"]
    a = SP.generate(target, draft, prompt, 3, 20, seed=5)
    b = SP.generate(target, draft, prompt, 3, 20, seed=5)
    assert a == b and len(a["tokens"]) == 18
    assert sum(len(s["tokens"]) for s in a["steps"]) == 18
    with pytest.raises(ValueError, match="gamma"):
        SP.generate(target, draft, prompt, 9, 20)
