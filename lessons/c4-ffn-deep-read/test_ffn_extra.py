"""Lesson C4+'s added parts (prefill vs decode, the FFN share formula, depth vs width) and the tracker's "solves"
lines: every number against independent arithmetic or the ledger engine, on the built page as printed, and the
widgets' build-time markup equal to this folder's extra.py's answers for the same inputs.
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
from experiments.course_numbers import compute_course
from experiments.expr import evaluate
from experiments.ledger import build_ledger, views
from experiments.lessons.c4_ffn_deep_read import DEPTH_DEFAULTS, PREFILL_DEFAULTS, extra
from experiments.lessons.c4_ffn_deep_read import calc as ffn
from experiments.lessons.c4_transformer_block.widgets import chapter_links, tracker_settings, tracker_stages
from experiments.numbers import format_number
from sitegen.models import load_models

ROOT = Path(__file__).resolve().parents[2]
FFN_PAGE, C4_PAGE = "c4-ffn-deep-read.html", "c4-transformer-block.html"
NEW = ("ffn.pd_", "ffn.sf_", "ffn.dw_")


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def course():
    return _json(ROOT / "data" / "course.json")


@pytest.fixture(scope="module")
def citations():
    return _json(ROOT / "data" / "citations.json")


@pytest.fixture(scope="module")
def computed(course, citations):
    models = load_models(ROOT / "data" / "models")
    return compute_course(models, course, citations=citations)


@pytest.fixture(scope="module")
def numbers(computed):
    return computed[0]


@pytest.fixture(scope="module")
def per_model(computed):
    return computed[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The course built in this process, from the same state the expected figures are computed in (the session's
    build, made earlier, disagreed with them on two depth-width figures when the whole suite ran: see the notes)."""
    import build
    out = tmp_path_factory.mktemp("ffn-extra-site") / "_site"
    build.build(ROOT, out, steps=[])
    return out


def page(built, name: str) -> str:
    return html.unescape((built / name).read_text(encoding="utf-8"))


def v(numbers, name):
    return Fraction(numbers[name].value)


# -- 1. prefill vs decode ------------------------------------------------------------------------------------------
def test_ridge_and_intensities_from_the_cited_gpu(numbers, citations):
    peak, bw = Fraction(citations["h100_bf16_tflops"]["value"]), Fraction(citations["h100_bandwidth_tbps"]["value"])
    assert v(numbers, "ffn.pd_ridge") == peak / bw
    assert format_number(numbers["ffn.pd_ridge"], "x0") == "295"
    # BF16: 2 FLOPs per weight per token over 2 bytes per weight -> FLOPs per byte = tokens in the pass
    assert v(numbers, "ffn.pd_intensity_prefill") == PREFILL_DEFAULTS["prompt"] == 2048
    assert v(numbers, "ffn.pd_intensity_decode") == 1
    assert v(numbers, "ffn.pd_decode_use") == 1 / (peak / bw)
    # prefill/decode throughput ratio is the crossover: peak·bytes / (2·bandwidth)
    assert v(numbers, "ffn.pd_speedup") == v(numbers, "ffn.takeover_batch.BF16") == peak * 2 / (2 * bw)


def test_prefill_decode_times_against_the_engine(numbers, per_model, citations):
    mn = per_model["llama7b"]
    W = views.matmul_weights(mn.ledger)
    peak, bw = Fraction(citations["h100_bf16_tflops"]["value"]), Fraction(citations["h100_bandwidth_tbps"]["value"])
    P = PREFILL_DEFAULTS["prompt"]
    assert v(numbers, "ffn.pd_prefill_mem_ms") == Fraction(W * 2) / (bw * 10**12) * 1000
    assert v(numbers, "ffn.pd_prefill_cmp_ms") == Fraction(2 * W * P) / (peak * 10**12) * 1000
    assert v(numbers, "ffn.pd_decode_cmp_ms") == Fraction(2 * W) / (peak * 10**12) * 1000
    assert v(numbers, "ffn.pd_prefill_tps") == peak * 10**12 / (2 * W)
    assert v(numbers, "ffn.pd_decode_tps") == v(numbers, "ffn.decode_tps.llama7b.FP16")
    r = extra.prefill_decode(mn.doc["config"], "BF16", "3.35", "989.4", P, 1)
    d = ffn.decode(mn.doc["config"], "BF16", "3.35", 1, "989.4")
    assert (r["prefill"]["bound"], r["decode"]["bound"]) == ("算力", "带宽")
    assert r["decode"]["t_mem"] == d["t_mem"] and r["decode"]["t_compute"] == d["t_compute"]
    assert r["crossover"] == d["takeover"] == "296"
    assert r["prefill"]["intensity"] == "2,048" and r["decode"]["intensity"] == "1.0"
    assert [row["bound"] for row in r["rows"]] == ["带宽" if t < 296 else "算力" for t in extra.PD_TOKENS]


def test_prefill_decode_moe_reads_more_experts_as_tokens_grow(per_model):
    mn = per_model["qwen3_30b_a3b"]
    r = extra.prefill_decode(mn.doc["config"], "BF16", "3.35", "989.4", 4096, 1)
    w = ffn.step_weights(mn.ledger)
    assert r["moe"] and w.read(4096) > w.read(1) == w.active
    assert r["decode"]["read"] != r["prefill"]["read"]


def test_prefill_decode_rejects_bad_input(per_model):
    cfg = per_model["llama7b"].doc["config"]
    with pytest.raises(ValueError, match="提示词长度"):
        extra.prefill_decode(cfg, "BF16", "3.35", "989.4", 0, 1)
    with pytest.raises(ValueError, match="精度"):
        extra.prefill_decode(cfg, "FP7", "3.35", "989.4", 16, 1)


# -- 2. the share formula ------------------------------------------------------------------------------------------
def _independent(arch) -> tuple[Fraction, Fraction]:
    """(formula, weight matrices of a Q/K/V/O + m-matrix layer) from the config's numbers alone."""
    d, dff, m = arch.d_model, arch.d_ff, arch.ffn_matrices
    q, kv = arch.n_heads * arch.head_dim, arch.n_kv_heads * arch.head_dim
    formula = m * Fraction(dff, d) / (m * Fraction(dff, d) + 2 + 2 * Fraction(arch.n_kv_heads, arch.n_heads))
    matrices = Fraction(m * d * dff, m * d * dff + 2 * d * q + 2 * d * kv)
    return formula, matrices


AGREE = ("baseline", "gpt2", "gpt3", "llama7b", "llama_2_13b", "llama70b", "mistral_7b_v0_1", "qwen2_5_7b", "qwen3_8b")


def test_formula_equals_the_engine_where_the_layer_has_only_those_matrices(numbers, per_model):
    dense = sorted(a for a, mn in per_model.items() if not mn.arch.moe)
    assert set(AGREE) <= set(dense)
    for alias in dense:
        arch = per_model[alias].arch
        formula, matrices = _independent(arch)
        assert v(numbers, f"ffn.sf_formula.{alias}") == formula, alias
        agrees = v(numbers, f"ffn.sf_matrices.{alias}") == formula
        assert agrees == (alias in AGREE), alias
        if alias in AGREE:
            assert v(numbers, f"ffn.sf_matrices.{alias}") == matrices
        # the whole layer adds norms (and biases): always a little lower
        assert v(numbers, f"ffn.sf_whole.{alias}") < v(numbers, f"ffn.sf_matrices.{alias}")
    assert v(numbers, "ffn.sf_matrices.gpt2") == Fraction(2, 3)


def test_formula_misses_wide_queries_and_the_output_gate(numbers, per_model):
    g = per_model["gemma_2_9b"].arch
    assert g.n_heads * g.head_dim != g.d_model
    assert v(numbers, "ffn.sf_formula.gemma_2_9b") == Fraction(4 * 3, 4 * 3 + 2 + 1) == Fraction(4, 5)
    a = per_model["anchor"].ledger
    node = a.layer("full_attention")
    ffn_m = node.sum_where(lambda leaf, kinds: "ffn" in kinds and leaf.matmul) // node.n
    q_proj = next(x for x in node.walk() if x.shape is not None and x.key.endswith("q_proj.weight"))
    assert q_proj.shape[0] == 2 * a.arch.n_heads * a.arch.head_dim       # the output gate doubles q_proj
    attn_m = node.sum_where(lambda leaf, kinds: leaf.matmul and "attention" in kinds) // node.n
    assert v(numbers, "ffn.sf_matrices.anchor") == Fraction(ffn_m, ffn_m + attn_m)
    rows = {r["alias"]: r for r in extra.share_rows([(al, mn.name, mn.ledger) for al, mn in per_model.items()])}
    assert "不等于 d" in rows["gemma_2_9b"]["why"] and "输出门" in rows["anchor"]["why"]
    assert "MoE" in rows["qwen3_30b_a3b"]["why"] and rows["qwen3_30b_a3b"]["formula"] == "—"
    assert "偏置" in rows["gpt2"]["why"] and "偏置" in rows["qwen2_5_7b"]["why"]
    assert rows["llama7b"]["agrees"].startswith("✓") and rows["gemma_2_9b"]["agrees"].startswith("✗")


def test_solving_the_formula_for_r(numbers):
    assert (v(numbers, "ffn.sf_r23.m2"), v(numbers, "ffn.sf_r23.m3")) == (4, Fraction(8, 3))
    assert (v(numbers, "ffn.sf_r50.m2"), v(numbers, "ffn.sf_r50.m3")) == (2, Fraction(4, 3))
    assert v(numbers, "ffn.sf_attn_d2.kv8") == Fraction(9, 4) and v(numbers, "ffn.sf_r23.m3kv8") == Fraction(3, 2)
    for m in (2, 3):
        for g in (Fraction(1), Fraction(1, 4), Fraction(1, 8)):
            for s in (Fraction(1, 2), Fraction(2, 3), Fraction(4, 5)):
                assert extra.formula_share(m, extra.r_for_share(m, g, s), g) == s


def test_share_chart_points_on_and_off_the_curve(per_model):
    rows = extra.share_rows([(a, mn.name, mn.ledger) for a, mn in per_model.items()])
    points = extra.share_points(rows)
    c = extra.share_chart(3, "1/4", points)
    on = c["chart"]["series"][1]
    assert sorted(on["text"][i].split("：")[0] for i in range(len(on["x"]))) == sorted(
        [per_model["mistral_7b_v0_1"].name, per_model["qwen3_8b"].name])
    curve = c["chart"]["series"][0]
    for x, y in zip(on["x"], on["y"]):   # the engine's points lie on the formula's curve
        assert abs(float(extra.formula_share(3, Fraction(x), Fraction(1, 4))) * 100 - y) < 1e-9
    assert len(curve["x"]) == len(extra.SHARE_R) and curve["y"][0] < curve["y"][-1]
    # Gemma (kv 1/2) and the anchor (1/6) never sit on a curve: their queries are wider than d
    assert extra.share_chart(3, "1/2", points)["on_curve"] == "（没有）"
    assert extra.share_chart(3, "1/6", points)["on_curve"] == "（没有）"
    assert (c["r_two_thirds"], c["attn_d2"]) == ("1.67", "2.50")
    with pytest.raises(ValueError, match="矩阵数"):
        extra.share_chart(4, "1", points)


# -- 3. depth vs width -----------------------------------------------------------------------------------------------
def test_depth_width_search_is_the_closest_config(numbers, per_model):
    budget = per_model["llama7b"].ledger.total
    assert v(numbers, "ffn.dw_budget") == budget
    for L in extra.DW_LAYERS:
        d = extra.width_for(budget, L)
        assert d % extra.HEAD_DIM == 0
        here = abs(extra._family_ledger(L, d, extra.VOCAB).total - budget)
        for other in (d - extra.HEAD_DIM, d + extra.HEAD_DIM):
            if other > 0:
                assert here <= abs(extra._family_ledger(L, other, extra.VOCAB).total - budget), (L, d, other)


@pytest.mark.parametrize("budget", [10**6, 10**8, 6_738_415_616, 10**11])
@pytest.mark.parametrize("L", [1, 7, 32, 128])
def test_depth_width_search_agrees_with_a_scan_over_every_width(budget, L):
    """The estimate-and-gallop search finds what walking k = 1, 2, 3, ... would (closest total, ties narrower)."""
    total = lambda k: extra._family_ledger(L, k * extra.HEAD_DIM, extra.VOCAB).total  # noqa: E731
    k = 1
    while total(k) < budget:
        k += 1
    if k > 1 and budget - total(k - 1) <= total(k) - budget:
        k -= 1
    assert extra.width_for(budget, L) == k * extra.HEAD_DIM


def test_depth_width_numbers(numbers, per_model):
    a = per_model["llama7b"].arch
    assert (v(numbers, "ffn.dw_d.L32"), v(numbers, "ffn.dw_d_ff.L32")) == (a.d_model, a.d_ff)
    assert v(numbers, "ffn.dw_total.L32") == per_model["llama7b"].ledger.total
    for L in (16, 32, 64):
        d, d_ff = int(v(numbers, f"ffn.dw_d.L{L}")), int(v(numbers, f"ffn.dw_d_ff.L{L}"))
        assert d_ff == math.ceil(Fraction(8 * d, 3) / 256) * 256
        led = build_ledger(ffn.llama_config(L, d, d_ff))
        assert v(numbers, f"ffn.dw_total.L{L}") == led.total
        assert v(numbers, f"ffn.dw_share_total.L{L}") == Fraction(led.ffn, led.total)
        assert v(numbers, f"ffn.dw_kv.L{L}") == 2 * L * d * 2 == views.kv_bytes_per_token(led)
        assert v(numbers, f"ffn.dw_score.L{L}") == 4 * L * d * DEPTH_DEFAULTS["T"]
        assert v(numbers, f"ffn.dw_ffn_flops.L{L}") == 6 * d * d_ff * L
        assert v(numbers, f"ffn.dw_crossover.L{L}") == Fraction(3 * d_ff, 2) == views.crossover_T(led)
    assert (v(numbers, "ffn.dw_d.L16"), v(numbers, "ffn.dw_d.L64")) == (5760, 2944)


def test_depth_width_call_and_bad_input(per_model):
    budget = per_model["llama7b"].ledger.total
    x = extra.depth_width(budget, 32, 4096)
    assert (x["now"]["d"], x["now"]["d_ff"], x["now"]["off"]) == ("4,096", "11,008", "±0.00%")
    assert [r["L"] for r in x["rows"]] == [f"{L:,}" for L in extra.DW_LAYERS]
    assert x["now"]["kv_T"] == "2.15 GB" and x["now"]["crossover"] == "16,512"
    with pytest.raises(ValueError, match="层数"):
        extra.depth_width(budget, 0, 4096)


# -- every new number re-derives and is on the page as printed -----------------------------------------------------
def test_new_numbers_rederive_from_their_expressions(numbers):
    names = [k for k in numbers if k.startswith(NEW)]
    assert len(names) > 60
    for name in names:
        num = numbers[name]
        if num.expr is not None:
            assert evaluate(num.expr.substituted()) == Fraction(num.value), name


PRINTED = [("ffn.pd_ridge", "x0", "295"), ("ffn.pd_intensity_prefill", "x0", "2,048"),
           ("ffn.pd_prefill_mem_ms", "x2", "3.94"), ("ffn.pd_prefill_cmp_ms", "x1", "27.4"),
           ("ffn.pd_decode_use", "pct2", "0.34%"), ("ffn.pd_speedup", "x1", "295.3"),
           ("ffn.pd_decode_tps", "x0", "254"), ("ffn.pd_prefill_tps", "x0", "74,874"),
           ("ffn.sf_formula.llama7b", "pct2", "66.84%"), ("ffn.sf_formula.llama70b", "pct2", "82.35%"),
           ("ffn.sf_formula.gemma_2_9b", "pct2", "80.00%"), ("ffn.sf_matrices.gemma_2_9b", "pct2", "77.78%"),
           ("ffn.sf_formula.anchor", "pct2", "81.38%"), ("ffn.sf_matrices.anchor", "pct2", "71.83%"),
           ("ffn.sf_r23.m3", "x2", "2.67"), ("ffn.sf_r23.m3kv8", "x1", "1.5"),
           ("ffn.dw_d.L16", "n", "5,760"), ("ffn.dw_d.L64", "n", "2,944"), ("ffn.dw_kv.L64", "n", "753,664"),
           ("ffn.dw_crossover.L16", "n", "23,040"), ("ffn.dw_off.L64", "pct2", "2.30%")]


@pytest.mark.parametrize("name,style,text", PRINTED)
def test_printed_on_the_page(numbers, built, name, style, text):
    assert format_number(numbers[name], style) == text
    assert f'data-name="{name}"' in (built / FFN_PAGE).read_text(encoding="utf-8") or text in page(built, FFN_PAGE)
    assert text in page(built, FFN_PAGE)


# -- the widgets' first state is the calculators' answer ----------------------------------------------------------
def test_widgets_build_time_state(built, per_model):
    text = page(built, FFN_PAGE)
    for name in ("ffn-prefill-decode", "ffn-share-formula", "ffn-depth-width"):
        assert f'data-widget="{name}"' in text
    assert "lessons/c4-ffn-deep-read/script.js" in text
    cfg = per_model["llama7b"].doc["config"]
    r = extra.prefill_decode(cfg, "BF16", "3.35", "989.4", 2048, 1)
    for value in (r["prefill"]["t_compute"], r["decode"]["t_mem"], r["prefill"]["tok_s"], r["speedup"]):
        assert value in text
    rows = extra.share_rows(extra_models(per_model))
    for row in rows:
        assert f'<tr data-model="{row["alias"]}"><td>{row["name"]}</td>' in text
    x = extra.depth_width(per_model["llama7b"].ledger.total, 32, 4096)
    # (its row template names each cell)
    assert all(f'<td class="r" data-f="crossover">{row["crossover"]}</td>' in text for row in x["rows"])


def extra_models(per_model):
    ms = sorted(per_model.items(), key=lambda item: item[1].name.lower())
    return [(a, mn.name, mn.ledger) for a, mn in ms if not mn.arch.moe] + \
        [(a, mn.name, mn.ledger) for a, mn in ms if mn.arch.moe]


def test_api_entry_points(per_model):
    cfg = per_model["llama7b"].doc["config"]
    got = json.loads(api.ffn_prefill_decode(json.dumps([cfg, "INT4", "3.35", "989.4", 512, 8])))
    assert got == json.loads(json.dumps(extra.prefill_decode(cfg, "INT4", "3.35", "989.4", 512, 8)))
    budget = per_model["llama70b"].ledger.total
    table = json.loads(api.ffn_depth_width_table(json.dumps([str(budget), "8192"])))
    now = json.loads(api.ffn_depth_width_now(json.dumps([str(budget), 40, "8192"])))
    whole = extra.depth_width(budget, 40, 8192)
    assert table == {k: whole[k] for k in ("budget", "T", "rows")} and now == {"T": whole["T"], "now": whole["now"]}
    assert now["now"]["L"] == "40" and [r["L"] for r in table["rows"]] == [f"{L:,}" for L in extra.DW_LAYERS]
    assert json.loads(api.ffn_share_chart(json.dumps([2, "1", []])))["r_two_thirds"] == "4.00"


# -- the tracker: what each stage solves, which chapter teaches it --------------------------------------------------
def test_chapter_links_follow_the_outline(course):
    links = chapter_links(course)
    assert links["C4"]["href"] == "c4-transformer-block.html" and links["C4+"]["href"] == "c4-ffn-deep-read.html"
    written = {ch["id"] for ch in course["chapters"] if ch["status"] == "written"}
    assert {k for k, x in links.items() if x["href"]} == written
    later = {**course, "chapters": [dict(ch, status="written", lesson="c11-moe-linear-attention") if ch["id"] == "C11"
                                    else ch for ch in course["chapters"]]}
    assert chapter_links(later)["C11"]["href"] == "c11-moe-linear-attention.html"


def test_every_stage_says_what_it_solves(course, per_model):
    stages = tracker_stages(per_model["anchor"].ledger, tracker_settings(course))
    assert all(s["solves"] for s in stages)
    by_id = {s["id"]: s for s in stages}
    ffn_part = by_id["full_attention"]["parts"][1]
    assert [c["id"] for c in ffn_part["links"]] == ["C4", "C4+"] and ffn_part["solves"]
    c11 = by_id["linear_attention"]["links"][0]
    c11_written = any(ch["id"] == "C11" and ch["status"] == "written" for ch in course["chapters"])
    assert (c11["href"] is not None) == c11_written


def test_tracker_on_the_c4_page(built, course):
    text = (built / C4_PAGE).read_text(encoding="utf-8")
    # (the build's stages; the same markup stands blank in the <template> the browser fills after a model change)
    solves = re.findall(r'class="solves"[^>]*>为什么需要它：(?:<span data-f="solves">)?([^<]+)', text)
    assert len(solves) >= len(course["tracker"]["stages"])
    def link(href, chapter):
        return re.search(rf'<a class="chapter-link" href="{re.escape(href)}"[^>]*>(?:<span data-f="id">)?'
                         rf'{re.escape(chapter)}(?:</span>)? ', text)
    assert link("c4-ffn-deep-read.html", "C4+")
    c11 = next(ch for ch in course["chapters"] if ch["id"] == "C11")
    if c11["status"] == "written":
        assert link(f'{c11["lesson"]}.html', "C11")
    else:
        assert re.search(r'<span class="chapter-unwritten"[^>]*>(?:<span data-f="id">)?C11', text) \
            and 'href="c11-' not in text


def test_depth_width_rows_are_kept_but_handed_out_as_copies(per_model):
    budget = per_model["llama7b"].ledger.total
    first = extra.depth_width(budget, 32, 4096)
    first["now"]["d"] = "changed"
    first["rows"][0]["d"] = "changed"
    again = extra.depth_width(budget, 32, 4096)
    assert again["now"]["d"] == "4,096" and again["rows"][0]["d"] == extra.depth_width_row(budget, 8, 4096)["d"]


@pytest.mark.parametrize("k", [1, 5, 23, 32, 64, 257])
def test_depth_width_totals_per_width_are_the_engines(k):
    """The search counts one-layer configs (rest + L·per_layer); that is the engine's L-layer total, exactly."""
    rest, per_layer = extra._per_width(k, extra.VOCAB)
    for L in (1, 2, 7, 32, 160):
        assert rest + L * per_layer == extra._family_ledger(L, k * extra.HEAD_DIM, extra.VOCAB).total, L
