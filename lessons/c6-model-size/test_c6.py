"""Lesson C6 (模型该多大): every figure it cites against the engine, recomputed here from the configs, the meta.yaml
token figures and the cited coefficients (not through this lesson's package); the widgets' build-time
views and states against the calculators; the code cell run in CPython; the outline and the links to the lesson.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import re
from pathlib import Path

import pytest
import yaml

from experiments.course_numbers import compute_course
from experiments.ledger import build_ledger
from experiments.lessons.c6_model_size import BUDGETS, PLACED, calc
from experiments.toolkit import scaling as S
from sitegen.models import load_models

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "c6-model-size" / "lesson.md"
ROLE = re.compile(r"\{(\w+)\}`([^`]+)`")
GOPHER = 5.76e23


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


def meta(model_id: str) -> dict:
    return yaml.safe_load((ROOT / "data" / "models" / model_id / "meta.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def course():
    data = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "data").glob("*.json")}
    numbers, per_model = compute_course(load_models(ROOT / "data" / "models"), data["course"],
                                        data.get("reference_counts"), data.get("citations"), data=data)
    return numbers, per_model, data


def value(numbers, name):
    return float(numbers[name].value)


def test_every_reference_in_the_lesson_exists(course):
    numbers, _, _ = course
    text = LESSON.read_text(encoding="utf-8")
    names = {m.group(2) for m in ROLE.finditer(text) if m.group(1) != "claim"}
    assert len(names) > 60
    assert not sorted(n for n in names if n not in numbers)
    for claim in re.findall(r"\{claim\}`([^`]+)`", text):
        for name in re.findall(r"[a-z_][\w]*(?:\.[\w]+)+", claim):
            assert name in numbers, (name, claim)


def test_fit_optima_at_gophers_budget(course):
    numbers, _, _ = course
    for key, _E, A, B, alpha, beta in (("chinchilla", 1.69, 406.4, 410.7, 0.34, 0.28),
                                       ("epoch", 1.8172, 482.01, 2085.43, 0.3478, 0.3658)):
        G = (alpha * A / (beta * B)) ** (1 / (alpha + beta))
        N = G * (GOPHER / 6) ** (beta / (alpha + beta))
        assert value(numbers, f"c6.{key}.N_gopher") == pytest.approx(N, rel=1e-12)
        assert value(numbers, f"c6.{key}.tpp_gopher") == pytest.approx(GOPHER / 6 / N / N, rel=1e-12)
        assert value(numbers, f"c6.{key}.a") == pytest.approx(beta / (alpha + beta))
    assert value(numbers, "c6.chinchilla_tpp") == 20
    # the exercise's budgets use Chinchilla's own ratio (its prompt cites c6.exercise_tpp as that ratio)
    assert value(numbers, "c6.exercise_tpp") == value(numbers, "c6.chinchilla_tpp")
    M, D = 0.1715 * GOPHER ** 0.5243, 5.8316 * GOPHER ** 0.4757
    assert value(numbers, "c6.ds.tpp_gopher") == pytest.approx(D / (M / 6))


def test_trained_models_use_exact_N_and_published_D(course):
    numbers, per_model, _ = course
    for alias, model_id in (("gpt3", "gpt3-175b"), ("llama7b", "llama-2-7b"), ("llama70b", "llama-2-70b"),
                            ("gemma_2_9b", "gemma-2-9b"), ("qwen3_8b", "qwen3-8b")):
        N = build_ledger(cfg(model_id)).total
        D = meta(model_id)["training_tokens"]
        assert value(numbers, f"c6.{alias}.tpp") == pytest.approx(D / N)
        assert numbers[f"c6.{alias}.C"].value == 6 * N * D
        N_opt, D_opt = S.EPOCH.optimum(6 * N * D)
        assert value(numbers, f"c6.{alias}.vs_opt") == pytest.approx(N / N_opt)
        loss = 1.8172 + 482.01 / N ** 0.3478 + 2085.43 / D ** 0.3658
        assert value(numbers, f"c6.{alias}.loss") == pytest.approx(loss)
    # the figures: GPT-3 ~1.7, Llama 2 7B ~297, Llama 3 8B ~1,875 tokens per parameter
    assert round(value(numbers, "c6.gpt3.tpp"), 1) == 1.7
    assert round(value(numbers, "c6.llama7b.tpp")) == 297
    assert value(numbers, "c6.llama3_8b.tpp") == 1875
    # models without a published figure have none
    assert "c6.gpt2.tpp" not in numbers and "c6.mistral_7b_v0_1.tpp" not in numbers


def test_the_baseline_budget(course):
    numbers, _, _ = course
    N = 3_688_704
    assert numbers["c6.base.D20"].value == 20 * N == 73_774_080
    assert numbers["c6.base.C"].value == 6 * N * 20 * N
    assert f"{numbers['c6.base.C'].value:.3g}" == "1.63e+15"
    d, L, s, V, f = 256, 4, 512, 2048, 688
    per = 6 * (L * (4 * d * d + 3 * d * f) + V * d) + 3 * L * 4 * d * s
    assert numbers["c6.base.per_token"].value == per
    assert numbers["c6.base.C_exact"].value == per * 20 * N
    assert numbers["c6.base.M"].value == 6 * L * (4 * d * d + 3 * d * f) + 12 * L * d * s


def test_attention_and_utilisation(course):
    numbers, _, data = course
    ll = build_ledger(cfg("llama-2-7b"))
    d, L = 4096, 32
    weights = 6 * (L * (4 * d * d + 3 * d * 11008) + 32000 * d)   # + the untied lm_head
    attention = 3 * L * 4 * d * 4096
    assert value(numbers, "c6.llama7b.attn_share_seq") == pytest.approx(attention / weights)
    assert value(numbers, "c6.llama7b.breakeven_seq") == pytest.approx(weights / (3 * L * 4 * d))
    cited = data["citations"]
    C = 6 * ll.total * 2 * 10**12
    mfu = C / (cited["llama2_7b_gpu_hours"]["value"] * 3600 * cited["a100_bf16_tflops"]["value"] * 1e12)
    assert value(numbers, "c6.llama7b.mfu") == pytest.approx(mfu)
    assert 0.3 < mfu < 0.5


def test_kaplans_attention_term_is_half_of_the_lessons(course):
    """Kaplan et al. 2020, Table 1: 2·n_layer·n_ctx·d_attn forward per token, recounted from the config's keys;
    the lesson's count (q·k and the weighted sum of v over the whole sequence, DeepSeek's 12·n_layer·d·l_seq for
    training) is twice it."""
    numbers, _, _ = course
    c = cfg("llama-2-7b")
    L, d, s = c["num_hidden_layers"], c["hidden_size"], c["max_position_embeddings"]
    weights = 6 * (L * (4 * d * d + 3 * d * c["intermediate_size"]) + c["vocab_size"] * d)
    kaplan = 3 * 2 * L * s * d
    assert value(numbers, "c6.llama7b.attn_share_kaplan") == pytest.approx(kaplan / weights)
    assert value(numbers, "c6.llama7b.attn_share_seq") == pytest.approx(2 * kaplan / weights)
    assert 3 * 4 * L * d * s == 12 * L * d * s          # the attention part of DeepSeek's M, per training token
    assert S.kaplan_attention_flops(L, s, d) * 2 == 4 * L * s * d


def test_placed_models_orders_above_the_smallest_budget(course):
    numbers, per_model, _ = course
    low = min(float(b) for b in BUDGETS)
    orders = []
    for alias in PLACED:
        m = per_model[alias]
        if m.meta.get("training_tokens"):
            orders.append(math.log10(6 * m.ledger.total * m.meta["training_tokens"] / low))
    assert len(orders) >= 5
    assert value(numbers, "c6.placed.orders_min") == pytest.approx(min(orders))
    assert value(numbers, "c6.placed.orders_max") == pytest.approx(max(orders))


# -- widgets -----------------------------------------------------------------------------------------------------
def test_isoflop_answers(course):
    _, per_model, _ = course
    placed = [[per_model[a].name, per_model[a].ledger.total, per_model[a].meta["training_tokens"]]
              for a in PLACED if per_model[a].meta.get("training_tokens")]
    assert len(placed) == 6 and len(BUDGETS) == 24
    x = calc.isoflop("5.76e23", placed)
    assert [f["N"] for f in x["fits"]] == ["32.2B", "72.2B"]
    assert [f["tpp"] for f in x["fits"]] == ["92.6", "18.4"]
    chart = x["chart"]
    assert chart["xlog"] and [len(s["x"]) for s in chart["series"] if s["mode"] == "markers"] == [1, 1, 6]
    models = chart["series"][-1]
    assert models["x"] == [N for _, N, _ in placed]
    for C in (1e15, 1e20, 1e26):        # each fit's marked optimum is the lowest point of its own curve
        x = calc.isoflop(f"{C:g}", placed)
        curves = [s for s in x["chart"]["series"] if s["mode"] == "lines"]
        marks = [s for s in x["chart"]["series"] if s["mode"] == "markers"][:2]
        for curve, mark in zip(curves, marks):
            assert mark["y"][0] <= min(curve["y"]) + 1e-9
    with pytest.raises(ValueError, match="正数"):
        calc.isoflop("abc", placed)


def test_models_table_carries_kaplans_N(course):
    from experiments.lessons import widgets
    from experiments.widget import WidgetData
    _, per_model, data = course
    w = widgets()["c6-isoflop"]
    view = w.resolve(w.view)(w.options({}), WidgetData(per_model, data))
    gpt3 = next(r for r in view["rows"] if r["name"] == per_model["gpt3"].name)
    L = build_ledger(cfg("gpt3-175b"))
    assert gpt3["nonemb"] == f"{L.total - 50257 * 12288 - 2048 * 12288:,}"      # minus wte and wpe
    assert view["missing"] == [per_model[a].name for a in ("gpt2", "mistral_7b_v0_1", "qwen2_5_7b")]


def test_budget_plan_and_errors():
    x = calc.budget_plan("5.76e23", "989.4", "1024", "40")
    seconds = 5.76e23 / (1024 * 989.4e12 * 0.4)
    assert x["days"] == calc.sig(seconds / 86400)
    assert [r["N"] for r in x["rows"][:2]] == ["32.2B", "72.2B"]
    for bad, word in ((("-1", "989.4", "8", "40"), "正数"), (("1e24", "989.4", "0", "40"), "GPU 数量"),
                      (("1e24", "989.4", "2.5", "40"), "整数"), (("1e24", "989.4", "8", "150"), "利用率")):
        with pytest.raises(ValueError, match=word):
            calc.budget_plan(*bad)


def test_device_speed_times_the_trainers_step():
    """The probe's FLOP/s is one trainer step on the baseline: its FLOPs from the ledger at that sequence length
    (6 x the multiplied weights + the attention scores, per token) over its measured time."""
    x = calc.device_speed(16, 1, 2)
    base = calc.baseline_budget()
    L = build_ledger(cfg("baseline"))
    per = S.training_flops_per_token(L, 16)
    assert x["step_flops"] == 2 * 16 * per["total"] and per["weights"] == 6 * S.matmul_weights_per_token(L)
    assert x["flops"] == pytest.approx(x["step_flops"] / x["seconds"])
    assert x["duration"] == calc.duration_zh(base["C"] / x["flops"])
    assert x["duration_exact"] == calc.duration_zh(base["C_exact"] / x["flops"])
    assert "训练一步（2 × 16 个 token" in x["sentence"]
    for bad in ((4096, 1, 1), (16, 0, 1), (True, 1, 1), (16, 1, 9)):
        with pytest.raises(ValueError):
            calc.device_speed(*bad)


def test_states_cover_every_budget_stop():
    from experiments.lessons import widgets
    from experiments.widget import WidgetData
    data = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "data").glob("*.json")}
    _, per_model = compute_course(load_models(ROOT / "data" / "models"), data["course"], data.get("reference_counts"),
                                  data.get("citations"))
    wd = WidgetData(per_model, data)
    w = widgets()["c6-isoflop"]
    states = w.resolve(w.states)(w.options({}), wd)
    assert [args[0] for _, args in states] == BUDGETS
    b = widgets()["c6-budget"]
    states = b.resolve(b.states)(b.options({}), wd)
    assert [args[1] for _, args in states] == ["989.4", "312"]


def test_code_cell_agrees_with_the_engine():
    text = LESSON.read_text(encoding="utf-8")
    block = text.split("```{widget} code", 1)[1].split("```", 1)[0]
    source = "\n".join(line[2:] for line in block.split("source: |", 1)[1].splitlines()[1:])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "cell", "exec"), {})
    N, D = S.EPOCH.optimum(GOPHER)
    printed = out.getvalue()
    assert f"N = {N / 1e9:.1f}B" in printed and f"{D / N:.1f} 个 token" in printed
    gap = float(re.search(r"与闭式解差 ([\d.]+)%", printed).group(1))
    assert gap < 0.2                                     # the grid search lands on the closed form


def test_outline_and_links():
    course = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
    c6 = next(ch for ch in course["chapters"] if ch["id"] == "C6")
    assert c6["status"] == "written" and c6["lesson"] == "c6-model-size"
    c4 = (ROOT / "lessons" / "c4-transformer-block" / "lesson.md").read_text(encoding="utf-8")
    seventh = c4.split("## ⑦", 1)[1].split("## ⑧", 1)[0]
    assert "[C6](c6-model-size.html)" in seventh
    text = LESSON.read_text(encoding="utf-8")
    assert [h for h in re.findall(r"^## (\S)", text, re.M)] == list("①②③④⑤⑥⑦⑧⑨⑩") + ["参"]
    refs = text.split("## 参考资料", 1)[1]
    assert len(re.findall(r"<https://", refs)) >= 10
    assert math.isfinite(S.CHINCHILLA.G)


def test_the_lessons_fits_read_the_cited_coefficients(course):
    """The numbers use fits built from data/citations.json (so moving a cited coefficient moves them); they are
    the engine's own fits, which the browser's calculators use."""
    from experiments.lessons.c6_model_size.numbers import cited_fits
    numbers, _, _ = course
    cited = {n[len("cited."):]: v for n, v in numbers.items() if n.startswith("cited.")}
    fits, kaplan, deepseek = cited_fits(cited)
    assert fits == S.FITS and kaplan == S.KAPLAN and deepseek == S.DEEPSEEK
    assert value(numbers, "c6.epoch.N_gopher") == S.EPOCH.optimum(GOPHER)[0]
