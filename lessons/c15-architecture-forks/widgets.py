"""C15's widgets at build time: each view computes the first state with calc.py (the functions the browser calls as
experiments.api:c15_*), and each ``states`` lists what the enumerable controls ask (the map's order, every stop of
the context slider, every model with each of its swaps at the built context), so the page answers them before the
browser's Python is ready. script.js (this folder) makes the markup live.
"""
from __future__ import annotations

from ...format import n
from ...ledger import forks as F
from ...widget import model_ref
from . import calc


def _models(o: dict, data) -> list:
    return [data.model(alias, key="models") for alias in o["models"]]


def _pairs(models: list) -> list:
    return [[mn.name, mn.doc["config"]] for _, mn in models]


def _refs(models: list) -> list:
    return [[mn.name, model_ref(a)] for a, mn in models]


def map_view(o: dict, data) -> dict:
    models = _models(o, data)
    if o["sort"] not in calc.SORTS:
        raise data.option_error("sort", "one of " + ", ".join(calc.SORTS), o["sort"])
    return {"sorts": [(s, calc.SORT_ZH[s]) for s in calc.SORTS], "sort": o["sort"],
            "x": calc.fork_map(_pairs(models), o["sort"]), "n_models": len(models), "aliases": [a for a, _ in models]}


def map_states(o: dict, data) -> list:
    refs = _refs(_models(o, data))
    return [("c15_fork_map", [refs, s]) for s in calc.SORTS]


def context_view(o: dict, data) -> dict:
    models = _models(o, data)
    if o["T"] not in calc.T_STOPS:
        raise data.option_error("T", "one of " + ", ".join(map(str, calc.T_STOPS)), o["T"])
    return {"stops": calc.T_STOPS, "index": calc.T_STOPS.index(o["T"]), "T": o["T"],
            "x": calc.context_rows(_pairs(models), o["T"]), "aliases": [a for a, _ in models],
            "spec": calc.context_chart(_pairs([data.model(a, key="chart") for a in o["chart"]]))}


def context_states(o: dict, data) -> list:
    refs = _refs(_models(o, data))
    return [("c15_context", [refs, T]) for T in calc.T_STOPS]


def _swaps(mn) -> list[str]:
    return F.what_if_options(F.card_of(mn.doc["config"], mn.ledger))


def what_if_view(o: dict, data) -> dict:
    models = _models(o, data)
    alias, mn = data.model(o["model"])
    if o["model"] not in dict(models):
        raise data.option_error("model", "one of the aliases in 'models'", o["model"])
    if o["swap"] not in F.WHAT_IFS:
        raise data.option_error("swap", "one of " + ", ".join(F.WHAT_IFS), o["swap"])
    if o["T"] not in calc.T_STOPS:
        raise data.option_error("T", "one of " + ", ".join(map(str, calc.T_STOPS)), o["T"])
    return {"models": models, "alias": alias, "swaps": [(s, calc.SWAP_ZH[s]) for s in F.WHAT_IFS],
            "swap": o["swap"], "T": o["T"], "stops": [(t, n(t)) for t in calc.T_STOPS], "kv_heads": o["kv_heads"],
            "kv_max": calc.KV_MAX,
            "allowed": {a: " ".join(_swaps(m)) for a, m in models},
            "x": calc.what_if_view(mn.doc["config"], o["swap"], o["T"], o["kv_heads"])}


def what_if_states(o: dict, data) -> list:
    """Every model with each swap it has, at the built context and KV-head count (other values ask Python)."""
    out = []
    for a, mn in _models(o, data):
        out += [("c15_what_if", [model_ref(a), s, str(o["T"]), str(o["kv_heads"])]) for s in _swaps(mn)]
    return out
