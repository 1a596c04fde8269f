"""The checkpoint total beside what was published (data/models/*/meta.yaml): a model whose meta.yaml records a
published total (``published_total``, rounded or exact, or ``checkpoint_total``, a sum over the published tensors)
shows it in the 数字口径 check of its total, with its own ✓ or ✗, next to the transformers count's."""
import json
from pathlib import Path

import pytest
import yaml

from experiments.toolkit.model_numbers import ModelNumbers, Registry

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted(p.parent.name for p in (ROOT / "data" / "models").glob("*/meta.yaml"))


def _doc(model_id: str) -> dict:
    folder = ROOT / "data" / "models" / model_id
    return {"meta": yaml.safe_load((folder / "meta.yaml").read_text(encoding="utf-8")),
            "config": json.loads((folder / "config.json").read_text(encoding="utf-8"))}


def _total_check(doc: dict, reference: dict | None = None) -> str | None:
    reg = Registry()
    ModelNumbers(reg, "m", "m", doc, reference).register()
    return reg.numbers["m.total"].check


PUBLISHED = [m for m in MODELS if {"published_total", "checkpoint_total"} & set(_doc(m)["meta"])]

# Published figures that disagree with the checkpoint total beyond their rounding, recorded as published and shown
# with a ✗ (the page's footer counts it as 不一致), each with the reason:
DISAGREES = {
    "gemma-2-9b": "与此不同 ✗",               # the paper counts a 256,128-row embedding, the config has 256,000
    "glm-5": "超过一个末位单位 ✗",             # 744B leaves out the MTP layer the checkpoint holds (~11.9B)
    "gemma-4-26b-a4b": "超过一个末位单位 ✗",   # 25.2B is the text model; the vision tower (~0.57B) is extra
}


def test_the_models_with_a_published_total():
    assert {"mixtral-8x7b", "qwen3-30b-a3b", "gpt-oss-120b", "qwen2.5-7b", "deepseek-v3", "jamba-v0.1",
            "qwen3-235b-a22b", "qwen3-next-80b-a3b", "llama-2-7b", "llama-2-13b", "llama-2-70b", "mistral-7b-v0.1",
            "gemma-2-9b", "qwen3-8b", "gpt2", "deepseek-v3.2", "glm-5", "kimi-k2.5", "minimax-m2.5", "mimo-v2-flash",
            "llama-4-scout-17b-16e", "qwen3.5-35b-a3b", "gemma-4-26b-a4b"} <= set(PUBLISHED)
    for m in PUBLISHED:
        meta = _doc(m)["meta"]
        assert meta.get("published_total_source") or meta.get("checkpoint_total_source"), m


@pytest.mark.parametrize("model_id", PUBLISHED)
def test_each_published_total_agrees_and_says_so(model_id):
    doc = _doc(model_id)
    meta = doc["meta"]
    check = _total_check(doc)
    if model_id in DISAGREES:
        assert check and check.endswith(DISAGREES[model_id]) and f"{meta['published_total']:,}" in check
        return
    exact_same = meta.get("published_total") and not meta.get("published_total_rounded") \
        and "checkpoint_total" not in meta
    if exact_same:       # came with the config: nothing independent to show
        assert check is None or "发布方" not in check
        return
    assert check and "✗" not in check and "✓" in check
    if meta.get("published_total_rounded"):
        assert f"发布方公布约 {meta['published_total']:,}" in check
    if "checkpoint_total" in meta:
        assert f"checkpoint 各张量合计 {meta['checkpoint_total']:,} ✓" in check


def test_a_wrong_published_total_is_marked():
    doc = _doc("mixtral-8x7b")
    doc["meta"] = dict(doc["meta"], published_total=46_500_000_000)      # 46.5B: 0.2B off at a 0.1B digit
    assert "超过一个末位单位 ✗" in _total_check(doc)
    doc["meta"] = dict(doc["meta"], published_total=47_000_000_000)      # 47B: within one unit (1B)
    assert "不到一个末位单位 ✓" in _total_check(doc)
    doc["meta"] = dict(doc["meta"], published_total_rounded=False, published_total=46_702_792_705)
    assert "与此不同 ✗" in _total_check(doc)


def test_both_checks_side_by_side():
    """The transformers count's ✓ and the publisher's ✓ are two statements in one check, each naming its source."""
    doc = _doc("mixtral-8x7b")
    check = _total_check(doc, {"hf_count": 46_702_792_704})
    first, second = check.split("；")
    assert first.startswith("transformers 实现") and first.endswith("✓")
    assert second.startswith("发布方公布约 46,700,000,000") and second.endswith("✓")


def test_a_disagreement_is_counted_on_the_page_not_hidden():
    """A ✗ from a published total does not stop the build: the lesson's footer counts it (N 个不一致) beside the
    check itself, so it is neither fatal nor silent."""
    from types import SimpleNamespace

    from sitegen.pages import provenance

    doc = _doc("gpt2")   # as if it still recorded the paper's 117M, which OpenAI's README later called wrong
    doc["meta"] = dict(doc["meta"], published_total=117_000_000)
    reg = Registry()
    mn = ModelNumbers(reg, "gpt2", "gpt2", doc, {"hf_count": 124_439_808})
    mn.register()
    model = SimpleNamespace(id="gpt2", name="GPT-2", where="models.gpt2", meta=doc["meta"])
    total = SimpleNamespace(check=reg.numbers["gpt2.total"].check, sources=["models.gpt2/config.json"])
    lesson = SimpleNamespace(used=["gpt2.total"])
    footer = provenance(lesson, {"gpt2.total": total}, {"gpt2": model}, {})
    assert "transformers 实现在 meta 设备上实例化数得 124,439,808 ✓" in total.check
    assert "发布方公布约 117,000,000" in total.check and total.check.endswith("✗")
    assert footer["checked"] == 1 and footer["failed"] == 1
