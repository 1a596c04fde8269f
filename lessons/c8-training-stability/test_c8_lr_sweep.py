"""Lesson C8's learning-rate sweep in CPython: data/train_lr_sweep.json is made from the current inputs, holds every
run of the group and reproduces their first steps (its grid-lr runs are the stability grid's very runs); the page's
figures (Wortsman et al.'s LR sensitivity, the usable range of learning rates, the deeper model's Post-LN runs)
equal a recount from the stored runs written here from the definitions, not through the lesson's calculators."""
import json
import math
from pathlib import Path

import pytest

from experiments.lessons.c8_training_stability import widgets as C8
from experiments.lessons.c8_training_stability.numbers import LR_MARGIN
from experiments.train import derived
from experiments.train import runs as R
from experiments.train import runs_lr_sweep as W
from experiments.train import runs_stability as S
from experiments.train.data import course_ids
from experiments.train.trainer import RunSpec, Trainer
from experiments.widget import WidgetData

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = "data/train_lr_sweep.json"
STORED = json.loads((ROOT / OUTPUT).read_text(encoding="utf-8"))
GRID = json.loads((ROOT / "data" / "train_stability.json").read_text(encoding="utf-8"))["grid"]
TEXT = (ROOT / R.TEXT_FILE).read_text(encoding="utf-8")


def final_loss(r) -> float:
    """Wortsman et al.'s final loss of one run: held-out, or the loss at initialisation if it diverged or ended
    above it (written out again here, from the paper's definition)."""
    loss0 = r["loss"][0]
    return loss0 if r["held_out"] is None else min(r["held_out"], loss0)


def same_to_5_digits(a: float, b: float) -> bool:
    return abs(a - b) <= 1.0001 * 10 ** (math.floor(math.log10(abs(b))) - 4)


def recount(fix: str) -> list[float]:
    return [sum(final_loss(STORED["sweep"][f"{fix}:{k}:{s}"]) for s in STORED["seeds"]) / len(STORED["seeds"])
            for k in STORED["lr_exponents"]]


@pytest.fixture(scope="module")
def numbers(course_numbers):
    return course_numbers


def test_stored_sweep_is_made_from_the_current_inputs_and_holds_every_run():
    assert OUTPUT not in dict(derived.problems(ROOT)), "run `python -m experiments.train.runs --group lr_sweep`"
    assert STORED["inputs_sha256"] == R.inputs_hash(ROOT, "lr_sweep")
    names = {f"{part}:{rest}" for part, runs in (("sweep", STORED["sweep"]), ("depth", STORED["depth"]["runs"]))
             for rest in runs}
    assert names == set(W.jobs())
    lrs = STORED["lrs"]
    assert lrs[0] < R.RACE_LR["adamw"] / 5 and lrs[-1] > 500 * R.RACE_LR["adamw"]   # well below to far above
    assert all(b / a == pytest.approx(math.sqrt(10)) for a, b in zip(lrs, lrs[1:]))


# at moderate lrs: at the largest ones the first steps amplify float32 rounding (another BLAS thread count sums in
# another order) past the stored 5 digits within three steps
@pytest.mark.parametrize("name", ["sweep:none:1:0", "sweep:all:3:1", "sweep:softcap:2:2", "depth:post:0.03:2"])
def test_stored_runs_reproduce_their_first_steps(name):
    part, rest = name.split(":", 1)
    stored = (STORED["sweep"] if part == "sweep" else STORED["depth"]["runs"])[rest]
    _, train, _ = course_ids(TEXT)
    tr = Trainer(RunSpec.from_json(stored["spec"]), train)
    assert RunSpec.from_json(stored["spec"]) == W.sweep_spec(*W.jobs()[name][:3], STORED["vocab_size"],
                                                             **W.jobs()[name][3])
    for i in range(3):
        assert tr.step(detail=False)["loss"] == pytest.approx(stored["loss"][i], rel=1e-4)


@pytest.mark.parametrize("fix", ["none", "qk_norm", "qk_clip", "softcap"])
def test_the_grid_lr_runs_are_the_stability_grids_runs(fix):
    """At C8's grid lr (k = 2) on seed 0, a single fix's sweep run is the grid's run of that toggle, computed
    separately by the stability group: the same losses, step by step."""
    on = dict(W.FIXES)[fix]
    grid = GRID[S.key({name: int(name in on) for name, _ in S.TOGGLES})]
    ours = STORED["sweep"][f"{fix}:2:0"]
    assert ours["spec"] == grid["spec"]
    # the grid stores 5 significant digits, the sweep 5 of the trainer's 6: at most one unit of the 5th apart
    assert all(same_to_5_digits(a, b) for a, b in zip(ours["loss"], grid["loss"], strict=True))
    assert same_to_5_digits(ours["held_out"], grid["eval_loss"])


def test_sensitivity_and_usable_range_are_recounted_from_the_runs(numbers):
    lrs = STORED["lrs"]
    for fix in STORED["fixes"]:
        curve = recount(fix)
        best = min(curve)
        # Wortsman et al.: E over the swept lrs of [min(loss, loss0) - best]
        assert float(numbers[f"c8.lrs.{fix}.sens"].value) == pytest.approx(
            sum(c - best for c in curve) / len(curve), abs=1e-6), fix
        within = [i for i, c in enumerate(curve) if c <= best + float(LR_MARGIN)]
        i0 = curve.index(best)
        stretch = [i for i in within if all(j in within for j in range(min(i, i0), max(i, i0) + 1))]
        assert float(numbers[f"c8.lrs.{fix}.lo"].value) == pytest.approx(lrs[min(stretch)])
        assert float(numbers[f"c8.lrs.{fix}.hi"].value) == pytest.approx(lrs[max(stretch)])
        assert float(numbers[f"c8.lrs.{fix}.best"].value) == pytest.approx(best, abs=1e-6)
    assert numbers["c8.lrs.diverged"].value == sum(r["diverged_at"] is not None for r in STORED["sweep"].values())


def test_deep_model_figures_are_recounted(numbers):
    deep = STORED["depth"]

    def one(name, lr, seed):
        return final_loss(deep["runs"][f"{name}:{lr:g}:{seed}"])
    pairs = [(lr, s) for lr in deep["lrs"] for s in STORED["seeds"]]
    assert numbers["c8.deep.warm_wins"].value == sum(one("post_warmup", lr, s) < one("post", lr, s) for lr, s in pairs)
    assert deep["model"]["n_layers"] > 4 * R.LIVE["n_layers"] and deep["model"]["d_model"] < R.LIVE["d_model"]
    for i, lr in enumerate(deep["lrs"]):
        mean = sum(one("pre", lr, s) for s in STORED["seeds"]) / len(STORED["seeds"])
        assert float(numbers[f"c8.deep.pre.lr{i}"].value) == pytest.approx(mean, abs=1e-6)


def test_the_chart_draws_the_recounted_curves():
    view = C8.lr_sweep_view({}, WidgetData({}, {"train_lr_sweep": STORED}))
    chart = view["sweep_chart"]
    assert chart["xlog"] and [s["name"] for s in chart["series"]] == [C8.FIX_ZH[f] for f in STORED["fixes"]]
    for s, fix in zip(chart["series"], STORED["fixes"]):
        assert s["x"] == STORED["lrs"] and s["y"] == pytest.approx(recount(fix))
    assert [r["name"] for r in view["deep"]["rows"]] == [C8.DEPTH_ZH[n] for n in STORED["depth"]["settings"]]
    with pytest.raises(Exception, match="train_lr_sweep"):
        C8.lr_sweep_view({}, WidgetData({}, {}))
