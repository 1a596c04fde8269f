"""Lesson C6's own IsoFLOP grid (data/train_isoflop.json, experiments/train/runs_isoflop.py) and its fit
(own_fit.py): the stored file is up to date with its inputs; the grid is what the
module plans (>= 3 budgets, >= 3 sizes each, C = 6·N·D with N the trainer's own count); the fit recovers known
exponents from synthetic grids; the lesson's c6.iso.* numbers and the widget's first state equal a recount from the
stored runs made here with numpy's polyfit (not through own_fit); a rerun step in CPython reproduces a stored run.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from experiments.lessons.c6_model_size import own_fit
from experiments.train import derived
from experiments.train import runs_isoflop as G

ROOT = Path(__file__).resolve().parents[2]
STORED = json.loads((ROOT / "data" / "train_isoflop.json").read_text(encoding="utf-8"))


def test_the_stored_grid_is_up_to_date():
    assert not [p for p in derived.problems(ROOT) if p[0] == "data/train_isoflop.json"]
    assert STORED["inputs_sha256"] == derived.provenance(derived.derived("data/train_isoflop.json"), ROOT)[
        "inputs_sha256"]


def test_the_grid_is_the_planned_one():
    from experiments.train.model import count_params, init_params
    runs = STORED["runs"]
    plan = G.plan(STORED["vocab_size"])
    assert [{k: r[k] for k in p} for r, p in zip(runs, plan)] == plan
    budgets = sorted({r["budget"] for r in runs})
    assert len(budgets) >= 3
    for C in budgets:
        sizes = [r for r in runs if r["budget"] == C]
        assert len({r["N"] for r in sizes}) >= 3
        for r in sizes:
            assert r["N"] == count_params(init_params(G.model_config(r["width"], STORED["vocab_size"])))
            assert r["D"] == r["steps"] * STORED["batch"] * STORED["seq"]
            assert r["C"] == 6 * r["N"] * r["D"]
            assert abs(r["C"] / C - 1) < 0.02          # rounding the steps moves the budget by under 2%
            assert math.isfinite(r["held_out"]) and 1 < r["held_out"] < math.log(STORED["vocab_size"])


def test_fit_recovers_a_known_exponent_from_exact_parabolas():
    # loss = 3 + 0.4 (log10 N - log10 N*)^2 with N* = 10^-2 C^0.62: every budget's parabola is exact
    runs = []
    for C in (1e18, 1e19, 1e20, 1e21):
        x_star = -2 + 0.62 * math.log10(C)
        for dx in (-0.6, -0.2, 0.1, 0.5, 0.9):
            N = round(10 ** (x_star + dx))
            runs.append({"budget": C, "N": N, "held_out": 3 + 0.4 * (math.log10(N) - x_star) ** 2})
    f = own_fit.fit(runs)
    assert f["a"] == pytest.approx(0.62, abs=1e-6)
    assert f["b"] == pytest.approx(0.38, abs=1e-6)
    assert f["kN"] == pytest.approx(-2, abs=1e-5)
    assert all(o["inside"] for o in f["optima"])


def test_fit_recovers_epochs_exponent_from_its_loss_surface():
    # Epoch AI's L(N, D) = E + A/N^alpha + B/D^beta sampled on each budget's IsoFLOP line, D = C/(6N): the parabolas
    # in log N find the closed form's N_opt and the exponent beta/(alpha+beta)
    from experiments.toolkit import scaling as S
    fit = S.EPOCH
    runs = []
    for C in (1e20, 1e21, 1e22, 1e23):
        N_opt = fit.optimum(C)[0]
        for dx in np.linspace(-0.5, 0.5, 9):
            N = round(N_opt * 10 ** dx)
            runs.append({"budget": C, "N": N, "held_out": fit.loss_at_budget(C, N)})
    f = own_fit.fit(runs)
    assert f["a"] == pytest.approx(fit.a, abs=0.005)
    for o, C in zip(f["optima"], (1e20, 1e21, 1e22, 1e23)):
        assert o["N"] == pytest.approx(fit.optimum(C)[0], rel=0.03)


def test_fit_refuses_a_budget_without_a_minimum():
    runs = [{"budget": C, "N": N, "held_out": -((math.log10(N) - 5) ** 2)} for C in (1e10, 1e11)
            for N in (1e4, 1e5, 1e6)]
    with pytest.raises(ValueError, match="开口向下"):
        own_fit.fit(runs)


def recount(runs):
    """Each budget's optimum and the exponents with numpy's polyfit (degree 2 in log10 N, then degree 1)."""
    out = []
    for C in sorted({r["budget"] for r in runs}):
        pts = [r for r in runs if r["budget"] == C]
        p, q, _ = np.polyfit([math.log10(r["N"]) for r in pts], [r["held_out"] for r in pts], 2)
        N = 10 ** (-q / (2 * p))
        out.append((C, N, C / (6 * N)))
    a = np.polyfit([math.log10(C) for C, _, _ in out], [math.log10(N) for _, N, _ in out], 1)[0]
    b = np.polyfit([math.log10(C) for C, _, _ in out], [math.log10(D) for _, _, D in out], 1)[0]
    return out, float(a), float(b)


@pytest.fixture(scope="module")
def numbers():
    from experiments.course_numbers import compute_course
    from sitegen.models import load_models
    data = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "data").glob("*.json")}
    nums, _ = compute_course(load_models(ROOT / "data" / "models"), data["course"], data.get("reference_counts"),
                             data.get("citations"), data=data)
    return nums


def test_the_lessons_numbers_equal_a_recount(numbers):
    optima, a, b = recount(STORED["runs"])
    v = {name: float(num.value) for name, num in numbers.items() if name.startswith("c6.iso.")}
    assert v["c6.iso.a"] == pytest.approx(a, rel=1e-9)
    assert v["c6.iso.b"] == pytest.approx(b, rel=1e-9)
    assert v["c6.iso.a"] + v["c6.iso.b"] == pytest.approx(1, abs=1e-12)
    for k, (_, N, D) in enumerate(optima, 1):
        assert v[f"c6.iso.N{k}"] == pytest.approx(N, rel=1e-9)
        assert v[f"c6.iso.D{k}"] == pytest.approx(D, rel=1e-9)
        assert v[f"c6.iso.passes{k}"] == pytest.approx(D / STORED["train_tokens"], rel=1e-9)
    Ns = [r["N"] for r in STORED["runs"]]
    assert v["c6.iso.N_span"] == pytest.approx(max(Ns) / min(Ns))
    assert v["c6.iso.budgets"] == len(optima) and v["c6.iso.runs"] == len(STORED["runs"])
    assert v["c6.iso.max_passes"] == pytest.approx(max(r["D"] for r in STORED["runs"]) / STORED["train_tokens"])
    assert STORED["train_tokens"] == v["c6.iso.train_tokens"]


def test_the_seed_numbers_equal_a_recount(numbers):
    seeds = STORED["seeds"]
    base = [r for r in STORED["runs"] if r["budget"] == seeds["budget"]]
    by_seed = {0: base} | {s: [r for r in seeds["runs"] if r["seed"] == s] for s in seeds["seeds"][1:]}
    spread = max(max(rs[i]["held_out"] for rs in by_seed.values()) - min(rs[i]["held_out"] for rs in by_seed.values())
                 for i in range(len(base)))
    assert float(numbers["c6.iso.seed_spread"].value) == pytest.approx(spread, rel=1e-9)
    stars = []
    for rs in by_seed.values():
        p, q, _ = np.polyfit([math.log10(r["N"]) for r in rs], [r["held_out"] for r in rs], 2)
        stars.append(10 ** (-q / (2 * p)))
    assert float(numbers["c6.iso.seed_N_ratio"].value) == pytest.approx(max(stars) / min(stars), rel=1e-9)


def test_the_widgets_first_state_equals_a_recount():
    optima, a, _ = recount(STORED["runs"])
    x = own_fit.own_isoflop(STORED["runs"], STORED["train_tokens"])
    assert x["a"] == f"{a:.2f}"
    assert [r["D"] for r in x["rows"]] == [f"{D:,.0f}" for _, _, D in optima]
    stars = [s for s in x["chart"]["series"] if s["name"].endswith("最低点")]
    assert [s["x"][0] for s in stars] == [round(N) for _, N, _ in optima]     # drawn as whole parameter counts
    points = [s for s in x["chart"]["series"] if s["name"].endswith("留出损失")]
    assert sum(len(s["x"]) for s in points) == len(STORED["runs"])


RERUN = """
import json, sys
from experiments.lessons.c6_model_size import widgets as Wd
from experiments.train import derived
text = (derived.PACKAGE_ROOT / derived.TEXT_FILE).read_text(encoding="utf-8")
start = Wd.own_start(text, float(sys.argv[1]))
finished = []
while len(finished) < 2:
    r = Wd.own_step(start["session"], 5)
    finished += [s["finished"] for s in r["steps"] if "finished" in s]
print(json.dumps({"start": start, "finished": finished}))
"""


def test_a_rerun_in_cpython_reproduces_stored_runs():
    # the page's entry points (own_start / own_step) against the group command's runs, in a process with one BLAS
    # thread as the command has (another thread count sums in another order, and over a few dozen steps the
    # rounding grows to hundredths of a nat: the widest model's 44 steps move by 0.017)
    import os
    import subprocess
    import sys
    C = STORED["budgets"][0]
    out = subprocess.run([sys.executable, "-c", RERUN, repr(C)], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, timeout=600, check=True)
    got = json.loads(out.stdout)
    assert got["start"]["runs"] == len([r for r in STORED["runs"] if r["budget"] == C])
    stored = {(r["budget"], r["width"]): r for r in STORED["runs"]}
    widest = sorted(STORED["widths"], reverse=True)[:2]
    assert [f["width"] for f in got["finished"]] == widest               # widest (fewest steps) first
    for f in got["finished"]:
        want = stored[(f["budget"], f["width"])]
        assert f["held_out"] == want["held_out"] and f["steps"] == want["steps"]


def test_a_rerun_refuses_a_budget_outside_the_grid():
    from experiments.lessons.c6_model_size import widgets as Wd
    text = (ROOT / derived.TEXT_FILE).read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="算力预算"):
        Wd.own_start(text, 123.0)
