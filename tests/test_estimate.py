"""The estimate path and the engine's bounds on any config.

A config whose model_type and architectures name no family, but which has a decoder's usual keys, gets a ledger
built by a generic decoder reading and marked as an estimate (``Ledger.estimate``, ``--json``'s ``estimate``),
saying what it assumed and which keys it did not read. Measured against transformers 5.23 on the meta device,
on configs of families the engine leaves out (tests/fixtures/estimate/README.md):
  helium (HeliumConfig defaults)      2,172,643,840 vs  2,172,643,840    0 %      (a llama layout)
  bitnet (BitNetConfig defaults)      2,740,871,680 vs  2,741,155,840   -0.010 %  (its sub-layer norms)
  exaone_moe (ExaoneMoeConfig defaults) 28,160,561,152 vs 28,550,639,616 -1.37 %  (shared experts, not read)
  minicpm3 (MiniCPM3-4B)              5,049,090,560 vs  4,073,875,968  +23.9 %    (MLA attention, not read: its keys
                                                                                  q_lora_rank ... are listed as unread)
  lfm2 (Lfm2Config defaults)          3,712,125,440 vs  2,705,497,600  +37.2 %    (short-conv layers read as attention,
                                                                                  its FFN width rule not read)
  doge (DogeConfig defaults)            402,719,744 vs    403,055,872   -0.083 %  (is_moe false: a dense MLP; its
                                                                                  dynamic-mask parameters not read)
  doge with is_moe true             3,299,273,147,392 vs 1,485,186,304  ×2,221   (its experts are one neuron wide and
                                         no key says so: the estimate says it had to assume the experts' width)
A config without those keys is refused as before; an empty object is told that model_type is missing.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hf_reference import hf_param_count

ROOT = Path(__file__).resolve().parent.parent
ESTIMATE = ROOT / "tests" / "fixtures" / "estimate"


def _config(name):
    return json.loads((ESTIMATE / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name, low, high", [("helium_defaults", 0, 0), ("bitnet_defaults", -0.0002, 0),
                                             ("exaone_moe_defaults", -0.02, -0.01), ("minicpm3_4b", 0.2, 0.3),
                                             ("lfm2_defaults", 0.3, 0.4), ("doge_defaults", -0.001, 0)])
def test_estimate_error_against_transformers(name, low, high):
    from experiments.ledger import build_ledger
    config = _config(name)
    ledger = build_ledger(config)
    assert ledger.estimate is not None and ledger.via_class is None
    hf = hf_param_count(config)
    assert low <= (ledger.total - hf) / hf <= high, (ledger.total, hf)


def test_estimate_says_what_it_assumed_and_did_not_read():
    from experiments.ledger import build_ledger
    ledger = build_ledger(_config("minicpm3_4b"))
    unread = set(ledger.estimate["unread_keys"])
    assert {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim"} <= unread
    assert "hidden_size" not in ledger.estimate["unread_keys"]
    assert any("通用解码器" in line for line in ledger.estimate["assumed"])
    assert build_ledger(_config("helium_defaults")).estimate["unread_keys"] == ["mlp_bias"]


def test_an_moe_switch_set_to_false_reads_a_dense_ffn_and_an_unknown_expert_width_is_said():
    from experiments.ledger import build_ledger
    dense = build_ledger(_config("doge_defaults"))            # is_moe false, num_experts 16384 kept at its default
    assert dense.arch.moe is None or not dense.arch.moe.n_experts
    assert any(line.startswith("is_moe 为 false") for line in dense.estimate["assumed"])
    assert "num_experts" in dense.estimate["unread_keys"]
    routed = build_ledger({**_config("doge_defaults"), "is_moe": True})
    assert routed.total > 1000 * dense.total                   # the guess it warns about ...
    assert any(line.startswith("没有 moe_intermediate_size") for line in routed.estimate["assumed"])
    sized = build_ledger({**_config("doge_defaults"), "is_moe": True, "moe_intermediate_size": 1})
    assert not any(line.startswith("没有 moe_intermediate_size") for line in sized.estimate["assumed"])


def test_a_known_family_is_never_an_estimate():
    from experiments.ledger import build_ledger
    config = json.loads((ROOT / "tests" / "fixtures" / "models" / "phi-4" / "config.json").read_text())
    assert build_ledger(config).estimate is None


def test_command_line_marks_the_estimate():
    path = ESTIMATE / "internlm2_7b.json"
    out = subprocess.run([sys.executable, "-m", "experiments.ledger", str(path), "--json"], capture_output=True,
                         text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["estimate"]["unread_keys"] == ["bias"] and doc["model_type"] == "internlm2"
    text = subprocess.run([sys.executable, "-m", "experiments.ledger", str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60).stdout
    assert "ESTIMATE" in text and "config keys not read: bias" in text


def test_the_build_refuses_what_the_command_line_estimates():
    """The site's models must be exact: an unknown model_type is refused there (tests/test_bad_input.py), while the
    command line answers the same file as an estimate."""
    from experiments.errors import ConfigError
    from experiments.ledger import build_ledger, read_model
    config = json.loads((ROOT / "tests" / "bad_input" / "configs" / "unknown-model-type.json").read_text())
    with pytest.raises(ConfigError):
        read_model(config)
    assert build_ledger(config).estimate is not None


def test_without_the_usual_keys_is_refused_and_empty_says_model_type_is_missing():
    from experiments.errors import ConfigError
    from experiments.ledger import build_ledger
    with pytest.raises(ConfigError) as e:
        build_ledger({"model_type": "mystery", "hidden_size": 64, "vocab_size": 100})
    assert e.value.problems[0].key == "model_type" and "one of" in e.value.problems[0].expected
    with pytest.raises(ConfigError) as e:
        build_ledger({})
    assert [(p.key, p.expected) for p in e.value.problems] == [("model_type", "a string (the key is missing)")]
    assert e.value.lines_zh() == ["键 'model_type'：缺少这个键，它应为字符串"]


@pytest.mark.parametrize("fixture, key", [("kimi-k2-instruct", "num_nextn_predict_layers"),
                                          ("glm-4.7", "num_nextn_predict_layers"),
                                          ("qwen3.5-35b-a3b", "text_config.mtp_num_hidden_layers")])
def test_mtp_layer_counts_are_capped_like_num_hidden_layers(fixture, key):
    from experiments.errors import ConfigError
    from experiments.ledger import build_ledger
    config = json.loads((ROOT / "tests" / "fixtures" / "models" / fixture / "config.json").read_text())
    target = config["text_config"] if key.startswith("text_config.") else config
    target[key.split(".")[-1]] = 10**7
    with pytest.raises(ConfigError) as e:      # refused before any per-layer work (10^7 layers took 55 s)
        build_ledger(config)
    assert [p.key for p in e.value.problems] == [key]
    assert "<= 10,000" in e.value.problems[0].expected
