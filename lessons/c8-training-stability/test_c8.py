"""Lesson C8 in CPython: the stored stability runs (data/train_stability.json) are made from the current inputs
and reproduce their first steps; each device's effect at the lesson's high learning rate, on the same seed, by a
stated factor; the lesson's numbers are the stored runs' figures; the devices table reads the configs; the live
entry points give the stored numbers and refuse bad input in Chinese; C4's evolution table links to the lesson."""
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from experiments.labels import tensor_label
from experiments.lessons.c4_transformer_block.widgets import chapter_links, link_chapter_mentions
from experiments.lessons.c8_training_stability import calc
from experiments.lessons.c8_training_stability import widgets as C8
from experiments.train import runs as R
from experiments.train import runs_stability as S
from experiments.train.data import course_ids
from experiments.train.trainer import RunSpec, Trainer
from experiments.widget import WidgetData

ROOT = Path(__file__).resolve().parents[2]
STORED = json.loads((ROOT / "data" / "train_stability.json").read_text(encoding="utf-8"))
TEXT = (ROOT / R.TEXT_FILE).read_text(encoding="utf-8")
OFF = {name: 0 for name, _ in S.TOGGLES}


def run(**on):
    return STORED["grid"][S.key({**OFF, **on})]


def test_stored_runs_are_made_from_the_current_inputs():
    assert STORED["inputs_sha256"] == R.inputs_hash(ROOT, "stability"), (
        "data/train_stability.json is stale: run `python -m experiments.train.runs --group stability`")
    assert len(STORED["grid"]) == 2 ** len(S.TOGGLES) and STORED["steps"] == S.STEPS


def test_the_command_skips_a_group_whose_inputs_did_not_change(capsys):
    out = ROOT / "data" / "train_stability.json"
    before = out.stat().st_mtime_ns
    assert R.main(["--root", str(ROOT), "--group", "stability"]) == 0
    assert "up to date" in capsys.readouterr().out and out.stat().st_mtime_ns == before


@pytest.mark.parametrize("on", [{}, {"qk_norm": 1, "qk_clip": 1},
                                {"post_ln": 1, "warmup": 1, "z_loss": 1, "softcap": 1}])
def test_stored_runs_reproduce_their_first_steps(on):
    stored = run(**on)
    _, train, _ = course_ids(TEXT)
    tr = Trainer(RunSpec.from_json(stored["spec"]), train)
    for i in range(3):
        d = tr.step(detail=False)
        assert d["loss"] == pytest.approx(stored["loss"][i], rel=1e-4)
        assert d["grad_norm"] == pytest.approx(stored["grad_norm"][i], rel=1e-3)
        assert d["max_attn_logit"] == pytest.approx(stored["max_attn_logit"][i], rel=1e-3)
        assert d["log_z_mean"] == pytest.approx(stored["log_z"][i], rel=1e-4)


def test_the_other_seeds_rerun_the_settings_on_their_own_seed():
    seeds = STORED["seeds"]
    assert seeds["seeds"] == list(S.OTHER_SEEDS) and 0 not in seeds["seeds"]
    assert set(seeds["runs"]) == {f"{seed}:{S.key({**OFF, **{t: 1 for t in on}})}"
                                  for seed in S.OTHER_SEEDS for on in S.SEED_SETTINGS}
    _, train, _ = course_ids(TEXT)
    seed = S.OTHER_SEEDS[-1]
    stored = seeds["runs"][f"{seed}:{S.key(OFF)}"]
    spec = replace(RunSpec.from_json(run()["spec"]), seed=seed)
    tr = Trainer(spec, train)
    for i in range(3):
        d = tr.step(detail=False)
        assert d["loss"] == pytest.approx(stored["loss"][i], rel=1e-4)
        assert d["grad_norm"] == pytest.approx(stored["grad_norm"][i], rel=1e-3)
    assert stored["loss"][:3] != run()["loss"][:3]                 # (another seed: other draws, other batches)


def test_the_seed_counts_are_counted_over_every_seed(numbers):
    def final_loss(seed, **on):
        r = run(**on) if seed == 0 else STORED["seeds"]["runs"][f"{seed}:{S.key({**OFF, **on})}"]
        return calc.final(r["loss"])
    every = [0, *S.OTHER_SEEDS]
    assert numbers["c8.seeds_n"].value == len(every)
    assert numbers["c8.postwarm_wins"].value == sum(
        final_loss(s, post_ln=1, warmup=1) < final_loss(s, post_ln=1) for s in every)
    assert numbers["c8.warm_loses"].value == sum(final_loss(s, warmup=1) > final_loss(s) for s in every)


# -- each device's effect on the same seed at the lesson's learning rate -------------------------------------------
def test_qk_norm_keeps_the_max_attention_logit_over_ten_times_lower():
    assert calc.peak(run()["max_attn_logit"]) > 10 * calc.peak(run(qk_norm=1)["max_attn_logit"])


def test_qk_clip_keeps_the_logit_near_tau_and_clips_only_then():
    r = run(qk_clip=1)
    assert r["qk_clipped_heads"] > 0 and run()["qk_clipped_heads"] == 0
    # rescaled after each step: a step's max can pass tau by one step's growth, not by half of tau
    assert calc.peak(r["max_attn_logit"]) < 1.5 * STORED["tau"] < calc.peak(run()["max_attn_logit"])


def test_softcap_bounds_the_attention_logit_by_its_cap():
    assert calc.peak(run(softcap=1)["max_attn_logit"]) < STORED["caps"][0] < calc.peak(run()["max_attn_logit"])


def test_z_loss_is_a_small_term_of_the_objective():
    """At PaLM's 1e-4 the term z (log Z)^2 is under 1% of the cross-entropy: over this short run it leaves log Z
    where it is (within 10%), as the lesson says."""
    r = run(z_loss=1)
    assert STORED["z_loss"] * calc.final(r["log_z"]) ** 2 < calc.final(r["loss"]) / 100
    assert abs(calc.final(r["log_z"]) / calc.final(run()["log_z"]) - 1) < 0.1


def test_xiong_scaling_at_initialisation():
    xi = STORED["xiong"]
    L = xi["depths"][-1]
    pre = xi["pre_none"][0][-1] / xi["pre_none"][-1][-1]
    post = xi["post_none"][-1][-1] / xi["post_none"][0][-1]
    assert math.sqrt(L) / 2 < pre < 2 * math.sqrt(L)          # Pre-LN's last layer: of the order of 1/sqrt(L)
    assert abs(post - 1) < 0.1                                 # Post-LN's: flat
    # the fitted exponent, recomputed here with numpy's polyfit (the lesson's comes from calc.depth_exponent)
    import numpy as np
    slope_pre = np.polyfit(np.log(xi["depths"]), np.log([row[-1] for row in xi["pre_none"]]), 1)[0]
    slope_post = np.polyfit(np.log(xi["depths"]), np.log([row[-1] for row in xi["post_none"]]), 1)[0]
    assert abs(slope_pre + 0.5) < 0.1 and abs(slope_post) < 0.05
    assert calc.depth_exponent(xi["depths"], [row[-1] for row in xi["pre_none"]]) == pytest.approx(slope_pre)
    assert [len(row) for row in xi["pre_gpt2"]] == xi["depths"]


# -- the lesson's numbers and widgets ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def numbers(course_numbers):
    return course_numbers


def test_numbers_are_the_stored_figures(numbers):
    assert float(numbers["c8.logit_off"].value) == calc.peak(run()["max_attn_logit"])
    assert float(numbers["c8.logit_qknorm"].value) == calc.peak(run(qk_norm=1)["max_attn_logit"])
    assert numbers["c8.runs"].value == 64 and numbers["c8.steps"].value == S.STEPS
    assert numbers["c8.qwen3_8b_qknorm_layer"].value == 2 * 128          # 2 x head_dim of Qwen3-8B's config
    assert (numbers["c8.gemma_2_9b_attn_cap"].value, numbers["c8.gemma_2_9b_final_cap"].value) == (50, 30)
    assert float(numbers["c8.base_std_out"].value) == pytest.approx(0.02 / math.sqrt(8))
    assert float(numbers["c8.resid_std_plain"].value) == pytest.approx(math.sqrt(129))


def test_the_opening_factor_is_c5s_stored_baseline_run(numbers):
    """C8 opens with how far C5's baseline (data/train_runs.json, warmup 30) let its max attention logit grow:
    recounted here from the stored series, not typed."""
    series = json.loads((ROOT / "data" / "train_runs.json").read_text(encoding="utf-8"))[
        "baseline"]["warmup30"]["max_attn_logit"]
    assert all(v is not None for v in series)
    assert float(numbers["c8.c5_logit_growth"].value) == pytest.approx(max(series) / series[0])
    text = (ROOT / "lessons" / "c8-training-stability" / "lesson.md").read_text(encoding="utf-8")
    assert "{x0}`c8.c5_logit_growth`" in text.split("## ①", 1)[0]


def test_break_fix_view_embeds_every_setting():
    view = C8.break_fix_view({**OFF}, WidgetData({}, {"train_stability": STORED}))
    assert set(view["tables"]) == set(STORED["grid"]) and view["key"] == view["off"]
    assert view["x"]["max_logit"] == C8.num_text(calc.peak(run()["max_attn_logit"]))
    with pytest.raises(Exception, match="qk_norm"):
        C8.break_fix_view({**OFF, "qk_norm": 2}, WidgetData({}, {"train_stability": STORED}))


def test_spike_tensors_rank_every_tensor_at_the_largest_norm_step():
    r = run()
    step, every = calc.spike_tensors(r, top=10**6)
    norms = r["spike"]["grad_norms"]
    assert step == 1 + max(range(len(r["grad_norm"])), key=lambda i: r["grad_norm"][i])
    assert len(every) == len(norms) and sum(share for _, _, share in every) == pytest.approx(1)
    assert [g for _, g, _ in every] == sorted(norms.values(), reverse=True)
    assert math.sqrt(sum(g * g for g in norms.values())) == pytest.approx(r["grad_norm"][step - 1], rel=1e-3)
    view = C8.break_fix_view({**OFF}, WidgetData({}, {"train_stability": STORED}))
    assert [t["tensor"] for t in view["x"]["spike_top"]] == [tensor_label(name) for name, _, _ in every[:5]]
    assert view["x"]["spike_top"][0]["share"] == f"{every[0][2] * 100:.1f}%"   # (which tensor leads is the data's)


def test_devices_table_reads_the_configs():
    from experiments.course_numbers import compute_course
    from tests.claim_inputs import load_inputs
    models, data = load_inputs(ROOT)
    _, per_model = compute_course(models, data.get("course"), data.get("reference_counts"), data.get("citations"),
                                  data)
    rows = {r["name"]: r for r in C8.devices_rows(sorted(per_model.items()))}
    assert rows["Gemma-2-9B"]["softcap"] == "注意力 50、输出 30" if "Gemma-2-9B" in rows else True
    qwen = [r for name, r in rows.items() if name.startswith("Qwen3-8B")]
    assert qwen and qwen[0]["qk_norm"] == "有，每层 256 个参数"
    llama = [r for name, r in rows.items() if "Llama-2-7B" in name or "Llama 2 7B" in name]
    assert all(r["qk_norm"] == "无" and r["softcap"] == "无" for r in llama)


def test_live_entry_points_give_the_stored_steps_and_refuse_bad_toggles():
    on = {**OFF, "qk_norm": 1}
    s = C8.train_start(TEXT, on, 0)
    assert s["key"] == S.key(on)
    got = C8.train_step(s["session"], 3)["steps"]
    assert [g["loss"] for g in got] == pytest.approx(run(qk_norm=1)["loss"][:3], rel=1e-4)
    with pytest.raises(ValueError, match="开关"):
        C8.train_start(TEXT, {"qk_norm": 1}, 0)
    with pytest.raises(ValueError, match="重置"):
        C8.train_step(s["session"] + 5, 1)


def test_c4_evolution_links_the_written_chapter():
    course = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
    evolution = json.loads((ROOT / "data" / "evolution.json").read_text(encoding="utf-8"))
    text = json.dumps(link_chapter_mentions(evolution, chapter_links(course)), ensure_ascii=False)
    assert text.count("[C8](c8-training-stability.html)") == 2
    planned = {**course, "chapters": [{**c, "status": "planned"} if c["id"] == "C8" else c
                                      for c in course["chapters"]]}
    assert "](c8-" not in json.dumps(link_chapter_mentions(evolution, chapter_links(planned)), ensure_ascii=False)
