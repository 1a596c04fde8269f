"""Lesson C2 in CPython: the generation functions' properties on the course trainer's stored speaker model, the
lesson's numbers recomputed independently, the widget's bad-input handling and the live run's entry points.

Generation (experiments/train/generate.py): temperature -> 0 equals greedy; greedy equals the argmax of one full
forward pass at every step; top-p keeps the smallest set whose mass reaches p; a fixed seed reproduces the output;
over many draws the empirical frequencies match softmax(logits / T) by a chi-square test that the same draws fail
against a 25% wrong temperature."""
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

from experiments.lessons.c2_next_token import numbers as N
from experiments.lessons.c2_next_token import widgets as C2
from experiments.toolkit import speak as S
from experiments.train import generate as G
from experiments.train import model as M
from experiments.train.data import CharTokenizer, course_ids
from experiments.train.runs_speaker import PROMPTS, SAMPLE_TOKENS
from experiments.widget import WidgetData

ROOT = Path(__file__).resolve().parents[2]
DOC = json.loads((ROOT / "data" / "train_speaker.json").read_text(encoding="utf-8"))
TEXT = (ROOT / "data" / "texts" / "sishu.txt").read_text(encoding="utf-8")
PARAMS = G.unpack_params(DOC["model"])
CFG = M.ModelConfig(**DOC["spec"]["model"])
TOK = CharTokenizer(DOC["chars"])
CTX = DOC["context"]


def ids(text):
    return [int(i) for i in TOK.encode(text)]


# -- generation -------------------------------------------------------------------------------------------------------
def test_temperature_to_zero_equals_greedy():
    greedy = G.generate(PARAMS, CFG, ids("子曰：“"), 25, temperature=0)
    for t in (1e-3, 1e-6):
        for seed in (0, 7):
            assert G.generate(PARAMS, CFG, ids("子曰：“"), 25, temperature=t, seed=seed) == greedy


def test_greedy_is_the_argmax_of_a_full_forward_pass_at_every_step():
    prompt = ids("学而")
    out = G.generate(PARAMS, CFG, prompt, 30, temperature=0, context=CTX)
    seq = prompt + out
    assert len(seq) <= CTX                      # one window: the full pass sees what each step saw
    logits, _, _ = M.forward(PARAMS, np.array(seq[:-1])[None, :], CFG, keep=False)
    argmax = np.argmax(logits, axis=-1)
    assert [int(a) for a in argmax[len(prompt) - 1:]] == out


def test_top_p_keeps_the_smallest_set_reaching_p():
    rng = np.random.default_rng(3)
    for _ in range(200):
        V = int(rng.integers(2, 40))
        probs = rng.dirichlet(np.full(V, 0.3))
        p = float(rng.uniform(0.05, 1.0))
        keep = G.top_p_keep(probs, p)
        mass = probs[keep].sum()
        assert mass >= p - 1e-12
        assert mass - probs[keep].min() < p               # one fewer (the least probable kept) would fall short
        assert probs[keep].min() >= probs[np.setdiff1d(np.arange(V), keep)].max(initial=0)   # the most probable
    z = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert sorted(G.top_p_keep(G.softmax(z), 0.8).tolist()) == [0, 1]
    assert sorted(G.top_p_keep(G.softmax(z), 0.81).tolist()) == [0, 1, 2]
    d = G.next_distribution(z, 1.0, top_p=0.8)
    assert d[2:].sum() == 0 and d.sum() == pytest.approx(1) and d[0] / d[1] == pytest.approx(5 / 3)


def test_top_k_keeps_the_k_largest():
    z = np.array([0.1, 2.0, -1.0, 1.5, 0.0])
    d = G.next_distribution(z, 1.0, top_k=2)
    assert set(np.nonzero(d)[0]) == {1, 3} and d.sum() == pytest.approx(1)
    assert d[1] / d[3] == pytest.approx(math.exp(0.5))


def test_a_fixed_seed_reproduces_the_output():
    a = G.generate(PARAMS, CFG, ids("君子"), 30, temperature=1.0, top_p=0.95, seed=42)
    assert G.generate(PARAMS, CFG, ids("君子"), 30, temperature=1.0, top_p=0.95, seed=42) == a
    assert G.generate(PARAMS, CFG, ids("君子"), 30, temperature=1.0, top_p=0.95, seed=43) != a
    # one rng.random() per token, drawn by the inverse CDF
    first = G.draw(G.next_distribution(G.last_logits(PARAMS, CFG, ids("君子"), CTX), 1.0, 0, 0.95),
                   np.random.default_rng(42).random())
    assert a[0] == first


def _chi2(counts, expected):
    """Pearson's statistic over bins with expected >= 5 (the rest pooled into one bin) and its degrees of freedom."""
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return float(np.sum((obs - exp) ** 2 / exp)), len(obs) - 1


def test_sampled_frequencies_match_softmax_over_temperature():
    from scipy.stats import chi2
    logits = G.last_logits(PARAMS, CFG, ids("子曰：“"), CTX)
    T, n = 0.8, 20000
    rng = np.random.default_rng(0)
    probs = G.next_distribution(logits, T)
    draws = [G.draw(probs, rng.random()) for _ in range(n)]
    counts = np.bincount(draws, minlength=len(logits)).astype(float)
    stat, df = _chi2(counts, n * G.softmax(logits / T))
    assert df > 20 and stat < chi2.ppf(0.999, df), (stat, df)
    wrong, df_w = _chi2(counts, n * G.softmax(logits / (T * 1.25)))
    assert wrong > chi2.ppf(0.999, df_w), (wrong, df_w)     # the test can tell a wrong temperature


# -- the stored speaker and the lesson's numbers -----------------------------------------------------------------------
def test_stored_samples_are_what_the_stored_weights_say():
    for prompt in PROMPTS:
        out = G.generate(PARAMS, CFG, ids(prompt), SAMPLE_TOKENS, temperature=0, context=CTX)
        assert TOK.decode(out) == DOC["samples"][prompt]


def test_stored_model_is_made_from_the_current_inputs():
    from experiments.train import runs as R
    assert DOC["inputs_sha256"] == R.inputs_hash(ROOT, "speaker"), (
        "data/train_speaker.json is stale: run `python -m experiments.train.runs --group speaker`")


def test_stored_model_is_small_and_its_vocabulary_is_the_texts():
    tok, _, _ = course_ids(TEXT)
    assert tok.chars == DOC["chars"] and CFG.vocab_size == tok.vocab_size
    assert (ROOT / "data" / "train_speaker.json").stat().st_size < 300_000


def _numbers():
    from experiments.course_numbers import generic_numbers, register_shared
    from sitegen.models import load_models
    data = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "data").glob("*.json")}
    reg, per_model = generic_numbers(load_models(ROOT / "data" / "models"), data["course"],
                                     data.get("reference_counts"), data.get("citations"), True)
    register_shared(reg, per_model)
    N.register(reg, per_model, data["course"], data=data)
    return {k: float(v.value) for k, v in reg.numbers.items() if k.startswith("c2.")}, per_model


@pytest.fixture(scope="module")
def numbers():
    return _numbers()[0]


def test_initial_loss_is_ln_v_measured_again(numbers):
    """The trainer's first-batch loss at initialisation, recomputed here for one seed, against ln V."""
    from experiments.train.runs_speaker import speaker_spec
    from experiments.train.trainer import Trainer
    tok, train_ids, _ = course_ids(TEXT)
    loss = Trainer(speaker_spec(tok.vocab_size), train_ids).step(detail=False)["loss"]
    assert loss == pytest.approx(DOC["init_loss"]["loss"][0], abs=1e-4)
    assert numbers["c2.ln_v"] == pytest.approx(math.log(len(set(TEXT))))
    assert abs(numbers["c2.init_loss"] - numbers["c2.ln_v"]) < 0.02
    assert numbers["c2.init_ppl"] == pytest.approx(math.exp(numbers["c2.init_loss"]))
    assert numbers["c2.held_bpc"] == pytest.approx(DOC["held_out_loss"] / math.log(2))


def test_cross_entropy_gradient_is_softmax_minus_one_hot():
    """On random logits, independently of numbers.measure: the analytic gradient against central differences,
    and against the trainer's backward pass through loss_and_grads's dlogits (via a one-layer check)."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=50) * 3
    t = 17
    p = np.exp(z - z.max())
    p /= p.sum()
    g = p.copy()
    g[t] -= 1
    h = 1e-6
    fd = np.array([(M.cross_entropy((z + h * e)[None], np.array([t]))[0]
                    - M.cross_entropy((z - h * e)[None], np.array([t]))[0]) / (2 * h) for e in np.eye(50)])
    assert np.max(np.abs(fd - g)) < 1e-7
    assert abs(g.sum()) < 1e-12


def test_stage_numbers(numbers):
    assert numbers["c2.grad_fd_err"] < 1e-8 and numbers["c2.grad_sum"] < 1e-12
    assert numbers["c2.onehot_err"] == 0
    assert -1 < numbers["c2.grad_target"] < 0
    assert numbers["c2.nucleus_ziyue"] < numbers["c2.nucleus_junzi"]
    assert numbers["c2.gemma2_cap"] == 30 and numbers["c2.palm_z"] == pytest.approx(1e-4)


def test_tied_and_untied_heads_from_the_configs(numbers):
    for alias, model_id in (("gpt2", "gpt2"), ("llama7b", "llama-2-7b"), ("qwen3_8b", "qwen3-8b"),
                            ("anchor", "qwen3.8-27b"), ("gemma_2_9b", "gemma-2-9b")):
        cfg = json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))
        tied = cfg.get("tie_word_embeddings", True)        # the transformers default of these families
        assert numbers[f"c2.{alias}_tied"] == int(tied), alias
    # Llama 2 7B: two V x d matrices of 32000 x 4096 out of 6,738,415,616 parameters
    assert numbers["c2.llama7b_vocab_share"] == pytest.approx(2 * 32000 * 4096 / 6_738_415_616)
    # GPT-2: one 50257 x 768 matrix (the head is the embedding) and the 1024 x 768 position table, of 124,439,808
    assert numbers["c2.gpt2_vocab_share"] == pytest.approx((50257 + 1024) * 768 / 124_439_808)


# -- the widget: bad input, the first state, the live run --------------------------------------------------------------
def notes(x):
    return " ".join(n["text"] for n in x["notes"])


def test_bad_input_is_said_in_chinese_or_clamped():
    with pytest.raises(ValueError, match="开头是空的"):
        C2.speak("", 1, 0, 1, 0, DOC)
    with pytest.raises(ValueError, match="开头是空的"):
        C2.speak("abc", 1, 0, 1, 0, DOC)
    x = C2.speak("子曰abc", 1, 0, 1, 0, DOC)
    assert x["prompt"] == "子曰" and "「a」" in notes(x)
    x = C2.speak("子曰", -3, -5, 7, 0, DOC)
    assert x["settings"] == {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "seed": 0}
    assert "温度不能为负" in notes(x) and "top-k 不能为负" in notes(x) and "top-p 应在 0 到 1 之间" in notes(x)
    x = C2.speak("子曰", 1e9, 10 ** 9, "abc", 0, DOC)
    assert x["settings"]["temperature"] == G.TEMPERATURE_MAX and x["settings"]["top_k"] == 0
    assert "top-p 应为一个数" in notes(x)
    x = C2.speak("子曰", "nan", "2.5", 0, 0, DOC)
    assert x["settings"]["temperature"] == 1.0 and x["settings"]["top_k"] == 2
    t0 = time.perf_counter()
    x = C2.speak("子曰：“学而时习之。”" * 20000, 1, 0, 1, 0, DOC)
    assert time.perf_counter() - t0 < 20
    assert f"只读最后 {CTX} 个" in notes(x) and len(x["text"]) == C2.N_NEW


def test_top_p_zero_and_temperature_zero_keep_one_candidate():
    for args in ((0, 0, 1), (1, 0, 0), (1, 1, 1)):
        x = C2.speak("君子", *args, 0, DOC)
        assert x["candidates"] == "1 个字" and len(x["chart"]["labels"]) == 1


def test_temperature_changes_the_distribution():
    cold, hot = C2.speak("君子", "0.5", "0", "1", "0", DOC), C2.speak("君子", "2", "0", "1", "0", DOC)
    assert cold["chart"]["values"][0] > hot["chart"]["values"][0]
    assert cold["chart"]["labels"][0] == hot["chart"]["labels"][0]


def test_first_state_is_the_built_answer():
    data = WidgetData({}, {"train_speaker": DOC})
    from experiments.lessons.c2_next_token import LESSON
    opts = LESSON.widgets[0].defaults
    view = C2.speak_view(dict(opts), data)
    (name, args), = C2.speak_states(dict(opts), data)
    args = [DOC if a == C2.SPEAKER else a for a in args]
    assert name == "c2_speak" and C2.speak(*args) == view["x"]
    assert view["x"]["notes"] == [] and len(view["x"]["text"]) == C2.N_NEW


def test_live_run_trains_and_speaks():
    sid = C2.train_start(TEXT, 0)["session"]
    first = C2.train_step(sid, 3)["steps"]
    assert [s["step"] for s in first] == [1, 2, 3]
    assert abs(first[0]["loss"] - math.log(CFG.vocab_size)) < 0.05
    x = C2.train_speak(sid, "子曰", 0.8, 0, 0.9, 1)
    assert x["step"] == 3 and len(x["text"]) == C2.N_NEW and "第 3 步" in x["who"]
    C2.train_start(TEXT, 0)
    with pytest.raises(ValueError, match="重置"):
        C2.train_step(sid, 1)


def test_shown_characters():
    assert S.show("\n") == "↵" and S.show("子") == "子"


def test_every_models_head_in_the_table():
    from experiments.widget import WidgetData
    _, per_model = _numbers()
    view = C2.heads_view({}, WidgetData(per_model, {}))
    rows = {r["name"]: r for r in view["rows"]}
    assert view["count"] == len(per_model) == len(rows)
    llama = rows[per_model["llama7b"].name]
    assert llama["ln_v"] == f"{math.log(32000):.2f}" and llama["tied"] == "否"
    assert llama["params"] == f"{2 * 32000 * 4096:,}"
    assert llama["saving"] == f"{100 * 32000 * 4096 / 6_738_415_616:.1f}%"
    gemma = rows[per_model["gemma_2_9b"].name]
    assert gemma["tied"] == "是" and gemma["saving"] == "—"
    assert view["tied"] == sum(bool(mn.arch.tied_embeddings) for mn in per_model.values())
