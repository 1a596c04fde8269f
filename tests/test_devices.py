"""Device memory has one unit rule (experiments/toolkit/devices.py): a card holds the bytes its driver reports, and
every fits/does-not-fit weighs bytes against those bytes. Checked on the table itself, on C9's calculators and
table (model states between the H100's marketed 80 × 10^9 and its real 85.5 × 10^9 bytes fit), and on the
numbers the lessons compare with (recounted here from the MiB figure); C9's BF16 figures against a BF16 rounding
done here bit by bit.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from experiments.ledger import build_ledger
from experiments.ledger import training as T
from experiments.lessons.c9_training_memory import calc
from experiments.lessons.c9_training_memory import widgets as C9
from experiments.toolkit import devices as DV
from tests.claim_inputs import compute, load_inputs

ROOT = Path(__file__).resolve().parent.parent


def config(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def numbers():
    return compute(*load_inputs(ROOT))


def test_the_table_holds_what_the_driver_reports():
    h100 = DV.DEVICES["80"]
    assert h100.bytes == 85_520_809_984 == 81_559 * 1024 * 1024       # PyTorch's total_memory on an H100 80GB HBM3
    assert DV.DEVICES["141"].bytes == 150_754_820_096
    for dev in DV.DEVICES.values():
        assert dev.bytes == dev.mib * 2 ** 20 and dev.bytes > dev.marketed_gb * 10 ** 9, dev.name
        assert f"{dev.mib:,} MiB" in dev.source, dev.name           # the source states the figure it gives
    assert tuple(calc.GPUS) == tuple(DV.DEVICES)


@pytest.mark.parametrize("nbytes", [80_000_000_001, 80_900_000_000, 81_900_000_000, 85_500_000_000, 85_520_809_984])
def test_between_the_marketed_and_the_real_bytes_it_fits(nbytes):
    assert DV.fits(nbytes, DV.H100)
    assert not DV.fits(85_520_809_985, DV.H100)


def test_the_step_calculator_weighs_bytes_against_the_cards_bytes():
    """Llama-2-7B under SGD with momentum: model states of ~80.9 × 10^9 bytes, between the marketed 80 GB and the
    card's bytes. The verdict says its states fit, whatever the activations add."""
    ledger = build_ledger(config("llama-2-7b"))
    states = T.training_memory(ledger, recipe="sgd_momentum", seq_len=128).part("states")
    assert 80 * 10 ** 9 < states < DV.H100.bytes
    x = calc.step_memory(config("llama-2-7b"), "sgd_momentum", "1", "512", "full", "fused", "0", "1", "1", "80")
    assert "激活和 logits 另算" in x["verdict"] and "本身就已经超了" not in x["verdict"]
    assert "85.5 GB" in x["gpu"]
    total = T.training_memory(ledger, calc.setup_of("sgd_momentum", "1", "512", "full", "fused", "0", "1", "1")).total
    assert x["fits"] == ("yes" if total <= DV.H100.bytes else "no")
    with pytest.raises(ValueError, match="显卡"):
        calc.step_memory(config("llama-2-7b"), "sgd_momentum", "1", "512", "full", "fused", "0", "1", "1", "81")


def test_the_recipe_table_marks_states_under_the_cards_bytes_as_fitting():
    class Data:
        def model(self, alias, key=None):
            mid = {"llama7b": "llama-2-7b", "qwen3_8b": "qwen3-8b"}[alias]
            return alias, type("M", (), {"ledger": build_ledger(config(mid)), "name": mid})()

        def option_error(self, key, expected, got):
            return ValueError(f"{key}: {expected}: {got!r}")

    view = C9.recipes_view({"models": ["llama7b", "qwen3_8b"], "gpu": "80"}, Data())
    between = 0
    for mid, row in zip(("llama-2-7b", "qwen3-8b"), view["rows"]):
        ledger = build_ledger(config(mid))
        for recipe, cell in zip(T.RECIPES, row["cells"]):
            size = T.training_memory(ledger, recipe=recipe, seq_len=128).part("states")
            assert cell["fits"] == (size <= 85_520_809_984), (mid, recipe)
            between += 80 * 10 ** 9 < size <= 85_520_809_984
    assert between >= 2                           # Llama-2-7B's SGD + momentum, Qwen3-8B's 8-bit Adam, ...
    assert "85.5 GB" in view["device"] and view["marketed"] == 80


def test_the_lessons_device_numbers_recount_the_mib(numbers):
    assert numbers["device.h100.mib"].value == 81_559
    assert float(numbers["device.h100.gb"].value) == pytest.approx(81_559 * 2 ** 20 / 1e9)
    for lesson in ("c9-training-memory/lesson.md", "c11-moe-linear-attention/lesson.md"):
        text = (ROOT / "lessons" / lesson).read_text(encoding="utf-8")
        for claim in re.findall(r"\{claim\}`([^`]+)`", text):       # a fit is weighed against the card's bytes
            if "h100_memory_gb" in claim:
                assert "device.h100.gb" in claim, (lesson, claim)


def _bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> the nearest BF16 (round to nearest, ties to even), back as float32: the top 16 bits."""
    b = x.astype(np.float32).view(np.uint32)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.view(np.float32)


def test_bf16_figures(numbers):
    bits = numbers["c9.bf16.bits"].value
    lost = numbers["c9.bf16.lost_ratio"].value
    w = np.float32(np.random.default_rng(0).uniform(1, 2, 10_000)) * np.float32(2.0 ** -5)
    w = _bf16(w)
    assert np.array_equal(_bf16(w + w / np.float32(lost * 1.001)), w)        # smaller updates vanish
    assert not np.array_equal(_bf16(w + w / np.float32(lost / 4)), w)        # larger ones do not all vanish
    spacing = _bf16(np.float32(1.0)).view(np.uint32) + np.uint32(1 << 16)
    assert float(spacing.view(np.float32)) - 1 == 2.0 ** -(bits - 1)         # next BF16 after 1: 8 significand bits
    assert float(numbers["c9.bf16.digits"].value) == pytest.approx(bits * math.log10(2))
    assert 2 < float(numbers["c9.bf16.digits"].value) < 3 < 7 < float(numbers["c9.fp32.digits"].value) < 8
