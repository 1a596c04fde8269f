"""Optimisers: SGD with momentum, Adam, AdamW and Muon, over a dict of named numpy arrays, updated in place.

Formulas (t counts steps from 1, g is the gradient, lr the step's learning rate from the schedule):
- SGD with momentum (PyTorch's form, no dampening): b <- mu b + g; theta <- theta - lr b.
- Adam (Kingma & Ba, arXiv 1412.6980): m <- b1 m + (1 - b1) g; v <- b2 v + (1 - b2) g^2;
  theta <- theta - lr m_hat / (sqrt(v_hat) + eps), m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t).
  Its weight_decay is L2, added to the gradient (g <- g + wd theta), as torch.optim.Adam does.
- AdamW (Loshchilov & Hutter, arXiv 1711.05101): Adam with the decay taken out of the gradient,
  theta <- theta (1 - lr wd), applied only to the tensors `decays` selects (the matrices, ndim >= 2: the
  projections and the tied embedding; not the RMSNorm gains).
- Muon (Keller Jordan, "Muon: An optimizer for hidden layers", 2024; Moonshot AI, "Muon is Scalable for LLM
  Training", arXiv 2502.16982): for each 2-D hidden matrix (not the embedding/head) b <- mu b + g, Nesterov
  u = g + mu b, O = NewtonSchulz5(u) ~ the orthogonal factor U V^T of u's SVD; then Moonshot's form
  theta <- theta (1 - lr wd) - lr * 0.2 sqrt(max(A, B)) * O for an A x B matrix, so that the update's RMS is
  ~0.2 like AdamW's and AdamW's lr and wd carry over. Every other tensor is updated by AdamW with the same lr.
  Newton-Schulz: X <- G / ||G||_F, then 5 times X <- a X + (b A + c A^2) X with A = X X^T and the quintic
  coefficients (a, b, c) = (3.4445, -4.7750, 2.0315), on the wide orientation (rows <= columns).

Each optimiser's step(params, grads, lr) returns the update it applied to each tensor (theta_new - theta_old),
from which the trainer reports |update| / |weight| per tensor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import kernels as _kernels

NS_COEFFS = (3.4445, -4.7750, 2.0315)
MUON_RMS = 0.2


def decays(name: str, p: np.ndarray) -> bool:
    """AdamW decays matrices (ndim >= 2), not the RMSNorm gains."""
    return p.ndim >= 2


def is_hidden_matrix(name: str, p: np.ndarray) -> bool:
    """Muon's tensors: 2-D weights inside the layers. The embedding (here also the tied head) stays on AdamW."""
    return p.ndim == 2 and not name.startswith(("embed_tokens", "lm_head"))


def newton_schulz(G: np.ndarray, steps: int = 5, kernels=None, eps: float = 1e-7) -> np.ndarray:
    """An approximately orthogonal matrix with G's singular vectors (singular values pushed to ~0.7-1.2)."""
    K = _kernels.get(kernels)
    a, b, c = NS_COEFFS
    tall = G.shape[0] > G.shape[1]
    X = G.T if tall else G
    X = X / (np.sqrt(np.sum(X * X)) + eps)
    for _ in range(steps):
        A = K.mm(X, X.T)
        X = a * X + K.mm(b * A + c * K.mm(A, A), X)
    return np.ascontiguousarray(X.T if tall else X)


@dataclass
class SGD:
    momentum: float = 0.9
    weight_decay: float = 0.0
    name: str = "sgd"
    state: dict = field(default_factory=dict)
    t: int = 0

    def step(self, params, grads, lr):
        self.t += 1
        updates = {}
        for k, p in params.items():
            g = grads[k]
            if self.weight_decay:
                g = g + self.weight_decay * p
            buf = self.state.get(k)
            buf = g.copy() if buf is None else self.momentum * buf + g
            self.state[k] = buf
            u = -lr * buf
            p += u
            updates[k] = u
        return updates

    def state_bytes(self, params) -> int:
        return sum(int(p.nbytes) for p in params.values()) if self.momentum else 0


@dataclass
class Adam:
    b1: float = 0.9
    b2: float = 0.95
    eps: float = 1e-8
    weight_decay: float = 0.0
    decoupled: bool = False
    name: str = "adam"
    state: dict = field(default_factory=dict)
    t: int = 0

    def _adam(self, k, p, g, lr, t):
        if self.weight_decay and not self.decoupled:
            g = g + self.weight_decay * p                       # L2: the decay goes through m and v
        m, v = self.state.get(k, (None, None))
        if m is None:
            m, v = np.zeros_like(p), np.zeros_like(p)
        m = self.b1 * m + (1 - self.b1) * g
        v = self.b2 * v + (1 - self.b2) * (g * g)
        self.state[k] = (m, v)
        m_hat = m / (1 - self.b1 ** t)
        v_hat = v / (1 - self.b2 ** t)
        u = -lr * m_hat / (np.sqrt(v_hat) + self.eps)
        if self.decoupled and self.weight_decay and decays(k, p):
            u = u - (lr * self.weight_decay) * p                # AdamW: theta (1 - lr wd), outside m and v
        return u.astype(p.dtype, copy=False)

    def step(self, params, grads, lr):
        self.t += 1
        updates = {}
        for k, p in params.items():
            u = self._adam(k, p, grads[k], lr, self.t)
            p += u
            updates[k] = u
        return updates

    def state_bytes(self, params) -> int:
        return 2 * sum(int(p.nbytes) for p in params.values())


def AdamW(b1=0.9, b2=0.95, eps=1e-8, weight_decay=0.1):
    return Adam(b1=b1, b2=b2, eps=eps, weight_decay=weight_decay, decoupled=True, name="adamw")


@dataclass
class Muon:
    momentum: float = 0.95
    nesterov: bool = True
    ns_steps: int = 5
    weight_decay: float = 0.1
    adamw: Adam = field(default_factory=AdamW)
    kernels: object = None
    name: str = "muon"
    state: dict = field(default_factory=dict)
    t: int = 0

    def step(self, params, grads, lr):
        self.t += 1
        self.adamw.t = self.t
        updates = {}
        for k, p in params.items():
            g = grads[k]
            if not is_hidden_matrix(k, p):
                u = self.adamw._adam(k, p, g, lr, self.t)
            else:
                buf = self.state.get(k)
                buf = g.copy() if buf is None else self.momentum * buf + g
                self.state[k] = buf
                d = g + self.momentum * buf if self.nesterov else buf
                ortho = newton_schulz(d, self.ns_steps, self.kernels)
                scale = MUON_RMS * math.sqrt(max(p.shape))
                u = (-(lr * scale) * ortho - (lr * self.weight_decay) * p).astype(p.dtype, copy=False)
            p += u
            updates[k] = u
        return updates

    def state_bytes(self, params) -> int:
        return sum(int(p.nbytes) * (1 if is_hidden_matrix(k, p) else 2) for k, p in params.items())


NAMES = ("sgd", "adam", "adamw", "muon")


def make(name: str, **hyper):
    """An optimiser by name with its hyperparameters (unknown names or keys raise ValueError)."""
    builders: dict[str, Any] = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "muon": Muon}
    if name not in builders:
        raise ValueError(f"optimizer: expected one of {list(NAMES)}, got {name!r}")
    try:
        return builders[name](**hyper)
    except TypeError as e:
        raise ValueError(f"optimizer {name!r}: {e}") from None
