"""The course text (data/texts/sishu.txt) is in one script, its meta says what it holds, and the held-out part is
drawn from the same distribution as the training part; the derived files made from it say when they are stale."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from experiments.train import data as D
from experiments.train import derived
from sitegen import course_text

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / course_text.TEXT_FILE).read_text(encoding="utf-8")
META = yaml.safe_load((ROOT / "data" / "texts" / "sishu.meta.yaml").read_text(encoding="utf-8"))
BOOKS = ("学而篇", "大学", "中庸")     # the title line each book opens with


def test_the_text_is_in_one_script():
    """A further pass of OpenCC's t2s tables (passage by passage, as sitegen/course_text.py converts) changes no
    character, and no traditional-text punctuation is left."""
    assert course_text.differences(TEXT) == []
    assert not set(TEXT) & set("「」『』,:?")


def test_a_traditional_passage_is_found():
    """The check finds what it should: a passage put back into traditional characters fails it, by line."""
    lines = TEXT.split("\n")
    mixed = "\n".join(lines[:3] + ["大學之道，在明明德，在親民，在止於至善。"] + lines[3:])
    found = course_text.differences(mixed)
    assert {line for line, _, _ in found} == {4}
    assert {(old, new) for _, old, new in found} == {("學", "学"), ("親", "亲"), ("於", "于")}


def test_the_meta_says_what_the_text_holds():
    assert META["script"] == "simplified"
    assert (META["characters"], META["distinct_characters"]) == (len(TEXT), len(set(TEXT)))
    assert course_text.OPENCC_CONFIG in META["converter"]


def test_each_passage_is_in_exactly_one_part_in_order():
    train, held = D.split_passages(TEXT)
    lines = TEXT.splitlines(keepends=True)
    assert held == "".join(lines[i] for i in range(D.HELD_OUT_EVERY - 1, len(lines), D.HELD_OUT_EVERY))
    assert len(train) + len(held) == len(TEXT)
    assert sorted(train.splitlines() + held.splitlines()) == sorted(TEXT.splitlines())


def _book_of_line(lines: list[str]) -> list[int]:
    starts = [lines.index(title) for title in BOOKS]
    return [sum(i >= s for s in starts) - 1 for i in range(len(lines))]


def test_the_held_out_part_holds_every_book_in_its_share():
    """Each book gives the held-out part one in HELD_OUT_EVERY of its passages, to within one passage (a held-out
    tail would be the last book alone)."""
    lines = [line.rstrip("\n") for line in TEXT.splitlines(keepends=True)]
    book = _book_of_line(lines)
    for b, title in enumerate(BOOKS):
        mine = [i for i in range(len(lines)) if book[i] == b]
        held = [i for i in mine if (i + 1) % D.HELD_OUT_EVERY == 0]
        assert len(mine) // D.HELD_OUT_EVERY - 1 <= len(held) <= -(-len(mine) // D.HELD_OUT_EVERY) + 1, title


def _random_passage_splits(n: int = 20) -> list[float]:
    """The unseen share of n seeded random draws of one passage in HELD_OUT_EVERY: what chance alone gives."""
    lines = TEXT.splitlines(keepends=True)
    shares = []
    for seed in range(n):
        pick = np.random.default_rng(seed).random(len(lines)) < 1 / D.HELD_OUT_EVERY
        held = "".join(line for line, p in zip(lines, pick) if p)
        train = "".join(line for line, p in zip(lines, pick) if not p)
        shares.append(D.unseen_share(train, held))
    return shares


UNSEEN_OVER_CHANCE = 1.5   # the held-out part may hold at most 1.5x the unseen characters a random draw holds


def test_the_held_out_part_holds_few_characters_training_never_shows():
    """Some held-out characters occur nowhere in the training part whatever the split (a small text has rare
    characters); the course's split holds at most UNSEEN_OVER_CHANCE times what a random draw of passages holds,
    and the tail split the course used before (the last tenth of the text) holds more than that."""
    chance = float(np.mean(_random_passage_splits()))
    train, held = D.split_passages(TEXT)
    assert D.unseen_share(train, held) <= UNSEEN_OVER_CHANCE * chance
    cut = round(len(TEXT) * (1 - 1 / D.HELD_OUT_EVERY))
    assert D.unseen_share(TEXT[:cut], TEXT[cut:]) > UNSEEN_OVER_CHANCE * chance


def test_the_split_refuses_a_meaningless_period():
    with pytest.raises(ValueError, match="every >= 2"):
        D.split_passages(TEXT, every=1)


# -- derived data -----------------------------------------------------------------------------------------------
def test_every_derived_file_is_up_to_date():
    """The stored runs and the measured step were made from today's text, baseline config and trainer code."""
    assert derived.problems(ROOT) == []
    for d in derived.DERIVED:
        stored = json.loads((ROOT / d.output).read_text(encoding="utf-8"))
        assert stored["inputs_sha256"] == derived.provenance(d, ROOT)["inputs_sha256"]
        assert list(stored["inputs"]) == list(d.inputs)


def _course_copy(tmp_path):
    """The derived files and every data file they are made from (the text, the baseline config, C1's samples)."""
    root = tmp_path / "course"
    for rel in {rel for d in derived.DERIVED for rel in (d.output, *d.data)}:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    return root


def test_a_changed_baseline_config_names_every_file_it_makes_stale(tmp_path):
    root = _course_copy(tmp_path)
    config = root / derived.BASELINE_CONFIG
    config.write_text(config.read_text(encoding="utf-8").replace('"num_hidden_layers": 4', '"num_hidden_layers": 5'),
                      encoding="utf-8")
    found = dict(derived.problems(root))
    assert set(found) == {d.output for d in derived.DERIVED if derived.BASELINE_CONFIG in d.data}
    assert {"data/train_runs.json", "data/train_stability.json", "data/train_memory.json"} <= set(found)
    assert found["data/train_memory.json"] == ("stale: made from an earlier data/models/baseline/config.json; "
                                               "remake it with: python -m experiments.train.memory")


def test_a_changed_text_makes_only_what_reads_it_stale(tmp_path):
    """The runs and C1's tokenizer measurements read the text; the measured step (train_memory) does not."""
    root = _course_copy(tmp_path)
    (root / derived.TEXT_FILE).write_text(TEXT + "子曰：“温故而知新。”\n", encoding="utf-8")
    found = dict(derived.problems(root))
    runs = {d.output for d in derived.DERIVED if d.command.startswith("python -m experiments.train.runs ")}
    assert set(found) == runs | {"data/tokenizer_stats.json"}
    assert {"data/train_runs.json", "data/train_stability.json"} <= runs
    assert "data/train_memory.json" not in found
    assert "python -m experiments.train.runs --group stability" in found["data/train_stability.json"]
