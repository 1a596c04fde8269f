"""The precomputed training runs (data/train_runs.json): made from the current inputs, reproducible (the first
steps rerun here give the stored numbers), and not recomputed when nothing changed."""
import json
from pathlib import Path

import pytest

from experiments.train import runs as R
from experiments.train.data import course_ids
from experiments.train.derived import code_of
from experiments.train.trainer import RunSpec, Trainer

ROOT = Path(__file__).resolve().parent.parent
STORED = json.loads((ROOT / R.OUTPUT).read_text(encoding="utf-8"))
TEXT = (ROOT / R.TEXT_FILE).read_text(encoding="utf-8")


def test_stored_runs_are_made_from_the_current_inputs():
    assert STORED["inputs_sha256"] == R.inputs_hash(ROOT), (
        "data/train_runs.json is stale: run `python -m experiments.train.runs`")


def test_the_hash_follows_the_code_not_its_comments_or_docstrings():
    src = (ROOT / "experiments" / "train" / "optim.py").read_text(encoding="utf-8")
    reworded = (src.replace('"""', '"""Reworded. ', 1).replace("\nimport math\n", "\n\nimport math   # (sqrt)\n")
                + "# end\n")
    assert reworded != src and code_of(reworded) == code_of(src)
    changed = src.replace("MUON_RMS * math.sqrt", "MUON_RMS * 2 * math.sqrt", 1)
    assert changed != src and code_of(changed) != code_of(src)


def test_the_command_skips_when_nothing_changed(capsys):
    before = (ROOT / R.OUTPUT).stat().st_mtime_ns
    assert R.main(["--root", str(ROOT)]) == 0
    assert "up to date" in capsys.readouterr().out
    assert (ROOT / R.OUTPUT).stat().st_mtime_ns == before


def test_text_record_matches_the_text():
    tok, train, held = course_ids(TEXT)
    assert STORED["text"] == {"file": R.TEXT_FILE, "characters": len(TEXT), "vocab_size": tok.vocab_size,
                              "train_tokens": len(train), "held_out_tokens": len(held)}
    assert tok.vocab_size <= 2048                 # fits the baseline's vocabulary


def rerun(spec_json, steps):
    _, train, _ = course_ids(TEXT)
    tr = Trainer(RunSpec.from_json(spec_json), train)
    return [tr.step(detail=(i == 0)) for i in range(steps)]


@pytest.mark.parametrize("name", ["warmup0", "warmup30"])
def test_baseline_runs_reproduce_their_first_steps(name):
    stored = STORED["baseline"][name]
    got = rerun(stored["spec"], 2)
    for i, d in enumerate(got):
        assert d["loss"] == pytest.approx(stored["loss"][i], rel=1e-5)
        assert d["grad_norm"] == pytest.approx(stored["grad_norm"][i], rel=1e-4)
        assert d["lr"] == pytest.approx(stored["lr"][i], rel=1e-5)        # stored to 6 digits
    ratios = got[0]["update_ratio"]
    for k, v in stored["first_step"]["update_ratio"].items():
        assert ratios[k] == pytest.approx(v, rel=1e-3), k


@pytest.mark.parametrize("key", ["adamw:0", "muon:0", "sgd:0", "adam:3"])
def test_race_runs_reproduce_their_first_steps(key):
    stored = STORED["race"]["runs"][key]
    name, k = key.split(":")
    spec = R.race_spec(name, int(k), STORED["text"]["vocab_size"])
    got = rerun(spec.to_json(), 3)
    assert [d["loss"] for d in got] == pytest.approx(stored["loss"][:3], rel=1e-5)
    assert stored["lr"] == pytest.approx(R.RACE_LR[name] * 3.0 ** int(k))
