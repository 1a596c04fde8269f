"""The matrix products the trainer is made of, chosen per platform.

Every weight product in the model is a 2-D token x width product (tokens N = batch x sequence, weights stored
(out, in) as nn.Linear keeps them), and every attention product is a batched 4-D one (batch, heads, T, head_dim).
numpy under Pyodide is wasm32 without BLAS: there its einsum loop does the 2-D products 1.4-6.5x faster than
`@`, while `@` stays faster for the batched ones. Natively `@` calls BLAS and is 3-5x faster than einsum
(measured on this machine; see the course's reference notes). The two choices give the same numbers within
float32 rounding; tests/test_train_model.py checks that.

    x_wT(x, w)    x @ w.T    (N, in), (out, in) -> (N, out)     forward of a linear layer
    dy_w(dy, w)   dy @ w     (N, out), (out, in) -> (N, in)     its input gradient
    dyT_x(dy, x)  dy.T @ x   (N, out), (N, in) -> (out, in)     its weight gradient
    mm(a, b)      a @ b      2-D by 2-D                         Muon's Newton-Schulz iteration
Batched attention products are always `@` (Kernels.bmm).
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Kernels:
    name: str
    x_wT: Callable
    dy_w: Callable
    dyT_x: Callable
    mm: Callable          # a @ b for two 2-D matrices (Newton-Schulz in Muon)

    @staticmethod
    def bmm(a, b):
        return a @ b


EINSUM = Kernels(
    "einsum",
    lambda x, w: np.einsum("ti,oi->to", x, w),
    lambda dy, w: np.einsum("to,oi->ti", dy, w),
    lambda dy, x: np.einsum("to,ti->oi", dy, x),
    lambda a, b: np.einsum("ij,jk->ik", a, b),
)

MATMUL = Kernels(
    "matmul",
    lambda x, w: x @ w.T,
    lambda dy, w: dy @ w,
    lambda dy, x: dy.T @ x,
    lambda a, b: a @ b,
)

BY_NAME = {k.name: k for k in (EINSUM, MATMUL)}


def for_platform(platform: str | None = None) -> Kernels:
    """einsum in the browser (Pyodide reports sys.platform 'emscripten'), BLAS matmul everywhere else."""
    return EINSUM if (platform or sys.platform) == "emscripten" else MATMUL


def get(kernels: Kernels | str | None) -> Kernels:
    if kernels is None:
        return for_platform()
    if isinstance(kernels, Kernels):
        return kernels
    if kernels not in BY_NAME:
        raise ValueError(f"kernels: expected one of {sorted(BY_NAME)}, got {kernels!r}")
    return BY_NAME[kernels]
