"""C6's widgets at build time: each view computes the first state with calc.py (the functions the browser calls as
experiments.api:c6_*), and ``states`` lists the calls of the enumerable controls (the explorer's budget stops, the
calculator's GPU picker) so the page answers them before the browser's Python is ready.
script.js (this folder) makes the markup live.
"""
from __future__ import annotations

from fractions import Fraction

from ...format import format_value, n, sci
from ...toolkit.scaling import non_embedding_params
from ...toolkit.stored import stored
from ...widget import uses
from . import GPUS, calc, own_fit

OWN_ROUND = 10                # training steps per request of the page's rerun


def placed_models(aliases: list, data) -> tuple[list, list]:
    """([name, N, D] of every listed dense model with a published training-token figure in its meta.yaml,
    [names of the listed models without one]); an MoE model is refused (the fits are for dense models)."""
    placed, missing = [], []
    for alias in aliases:
        a, mn = data.model(alias, key="models")
        if mn.arch.moe:
            raise data.option_error("models", "aliases of dense models (the fits are for dense models)", alias)
        tokens = mn.meta.get("training_tokens")
        if tokens:
            placed.append([mn.name, mn.ledger.total, tokens])
        else:
            missing.append(mn.name)
    return placed, missing


def _budgets(o: dict, data) -> list[str]:
    budgets = o["budgets"]
    if not isinstance(budgets, list) or len(budgets) < 2:
        raise data.option_error("budgets", "a list of at least two budgets in FLOPs (text, e.g. '1e23')")
    values = []
    for b in budgets:
        try:
            values.append(calc.budget_of(b))
        except ValueError:
            raise data.option_error("budgets", "budgets between 1e6 and 1e30 FLOPs", b) from None
    if values != sorted(values) or len(set(values)) != len(values):
        raise data.option_error("budgets", "increasing budgets", budgets)
    if o["budget"] not in budgets:
        raise data.option_error("budget", "one of the budgets in 'budgets'", o["budget"])
    return budgets


def isoflop_view(o: dict, data) -> dict:
    budgets = _budgets(o, data)
    placed, missing = placed_models(o["models"], data)
    sources: list[dict] = []      # one entry per source, naming every model it covers (Llama 2's one table)
    for alias in o["models"]:
        mn = data.models[alias]
        if mn.meta.get("training_tokens"):
            text, url = mn.meta["training_tokens_source_zh"], mn.meta["training_tokens_url"]
            same = next((s for s in sources if s["text"] == text and s["url"] == url), None)
            if same:
                same["names"].append(mn.name)
            else:
                sources.append({"names": [mn.name], "text": text, "url": url})
    for s in sources:
        s["name"] = "、".join(s.pop("names"))
    rows = calc.model_rows(placed)
    trained = [data.models[a] for a in o["models"] if data.models[a].meta.get("training_tokens")]
    for row, mn in zip(rows, trained):      # Kaplan's N beside the exact total, from the same ledger
        row["nonemb"] = n(non_embedding_params(mn.ledger))
    return {"budgets": budgets, "index": budgets.index(o["budget"]), "budget": o["budget"],
            "placed": placed, "missing": missing, "sources": sources,
            "x": calc.isoflop(o["budget"], placed), "rows": rows}


def isoflop_states(o: dict, data) -> list:
    placed, _ = placed_models(o["models"], data)
    return [("c6_isoflop", [b, placed]) for b in _budgets(o, data)]


def gpu_peak(data, gpu: str) -> str:
    """A GPU's dense BF16 peak in TFLOPS as the text the picker sends (data/citations.json)."""
    item = data.citations.get(f"{gpu}_bf16_tflops")
    if item is None:
        raise data.option_error("gpu", "one of " + ", ".join(GPUS), gpu)
    return format_value(Fraction(str(item["value"])), "x1").replace(",", "").rstrip("0").rstrip(".")


def budget_view(o: dict, data) -> dict:
    if o["gpu"] not in GPUS:
        raise data.option_error("gpu", "one of " + ", ".join(GPUS), o["gpu"])
    gpus = [{"key": k, "name": name, "peak": gpu_peak(data, k),
             "source": data.citations[f"{k}_bf16_tflops"].get("source_zh", "")} for k, name in GPUS.items()]
    peak = next(g["peak"] for g in gpus if g["key"] == o["gpu"])
    try:
        x = calc.budget_plan(o["budget"], peak, str(o["gpus"]), str(o["mfu"]))
    except ValueError as e:
        raise data.option_error("budget", str(e)) from None
    return {"o": o, "gpus": gpus, "x": x}


def budget_states(o: dict, data) -> list:
    return [("c6_budget", [str(o["budget"]), gpu_peak(data, k), str(o["gpus"]), str(o["mfu"])]) for k in GPUS]


def device_view(o: dict, data) -> dict:
    base = calc.baseline_budget()
    return {"step_seq": o["seq"], "repeats": o["repeats"], "batch": o["batch"], "N": n(base["N"]), "D": n(base["D"]),
            "C": sci(base["C"], 2), "C_exact": sci(base["C_exact"], 2), "seq": base["seq"]}


# -- the course's own IsoFLOP grid (data/train_isoflop.json) and its rerun in the page ------------------------------
def own_view(o: dict, data) -> dict:
    from ...train.runs import TEXT_FILE
    grid = stored(data, "train_isoflop")
    budgets = [float(b) for b in grid["budgets"]]
    if o["budget"] not in range(len(budgets)):
        raise data.option_error("budget", f"the index of one of the grid's {len(budgets)} budgets", o["budget"])
    runs = grid["runs"]
    choices = [{"i": i, "C": own_fit.budget_text(C), "runs": sum(1 for r in runs if float(r["budget"]) == C),
                "steps": f"{sum(r['steps'] for r in runs if float(r['budget']) == C):,}"}
               for i, C in enumerate(budgets)]
    return {"runs": runs, "train_tokens": grid["train_tokens"], "x": own_fit.own_isoflop(runs, grid["train_tokens"]),
            "choices": choices, "budget": o["budget"], "text_path": TEXT_FILE, "lr": f"{grid['lr']:g}",
            "widths": "、".join(str(w) for w in grid["widths"]), "layers": grid["n_layers"], "batch": grid["batch"],
            "seq": grid["seq"]}


def own_refit(runs: list, train_tokens: int) -> dict:
    """The page's refit after a rerun: the same function as the build's first state."""
    return own_fit.own_isoflop(runs, train_tokens)


_OWN: dict = {}


@uses("numpy")
def own_start(text: str, budget: float) -> dict:
    """A fresh rerun of one budget of the grid (runs_isoflop.plan: its sizes and steps), run by run, widest first: its
    session, how many runs and steps it holds, and the tokens each step trains on (the panel's speed)."""
    from ...train import runs_isoflop as G
    from ...train.data import course_ids
    tok, train_ids, held_ids = course_ids(text)
    # widest first: the widest models take the fewest steps, so the first refit comes soonest
    plan = sorted((r for r in G.plan(tok.vocab_size) if r["budget"] == float(budget)), key=lambda r: -r["width"])
    if not plan:
        raise ValueError(f"算力预算：应为 {'、'.join(own_fit.budget_text(b) for b in G.BUDGETS)} 之一，得到 {budget!r}")
    sid = _OWN.get("id", 0) + 1
    _OWN.clear()                             # one rerun at a time
    _OWN.update(id=sid, plan=plan, index=0, trainer=None, train=train_ids, held=held_ids, vocab=tok.vocab_size)
    return {"session": sid, "runs": len(plan), "steps": sum(r["steps"] for r in plan),
            "tokens_per_step": G.BATCH * G.SEQ}


@uses("numpy")
def own_step(session: int, rounds: int = 1) -> dict:
    """`rounds` × OWN_ROUND more training steps of the rerun (training.js asks for one round per request, so a pause
    waits for at most one round): per step the run (from 1) and its step; the step that ends a run carries the
    run's record with its held-out loss (`finished`) and a sentence saying so."""
    import numpy as np

    from ...train import runs_isoflop as G
    from ...train.trainer import Trainer
    if _OWN.get("id") != session:
        raise ValueError("这次重跑已被重置，请重新开始。")
    rows: list[dict] = []
    budget = max(1, min(int(rounds), 5)) * OWN_ROUND
    with np.errstate(over="ignore", invalid="ignore"):
        while len(rows) < budget and _OWN["index"] < len(_OWN["plan"]):
            run = _OWN["plan"][_OWN["index"]]
            if _OWN["trainer"] is None:
                _OWN["trainer"] = Trainer(G.spec(run["width"], run["steps"], _OWN["vocab"]), _OWN["train"])
            tr = _OWN["trainer"]
            d = tr.step(detail=False)
            row: dict = {"run": _OWN["index"] + 1, "step": d["step"], "of": run["steps"]}
            if tr.step_index >= run["steps"]:
                row["finished"] = {**run, "held_out": G.sig(G.held_out_loss(tr, _OWN["held"]), 5)}
                row["note"] = f"d = {run['width']} 的模型训完了，留出损失 {row['finished']['held_out']:.4f}"
                _OWN["index"] += 1
                _OWN["trainer"] = None
            rows.append(row)
    return {"steps": rows, "done": _OWN["index"] >= len(_OWN["plan"])}
