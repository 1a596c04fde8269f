"""Lesson C1's vocabulary ledger (experiments/lessons/c1_tokenization), recounted from the configs' own keys.

V and d are read here straight from each data/models/<id>/config.json (text_config when nested; GPT-2's n_embd);
whether the head is tied comes from tie_word_embeddings, or, where a config leaves it to the class default, from
what transformers built (data/reference_counts.json: a tied head has no lm_head parameters). The denominators are
the generic numbers every model has (<model>.total, <model>.active_per_token).
"""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.toolkit.model_numbers import slug

ROOT = Path(__file__).resolve().parents[2]
DATA = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "data").glob("*.json")}
MODEL_IDS = sorted(p.parent.name for p in (ROOT / "data" / "models").glob("*/config.json"))
QWEN3_ENTRIES = 151_669      # Qwen3's tokenizer.json, measured (shared/reference/chapters.md, C1)


@pytest.fixture(scope="module")
def numbers(course_numbers):
    return course_numbers


def key_of(model_id: str) -> str:
    aliases = {v: k for k, v in DATA["course"]["aliases"].items()}
    return aliases.get(model_id, slug(model_id))


def raw(model_id: str) -> tuple[int, int, bool]:
    config = json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))
    text = config.get("text_config", config)
    V = text.get("vocab_size", config.get("vocab_size"))
    d = text.get("hidden_size", text.get("n_embd"))
    tie = config.get("tie_word_embeddings", text.get("tie_word_embeddings"))
    built_tied = DATA["reference_counts"][model_id]["lm_head"] == 0
    if tie is None:
        tie = built_tied
    assert tie == built_tied, model_id
    return V, d, tie


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_vocab_ledger_recounted(numbers, model_id):
    V, d, tie = raw(model_id)
    k = f"c1.{key_of(model_id)}"
    assert numbers[f"{k}.table"].value == V * d
    assert (f"{k}.head" in numbers) == (not tie)
    if not tie:
        assert numbers[f"{k}.head"].value == V * d == DATA["reference_counts"][model_id]["lm_head"]
    params = V * d * (1 if tie else 2)
    assert numbers[f"{k}.params"].value == params
    total = numbers[f"{key_of(model_id)}.total"].value
    active = numbers[f"{key_of(model_id)}.active_per_token"].value
    assert Fraction(numbers[f"{k}.share_total"].value) == Fraction(params, total)
    assert Fraction(numbers[f"{k}.share_active"].value) == Fraction(params, active)
    assert active <= total and numbers[f"{k}.share_active"].value >= numbers[f"{k}.share_total"].value


def test_counts_over_models(numbers):
    rows = [raw(m) for m in MODEL_IDS]
    assert numbers["c1.models"].value == len(MODEL_IDS)
    assert numbers["c1.tied_models"].value == sum(tie for _, _, tie in rows)
    for m in (64, 128):
        assert numbers[f"c1.multiple_{m}_models"].value == sum(V % m == 0 for V, _, _ in rows)
    assert numbers["c1.multiple_64_models"].value < len(MODEL_IDS)     # GPT-2's 50,257 is not padded


def test_padding_figures(numbers):
    V, d, tie = raw("gpt2")
    assert tie and V == 50257
    assert numbers["c1.gpt2.padded_64"].value == 50304            # nanoGPT's vocab_size
    assert numbers["c1.gpt2.pad_rows"].value == 50304 - V
    assert numbers["c1.gpt2.pad_params"].value == (50304 - V) * d
    V, d, tie = raw("qwen3-8b")
    qwen3 = [m for m in MODEL_IDS if m.startswith("qwen3-")]
    assert len(qwen3) >= 3 and {raw(m)[0] for m in qwen3} == {V}    # every Qwen3 config: the same rows
    assert numbers["c1.qwen3.entries"].value == QWEN3_ENTRIES
    assert numbers["c1.qwen3.V"].value == V
    assert numbers["c1.qwen3.unused_rows"].value == V - QWEN3_ENTRIES
    assert numbers["c1.qwen3.v_over_128"].value == V // 128 and V % 128 == 0
    assert numbers["c1.qwen3.padded_128"].value == 151_680 < V       # more than the next multiple of 128
    assert numbers["c1.qwen3.unused_params"].value == (V - QWEN3_ENTRIES) * d * (1 if tie else 2)
    assert numbers["c1.nanogpt_multiple"].value == 64 and numbers["c1.megatron_multiple"].value == 128
