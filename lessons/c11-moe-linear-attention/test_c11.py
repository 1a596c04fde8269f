"""Lesson C11 (MoE 与线性注意力): every figure the lesson cites, recomputed here from the configs, independently of
this folder's Python.

The test reads data/models/*/config.json itself and recounts each quantity from its config keys (or, where only a
tensor tree can say it, from the ledger tree's leaves with its own walk), then compares with the number the page
prints (experiments.course_numbers.compute_numbers). It also runs the page's code cell in CPython, checks the
widgets' build-time views against the calculators, the outline and the C4 links, and that every {n} and {claim}
in the lesson names a registered number.
"""
from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from experiments.course_numbers import compute_course
from experiments.ledger import build_ledger, views
from sitegen.models import load_model, model_folders

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "c11-moe-linear-attention" / "lesson.md"
C4 = ROOT / "lessons" / "c4-transformer-block" / "lesson.md"
ROLE = re.compile(r"\{(\w+)\}`([^`]+)`")
MOE = {"qwen3_30b_a3b": "qwen3-30b-a3b", "qwen3_235b_a22b": "qwen3-235b-a22b", "deepseek_v3": "deepseek-v3",
       "gpt_oss_120b": "gpt-oss-120b", "qwen3_next_80b_a3b": "qwen3-next-80b-a3b", "mixtral_8x7b": "mixtral-8x7b",
       "jamba_v0_1": "jamba-v0.1"}


def expert_keys(model_id: str) -> tuple[str, str, str]:
    """(experts, top-k, expert width) config keys of a model, as its family records them (Arch.moe)."""
    moe = build_ledger(cfg(model_id)).arch.moe
    return moe.experts_key, moe.top_k_key, moe.expert_d_ff_key


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def course():
    return json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def computed(course):
    models = {}
    for folder in model_folders(ROOT / "data" / "models"):
        doc = load_model(folder)
        models[doc["meta"]["id"]] = doc
    citations = json.loads((ROOT / "data" / "citations.json").read_text(encoding="utf-8"))
    data = {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in (ROOT / "data").glob("*.json")}
    return compute_course(models, course, citations=citations, data=data)


def layouts_doc() -> dict:
    return json.loads((ROOT / "data" / "hybrid_layouts.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def numbers(computed):
    return computed[0]


def v(numbers, name):
    return numbers[name].value


# -- independent counts ----------------------------------------------------------------------------------------
def moe_layers(model_id: str, c: dict) -> int:
    L = c["num_hidden_layers"]
    if model_id == "deepseek-v3":
        return L - c["first_k_dense_replace"]
    if model_id == "jamba-v0.1":
        return sum(1 for i in range(L) if i % c["expert_layer_period"] == c["expert_layer_offset"])
    return L


def expert_params(model_id: str, c: dict) -> int:
    """One routed expert: three d × w matrices (gpt-oss: fused gate_up with a 2w bias, down with a d bias)."""
    d, w = c["hidden_size"], c[expert_keys(model_id)[2]]
    if model_id == "gpt-oss-120b":
        return 3 * d * w + 2 * w + d
    return 3 * d * w


def router_params(model_id: str, c: dict) -> int:
    E, d = c[expert_keys(model_id)[0]], c["hidden_size"]
    per = E * d + (E if model_id in ("deepseek-v3", "gpt-oss-120b") else 0)   # DeepSeek's score bias, gpt-oss's bias
    return moe_layers(model_id, c) * per


def routed_from_tree(ledger) -> tuple[int, int]:
    """(stored, used by one token) of every node the tree marks as routed (n_active < n), by our own walk."""
    stored = used = 0

    def go(node, mult, mult_used):
        nonlocal stored, used
        if node.n_active is not None and node.n_active != node.n:
            stored += mult * node.count
            used += mult_used * node.n_active * node.per_copy
            return
        for ch in node.children:
            go(ch, mult * node.n, mult_used * node.n)
    for ch in ledger.part("text").children:
        go(ch, 1, 1)
    return stored, used


@pytest.mark.parametrize("alias", list(MOE))
def test_two_ledgers_of_every_moe_model(numbers, alias):
    mid = MOE[alias]
    c = cfg(mid)
    led = build_ledger(c)
    E, k, _ = (c[key] for key in expert_keys(mid))
    p = f"c11.{alias}"
    assert v(numbers, f"{p}.E") == E and v(numbers, f"{p}.k") == k
    assert v(numbers, f"{p}.moe_layers") == moe_layers(mid, c)
    one = expert_params(mid, c)
    assert v(numbers, f"{p}.one_expert") == one
    assert v(numbers, f"{p}.routed_total") == moe_layers(mid, c) * E * one
    assert v(numbers, f"{p}.routed_active") == moe_layers(mid, c) * k * one
    assert (v(numbers, f"{p}.routed_total"), v(numbers, f"{p}.routed_active")) == routed_from_tree(led)
    assert v(numbers, f"{p}.router") == router_params(mid, c)
    assert v(numbers, f"{p}.always") == led.active_per_token - moe_layers(mid, c) * k * one
    assert v(numbers, f"{p}.active_share") == Fraction(led.active_per_token, led.text_backbone)
    assert v(numbers, f"{p}.router_share") == Fraction(router_params(mid, c), led.text_backbone)
    assert v(numbers, f"{p}.weights_gb") == Fraction(2 * led.total, 10**9)
    assert v(numbers, f"{p}.active_gb") == Fraction(2 * led.active_per_token, 10**9)
    assert v(numbers, f"{p}.choices") == math.comb(E, k)
    every = 2 * views.matmul_weights(led, active=False)
    assert v(numbers, f"{p}.flops_all") == every
    assert v(numbers, f"{p}.flops_ratio") == Fraction(every, views.param_flops_per_token(led))


def test_always_active_parts_of_deepseek_v3(numbers):
    c = cfg("deepseek-v3")
    d, w_s, n_s = c["hidden_size"], c["moe_intermediate_size"], c["n_shared_experts"]
    assert v(numbers, "c11.deepseek_v3.dense_layers") == c["first_k_dense_replace"] == 3
    assert v(numbers, "c11.deepseek_v3.row.shared") == moe_layers("deepseek-v3", c) * n_s * 3 * d * w_s
    assert v(numbers, "c11.deepseek_v3.row.dense_ffn") == c["first_k_dense_replace"] * 3 * d * c["intermediate_size"]


def test_the_lessons_figures_as_printed(numbers):
    from experiments.numbers import format_number
    shown = {name: format_number(numbers[name], style) for name, style in [
        ("qwen3_30b_a3b.total", "n"), ("qwen3_30b_a3b.active_per_token", "n"),
        ("c11.qwen3_30b_a3b.active_share", "pct"),
        ("c11.qwen3_30b_a3b.router", "n"), ("c11.qwen3_30b_a3b.router_share", "pct3"),
        ("c11.qwen3_30b_a3b.weights_gb", "x1"), ("c11.qwen3_30b_a3b.active_gb", "x1"),
        ("c11.gdn_state_elems", "n"), ("c11.gdn_state_mb", "x2"), ("c11.gdn_break_even_T", "n"),
        ("c11.hyb.f64.t256k.cache_gb", "x2"), ("c11.hyb.cache_ratio.t256k", "pct"),
        ("c11.batch.qwen3_30b_a3b.b16.touched", "x1"), ("c11.hyb.param_diff", "n")]}
    assert shown == {"qwen3_30b_a3b.total": "30,532,122,624", "qwen3_30b_a3b.active_per_token": "3,353,032,704",
                     "c11.qwen3_30b_a3b.active_share": "11.0%", "c11.qwen3_30b_a3b.router": "12,582,912",
                     "c11.qwen3_30b_a3b.router_share": "0.041%", "c11.qwen3_30b_a3b.weights_gb": "61.1",
                     "c11.qwen3_30b_a3b.active_gb": "6.7", "c11.gdn_state_elems": "817,152",
                     "c11.gdn_state_mb": "1.63", "c11.gdn_break_even_T": "399",
                     "c11.hyb.f64.t256k.cache_gb": "68.72", "c11.hyb.cache_ratio.t256k": "25.1%",
                     "c11.batch.qwen3_30b_a3b.b16.touched": "82.4", "c11.hyb.param_diff": "528,861,696"}


# -- granularity: the same config with experts merged or split -----------------------------------------------------
@pytest.mark.parametrize("key,m", [("m1_8", Fraction(1, 8)), ("m1_4", Fraction(1, 4)), ("m1", Fraction(1)),
                                   ("m4", Fraction(4))])
def test_granularity(numbers, key, m):
    c = cfg("qwen3-30b-a3b")
    E, k, w = int(c["num_experts"] * m), int(c["num_experts_per_tok"] * m), int(c["moe_intermediate_size"] / m)
    changed = dict(c, num_experts=E, num_experts_per_tok=k, moe_intermediate_size=w)
    led = build_ledger(changed)
    p = f"c11.gran.{key}"
    assert (v(numbers, f"{p}.E"), v(numbers, f"{p}.k"), v(numbers, f"{p}.w")) == (E, k, w)
    assert v(numbers, f"{p}.total") == led.text_backbone and v(numbers, f"{p}.active") == led.active_per_token
    assert v(numbers, f"{p}.router") == c["num_hidden_layers"] * E * c["hidden_size"]
    assert v(numbers, f"{p}.choices") == math.comb(E, k)
    # the FFN budget is unchanged: only the router moves the totals
    base = build_ledger(c)
    assert led.text_backbone - base.text_backbone == c["num_hidden_layers"] * (E - c["num_experts"]) * c["hidden_size"]


# -- the hand count and the code cell --------------------------------------------------------------------------
def hand(c: dict) -> tuple[int, int]:
    V, d, L = c["vocab_size"], c["hidden_size"], c["num_hidden_layers"]
    h, h_kv, d_h = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    E, k, w = c["num_experts"], c["num_experts_per_tok"], c["moe_intermediate_size"]
    attn = d * h * d_h + 2 * d * h_kv * d_h + h * d_h * d + 2 * d_h
    outside = V * d + d + (0 if c.get("tie_word_embeddings") else V * d)
    per = attn + E * d + 2 * d
    return outside + L * (per + E * 3 * d * w), outside + L * (per + k * 3 * d * w)


def test_hand_count(numbers):
    c = cfg("qwen3-30b-a3b")
    total, active = hand(c)
    led = build_ledger(c)
    assert (total, active) == (led.total, led.active_per_token)
    assert v(numbers, "c11.hand.total") == total and v(numbers, "c11.hand.active") == active
    assert v(numbers, "c11.hand.expert") == 3 * c["hidden_size"] * c["moe_intermediate_size"]


def code_cell_source(index: int) -> str:
    """The lesson's code cells in page order: 0 the delta rule by hand, 1 the two ledgers from a config."""
    text = LESSON.read_text(encoding="utf-8")
    blocks = re.findall(r"```\{widget\} code\n(.*?)\n```", text, re.S)
    return yaml.safe_load(blocks[index])["source"]


def run_cell(src: str) -> tuple[dict, str]:
    ns: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(src, "cell", "exec"), ns)   # noqa: S102 - the lesson's own code cell
    return ns, out.getvalue()


def test_the_delta_rule_cell_recalls_like_the_experiment():
    """The hand-written delta rule: a pair just written reads back exactly, and past d_k pairs the state keeps the
    last-written ones (the same finding as the recall experiment, from the learner's own dozen lines)."""
    import numpy as np
    ns, out = run_cell(code_cell_source(0))
    K, V, S, hit, d, N = ns["K"], ns["V"], ns["S"], ns["hit"], ns["d"], ns["N"]
    assert np.allclose(S @ K[-1], V[-1])
    assert f"找回 {hit.sum()} / {N} 对" in out and N > d
    assert hit[-d:].mean() > hit[:-d].mean()


def test_code_cell_prints_the_engines_two_ledgers():
    src = code_cell_source(1)
    c = cfg("qwen3-30b-a3b")
    ns: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(src, "cell", "exec"), ns)   # noqa: S102 - the lesson's own code cell
    for key, value in ns["cfg"].items():        # every value typed in the cell is the real config's
        assert c[key] == value, key
    led = build_ledger(c)
    assert ns["total"] == led.total and ns["active"] == led.active_per_token
    assert f"{led.total:,}" in out.getvalue() and f"{led.active_per_token:,}" in out.getvalue()


# -- a decode step of B tokens ---------------------------------------------------------------------------------
@pytest.mark.parametrize("alias", ["qwen3_30b_a3b", "deepseek_v3"])
@pytest.mark.parametrize("B", [1, 16, 64, 256])
def test_batch_touches_experts(numbers, alias, B):
    c = cfg(MOE[alias])
    led = build_ledger(c)
    E, k = c[expert_keys(MOE[alias])[0]], c["num_experts_per_tok"]
    touched = E * (1 - (1 - Fraction(k, E)) ** B)
    every, used = views.matmul_weights(led, active=False), views.matmul_weights(led)
    read = used + (every - used) * (touched - k) / (E - k)
    p = f"c11.batch.{alias}.b{B}"
    assert v(numbers, f"{p}.touched") == touched
    assert v(numbers, f"{p}.touched_share") == touched / E
    assert v(numbers, f"{p}.read_gb") == read * 2 / 10**9
    assert v(numbers, f"{p}.per_token_gb") == read * 2 / 10**9 / B
    assert v(numbers, f"c11.batch.{alias}.all_gb") == Fraction(2 * every, 10**9)


# -- hybrids ---------------------------------------------------------------------------------------------------
def anchor_with(n_full: int) -> dict:
    c = copy.deepcopy(cfg("qwen3.8-27b"))
    t = c["text_config"]
    L = t["num_hidden_layers"]
    step = L // n_full if n_full else None
    t.pop("full_attention_interval", None)
    t["layer_types"] = ["full_attention" if step and (i + 1) % step == 0 else "linear_attention" for i in range(L)]
    return c


def gdn_state(t: dict) -> int:
    n_k, n_v = t["linear_num_key_heads"], t["linear_num_value_heads"]
    d_k, d_v, K = t["linear_key_head_dim"], t["linear_value_head_dim"], t["linear_conv_kernel_dim"]
    return n_v * d_k * d_v + (K - 1) * (2 * n_k * d_k + n_v * d_v)


def test_gdn_state_against_kv(numbers):
    t = cfg("qwen3.8-27b")["text_config"]
    kv = 2 * t["num_key_value_heads"] * t["head_dim"]
    assert v(numbers, "c11.gdn_state_elems") == gdn_state(t) == 817_152
    assert v(numbers, "c11.attn_kv_elems") == kv and v(numbers, "c11.attn_kv_bytes") == 2 * kv
    assert v(numbers, "c11.gdn_break_even_T") == Fraction(gdn_state(t), kv) == 399
    assert v(numbers, "c11.gdn_state_mb") == Fraction(2 * gdn_state(t), 10**6)


@pytest.mark.parametrize("n_full", [0, 8, 16, 32, 64])
@pytest.mark.parametrize("tk,T", [("t4k", 4096), ("t32k", 32768), ("t256k", 262144)])
def test_hybrid_ratios(numbers, n_full, tk, T):
    c = anchor_with(n_full)
    t = c["text_config"]
    L = t["num_hidden_layers"]
    kv = 2 * t["num_key_value_heads"] * t["head_dim"]
    cache = 2 * (n_full * kv * T + (L - n_full) * gdn_state(t))
    led = build_ledger(c)
    p = f"c11.hyb.f{n_full}"
    assert v(numbers, f"{p}.{tk}.cache_gb") == Fraction(cache, 10**9)
    assert v(numbers, f"{p}.{tk}.kv_gb") == Fraction(2 * n_full * kv * T, 10**9)
    assert v(numbers, f"{p}.state_gb") == Fraction(2 * (L - n_full) * gdn_state(t), 10**9)
    scores = n_full * 2 * 2 * t["num_attention_heads"] * t["head_dim"] * T
    flops = views.param_flops_per_token(led) + scores
    assert v(numbers, f"{p}.{tk}.gflops") == Fraction(flops, 10**9)
    assert v(numbers, f"{p}.{tk}.score_share") == Fraction(scores, flops)
    assert v(numbers, f"{p}.total") == led.total
    if n_full == 16:
        assert led.total == build_ledger(cfg("qwen3.8-27b")).total   # the anchor's own pattern


def test_hybrid_parameters_cost(numbers):
    anchor, full = build_ledger(cfg("qwen3.8-27b")), build_ledger(anchor_with(64))
    assert v(numbers, "c11.hyb.param_diff") == anchor.total - full.total
    assert anchor.total - full.total == 48 * v(numbers, "c4.anchor_mixer_diff")


def test_qwen3_next_and_jamba(numbers):
    c = cfg("qwen3-next-80b-a3b")
    T = c["max_position_embeddings"]
    kinds = build_ledger(c).arch.layer_types
    n_full, n_lin = kinds.count("full_attention"), kinds.count("linear_attention")
    kv = 2 * c["num_key_value_heads"] * c["head_dim"]
    assert (v(numbers, "c11.next.n_full"), v(numbers, "c11.next.n_linear")) == (n_full, n_lin) == (12, 36)
    assert v(numbers, "c11.next.cache_gb") == Fraction(2 * (n_full * kv * T + n_lin * gdn_state(c)), 10**9)
    assert v(numbers, "c11.next.full_cache_gb") == Fraction(2 * (n_full + n_lin) * kv * T, 10**9)
    j = cfg("jamba-v0.1")
    d_in = j["mamba_expand"] * j["hidden_size"]
    state = d_in * j["mamba_d_state"] + (j["mamba_d_conv"] - 1) * d_in
    L, T = j["num_hidden_layers"], j["max_position_embeddings"]
    n_attn = sum(1 for i in range(L) if i % j["attn_layer_period"] == j["attn_layer_offset"])
    kv = 2 * j["num_key_value_heads"] * (j["hidden_size"] // j["num_attention_heads"])
    assert v(numbers, "c11.jamba.state_elems") == state
    assert (v(numbers, "c11.jamba.n_attn"), v(numbers, "c11.jamba.n_mamba")) == (n_attn, L - n_attn) == (4, 28)
    assert v(numbers, "c11.jamba.cache_gb") == Fraction(2 * (n_attn * kv * T + (L - n_attn) * state), 10**9)
    assert v(numbers, "c11.jamba.full_cache_gb") == Fraction(2 * L * kv * T, 10**9)


# -- the widgets' build-time views agree with the calculators; every table state is the calculator's answer ---------
def test_widget_tables_are_the_calculators_answers():
    from experiments.lessons.c11_moe_linear_attention import calc
    c = cfg("qwen3-30b-a3b")
    led = build_ledger(c)
    x = calc.moe_ledger(c)
    assert x["total"] == f"{led.text_backbone:,}" and x["active"] == f"{led.active_per_token:,}"
    rows = {r["key"]: r for r in x["rows"]}
    stored, used = routed_from_tree(led)
    assert rows["routed"]["total"] == f"{stored:,}" and rows["routed"]["active"] == f"{used:,}"
    assert sum(int(r["total"].replace(",", "")) for r in x["rows"]) == led.text_backbone
    assert sum(int(r["active"].replace(",", "")) for r in x["rows"]) == led.active_per_token
    with pytest.raises(ValueError, match="不能多于"):
        calc.moe_ledger(c, 8, 16)
    with pytest.raises(ValueError, match="整数"):
        calc.moe_ledger(c, None, None, "1/16")
    with pytest.raises(ValueError, match="稠密层共用"):
        calc.moe_ledger(cfg("jamba-v0.1"), None, None, "2")


def test_build_answers_are_the_calculators_answers(computed, course):
    """What the build answers ahead of time (each widget's `states`, as sitegen/widgets.py embeds them) is the
    calculators' answer for the same args: every preset at every T, every model's own ledgers, every slider
    position of every model at the built precision."""
    from experiments import lessons
    from experiments.lessons.c11_moe_linear_attention import calc
    from experiments.widget import WidgetData
    from sitegen.widgets import precompute
    data = WidgetData(computed[1], {"course": course})
    declared = lessons.widgets()

    def answers(name):
        w = declared[name]
        return precompute(w, w.options({}), data)

    a = cfg("qwen3.8-27b")
    hybrid = answers("c11-hybrid-memory")
    assert len(hybrid) == len(calc.FULL_PRESETS) * len(calc.T_CHOICES)
    assert hybrid['c11_hybrid_memory [{"$model":"anchor"},16,32768]'] == calc.hybrid_memory(a, 16, 32768)
    c = cfg("qwen3-30b-a3b")
    ledger = answers("c11-moe-ledger")
    assert len(ledger) == 7
    assert ledger['c11_moe_ledger [{"$model":"qwen3_30b_a3b"},null,null,"1"]'] == calc.moe_ledger(c)
    batch = answers("c11-batch-experts")
    assert len(batch) == 7 * (len(calc.BATCH_EXPONENTS) + 1)
    assert batch['c11_batch_read [{"$model":"qwen3_30b_a3b"},16,"BF16"]'] == calc.batch_read(c, 16)
    assert batch['c11_batch_chart [{"$model":"qwen3_30b_a3b"},"BF16"]'] == json.loads(json.dumps(calc.batch_chart(c)))


# -- the lesson text, the outline, the C4 links ------------------------------------------------------------------
def test_every_reference_names_a_number(numbers):
    from sitegen.claims import names, parse
    text = LESSON.read_text(encoding="utf-8")
    refs = ROLE.findall(text)
    claims = [body for role, body in refs if role == "claim"]
    cited = [body for role, body in refs if role not in ("claim", "term")]
    assert len(cited) > 150 and len(claims) >= 40
    assert not [n for n in cited if n not in numbers]
    assert not [n for c in claims for n in names(parse(c)) if n not in numbers]
    # the ten parts, in order
    heads = re.findall(r"^## (.)", text, re.M)
    assert heads == list("①②③④⑤⑥⑦⑧⑨⑩") + ["参"]          # the ten parts, then 参考资料
    for sub in ("### 朴素方案", "### 它在哪失败", "### 改进方案"):
        assert sub in text


def test_outline_and_c4_links(course):
    ch = {c["id"]: c for c in course["chapters"]}["C11"]
    assert ch["status"] == "written" and ch["lesson"] == "c11-moe-linear-attention"
    c4 = C4.read_text(encoding="utf-8")
    assert "C11 " not in c4.replace("[C11](c11-moe-linear-attention.html)", "")
    # six: the GDN paragraph of ④ now points to C11 for what linear attention saves
    assert c4.count("[C11](c11-moe-linear-attention.html)") == 6
    from experiments.lessons.c4_transformer_block.widgets import later_links
    links = later_links(course["tracker"], course)
    assert [x for x in links if x["chapter"] == "C11"] == [
        {"title": "Gated DeltaNet 层（线性注意力）", "chapter": "C11", "chapter_title": ch["title"],
         "href": "c11-moe-linear-attention.html"}]


# -- the numbers added for conventions, routing, serving and the other cache answers, counted from the configs --
def test_active_conventions_and_flop_share(numbers):
    # gpt-oss: the course's active count minus the input embedding (V·d from the config) is OpenAI's 5.13B
    c = cfg("gpt-oss-120b")
    no_emb = v(numbers, "gpt_oss_120b.active_per_token") - c["vocab_size"] * c["hidden_size"]
    assert v(numbers, "c11.gpt_oss_120b.active_no_embedding") == no_emb
    assert round(no_emb / 1e9, 2) == 5.13
    # the FLOP share is the reciprocal of the all-experts ratio, and below the parameter share
    r = v(numbers, "c11.qwen3_235b_a22b.flops_ratio")
    assert v(numbers, "c11.qwen3_235b_a22b.flops_share") == 1 / r
    assert v(numbers, "c11.qwen3_235b_a22b.flops_share") < v(numbers, "c11.qwen3_235b_a22b.active_share")


def test_routing_settings_read_from_configs(numbers):
    assert v(numbers, "c11.qwen3_30b_a3b.aux_coef") == Fraction(str(cfg("qwen3-30b-a3b")["router_aux_loss_coef"]))
    assert v(numbers, "c11.mixtral_8x7b.aux_coef") == Fraction(str(cfg("mixtral-8x7b")["router_aux_loss_coef"]))
    ds = cfg("deepseek-v3")
    assert "c11.deepseek_v3.aux_coef" not in numbers          # DeepSeek-V3 states no balance-loss weight
    assert (v(numbers, "c11.deepseek_v3.n_group"), v(numbers, "c11.deepseek_v3.topk_group")) == \
        (ds["n_group"], ds["topk_group"])
    assert v(numbers, "c11.deepseek_v3.routed_scale") == Fraction(str(ds["routed_scaling_factor"]))


def test_serving_batch_and_all_to_all(numbers):
    cited = json.loads((ROOT / "data" / "citations.json").read_text(encoding="utf-8"))
    ridge = Fraction(str(cited["h100_bf16_tflops"]["value"])) / Fraction(str(cited["h100_bandwidth_tbps"]["value"]))
    assert v(numbers, "c11.dense_ridge_batch") == ridge
    ds = cfg("deepseek-v3")
    e_over_k = Fraction(ds["n_routed_experts"], ds["num_experts_per_tok"])
    assert v(numbers, "c11.deepseek_v3.moe_ridge_batch") == ridge * e_over_k
    moe_layers = ds["num_hidden_layers"] - ds["first_k_dense_replace"]
    a2a = 2 * ds["num_experts_per_tok"] * ds["hidden_size"] * 2 * moe_layers     # dispatch + combine, BF16
    assert v(numbers, "c11.deepseek_v3.a2a_mb_token") == Fraction(a2a, 10**6)


def test_mla_and_sliding_window_caches(numbers):
    ds = cfg("deepseek-v3")
    latent = ds["kv_lora_rank"] + ds["qk_rope_head_dim"]
    assert v(numbers, "c11.mla.latent_elems") == latent
    # the engine's per-token cache of DeepSeek-V3 is that latent in every layer, BF16
    assert v(numbers, "deepseek_v3.kv_bytes_per_token") == latent * ds["num_hidden_layers"] * 2
    heads = ds["num_attention_heads"] * (ds["qk_nope_head_dim"] + ds["qk_rope_head_dim"] + ds["v_head_dim"])
    assert v(numbers, "c11.mla.mha_elems") == heads
    go = cfg("gpt-oss-120b")
    per_layer = 2 * go["num_key_value_heads"] * go["head_dim"] * 2
    T, w = go["max_position_embeddings"], go["sliding_window"]
    kinds = go["layer_types"]
    mixed = per_layer * sum(T if k == "full_attention" else min(T, w) for k in kinds)
    assert v(numbers, "c11.swa.gpt_oss_120b.cache_gb") == Fraction(mixed, 10**9)
    assert v(numbers, "c11.swa.gpt_oss_120b.full_cache_gb") == Fraction(per_layer * len(kinds) * T, 10**9)


# -- hybrid layouts read from published configs the engine does not read (data/hybrid_layouts.json) -------------
def test_minimax_layout_is_the_model_cards():
    """MiniMax-Text-01's card: 80 layers, a softmax layer after every 7 lightning layers; the config says the same."""
    doc = layouts_doc()["minimax-m1"]
    c = doc["config"]
    assert c["attn_type_list"] == [1 if (i + 1) % 8 == 0 else 0 for i in range(80)] and c["num_hidden_layers"] == 80
    assert doc["source"].startswith("https://github.com/MiniMax-AI/MiniMax-M1/") and doc["found"]


def test_kimi_linear_layout_and_numbers(numbers):
    c = layouts_doc()["kimi-linear-48b-a3b"]["config"]
    full = [i for i in range(1, c["num_hidden_layers"] + 1) if i % 4 == 0 or i == c["num_hidden_layers"]]
    assert c["linear_attn_config"]["full_attn_layers"] == full
    kda = [i for i in range(1, 28) if i not in full]
    assert c["linear_attn_config"]["kda_layers"] == kda
    assert (v(numbers, "c11.kimi.n_linear"), v(numbers, "c11.kimi.n_full"), v(numbers, "c11.kimi.L")) == (20, 7, 27)
    assert v(numbers, "c11.kimi.linear_per_full") == Fraction(20, 7)
    assert (v(numbers, "c11.minimax.n_linear"), v(numbers, "c11.minimax.n_full")) == (70, 10)
    assert v(numbers, "c11.minimax.full_share") == Fraction(1, 8)


@pytest.mark.parametrize(("change", "key"), [
    (lambda c: c["attn_type_list"].__setitem__(5, 2), "attn_type_list"),
    (lambda c: c.__setitem__("num_hidden_layers", 81), "attn_type_list"),
    (lambda c: c.__setitem__("num_hidden_layers", "80"), "num_hidden_layers"),
])
def test_a_malformed_minimax_layout_is_refused_by_key(change, key):
    from experiments.lessons.c11_moe_linear_attention.layouts import layer_counts
    c = copy.deepcopy(layouts_doc()["minimax-m1"]["config"])
    change(c)
    with pytest.raises(ValueError, match=key):
        layer_counts(c)


def test_a_kimi_layout_that_misses_a_layer_is_refused():
    from experiments.lessons.c11_moe_linear_attention.layouts import layer_counts
    c = copy.deepcopy(layouts_doc()["kimi-linear-48b-a3b"]["config"])
    c["linear_attn_config"]["kda_layers"].remove(26)
    with pytest.raises(ValueError, match="kda_layers"):
        layer_counts(c)


# -- the associative-recall experiment ----------------------------------------------------------------------------
def test_recall_numbers_are_the_experiments_counts(numbers):
    from experiments.lessons.c11_moe_linear_attention import RECALL_DEFAULTS, recall
    d = RECALL_DEFAULTS["d_k"]
    c = recall.recall_counts(d, RECALL_DEFAULTS["seed"], Fraction(RECALL_DEFAULTS["gate"]))
    for m in recall.MEMORIES:
        for n in recall.N_POINTS:
            assert v(numbers, f"c11.recall.{m}.n{n}") == Fraction(c[m][n], n)
    n_max = recall.N_POINTS[-1]
    assert v(numbers, "c11.recall.delta_recent") == Fraction(c["delta_recent"], d)
    assert v(numbers, "c11.recall.delta_older") == Fraction(c["delta_older"], n_max - d)
    assert c["delta_recent"] + c["delta_older"] == c["delta"][n_max]
    assert v(numbers, "c11.gdn_d_k") == cfg("qwen3.8-27b")["text_config"]["linear_key_head_dim"]


def test_the_delta_rule_recalls_fewer_than_addition_from_d_k_on(numbers):
    """At the widget's first setting the delta rule recalls fewer pairs than plain addition at every N >= d_k and
    more of the last d_k written: recounted here with plain loops on the experiment's stream (each write a rank-one
    update, each read S·k, the nearest stored value by dot product), not through recall_counts."""
    import numpy as np

    from experiments.lessons.c11_moe_linear_attention import RECALL_DEFAULTS, recall
    d, seed = RECALL_DEFAULTS["d_k"], RECALL_DEFAULTS["seed"]
    assert Fraction(RECALL_DEFAULTS["gate"]) == 1
    rng = np.random.default_rng(seed)
    n_max = max(recall.N_POINTS)
    keys, values = recall._unit_rows(rng, n_max, d), recall._unit_rows(rng, n_max, d)
    linear, delta, hits = np.zeros((d, d)), np.zeros((d, d)), {}
    for t in range(n_max):
        key, value = keys[t], values[t]
        linear = linear + np.outer(value, key)
        delta = delta + np.outer(value - delta @ key, key)
        n = t + 1
        if n in recall.N_POINTS:
            for name, S in (("linear", linear), ("delta", delta)):
                reads = keys[:n] @ S.T
                hits[name, n] = np.argmax(reads @ values[:n].T, axis=1) == np.arange(n)
    big = [n for n in recall.N_POINTS if n >= d]
    behind = sum(hits["delta", n].sum() < hits["linear", n].sum() for n in big)
    assert v(numbers, "c11.recall.n_from_dk") == len(big) and v(numbers, "c11.recall.delta_behind") == behind
    assert behind == len(big)                          # what the lesson says: fewer at every N >= d_k
    for name in ("linear", "delta"):
        assert v(numbers, f"c11.recall.{name}_recent") == Fraction(int(hits[name, n_max][-d:].sum()), d)
        assert v(numbers, f"c11.recall.{name}.n{d}") == Fraction(int(hits[name, d].sum()), d)


def test_the_two_states_are_exact_on_orthogonal_keys():
    """With orthonormal keys (N <= d_k) both fixed states return every value exactly: S k_j = v_j. The delta
    rule with a gate α keeps the last write whole and scales each older one by α per later write."""
    import numpy as np

    from experiments.lessons.c11_moe_linear_attention import recall
    d = 16
    keys = np.eye(d)[[3, 0, 7, 12, 5]]
    values = np.random.default_rng(1).standard_normal((5, d))
    additive = np.einsum("ia,ib->ab", values, keys)
    assert np.allclose(np.einsum("ab,jb->ja", additive, keys), values)
    for gate in (1.0, 0.9):
        S = recall._delta_states(keys, values, gate, {5})[5]
        read = np.einsum("ab,jb->ja", S, keys)
        assert np.allclose(read, values * np.array([gate ** (4 - j) for j in range(5)])[:, None])


def test_recall_past_capacity_from_first_principles():
    """Past d_k pairs no d_v × d_k matrix reads every value back: the least-squares state V Kᵀ⁺ (the best any
    linear read can do) already misses pairs at N = 4·d_k, while softmax attention over the same pairs keeps them."""
    import numpy as np

    from experiments.lessons.c11_moe_linear_attention import recall
    d, n = 16, 64
    rng = np.random.default_rng(3)
    keys, values = recall._unit_rows(rng, n, d), recall._unit_rows(rng, n, d)
    best = np.linalg.lstsq(keys, values, rcond=None)[0]          # (d_k, d_v): keys @ best ≈ values
    lsq_hits = int(np.count_nonzero(recall._hits(keys @ best, values)))
    soft_hits = int(np.count_nonzero(recall._hits(recall._softmax_read(keys, values, d), values)))
    assert lsq_hits < n and soft_hits > lsq_hits
    c = recall.recall_counts(d, 3, Fraction(1), (n,))
    assert c["softmax"][n] == soft_hits and c["delta"][n] < n and c["linear"][n] < n


@pytest.mark.parametrize(("args", "words"), [(("24", "0", "1"), "d_k"), (("32", "-1", "1"), "随机种子"),
                                             (("32", "0", "1.5"), "遗忘门"), (("32", "x", "1"), "随机种子")])
def test_recall_bad_settings_are_refused_in_chinese(args, words):
    from experiments.lessons.c11_moe_linear_attention import recall
    with pytest.raises(ValueError, match=words):
        recall.recall_experiment(*args)


def test_recall_view_and_states(numbers):
    from experiments.lessons.c11_moe_linear_attention import RECALL_DEFAULTS, recall, widgets
    calls = widgets.recall_states(dict(RECALL_DEFAULTS), None)
    assert ("c11_recall", ["32", "0", "1"]) in calls and ("c11_recall", ["128", "0", "1"]) in calls
    assert ("c11_recall", ["32", "0", "0.9"]) in calls and len(calls) == len(set(map(str, calls)))
    x = widgets.recall_view(dict(RECALL_DEFAULTS), None)["x"]
    assert x == recall.recall_experiment("32", "0", "1")
    assert [r["n"] for r in x["rows"]] == [f"{n:,}" for n in recall.N_POINTS]


def test_a_bad_layout_document_is_a_course_error_naming_file_and_key():
    from experiments.errors import CourseError
    from experiments.lessons.c11_moe_linear_attention import numbers as c11_numbers
    from experiments.toolkit.model_numbers import Registry
    doc = copy.deepcopy(layouts_doc())
    doc["minimax-m1"]["config"]["attn_type_list"][0] = 7
    with pytest.raises(CourseError, match=r"data/hybrid_layouts\.json: key 'minimax-m1\.config': attn_type_list"):
        c11_numbers._layouts(Registry(), doc)
