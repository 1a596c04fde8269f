"""Lesson C5's widget data in CPython: the first-step panel's build-time table equals what its button computes;
the schedule explorer's curves are the trainer's Schedule; the race answers are the stored runs; the live run's
entry points train, refuse bad input in Chinese, and stop at a diverged loss."""
import json
import math
from pathlib import Path

import pytest

from experiments.lessons.c5_optimization import widgets as C5
from experiments.train.schedule import KINDS, Schedule
from experiments.widget import WidgetData

ROOT = Path(__file__).resolve().parents[2]
RUNS = json.loads((ROOT / "data" / "train_runs.json").read_text(encoding="utf-8"))
TEXT = (ROOT / "data" / "texts" / "sishu.txt").read_text(encoding="utf-8")
DATA = WidgetData({}, {"train_runs": RUNS})


def test_first_step_table_equals_the_button_for_adamw():
    built = C5.first_step_view({}, DATA)["rows"]
    computed = C5.first_step(TEXT, "adamw", 3e-3)["rows"]
    assert len(built) == 29 and [r["name"] for r in built] == [r["name"] for r in computed]
    for b, c in zip(built, computed):
        assert abs(float(b["ratio"][:-1]) - float(c["ratio"][:-1])) <= 0.1, (b, c)
    by = {r["name"]: float(r["ratio"][:-1]) for r in built}
    assert by["第 1 层注意力的查询投影 q_proj"] == pytest.approx(15.0, abs=0.2)        # lr / 0.02
    assert by["第 1 层注意力的输出投影 o_proj"] == pytest.approx(42.4, abs=0.3)        # lr / (0.02 / sqrt(8))


def test_sgd_first_step_is_far_smaller_and_uneven():
    rows = C5.first_step(TEXT, "sgd", 0.5)["rows"]
    ratios = [float(r["ratio"][:-1]) for r in rows]
    assert max(ratios) / min(ratios) > 5


def test_schedules_are_the_trainers_schedules():
    for kind in KINDS:
        for w in C5.SCHEDULE_WARMUPS:
            x = C5.schedule(kind, str(w))
            curve = Schedule(kind, 3e-3, C5.SCHEDULE_STEPS, w, 0.1, 0.2).curve()
            series = x["chart"]["series"][0]
            assert series["y"] == [pytest.approx(curve[i - 1], rel=1e-5) for i in series["x"]]
            assert series["x"][-1] == C5.SCHEDULE_STEPS
            assert x["mean_share"] == f"{100 * sum(curve) / (len(curve) * 3e-3):.0f}%"
    assert C5.schedule("wsd", 15) == C5.schedule("wsd", "15")
    with pytest.raises(ValueError, match="调度"):
        C5.schedule("linear", "30")
    with pytest.raises(ValueError, match="预热步数"):
        C5.schedule("cosine", "7")


def test_race_answers_are_the_stored_runs():
    race = RUNS["race"]
    for k in race["multipliers"]:
        x = C5.race(k, race)
        assert x["label"] == C5.multiplier_text(k)
        assert [s["name"].split(" lr ")[0] for s in x["chart"]["series"]] == [C5.OPT_ZH[n] for n in race["lr"]]
        for s, name in zip(x["chart"]["series"], race["lr"]):
            loss = race["runs"][f"{name}:{k}"]["loss"]
            assert s["y"] == [loss[i - 1] for i in s["x"]] and s["x"][-1] == len(loss)
    with pytest.raises(ValueError, match="学习率倍数"):
        C5.race(9, race)
    with pytest.raises(ValueError, match="赛跑记录"):
        C5.race(0, {"runs": []})


def test_race_and_schedule_states_are_answered_by_the_build():
    """Every stop of the race's slider and each picker's neighbours are build-time answers: the race's from the
    stored runs through a data placeholder (the browser sends it as it is), equal to calling the entry point."""
    from experiments.lessons import widgets as declared
    from experiments.widget import DATA_REF
    from sitegen.widgets import _with_configs, canonical, precompute
    widgets = declared()
    data = WidgetData({}, {"train_runs": RUNS}, widgets["c5-race"])
    race = precompute(widgets["c5-race"], widgets["c5-race"].options({}), data)
    assert sorted(race) == sorted(f"c5_race [{k},{{\"{DATA_REF}\":\"train_runs/race\"}}]"
                                  for k in RUNS["race"]["multipliers"])
    assert race[f"c5_race [3,{canonical(C5.RACE_RUNS)}]"] == json.loads(json.dumps(C5.race(3, RUNS["race"])))
    assert _with_configs([0, C5.RACE_RUNS], data) == [0, RUNS["race"]]
    sched = precompute(widgets["c5-schedule"], widgets["c5-schedule"].options({}),
                       WidgetData({}, {}, widgets["c5-schedule"]))
    assert len(sched) == len(KINDS) + len(C5.SCHEDULE_WARMUPS) - 1
    assert sched['c5_schedule ["wsd","30"]'] == json.loads(json.dumps(C5.schedule("wsd", "30")))
    assert 'c5_schedule ["wsd","0"]' not in sched          # (not a neighbour of the built state: Python's)


def test_live_entry_points_train_and_refuse_bad_input():
    s = C5.train_start(TEXT, "adamw", 0, 0)["session"]
    first = C5.train_step(s, 1)["steps"][0]
    more = C5.train_step(s, 20)["steps"]
    assert first["step"] == 1 and [r["step"] for r in more] == list(range(2, 22))
    assert abs(first["loss"] - math.log(RUNS["text"]["vocab_size"])) < 0.2
    assert sum(r["loss"] for r in more[-5:]) / 5 < first["loss"] - 0.5
    with pytest.raises(ValueError, match="优化器"):
        C5.train_start(TEXT, "lion")
    with pytest.raises(ValueError, match="学习率倍数"):
        C5.train_start(TEXT, "adamw", 5)
    with pytest.raises(ValueError, match="重置"):
        C5.train_step(s + 100)
    with pytest.raises(ValueError, match="学习率"):
        C5.first_step(TEXT, "adamw", -1)
    json.dumps(more, allow_nan=False)                       # what the worker sends is strict JSON


def test_a_run_that_blows_up_reports_no_nan(monkeypatch):
    monkeypatch.setitem(C5.__dict__, "LIVE_MULTIPLIERS", (0, 30))
    s = C5.train_start(TEXT, "sgd", 30, 0)["session"]          # lr 0.5 x 3^30: the weights overflow at once
    out = []
    for _ in range(5):
        r = C5.train_step(s, 20)
        out += r["steps"]
        if r["done"]:
            break
    assert r["done"] and out[-1]["loss"] is None and out[-1]["loss_text"] == "—"
    json.dumps(out, allow_nan=False)


def test_the_trainers_baseline_is_the_courses_baseline_config():
    """C5's numbers take the baseline's shapes from data/models/baseline/config.json (so a witness can move them);
    the stored runs were made with the trainer's copy, BASELINE: the two must be the same model."""
    from experiments.lessons.c5_optimization.numbers import _trainer_config
    from experiments.train import model as M
    from experiments.train.runs import BASELINE
    config = json.loads((ROOT / "data" / "models" / "baseline" / "config.json").read_text(encoding="utf-8"))
    assert _trainer_config(M, config) == M.ModelConfig.from_hf(BASELINE) == M.ModelConfig.from_hf(config)


def test_c5_cited_figures_are_in_citations_json():
    """Every cited figure the lesson prints is a data/citations.json entry (cited.*), none kept in the package."""
    import re
    cited = json.loads((ROOT / "data" / "citations.json").read_text(encoding="utf-8"))
    text = (ROOT / "lessons" / "c5-optimization" / "lesson.md").read_text(encoding="utf-8")
    used = set(re.findall(r"cited\.(\w+)", text))
    assert {"llm_adam_b1", "llm_adam_b2", "torch_adamw_b2", "llm_weight_decay", "llm_grad_clip",
            "muon_update_rms"} <= used <= set(cited)
    assert "c5.cited_" not in text
    for name in ("deepseek_lr_base", "deepseek_lr_exponent", "deepseek_batch_base", "deepseek_batch_exponent",
                 "muon_ns_steps"):
        assert name in cited and cited[name]["source_zh"]


def test_c4s_tracker_links_the_stages_c5_and_c6_teach(repo_site):
    """C4's tracker lists the training stages left for later with links to the lessons that teach them."""
    from experiments.lessons.c4_transformer_block.widgets import later_links
    course = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
    links = {x["chapter"]: x for x in later_links(course["tracker"], course)}
    assert links["C5"]["href"] == "c5-optimization.html" and links["C6"]["href"] == "c6-model-size.html"
    assert "训练" in links["C5"]["title"] and "token" in links["C6"]["title"]
    html = (repo_site.out / "c4-transformer-block.html").read_text(encoding="utf-8")
    later = html[html.index('class="tracker-later"'):].split("</p>", 1)[0]
    assert 'href="c5-optimization.html"' in later and 'href="c6-model-size.html"' in later


def test_the_live_model_speaks():
    """Lesson C2's hook: the live run continues the prompt at the step it has reached, from noise at step 0."""
    sid = C5.train_start(TEXT, "adamw", 0, 0)["session"]
    x = C5.train_speak(sid)
    assert x["step"] == 0 and x["line"].startswith("第 0 步：" + C5.SPEAK_PROMPT)
    C5.train_step(sid, 2)
    y = C5.train_speak(sid)
    assert y["step"] == 2 and len(y["line"]) == len(x["line"])
    assert C5.live_view({"optimizer": "adamw", "multiplier": 0}, DATA)["speak_every"] == C5.SPEAK_EVERY
