"""What the lesson widgets show, computed under CPython: the C4 lesson's widgets module and the browser API
experiments.api.

The browser runs these same functions under Pyodide (tests/test_browser_engine.py proves the results are equal);
here they are checked against the lesson's figures and against the ledger itself.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import api
from experiments.baseline import CONFIG as BASELINE_CONFIG
from experiments.baseline import summary
from experiments.errors import ConfigError
from experiments.ledger import build_ledger, unwrap, views
from experiments.lessons.c4_transformer_block.widgets import (
    baseline_view,
    byo_error,
    crossover_at,
    crossover_series,
    ledger_compare,
    ledger_layer,
    ledger_total,
    log_points,
    parse_config_text,
    shape_str,
    signed,
    tracker_actual,
    tracker_settings,
    tracker_stages,
)
from sitegen.models import load_model

ROOT = Path(__file__).resolve().parent.parent
MODEL_FILES = sorted((ROOT / "data" / "models").glob("*/config.json"))
COURSE = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
REFERENCE = json.loads((ROOT / "data" / "reference_counts.json").read_text(encoding="utf-8"))
TRACKER = tracker_settings(COURSE)   # the tracker's settings with the outline's chapter links, as the page gets them


def config_of(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ledgers() -> dict:
    return {p.parent.name: build_ledger(unwrap(json.loads(p.read_text(encoding="utf-8")))) for p in MODEL_FILES}


def num(text: str) -> int:
    return int(text.replace(",", "").replace("+", "").replace("−", "-"))


# -- formatting -----------------------------------------------------------------------------------------------------
def test_formatting_helpers():
    assert shape_str([5]) == "(5,)" and shape_str((5, 5120)) == "(5, 5120)" and shape_str([]) == "()"
    assert signed(11017952) == "+11,017,952" and signed(-3) == "−3" and signed(0) == "0"
    assert log_points(1024)[0] == 1 and log_points(1024)[-1] == 1024
    assert all(a < b for a, b in zip(log_points(262144), log_points(262144)[1:]))


# -- 总账 ---------------------------------------------------------------------------------------------------------
def test_ledger_total_anchor(ledgers):
    lt = ledger_total(ledgers["qwen3.8-27b"], "Qwen3.8-27B")
    assert lt["total"] == "27,781,427,952" and lt["text_backbone"] == "26,895,998,464"
    assert (lt["ffn_share_total"], lt["ffn_share_backbone"]) == ("61.6%", "63.6%")
    assert [r["key"] for r in lt["rows"]] == ["embedding", "attention", "linear_attention", "ffn", "norm", "lm_head",
                                             "mtp", "vision"]
    assert {r["key"]: r["share_backbone"] for r in lt["rows"]}["vision"] == "—"
    assert lt["chart"]["title"] == "Qwen3.8-27B 各部件参数" and len(lt["chart"]["hover"]) == len(lt["rows"])


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.parent.name)
def test_ledger_total_rows_sum_to_total(path, ledgers):
    ledger = ledgers[path.parent.name]
    lt = ledger_total(ledger)
    assert sum(num(r["count"]) for r in lt["rows"]) == ledger.total
    assert sum(lt["chart"]["values"]) == ledger.total


# -- 一层里 --------------------------------------------------------------------------------------------------------
def test_ledger_layer_anchor_difference(ledgers):
    ll = ledger_layer(ledgers["qwen3.8-27b"])
    assert [layer["type"] for layer in ll["layers"]] == ["linear_attention", "full_attention"]
    d = ll["diff"]
    assert d["layer"] == "11,017,952" and d["verb"] == "多" and d["mixer"] == "+11,017,952" and d["ffn"] == "0"
    assert d["rows"][-1] == {"label": "本层合计", "a": "383,273,184", "b": "372,255,232", "diff": "+11,017,952"}
    assert "11,017,952" in d["sentence"] and ll["single"] is None


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.parent.name)
def test_ledger_layer_rows_add_up(path, ledgers):
    ledger = ledgers[path.parent.name]
    ll = ledger_layer(ledger)
    for layer in ll["layers"]:
        per_layer = num(layer["per_layer"])
        assert per_layer == ledger.layer(layer["type"]).per_copy
        assert sum(num(r["count"]) for r in layer["rows"]) == per_layer
        assert num(layer["mixer"]) + num(layer["ffn"]) + num(layer["other"]) == per_layer
    if ll["diff"]:
        for r in ll["diff"]["rows"]:
            assert num(r["a"]) - num(r["b"]) == num(r["diff"])
    else:
        assert len(ll["layers"]) == 1 and ll["single"]


# -- 三个模型并排 ----------------------------------------------------------------------------------------------------
def test_ledger_compare(ledgers):
    ids = ["gpt2", "llama-2-7b", "qwen3.8-27b", "deepseek-v3"]
    data = ledger_compare([(i, i, ledgers[i]) for i in ids])
    assert [c["total"] for c in data["cols"]] == [f"{ledgers[i].total:,}" for i in ids]
    for j, i in enumerate(ids):
        assert sum(num(r["cells"][j]["count"]) for r in data["rows"]) == ledgers[i].total
        assert abs(sum(data["cols"][j]["shares"]) - 1) < 1e-12
    assert data["chart"]["series"] == ids and len(data["chart"]["hover"]) == len(ids)


# -- 参数 ≠ 计算 ---------------------------------------------------------------------------------------------------
def test_crossover_anchor(ledgers):
    c = crossover_series(ledgers["qwen3.8-27b"], name="Qwen3.8-27B")
    assert c["crossover"] == "87,040" and c["crossover_exact"] and "87,040" in c["crossover_point"]
    assert c["t_max"] == "262,144" and c["ratio_at_t_max"] == "3.0"
    assert c["native"] == "在原生上下文 T = 262,144 处，全注意力打分是 FFN 的 3.0 倍。"
    assert c["at_max"] == crossover_at(ledgers["qwen3.8-27b"], 262144)
    assert c["chart"]["crossover"] == 87040.0 and c["chart"]["T"][-1] == 262144
    at = crossover_at(ledgers["qwen3.8-27b"], 87040)
    assert at["ffn"] == at["attention"] and at["ratio"] == "1.00" and not at["attention_wins"]


def test_crossover_without_full_attention(ledgers):
    c = crossover_series(ledgers["mistral-7b-v0.1"])
    assert c["crossover"] is None and c["chart"]["crossover"] is None and "没有" in c["crossover_point"]


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.parent.name)
def test_crossover_matches_views(path, ledgers):
    ledger = ledgers[path.parent.name]
    c = crossover_series(ledger)
    cross = views.crossover_T(ledger)
    assert c["crossover"] == (None if cross is None else f"{round(cross):,}")
    assert c["t_max_raw"] == ledger.arch.context_length
    for T in (1, 1000, ledger.arch.context_length):
        at = crossover_at(ledger, T)
        assert num(at["attention"]) == views.attention_score_flops(ledger, T)
        assert num(at["ffn"]) == views.ffn_flops_per_token(ledger)


# -- the data-flow tracker -------------------------------------------------------------------------------------------
def test_tracker_anchor_stages_and_checks(ledgers):
    stages = tracker_stages(ledgers["qwen3.8-27b"], TRACKER, REFERENCE["qwen3.8-27b"])
    by_id = {s["id"]: s for s in stages}
    assert list(by_id) == ["tokens", "embedding", "linear_attention", "full_attention", "final_norm", "lm_head",
                           "softmax"]
    assert by_id["embedding"]["out"] == "(5, 5120)" and by_id["lm_head"]["out"] == "(5, 248320)"
    assert by_id["softmax"]["out"] == "(248320,)" and by_id["tokens"]["out"] == "(5,)"
    for sid in ("embedding", "linear_attention", "full_attention", "final_norm", "lm_head"):
        assert by_id[sid]["check"] == "✓", sid
    assert by_id["full_attention"]["title"] == "门控全注意力层" and by_id["full_attention"]["n_layers"] == 16
    assert by_id["linear_attention"]["status"] == "later" and by_id["linear_attention"]["chapter"] == "C11"
    for s in stages:
        if s["parts"]:
            assert sum(num(p["params"]) for p in s["parts"]) == num(s["params"])
            assert [p["status"] for p in s["parts"]][1] == "new"   # the FFN part: new in this lesson


def test_tracker_other_models_use_generic_titles(ledgers):
    stages = tracker_stages(ledgers["baseline"], TRACKER, REFERENCE["baseline"], course_titles=False)
    by_id = {s["id"]: s for s in stages}
    assert by_id["full_attention"]["title"] == "全注意力层" and by_id["final_norm"]["title"] == "最终归一化"
    assert by_id["full_attention"]["status"] == "new"     # statuses are the course's, titles the model's
    assert all(s["check"] in (None, "✓") for s in stages)
    assert by_id["lm_head"]["check"] == "✓" and by_id["lm_head"]["params"] == "0" and by_id["lm_head"]["note"]


def test_tracker_actual_shapes_from_the_numpy_forward_pass(ledgers):
    stages = tracker_stages(ledgers["baseline"], TRACKER, REFERENCE["baseline"], course_titles=False)
    s = summary()
    actual = tracker_actual(stages, s["stages"])
    assert set(actual) == {st["id"] for st in stages}
    assert all(a["match"] for a in actual.values())
    assert actual["full_attention"]["actual"] == "(5, 256) ×4 层" and actual["softmax"]["actual"] == "(2048,)"
    view = baseline_view(s, stages)
    assert view["params"] == "3,688,704" and view["agrees"] and view["actual"] == actual
    assert [x["shape"] for x in view["stages"]] == [shape_str(shape) for _, shape in s["stages"]]


# -- the browser API (JSON string in, JSON string out) -----------------------------------------------------------------
@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.parent.name)
def test_api_ledger_json_and_views(path, ledgers):
    doc = load_model(path.parent)   # {"meta", "config"}, as the build holds it
    ledger = ledgers[path.parent.name]
    assert json.loads(api.ledger_json(json.dumps([doc["config"]]))) == ledger.to_json()
    assert json.loads(api.ledger_json(json.dumps([doc]))) == ledger.to_json()       # a data file is accepted
    v = json.loads(api.ledger_views(json.dumps([doc["config"], doc["meta"]["name"]])))
    assert v["total"] == f"{ledger.total:,}"
    assert v["ledger_total"] == json.loads(json.dumps(ledger_total(ledger, doc["meta"]["name"]), ensure_ascii=False))
    assert v["ledger_layer"] == json.loads(json.dumps(ledger_layer(ledger)))
    assert v["crossover"] == json.loads(json.dumps(crossover_series(ledger, name=doc["meta"]["name"])))


def test_api_crossover_and_compare():
    anchor = config_of("qwen3.8-27b")
    assert json.loads(api.crossover_at(json.dumps([anchor, 4096]))) == crossover_at(build_ledger(anchor), 4096)
    with pytest.raises(ValueError, match="上下文长度 T 需要是正整数"):
        api.crossover_at(json.dumps([anchor, 0]))
    data = json.loads(api.ledger_compare(json.dumps([[["gpt2", "GPT-2", config_of("gpt2")],
                                                      ["anchor", "Q", anchor]]])))
    assert [c["total"] for c in data["cols"]] == ["124,439,808", "27,781,427,952"]
    assert json.loads(api.crossover_view(json.dumps([anchor, "Q"])))["crossover"] == "87,040"
    # one round trip for a model change: the readout at T (clipped to the native context) comes along
    native = json.loads(api.crossover_view(json.dumps([anchor, "Q"])))["at"]
    assert native == json.loads(api.crossover_at(json.dumps([anchor, 262_144])))
    assert json.loads(api.crossover_view(json.dumps([anchor, "Q", 4096])))["at"]["T"] == "4,096"
    assert json.loads(api.crossover_view(json.dumps([anchor, "Q", 10**9])))["at"] == native


def test_api_tracker_and_baseline_forward():
    stages = json.loads(api.tracker(json.dumps([config_of("qwen3.8-27b"), COURSE["tracker"],
                                                REFERENCE["qwen3.8-27b"]])))
    assert [s["check"] for s in stages].count("✓") == 5
    r = json.loads(api.baseline_forward(json.dumps([0, COURSE["tracker"]])))
    assert r["params"] == "3,688,704" and all(a["match"] for a in r["actual"].values())
    assert r["summary"]["stages"] == summary()["stages"]
    assert json.loads(api.baseline_forward("[0]"))["status"].startswith("浏览器里跑完：3,688,704 个参数")


def test_ledgers_are_cached_by_config():
    from experiments import ledger
    from experiments.lessons.c4_ffn_deep_read import calc as ffn
    cfg = dict(BASELINE_CONFIG)
    first = api._ledger(cfg)
    assert api._ledger(dict(reversed(list(cfg.items())))) is first     # key order does not matter
    assert api._ledger({"meta": {}, "config": cfg}) is first
    assert ffn._ledger(cfg) is first                                    # the FFN lesson's calculators share it
    for i in range(ledger.CACHE_SIZE + 3):
        api._ledger({**cfg, "vocab_size": 1000 + i})
    assert len(ledger._CACHE) == ledger.CACHE_SIZE


# -- bring your own config ---------------------------------------------------------------------------------------------
def byo(text: str, others=()) -> dict:
    return json.loads(api.byo_views(json.dumps([text, [list(o) for o in others]])))


def test_byo_good_configs():
    r = byo(json.dumps(config_of("qwen3.8-27b")), [("gpt2", "GPT-2", config_of("gpt2"))])
    assert r["ok"] and r["total"] == "27,781,427,952" and r["crossover"]["crossover"] == "87,040"
    assert [c["name"] for c in r["compare"]["cols"]] == ["GPT-2", "你的模型"]
    assert byo((ROOT / "data" / "models" / "deepseek-v3" / "config.json").read_text(encoding="utf-8"))["total"] \
        == f"{build_ledger(config_of('deepseek-v3')).total:,}"   # the published file, pasted as is
    doc = json.dumps(load_model(ROOT / "data" / "models" / "deepseek-v3"))
    assert byo(doc)["total"] == f"{build_ledger(config_of('deepseek-v3')).total:,}"   # {"meta", "config"} too


@pytest.mark.parametrize("text, needle", [
    ('{"model_type": "llama",', "内容应为合法的 JSON（第 1 行第 24 列：这里应有一个用双引号括起来的键名）"),
    ("", "输入框是空的"),
    ("[1, 2]", "内容应为 JSON 对象（即一份 config.json 的内容），实际是一个有 2 项的列表"),
    ('{"model_type": "bert"}', "键 'model_type'：应为本课程支持的模型家族之一：cohere、"),
    ('{"hidden_size": 8}', "键 'model_type'：缺少这个键"),     # no model_type: just that, not the list of families
    ('{"model_type": "mystery", "hidden_size": 8}', "键 'model_type'：应为本课程支持的模型家族之一"),
])
def test_byo_errors_name_the_problem(text, needle):
    """In Chinese (issue #13): experiments/errors_zh.py renders the engine's problems; tests/test_errors_zh.py
    checks every phrase."""
    r = byo(text)
    assert r["ok"] is False and r["title"].startswith("这个 config 有")
    assert any(needle in p for p in r["problems"]), r["problems"]
    assert not any("expected" in p or "Error" in p for p in r["problems"]), r["problems"]


def test_byo_missing_key_is_named():
    cfg = config_of("llama-2-7b")
    del cfg["hidden_size"]
    r = byo(json.dumps(cfg))
    assert not r["ok"] and "键 'hidden_size'：缺少这个键，它应为正整数" in r["problems"]
    with pytest.raises(ConfigError, match="expected valid JSON"):
        parse_config_text("nope")
    from experiments.errors_zh import GENERIC
    assert byo_error(RuntimeError("x")) == {"ok": False, "title": "无法计算这个 config：", "problems": [GENERIC]}


def test_chart_specs_are_safe_inside_a_script_element():
    from sitegen.widgets import json_script
    out = str(json_script({"a": "</script><b>&"}, "chart-spec"))
    assert "</script><b>" not in out.split(">", 1)[1][:-len("</script>")]
    payload = out.split(">", 1)[1][:-len("</script>")]
    assert json.loads(payload) == {"a": "</script><b>&"}
