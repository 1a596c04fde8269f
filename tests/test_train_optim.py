"""The trainer's optimisers, schedules, clipping and diagnostics: each optimiser's first step against the formula
worked by hand, the schedules at their defining steps, clipping against a hand-scaled gradient, determinism."""
import math

import numpy as np
import pytest

from experiments.train import model as M
from experiments.train import optim as O
from experiments.train.data import Batches, CharTokenizer, split_passages
from experiments.train.schedule import Schedule
from experiments.train.trainer import RunSpec, Trainer

LR = 3e-3


def case(seed=0):
    """A hidden matrix, the embedding (stays on AdamW under Muon) and a gain, with gradients of very different
    sizes."""
    rng = np.random.default_rng(seed)
    p = {"embed_tokens.weight": rng.standard_normal((5, 4)) * 0.02,
         "layers.0.mlp.gate_proj.weight": rng.standard_normal((6, 4)) * 0.02,
         "layers.0.input_layernorm.weight": np.ones(4)}
    g = {k: rng.standard_normal(v.shape) * 10.0 ** rng.integers(-6, 1, size=v.shape) for k, v in p.items()}
    return p, g


def copy(d):
    return {k: v.copy() for k, v in d.items()}


def test_sgd_momentum_first_two_steps():
    p, g = case()
    opt = O.SGD(momentum=0.9)
    p0 = copy(p)
    u1 = opt.step(p, g, LR)
    for k in p:
        assert np.allclose(u1[k], -LR * g[k], rtol=1e-12, atol=0)
        assert np.allclose(p[k], p0[k] - LR * g[k], rtol=1e-12)
    g2 = {k: v * -0.5 + 1e-3 for k, v in g.items()}
    u2 = opt.step(p, g2, LR)
    for k in p:
        assert np.allclose(u2[k], -LR * (0.9 * g[k] + g2[k]), rtol=1e-12)


def test_adam_first_step_moves_every_weight_by_lr_whatever_its_gradient():
    p, g = case()
    u = O.Adam(b1=0.9, b2=0.95, eps=1e-8).step(copy(p), g, LR)
    for k in p:
        # m_hat = g and v_hat = g^2 at t = 1, so the update is -lr g / (|g| + eps)
        assert np.allclose(u[k], -LR * g[k] / (np.abs(g[k]) + 1e-8), rtol=1e-12)
        big = np.abs(g[k]) > 1e-4
        assert np.allclose(np.abs(u[k][big]), LR, rtol=1e-3)
    spread = max(np.abs(v).max() for v in g.values()) / min(np.abs(v).min() for v in g.values())
    assert spread > 1e5                          # the gradients really do differ by orders of magnitude


def test_adam_l2_decay_goes_through_the_gradient():
    p, g = case(1)
    u = O.Adam(weight_decay=0.1).step(copy(p), g, LR)
    for k in p:
        gg = g[k] + 0.1 * p[k]
        assert np.allclose(u[k], -LR * gg / (np.abs(gg) + 1e-8), rtol=1e-12)


def test_adamw_first_step_decays_matrices_only():
    p, g = case(2)
    u = O.AdamW(weight_decay=0.1).step(copy(p), g, LR)
    for k in p:
        adam = -LR * g[k] / (np.abs(g[k]) + 1e-8)
        decay = -LR * 0.1 * p[k] if p[k].ndim == 2 else 0.0
        assert np.allclose(u[k], adam + decay, rtol=1e-12, atol=1e-18)
    assert O.decays("embed_tokens.weight", p["embed_tokens.weight"])
    assert not O.decays("layers.0.input_layernorm.weight", p["layers.0.input_layernorm.weight"])


def test_adam_second_step_bias_correction():
    p, g = case(3)
    opt = O.Adam(b1=0.9, b2=0.95, eps=1e-8)
    opt.step(p, g, LR)
    g2 = {k: 2 * v for k, v in g.items()}
    u = opt.step(p, g2, LR)
    for k in p:
        m = 0.1 * 0.9 * g[k] + 0.1 * g2[k]
        v = 0.05 * 0.95 * g[k] ** 2 + 0.05 * g2[k] ** 2
        assert np.allclose(u[k], -LR * (m / (1 - 0.81)) / (np.sqrt(v / (1 - 0.95 ** 2)) + 1e-8), rtol=1e-10)


def test_muon_first_step_on_an_orthogonal_gradient():
    """G = 3 Q with Q's 4 columns orthonormal (6 x 4): Newton-Schulz sees singular values ||G||_F^-1 * 3 = 1/2
    and maps each by s -> a s + b s^3 + c s^5 five times, so O = phi(1/2) Q exactly."""
    p, g = case(4)
    q, _ = np.linalg.qr(np.random.default_rng(9).standard_normal((6, 4)))
    name = "layers.0.mlp.gate_proj.weight"
    g[name] = 3 * q
    s = 0.5
    a, b, c = 3.4445, -4.7750, 2.0315
    for _ in range(5):
        s = a * s + b * s ** 3 + c * s ** 5
    opt = O.Muon(momentum=0.95, weight_decay=0.1)
    u = opt.step(copy(p), g, LR)
    expected = -LR * 0.2 * math.sqrt(6) * s * q - LR * 0.1 * p[name]
    assert np.allclose(u[name], expected, rtol=1e-6, atol=1e-12)
    # the embedding and the gain took AdamW's first step
    for k in ("embed_tokens.weight", "layers.0.input_layernorm.weight"):
        decay = -LR * 0.1 * p[k] if p[k].ndim == 2 else 0.0
        assert np.allclose(u[k], -LR * g[k] / (np.abs(g[k]) + 1e-8) + decay, rtol=1e-12, atol=1e-18)
    assert opt.state_bytes(p) == p[name].nbytes + 2 * (p["embed_tokens.weight"].nbytes
                                                        + p["layers.0.input_layernorm.weight"].nbytes)


def test_muon_update_rms_matches_adamw_scale_on_a_random_gradient():
    rng = np.random.default_rng(11)
    for shape in ((64, 64), (172, 64), (64, 172)):
        p = {"layers.0.mlp.up_proj.weight": np.zeros(shape, dtype=np.float32)}
        g = {"layers.0.mlp.up_proj.weight": rng.standard_normal(shape).astype(np.float32)}
        u = O.Muon(weight_decay=0.0).step(p, g, LR)["layers.0.mlp.up_proj.weight"]
        assert u.dtype == np.float32
        ratio = float(np.sqrt(np.mean(u.astype(np.float64) ** 2))) / LR
        assert 0.14 < ratio < 0.22, (shape, ratio)


def test_newton_schulz_orthogonalises():
    G = np.random.default_rng(1).standard_normal((32, 48))
    X = O.newton_schulz(G)
    sv = np.linalg.svd(X, compute_uv=False)
    assert 0.6 < sv.min() and sv.max() < 1.25
    u, _, vt = np.linalg.svd(G, full_matrices=False)
    # same singular vectors: X is close to U V^T
    assert np.abs(X - u @ vt).max() < 0.35


def test_unknown_optimizer_or_hyperparameter_is_refused():
    with pytest.raises(ValueError, match="optimizer"):
        O.make("lion")
    with pytest.raises(ValueError, match="adamw"):
        O.make("adamw", beta=0.9)


@pytest.mark.parametrize("kind", ["constant", "cosine", "wsd", "multistep", "minimind"])
def test_schedules_at_their_defining_steps(kind):
    s = Schedule(kind=kind, peak=1.0, total=100, warmup=10, min_ratio=0.1, decay_fraction=0.2).validate()
    lr = s.curve()
    assert len(lr) == 100 and max(lr) == pytest.approx(1.0)
    if kind != "minimind":
        assert lr[0] == pytest.approx(0.1) and lr[4] == pytest.approx(0.5) and lr[9] == pytest.approx(1.0)
    if kind == "constant":
        assert lr[10:] == [1.0] * 90
    if kind == "cosine":
        assert lr[-1] == pytest.approx(0.1)
        assert lr[10 + 89 // 2] == pytest.approx(0.55, abs=0.02)      # halfway down the half cosine
        assert all(a >= b for a, b in zip(lr[9:], lr[10:]))
    if kind == "wsd":
        assert lr[10:80] == [1.0] * 70 and lr[-1] == pytest.approx(0.1)
        assert lr[89] == pytest.approx(1.0 - 0.9 * 10 / 20)
    if kind == "multistep":
        assert lr[79] == 1.0 and lr[80] == pytest.approx(0.316) and lr[90] == pytest.approx(0.1)
    if kind == "minimind":
        assert lr[0] == pytest.approx(1.0) and lr[50] == pytest.approx(0.55)
        assert Schedule(kind=kind, peak=1.0, total=100).lr(100) == pytest.approx(0.1)


def test_schedule_refuses_bad_values_by_name():
    with pytest.raises(ValueError, match="kind"):
        Schedule(kind="linear").validate()
    with pytest.raises(ValueError, match="total"):
        Schedule(total=0).validate()


TEXT = "学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？\n" * 8
TOK = CharTokenizer.from_text(TEXT)
SMALL = M.ModelConfig(d_model=16, n_layers=2, n_heads=2, d_ff=24, vocab_size=TOK.vocab_size)


def test_tokenizer_round_trip_and_split():
    ids = TOK.encode(TEXT)
    assert TOK.decode(ids) == TEXT and ids.dtype == np.int32
    assert TOK.vocab_size == len(set(TEXT))
    line = TEXT.split("\n", 1)[0] + "\n"
    train, held = split_passages(TEXT, every=4)      # 8 passages: the 4th and the 8th held out
    assert (train, held) == (line * 6, line * 2)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        TOK.encode("孟子")


def test_clipping_scales_the_gradient_to_the_threshold():
    ids = TOK.encode(TEXT)
    spec = RunSpec(model=SMALL, optimizer="sgd", hyper=(("momentum", 0.0),),
                   schedule=Schedule(kind="constant", peak=0.1, total=5, warmup=0), clip=0.01, seed=2)
    tr = Trainer(spec, ids, params=M.init_params(SMALL, seed=2, dtype=np.float64))    # float64: no rounding
    p0 = copy(tr.params)
    x, y = Batches(ids, spec.batch_size, spec.seq_len, seed=spec.seed + 1).next()
    _, g, _ = M.loss_and_grads(copy(p0), x, y, SMALL)
    norm = math.sqrt(sum(float(np.sum(v.astype(np.float64) ** 2)) for v in g.values()))
    out = tr.step()
    assert out["clipped"] and out["grad_norm"] == pytest.approx(norm, rel=1e-6) and norm > 0.01
    for k in p0:
        assert np.allclose(tr.params[k] - p0[k], -0.1 * g[k] * (0.01 / (norm + 1e-6)), rtol=1e-9, atol=1e-15)
    assert out["grad_norms"].keys() == p0.keys()
    assert math.sqrt(sum(v * v for v in out["grad_norms"].values())) == pytest.approx(norm, rel=1e-9)
    r = out["update_ratio"]["layers.0.mlp.up_proj.weight"]
    u = tr.params["layers.0.mlp.up_proj.weight"] - p0["layers.0.mlp.up_proj.weight"]
    assert r == pytest.approx(np.sqrt(np.mean(u.astype(np.float64) ** 2))
                              / np.sqrt(np.mean(p0["layers.0.mlp.up_proj.weight"].astype(np.float64) ** 2)),
                              rel=1e-9)


@pytest.mark.parametrize("name", O.NAMES)
def test_runs_are_deterministic_and_the_loss_falls(name):
    ids = TOK.encode(TEXT)
    lr = 0.3 if name == "sgd" else 1e-2
    spec = RunSpec(model=SMALL, optimizer=name, schedule=Schedule(peak=lr, total=40, warmup=5), seed=1)
    a = [Trainer(spec, ids) for _ in range(2)]
    ra = [[t.step(detail=False) for _ in range(40)] for t in a]
    assert ra[0] == ra[1]
    assert ra[0][-1]["loss"] < 0.6 * ra[0][0]["loss"]
    other = Trainer(RunSpec(model=SMALL, optimizer=name, schedule=spec.schedule, seed=2), ids)
    assert other.step()["loss"] != ra[0][0]["loss"]
    assert RunSpec.from_json(spec.to_json()) == spec
