"""C3's widgets at build time: each view computes its first state with calc.py (the functions the browser calls as
experiments.api:c3_*); each `states` lists the calls the enumerable controls make (each model at the built context,
each context at the built model), which the build answers ahead of time, so those controls answer before the
browser's Python is ready. script.js makes the markup live.
"""
from __future__ import annotations

from ...format import n
from ...toolkit.stored import stored
from ...widget import data_ref, model_ref
from . import calc, trained


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


# -- the trained small model: attention maps, the mask switch, decoding with and without the cache ------------------
SPEAKER = data_ref("train_speaker")       # C2's stored speaker: its weights, characters, spec
ATTENTION = data_ref("train_attention")   # the stored mask experiment


def _speaker_facts(doc: dict) -> dict:
    m = doc["spec"]["model"]
    return {"d": m["d_model"], "L": m["n_layers"], "h": m["n_heads"], "kv": m.get("n_kv_heads", m["n_heads"]),
            "steps": n(doc["spec"]["schedule"]["total"]), "context": doc["context"]}


def maps_view(o: dict, data) -> dict:
    doc = stored(data, "train_speaker")
    x = trained.maps(o["sentence"], o["layer"], o["head"], doc)
    f = _speaker_facts(doc)
    return {"o": o, "x": x, "ref": SPEAKER, "model": f, "layers": list(range(1, f["L"] + 1)),
            "heads": list(range(1, f["h"] + 1))}


def maps_states(o: dict, data) -> list:
    """Every layer and head on the built sentence (as the page's fields send them)."""
    f = _speaker_facts(stored(data, "train_speaker"))
    return [("c3_maps", [o["sentence"], str(li), str(hi), SPEAKER])
            for li in range(1, f["L"] + 1) for hi in range(1, f["h"] + 1)]


def mask_view(o: dict, data) -> dict:
    doc = stored(data, "train_attention")
    x = trained.mask(o["leak"], doc)
    return {"o": o, "x": x, "ref": ATTENTION, "text_path": doc["text"]["file"], "steps": n(doc["steps"]),
            "batch": doc["spec"]["batch_size"], "seq": doc["spec"]["seq_len"]}


def mask_states(o: dict, data) -> list:
    stored(data, "train_attention")
    return [("c3_mask", [leak, ATTENTION]) for leak in ("0", "1")]


def cache_view(o: dict, data) -> dict:
    doc = stored(data, "train_speaker")
    x = trained.decode_text(o["prompt"], o["n_new"], doc)
    x.update({"tps_cached": "—", "tps_full": "—", "speedup": "—", "same": "—", "text_full": ""})
    return {"o": o, "x": x, "ref": SPEAKER, "max_new": trained.MAX_NEW,
            "max_prompt": doc["context"] - trained.MAX_NEW}
