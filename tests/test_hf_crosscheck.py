"""Cross-check the engine against Hugging Face ``transformers`` for every model in ``data/models``.

For each ``data/models/<id>/config.json`` the engine's ``hf_count`` must equal, exactly, the number of parameters
transformers instantiates for the same config (``hf_reference.hf_param_count``), and the engine's
``total - hf_count`` must be exactly the parts transformers does not build as parameters: the MTP layers and
the checkpoint tensors it registers as buffers (kind "hf_buffer", e.g. DeepSeek-V3's router
e_score_correction_bias), which must match transformers' persistent buffers one for one in size. Configs whose
model_type transformers does not support are skipped with the reason. ``test_reference_counts`` proves the
harness itself against the counts verified in ``/work/shared/reference/README.md``.

``data/reference_counts.json`` (the ✓ the site prints next to numbers) is regenerated live here and must be
byte-for-byte what is committed, and every value in it must equal the engine's corresponding value.
"""
import json
from pathlib import Path

import pytest

from hf_reference import all_reference_counts, hf_buffer_shapes, hf_param_count, reference_json, supported

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "data" / "models"
MODEL_FILES = sorted(MODELS.glob("*/config.json"))
REFERENCE_FILE = ROOT / "data" / "reference_counts.json"

# HF model totals verified independently in the shared reference README.
REFERENCE_COUNTS = {
    "qwen3.8-27b": 27_356_728_560,
    "llama-2-7b": 6_738_415_616,
    "gpt2": 124_439_808,
    "baseline": 3_688_704,
}


def _config(path: Path) -> dict:
    """A model's published config.json (data/models/<id>/config.json)."""
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", MODEL_FILES, ids=[p.parent.name for p in MODEL_FILES])
def test_engine_matches_transformers(path):
    """Engine hf_count == transformers' parameter count; the remainder of the total is exactly MTP plus the
    checkpoint tensors transformers keeps as buffers, and those match its persistent buffers in size."""
    config = _config(path)
    if not supported(config):
        pytest.skip(f"transformers has no model for model_type {config.get('model_type')!r}")
    from experiments.ledger import build_ledger  # imported here so test_reference_counts runs without it

    ledger = build_ledger(config)
    assert ledger.hf_count == hf_param_count(config)
    assert ledger.total - ledger.hf_count == ledger.mtp + ledger.hf_buffers
    buffers = sum(_numel(shape) for shape in hf_buffer_shapes(config).values())
    assert ledger.hf_buffers == buffers


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@pytest.mark.parametrize("model_id", sorted(REFERENCE_COUNTS))
def test_reference_counts(model_id):
    """The harness reproduces the HF totals verified in the shared reference README."""
    assert hf_param_count(_config(MODELS / model_id / "config.json")) == REFERENCE_COUNTS[model_id]


# -- data/reference_counts.json ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def live_reference():
    """The reference counts regenerated now from transformers (one meta-device build per model)."""
    return all_reference_counts(MODELS)


def test_reference_file_is_exactly_what_transformers_gives(live_reference):
    """The committed file is byte-for-byte the regenerated one (regenerate with
    ``python tests/hf_reference.py --write-reference data/reference_counts.json``)."""
    assert json.loads(REFERENCE_FILE.read_text(encoding="utf-8")) == live_reference
    assert REFERENCE_FILE.read_text(encoding="utf-8") == reference_json(live_reference)
    supported_ids = {p.parent.name for p in MODEL_FILES if supported(_config(p))}
    assert set(live_reference) == supported_ids


@pytest.mark.parametrize("path", MODEL_FILES, ids=[p.parent.name for p in MODEL_FILES])
def test_engine_equals_reference_file(path):
    """Every count in data/reference_counts.json equals the engine's corresponding value."""
    reference = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))
    if path.parent.name not in reference:
        pytest.skip(f"{path.parent.name}: transformers does not support model_type {_config(path).get('model_type')!r}")
    from experiments.ledger import build_ledger

    ref, ledger = reference[path.parent.name], build_ledger(_config(path))
    text = ledger.root.find("text")
    final_norms = [c for c in text.children if c.kind == "norm"]
    lm_head = text.get("text/lm_head")
    engine = {
        "hf_count": ledger.hf_count,
        "text_backbone": ledger.text_backbone,
        "embedding": ledger.count("text/embedding"),
        "lm_head": lm_head.count if lm_head else 0,
        "final_norm": sum(c.count for c in final_norms),
        "vision": ledger.vision,
    }
    engine.update({f"layer.{name}": ledger.layer(name).per_copy for name in ledger.layer_types})
    assert engine == ref


# -- variants of the MoE / hybrid configs: the options the released files do not exercise -------------------------
def _variant(model_id: str, **changes) -> dict:
    cfg = dict(_config(MODELS / model_id / "config.json"))
    for k, v in changes.items():
        if v is None and k != "q_lora_rank":
            cfg.pop(k, None)
        else:
            cfg[k] = v
    return cfg


VARIANTS = {
    "qwen3_moe sparse step + mlp_only_layers": _variant("qwen3-30b-a3b", num_hidden_layers=6, mlp_only_layers=[0],
                                                        decoder_sparse_step=2),
    "qwen3_moe attention bias, tied": _variant("qwen3-30b-a3b", num_hidden_layers=2, attention_bias=True,
                                               tie_word_embeddings=True),
    "qwen3_moe sliding window": _variant("qwen3-30b-a3b", num_hidden_layers=2, use_sliding_window=True,
                                         sliding_window=4096),
    "gpt_oss default layer_types": _variant("gpt-oss-120b", num_hidden_layers=5, layer_types=None),
    "gpt_oss no attention bias": _variant("gpt-oss-120b", num_hidden_layers=2, attention_bias=False,
                                          layer_types=None),
    "deepseek plain q_proj, bias, tied": _variant("deepseek-v3", num_hidden_layers=4, q_lora_rank=None,
                                                  attention_bias=True, tie_word_embeddings=True,
                                                  first_k_dense_replace=1, n_shared_experts=2),
    "deepseek all MoE": _variant("deepseek-v3", num_hidden_layers=2, first_k_dense_replace=0),
    "qwen3_next mixed dense/MoE": _variant("qwen3-next-80b-a3b", num_hidden_layers=8, mlp_only_layers=[0, 3]),
    "qwen3_next layer_types": _variant("qwen3-next-80b-a3b", num_hidden_layers=3,
                                       layer_types=["full_attention", "linear_attention", "full_attention"],
                                       full_attention_interval=None),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_moe_variants_match_transformers(name):
    """hf_count, the per-part counts and one layer of every group agree with transformers for each variant."""
    from experiments.ledger import build_ledger
    from hf_reference import reference_counts

    config = VARIANTS[name]
    ledger, ref = build_ledger(config), reference_counts(config)
    assert ledger.hf_count == ref["hf_count"] == hf_param_count(config)
    assert ledger.text_backbone == ref["text_backbone"]
    assert {f"layer.{t}": ledger.layer(t).per_copy for t in ledger.layer_types} == \
        {k: v for k, v in ref.items() if k.startswith("layer.")}


# -- where the parameters sit, not only how many ----------------------------------------------------------------
@pytest.mark.parametrize("path", MODEL_FILES, ids=[p.parent.name for p in MODEL_FILES])
def test_whole_tree_matches_transformers(path):
    """Every decoder layer's parameters per module, and every other tensor's size, as transformers builds them."""
    from hf_tree import tree_mismatches

    config = _config(path)
    if not supported(config):
        pytest.skip(f"transformers has no model for model_type {config.get('model_type')!r}")
    assert tree_mismatches(config) == []


def test_tree_comparison_names_a_misplaced_module():
    """The comparison is not a sum: the same total with a tensor in another module is reported by name."""
    from experiments.ledger import build_ledger
    from hf_tree import engine_view, hf_view

    config = _config(MODELS / "llama-2-7b" / "config.json")
    layers, other, vision = engine_view(build_ledger(config))
    (sig, n), = layers.items()
    moved = dict(sig)
    moved["self_attn.q_proj"] -= 4096
    moved["input_layernorm.weight"] += 4096
    assert sum(moved.values()) == sum(dict(sig).values())
    assert hf_view(config)[0] == layers
    assert hf_view(config)[0] != type(layers)({frozenset(moved.items()): n})
