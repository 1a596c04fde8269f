"""C9's step widget says why a choice changes nothing (issue #49, no silent controls): ZeRO with one data-parallel
card and selective recomputation with the fused kernel leave the bytes as they were, and the answer's notes say so,
naming the ZeRO stage chosen; where the choice does change the bytes, no such note."""
from __future__ import annotations

from pathlib import Path

from experiments.lessons.c9_training_memory import calc
from sitegen.models import load_models

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_models(ROOT / "data" / "models")["llama-2-7b"]["config"]


def notes(**kw) -> list[str]:
    return [t["text"] for t in calc.step_memory(CONFIG, **kw)["notes"]]


def test_zero_on_one_card_and_selective_with_fused_say_why_nothing_changed():
    base = calc.step_memory(CONFIG)
    for zero in ("1", "2", "3"):
        x = calc.step_memory(CONFIG, zero=zero)
        assert x["total"] == base["total"] and any(f"ZeRO {zero} " in t and "1 张卡" in t for t in notes(zero=zero))
    sel = calc.step_memory(CONFIG, recompute="selective", kernel="fused")
    assert sel["total"] == base["total"] and any("融合注意力内核" in t for t in notes(recompute="selective"))


def test_no_such_note_where_the_choice_changes_the_bytes():
    assert calc.step_memory(CONFIG, zero="3", ranks="8")["total"] != calc.step_memory(CONFIG, ranks="8")["total"]
    assert notes(zero="3", ranks="8") == []
    assert notes(recompute="selective", kernel="eager") == [] and notes() == []
