"""Build-time renderings of the FFN deep-read lesson's widgets (registered into sitegen.widgets.WIDGETS).

Each renderer computes the widget's first state with experiments.ffn (the very functions the browser calls through
experiments.api.ffn_*), and fills a template site/templates/widgets/ffn_*.html; site/static/js/widgets-ffn.js
then makes the same markup interactive. sitegen.widgets imports this module at its end, so its helpers (render,
_model, _choices) are imported lazily inside the renderers.

Options (YAML in the lesson's ```{widget} block):
    ffn-swiglu-budget    d, ratio, matrices, align
    ffn-memory           models (the weight tables), model, dtype, batch
    ffn-training-memory  model, recipe, batch, seq, checkpointing
    ffn-flops            model, tokens_b, tflops, gpus
    ffn-moe              models (the table of real MoE configs), model, experts, top_k, width
    ffn-int4             rows, cols, outlier_pct, outlier_scale, seed
"""
from __future__ import annotations

import json
from fractions import Fraction

from experiments import ffn
from .errors import LessonError

RATIO_CHOICES = ("2", "8/3", "3", "3.5", "4", "16/3", "8")
ALIGN_CHOICES = (1, 64, 128, 256, 512, 1024)
DTYPE_CHOICES = ("FP32", "BF16", "FP16", "FP8", "INT8", "INT4")
BATCH_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
ROWS_CHOICES = (256, 512, 1024)
COLS_CHOICES = (16, 32, 64)


def _w():
    from . import widgets
    return widgets


def _cited(ctx, name: str, fallback: str) -> str:
    """A cited figure's value as text (the preset the learner starts from), or `fallback` without citations."""
    item = (ctx.data.get("citations") or {}).get(name)
    return str(item["value"]) if item else fallback


def _gpus(ctx) -> list[dict]:
    """Bandwidth / peak presets, each from data/citations.json."""
    out = []
    for key, name in (("h100", "H100 SXM"), ("a100", "A100 80GB SXM")):
        bw = (ctx.data.get("citations") or {}).get(f"{key}_bandwidth_tbps")
        peak = (ctx.data.get("citations") or {}).get(f"{key}_bf16_tflops")
        if bw and peak:
            out.append({"key": key, "name": name, "bw": str(bw["value"]), "peak": str(peak["value"]),
                        "source": bw["source"]})
    return out


def _opt(ctx, options: dict, key: str, default):
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise LessonError(ctx.file, ctx.line, f"widget {ctx.name}: option {key!r} must be a number or text, "
                          f"got {value!r}")
    return value


def _config(mn) -> dict:
    return mn.doc["config"]


def _known_widths(ctx) -> list[list]:
    """(name, d, d_ff) of every dense three-matrix model in data/, to mark real configs in the alignment table."""
    out = []
    for _, mn in _w()._choices(ctx):
        a = mn.arch
        if a.ffn_matrices == 3 and not a.moe:
            out.append([mn.name, a.d_model, a.d_ff])
    return out


def _json_attr(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- ffn-swiglu-budget -------------------------------------------------------------------------------------------
def swiglu_budget(options, ctx) -> str:
    d = _opt(ctx, options, "d", 4096)
    ratio = str(_opt(ctx, options, "ratio", "8/3"))
    matrices = _opt(ctx, options, "matrices", 3)
    align = _opt(ctx, options, "align", 256)
    known = _known_widths(ctx)
    budget = ffn.swiglu_budget(d, ratio, matrices, align, known)
    family = ffn.config_family(ffn.FAMILY, ratio, align)
    return _w().render("ffn_swiglu.html", ctx, b=budget, family=family, known_json=_json_attr(known),
                       ratios=RATIO_CHOICES, aligns=ALIGN_CHOICES)


# -- ffn-memory --------------------------------------------------------------------------------------------------
def memory(options, ctx) -> str:
    w = _w()
    aliases = options.get("models", ["llama7b", "llama_2_13b", "llama70b"])
    if not isinstance(aliases, list) or not aliases:
        raise LessonError(ctx.file, ctx.line, "widget ffn-memory: option 'models' must be a list of model aliases")
    table_models = [w._model(ctx, {"model": a}) for a in aliases]
    alias, mn = w._model(ctx, {"model": options.get("model", aliases[0])})
    dtype = str(_opt(ctx, options, "dtype", "BF16"))
    batch = _opt(ctx, options, "batch", 1)
    gpus = _gpus(ctx)
    if not gpus:
        raise LessonError(ctx.file, ctx.line, "widget ffn-memory: data/citations.json has no GPU bandwidth figures")
    bw, peak = gpus[0]["bw"], gpus[0]["peak"]
    pairs = [(m.name, _config(m)) for _, m in table_models]
    weights = ffn.weights_table(pairs)
    decode_tab = ffn.decode_table(pairs, bandwidth_tbps=bw, peak_tflops=peak)
    calc = ffn.decode(_config(mn), dtype, bw, batch, peak)
    series = ffn.batch_series(_config(mn), dtype, bw, peak)
    return w.render("ffn_memory.html", ctx, alias=alias, model=mn, weights=weights, decode=decode_tab, calc=calc,
                    series=series, gpus=gpus, gpu=gpus[0], dtypes=DTYPE_CHOICES, batches=BATCH_CHOICES,
                    choices=w._choices(ctx))


# -- ffn-training-memory -----------------------------------------------------------------------------------------
def training_memory(options, ctx) -> str:
    w = _w()
    alias, mn = w._model(ctx, {"model": options.get("model", "llama7b")})
    recipe = str(_opt(ctx, options, "recipe", "mixed_adamw"))
    batch = _opt(ctx, options, "batch", 4)
    seq = _opt(ctx, options, "seq", 4096)
    ckpt = bool(options.get("checkpointing", False))
    data = ffn.training_memory(_config(mn), recipe, batch, seq, ckpt)
    return w.render("ffn_training.html", ctx, alias=alias, model=mn, t=data, recipes=ffn.RECIPE_ZH,
                    choices=w._choices(ctx))


# -- ffn-flops ---------------------------------------------------------------------------------------------------
def flops(options, ctx) -> str:
    w = _w()
    alias, mn = w._model(ctx, {"model": options.get("model", "llama7b")})
    tokens_b = str(_opt(ctx, options, "tokens_b", "2000"))
    tflops = str(_opt(ctx, options, "tflops", _cited(ctx, "sustained_tflops", "400")))
    gpus = _opt(ctx, options, "gpus", 1024)
    cited = ctx.data.get("citations") or {}
    chin = "20"
    if "chinchilla_tokens" in cited and "chinchilla_params" in cited:
        chin = ffn.ratio_text(Fraction(cited["chinchilla_tokens"]["value"], cited["chinchilla_params"]["value"]))
    data = ffn.flops_budget(_config(mn), tokens_b, tflops, gpus, chin)
    return w.render("ffn_flops.html", ctx, alias=alias, model=mn, f=data, tokens_b=tokens_b, tflops=tflops,
                    gpus=gpus, chin=chin, choices=w._choices(ctx))


# -- ffn-moe -----------------------------------------------------------------------------------------------------
def moe(options, ctx) -> str:
    w = _w()
    moe_models = [(a, mn) for a, mn in w._choices(ctx) if mn.arch.moe]
    aliases = options.get("models") or [a for a, _ in moe_models]
    table = ffn.moe_table([(w._model(ctx, {"model": a})[1].name, _config(w._model(ctx, {"model": a})[1]))
                           for a in aliases])
    alias, mn = w._model(ctx, {"model": options.get("model", aliases[0])})
    if not mn.arch.moe:
        raise LessonError(ctx.file, ctx.line, f"widget ffn-moe: model {alias!r} is not a MoE model")
    m = mn.arch.moe
    experts = options.get("experts", m["n_experts"])
    top_k = options.get("top_k", m["top_k"])
    width = options.get("width", m["expert_d_ff"])
    data = ffn.moe_explore(_config(mn), experts, top_k, width)
    return w.render("ffn_moe.html", ctx, alias=alias, model=mn, table=table, aliases=aliases, x=data,
                    experts=experts, top_k=top_k, width=width, choices=moe_models)


# -- ffn-int4 ----------------------------------------------------------------------------------------------------
def int4(options, ctx) -> str:
    rows, cols, pct, scale, seed = (_opt(ctx, options, key, default) for key, default in ffn.PROBE_DEFAULTS.items())
    pct, scale = str(pct), str(scale)
    data = ffn.int4_probe(rows, cols, pct, scale, seed)
    return _w().render("ffn_int4.html", ctx, p=data, spec=data["chart"], rows=rows, cols=cols, pct=pct,
                       scale=scale, seed=seed, rows_choices=ROWS_CHOICES, cols_choices=COLS_CHOICES)


FFN_WIDGETS: dict = {
    "ffn-swiglu-budget": swiglu_budget, "ffn-memory": memory, "ffn-training-memory": training_memory,
    "ffn-flops": flops, "ffn-moe": moe, "ffn-int4": int4,
}
