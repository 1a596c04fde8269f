"""C11's widgets at build time: each view computes the widget's first state with calc.py (the functions the browser
calls as experiments.api:c11_*); each ``states`` lists, where a control has few enough positions, every call those
positions make, which the build answers ahead of time (sitegen/widgets.py), so the page answers those controls
before the browser's Python is ready. script.js (this folder) makes the markup live.
"""
from __future__ import annotations

from ...widget import model_ref
from . import calc, recall

SPLIT_CHOICES = ("1/8", "1/4", "1/2", "1", "2", "4", "8")


def _moe_models(o: dict, data) -> list:
    out = []
    for alias in o["models"]:
        a, mn = data.model(alias, key="models")
        if not mn.arch.moe:
            raise data.option_error("models", "aliases of MoE models", alias)
        out.append((a, mn))
    if o["model"] not in dict(out):
        raise data.option_error("model", "one of the aliases in 'models'", o["model"])
    return out


def ledger_view(o: dict, data) -> dict:
    """The two-ledger widget: the chosen model's ledgers."""
    models = _moe_models(o, data)
    splittable = {a: mn.arch.moe.expert_d_ff_own for a, mn in models}
    return {"alias": o["model"], "models": models, "x": calc.moe_ledger(dict(models)[o["model"]].doc["config"]),
            "splittable": splittable, "splits": SPLIT_CHOICES}


def ledger_states(o: dict, data) -> list:
    """Every model's own ledgers (the picker answers before Python is ready; another E, k or split asks Python)."""
    return [("c11_moe_ledger", [model_ref(a), None, None, "1"]) for a, _ in _moe_models(o, data)]


def _hybrid_presets(config: dict) -> tuple[int, list[int]]:
    L = calc._text(config)["num_hidden_layers"]
    return L, [p for p in calc.FULL_PRESETS if p <= L] if L == 64 else sorted({0, L // 8, L // 4, L // 2, L})


def hybrid_view(o: dict, data) -> dict:
    alias, mn = data.model(o["model"])
    config = mn.doc["config"]
    L, presets = _hybrid_presets(config)
    if o["T"] not in calc.T_CHOICES:
        raise data.option_error("T", "one of " + ", ".join(map(str, calc.T_CHOICES)), o["T"])
    if not isinstance(o["n_full"], int) or not 0 <= o["n_full"] <= L:
        raise data.option_error("n_full", f"an integer 0..{L}", o["n_full"])
    return {"alias": alias, "model": mn, "L": L, "presets": [(p, calc.ratio_label(p, L)) for p in presets],
            "ts": calc.T_CHOICES, "n_full": o["n_full"], "T": o["T"],
            "x": calc.hybrid_memory(config, o["n_full"], o["T"]),
            "spec": calc.hybrid_chart(config, presets, current=o["n_full"])}


def hybrid_states(o: dict, data) -> list:
    """Every preset at every T (a custom layer count asks Python)."""
    alias, mn = data.model(o["model"])
    _, presets = _hybrid_presets(mn.doc["config"])
    return [("c11_hybrid_memory", [model_ref(alias), p, t]) for p in presets for t in calc.T_CHOICES]


def batch_view(o: dict, data) -> dict:
    models = _moe_models(o, data)
    if o["dtype"] not in calc.BYTES:
        raise data.option_error("dtype", "one of " + ", ".join(calc.BYTES), o["dtype"])
    batches = [2 ** e for e in calc.BATCH_EXPONENTS]
    if o["batch"] not in batches:
        raise data.option_error("batch", "a power of two from 1 to 4096", o["batch"])
    config = dict(models)[o["model"]].doc["config"]
    return {"alias": o["model"], "models": models, "batch": o["batch"], "exp": batches.index(o["batch"]),
            "max_exp": calc.BATCH_EXPONENTS[-1], "dtype": o["dtype"], "dtypes": list(calc.BYTES),
            "x": calc.batch_read(config, o["batch"], o["dtype"]), "spec": calc.batch_chart(config, o["dtype"])}


def batch_states(o: dict, data) -> list:
    """Every model at every slider position, and its chart, at the built precision (another precision asks Python)."""
    out = []
    for a, _ in _moe_models(o, data):
        out += [("c11_batch_read", [model_ref(a), 2 ** e, o["dtype"]]) for e in calc.BATCH_EXPONENTS]
        out.append(("c11_batch_chart", [model_ref(a), o["dtype"]]))
    return out


def _recall_settings(o: dict, data) -> tuple[int, int, str]:
    if o["d_k"] not in recall.D_K_CHOICES:
        raise data.option_error("d_k", "one of " + ", ".join(map(str, recall.D_K_CHOICES)), o["d_k"])
    if isinstance(o["seed"], bool) or not isinstance(o["seed"], int) or not 0 <= o["seed"] < 2**32:
        raise data.option_error("seed", "an integer from 0 to 2**32 - 1", o["seed"])
    if str(o["gate"]) not in recall.GATE_CHOICES:
        raise data.option_error("gate", "one of " + ", ".join(recall.GATE_CHOICES), o["gate"])
    return o["d_k"], o["seed"], str(o["gate"])


def recall_view(o: dict, data) -> dict:
    """The recall experiment's first state, computed with numpy at build time as the page's worker computes it."""
    d, seed, gate = _recall_settings(o, data)
    return {"x": recall.recall_experiment(str(d), str(seed), gate), "d_k": d, "seed": seed, "gate": gate,
            "d_choices": recall.D_K_CHOICES, "gate_choices": recall.GATE_CHOICES, "memories": recall.MEMORY_SHORT}


def recall_states(o: dict, data) -> list:
    """Every key size at the built gate and every gate at the built key size (another seed asks Python)."""
    d, seed, gate = _recall_settings(o, data)
    out = [("c11_recall", [str(x), str(seed), gate]) for x in recall.D_K_CHOICES]
    return out + [("c11_recall", [str(d), str(seed), g]) for g in recall.GATE_CHOICES if g != gate]
