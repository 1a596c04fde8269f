"""C14's widgets at build time: each view computes its first state with calc.py (the functions the browser calls as
experiments.api:c14_*); each `states` lists the calls the enumerable controls make (each model, device, weight
scheme, cache precision and context with the other controls as built; each device for the batching comparison;
each gamma), which the build answers ahead of time, so those controls answer before the browser's Python is ready.
Free fields (batch, used length, prompt, seed), the batching comparison's other models and pasted configs ask
Python. script.js makes the markup live.
"""
from __future__ import annotations

from ...toolkit import devices as DV
from ...toolkit import serving as S
from ...toolkit.stored import stored
from ...train import speculative as SP
from ...widget import data_ref, model_ref
from . import calc

SPEAKER = data_ref("train_speaker")          # the target: C2's stored speaker (its weights, characters, spec)
SPECULATIVE = data_ref("train_speculative")  # the draft and the stored measurement


def _serve_models(o: dict, data) -> list:
    """Every model in data/models (the picker's options), the chosen one checked."""
    data.model(o["model"])
    return data.choices()


def _serve_args(o: dict, **change) -> list:
    """The args the page's controls send (every value as its field's text), the model as a placeholder."""
    v = {**o, **change}
    return [model_ref(v["model"]), str(v["device"]), v["scheme"], v["kv"], str(v["context"]), str(v["batch"]),
            str(v["used"])]


def serve_view(o: dict, data) -> dict:
    models = _serve_models(o, data)
    for key, choices in (("device", DV.DEVICES), ("scheme", S.SCHEMES), ("kv", S.KV_BYTES),
                         ("context", calc.CONTEXT_CHOICES)):
        if o[key] not in choices:
            raise data.option_error(key, "one of " + ", ".join(map(str, choices)), o[key])
    x = calc.serve(dict(models)[o["model"]].doc["config"], o["device"], o["scheme"], o["kv"], o["context"],
                   o["batch"], o["used"])
    return {"o": o, "x": x, "models": models, "alias": o["model"],
            "devices": [(k, d.name) for k, d in DV.DEVICES.items() if d.bf16_flops], "schemes": S.SCHEMES,
            "kvs": list(S.KV_BYTES),
            "contexts": [(c, calc.context_label(c)) for c in calc.CONTEXT_CHOICES],
            "sources": [d.speed_source for d in DV.DEVICES.values() if d.bf16_flops], "max_batch": S.MAX_BATCH,
            "max_context": calc.MAX_CONTEXT, "page": S.PAGE_TOKENS}


def serve_states(o: dict, data) -> list:
    """Each model, device (its own tensor-core paths only), scheme, cache precision and context, the rest as built."""
    out = [("c14_serve", _serve_args(o, model=a)) for a, _ in _serve_models(o, data)]
    dev = DV.DEVICES[str(o["device"])]
    out += [("c14_serve", _serve_args(o, device=k)) for k, d in DV.DEVICES.items()
            if k != str(o["device"]) and d.bf16_flops and (o["scheme"] != "FP8" or d.fp8_flops)]
    out += [("c14_serve", _serve_args(o, scheme=s)) for s in S.SCHEMES
            if s != o["scheme"] and (s != "FP8" or dev.fp8_flops)]
    out += [("c14_serve", _serve_args(o, kv=k)) for k in S.KV_BYTES if k != o["kv"]]
    out += [("c14_serve", _serve_args(o, context=c)) for c in calc.CONTEXT_CHOICES if c != o["context"]]
    return out


def _batching_args(o: dict, **change) -> list:
    v = {**o, **change}
    return [model_ref(v["model"]), str(v["device"]), str(v["batch"]), str(v["seed"])]


def batching_view(o: dict, data) -> dict:
    models = _serve_models(o, data)
    if o["device"] not in DV.DEVICES:
        raise data.option_error("device", "one of " + ", ".join(DV.DEVICES), o["device"])
    x = data.answer("c14_batching", _batching_args(o))   # (the page's own call, answered once by the build)
    return {"o": o, "x": x, "models": models, "alias": o["model"],
            "devices": [(k, d.name) for k, d in DV.DEVICES.items() if d.bf16_flops],
            "min_batch": S.MIN_SLOTS, "max_batch": S.MAX_BATCH, "page": S.PAGE_TOKENS}


def batching_states(o: dict, data) -> list:
    """Each other device at the built model, batch limit and seed (each simulation takes about a second, so other
    models ask the browser's Python)."""
    return [("c14_batching", _batching_args(o, device=k)) for k, d in DV.DEVICES.items()
            if k != str(o["device"]) and d.bf16_flops]


def _spec_docs(data):
    return stored(data, "train_speaker"), stored(data, "train_speculative")


def speculate_view(o: dict, data) -> dict:
    speaker, doc = _spec_docs(data)
    if o["gamma"] not in range(1, SP.GAMMA_MAX + 1):
        raise data.option_error("gamma", f"an integer 1..{SP.GAMMA_MAX}", o["gamma"])
    x = calc.speculate(o["prompt"], o["gamma"], o["seed"], speaker, doc)
    t, d = doc["target_spec"]["model"], doc["draft_spec"]["model"]
    return {"o": o, "x": x, "gammas": list(range(1, SP.GAMMA_MAX + 1)), "speaker": SPEAKER, "spec": SPECULATIVE,
            "target": {"d": t["d_model"], "L": t["n_layers"], "h": t["n_heads"]},
            "draft": {"d": d["d_model"], "L": d["n_layers"], "h": d["n_heads"]},
            "context": speaker["context"], "max_prompt": calc.MAX_PROMPT}


def speculate_states(o: dict, data) -> list:
    """Every gamma at the built prompt and seed (as the page's fields send them)."""
    return [("c14_speculate", [o["prompt"], str(g), str(o["seed"]), SPEAKER, SPECULATIVE])
            for g in range(1, SP.GAMMA_MAX + 1)]
