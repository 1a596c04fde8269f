"""The ledger engine reproduces every figure the course cites (figures from ../shared/reference/README.md)."""
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.errors import ConfigError
from experiments.format import format_value
from experiments.ledger import build_ledger, unwrap, views
from sitegen.models import load_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "data" / "models").glob("*/config.json"))


def doc(model_id):
    return load_model(ROOT / "data" / "models" / model_id)


def ledger(model_id):
    return build_ledger(doc(model_id)["config"])


def share(a, b, style="pct"):
    return format_value(Fraction(a, b), style)


def test_anchor_figures():
    L = ledger("qwen3.8-27b")
    assert L.total == 27_781_427_952
    assert L.text_backbone == 26_895_998_464
    assert L.vision == 460_730_096 and L.mtp == 424_699_392
    assert L.hf_count == 27_356_728_560
    assert L.ffn == 17_112_760_320
    assert share(L.ffn, L.total) == "61.6%" and share(L.ffn, L.text_backbone) == "63.6%"
    assert views.mixer_per_layer(L, "linear_attention") == 115_876_064
    assert views.mixer_per_layer(L, "full_attention") == 104_858_112
    assert L.layer("linear_attention").per_copy - L.layer("full_attention").per_copy == 11_017_952
    assert L.count("text/lm_head") == 1_271_398_400
    assert views.classic_estimate(L) == 21_404_057_600
    assert share(L.total - views.classic_estimate(L), L.total, "pct0") == "23%"
    assert views.crossover_T(L) == 87_040
    assert format_value(Fraction(views.attention_score_flops(L, 262_144), views.ffn_flops_per_token(L)), "x0") == "3"
    assert L.active_per_token == L.text_backbone


def test_anchor_layer_split():
    L = ledger("qwen3.8-27b")
    assert [(t, L.layer(t).n) for t in L.layer_types] == [("linear_attention", 48), ("full_attention", 16)]


def test_gpt2_and_hub_page_figure():
    d = doc("gpt2")
    L = build_ledger(d["config"])
    assert L.total == 124_439_808
    cfg = d["config"]
    mask_buffers = cfg["n_layer"] * cfg["n_positions"] ** 2     # 12 causal masks of 1,024 x 1,024 saved in the file
    assert mask_buffers == 12_582_912
    assert L.total + mask_buffers == d["meta"]["hub_page_total"] == 137_022_720
    assert share(L.ffn, L.total) == "45.5%"
    assert share(views.breakdown(L)["embedding"], L.total) == "31.6%"


def test_llama2_7b():
    L = ledger("llama-2-7b")
    assert L.total == 6_738_415_616
    assert format_value(L.ffn, "B") == "4.33B" and share(L.ffn, L.total) == "64.2%"


def test_gpt3_per_layer_weights():
    L = ledger("gpt3-175b")
    layer = L.layer("full_attention")
    ffn_w = layer.sum_where(lambda leaf, kinds: "ffn" in kinds and leaf.matmul) // layer.n
    attn_w = layer.sum_where(lambda leaf, kinds: "attention" in kinds and leaf.matmul) // layer.n
    assert ffn_w == 1_207_959_552 and attn_w == 603_979_776
    assert share(ffn_w, ffn_w + attn_w) == "66.7%"


def test_llama2_70b_layer_share():
    L = ledger("llama-2-70b")
    layer = L.layer("full_attention")
    ffn = layer.sum_where(lambda leaf, kinds: "ffn" in kinds) // layer.n
    attn = views.mixer_per_layer(L, "full_attention")
    assert format_value(attn, "M") == "151.0M" and format_value(ffn, "M") == "704.6M"
    assert share(ffn, layer.per_copy) == "82.4%"


def test_baseline():
    L = ledger("baseline")
    assert L.total == 3_688_704 and share(L.ffn, L.total) == "57.3%"


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.parent.name)
def test_tree_invariants(path):
    L = build_ledger(json.loads(path.read_text(encoding="utf-8")))
    for node in L.root.walk():
        if node.children:
            assert node.count == node.n * sum(c.count for c in node.children), node.key
    assert sum(views.breakdown(L).values()) == L.total
    # the one-walk breakdown (memoised on the ledger) is each category's own sum over the tree
    for active in (False, True):
        parts = views.breakdown(L, active)
        for cat, value in parts.items():
            assert value == L.root.sum_where(lambda leaf, kinds, c=cat: views.category_of(kinds) == c, active), cat
        parts["embedding"] = -1                       # a caller's copy: changing it leaves the ledger's alone
        assert views.breakdown(L, active)["embedding"] >= 0
    assert sum(v for _, v in views.classic_gap(L)) == L.total - views.classic_estimate(L)
    # the score FLOPs summed by layer type are the sum over every layer
    for T in (1, 4096, 10 ** 6):
        assert views.attention_score_flops(L, T) == sum(2 * m.score_width * min(T, m.window or T)
                                                        for m in L.arch.per_layer)
    assert L.total == L.text_backbone + L.mtp + L.vision
    assert all(isinstance(node.count, int) for node in L.root.walk())


# -- command line -----------------------------------------------------------------------------------------------
def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "experiments.ledger", *args], capture_output=True, text=True,
                          cwd=cwd)


def test_cli_tree_and_json(tmp_path):
    plain = tmp_path / "config.json"
    plain.write_text(json.dumps(doc("qwen3.8-27b")["config"]), encoding="utf-8")
    r = cli(str(plain))
    assert r.returncode == 0 and "27,781,427,952" in r.stdout and "linear_attention ×48" in r.stdout
    r = cli(str(plain), "--json")
    out = json.loads(r.stdout)
    assert (out["total"], out["vision"], out["mtp"], out["text_backbone"], out["active_per_token"]) == \
        (27_781_427_952, 460_730_096, 424_699_392, 26_895_998_464, 26_895_998_464)
    assert out["tree"]["count"] == out["total"] and out["tree"]["children"][0]["key"] == "text"


BAD = [
    ("not json", "{not json", "valid JSON"),
    ("a list", "[1, 2]", "expected a JSON object"),
    ("unknown type", '{"model_type": "bert"}', "key 'model_type': expected one of"),
    ("missing key", '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10,'
                    ' "num_attention_heads": 4}',
     "key 'intermediate_size': expected an integer >= 1 (the key is missing)"),
    ("string for number", '{"model_type": "gpt2", "n_embd": "768", "n_layer": 2, "vocab_size": 10, "n_head": 4,'
                          ' "n_positions": 8}', "key 'n_embd': expected an integer >= 1, got '768'"),
    ("negative", '{"model_type": "gpt2", "n_embd": 768, "n_layer": -2, "vocab_size": 10, "n_head": 4,'
                 ' "n_positions": 8}', "key 'n_layer': expected an integer >= 1, got -2"),
    ("heads do not divide", '{"model_type": "gpt2", "n_embd": 770, "n_layer": 2, "vocab_size": 10, "n_head": 4,'
                            ' "n_positions": 8}', "key 'n_head': expected a divisor of the hidden size (770), got 4"),
    ("nested", '{"model_type": "qwen3_5", "text_config": {"hidden_size": true}}',
     "key 'text_config.hidden_size': expected an integer >= 1, got True"),
]


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[0] for b in BAD])
def test_cli_bad_input(tmp_path, name, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    r = cli(str(path))
    assert r.returncode == 2
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{path}: ") and message in r.stderr


def test_config_error_collects_every_problem():
    with pytest.raises(ConfigError) as e:
        build_ledger({"model_type": "llama", "hidden_size": 0, "vocab_size": "x"})
    keys = [p.key for p in e.value.problems]
    assert {"hidden_size", "vocab_size", "num_hidden_layers", "intermediate_size"} <= set(keys)


def test_unwrap_accepts_plain_and_data_documents():
    d = doc("gpt2")
    assert unwrap(d) == d["config"] and unwrap(d["config"]) == d["config"]
