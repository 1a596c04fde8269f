"""The bytes one step of the course's numpy trainer really holds: parameters, gradients, optimiser state and the
activations its forward pass keeps for the backward pass, counted array by array (``ndarray.nbytes``).

What is counted is what the trainer's own functions return: ``model.init_params`` (the parameters),
``model.loss_and_grads`` (one gradient per parameter), the optimiser's state after ``optimizer.step`` (AdamW: m
and v per tensor), and ``model.forward(..., keep=True)``'s cache (every array the backward pass reads, each
counted once even where two keys name it) plus the logits and the softmax ``model.cross_entropy`` returns, and the
targets. ``peak_step_bytes`` is Python's tracemalloc peak over the second of two steps (numpy reports its buffers
to it; tracing starts before the parameters exist, so everything the step holds is in it): the held arrays plus
every temporary alive at the worst moment, which is why a measured peak exceeds the ledger.

``ledger_setup`` is the training-memory ledger's setting that describes this trainer (experiments/ledger/
training.py): fp32 weights, gradients and AdamW state, fp32 activations, the score matrix kept (no fused
kernel), no dropout. tests/test_train_memory.py holds the two equal, tensor by tensor.
"""
from __future__ import annotations

import tracemalloc

import numpy as np

from ..ledger.training import TrainSetup
from . import model as M
from . import optim as O

# the forward cache's names, as the training-memory ledger's item keys (per layer, then the whole step's)
LAYER_KEYS = {"n1.0": "norm1/input", "n1.1": "norm1/rstd", "h1": "attn/in", "qr": "attn/q", "kr": "attn/k",
              "v": "attn/v", "P": "attn/scores", "att": "attn/o_in", "n2.0": "norm2/input", "n2.1": "norm2/rstd",
              "h2": "ffn/in", "a": "ffn/gate", "b": "ffn/up", "sa": "ffn/act", "m": "ffn/product"}
STEP_KEYS = {"nf.0": "loss/final_norm/input", "nf.1": "loss/final_norm/rstd", "hf": "loss/head_in",
             "logits": "loss/logits", "probs": "loss/softmax_fp32", "ids": "loss/token_ids",
             "targets": "loss/token_ids", "cos": "loss/rope_tables", "sin": "loss/rope_tables"}


def ledger_setup(batch_size: int, seq_len: int) -> TrainSetup:
    return TrainSetup(recipe="fp32_adamw", micro_batch=batch_size, seq_len=seq_len, kernel="eager", dropout=False,
                      norm_stats=True, act_bytes=4)


def _arrays(value, name: str):
    """(name, array) for every array in a cache value (tuples are numbered: n1.0, n1.1)."""
    if isinstance(value, np.ndarray):
        yield name, value
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _arrays(v, f"{name}.{i}")


def saved_activations(params, ids, targets, cfg: M.ModelConfig, kernels=None) -> dict[str, int]:
    """Bytes of every array the step keeps for its backward pass, by the ledger's keys (the per-layer ones
    summed over the layers); an array named twice is counted once."""
    logits, _, cache = M.forward(params, ids, cfg, kernels, keep=True)
    t = np.asarray(targets).reshape(-1).astype(np.int64)
    _, probs = M.cross_entropy(logits, t)
    seen: set[int] = set()
    out: dict[str, int] = {}

    def add(key: str, array: np.ndarray):
        if id(array) in seen:
            return
        seen.add(id(array))
        out[key] = out.get(key, 0) + int(array.nbytes)

    for layer in cache["layers"]:
        for name, value in layer.items():
            for sub, array in _arrays(value, name):
                add("activations/full_attention/" + LAYER_KEYS[sub], array)
    step = {"nf": cache["nf"], "hf": cache["hf"], "logits": logits, "probs": probs, "ids": cache["ids"],
            "targets": t, "cos": cache["tables"][2], "sin": cache["tables"][3]}
    for name, value in step.items():
        for sub, array in _arrays(value, name):
            add(STEP_KEYS[sub], array)
    return out


def measure_step(cfg: M.ModelConfig, batch_size: int, seq_len: int, optimizer: str = "adamw", seed: int = 0,
                 kernels=None, peak: bool = True) -> dict:
    """One real step on random token ids: the bytes of parameters, gradients, optimiser state, saved activations
    (by tensor), and the tracemalloc peak of the whole step. Plain ints, JSON-ready."""
    if peak:
        tracemalloc.start()
    params = M.init_params(cfg, seed=seed)
    rng = np.random.default_rng(seed + 1)
    ids = rng.integers(0, cfg.vocab_size, size=(2, batch_size, seq_len + 1), dtype=np.int64)
    opt = O.make(optimizer)
    for step, batch in enumerate(ids):        # the second step is measured: the optimiser's state exists then
        x, y = batch[:, :-1], batch[:, 1:]
        if step == 1 and peak:
            tracemalloc.reset_peak()
        loss, grads, _ = M.loss_and_grads(params, x, y, cfg, kernels)
        grad_bytes = sum(int(g.nbytes) for g in grads.values())
        opt.step(params, grads, 1e-3)
        del grads
    peak_bytes = 0
    if peak:
        peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    acts = saved_activations(params, x, y, cfg, kernels)
    state_arrays = [a for v in opt.state.values() for a in (v if isinstance(v, tuple) else (v,))]
    return {"params": M.count_params(params), "param_bytes": sum(int(p.nbytes) for p in params.values()),
            "grad_bytes": grad_bytes, "optimizer_bytes": sum(int(a.nbytes) for a in state_arrays),
            "activations": acts, "activation_bytes": sum(acts.values()), "peak_step_bytes": peak_bytes,
            "loss": float(loss), "batch_size": batch_size, "seq_len": seq_len}


# -- the recorded measurement (data/train_memory.json), which the build reads --------------------------------------
OUTPUT = "data/train_memory.json"
RECORDED = {"baseline": (4, 32)}      # the course baseline's step at batch 4 x 32 tokens (the page's default)


def record(config: dict) -> dict:
    """The document ``python -m experiments.train.memory`` writes: each recorded size's measured step, and the
    platform it was measured on (the peak depends on numpy's temporaries; the held bytes do not)."""
    import platform
    cfg = M.ModelConfig.from_hf(config)
    out: dict = {"platform": f"CPython {platform.python_version()}, numpy {np.__version__}"}
    for name, (b, s) in RECORDED.items():
        step = measure_step(cfg, b, s)
        step["activations"] = {k.replace("/", "."): v for k, v in step["activations"].items()}   # (paths use /)
        out[name] = step
    return out


def main(argv=None) -> int:
    import argparse
    import json
    from pathlib import Path
    ap = argparse.ArgumentParser(prog="python -m experiments.train.memory", description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    root = Path(ap.parse_args(argv).root)
    from . import derived
    config = json.loads((root / derived.BASELINE_CONFIG).read_text(encoding="utf-8"))
    doc = {**derived.provenance(derived.derived(OUTPUT), root), **record(config)}
    out = root / OUTPUT
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{OUTPUT}: written ({doc['platform']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
