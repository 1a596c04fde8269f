"""The course's precomputed training runs, produced by one command from the same trainer the page runs:

    python -m experiments.train.runs                      # every group's data file (only those whose inputs changed)
    python -m experiments.train.runs --group stability    # one group
    python -m experiments.train.runs --force              # recompute anyway

Each group (derived.DERIVED's run groups: a name, its output file, its compute function) is one data file. Its inputs:
the training text (data/texts/sishu.txt, split by data.course_ids), the baseline config, the trainer's code and
the group's own modules; each one's sha256 is stored with the results (`inputs`, `inputs_sha256`), so the command
skips a group when nothing it depends on changed, and the build refuses a stale file, naming the input that
changed and this command. The build only reads the files.
Everything above main() is computation without I/O.

The optimisation group (data/train_runs.json, lesson C5; its runs are defined in this module), two parts:
- baseline: the course baseline (3,688,704 parameters, C4) trained for 300 steps of 4 x 32 characters with
  AdamW (lr 3e-3, b2 0.95, wd 0.1, clip 1.0), cosine to 10%, with a 30-step warmup and without one; every step's
  diagnostics, a held-out loss every 25 steps, and the first step's update/weight RMS per tensor.
- race: the small live model (d 64, 2 layers, 4 query heads sharing 2 key/value heads) under SGD, Adam, AdamW and
  Muon, each at its usual lr times 3^-3 ... 3^3, on the same seed and the same batches: the loss per step (the
  optimiser race's slider).
The stability group (data/train_stability.json, lesson C8) is defined in runs_stability.py.
"""
from __future__ import annotations

if __name__ == "__main__":       # before numpy loads: one BLAS thread (threads only contend on a shared machine)
    import os
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import importlib
import json
import math
from pathlib import Path
from typing import Any

from . import derived
from .derived import TEXT_FILE
from .schedule import Schedule

OUTPUT = "data/train_runs.json"


GROUPS = tuple(d for d in derived.DERIVED if d.group)    # (derived.py lists them: see run_group)

BASELINE = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8,
            "num_key_value_heads": 8, "intermediate_size": 688, "vocab_size": 2048, "tie_word_embeddings": True,
            "rms_norm_eps": 1e-5}
LIVE: dict[str, Any] = {"d_model": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "d_ff": 172}   # + vocab_size
BATCH, SEQ, SEED = 4, 32, 0
BASELINE_STEPS, EVAL_EVERY = 300, 25
RACE_STEPS = 120
RACE_LR = {"sgd": 0.5, "adam": 3e-3, "adamw": 3e-3, "muon": 3e-3}    # each optimiser's usual lr here
RACE_MULTIPLIERS = (-3, -2, -1, 0, 1, 2, 3)                           # lr x 3^k
ADAMW = (("b1", 0.9), ("b2", 0.95), ("eps", 1e-8), ("weight_decay", 0.1))
HYPER = {"sgd": (("momentum", 0.9),), "adam": (("b1", 0.9), ("b2", 0.95), ("eps", 1e-8)), "adamw": ADAMW,
         "muon": (("momentum", 0.95), ("weight_decay", 0.1))}


def sig(x: float, digits: int = 6) -> float | None:
    """x to `digits` significant digits (JSON stays small); None for inf/nan (a diverged run)."""
    if not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def baseline_specs(vocab_size: int):
    from .model import ModelConfig
    from .trainer import RunSpec
    cfg = ModelConfig.from_hf(BASELINE)
    assert vocab_size <= cfg.vocab_size, (vocab_size, cfg.vocab_size)
    return {f"warmup{w}": RunSpec(model=cfg, optimizer="adamw", hyper=ADAMW,
                                  schedule=Schedule("cosine", 3e-3, BASELINE_STEPS, w, 0.1),
                                  batch_size=BATCH, seq_len=SEQ, clip=1.0, seed=SEED)
            for w in (30, 0)}


def live_config(vocab_size: int):
    from .model import ModelConfig
    return ModelConfig(vocab_size=vocab_size, **LIVE).validate()


def race_spec(name: str, k: int, vocab_size: int):
    from .trainer import RunSpec
    lr = RACE_LR[name] * 3.0 ** k
    return RunSpec(model=live_config(vocab_size), optimizer=name, hyper=HYPER[name],
                   schedule=Schedule("cosine", lr, RACE_STEPS, 10, 0.1), batch_size=BATCH, seq_len=SEQ,
                   clip=1.0, seed=SEED)


def run(spec, train_ids, held_ids, steps: int, eval_every: int = 0, detail_first: bool = False) -> dict:
    """One run's record: loss, lr, grad norm and max attention logit per step; held-out loss every
    eval_every steps (and at the end); the first step's per-tensor diagnostics if asked. Stops at a
    non-finite loss (diverged_at)."""
    from .trainer import Trainer
    tr = Trainer(spec, train_ids)
    out = {"spec": spec.to_json(), "loss": [], "lr": [], "grad_norm": [], "max_attn_logit": [],
           "eval_step": [], "eval_loss": [], "diverged_at": None}
    for s in range(steps):
        d = tr.step(detail=detail_first and s == 0)
        if s == 0 and detail_first:
            out["first_step"] = {"update_ratio": {k: sig(v) for k, v in d["update_ratio"].items()},
                                 "grad_norms": {k: sig(v) for k, v in d["grad_norms"].items()}}
        out["loss"].append(sig(d["loss"]))
        out["lr"].append(sig(d["lr"]))
        out["grad_norm"].append(sig(d["grad_norm"]))
        out["max_attn_logit"].append(sig(d["max_attn_logit"]))
        if not math.isfinite(d["loss"]):
            out["diverged_at"] = d["step"]
            break
        if eval_every and (d["step"] % eval_every == 0 or d["step"] == steps):
            out["eval_step"].append(d["step"])
            out["eval_loss"].append(sig(tr.evaluate(held_ids)))
    return out


def compute(text: str, inputs_sha256: str, progress=None) -> dict:
    import numpy as np

    from .data import course_ids
    tok, train_ids, held_ids = course_ids(text)
    result: dict[str, Any] = {
        "inputs_sha256": inputs_sha256,
        "text": {"file": TEXT_FILE, "characters": len(text), "vocab_size": tok.vocab_size,
                 "train_tokens": int(len(train_ids)), "held_out_tokens": int(len(held_ids))},
        "baseline": {}, "race": {"steps": RACE_STEPS, "lr": RACE_LR, "multipliers": list(RACE_MULTIPLIERS), "runs": {}}}
    with np.errstate(over="ignore", invalid="ignore"):
        for name, spec in baseline_specs(tok.vocab_size).items():
            if progress:
                progress(f"baseline {name}")
            result["baseline"][name] = run(spec, train_ids, held_ids, BASELINE_STEPS, EVAL_EVERY, True)
        for name in RACE_LR:
            for k in RACE_MULTIPLIERS:
                if progress:
                    progress(f"race {name} lr x 3^{k}")
                r = run(race_spec(name, k, tok.vocab_size), train_ids, held_ids, RACE_STEPS, RACE_STEPS)
                result["race"]["runs"][f"{name}:{k}"] = {key: r[key] for key in
                                                         ("loss", "eval_loss", "diverged_at")}
                result["race"]["runs"][f"{name}:{k}"]["lr"] = r["spec"]["schedule"]["peak"]
    return result


def group(name: str) -> derived.Derived:
    for g in GROUPS:
        if g.group == name:
            return g
    raise ValueError(f"group: expected one of {[g.group for g in GROUPS]}, got {name!r}")


def inputs_hash(root: Path, name: str = "optimization") -> str:
    """The sha256 over the group's inputs (derived.provenance: the text, the baseline config, the trainer's code)."""
    return derived.provenance(group(name), root)["inputs_sha256"]


def _compute_of(g: derived.Derived):
    module, fn = g.compute.split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), fn)


def main(argv=None) -> int:
    import argparse
    import sys
    import time
    ap = argparse.ArgumentParser(prog="python -m experiments.train.runs", description=__doc__.split("\n")[0])
    ap.add_argument("--force", action="store_true", help="recompute even if the inputs are unchanged")
    ap.add_argument("--group", choices=[g.group for g in GROUPS], action="append",
                    help="only this group (repeatable; default: every group)")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    args = ap.parse_args(argv)
    root = Path(args.root)
    for g in GROUPS:
        if args.group and g.group not in args.group:
            continue
        prov = derived.provenance(g, root)
        digest = prov["inputs_sha256"]
        out = root / g.output
        if out.exists() and not args.force:
            try:
                if json.loads(out.read_text(encoding="utf-8")).get("inputs_sha256") == digest:
                    print(f"{g.output}: up to date (inputs {digest[:12]})")
                    continue
            except json.JSONDecodeError:
                pass
        t0 = time.time()
        result = _compute_of(g)((root / TEXT_FILE).read_text(encoding="utf-8"), digest,
                                progress=lambda msg, t0=t0: print(f"  {time.time() - t0:6.0f} s  {msg}",
                                                                  file=sys.stderr, flush=True))
        result["inputs"] = prov["inputs"]
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(result, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        tmp.replace(out)
        print(f"{g.output}: written in {time.time() - t0:.0f} s (inputs {digest[:12]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
