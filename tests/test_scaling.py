"""experiments/scaling.py: each fit's closed-form optimum against a numeric minimisation of the same fit, the
published optima reproduced (and the rounded Chinchilla fit's disagreement with its own 70B / 1.4T), and the
per-token FLOP counts against a hand count and against the ledger engine."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from experiments.ledger import ledger_of, views
from experiments.toolkit import scaling as s

ROOT = Path(__file__).resolve().parents[1]
GOPHER_C = 5.76e23          # Chinchilla's and Gopher's budget (Hoffmann et al. 2022, table 3)


def config(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text())


def golden_min(f, lo: float, hi: float, tol: float = 1e-10) -> float:
    """argmin of a unimodal f on [lo, hi], by golden-section search (independent of the closed form)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    while b - a > tol * max(1.0, abs(a)):
        if f(c) < f(d):
            b, d = d, c
            c = b - g * (b - a)
        else:
            a, c = c, d
            d = a + g * (b - a)
    return (a + b) / 2


@pytest.mark.parametrize("fit", list(s.FITS.values()), ids=list(s.FITS))
@pytest.mark.parametrize("C", [1e18, 1.63e15, 5.76e23, 1e26])
def test_closed_form_is_the_numeric_minimum_of_each_fit(fit, C):
    lnN = golden_min(lambda x: fit.loss_at_budget(C, math.exp(x)), math.log(10.0), math.log(C / 6 / 10))
    N_num = math.exp(lnN)
    N, D = fit.optimum(C)
    assert N == pytest.approx(N_num, rel=1e-6)
    assert 6 * N * D == pytest.approx(C, rel=1e-12)
    # and it is a minimum: a step either way along the IsoFLOP curve costs loss
    assert fit.loss_at_budget(C, N) < min(fit.loss_at_budget(C, N * 1.5), fit.loss_at_budget(C, N / 1.5))


def test_exponents_sum_to_one_and_follow_alpha_beta():
    for fit in s.FITS.values():
        assert fit.a + fit.b == pytest.approx(1)
        N1, _ = fit.optimum(1e22)
        N2, _ = fit.optimum(1e23)
        assert math.log10(N2 / N1) == pytest.approx(fit.a)


def test_rounded_chinchilla_fit_does_not_reproduce_chinchilla_but_epoch_does():
    N, D = s.CHINCHILLA.optimum(GOPHER_C)
    assert 31e9 < N < 33e9 and 90 < D / N < 95          # ~32B at ~93 tokens per parameter, not 70B at 20
    N, D = s.EPOCH.optimum(GOPHER_C)
    assert 71e9 < N < 73e9 and 18 < D / N < 19          # ~72B at ~18: Chinchilla's 70B on 1.4T
    assert D == pytest.approx(1.4e12, rel=0.06)


def test_deepseek_optimum_spends_the_budget():
    for C in (1e20, 5.76e23, 3e24):
        M, D = s.DEEPSEEK.optimum(C)
        assert M * D == pytest.approx(C, rel=2e-4)      # 0.1715 × 5.8316 = 1.00012, exponents sum to 1


def test_kaplan_forms():
    k = s.KAPLAN
    assert k.loss_N(k.N_c) == 1 and k.loss_D(k.D_c) == 1
    # with unlimited data L(N, D) tends to L(N), with an unlimited model to L(D)
    assert k.loss(1e9, 1e30) == pytest.approx(k.loss_N(1e9), rel=1e-6)
    assert k.loss(1e30, 1e10) == pytest.approx(k.loss_D(1e10), rel=1e-6)
    n, d = s.growth_split(k.N_exponent, k.D_exponent)
    assert n * d == pytest.approx(10)                   # 10× compute splits into N and D growth


def test_baseline_by_hand():
    L = ledger_of(config("baseline"))
    d, layers, V, d_ff, seq = 256, 4, 2048, 688, 512
    weights = layers * (4 * d * d + 3 * d * d_ff) + V * d      # + the tied output projection
    t = s.training_flops_per_token(L)
    assert t["seq"] == seq
    assert t["weights"] == 6 * weights
    assert t["attention"] == 3 * layers * 2 * 2 * d * seq       # q·k and ·v, 8 heads × 32 = d, whole sequence
    assert t["six_n"] == 6 * 3_688_704
    assert s.non_embedding_params(L) == 3_688_704 - V * d
    assert s.deepseek_M(L) == 6 * layers * (4 * d * d + 3 * d * d_ff) + 12 * layers * d * seq
    # DeepSeek's closed formula is for 12·d² blocks; the baseline's FFN is 3 × 688 = 8.06 d wide, not 8 d
    assert s.deepseek_M_formula(layers, d, seq) == 72 * layers * d * d + 12 * layers * d * seq
    assert s.attention_breakeven_seq(L) == 2 * weights / (layers * 2 * 2 * d)


def test_causal_mean_context():
    L = ledger_of(config("baseline"))
    seq = 512
    full = s.attention_flops_per_token(L, seq)
    causal = s.attention_flops_per_token(L, seq, causal=True)
    assert causal == pytest.approx(full * (seq + 1) / (2 * seq))


def test_windowed_layers_stop_at_their_window():
    L = ledger_of(config("gemma-2-9b"))                 # alternating sliding (4096) and full attention
    assert s.attention_flops_per_token(L, 8192) == views.attention_score_flops(L, 8192)
    assert s.attention_flops_per_token(L, 8192) < 2 * s.attention_flops_per_token(L, 4096)


@pytest.mark.parametrize("model_id", ["gpt2", "llama-2-7b", "gpt3-175b", "qwen3-8b", "mixtral-8x7b"])
def test_flops_agree_with_the_ledger(model_id):
    L = ledger_of(config(model_id))
    t = s.training_flops_per_token(L, 2048)
    assert t["weights"] == 3 * views.param_flops_per_token(L) + (
        0 if L.part("text/lm_head") else 6 * L.arch.vocab_size * L.arch.d_model)
    assert t["attention"] == 3 * views.attention_score_flops(L, 2048)
    parts = views.breakdown(L)
    assert s.non_embedding_params(L) == L.text_backbone - parts["embedding"] - parts.get("lm_head", 0)


def test_gpt3_tokens_per_parameter():
    L = ledger_of(config("gpt3-175b"))
    assert 300e9 / L.total == pytest.approx(1.72, abs=0.01)


def test_time_and_utilisation():
    assert s.training_seconds(86_400 * 1e15, 1, 1e15, 1.0) == 86_400
    assert s.training_seconds(1e18, 10, 1e15, 0.5) == pytest.approx(200)
    assert s.implied_utilisation(3600 * 1e15 * 0.4, 1, 1e15) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        s.training_seconds(1e18, 0, 1e15, 0.5)
    with pytest.raises(ValueError):
        s.training_seconds(1e18, 1, 1e15, 1.5)


# -- training tokens in data/models/<id>/meta.yaml ---------------------------------------------------------------
def test_meta_training_tokens_are_validated(tmp_path):
    from sitegen.models import read_meta
    good = {"id": "m", "name": "M", "family": "llama", "source": "a test", "training_tokens": 2_000_000_000_000,
            "training_tokens_source": "paper, table 1", "training_tokens_source_zh": "论文表 1", "training_tokens_url": "https://arxiv.org/abs/2307.09288"}
    import yaml

    def read(meta):
        path = tmp_path / "meta.yaml"
        path.write_text(yaml.safe_dump(meta, allow_unicode=True))
        return read_meta(path, "data/models/m/meta.yaml", "m")

    meta, errors = read(good)
    assert errors == [] and meta["training_tokens"] == 2_000_000_000_000
    for bad, key in (({**good, "training_tokens": -5}, "training_tokens"),
                     ({**good, "training_tokens": "2T"}, "training_tokens"),
                     ({**good, "training_tokens": 1.5e12}, "training_tokens"),
                     ({k: v for k, v in good.items() if k != "training_tokens_source_zh"}, "training_tokens_source_zh"),
                     ({**good, "training_tokens_url": "arxiv.org/abs/1"}, "training_tokens_url"),
                     ({"id": "m", "name": "M", "training_tokens_source": "x"}, "training_tokens_source")):
        meta, errors = read(bad)
        assert meta is None and len(errors) == 1
        text = str(errors[0])
        assert text.startswith("data/models/m/meta.yaml") and f"'{key}'" in text, text


def test_every_course_model_with_tokens_has_a_source():
    import yaml
    with_tokens = {}
    for path in sorted((ROOT / "data" / "models").glob("*/meta.yaml")):
        meta = yaml.safe_load(path.read_text())
        if "training_tokens" in meta:
            with_tokens[meta["id"]] = meta["training_tokens"]
            assert meta["training_tokens_url"].startswith("https://")
    assert with_tokens["gpt3-175b"] == 300 * 10**9 and with_tokens["llama-2-7b"] == 2 * 10**12
    assert "gpt2" not in with_tokens and "mistral-7b-v0.1" not in with_tokens   # no published figure: none shown


def test_engine_coefficients_are_the_cited_ones():
    from fractions import Fraction
    cited = json.loads((ROOT / "data" / "citations.json").read_text())
    value = lambda k: float(Fraction(cited[k]["value"]) if isinstance(cited[k]["value"], str) else cited[k]["value"])
    for prefix, fit in (("chinchilla", s.CHINCHILLA), ("epoch", s.EPOCH)):
        for p in ("E", "A", "B", "alpha", "beta"):
            assert getattr(fit, p) == value(f"{prefix}_{p}"), (prefix, p)
    k = s.KAPLAN
    assert (k.N_c, k.alpha_N, k.D_c, k.alpha_D, k.N_exponent, k.D_exponent) == tuple(
        value(f"kaplan_{p}") for p in ("N_c", "alpha_N", "D_c", "alpha_D", "N_exponent", "D_exponent"))
    d = s.DEEPSEEK
    assert (d.M_base, d.a, d.D_base, d.b) == tuple(value(f"deepseek_{p}") for p in ("M_base", "a", "D_base", "b"))
    assert abs(s.CHINCHILLA.a - value("chinchilla_a_approach3")) < 0.01   # the paper's table 2 from its own fit


def test_meta_tokens_agree_with_the_cited_ones():
    import yaml
    cited = json.loads((ROOT / "data" / "citations.json").read_text())
    meta = lambda m: yaml.safe_load((ROOT / "data" / "models" / m / "meta.yaml").read_text())
    assert meta("gpt3-175b")["training_tokens"] == cited["gpt3_train_tokens"]["value"]
    for m in ("llama-2-7b", "llama-2-13b", "llama-2-70b"):
        assert meta(m)["training_tokens"] == cited["llama2_train_tokens"]["value"]
