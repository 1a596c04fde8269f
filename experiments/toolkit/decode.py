"""Decode arithmetic: bytes per weight, and the weights one decode step of B tokens must read.

A decode step multiplies every weight matrix with the step's tokens, so it reads each weight once per step, not
per token; the embedding table is only looked up. A routed expert is read only if some token of the step chose
it: with uniform independent routing, B tokens that each pick k of E experts touch E·(1 − (1 − k/E)^B) of them
per MoE layer (``StepWeights.touched_extra``). Counts come from the ledger engine (views.matmul_weights).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..ledger import views

TERA = 10**12
DTYPES = tuple(views.DTYPE_BITS)


def dtype_bytes(dtype: str) -> Fraction:
    """Bytes per weight of a precision the engine knows (views.DTYPE_BITS); a ValueError in Chinese otherwise."""
    if dtype not in views.DTYPE_BITS:
        raise ValueError(f"精度 {dtype!r} 未知（可选：{'、'.join(DTYPES)}）")
    return Fraction(views.DTYPE_BITS[dtype], 8)


@dataclass(frozen=True)
class StepWeights:
    """The weight matmuls of one decode step, counted once per ledger: all of them and one token's active share
    (top-k of the routed experts), for the whole text model and for its FFN; E experts, top-k."""
    all: int
    active: int
    ffn_all: int
    ffn_active: int
    E: int
    k: int

    def touched_extra(self, batch: int) -> Fraction:
        """Routed-expert weights read per decode step beyond one token's top-k, as a fraction of (all − top-k):
        with uniform independent routing a step of `batch` tokens touches E·(1 − (1 − k/E)^batch) experts per
        layer."""
        E, k = self.E, self.k
        if not E or k >= E:
            return Fraction(0)
        touched = E * (1 - (1 - Fraction(k, E)) ** batch)
        return (touched - k) / (E - k)

    def read(self, batch: int) -> Fraction:
        """Weights a step of `batch` tokens must read."""
        return self.active + (self.all - self.active) * self.touched_extra(batch)

    def ffn_read(self, batch: int) -> Fraction:
        return self.ffn_active + (self.ffn_all - self.ffn_active) * self.touched_extra(batch)


def step_weights(ledger) -> StepWeights:
    """The StepWeights of a ledger (E and k from its MoE facts; 0 for a dense model)."""
    moe = ledger.arch.moe
    in_ffn = lambda kinds: "ffn" in kinds  # noqa: E731
    return StepWeights(views.matmul_weights(ledger, active=False), views.matmul_weights(ledger),
                       views.matmul_weights(ledger, in_ffn, active=False), views.matmul_weights(ledger, in_ffn),
                       moe.n_experts if moe else 0, moe.top_k if moe else 0)
