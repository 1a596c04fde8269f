"""C10's widgets at build time: each view computes the first state with calc.py (the functions the browser calls as
experiments.api:c10_*); ``states`` lists the calls the build answers ahead of time (each listed model and each
choice of every select with the other controls as built), so those controls answer before the browser's Python is
ready. The free fields (GPU count, global batch) and the rank count 3 (which does not divide) are left to Python.
"""
from __future__ import annotations

from ...widget import model_ref
from . import calc

PLAN_CONTROLS = ("gpus", "cluster", "seq", "batch", "recompute")
RANK_STATES = ("1", "2", "4")


def _choices() -> dict[str, list[tuple[str, str]]]:
    return {"cluster": [(k, v[2]) for k, v in calc.CLUSTERS.items()],
            "seq": [(s, f"{int(s):,}") for s in calc.SEQS],
            "recompute": list(calc.RECOMPUTE_ZH.items())}


def _models(o: dict, data) -> list:
    out = [data.model(a, key="models") for a in o["models"]]
    if o["model"] not in dict(out):
        raise data.option_error("model", "one of the aliases in 'models'", o["model"])
    return out


def planner_view(o: dict, data) -> dict:
    models = _models(o, data)
    for key, choices in _choices().items():
        if str(o[key]) not in dict(choices):
            raise data.option_error(key, "one of " + ", ".join(dict(choices)), o[key])
    args = [str(o[k]) for k in PLAN_CONTROLS]
    return {"alias": o["model"], "models": models, "choices": _choices(), "o": dict(zip(PLAN_CONTROLS, args)),
            "x": data.answer("c10_plan", [model_ref(o["model"]), *args])}   # (the page's own call, answered once)


def planner_states(o: dict, data) -> list:
    args = [str(o[k]) for k in PLAN_CONTROLS]
    out = [("c10_plan", [model_ref(a), *args]) for a, _ in _models(o, data)]
    for i, key in enumerate(PLAN_CONTROLS):
        for value, _ in _choices().get(key, []):
            if value != args[i]:
                out.append(("c10_plan", [model_ref(o["model"]), *args[:i], value, *args[i + 1:]]))
    return out


def published_view(o: dict, data) -> dict:
    _, mn = data.model(o["model"])
    for key in calc.L3_KEYS + ("gpus", "seq", "batch"):
        if not isinstance(o[key], int) or o[key] < 1:
            raise data.option_error(key, "a positive integer", o[key])
    return {"rows": calc.published_rows(o, mn.doc["config"])}


def ranks_view(o: dict, data) -> dict:
    if o["layout"] not in calc.LAYOUT_ZH:
        raise data.option_error("layout", "one of " + ", ".join(calc.LAYOUT_ZH), o["layout"])
    if str(o["k"]) not in RANK_STATES:
        raise data.option_error("k", "one of " + ", ".join(RANK_STATES), o["k"])
    return {"layouts": list(calc.LAYOUT_ZH.items()), "ks": calc.RANK_CHOICES, "o": o,
            "x": calc.ranks_step(o["layout"], str(o["k"]))}


def ranks_states(o: dict, data) -> list:
    out = [("c10_ranks", [o["layout"], str(o["k"])])]
    out += [("c10_ranks", [lay, str(o["k"])]) for lay in calc.LAYOUT_ZH if lay != o["layout"]]
    out += [("c10_ranks", [o["layout"], k]) for k in RANK_STATES if k != str(o["k"])]
    return out
