"""C11's widgets at build time: each view computes the widget's first state with calc.py (the functions the browser
calls as experiments.api:c11_*) and, where a control has few enough positions, every state it can show, so the page
answers those controls before the browser's Python is ready. site/static/js/widgets-c11.js makes the markup live.
"""
from __future__ import annotations

from ...widget import OptionError
from . import calc

SPLIT_CHOICES = ("1/8", "1/4", "1/2", "1", "2", "4", "8")


def _moe_models(widget: str, o: dict, data) -> list:
    out = []
    for alias in o["models"]:
        a, mn = data.model(widget, alias, "models")
        if not mn.arch.moe:
            raise OptionError(widget, "models", "aliases of MoE models", alias)
        out.append((a, mn))
    if o["model"] not in dict(out):
        raise OptionError(widget, "model", "one of the aliases in 'models'", o["model"])
    return out


def ledger_view(o: dict, data) -> dict:
    """The two-ledger widget: the chosen model's ledgers, and every model's default ledgers (the picker works
    before Python is ready; changing E, k or the split asks Python)."""
    models = _moe_models("c11-moe-ledger", o, data)
    table = {a: calc.moe_ledger(mn.doc["config"]) for a, mn in models}
    splittable = {a: mn.arch.moe.expert_d_ff_own for a, mn in models}
    return {"alias": o["model"], "models": models, "x": table[o["model"]], "table": table,
            "splittable": splittable, "splits": SPLIT_CHOICES}


def hybrid_view(o: dict, data) -> dict:
    alias, mn = data.model("c11-hybrid-memory", o["model"])
    config = mn.doc["config"]
    L = calc._text(config)["num_hidden_layers"]
    presets = [p for p in calc.FULL_PRESETS if p <= L] if L == 64 else sorted({0, L // 8, L // 4, L // 2, L})
    if o["T"] not in calc.T_CHOICES:
        raise OptionError("c11-hybrid-memory", "T", "one of " + ", ".join(map(str, calc.T_CHOICES)), o["T"])
    if not isinstance(o["n_full"], int) or not 0 <= o["n_full"] <= L:
        raise OptionError("c11-hybrid-memory", "n_full", f"an integer 0..{L}", o["n_full"])
    table = calc.hybrid_table(config, presets, calc.T_CHOICES)
    return {"alias": alias, "model": mn, "L": L, "presets": [(p, calc.ratio_label(p, L)) for p in presets],
            "ts": calc.T_CHOICES, "n_full": o["n_full"], "T": o["T"],
            "x": calc.hybrid_memory(config, o["n_full"], o["T"]), "table": table,
            "spec": calc.hybrid_chart(config, presets, current=o["n_full"])}


def batch_view(o: dict, data) -> dict:
    models = _moe_models("c11-batch-experts", o, data)
    if o["dtype"] not in calc.BYTES:
        raise OptionError("c11-batch-experts", "dtype", "one of " + ", ".join(calc.BYTES), o["dtype"])
    batches = [2 ** e for e in calc.BATCH_EXPONENTS]
    if o["batch"] not in batches:
        raise OptionError("c11-batch-experts", "batch", "a power of two from 1 to 4096", o["batch"])
    tables = {a: calc.batch_table(mn.doc["config"], dtype=o["dtype"]) for a, mn in models}
    charts = {a: calc.batch_chart(mn.doc["config"], o["dtype"]) for a, mn in models}
    return {"alias": o["model"], "models": models, "batch": o["batch"], "exp": batches.index(o["batch"]),
            "max_exp": calc.BATCH_EXPONENTS[-1], "dtype": o["dtype"], "dtypes": list(calc.BYTES),
            "x": tables[o["model"]][str(o["batch"])], "tables": {"dtype": o["dtype"], "models": tables},
            "charts": charts, "spec": charts[o["model"]]}
