"""Lesson C4+ (FFN 精读：参数、显存与计算三本账): every figure it states, computed, formatted, re-derived, shown.

Each figure of the lesson's brief must come out of experiments.course_numbers (generic numbers, experiments/
lesson_ffn.py, data/citations.json) exactly as the lesson prints it, AND appear in the lesson's built HTML (the
session's build of the course in a temporary copy, tests/build_fixtures.py's repo_site). Every ffn.* expression
re-evaluates from its substituted text to exactly its value. The widgets' build-time tables are the outputs of
experiments.ffn for the same inputs; the calculators themselves are checked against independent arithmetic here
and against the browser in tests/test_ffn_browser.py.
"""
from __future__ import annotations

import html
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from experiments import api
from experiments import format as fmt
from experiments.course_numbers import compute_numbers
from experiments.expr import evaluate
from experiments.format import valid_style
from experiments.ledger import build_ledger, views
from experiments.lessons.c4_ffn_deep_read import calc as ffn
from experiments.numbers import format_number
from sitegen.models import load_model, load_models

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "c4-ffn-deep-read" / "lesson.md"
PAGE = "c4-ffn-deep-read.html"
ROLE = re.compile(r"\{(\w+)\}`([^`]+)`")


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _doc(model_id: str) -> dict:
    return load_model(ROOT / "data" / "models" / model_id)


@pytest.fixture(scope="module")
def inputs():
    models = load_models(ROOT / "data" / "models")
    return {"models": models, "course": _json(ROOT / "data" / "course.json"),
            "citations": _json(ROOT / "data" / "citations.json")}


@pytest.fixture(scope="module")
def numbers(inputs):
    return compute_numbers(inputs["models"], inputs["course"], citations=inputs["citations"])


@pytest.fixture(scope="module")
def built(repo_site):
    """The whole course as built in a temporary copy of the repo (the session's build: tests/build_fixtures.py)."""
    return repo_site.out


@pytest.fixture(scope="module")
def page_text(built) -> str:
    raw = (built / PAGE).read_text(encoding="utf-8")
    return html.unescape(raw)


# -- every figure of the brief, as the lesson prints it ------------------------------------------------------------
FIGURES = [
    # parameter accounting: GPT-3 per layer and whole model
    ("ffn.gpt3_ffn_layer", "n", "1,207,959,552"),
    ("ffn.gpt3_attn_layer", "n", "603,979,776"),
    ("ffn.gpt3_layer_share", "pct", "66.7%"),
    ("ffn.gpt3_layer_weights", "n", "1,811,939,328"),
    ("ffn.gpt3_ffn_all", "B1", "116.0B"),
    ("ffn.gpt3_attn_all", "B1", "58.0B"),
    ("ffn.gpt3_layers_all", "B1", "173.9B"),
    ("ffn.gpt3_vocab_matrix", "n", "617,558,016"),
    ("ffn.gpt3_weights_total", "n", "175,181,291,520"),
    ("ffn.gpt3_weights_total", "B1", "175.2B"),
    ("cited.gpt3_paper_total", "B1", "175.0B"),
    ("ffn.gpt3_weights_vs_paper", "pct2", "0.10%"),
    ("gpt3.total", "n", "174,604,259,328"),
    ("ffn.gpt3_total_gap", "n", "577,032,192"),
    ("ffn.gpt3_biases", "n", "10,616,832"),
    ("ffn.gpt3_norms", "n", "4,743,168"),
    ("ffn.gpt3_positions", "n", "25,165,824"),
    ("gpt3.ffn_share_layer.full_attention", "pct", "66.7%"),
    ("gpt3.ffn_share_total", "pct", "66.4%"),
    # Llama-2-7B and the four pitfalls
    ("llama7b.ffn", "B", "4.33B"),
    ("llama7b.total", "B", "6.74B"),
    ("llama7b.ffn_share_total", "pct", "64.2%"),
    ("llama7b.ffn_share_layer.full_attention", "pct", "66.8%"),
    ("ffn.pit_matrices", "n", "1,442,840,576"),
    ("ffn.pit_matrices_share", "pct", "21.4%"),
    ("ffn.pit_biases", "n", "1,359,872"),
    ("ffn.pit_biases_share", "pct2", "0.02%"),
    ("ffn.pit_tied", "n", "131,072,000"),
    ("ffn.pit_tied_share", "pct", "1.9%"),
    ("ffn.pit_norms", "n", "266,240"),
    ("ffn.pit_norms_share", "pct3", "0.004%"),
    # the FFN chain, 4d and alignment
    ("cited.vaswani_d_model", "n", "512"),
    ("cited.vaswani_dff_base", "n", "2,048"),
    ("ffn.vaswani_width", "x0", "4"),
    ("ffn.gpt3_width", "x0", "4"),
    ("ffn.gpt3_intermediate_mb", "x0", "201"),
    ("cited.llama_multiple_of", "n", "256"),
    # why attention has fewer parameters
    ("llama70b.mixer.full_attention", "M", "151.0M"),
    ("llama70b.ffn_per_layer", "M", "704.6M"),
    ("llama70b.ffn_share_layer.full_attention", "pct", "82.4%"),
    ("ffn.llama70b_mha_attn", "M", "268.4M"),
    ("ffn.llama70b_attn_d2", "x2", "2.25"),
    ("ffn.llama70b_width", "x1", "3.5"),
    ("ffn.llama70b_mha_share", "pct", "72.4%"),
    ("ffn.llama7b_kv_token", "n", "524,288"),
    ("ffn.llama7b_kv_context_gb", "x2", "2.15"),
    # SwiGLU and 8/3·d
    ("ffn.swiglu_two_4d", "n", "134,217,728"),
    ("ffn.swiglu_three_4d", "n", "201,326,592"),
    ("ffn.swiglu_three_llama", "n", "135,266,304"),
    ("ffn.swiglu_nominal", "n2", "10,922.67"),
    ("ffn.swiglu_aligned", "n", "11,008"),
    ("ffn.swiglu_added", "n2", "85.33"),
    ("ffn.swiglu_align_error", "pct2", "0.78%"),
    ("ffn.swiglu_unshrunk_over", "pct0", "50%"),
    ("ffn.swiglu_unshrunk_share", "pct0", "75%"),
    ("ffn.swiglu_nominal_13b", "n2", "13,653.33"),
    ("ffn.swiglu_aligned_13b", "n", "13,824"),
    ("ffn.llama7b_width", "x2", "2.69"),
    # memory: bytes per dtype, weights of 7B / 13B / 70B
    ("ffn.bytes.FP32", "x0", "4"),
    ("ffn.bytes.FP16", "x0", "2"),
    ("ffn.bytes.INT8", "x0", "1"),
    ("ffn.bytes.INT4", "x1", "0.5"),
    ("ffn.weights_gb.llama7b.FP16", "x1", "13.5"),
    ("ffn.weights_gb.llama_2_13b.FP16", "x1", "26.0"),
    ("ffn.weights_gb.llama70b.FP16", "x1", "138.0"),
    ("ffn.weights_gb.llama70b.INT4", "x1", "34.5"),
    ("cited.h100_memory_gb", "n", "80"),
    ("ffn.int4_saving_gb.llama7b", "x1", "10.1"),
    ("ffn.int4_saving_ffn_gb.llama7b", "x1", "6.5"),
    ("ffn.int4_saving_rest_gb.llama7b", "x1", "3.6"),
    ("ffn.int4_saving_gb.llama70b", "x1", "103.5"),
    ("ffn.int4_saving_ffn_gb.llama70b", "x1", "84.6"),
    # decode
    ("cited.h100_bandwidth_tbps", "x2", "3.35"),
    ("ffn.read_gb.llama7b.FP16", "x2", "13.21"),
    ("ffn.decode_ms.llama7b.FP16", "x2", "3.94"),
    ("ffn.decode_tps.llama7b.FP16", "x0", "254"),
    ("ffn.decode_ms.llama7b.INT4", "x2", "0.99"),
    ("ffn.decode_tps.llama7b.INT4", "x0", "1,014"),
    ("ffn.decode_ms.llama70b.FP16", "x2", "41.02"),
    ("ffn.decode_tps.llama70b.FP16", "x1", "24.4"),
    ("ffn.decode_ms.llama70b.INT4", "x2", "10.26"),
    ("ffn.decode_tps.llama70b.INT4", "x1", "97.5"),
    ("ffn.decode_ffn_share.llama7b", "pct", "65.5%"),
    ("ffn.decode_ffn_share.llama70b", "pct", "82.0%"),
    ("cited.h100_bf16_tflops", "x1", "989.4"),
    ("ffn.takeover_batch_min.BF16", "n", "296"),     # the smallest whole batch, as the memory widget shows it
    ("ffn.takeover_batch_min.INT4", "n", "74"),
    # training memory
    ("ffn.train_bytes.mixed_adamw", "x0", "16"),
    ("ffn.train_gb.llama7b.mixed_adamw", "x1", "107.8"),
    ("ffn.train_gb.llama70b.mixed_adamw", "x1", "1,103.6"),
    ("ffn.train_bytes.mixed_sgd_momentum", "x0", "12"),
    ("ffn.train_gb.llama7b.mixed_sgd_momentum", "x1", "80.9"),
    ("ffn.train_bytes.mixed_adamw_8bit", "x0", "10"),
    ("ffn.train_gb.llama7b.mixed_adamw_8bit", "x1", "67.4"),
    ("ffn.train_bytes.bf16_adamw_pure", "x0", "8"),
    ("ffn.act_batch", "n", "4"),
    ("ffn.act_seq", "n", "4,096"),
    ("ffn.act_layer_gb", "x2", "1.22"),
    ("ffn.act_all_gb", "x1", "38.9"),
    ("ffn.act_ckpt_gb", "x1", "5.5"),
    # compute
    ("ffn.llama7b_fwd_gflops", "x1", "13.5"),
    ("llama7b.param_flops_per_token", "n", "13,214,154,752"),
    ("ffn.llama7b_ffn_flops_share", "pct", "65.5%"),
    ("ffn.llama2_tokens_t", "x1", "2.0"),
    ("ffn.llama7b_train_flops", "e2", "8.09 × 10²²"),   # the same notation as the FLOPs widget
    ("cited.sustained_tflops", "x0", "400"),
    ("ffn.sustained_vs_h100", "pct0", "40%"),
    ("ffn.llama7b_gpu_days", "x0", "2,340"),
    ("cited.llama2_7b_gpu_hours", "n", "184,320"),
    ("ffn.llama7b_gpu_days_reported", "x0", "7,680"),
    ("ffn.llama7b_implied_tflops", "x0", "122"),
    ("cited.a100_bf16_tflops", "x0", "312"),
    ("ffn.llama7b_implied_mfu", "pct0", "39%"),
    ("ffn.gpt3_train_flops", "e2", "3.14 × 10²³"),
    ("ffn.gpt3_train_flops_paper", "e2", "3.14 × 10²³"),
    ("cited.chinchilla_params", "B0", "70B"),
    ("ffn.chinchilla_tokens_t", "x1", "1.4"),
    ("ffn.chinchilla_tokens_per_param", "x0", "20"),
    ("cited.gpt3_train_tokens", "B0", "300B"),
    ("ffn.gpt3_tokens_per_param", "x1", "1.7"),
    ("ffn.llama7b_tokens_per_param", "x0", "297"),
    # MoE
    ("ffn.moe_experts.qwen3_30b_a3b", "n", "128"),
    ("ffn.moe_top_k.qwen3_30b_a3b", "n", "8"),
    ("qwen3_30b_a3b.total", "B1", "30.5B"),
    ("qwen3_30b_a3b.active_per_token", "B2", "3.35B"),
    ("ffn.moe_ratio.qwen3_30b_a3b", "x1", "9.1"),
    ("ffn.moe_experts.deepseek_v3", "n", "256"),
    ("deepseek_v3.text_backbone", "B1", "671.0B"),
    ("deepseek_v3.active_per_token", "B2", "37.55B"),
    ("ffn.moe_ratio.deepseek_v3", "x1", "17.9"),
    ("qwen3_30b_a3b.ffn_share_total", "pct", "95.0%"),
    ("ffn.moe_whatif_experts", "n", "64"),
    ("ffn.moe_whatif_top_k", "n", "6"),
    ("ffn.moe_whatif_total", "B1", "16.0B"),
    ("ffn.moe_whatif_active", "B2", "2.89B"),
    ("ffn.moe_whatif_ratio", "x1", "5.5"),
    # quantization
    ("ffn.int4_group.g128", "n", "128"),
    ("ffn.int4_bits_g128", "x3", "4.125"),
    ("ffn.int4_scale_overhead", "pct", "3.1%"),
    ("ffn.int4_rows", "n", "1,024"),
    ("ffn.int4_cols", "n", "64"),
    ("ffn.int4_outlier_pct", "pct0", "1%"),
    ("ffn.int4_outliers", "n", "10"),
    ("ffn.int4_outlier_scale", "x0", "10"),
    ("ffn.int4_rel.g16", "pct2", "12.25%"),
    ("ffn.int4_rel.g128", "pct2", "29.27%"),
    ("ffn.int4_rel_normal.g128", "pct2", "41.12%"),
    ("ffn.int4_rel.g1024", "pct2", "53.64%"),
    ("ffn.int4_rel_plain.g128", "pct2", "10.65%"),
    # limits
    ("ffn.narrow_total", "B2", "4.02B"),
    ("ffn.narrow_share", "pct", "40.1%"),
    ("ffn.wide_total", "B2", "11.07B"),
    ("ffn.wide_read_increase", "pct", "65.5%"),
    ("ffn.vaswani_gain_small", "x2", "0.20"),
    ("ffn.vaswani_gain_large", "x2", "0.17"),
]


@pytest.mark.parametrize("name,style,shown", FIGURES, ids=[f"{n}:{s}" for n, s, _ in FIGURES])
def test_figure(numbers, name, style, shown):
    assert name in numbers, f"missing number {name}"
    assert format_number(numbers[name], style) == shown


@pytest.fixture(scope="module")
def page_styles(built) -> dict[str, str]:
    """Each use of a number on the page (its id) -> the style it is shown in, as numbers.json records it."""
    snap = json.loads((built / "numbers.json").read_text(encoding="utf-8"))
    return {u["id"]: u["style"] for n in snap.values() for u in n["uses"] if u["page"] == PAGE}


@pytest.mark.parametrize("name,style,shown", FIGURES, ids=[f"{n}:{s}" for n, s, _ in FIGURES])
def test_figure_on_the_page(page_text, page_styles, name, style, shown):
    """The number is cited on the page in exactly this style (its rendered span carries the display)."""
    pattern = re.compile(r'aria-describedby="num-' + re.escape(name) + r'" id="([^"]+)">' + re.escape(shown)
                         + "</span>")
    assert any(page_styles[m.group(1)] == style for m in pattern.finditer(page_text)), \
        f"{name} ({style}) = {shown} is not on {PAGE}"


def test_lesson_cites_every_figure():
    text = LESSON.read_text(encoding="utf-8")
    roles = set((s, n) for s, n in ROLE.findall(text))
    missing = [(n, s) for n, s, _ in FIGURES if (s, n) not in roles]
    assert missing == []


# -- exact values and cross-checks ---------------------------------------------------------------------------------
def test_gpt3_totals_reconcile(numbers):
    n = {k: numbers[k].value for k in ("ffn.gpt3_weights_total", "gpt3.total", "ffn.gpt3_vocab_matrix",
                                       "ffn.gpt3_biases", "ffn.gpt3_norms", "ffn.gpt3_positions",
                                       "ffn.gpt3_total_gap", "ffn.gpt3_ffn_layer", "ffn.gpt3_attn_layer")}
    d, d_ff, L, V = 12288, 49152, 96, 50257
    assert n["ffn.gpt3_weights_total"] == L * 12 * d * d + 2 * V * d
    assert n["gpt3.total"] + n["ffn.gpt3_vocab_matrix"] - n["ffn.gpt3_biases"] - n["ffn.gpt3_norms"] \
        - n["ffn.gpt3_positions"] == n["ffn.gpt3_weights_total"]
    assert n["ffn.gpt3_total_gap"] == n["ffn.gpt3_weights_total"] - n["gpt3.total"]
    assert n["ffn.gpt3_ffn_layer"] == 2 * d * d_ff == 2 * n["ffn.gpt3_attn_layer"]
    # the ledger's own per-layer matmul sums (tests/test_engine.py) agree
    ledger = build_ledger(_doc("gpt3-175b")["config"])
    layer = ledger.layer("full_attention")
    assert layer.sum_where(lambda leaf, k: "ffn" in k and leaf.matmul) // layer.n == n["ffn.gpt3_ffn_layer"]


def test_swiglu_conservation(numbers):
    d = 4096
    assert numbers["ffn.swiglu_two_4d"].value == 8 * d * d
    assert numbers["ffn.swiglu_three_4d"].value == 12 * d * d
    assert numbers["ffn.swiglu_nominal"].value == Fraction(8 * d, 3)
    assert numbers["ffn.swiglu_aligned"].value == 11008 == math.ceil(Fraction(8 * d, 3) / 256) * 256
    assert numbers["ffn.swiglu_three_llama"].value == 3 * d * 11008 == numbers["llama7b.ffn_per_layer"].value


def test_decode_numbers_match_the_calculator(numbers, inputs):
    """The lesson's decode figures are the calculator's (experiments.ffn.decode) at the same inputs."""
    cfg = inputs["models"]["llama-2-7b"]["config"]
    for dtype in ("FP16", "INT4"):
        r = ffn.decode(cfg, dtype, "3.35", 1, "989.4")
        ms = numbers[f"ffn.decode_ms.llama7b.{dtype}"].value
        assert r["t_step"] == f"{float(ms):.2f} ms"
        assert r["tok_s_stream"] == format_number(numbers[f"ffn.decode_tps.llama7b.{dtype}"], "x0")
    r = ffn.decode(cfg, "BF16", "3.35", 1, "989.4")
    assert r["takeover"] == str(math.ceil(numbers["ffn.takeover_batch.BF16"].value))


def test_training_numbers_match_the_calculator(numbers, inputs):
    cfg = inputs["models"]["llama-2-7b"]["config"]
    t = ffn.training_memory(cfg, "mixed_adamw", 4, 4096, False)
    assert t["states"] == format_number(numbers["ffn.train_gb.llama7b.mixed_adamw"], "x1") + " GB"
    assert t["act_full"] == format_number(numbers["ffn.act_all_gb"], "x1") + " GB"
    assert t["act_ckpt"] == format_number(numbers["ffn.act_ckpt_gb"], "x2") + " GB"
    assert t["act_layer"] == format_number(numbers["ffn.act_layer_gb"], "x2") + " GB"


def test_flops_numbers_match_the_calculator(numbers, inputs):
    cfg = inputs["models"]["llama-2-7b"]["config"]
    f = ffn.flops_budget(cfg, "2000", "400", 1024, "20")
    assert f["gpu_days"] == format_number(numbers["ffn.llama7b_gpu_days"], "x0")
    assert f["train"] == "8.09 × 10²²" and f["fwd_g"] == "13.5"
    assert numbers["ffn.llama7b_train_zflops"].value == Fraction(6 * 6_738_415_616 * 2 * 10**12, 10**21)


def test_moe_numbers_match_the_explorer(numbers, inputs):
    cfg = inputs["models"]["qwen3-30b-a3b"]["config"]
    r = ffn.moe_explore(cfg, 64, 6)
    assert r["now"]["total_raw"] == numbers["ffn.moe_whatif_total"].value
    assert r["now"]["active_raw"] == numbers["ffn.moe_whatif_active"].value
    assert r["base"]["total_raw"] == numbers["qwen3_30b_a3b.text_backbone"].value
    # unchanged settings give the original model back
    same = ffn.moe_explore(cfg, 128, 8, 768)
    assert same["now"] == same["base"]


def test_int4_numbers_match_the_probe(numbers):
    p = ffn.int4_probe(1024, 64, "1", "10", 0)
    by_group = {g["group"]: g for g in p["groups"]}
    for size, g in by_group.items():
        assert numbers[f"ffn.int4_rel.g{size}"].value == g["rel_value"]
        assert format_number(numbers[f"ffn.int4_rel.g{size}"], "pct2") == g["rel"]
        assert format_number(numbers[f"ffn.int4_rel_normal.g{size}"], "pct2") == g["rel_normal"]
    assert p["outliers"] == "10"


# -- every ffn.* expression re-evaluates from its substituted text ---------------------------------------------------
def test_every_ffn_expression_reevaluates(numbers):
    checked = 0
    for name, number in numbers.items():
        if not name.startswith("ffn.") or number.expr is None:
            continue
        value = number.value
        assert evaluate(number.expr.substituted(), exact=not isinstance(value, float)) == value, \
            f"{name}: {number.expr.substituted()} != {value}"
        checked += 1
    assert checked > 100


def test_ffn_numbers_have_labels_and_sources(numbers):
    for name, number in numbers.items():
        if name.startswith("ffn."):
            assert number.label and number.sources and all(number.sources), name


def test_new_citations_are_well_formed(inputs):
    for key in ("gpt3_paper_total", "gpt3_train_tokens", "gpt3_train_flops_e21", "chinchilla_params",
                "chinchilla_tokens", "llama2_train_tokens", "llama2_7b_gpu_hours", "llama_multiple_of",
                "h100_bandwidth_tbps", "h100_bf16_tflops", "h100_memory_gb", "a100_bandwidth_tbps",
                "a100_bf16_tflops", "sustained_tflops"):
        item = inputs["citations"][key]
        assert {"value", "label", "source"} <= set(item) and item["source"], key
        assert valid_style(item.get("style", "n"))
    assert "假设" in inputs["citations"]["sustained_tflops"]["source"]


# -- the calculators against independent arithmetic ------------------------------------------------------------------
def test_swiglu_budget_rows():
    b = ffn.swiglu_budget(4096, "8/3", 3, 256)
    assert [r["ffn"] for r in b["refs"]] == ["134,217,728", "201,326,592", "135,266,304"]
    assert b["mine"]["d_ff"] == "11,008" and b["mine"]["over_8d2"] == "+0.78%" and b["mine"]["layer_share"] == "66.8%"
    rows = {r["d"]: r for r in b["alignment"]}
    assert rows["512"]["d_ff"] == "1,536" and rows["512"]["error"] == "+12.50%"
    assert rows["768"]["d_ff"] == "2,048" and rows["768"]["error"] == "±0.00%"
    assert rows["1,024"]["error"] == "+3.12%" and rows["4,096"]["error"] == "+0.78%"
    assert rows["5,120"]["d_ff"] == "13,824" and rows["8,192"]["d_ff"] == "22,016"
    with pytest.raises(ValueError):
        ffn.swiglu_budget(4096, "abc", 3, 256)


def test_config_family_is_counted_by_the_engine():
    fam = ffn.config_family(ffn.FAMILY, "8/3", 256)
    for (L, d), row in zip(ffn.FAMILY, fam["rows"]):
        d_ff = math.ceil(Fraction(8 * d, 3) / 256) * 256
        expected = L * (3 * d * d_ff + 4 * d * d + 2 * d) + d + 2 * 32000 * d
        assert row["total_raw"] == expected and row["d_ff"] == f"{d_ff:,}"
    assert fam["rows"][2]["total_raw"] == build_ledger(_doc("llama-2-7b")["config"]).total


def test_decode_bounds_dense_and_moe():
    dense = _doc("llama-2-7b")["config"]
    r = ffn.decode(dense, "FP16", "3.35", 1, "989.4")
    m = views.matmul_weights(build_ledger(dense))
    assert r["read"] == f"{m * 2 / 1e9:.1f} GB"
    assert r["bound"] == "带宽" and ffn.decode(dense, "FP16", "3.35", 4096, "989.4")["bound"] == "算力"
    moe = build_ledger(_doc("qwen3-30b-a3b")["config"])
    assert ffn.read_params(moe, 1) == views.matmul_weights(moe)                 # batch 1 reads only top-k
    assert ffn.read_params(moe, 10**4) < views.matmul_weights(moe, active=False)
    assert ffn.read_params(moe, 64) > ffn.read_params(moe, 8) > ffn.read_params(moe, 1)


def test_activation_elements():
    L = build_ledger(_doc("llama-2-7b")["config"])
    elems, one = ffn.ffn_activation_elems(L)
    assert one == 4096 + 3 * 11008 and elems == 32 * one
    g = build_ledger(_doc("gpt2")["config"])
    assert ffn.ffn_activation_elems(g)[1] == 768 + 2 * 3072      # GELU MLP: pre- and post-activation


def test_sci_and_tree_sum():
    assert fmt.sci(80_860_987_392 * 10**12) == "8.09 × 10²²"
    assert fmt.sci(Fraction(99999, 10**4)) == "1.00 × 10¹"
    import numpy as np
    a = np.random.default_rng(3).random(1000003)
    assert ffn.tree_sum(a) == pytest.approx(math.fsum(a.tolist()), rel=1e-14)


def test_int4_probe_is_deterministic_and_sane():
    a = ffn.int4_probe(512, 128, "2", "8", 11)
    b = ffn.int4_probe(512, 128, "2", "8", 11)
    assert a == b
    rel = [g["rel_value"] for g in a["groups"]]
    plain = [g["rel_plain_value"] for g in a["groups"]]
    assert rel == sorted(rel) and plain == sorted(plain)       # bigger groups, bigger error
    assert all(r > p for r, p in zip(rel, plain))              # outlier rows hurt every group size
    assert [g["group"] for g in a["groups"]] == [16, 32, 64, 128, 256, 512]
    with pytest.raises(ValueError):
        ffn.int4_probe(1000, 16, "1", "10", 0)                  # rows must be a power of two
    with pytest.raises(ValueError, match="65,536"):
        ffn.int4_probe(2048, 64, "1", "10", 0)                  # kept small enough to recompute on every change


def test_group_maxima_and_row_sums_match_plain_numpy():
    import numpy as np
    w = np.random.default_rng(3).standard_normal((256, 24))
    maxima = ffn.group_maxima(w, [16, 64, 256])
    for g, m in maxima.items():
        assert np.array_equal(m, np.abs(w).reshape(256 // g, g, 24).max(axis=1))
        assert np.array_equal(ffn.quantize_int4(w, g, m), ffn.quantize_int4(w, g))
    sums = ffn.row_sums(w)
    assert sums.shape == (256,) and np.allclose(sums, w.sum(axis=1), rtol=1e-13, atol=1e-13)


def test_api_round_trips():
    cfg = _doc("llama-2-7b")["config"]
    assert json.loads(api.ffn_memory(json.dumps([cfg, "INT8", "2.039", 8, "312"]))) == \
        json.loads(json.dumps(ffn.decode(cfg, "INT8", "2.039", 8, "312")))
    assert json.loads(api.ffn_int4_probe(json.dumps([256, 64, "5", "4", 3]))) == \
        json.loads(json.dumps(ffn.int4_probe(256, 64, "5", "4", 3)))
    assert json.loads(api.ffn_moe(json.dumps([_doc("gpt-oss-120b"), 64, 2, 1440])))["now"]["top_k"] == "2"
    with pytest.raises(ValueError):
        api.ffn_moe(json.dumps([cfg, 8, 2, 100]))               # a dense config is not a MoE family


# -- the built page: widgets' first state, links, structure -------------------------------------------------------
def _table_rows(page_html: str, table_class: str) -> list[list[str]]:
    m = re.search(r'<table class="' + re.escape(table_class) + r'"[^>]*>.*?<tbody[^>]*>(.*?)</tbody>', page_html, re.S)
    assert m, table_class
    rows = []
    body = re.sub(r"<template[^>]*>.*?</template>", "", m.group(1), flags=re.S)   # the browser's row markup
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, re.S)
        rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells])
    return rows


def test_widgets_first_state(built):
    page = (built / PAGE).read_text(encoding="utf-8")
    b = ffn.swiglu_budget(4096, "8/3", 3, 256)
    assert [r[2] for r in _table_rows(page, "sw-alignment")] == [r["d_ff"] for r in b["alignment"]]
    assert [r[4] for r in _table_rows(page, "sw-alignment")] == [r["error"] for r in b["alignment"]]
    fam = ffn.config_family(ffn.FAMILY, "8/3", 256)
    assert _table_rows(page, "sw-family") == [[str(r["L"]), r["d"], r["d_ff"], r["width"], r["share_layer"],
                                               r["share_total"], r["total"]] for r in fam["rows"]]
    w = ffn.weights_table([(m, _doc(i)["config"]) for m, i in (("Llama 2 7B", "llama-2-7b"),
                                                              ("Llama 2 13B", "llama-2-13b"),
                                                              ("Llama 2 70B", "llama-2-70b"))])
    assert [r[2:5] for r in _table_rows(page, "mem-weights")] == [r["cells"] for r in w["rows"]]
    p = ffn.int4_probe(1024, 64, "1", "10", 0)
    assert [r[3] for r in _table_rows(page, "q-table")] == [g["rel"] for g in p["groups"]]
    moe = ffn.moe_table([(n, _doc(i)["config"]) for n, i in (("DeepSeek-V3", "deepseek-v3"),)])
    assert moe[0]["total"] in page
    assert 'data-widget="ffn-int4"' in page and '"kind":"lines"' in html.unescape(page)


def test_page_links_and_reachability(built):
    page = (built / PAGE).read_text(encoding="utf-8")
    assert 'href="c4-transformer-block.html"' in page                       # back to C4, in the prose
    c4 = (built / "c4-transformer-block.html").read_text(encoding="utf-8")
    assert f'href="{PAGE}"' in c4                                             # C4's next-lesson link
    index = (built / "index.html").read_text(encoding="utf-8")
    assert f'href="{PAGE}"' in index                                          # the home page lists it
    assert "num-missing" not in page and "widget-missing" not in page


def test_course_marks_the_chapter_written(inputs):
    ch = next(c for c in inputs["course"]["chapters"] if c["id"] == "C4+")
    assert ch["status"] == "written" and ch["lesson"] == "c4-ffn-deep-read"


def test_lesson_structure():
    text = LESSON.read_text(encoding="utf-8")
    front = text.split("---")[1]
    for key in ("chapter: C4+", "title: FFN 精读：参数、显存与计算三本账"):
        assert key in front
    heads = re.findall(r"^## (.+)$", text, flags=re.M)
    assert [h[0] for h in heads] == list("①②③④⑤⑥⑦⑧⑨⑩") + ["参"]   # the ten parts, then 参考资料
    widgets = re.findall(r"^```\{widget\} ([\w-]+)", text, flags=re.M)
    assert {"ffn-swiglu-budget", "ffn-memory", "ffn-training-memory", "ffn-flops", "ffn-moe",
            "ffn-int4"} <= set(widgets)
    assert "[C4](c4-transformer-block.html)" in text


# -- no hand-typed measurement in the prose (widget options and code may hold config values) ----------------------
_FIGURE = re.compile(r"(?<![\w.\-/])\d[\d,]*(?:\.\d+)?(?:%|[KMB](?![A-Za-z])| ?[万亿])?(?![\w.\-])")


def test_no_hand_typed_figures_in_prose():
    text = LESSON.read_text(encoding="utf-8").split("---", 2)[2]
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = ROLE.sub(" ", text)
    bad = []
    for m in _FIGURE.finditer(text):
        tok = m.group(0)
        if re.fullmatch(r"20[12]\d", tok):
            continue
        if re.fullmatch(r"\d\d?", tok) and text[m.end():].lstrip().startswith(("×", "·")):
            continue                                                  # a formula's coefficient: 12 · d²
        if re.search(r"[,.%KMB万亿]", tok) or int(tok) >= 10:
            bad.append(tok)
    assert bad == []
