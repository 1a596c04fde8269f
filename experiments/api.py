"""The browser's entry points into the experiments package (called by site/static/js/worker.js).

Contract (docs/architecture.md, "Browser"): the page asks for `experiments.api:NAME` with a list of args; the
worker calls `NAME(json.dumps(args))` and each function returns a JSON string. Keeping the boundary to one
string in, one string out means no Python objects cross into JavaScript and every function also runs, and is
tested, unchanged under CPython.

Ledgers come from experiments.ledger.ledger_of, cached by the config's canonical JSON (a small LRU), so a widget
that sends the same config on every slider tick pays for building the ledger once.
"""
from __future__ import annotations

import json
import sys


def ping(args_json: str) -> str:
    """Echo the args back with the interpreter's version: the worker's smoke test."""
    return json.dumps({"pong": json.loads(args_json), "python": sys.version})


# -- the lesson widgets' entry points: each takes JSON args, returns the same data the build rendered ----------
def _args(args_json: str) -> list:
    args = json.loads(args_json)
    if not isinstance(args, list):
        raise TypeError("args must be a JSON list")
    return args


def _ledger(config):
    from .ledger import ledger_of
    return ledger_of(config)


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def ledger_json(args_json: str) -> str:
    """[config] -> the ledger's --json payload (used to prove browser == CPython on every config)."""
    (config,) = _args(args_json)
    return json.dumps(_ledger(config).to_json())


def views_of(ledger, name: str = "") -> dict:
    """The three ledgers and the crossover of one model, as the widgets show them."""
    from .widgets_data import crossover_series, ledger_layer, ledger_total
    return {"model_type": ledger.arch.family, "total": f"{ledger.total:,}",
            "ledger_total": ledger_total(ledger, name), "ledger_layer": ledger_layer(ledger),
            "crossover": crossover_series(ledger, name=name)}


def ledger_views(args_json: str) -> str:
    """[config, name?] -> the three ledgers and the crossover of one model (model pickers)."""
    config, name = (_args(args_json) + [""])[:2]
    return _dumps(views_of(_ledger(config), name or ""))


def total_view(args_json: str) -> str:
    """[config, name?] -> 总账 of one model (the ledger-total widget's model picker)."""
    from .widgets_data import ledger_total
    config, name = (_args(args_json) + [""])[:2]
    return _dumps(ledger_total(_ledger(config), name or ""))


def layer_view(args_json: str) -> str:
    """[config] -> 一层里 of one model (the ledger-layer widget's model picker)."""
    from .widgets_data import ledger_layer
    (config,) = _args(args_json)
    return _dumps(ledger_layer(_ledger(config)))


def ledger_compare(args_json: str) -> str:
    """[[[alias, name, config], ...]] -> the side-by-side ledger."""
    from .widgets_data import ledger_compare as compare
    (models,) = _args(args_json)
    return _dumps(compare([(alias, name, _ledger(cfg)) for alias, name, cfg in models]))


def _context_length(T) -> int:
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    return T


def crossover_at(args_json: str) -> str:
    """[config, T] -> FFN vs attention-score FLOPs at context length T."""
    from .widgets_data import crossover_at as at
    config, T = _args(args_json)
    return _dumps(at(_ledger(config), _context_length(T)))


def crossover_view(args_json: str) -> str:
    """[config, name?, T?] -> the crossover widget for one model: series, crossover, ratio at the native context,
    and the readout `at` for min(T, native context), or for the native context when T is null (so a model
    change costs one round trip)."""
    from .widgets_data import crossover_at as at, crossover_series
    config, name, T = _padded(args_json, 3)
    ledger = _ledger(config)
    view = crossover_series(ledger, name=name or "")
    t_max = view["t_max_raw"]
    view["at"] = at(ledger, t_max if T is None else min(_context_length(T), t_max))
    return _dumps(view)


def tracker(args_json: str) -> str:
    """[config, tracker settings from data/course.json, reference counts?, course titles?] -> the data-flow
    tracker's stages (course titles: the stage titles of data/course.json, which describe the anchor model)."""
    from .widgets_data import tracker_stages
    config, settings, reference, titles = (_args(args_json) + [None, None, True])[:4]
    return _dumps(tracker_stages(_ledger(config), settings or {}, reference or {}, bool(titles)))


def baseline_forward(args_json: str) -> str:
    """[seed, tracker settings?] -> the numpy baseline's parameter count and each stage's output shape for the
    5-token example (display strings; with the settings also matched to the tracker's stages)."""
    from .baseline import CONFIG, summary
    from .widgets_data import baseline_view, tracker_stages
    seed, settings = (_args(args_json) + [0, None])[:2]
    s = summary(seed or 0)
    stages = tracker_stages(_ledger(CONFIG), settings, course_titles=False) if settings else None
    return _dumps({**baseline_view(s, stages), "summary": s})


def baseline_prepare(args_json: str) -> str:
    """[seed] -> initialise the baseline's weights now (cached), so baseline_forward only runs the forward pass."""
    from .baseline import count_params, initialised
    seed = (_args(args_json) + [0])[0]
    return _dumps({"params": count_params(initialised(seed or 0))})


def byo_views(args_json: str) -> str:
    """[config text, [[alias, name, config], ...]] -> {ok: true, the three ledgers (the pasted model side by side
    with the given ones) and the crossover} or {ok: false, title, problems} naming what is wrong."""
    from .errors import CourseError
    from .widgets_data import byo_error, ledger_compare as compare, parse_config_text
    text, others = (_args(args_json) + [[]])[:2]
    try:
        config = parse_config_text(text)
        ledger = _ledger(config)
    except CourseError as e:
        return _dumps(byo_error(e))
    except Exception as e:  # noqa: BLE001 - anything else a strange config triggers is still shown inline
        return _dumps(byo_error(e))
    views = views_of(ledger, "你的模型")
    views["compare"] = compare([(a, name, _ledger(cfg)) for a, name, cfg in others or []]
                               + [("byo", "你的模型", ledger)])
    views["numbers"] = _derivations(config, BYO_NUMBERS)
    return _dumps({"ok": True, **views})


BYO_NUMBERS = ("model.total", "model.ffn_share_total", "model.ffn_share_backbone", "model.crossover_T")


def derivations(config: dict, names=None) -> dict:
    """{name: {display, rows}} of a config's generic numbers (``model.total`` ...), with the derivation rows the
    build shows in its popovers (experiments.numbers.derivation_rows); site/static/js/derivation.js draws them."""
    from .course_numbers import model_numbers
    from .numbers import derivation_rows, format_number
    numbers = model_numbers(config)
    return {name: {"display": format_number(numbers[name]), "rows": derivation_rows(numbers[name])}
            for name in (names or numbers) if name in numbers}


def _derivations(config: dict, names) -> dict:
    """derivations(), or {} if they cannot be computed for this config (the ledgers are shown regardless)."""
    try:
        return derivations(config, names)
    except Exception:  # noqa: BLE001 - a popover is an extra; never fail the whole result for it
        return {}


def number_derivations(args_json: str) -> str:
    """[config, names] -> derivations(config, names)."""
    from .ledger import unwrap
    config, names = _args(args_json)
    return _dumps(derivations(unwrap(config), names))


# -- the FFN deep-read lesson (experiments.ffn): each returns the data the build rendered for the same inputs ----
def _ffn():
    from . import ffn
    return ffn


def _padded(args_json: str, n: int) -> list:
    args = _args(args_json)
    if len(args) > n:
        raise TypeError(f"expected at most {n} args, got {len(args)}")
    return args + [None] * (n - len(args))


def _given(value, default):
    return default if value is None else value


def ffn_swiglu_budget(args_json: str) -> str:
    """[d, ratio, matrices, align, known] -> the SwiGLU budget explorer (reference rows, alignment table)."""
    d, ratio, matrices, align, known = _padded(args_json, 5)
    return json.dumps(_ffn().swiglu_budget(_given(d, 4096), _given(ratio, "8/3"), _given(matrices, 3),
                                           _given(align, 256), known or []), ensure_ascii=False)


def ffn_config_family(args_json: str) -> str:
    """[ratio, align] -> the config generator table (layers x d_model -> d_ff, FFN share, total)."""
    ratio, align = _padded(args_json, 2)
    ffn = _ffn()
    return json.dumps(ffn.config_family(ffn.FAMILY, _given(ratio, "8/3"), _given(align, 256)), ensure_ascii=False)


def ffn_memory(args_json: str) -> str:
    """[config, dtype, bandwidth TB/s, batch, peak TFLOPS] -> weight memory and the decode-step bounds."""
    config, dtype, bw, batch, peak = _padded(args_json, 5)
    return json.dumps(_ffn().decode(config, _given(dtype, "BF16"), _given(bw, "3.35"), _given(batch, 1),
                                    _given(peak, "989.4")), ensure_ascii=False)


def ffn_batch_series(args_json: str) -> str:
    """[config, dtype, bandwidth TB/s, peak TFLOPS] -> the batch amortisation table."""
    config, dtype, bw, peak = _padded(args_json, 4)
    return json.dumps(_ffn().batch_series(config, _given(dtype, "BF16"), _given(bw, "3.35"), _given(peak, "989.4")),
                      ensure_ascii=False)


def ffn_training_memory(args_json: str) -> str:
    """[config, recipe, batch, seq, checkpointing] -> training memory by component."""
    config, recipe, batch, seq, ckpt = _padded(args_json, 5)
    return json.dumps(_ffn().training_memory(config, _given(recipe, "mixed_adamw"), _given(batch, 4),
                                             _given(seq, 4096), bool(ckpt)), ensure_ascii=False)


def ffn_flops(args_json: str) -> str:
    """[config, tokens (billions), sustained TFLOPS, GPUs, tokens per parameter] -> FLOPs and GPU-days."""
    config, tokens_b, tflops, gpus, ratio = _padded(args_json, 5)
    return json.dumps(_ffn().flops_budget(config, _given(tokens_b, "2000"), _given(tflops, "400"),
                                          _given(gpus, 1024), _given(ratio, "20")), ensure_ascii=False)


def ffn_moe(args_json: str) -> str:
    """[config, experts, top_k, expert width] -> total vs active parameters before and after the change."""
    config, experts, top_k, width = _padded(args_json, 4)
    return json.dumps(_ffn().moe_explore(config, experts, top_k, width), ensure_ascii=False)


def ffn_int4_probe(args_json: str) -> str:
    """[rows, cols, outlier %, outlier scale, seed] -> group-wise INT4 RMS errors (real numpy, fixed seed)."""
    ffn = _ffn()
    given = dict(zip(ffn.PROBE_DEFAULTS, _padded(args_json, 5)))
    return json.dumps(ffn.int4_probe(**{k: v for k, v in given.items() if v is not None}), ensure_ascii=False)
