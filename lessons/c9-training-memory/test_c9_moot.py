"""C9's step widget and the choices the rest of the setup makes moot (issue #49, no silent controls). ZeRO with one
data-parallel card has nothing to split: the page disables it with the reason beside it (script.js, widgets.js
moot()), which is true only if the bytes are the same for every model the course has, checked here. Selective
recomputation with the fused kernel stays choosable (full recomputation is not moot there): the answer's notes say
why the bytes stay the same; where a choice does change the bytes, no such note."""
from __future__ import annotations

from pathlib import Path

from experiments.lessons.c9_training_memory import calc
from sitegen.models import load_models

ROOT = Path(__file__).resolve().parents[2]
MODELS = load_models(ROOT / "data" / "models")
CONFIG = MODELS["llama-2-7b"]["config"]


def notes(**kw) -> list[str]:
    return [t["text"] for t in calc.step_memory(CONFIG, **kw)["notes"]]


def test_zero_on_one_card_changes_no_byte_of_any_model():
    """The disabled ZeRO's reason (the message c9.step.zero_one_card): with one card every stage is no ZeRO."""
    for model_id, m in sorted(MODELS.items()):
        base = calc.step_memory(m["config"], recipe="mixed_adamw", seq="1024")
        for zero in calc.ZEROS[1:]:
            x = calc.step_memory(m["config"], recipe="mixed_adamw", seq="1024", zero=zero)
            assert x["rows"] == base["rows"] and x["total"] == base["total"], (model_id, zero)
    assert notes(zero="3") == notes()                      # (the answer says nothing of it: the page does)


def test_selective_with_fused_says_why_nothing_changed():
    base = calc.step_memory(CONFIG)
    sel = calc.step_memory(CONFIG, recompute="selective", kernel="fused")
    assert sel["total"] == base["total"] and any("融合注意力内核" in t for t in notes(recompute="selective"))


def test_no_such_note_where_the_choice_changes_the_bytes():
    assert calc.step_memory(CONFIG, zero="3", ranks="8")["total"] != calc.step_memory(CONFIG, ranks="8")["total"]
    assert notes(zero="3", ranks="8") == []
    assert notes(recompute="selective", kernel="eager") == [] and notes() == []
