"""Lesson C14's calculators and numbers, in CPython: the serving widget's answer against the toolkit and against
counts made here from Qwen3-8B's config keys; every control's bad input refused with one Chinese line (and the
work bounded); static against continuous batching and paging simulated again here, step by step from the
config's keys, for two models and devices; speculative sampling in the widget reproducible and consistent with its
own counts; the build's states covering each model, device, scheme, cache precision, context and gamma.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.format import fixed, gb, ms, n, pct, per_second, trim_decimal
from experiments.lessons.c14_inference import calc, numbers, widgets
from experiments.toolkit import devices as DV
from experiments.toolkit import serving as S
from experiments.train import speculative as SP

ROOT = Path(__file__).resolve().parents[2]


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


def doc(name: str) -> dict:
    return json.loads((ROOT / "data" / f"{name}.json").read_text(encoding="utf-8"))


def test_serve_against_counts_from_the_config():
    """Qwen3-8B on the H100 at batch 16, 4K: weights, the step's bytes and time, the sequences that fit and the
    paged example, each recounted from the config's keys and the datasheet's figures."""
    c = cfg("qwen3-8b")
    d, L, H, kvh, hd, ff, V = (c[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                              "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size"))
    matrices = L * (2 * d * H * hd + 2 * d * kvh * hd + 3 * d * ff) + V * d           # + untied lm_head
    other = V * d + L * (2 * d + 2 * hd) + d                                           # embedding, norms
    kv_token = 2 * L * kvh * hd * 2
    x = calc.serve(c, "80", "BF16", "BF16", "4096", "16", "1000")
    assert x["weights"] == gb((matrices + other) * 2)
    assert x["step"]["weight_read"] == gb(matrices * 2) and x["step"]["kv_read"] == gb(16 * 4096 * kv_token)
    t_mem = Fraction(matrices * 2 + 16 * 4096 * kv_token, 3_350 * 10**9)
    assert x["step"]["t_mem"] == ms(t_mem) and x["step"]["bound"] == "带宽"
    free = 81559 * 2**20 - (matrices + other) * 2
    assert x["room"] == n(free // (4096 * kv_token))
    assert x["paging"]["contiguous_seqs"] == n(free // (4096 * kv_token))
    assert x["paging"]["paged_seqs"] == n(free // (1008 * kv_token))
    assert [r["context"] for r in x["contexts"]] == ["4K", "32K", "128K"]
    assert x["contexts"][1]["bf16_seqs"] == n(free // (32768 * kv_token))
    assert x["contexts"][1]["fp8_seqs"] == n(free // (32768 * kv_token // 2))
    assert [r["batch"] for r in x["batches"]] == [n(b) for b in calc.BATCHES]
    assert x["moe"] == ""


def test_moe_and_a_model_too_big_for_one_card():
    x = calc.serve(cfg("qwen3-30b-a3b"), "80", "BF16", "BF16", "4096", "64", "1000")
    assert "MoE" in x["moe"] and "128 个专家" in x["moe"]
    y = calc.serve(cfg("deepseek-v3"), "80", "FP8", "FP8", "4096", "1", "1000")
    assert "放不下" in y["fit"] and y["room"] == "0"


def test_lesson_numbers_recounted(course_numbers):
    """The ridge batch from the datasheet figures, Qwen3-8B's KV bytes per token from its keys, and the dense
    crossover as the first batch past the ridge."""
    nums = course_numbers
    ridge = Fraction(989 * 10**12 * 2, 2 * 3_350 * 10**9)
    assert nums["c14.ridge"].value == ridge
    assert nums["c14.q8.crossover0"].value == math.ceil(ridge)
    c = cfg("qwen3-8b")
    assert nums["c14.q8.kv_kb"].value == Fraction(2 * c["num_hidden_layers"] * c["num_key_value_heads"]
                                                   * c["head_dim"] * 2, 1000)
    assert nums["c14.int4_bits"].value == Fraction(33, 8)
    spec = doc("train_speculative")
    g4 = next(r for r in spec["acceptance"] if r["gamma"] == 4)
    assert nums["c14.spec.g4.measured"].value == Fraction(g4["tokens"], g4["steps"])
    assert float(nums["c14.spec.g4.expected"].value) == pytest.approx(SP.expected_tokens(g4["alpha"], 4))
    assert float(nums["c14.mtp.expected_low"].value) == pytest.approx(1.85)


@pytest.mark.parametrize("args,phrase", [
    (("80", "BF16", "BF16", "4096", "abc", "10"), "批大小：需要一个整数"),
    (("80", "BF16", "BF16", "4096", "0", "10"), "批大小：需要 1 到 16,384"),
    (("80", "BF16", "BF16", "4096", "99999", "10"), "批大小：需要 1 到 16,384"),
    (("80", "BF16", "BF16", "4097000", "1", "10"), "上下文长度"),
    (("80", "BF16", "BF16", "4096", "1", "5000"), "实际用到的长度"),
    (("80", "BF16", "BF16", "4096", "1", ""), "实际用到的长度"),
    (("99", "BF16", "BF16", "4096", "1", "10"), "显卡"),
    (("80", "INT3", "BF16", "4096", "1", "10"), "权重精度"),
    (("80", "BF16", "INT4", "4096", "1", "10"), "KV cache 精度"),
    (("40", "FP8", "BF16", "4096", "1", "10"), "没有 FP8 张量核"),
])
def test_serve_refuses_bad_input_in_chinese(args, phrase):
    with pytest.raises(ValueError, match=phrase):
        calc.serve(cfg("qwen3-8b"), *args)


@pytest.mark.parametrize("text,phrase", [("", "config"), ("{bad", "第 1 行"), ('{"model_type": "llama"}', "缺少这个键"),
                                         ("[1, 2]", "config")])
def test_serve_refuses_a_bad_pasted_config(text, phrase):
    with pytest.raises(ValueError, match=phrase) as e:
        calc.serve(text)
    assert "Error" not in str(e.value)


def test_serve_reads_a_pasted_config_as_the_built_in_one():
    c = cfg("llama-2-7b")
    assert calc.serve(json.dumps(c), "141", "INT4", "FP8", "32768", "8", "3000") == \
        calc.serve(c, "141", "INT4", "FP8", "32768", "8", "3000")


def models():
    return doc("train_speaker"), doc("train_speculative")


def test_speculate_is_reproducible_and_counts_agree():
    sp, sd = models()
    x = calc.speculate("子曰：“", "4", "0", sp, sd)
    assert x == calc.speculate("子曰：“", 4, 0, sp, sd)
    new = sum(len(s["accepted"]) + len(s["own"]) for s in x["steps"])
    assert x["n_tokens"] == n(new) == n(sp["context"] - 4)
    assert x["n_steps"] == n(len(x["steps"])) and all(len(s["own"]) == 1 for s in x["steps"])
    assert x["per_step"] == f"{new / len(x['steps']):.2f}"
    assert abs(float(x["expected"]) - SP.expected_tokens(float(x["alpha"]), 4)) < 0.02   # (α shown rounded)
    other = calc.speculate("子曰：“", "4", "1", sp, sd)
    assert other["steps"] != x["steps"]


@pytest.mark.parametrize("args,phrase", [(("子曰", "0", "0"), "γ"), (("子曰", "9", "0"), "γ"),
                                         (("子曰", "x", "0"), "γ"),
                                         (("子曰", "2", "-1"), "随机种子"), (("", "2", "0"), "开头"),
                                         (("abc", "2", "0"), "开头")])
def test_speculate_refuses_bad_input_in_chinese(args, phrase):
    sp, sd = models()
    with pytest.raises(ValueError, match=phrase):
        calc.speculate(*args, sp, sd)


def test_speculate_bounds_the_prompt_and_names_dropped_characters():
    sp, sd = models()
    x = calc.speculate("子曰" * 40 + "Ω", "2", "0", sp, sd)
    notes = " ".join(t["text"] for t in x["notes"])
    assert "Ω" in notes and f"最后 {calc.MAX_PROMPT} 个字" in notes
    assert x["n_tokens"] == n(sp["context"] - calc.MAX_PROMPT)


def test_states_cover_the_enumerable_controls():
    from experiments.lessons.c14_inference import SERVE_DEFAULTS, SPEC_DEFAULTS
    from experiments.widget import model_ref

    aliases = ["qwen3_8b", "llama7b", "deepseek_v3"]

    class Data:
        def model(self, alias, key="model"):
            return alias, None

        def choices(self):
            return [(a, None) for a in aliases]

        def option_error(self, *a):
            return ValueError(a)

    states = widgets.serve_states(SERVE_DEFAULTS, Data())
    args = [a for _, a in states]
    assert {json.dumps(a[0]) for a in args} == {json.dumps(model_ref(m)) for m in aliases}
    assert {a[1] for a in args} == {k for k, d in DV.DEVICES.items() if d.bf16_flops}
    assert {a[2] for a in args} == set(S.SCHEMES) and {a[3] for a in args} == set(S.KV_BYTES)
    assert {a[4] for a in args} == {str(c) for c in calc.CONTEXT_CHOICES}
    assert all(isinstance(v, str) for a in args for v in a[1:])
    spec = widgets.speculate_states(SPEC_DEFAULTS, Data())
    assert [a[1] for _, a in spec] == [str(g) for g in range(1, SP.GAMMA_MAX + 1)]
    assert numbers.MODEL == SERVE_DEFAULTS["model"]


# ---- static against continuous batching, recounted here -----------------------------------------------------------

def dense_counts(c: dict) -> tuple[int, int, int, int]:
    """(matrix weights, other weights, KV bytes per cached token, score FLOPs per cached token) of a dense model with
    full attention in every layer, from its keys (untied output head, no biases, RMSNorm weights only)."""
    d, L, H, ff, V = (c[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                                     "vocab_size"))
    kvh = c.get("num_key_value_heads", H)
    hd = c.get("head_dim", d // H)
    qk_norm = 2 * hd if c.get("model_type") == "qwen3" else 0
    matrices = L * (2 * d * H * hd + 2 * d * kvh * hd + 3 * d * ff) + V * d
    other = V * d + L * (2 * d + qk_norm) + d
    return matrices, other, 2 * L * kvh * hd * 2, L * 4 * H * hd      # q·k and the weighted sum of v


def simulate(c: dict, dev, slots: int, requests, continuous: bool, budget=None) -> tuple[Fraction, int, int]:
    """(decode seconds, steps, busy slot-steps), written out step by step without the toolkit."""
    matrices, _, kv_token, score_token = dense_counts(c)
    peak = dev.bf16_flops
    seconds, steps, busy = Fraction(0), 0, 0
    waiting = list(requests)
    running = []                                       # [prompt, generated, output, reserved bytes]
    used = 0
    while waiting or running:
        if continuous or not running:
            while waiting and len(running) < slots:
                p, g = waiting[0]
                need = math.ceil((p + g) / 16) * 16 * kv_token if budget is not None else 0
                if used + need > (budget or 0) and budget is not None:
                    break
                waiting.pop(0)
                used += need
                running.append([p, 0, g, need])
        live = [s for s in running if s[1] < s[2]]
        cached = sum(s[0] + s[1] for s in live)
        t_mem = Fraction(matrices * 2 + cached * kv_token, dev.bandwidth)
        t_flop = Fraction(len(live) * 2 * matrices + cached * score_token, peak)
        seconds += max(t_mem, t_flop)
        steps += 1
        busy += len(live)
        for s in live:
            s[1] += 1
        if continuous:
            used -= sum(s[3] for s in running if s[1] == s[2])
            running = [s for s in running if s[1] < s[2]]
        elif all(s[1] == s[2] for s in running):
            running = []
    return seconds, steps, busy


@pytest.mark.parametrize("model_id,device,batch,seed", [("qwen3-8b", "80", "256", "0"),
                                                        ("llama-2-7b", "141", "256", "3")])
def test_batching_recounted_from_the_config(model_id, device, batch, seed):
    """Both ways of batching and paging, simulated here from the config's keys and the datasheet's figures, give the
    widget's figures: slots that fit, mean batch, idle share, tokens per second and the gains."""
    import random
    c, dev = cfg(model_id), DV.DEVICES[device]
    rng = random.Random(int(seed))
    reqs = [(rng.randint(1, 3072), rng.randint(1, 1024)) for _ in range(512)]
    matrices, other, kv_token, _ = dense_counts(c)
    free = dev.bytes - (matrices + other) * 2
    fit = free // (4096 * kv_token)
    slots = min(int(batch), fit)
    tokens = sum(g for _, g in reqs)
    runs = {"static": simulate(c, dev, slots, reqs, False), "continuous": simulate(c, dev, slots, reqs, True),
            "paged": simulate(c, dev, int(batch), reqs, True, budget=free)}
    x = calc.batching(c, device, batch, seed)
    assert x["fit"] == n(fit) and x["tokens"] == n(tokens) and x["requests"] == "512"
    for row, (way, (seconds, steps, busy)) in zip(x["ways"], runs.items()):
        width = slots if way != "paged" else int(batch)
        assert row["tps"] == per_second(tokens / seconds), way
        assert row["mean_batch"] == fixed(Fraction(busy, steps)), way
        assert row["seconds"] == fixed(seconds) + " 秒"
        if way != "paged":
            assert row["idle"] == pct(1 - Fraction(busy, steps * width)), way
    tps = {way: tokens / r[0] for way, r in runs.items()}
    assert x["gain"] == trim_decimal(round(tps["continuous"] / tps["static"], 2)) + "×"
    assert x["paged_gain"] == trim_decimal(round(tps["paged"] / tps["continuous"], 2)) + "×"
    # what the text says of it: static batching leaves slots idle, continuous batching fills them, and paging fits
    # more sequences than the contiguous slots
    assert runs["static"][2] < runs["continuous"][2] * runs["static"][1] / runs["continuous"][1]
    assert Fraction(runs["paged"][2], runs["paged"][1]) > fit


@pytest.mark.parametrize("args,phrase", [(("80", "4", "0"), "批大小上限"), (("80", "abc", "0"), "批大小上限"),
                                         (("80", "64", "-1"), "随机种子"), (("7", "64", "0"), "显卡")])
def test_batching_refuses_bad_input_in_chinese(args, phrase):
    with pytest.raises(ValueError, match=phrase):
        calc.batching(cfg("qwen3-8b"), *args)


def test_batching_refuses_a_model_with_no_room():
    with pytest.raises(ValueError, match="放不下"):
        calc.batching(cfg("deepseek-v3"), "141", "64", "0")
    with pytest.raises(ValueError, match="至少要 8 条"):
        calc.batching(cfg("llama-2-7b"), "24", "64", "0")


def test_batching_states_cover_the_other_devices():
    from experiments.lessons.c14_inference import BATCHING_DEFAULTS
    states = widgets.batching_states(BATCHING_DEFAULTS, None)
    assert {a[1] for _, a in states} | {BATCHING_DEFAULTS["device"]} == \
        {k for k, d in DV.DEVICES.items() if d.bf16_flops}
    assert all(a[2:] == [str(BATCHING_DEFAULTS["batch"]), str(BATCHING_DEFAULTS["seed"])] for _, a in states)
