"""C3's widgets at build time: each view computes its first state with calc.py (the functions the browser calls as
experiments.api:c3_*); each `states` lists the calls the enumerable controls make (each model at the built context,
each context at the built model), which the build answers ahead of time, so those controls answer before the
browser's Python is ready. script.js makes the markup live.
"""
from __future__ import annotations

from ...widget import model_ref
from . import calc


def _kv_models(o: dict, data) -> list:
    data.model(o["model"])                 # an unknown alias fails the build, named
    return data.choices()


def kv_view(o: dict, data) -> dict:
    models = _kv_models(o, data)
    if o["context"] not in calc.CONTEXTS:
        raise data.option_error("context", "one of " + ", ".join(map(str, calc.CONTEXTS)), o["context"])
    x = calc.kv(dict(models)[o["model"]].doc["config"], o["context"])
    return {"o": o, "x": x, "models": models, "alias": o["model"],
            "contexts": [(c, calc.context_label(c)) for c in calc.CONTEXTS]}


def kv_states(o: dict, data) -> list:
    """Each model at the built context, each context at the built model (as the page's selects send them)."""
    out = [("c3_kv", [model_ref(a), str(o["context"])]) for a, _ in _kv_models(o, data)]
    out += [("c3_kv", [model_ref(o["model"]), str(c)]) for c in calc.CONTEXTS if c != o["context"]]
    return out


def rope_view(o: dict, data) -> dict:
    rows = calc.rope_rows(data.choices())
    return {"rows": rows, "count": len(rows)}
