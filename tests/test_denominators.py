"""One denominator rule for every family, checked against transformers 5.23 on the meta device and against what the
published checkpoints hold (docs/adding-a-family.md, "Denominators"):

- MTP layers the checkpoint ships are the ledger's ``mtp`` part, outside transformers' parameters: DeepSeek-V3's,
  GLM's and Nemotron-3's ``num_nextn_predict_layers`` alike; MiniMax-M2.x's ``num_mtp_modules`` are declared but
  the published checkpoints hold no MTP tensor (MiniMax-AI/MiniMax-M2.7 issue #16: 0 of ~1369 keys), so none;
- persistent buffers the checkpoint stores (a router's e_score_correction_bias) are a line of their own:
  ``hf_buffers``, in the total, outside transformers' parameters, equal to transformers' persistent buffers;
- a multimodal wrapper without a ``vision_config`` has the vision tower transformers builds then: its vision
  configuration class's default one (Llama-4, Qwen-VL, Qwen3.5, Gemma 3, LLaVA), none for Gemma 4.
"""
import copy
import json
from pathlib import Path

import pytest

from hf_reference import hf_buffer_shapes, hf_param_count
from hf_tree import tree_mismatches

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "fixtures" / "models"


def _fixture(name: str) -> dict:
    return json.loads((MODELS / name / "config.json").read_text(encoding="utf-8"))


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@pytest.mark.parametrize("name, key", [("deepseek-v3.2", "num_nextn_predict_layers"),
                                       ("glm-4.7", "num_nextn_predict_layers"),
                                       ("nemotron-3-nano-30b-a3b", "num_nextn_predict_layers")])
def test_mtp_layers_are_counted_the_same_way(name, key):
    from experiments.ledger import build_ledger
    config = _fixture(name)
    config[key] = 1
    ledger = build_ledger(config)
    assert ledger.mtp > 0
    assert ledger.hf_count == hf_param_count(config)
    assert ledger.total == ledger.hf_count + ledger.mtp + ledger.hf_buffers
    without = dict(config, **{key: 0})
    assert build_ledger(without).total == ledger.total - ledger.mtp


def test_nemotron_mtp_step_is_its_pattern_of_blocks():
    """One Nemotron-H MTP step: enorm, hnorm, eh_proj (2d -> d), the pattern's blocks, a final norm; each block the
    same as that kind of block in the main stack."""
    from experiments.ledger import build_ledger
    config = dict(_fixture("nemotron-3-nano-30b-a3b"), num_nextn_predict_layers=2, mtp_hybrid_override_pattern="*E")
    ledger = build_ledger(config)
    d = config["hidden_size"]
    attn = ledger.layer("full_attention").count // ledger.layer("full_attention").n
    moe = ledger.layer("moe").count // ledger.layer("moe").n
    assert ledger.mtp == 2 * (2 * d + 2 * d * d + attn + moe + d)


def test_minimax_m2_declares_mtp_modules_its_checkpoint_does_not_hold():
    from experiments.ledger import build_ledger
    config = _fixture("minimax-m2.5-nvfp4")
    assert config["use_mtp"] and config["num_mtp_modules"] == 3
    assert build_ledger(config).mtp == 0


@pytest.mark.parametrize("name", ["deepseek-v3.2", "glm-4.7", "minimax-m2.5-nvfp4", "nemotron-3-nano-30b-a3b",
                                  "kimi-k2-instruct", "mimo-v2-flash"])
def test_router_buffers_are_a_line_of_their_own(name):
    from experiments.ledger import build_ledger
    from experiments.ledger.views import denominators
    config = _fixture(name)
    ledger = build_ledger(config)
    hf = dict(config, model_type=ledger.arch.family) if ledger.via_class else config
    buffers = sum(_numel(s) for n, s in hf_buffer_shapes(hf).items() if n.endswith("e_score_correction_bias"))
    assert buffers > 0 and ledger.hf_buffers == buffers
    f = denominators(ledger)
    assert f["buffers"] == buffers and f["checkpoint"] == f["transformers"] + f["mtp"] + f["buffers"]
    assert ledger.to_json()["hf_buffers"] == buffers


@pytest.mark.parametrize("name, tower", [("llama-4-scout-17b-16e", True), ("qwen3-vl-2b-instruct", True),
                                         ("qwen3-vl-30b-a3b-instruct", True), ("qwen2-vl-2b", True),
                                         ("qwen2.5-vl-7b-instruct", True), ("qwen3.5-35b-a3b", True),
                                         ("gemma-3-4b-it", True), ("llava-1.5-7b-hf", True),
                                         ("gemma-4-26b-a4b", False)])
def test_a_wrapper_without_vision_config_builds_what_transformers_builds(name, tower):
    """Most wrappers build their vision configuration class's default tower; Gemma 4's builds none."""
    from experiments.ledger import build_ledger
    config = copy.deepcopy(_fixture(name))
    del config["vision_config"]
    ledger = build_ledger(config)
    assert (ledger.vision > 0) == tower
    assert ledger.hf_count == hf_param_count(config)
    assert tree_mismatches(config, ledger) == []


def test_the_text_only_class_has_no_tower():
    from experiments.ledger import build_ledger
    config = copy.deepcopy(_fixture("llama-4-scout-17b-16e"))
    del config["vision_config"]
    config["architectures"] = ["Llama4ForCausalLM"]
    ledger = build_ledger(config)
    # (transformers cannot build Llama4ForCausalLM from the wrapper's config: it is the text_config's model)
    assert ledger.vision == 0
    assert ledger.hf_count == hf_param_count(dict(config["text_config"], model_type="llama4_text"))


def test_active_with_and_without_the_embedding_table():
    from experiments.ledger import build_ledger
    from experiments.ledger.views import denominators
    config = _fixture("kimi-k2-instruct")
    f = denominators(build_ledger(config))
    assert f["active"] - f["active_without_embedding"] == config["vocab_size"] * config["hidden_size"]
