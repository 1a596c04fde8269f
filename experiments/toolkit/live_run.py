"""A training run in the page, advanced a few steps per request: the one loop C2's speaker and C3's mask switch
share (each keeps its own sessions and its own stopping point). A step's loss is reported as a number and as the
text the page shows ("—" once it is not finite), and the run stops at the first non-finite loss."""
from __future__ import annotations

import math

MAX_STEPS_PER_CALL = 10     # bounded work per request: the page asks again for more


def loss_text(x) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.3f}"


def advance(trainer, steps: int, last_step: int) -> dict:
    """`steps` more steps of `trainer` (at least 1, at most MAX_STEPS_PER_CALL, never past `last_step`): each
    step's number, loss and loss text, and whether the run is done (at its last step or diverged)."""
    import numpy as np
    out: list[dict] = []
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(max(1, min(int(steps), MAX_STEPS_PER_CALL))):
            if trainer.step_index >= last_step:
                break
            d = trainer.step(detail=False)
            finite = math.isfinite(d["loss"])
            out.append({"step": d["step"], "loss": d["loss"] if finite else None, "loss_text": loss_text(d["loss"])})
            if not finite:
                break
    return {"steps": out, "done": trainer.step_index >= last_step or not out or out[-1]["loss"] is None}
