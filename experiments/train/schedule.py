"""Learning-rate schedules: lr at step s (0-based) of S steps, for a peak lr.

- constant: the peak throughout (after the warmup, if any).
- cosine: linear warmup to the peak over `warmup` steps (lr = peak (s+1)/warmup), then a half cosine from the
  peak down to min_ratio x peak at the last step (Llama 2: 2,000 warmup steps, down to 10% of the peak).
- wsd (warmup-stable-decay; Hu et al., MiniCPM, arXiv 2404.06395): warmup, the peak held, then a linear decay
  to min_ratio x peak over the last decay_fraction of the steps.
- multistep (DeepSeek LLM, arXiv 2401.02954 section 3.1): warmup, the peak until 80% of the steps, 31.6% of it
  until 90%, then 10%.
- minimind (jingyaogong/minimind's train scripts): lr = peak (0.1 + 0.45 (1 + cos(pi s / S))), no warmup; it
  runs from 100% down to 10% of the peak.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

KINDS = ("constant", "cosine", "wsd", "multistep", "minimind")


@dataclass(frozen=True)
class Schedule:
    kind: str = "cosine"
    peak: float = 3e-3
    total: int = 300
    warmup: int = 20
    min_ratio: float = 0.1
    decay_fraction: float = 0.2

    def validate(self) -> Schedule:
        problems = []
        if self.kind not in KINDS:
            problems.append(f"kind: expected one of {list(KINDS)}, got {self.kind!r}")
        if not (isinstance(self.total, int) and self.total > 0):
            problems.append(f"total: expected a positive integer, got {self.total!r}")
        if not (isinstance(self.warmup, int) and 0 <= self.warmup):
            problems.append(f"warmup: expected a non-negative integer, got {self.warmup!r}")
        if not (self.peak > 0 and math.isfinite(self.peak)):
            problems.append(f"peak: expected a positive number, got {self.peak!r}")
        if not 0 <= self.min_ratio <= 1:
            problems.append(f"min_ratio: expected a number in [0, 1], got {self.min_ratio!r}")
        if not 0 < self.decay_fraction <= 1:
            problems.append(f"decay_fraction: expected a number in (0, 1], got {self.decay_fraction!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def lr(self, s: int) -> float:
        S, W, peak, low = self.total, self.warmup, self.peak, self.min_ratio * self.peak
        if self.kind == "minimind":
            return peak * (0.1 + 0.45 * (1 + math.cos(math.pi * s / S)))
        if s < W:
            return peak * (s + 1) / W
        if self.kind == "constant":
            return peak
        if self.kind == "cosine":
            span = max(S - 1 - W, 1)
            progress = min((s - W) / span, 1.0)
            return low + (peak - low) * 0.5 * (1 + math.cos(math.pi * progress))
        if self.kind == "wsd":
            decay_steps = max(round(self.decay_fraction * S), 1)
            start = S - decay_steps
            if s < start:
                return peak
            progress = min((s - start + 1) / decay_steps, 1.0)
            return peak + (low - peak) * progress
        # multistep
        if s < 0.8 * S:
            return peak
        if s < 0.9 * S:
            return peak * 0.316
        return peak * 0.1

    def curve(self) -> list[float]:
        return [self.lr(s) for s in range(self.total)]

    def to_json(self) -> dict:
        return asdict(self)
