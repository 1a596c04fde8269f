"""Lesson C1 part ⑤, the fair comparison (experiments/train/runs_bpe.py, data/train_bpe.json): the group's compute on
a tiny setting (a few steps, one seed) against an independent reckoning of its bits per character, the two cuts'
promises (the same vocabulary size and parameters, the same held-out text), and the page's rerun (its entry points
in CPython) reproducing the group's runs.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from experiments.lessons.c1_tokenization import fair
from experiments.train import bpe
from experiments.train import model as M
from experiments.train import runs_bpe as R
from experiments.train.data import CharTokenizer, split_passages
from experiments.train.trainer import Trainer

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "data" / "texts" / "sishu.txt").read_text(encoding="utf-8")
TINY = {"steps": 4, "seeds": (0,), "eval_every": 2}


@pytest.fixture(scope="module")
def tiny():
    return R.compute(TEXT, "tiny", **TINY)


@pytest.fixture(scope="module")
def cut():
    return R.tokenizations(TEXT)


def nats_by_hand(params, cfg, ids, T) -> float:
    """-log p of every token after the first, each window of T tokens read from its own start: logits from the
    model's forward pass, the log-softmax in float64 here."""
    total = 0.0
    for start in range(0, len(ids) - 1, T):
        x = np.asarray(ids[start:start + T], dtype=np.int64)
        y = np.asarray(ids[start + 1:start + T + 1], dtype=np.int64)
        logits = M.forward(params, x[None, :len(y)], cfg, keep=False)[0].astype(np.float64)
        logz = np.log(np.exp(logits - logits.max(axis=1, keepdims=True)).sum(axis=1)) + logits.max(axis=1)
        total += float(np.sum(logz - logits[np.arange(len(y)), y]))
    return total


def test_both_cuts_read_the_same_held_out_text_with_the_same_vocabulary(cut):
    train, held = split_passages(TEXT)
    chars = CharTokenizer.from_text(TEXT)
    tok = bpe.train(train, cut["merges"], R.SCHEME)
    assert chars.decode(cut["char"]["held"]) == "\n" + held
    assert tok.decode([int(t) for t in cut["bpe"]["held"]]) == "\n" + held
    assert tok.decode([int(t) for t in cut["bpe"]["train"]]) == train
    assert cut["held_chars"] == len(held) and cut["held_bytes"] == len(held.encode("utf-8"))
    assert cut["char"]["vocab_size"] == cut["bpe"]["vocab_size"] == len(chars.chars) == 256 + cut["merges"]


def test_tiny_group_bits_per_char_equal_an_independent_reckoning(tiny, cut):
    held = split_passages(TEXT)[1]
    assert tiny["char"]["params"] == tiny["bpe"]["params"]            # the same model, the same rows
    for kind in R.KINDS:
        run = tiny[kind]["runs"][0]
        tr = Trainer(R.spec(cut[kind]["vocab_size"], 0, TINY["steps"]), cut[kind]["train"])
        for _ in range(TINY["steps"]):
            tr.step(detail=False)
        nats = nats_by_hand(tr.params, tr.spec.model, [int(t) for t in cut[kind]["held"]], R.SEQ)
        assert run["nats"] == pytest.approx(nats, rel=1e-4)
        assert run["bits_per_char"] == pytest.approx(nats / math.log(2) / len(held), rel=1e-4)
        assert run["bits_per_byte"] == pytest.approx(nats / math.log(2) / len(held.encode("utf-8")), rel=1e-4)
        assert [s for s, _ in run["eval"]] == [2, 4] and run["eval"][-1][1] == run["bits_per_char"]
        assert tiny[kind]["held_out_tokens"] == len(cut[kind]["held"]) - 1


def test_pages_rerun_is_the_groups_run(tiny):
    """The page's entry points (start, then steps until done) train the group's seed-0 runs: at each evaluation the
    bits per character the group stores."""
    sid = fair.start(TEXT, TINY["steps"], TINY["eval_every"])["session"]
    rows = []
    while True:
        r = fair.step(sid)
        rows += r["steps"]
        if r["done"]:
            break
    assert [row["step"] for row in rows] == list(range(1, TINY["steps"] + 1))
    for kind in R.KINDS:
        got = [[row["step"], row[kind]] for row in rows if kind in row]
        assert got == tiny[kind]["runs"][0]["eval"]          # (the same code on the same seed: the same numbers)
    fair.reset()
    with pytest.raises(ValueError, match="重置"):
        fair.step(sid)


def test_stored_group_holds_every_seed_of_both_kinds():
    doc = json.loads((ROOT / "data" / "train_bpe.json").read_text(encoding="utf-8"))
    for kind in R.KINDS:
        runs = doc[kind]["runs"]
        assert [r["seed"] for r in runs] == list(R.SEEDS) == doc["seeds"]
        for r in runs:
            assert r["bits_per_char"] == pytest.approx(r["nats"] / math.log(2) / doc["held_out"]["characters"],
                                                       rel=1e-5)
            assert r["eval"][-1] == [R.STEPS, r["bits_per_char"]]
