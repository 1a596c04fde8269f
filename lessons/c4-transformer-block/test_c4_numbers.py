"""Lesson C4 (一个 Transformer 块：参数到底花在哪): every figure it states, computed, formatted and re-derived.

The figures are the ones the C4 source gives; each must come out of experiments.course_numbers (generic numbers,
experiments/lesson_c4.py, data/citations.json) exactly as the lesson prints it. Every Number with an expression
must also re-evaluate from its substituted form (the text the popover shows) to exactly its value.
"""
from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.course_numbers import Registry, compute_numbers
from experiments.expr import evaluate
from experiments.format import valid_style
from experiments.ledger import build_ledger
from experiments.numbers import format_number
from sitegen.models import load_model, model_folders

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "c4-transformer-block" / "lesson.md"
ROLE = re.compile(r"\{(\w+)\}`([^`]+)`")


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def inputs():
    models, unsupported = {}, []
    for folder in model_folders(ROOT / "data" / "models"):
        doc = load_model(folder)
        try:
            build_ledger(doc["config"])
        except Exception:          # a family the engine cannot build yet (e.g. while MoE families are added)
            unsupported.append(doc["meta"]["id"])
            continue
        models[doc["meta"]["id"]] = doc
    return {"models": models, "unsupported": unsupported, "course": _json(ROOT / "data" / "course.json"),
            "citations": _json(ROOT / "data" / "citations.json"),
            "evolution": _json(ROOT / "data" / "evolution.json")}


@pytest.fixture(scope="module")
def numbers(inputs):
    return compute_numbers(inputs["models"], inputs["course"], citations=inputs["citations"])


# -- every figure of the C4 source, as the lesson prints it ---------------------------------------------------
FIGURES = [
    ("anchor.total", "n", "27,781,427,952"),
    ("anchor.total", "yi", "278 亿"),
    ("anchor.text_backbone", "n", "26,895,998,464"),
    ("anchor.ffn", "n", "17,112,760,320"),
    ("anchor.ffn_share_total", "pct", "61.6%"),
    ("anchor.ffn_share_backbone", "pct", "63.6%"),
    ("anchor.L", "n", "64"),
    ("anchor.d", "n", "5,120"),
    ("anchor.V", "n", "248,320"),
    ("anchor.d_ff", "n", "17,408"),
    ("anchor.classic", "n", "21,404,057,600"),
    ("anchor.classic_short", "pct0", "23%"),
    ("anchor.part.lm_head", "n", "1,271,398,400"),
    ("anchor.gap.lm_head", "n", "1,271,398,400"),
    ("c4.anchor_ffn_width", "x1", "3.4"),
    ("c4.anchor_ffn_layer_d2", "x1", "10.2"),
    ("c4.anchor_q_width", "n", "6,144"),
    ("c4.anchor_kv_width", "n", "1,024"),
    ("c4.anchor_q_proj_out", "n", "12,288"),
    ("c4.anchor_mixer_gdn", "n", "115,876,064"),
    ("c4.anchor_mixer_attn", "n", "104,858,112"),
    ("c4.anchor_mixer_diff", "n", "11,017,952"),
    ("c4.anchor_mixer_diff", "wan", "1,100 万"),
    ("anchor.layers.linear_attention", "n", "48"),
    ("anchor.layers.full_attention", "n", "16"),
    ("anchor.ffn_flops_per_token", "n", "34,225,520,640"),
    ("anchor.score_flops_per_T", "n", "393,216"),
    ("anchor.crossover_T", "n", "87,040"),
    ("anchor.T_max", "n", "262,144"),
    ("anchor.ratio_at_T_max", "x0", "3"),
    ("c4.residual_writes", "n", "128"),
    ("c4.residual_var", "n", "129"),
    ("c4.residual_std", "x2", "11.36"),
    ("c4.silu_example", "x3", "99.995"),
    ("cited.gpt2_init_std", "x2", "0.02"),
    ("c4.baseline_residual_layers", "n", "8"),
    ("c4.baseline_init_std_out", "x5", "0.00707"),
    ("gpt2.total", "n", "124,439,808"),
    ("c4.gpt2_hub_total", "n", "137,022,720"),
    ("c4.gpt2_mask_buffers", "n", "12,582,912"),
    ("gpt2.ffn_share_total", "pct", "45.5%"),
    ("gpt2.embedding_share", "pct", "31.6%"),
    ("gpt2.d", "n", "768"),
    ("gpt2.d_ff", "n", "3,072"),
    ("baseline.total", "n", "3,688,704"),
    ("c4.baseline_hand_total", "n", "3,688,704"),
    ("c4.baseline_embedding", "n", "524,288"),
    ("c4.baseline_attn_per_layer", "n", "262,144"),
    ("c4.baseline_ffn_per_layer", "n", "528,384"),
    ("c4.baseline_norms_per_layer", "n", "512"),
    ("c4.baseline_final_norm", "n", "256"),
    ("c4.baseline_ffn_share", "pct", "57.3%"),
    ("c4.old_plan_classic", "n", "13,762,560"),
    ("c4.old_plan_classic", "M0", "14M"),
    ("c4.old_plan_layers_part", "n", "10,616,832"),
    ("c4.old_plan_embedding", "n", "3,145,728"),
    ("cited.old_plan_claim", "M0", "50M"),
    ("cited.gpt2_paper_small", "M0", "117M"),
    ("cited.vaswani_ppl_small", "x2", "5.12"),
    ("cited.vaswani_ppl_base", "x2", "4.92"),
    ("cited.vaswani_ppl_large", "x2", "4.75"),
    ("cited.shazeer_gelu", "x3", "1.983"),
    ("cited.shazeer_swiglu", "x3", "1.944"),
    ("cited.qiu_first_token_baseline", "pct", "46.7%"),
    ("cited.qiu_first_token_gated", "pct", "4.8%"),
]


@pytest.mark.parametrize("name,style,shown", FIGURES, ids=[f"{n}:{s}" for n, s, _ in FIGURES])
def test_figure(numbers, name, style, shown):
    assert name in numbers, f"missing number {name}"
    assert format_number(numbers[name], style) == shown


def test_exact_values(numbers):
    assert numbers["c4.anchor_ffn_width"].value == Fraction(17, 5)
    assert numbers["c4.anchor_ffn_layer_d2"].value == Fraction(51, 5)
    assert numbers["c4.residual_std"].value == math.sqrt(129)
    assert numbers["c4.baseline_init_std_out"].value == pytest.approx(0.02 / math.sqrt(8), rel=1e-15)
    assert numbers["c4.silu_example"].value == pytest.approx(100 / (1 + math.exp(-10)), rel=1e-15)
    # the hand count equals the engine's count and the sum of its own parts
    n = {k: numbers[f"c4.baseline_{k}"].value for k in ("embedding", "attn_per_layer", "ffn_per_layer",
                                                         "norms_per_layer", "final_norm", "hand_total")}
    assert n["hand_total"] == numbers["baseline.total"].value == \
        n["embedding"] + 4 * (n["attn_per_layer"] + n["ffn_per_layer"] + n["norms_per_layer"]) + n["final_norm"]
    assert numbers["c4.old_plan_classic"].value == 10_616_832 + 3_145_728
    assert numbers["c4.old_plan_overclaim"].value > 3


def test_gdn_minus_attention(numbers):
    gdn, attn = numbers["anchor.mixer.linear_attention"].value, numbers["anchor.mixer.full_attention"].value
    assert numbers["c4.anchor_mixer_gdn"].value == gdn
    assert numbers["c4.anchor_mixer_attn"].value == attn
    assert numbers["c4.anchor_mixer_diff"].value == gdn - attn == 11_017_952


def test_embedding_shares(numbers):
    assert 0.31 < numbers["gpt2.embedding_share"].value < 0.32
    assert numbers["anchor.embedding_share"].value < Fraction(1, 10)
    assert numbers["c4.anchor_vocab_share"].value < Fraction(1, 10)   # embedding + untied lm_head together


def test_gpt2_hub_page_total(inputs, numbers):
    hub = inputs["models"]["gpt2"]["meta"]["hub_page_total"]
    assert numbers["c4.gpt2_hub_total"].value == hub == numbers["gpt2.total"].value + 12 * 1024 * 1024


def test_baseline_numpy_model_agrees(numbers):
    from experiments.baseline import count_params, init_params
    assert count_params(init_params()) == numbers["c4.baseline_hand_total"].value


def test_example_tokens(inputs):
    from experiments.lessons.c4_transformer_block import numbers as lesson_c4
    reg = Registry()
    lesson_c4.register(reg, {}, course=inputs["course"])
    tokens = inputs["course"]["tracker"]["example_tokens"]
    assert reg["c4.example_tokens"].value == len(tokens) == 5


def test_gpt_oss_swiglu_limit(inputs, numbers):
    if "gpt-oss-120b" in inputs["unsupported"]:
        pytest.skip("the gpt_oss family cannot be built yet, so c4.gpt_oss_swiglu_limit is not registered")
    assert format_number(numbers["c4.gpt_oss_swiglu_limit"], "x0") == "7"


# -- every expression re-evaluates from its substituted text --------------------------------------------------
_LITERAL = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:e-?\d+)?)(?![\w.])")


def _evaluate(expr, value):
    return evaluate(expr.substituted(), exact=not isinstance(value, float))


def test_every_expression_reevaluates(numbers):
    checked = 0
    for name, number in numbers.items():
        if number.expr is None:
            continue
        assert _evaluate(number.expr, number.value) == number.value, \
            f"{name}: {number.expr.substituted()} != {number.value}"
        checked += 1
    assert checked > 50


def test_c4_numbers_have_sources(numbers):
    for name, number in numbers.items():
        if name.startswith(("c4.", "cited.")):
            assert number.sources and all(number.sources), name
            assert number.label, name


# -- the lesson and the evolution table cite only numbers that exist ------------------------------------------
def _roles(text: str):
    return [(style, name) for style, name in ROLE.findall(text) if style not in ("widget", "claim", "term")]


def _allowed_missing(inputs, numbers):
    """Numbers the lesson needs that can legitimately be absent while other parts of the project catch up."""
    allowed = set()
    if "gpt-oss-120b" in inputs["unsupported"]:
        allowed.add("c4.gpt_oss_swiglu_limit")
    if "c4.example_tokens" not in numbers:   # experiments/lesson_numbers.py does not pass `course` yet
        allowed.add("c4.example_tokens")
    return allowed


def test_lesson_roles_resolve(inputs, numbers):
    text = LESSON.read_text(encoding="utf-8")
    text += json.dumps(inputs["evolution"], ensure_ascii=False)
    roles = _roles(text)
    assert roles
    bad_styles = {s for s, _ in roles if not valid_style(s)}
    assert not bad_styles
    missing = {n for _, n in roles if n not in numbers}
    allowed = _allowed_missing(inputs, numbers)
    assert missing <= allowed, f"unknown numbers: {sorted(missing - allowed)}"
    if missing:
        pytest.xfail(f"waiting on other parts of the project for: {sorted(missing)}")


def test_cited_figures_come_from_citations(inputs):
    text = LESSON.read_text(encoding="utf-8") + json.dumps(inputs["evolution"], ensure_ascii=False)
    cited = {n.removeprefix("cited.") for _, n in _roles(text) if n.startswith("cited.")}
    assert cited <= set(inputs["citations"])
    for item in inputs["citations"].values():
        assert {"value", "label", "source"} <= set(item)
        assert valid_style(item.get("style", "n"))


def test_lesson_structure():
    text = LESSON.read_text(encoding="utf-8")
    front = text.split("---")[1]
    for key in ("chapter: C4", "title: 一个 Transformer 块：参数到底花在哪",
                "reading_minutes: 25", "summary:"):
        assert key in front
    heads = re.findall(r"^## (.+)$", text, flags=re.M)
    assert [h[0] for h in heads] == list("①②③④⑤⑥⑦⑧⑨⑩") + ["参"]   # the ten parts, then 参考资料
    for callout in ("::: warning", "::: note", "::: try"):
        assert callout in text
    widgets = re.findall(r"^```\{widget\} ([\w-]+)", text, flags=re.M)
    assert set(widgets) == {"tracker", "classic-gap", "ledger-total", "ledger-layer", "ledger-compare", "evolution",
                            "crossover", "baseline", "code", "byo-config", "c4-classic-estimate"}
    for later in ("C5", "C9", "C11"):
        assert later in text


def test_evolution_table_shape(inputs):
    table = inputs["evolution"]
    assert [c["title"] for c in table["columns"]][0].startswith("2017")
    assert all(c.get("source") for c in table["columns"])
    assert [r["title"] for r in table["rows"]] == ["FFN", "残差", "归一化", "门控"]
    for row in table["rows"]:
        assert len(row["cells"]) == len(table["columns"])
        for cell in row["cells"]:
            assert cell["text"] and "sources" in cell and "stuck" in cell
            # every figure in a cell is a role: no bare multi-digit measurement
            assert not _bare_figures(cell["text"] + " " + (cell["stuck"] or "")), cell


# -- no hand-typed measurement in the prose -------------------------------------------------------------------
_FIGURE = re.compile(r"(?<![\w.\-/])\d[\d,]*(?:\.\d+)?(?:%|[KMB](?![A-Za-z])| ?[万亿])?(?![\w.\-])")


def _bare_figures(text: str) -> list[str]:
    text = ROLE.sub(" ", text)
    out = []
    for m in _FIGURE.finditer(text):
        tok = m.group(0)
        if re.fullmatch(r"20[12]\d", tok):          # a year
            continue
        if re.search(r"[,.%KMB万亿]", tok) or int(tok) >= 100:
            out.append(tok)
    return out


def test_no_hand_typed_figures_in_prose():
    text = LESSON.read_text(encoding="utf-8").split("---", 2)[2]
    text = re.sub(r"```\{widget\} code.*?```", "", text, flags=re.S)   # code may hold config values
    assert _bare_figures(text) == []
