"""FFN 精读's widgets at build time: each view computes a widget's first state with calc.py (the very functions the
browser calls as experiments.api:ffn_*) from the options a lesson gives (over the defaults in __init__.py), and
returns the values its template (templates/ffn_*.html) shows. script.js (this folder) makes the
same markup live.
"""
from __future__ import annotations

from fractions import Fraction

from ...widget import model_ref
from . import GPUS
from . import calc as ffn

RATIO_CHOICES = ("2", "8/3", "3", "3.5", "4", "16/3", "8")
ALIGN_CHOICES = (1, 64, 128, 256, 512, 1024)
DTYPE_CHOICES = ("FP32", "BF16", "FP16", "FP8", "INT8", "INT4")
BATCH_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
ROWS_CHOICES = (256, 512, 1024)
COLS_CHOICES = (16, 32, 64)


def _scalar(data, options: dict, key: str):
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise data.option_error(key, "a number or text", value)
    return value


def _config(mn) -> dict:
    return mn.doc["config"]


def gpus(data) -> list[dict]:
    """Bandwidth / peak presets, each from data/citations.json (<key>_bandwidth_tbps, <key>_bf16_tflops)."""
    out = []
    for key, name in GPUS.items():
        bw, peak = data.citations.get(f"{key}_bandwidth_tbps"), data.citations.get(f"{key}_bf16_tflops")
        if bw and peak:
            out.append({"key": key, "name": name, "bw": str(bw["value"]), "peak": str(peak["value"]),
                        "source": bw["source"]})
    return out


def known_widths(data) -> list[list]:
    """(name, d, d_ff) of every dense three-matrix model in data/, to mark real configs in the alignment table."""
    return [[mn.name, mn.arch.d_model, mn.arch.d_ff] for _, mn in data.choices()
            if mn.arch.ffn_matrices == 3 and not mn.arch.moe]


def swiglu_view(o: dict, data) -> dict:
    d, ratio, matrices, align = (_scalar(data, o, k) for k in ("d", "ratio", "matrices", "align"))
    known = known_widths(data)
    return {"b": ffn.swiglu_budget(d, str(ratio), matrices, align, known),
            "family": ffn.config_family(ffn.FAMILY, str(ratio), align), "known": known,
            "ratios": RATIO_CHOICES, "aligns": ALIGN_CHOICES}


def config_family_call(ratio, align) -> dict:
    """The config generator table (layers × d_model -> d_ff, FFN share, total) for the standard family."""
    return ffn.config_family(ffn.FAMILY, ratio, align)


def memory_view(o: dict, data) -> dict:
    if not isinstance(o["models"], list) or not o["models"]:
        raise data.option_error("models", "a list of model aliases", o["models"])
    table_models = [data.model(a, key="models")[1] for a in o["models"]]
    alias, mn = data.model(o["model"])
    presets = gpus(data)
    if not presets:
        raise data.option_error("gpu", "GPU bandwidth and peak figures in data/citations.json")
    gpu = next((g for g in presets if g["key"] == o["gpu"]), None)
    if gpu is None:
        raise data.option_error("gpu", "one of " + ", ".join(g["key"] for g in presets), o["gpu"])
    dtype, batch = str(_scalar(data, o, "dtype")), _scalar(data, o, "batch")
    pairs = [(m.name, _config(m)) for m in table_models]
    return {"alias": alias, "model": mn, "weights": ffn.weights_table(pairs),
            "decode": ffn.decode_table(pairs, gpu["bw"], gpu["peak"]),
            "calc": ffn.decode(_config(mn), dtype, gpu["bw"], batch, gpu["peak"]),
            "series": ffn.batch_series(_config(mn), dtype, gpu["bw"], gpu["peak"]), "gpus": presets, "gpu": gpu,
            "dtypes": DTYPE_CHOICES, "batches": BATCH_CHOICES, "choices": data.choices()}


def training_view(o: dict, data) -> dict:
    alias, mn = data.model(o["model"])
    recipe = str(_scalar(data, o, "recipe"))
    t = ffn.training_memory(_config(mn), recipe, _scalar(data, o, "batch"),
                            _scalar(data, o, "seq"), bool(o["checkpointing"]))
    return {"alias": alias, "model": mn, "t": t, "recipes": ffn.RECIPE_ZH, "choices": data.choices()}


def tokens_per_param(data) -> str:
    """Chinchilla's tokens per parameter, from the two cited figures."""
    c = data.citations
    if "chinchilla_tokens" in c and "chinchilla_params" in c:
        return ffn.ratio_text(Fraction(c["chinchilla_tokens"]["value"], c["chinchilla_params"]["value"]))
    raise data.option_error("tokens_per_param", "Chinchilla's cited figures in data/citations.json")


def flops_view(o: dict, data) -> dict:
    alias, mn = data.model(o["model"])
    tokens_b = str(_scalar(data, o, "tokens_b"))
    cited = data.citations.get("sustained_tflops")
    if o["tflops"] is None and not cited:
        raise data.option_error("tflops", "a sustained throughput, or sustained_tflops in data/citations.json")
    tflops = str(o["tflops"] if o["tflops"] is not None else cited["value"])
    gpus_n = _scalar(data, o, "gpus")
    chin = tokens_per_param(data)
    return {"alias": alias, "model": mn, "f": ffn.flops_budget(_config(mn), tokens_b, tflops, gpus_n, chin),
            "tokens_b": tokens_b, "tflops": tflops, "gpus": gpus_n, "chin": chin, "choices": data.choices()}


def moe_view(o: dict, data) -> dict:
    moe_models = [(a, mn) for a, mn in data.choices() if ffn.explorable(mn.ledger)]
    aliases = o["models"] or [a for a, _ in moe_models]
    table = ffn.moe_table([(mn.name, _config(mn)) for mn in (data.model(a, key="models")[1] for a in aliases)])
    alias, mn = data.model(o["model"])
    if not mn.arch.moe:
        raise data.option_error("model", "a mixture-of-experts model", alias)
    m = mn.arch.moe
    experts = m.n_experts if o["experts"] is None else o["experts"]
    top_k = m.top_k if o["top_k"] is None else o["top_k"]
    width = m.expert_d_ff if o["width"] is None else o["width"]
    return {"alias": alias, "model": mn, "table": table, "aliases": aliases,
            "x": ffn.moe_explore(_config(mn), experts, top_k, width), "experts": experts, "top_k": top_k,
            "width": width, "choices": moe_models}


def int4_view(o: dict, data) -> dict:
    rows, cols, pct, scale, seed = (_scalar(data, o, k) for k in ffn.PROBE_DEFAULTS)
    p = ffn.int4_probe(rows, cols, str(pct), str(scale), seed)
    return {"p": p, "spec": p["chart"], "rows": rows, "cols": cols, "pct": str(pct), "scale": str(scale),
            "seed": seed, "rows_choices": ROWS_CHOICES, "cols_choices": COLS_CHOICES}


# -- what the build answers ahead of time (experiments.widget.Widget.states) ----------------------------------------
# The browser sends every control's value as its text (checkboxes as true/false) and Python parses it, so the args
# below are the controls' texts. Each list holds the first state and its neighbours along each enumerable control
# (one control changed at a time), not their product; free fields (widths, bandwidths, batch sizes to type) and
# pasted configs are Python's.
def _axes(first: dict, choices: dict) -> list[dict]:
    """The first state, then for each key in `choices` every other choice with the rest as first."""
    states = [dict(first)]
    for key, values in choices.items():
        states += [{**first, key: v} for v in values if v != first[key]]
    return states


def swiglu_states(o: dict, data) -> list:
    known = known_widths(data)
    first = {"d": str(o["d"]), "ratio": str(o["ratio"]), "matrices": str(o["matrices"]), "align": str(o["align"])}
    out = []
    for s in _axes(first, {"matrices": ["2", "3"], "align": [str(a) for a in ALIGN_CHOICES],
                           "ratio": list(RATIO_CHOICES)}):
        out.append(("ffn_swiglu_budget", [s["d"], s["ratio"], s["matrices"], s["align"], known]))
        out.append(("ffn_config_family", [s["ratio"], s["align"]]))
    return out


def memory_states(o: dict, data) -> list:
    presets = {g["key"]: g for g in gpus(data)}
    first = {"model": o["model"], "dtype": str(o["dtype"]), "gpu": o["gpu"], "batch": str(o["batch"])}
    out = []
    for s in _axes(first, {"model": [a for a, _ in data.choices()], "dtype": list(DTYPE_CHOICES),
                           "gpu": list(presets), "batch": [str(b) for b in BATCH_CHOICES]}):
        g = presets[s["gpu"]]
        out.append(("ffn_memory", [model_ref(s["model"]), s["dtype"], g["bw"], s["batch"], g["peak"]]))
        out.append(("ffn_batch_series", [model_ref(s["model"]), s["dtype"], g["bw"], g["peak"]]))
    return out


def training_states(o: dict, data) -> list:
    first = {"model": o["model"], "recipe": o["recipe"], "checkpointing": bool(o["checkpointing"])}
    return [("ffn_training_memory", [model_ref(s["model"]), s["recipe"], str(o["batch"]), str(o["seq"]),
                                     s["checkpointing"]])
            for s in _axes(first, {"model": [a for a, _ in data.choices()], "recipe": list(ffn.RECIPE_ZH),
                                   "checkpointing": [False, True]})]


def flops_states(o: dict, data) -> list:
    v = flops_view(o, data)
    return [("ffn_flops", [model_ref(a), v["tokens_b"], v["tflops"], str(v["gpus"]), v["chin"]])
            for a, _ in data.choices()]


def moe_states(o: dict, data) -> list:
    """Picking a starting model sets its own experts, top-k and width: one answer per MoE model."""
    out = []
    for a, mn in data.choices():
        m = mn.arch.moe
        if ffn.explorable(mn.ledger):
            out.append(("ffn_moe", [model_ref(a), str(m.n_experts), str(m.top_k), str(m.expert_d_ff)]))
    return out
