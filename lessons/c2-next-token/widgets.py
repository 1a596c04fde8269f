"""Lesson C2's widget: the model speaks. Build-time view and states, and the entry points the page calls.

- speak: the stored speaker model (data/train_speaker.json, sent as a data_ref placeholder and answered by the
  build for the first state) continues a prompt (experiments.toolkit.speak: settings clamped, unknown characters
  dropped, the distribution's chart);
- train_start / train_step / train_speak: the same architecture trained from scratch in the page's training worker
  (script.js, one step per call), and its continuation of the learner's prompt every few steps.
Every string a learner reads is formatted here or in experiments.toolkit.speak.
"""
from __future__ import annotations

import math

from ...format import n, share
from ...toolkit.live_run import advance
from ...toolkit.stored import stored
from ...widget import data_ref, uses

SPEAKER = data_ref("train_speaker")    # the whole stored document: the weights, the characters, the spec
LIVE_BATCH, LIVE_SEQ, LIVE_LR, LIVE_WARMUP = 8, 32, 1e-2, 20
MAX_LIVE_STEPS = 1000
SPEAK_EVERY = 25                       # the page asks the live model to speak every this many steps
N_NEW = 30

_SESSIONS: dict[int, dict] = {}


def _stored(doc: dict):
    from ...toolkit.speak import stored_model
    return stored_model(doc)


@uses("numpy")
def speak(prompt, temperature, top_k, top_p, seed, stored) -> dict:
    """The stored speaker's continuation of `prompt` (N_NEW characters) and its next-token distribution."""
    from ...toolkit.speak import speak as say
    params, cfg, tok = _stored(stored)
    out = say(params, cfg, tok, prompt, temperature, top_k, top_p, seed, N_NEW, stored["context"])
    out["who"] = f"构建时训练好的模型（{n(stored['spec']['schedule']['total'])} 步）"
    return out


def speak_view(o: dict, data) -> dict:
    doc = stored(data, "train_speaker")
    x = speak(o["prompt"], o["temperature"], o["top_k"], o["top_p"], o["seed"], doc)
    if x["notes"]:
        raise data.option_error("prompt/temperature/top_k/top_p", "values in range", "; ".join(x["notes"]))
    m = doc["spec"]["model"]
    return {"o": o, "x": x, "ref": SPEAKER, "text_path": doc["text"]["file"], "every": SPEAK_EVERY,
            "max_steps": MAX_LIVE_STEPS, "n_new": N_NEW, "context": doc["context"], "vocab": m["vocab_size"],
            "model": {"d": m["d_model"], "L": m["n_layers"], "h": m["n_heads"], "kv": m["n_kv_heads"],
                      "d_ff": m["d_ff"],
                      "V": n(m["vocab_size"]), "steps": n(doc["spec"]["schedule"]["total"])},
            "live": {"batch": LIVE_BATCH, "seq": LIVE_SEQ}}


def speak_states(o: dict, data) -> list:
    """The first state: the stored model on the built prompt and settings (as the page's fields send them)."""
    return [("c2_speak", [o["prompt"], str(o["temperature"]), str(o["top_k"]), str(o["top_p"]), str(o["seed"]),
                          SPEAKER])]


# -- the live run: the speaker's architecture from scratch, in the page's training worker ---------------------------
def live_spec(vocab_size: int, seed: int = 0):
    from ...train.runs import ADAMW
    from ...train.runs_speaker import speaker_config
    from ...train.schedule import Schedule
    from ...train.trainer import RunSpec
    return RunSpec(model=speaker_config(vocab_size), optimizer="adamw", hyper=ADAMW,
                   schedule=Schedule("cosine", LIVE_LR, MAX_LIVE_STEPS, LIVE_WARMUP, 0.1), batch_size=LIVE_BATCH,
                   seq_len=LIVE_SEQ, clip=1.0, seed=seed)


@uses("numpy")
def train_start(text: str, seed: int = 0) -> dict:
    """A fresh live run from the trainer's initialisation: its session id and the tokens each step trains on (the
    panel's speed)."""
    from ...train.data import course_ids
    from ...train.trainer import Trainer
    tok, train_ids, _ = course_ids(text)
    sid = max(_SESSIONS, default=0) + 1
    _SESSIONS.clear()                       # one live run at a time
    spec = live_spec(tok.vocab_size, int(seed))
    _SESSIONS[sid] = {"trainer": Trainer(spec, train_ids), "tok": tok}
    return {"session": sid, "tokens_per_step": spec.batch_size * spec.seq_len}


def _session(session) -> dict:
    run = _SESSIONS.get(session)
    if run is None:
        raise ValueError("这次训练已被重置，请重新开始。")
    return run


@uses("numpy")
def train_step(session: int, steps: int = 1) -> dict:
    """`steps` more steps (at most 10 per call): each step's number and loss."""
    return advance(_session(session)["trainer"], steps, MAX_LIVE_STEPS)


@uses("numpy")
def train_speak(session, prompt, temperature, top_k, top_p, seed) -> dict:
    """The live model's continuation of `prompt` as it is now (the step it has reached)."""
    from ...toolkit.speak import speak as say
    run = _session(session)
    tr = run["trainer"]
    out = say(tr.params, tr.spec.model, run["tok"], prompt, temperature, top_k, top_p, seed, N_NEW,
              tr.spec.seq_len)
    out["step"] = tr.step_index
    out["who"] = f"你正在训练的模型（第 {tr.step_index} 步）"
    return out


# -- every model's embedding and output head (static, as built) -----------------------------------------------------
def heads_rows(choices) -> list[dict]:
    """One row per model (alias, ModelNumbers): V, d, ln V (the cross-entropy of a model that knows nothing, where
    its training starts), whether the head is the embedding, the two matrices' parameters
    as the ledger engine counts them (GPT-2's embedding part holds its position table too) and their share of all
    parameters; for an untied head, the share tying it would save."""
    from ...ledger import views
    rows = []
    for _, mn in choices:
        parts = views.breakdown(mn.ledger)
        emb, head = parts.get("embedding", 0), parts.get("lm_head", 0)
        tied = bool(mn.arch.tied_embeddings)
        rows.append({"name": mn.name, "V": n(mn.arch.vocab_size), "d": n(mn.arch.d_model),
                     "ln_v": f"{math.log(mn.arch.vocab_size):.2f}",
                     "tied": "是" if tied else "否", "params": n(emb + head),
                     "share": share(emb + head, mn.ledger.total),
                     "saving": "—" if tied else share(head, mn.ledger.total)})
    return rows


def heads_view(o: dict, data) -> dict:
    rows = heads_rows(data.choices())
    return {"rows": rows, "tied": sum(r["tied"] == "是" for r in rows), "count": len(rows)}
