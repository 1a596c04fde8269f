"""Exercises graded in the page (issue #48), in CPython with the grader the page runs (experiments/exercise.py):
for every exercise a lesson declares, its solution and the course's own reference pass all its cases, and
deliberately wrong answers (an off-by-one, a missing term ...) fail with the feedback that says what differs; bad
input (a syntax error, another name or other parameters, an exception, a wrong type, a huge answer) is one
problem naming what was expected; the cases hold one the page shows and one drawn by the seed; every feedback key
the grader returns is worded in data/messages_zh.json."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import lessons
from experiments.exercise import MAX_MEMORY, grade, make_cases
from sitegen.models import load_models

ROOT = Path(__file__).resolve().parent.parent

# Wrong answers per exercise: (what is wrong, (text in the solution, its wrong replacement), the feedback key).
WRONG = {
    "c5-adamw-step": [
        ("the bias correction off by one step", ("beta1 ** t", "beta1 ** (t + 1)"), "arrays"),
        ("no bias correction of v", ("v / (1 - beta2 ** t)", "v"), "arrays"),
        ("the decay missing", (" - lr * weight_decay * p", ""), "arrays"),
        ("the decay through the gradient (Adam's L2)",
         ("m = beta1 * m + (1 - beta1) * g ", "g = g + weight_decay * p\n    m = beta1 * m + (1 - beta1) * g "),
         "arrays"),
    ],
    "c9-zero-bytes": [
        ("stage 2 shards no gradient", ("math.ceil((2 + K) * params / dp)", "math.ceil(K * params / dp)"), "number"),
        ("stage 1 taken for stage 2 (off by one stage)",
         ("return 4 * params + math.ceil(K * params / dp)", "return 2 * params + math.ceil((2 + K) * params / dp)"),
         "number"),
        ("the master copy missing (K = 8)", ("K = 12", "K = 8"), "number"),
    ],
    "c4-classic-estimate": [
        ("the embedding missing", (" + V * d", ""), "number"),
        ("one layer short", ("12 * L", "12 * (L - 1)"), "number"),
        ("8·d² per layer (the FFN only)", ("12 * L", "8 * L"), "number"),
    ],
    "c11-active-params": [
        ("two matrices per expert (no gate)", ("3 * hidden", "2 * hidden"), "number"),
        ("one routed expert too many idle", ("(experts - top_k)", "(experts - top_k + 1)"), "number"),
    ],
    "c2-top-p": [
        ("the temperature multiplied: at T = 0.5 the nucleus keeps a token the course's does not",
         ("/ temperature", "* temperature"), "impossible"),
        ("the nucleus one token short: the counts fail the chi-square",
         ("top_p * (1 - 1e-12))) + 1", "top_p * (1 - 1e-12)))"), "distribution"),
    ],
    "c3-gqa": [
        ("no causal mask", ("scores[:, np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf", "pass"), "arrays"),
        ("query heads paired with KV heads in turn (tile) instead of in groups",
         ("np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)",
          "np.tile(k, (group, 1, 1)), np.tile(v, (group, 1, 1))"), "arrays"),
        ("not scaled by sqrt(d)", (" / np.sqrt(d)", ""), "arrays"),
    ],
    "c4ffn-swiglu-count": [
        ("two matrices (no gate)", ("3 * hidden", "2 * hidden"), "number"),
        ("one layer short", ("n_layers * per_layer", "(n_layers - 1) * per_layer"), "number"),
    ],
    "c6-chinchilla-optimum": [
        ("the exponents swapped", ("a = beta / (alpha + beta)", "a = alpha / (alpha + beta)"), "arrays"),
        ("D without the 6", ("D = C / (6 * N)", "D = C / N"), "arrays"),
    ],
    "c8-z-loss": [
        ("log Z not squared", ("np.mean(log_z ** 2)", "np.mean(log_z)"), "number"),
        ("the cross-entropy missing", ("cross_entropy + ", ""), "number"),
    ],
    "c1-bpe-merge": [
        ("the tie rule reversed (larger ids first)",
         ("min(pairs, key=lambda p: (-pairs[p], p))", "max(pairs, key=lambda p: (pairs[p], p))"), "sequence"),
        ("pairs counted once per distinct piece (its count ignored)",
         ("pairs.get(pair, 0) + n", "pairs.get(pair, 0) + 1"), "sequence"),
        ("a merged pair's right token kept (one step on, not two)",
         ("                i += 2\n", "                i += 1\n"), "sequence"),
    ],
    "c10-ring-bytes": [
        ("the all-gather missing (only the reduce-scatter)", ("rounds = 2 * (k - 1)", "rounds = k - 1"), "number"),
        ("k rounds each way (off by one)", ("rounds = 2 * (k - 1)", "rounds = 2 * k"), "number"),
        ("the whole buffer sent every round", ("chunk = size_bytes / k ", "chunk = size_bytes "), "number"),
    ],
    "c14-step-time": [
        ("the two times added instead of the larger", ("max(memory_time, compute_time)", "memory_time + compute_time"),
         "number"),
        ("the weights read once per sequence", ("read = weight_bytes + batch * kv_bytes_per_seq",
                                                "read = batch * (weight_bytes + kv_bytes_per_seq)"), "number"),
        ("one KV cache for the whole batch", ("batch * kv_bytes_per_seq ", "kv_bytes_per_seq "), "number"),
        ("bandwidth only (compute-bound steps wrong)", ("max(memory_time, compute_time)", "memory_time"), "number"),
    ],
    "c15-kv-bytes": [
        ("only K (no V)", ("2 * n_kv_heads", "n_kv_heads"), "number"),
        ("one layer short", ("n_layers * per_token", "(n_layers - 1) * per_token"), "number"),
    ],
}


def exercises() -> dict:
    """name -> the exercise's spec and solution, from every lesson's declaration."""
    found = {}
    for name, w in lessons.course(ROOT).widgets().items():
        if w.template == "exercise.html":
            found[name] = {"spec": w.defaults["spec"], "solution": w.defaults["solution"]}
    return found


EXERCISES = exercises()


@pytest.fixture(scope="module")
def models() -> dict:
    """The page's data/models.json shape: key -> {id, name, config} (the grader reads ids, names, configs)."""
    return {i: {"id": i, "name": d["meta"]["name"], "config": d["config"]}
            for i, d in load_models(ROOT / "data" / "models").items()}


def test_there_are_exercises_and_each_has_wrong_answers():
    assert EXERCISES, "no lesson declares an exercise"
    assert sorted(set(EXERCISES) - set(WRONG)) == [], "an exercise without deliberately wrong answers"
    assert all(len(WRONG[name]) >= 2 for name in EXERCISES)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_solution_and_the_reference_pass(name, models):
    ex = EXERCISES[name]
    spec = ex["spec"]
    for seed in (0, 1, 12345):
        got = grade(spec, ex["solution"], models, seed)
        assert got["status"] == "solved", got
        assert got["passed"] == got["total"] >= 3
    if spec["compare"] != "distribution" and all(c.ref_args is None for c in make_cases(spec, models, 7)):
        # the reference takes the learner's arguments: as the learner's function, it passes too
        module, fn = spec["reference"].split(":")
        reference = f"from {module} import {fn} as _ref\n\ndef {spec['function']}({', '.join(spec['params'])}):\n" \
                    f"    return _ref({', '.join(spec['params'])})\n"
        assert grade(spec, reference, models, 7)["status"] == "solved"


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_cases_show_one_and_draw_one_by_the_seed(name, models):
    spec = EXERCISES[name]["spec"]
    a, b = make_cases(spec, models, 1), make_cases(spec, models, 2)
    assert any(c.shown for c in a) and not all(c.shown for c in a)
    assert [c.label for c in a if c.shown] == [c.label for c in b if c.shown]
    assert [c.label for c in a] != [c.label for c in b], "the seed draws nothing new"


@pytest.mark.parametrize("name,what,change,key",
                         [(n, w, c, k) for n, items in sorted(WRONG.items()) if n in EXERCISES for w, c, k in items])
def test_a_wrong_answer_fails_saying_what_differs(name, what, change, key, models):
    ex = EXERCISES[name]
    old, new = change
    assert old in ex["solution"], what
    got = grade(ex["spec"], ex["solution"].replace(old, new, 1), models, 3)
    assert got["status"] == "wrong" and got["key"] == key, (what, got)
    values = got["values"]
    assert values["case"], (what, values)
    if "expected" in values:
        assert values["expected"] != values["got"], (what, values)
    if key == "arrays":   # shape and the largest difference, above the stated tolerance
        assert values["shape"] and float(values["largest"]) > float(values["tolerance"])


BAD = [
    ("", "empty"),
    ("def f(:\n  pass", "syntax"),
    ("def something_else(x):\n    return 1", "missing"),
    ("def {fn}(x):\n    return 1", "signature"),
    ("def {fn}({params}):\n    return 1 / 0", "raised"),
    ("def {fn}({params}):\n    return 'text'", "type"),
    ("def {fn}({params}):\n    return [0.0] * 2_000_000", "too_big"),
    ("def {fn}({params}):\n    return {fn}({params})", "recursion"),
    ("raise ValueError('at import')", "raised_top"),
]


@pytest.mark.parametrize("name", sorted(EXERCISES))
@pytest.mark.parametrize("source,key", BAD)
def test_bad_input_is_one_problem_naming_what_was_expected(name, source, key, models):
    spec = EXERCISES[name]["spec"]
    src = source.replace("{fn}", spec["function"]).replace("{params}", ", ".join(spec["params"]))
    if key == "too_big" and spec["compare"] == "distribution":
        key = "type"      # a sampler returns one token id: a list is the wrong type before it is too big
    got = grade(spec, src, models, 0)
    assert got["status"] == "bad" and got["key"] == key, got
    if key in ("empty", "syntax", "missing", "signature"):
        assert got["values"]["expected"] == f"def {spec['function']}({', '.join(spec['params'])})"


ALLOCATING = [   # code that allocates without end: in the function, with numpy, at the module's top level
    "def {fn}({params}):\n    x = []\n    while True:\n        x.append([0] * 10000)\n",
    pytest.param("import numpy as np\n\ndef {fn}({params}):\n    return [np.ones(10**6) for _ in range(10**6)]\n",
                 marks=pytest.mark.slow),   # (fills all of the 256 MB with numpy arrays: seconds, a load test)
    "x = []\nwhile True:\n    x.append(bytearray(10**6))\n",
]


@pytest.mark.parametrize("source", ALLOCATING)
def test_code_that_allocates_without_end_is_stopped_naming_the_limit(source, models):
    """The memory bound (experiments.exercise._memory_bound): stopped as one "memory" problem naming the limit, long
    before the machine's memory runs out; the next grade in the same process is solved."""
    ex = EXERCISES["c10-ring-bytes"]
    spec = ex["spec"]
    src = source.replace("{fn}", spec["function"]).replace("{params}", ", ".join(spec["params"]))
    got = grade(spec, src, models, 0)
    assert got["status"] == "bad" and got["key"] == "memory", got
    assert got["values"]["limit"] == f"{MAX_MEMORY // 2**20} MB"
    assert grade(spec, ex["solution"], models, 0)["status"] == "solved"


def test_every_feedback_key_is_worded_in_the_message_table():
    table = json.loads((ROOT / "data" / "messages_zh.json").read_text(encoding="utf-8"))
    keys = {"solved", "number", "ledger", "ledger_missing", "ledger_extra", "shape", "arrays", "type", "empty",
            "syntax", "missing", "signature", "raised", "raised_top", "recursion", "memory", "too_big",
            "impossible", "distribution", "range", "sequence", "sequences_count"}
    source = (ROOT / "experiments" / "exercise.py").read_text(encoding="utf-8")
    assert all(f'"{k}"' in source for k in keys)
    assert sorted(k for k in keys if f"exercise.{k}" not in table) == []
