"""Simulated ranks (chapter C10): one training step of the course's numpy trainer (experiments.train) split over k
ranks inside one process, the collectives written out as the ring algorithm does them, every byte a rank sends
counted, and the result set beside the same step run in one piece.

Three layouts, each one AdamW step (no gradient clipping, whose global norm would need one more scalar all-reduce)
in float64 on the trainer's small model:

- ``dp``: data parallelism. Rank r takes rows r·B/k … of the batch, runs the trainer's forward and backward on
  them (``model.loss_and_grads``: the mean over its rows), and every gradient is all-reduced (a ring
  reduce-scatter, then a ring all-gather) and divided by k; each rank then runs the same AdamW on its full copy.
- ``zero3``: ZeRO stage 3 (Rajbhandari et al. 2020, arXiv 1910.02054; PyTorch FSDP2 shards each tensor along its
  first axis the same way). Rank r keeps rows r·n/k … of every tensor, and AdamW's m and v for those rows only.
  For its batch rows it all-gathers the weights for the forward pass and again for the backward pass (the
  trainer's forward and backward are one function here, so the second gather's weights are the ones it runs
  with; the first gather is checked equal to them), then reduce-scatters the gradients, divides its shard by k
  and updates it.
- ``tp``: Megatron-LM tensor parallelism (Shoeybi et al. 2019, arXiv 1909.08053, section 3). Rank r keeps the
  q/k/v rows of heads r·H/k …, the matching columns of o_proj, rows r·F/k … of gate_proj and up_proj and those
  columns of down_proj; embedding and norms are kept whole on every rank. Every rank sees the whole batch; the
  attention's and the FFN's outputs are partial sums, all-reduced in the forward pass, and so are the gradients
  of their inputs in the backward pass: 4 all-reduces of N·d values per layer (N = B·T token rows). The trainer's
  own attention and FFN functions run on the shards (a shard is an attention with H/k heads, a SwiGLU of width
  F/k); the layer loop with the collectives between them is written here (pre-LN, the baseline's options only).

The ring (Patarasuk & Yuan 2009; toolkit/parallel.py's ``collective_bytes``): a buffer is cut along its first axis
into k chunks; in reduce-scatter's k - 1 steps rank r sends its running sum of chunk (r - s - 1) mod k to rank
r + 1, which adds it to its own, so rank r ends with the sum of chunk r; in all-gather's k - 1 steps rank r passes
chunk (r - s) mod k on. Each rank sends (k - 1)/k of the buffer per reduce-scatter or all-gather, 2(k - 1)/k per
all-reduce; the sums are added in ring order, so they equal one process's to float64 rounding, not bit for bit.
Every count is a Python int; the token ids are the UTF-8 bytes of a fixed text (the small model's vocabulary is
the 256 byte values). No I/O.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..train import kernels as _kernels
from ..train import model as M
from ..train.optim import AdamW
from .parallel import collective_bytes

LAYOUTS = ("dp", "zero3", "tp")
RANKS = (1, 2, 4)
SMALL = M.ModelConfig(n_kv_heads=4)   # d 64, 2 layers, 4 heads with their own k/v (MHA), d_ff 172, 256 bytes
BATCH, SEQ = 4, 32
LR = 1e-3
TEXT = "小明把苹果给了小王。小王把苹果分给了小红和小刚，大家一起吃。" * 8


@dataclass
class Ring:
    """k ranks and the bytes each has sent, by what the collective was for."""
    k: int
    sent: dict[str, list[int]] = field(default_factory=dict)

    def count(self, what: str, rank: int, arr: np.ndarray) -> None:
        self.sent.setdefault(what, [0] * self.k)[rank] += int(arr.nbytes)

    def reduce_scatter(self, what: str, bufs: list[np.ndarray]) -> list[np.ndarray]:
        """The sum over ranks, chunk r ending on rank r (bufs: one array per rank, the same shape)."""
        k = self.k
        acc = [list(np.split(b.copy(), k, axis=0)) for b in bufs]
        for s in range(k - 1):
            msgs = []
            for r in range(k):
                j = (r - s - 1) % k
                self.count(what, r, acc[r][j])
                msgs.append(((r + 1) % k, j, acc[r][j]))
            for dst, j, data in msgs:
                acc[dst][j] = acc[dst][j] + data
        return [acc[r][r] for r in range(k)]

    def all_gather(self, what: str, chunks: list[np.ndarray]) -> list[np.ndarray]:
        """Every rank's copy of the concatenation of the ranks' chunks (chunk r from rank r)."""
        k = self.k
        have = [{r: chunks[r]} for r in range(k)]
        for s in range(k - 1):
            msgs = []
            for r in range(k):
                j = (r - s) % k
                self.count(what, r, have[r][j])
                msgs.append(((r + 1) % k, j, have[r][j]))
            for dst, j, data in msgs:
                have[dst][j] = data.copy()
        return [np.concatenate([have[r][j] for j in range(k)], axis=0) for r in range(k)]

    def all_reduce(self, what: str, bufs: list[np.ndarray]) -> list[np.ndarray]:
        return self.all_gather(what, self.reduce_scatter(what, bufs))

    def per_rank(self) -> list[int]:
        return [sum(v[r] for v in self.sent.values()) for r in range(self.k)]


def problems(layout: str, k: int, cfg: M.ModelConfig = SMALL, batch: int = BATCH, seq: int = SEQ) -> list[str]:
    """What does not divide (in Chinese, for the page): a layout splits the batch, the tensors' first axes or the
    heads and the FFN width k ways."""
    if layout not in LAYOUTS:
        return [f"切法应为 {'、'.join(LAYOUTS)} 之一，实际是 {layout!r}"]
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 64:
        return [f"卡数应为 1 到 64 的整数，实际是 {k!r}"]
    need = {"dp": [("batch 的条数", batch), ("每张量第一维（宽度 d）", cfg.d_model), ("FFN 宽度", cfg.d_ff),
                   ("词表", cfg.vocab_size)],
            "zero3": [("batch 的条数", batch), ("每张量第一维（宽度 d）", cfg.d_model), ("FFN 宽度", cfg.d_ff),
                      ("词表", cfg.vocab_size)],
            "tp": [("注意力头数", cfg.n_heads), ("FFN 宽度", cfg.d_ff), ("token 行数 batch × 序列长", batch * seq)]}
    return [f"{name} {v} 不能被 {k} 整除" for name, v in need[layout] if v % k]


def token_batch(batch: int = BATCH, seq: int = SEQ) -> tuple[np.ndarray, np.ndarray]:
    """ids and targets (batch, seq): consecutive windows of the text's UTF-8 bytes, targets shifted by one."""
    data = np.frombuffer(TEXT.encode("utf-8"), dtype=np.uint8).astype(np.int64)
    if data.size < batch * seq + 1:
        raise ValueError(f"text too short for {batch} x {seq}")
    rows = np.stack([data[i * seq:(i + 1) * seq + 1] for i in range(batch)])
    return rows[:, :-1], rows[:, 1:]


def _adamw_step(params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    opt = AdamW()
    out = {name: p.copy() for name, p in params.items()}
    opt.step(out, grads, LR)
    return out


def single_step(cfg: M.ModelConfig = SMALL, seed: int = 0, batch: int = BATCH, seq: int = SEQ) -> dict:
    """The step in one piece: loss, gradients and the updated weights."""
    params = M.init_params(cfg, seed, dtype=np.float64)
    ids, targets = token_batch(batch, seq)
    loss, grads, _ = M.loss_and_grads(params, ids, targets, cfg)
    return {"params": params, "loss": loss, "grads": grads, "updated": _adamw_step(params, grads)}


def _rows(a: np.ndarray, k: int, r: int) -> np.ndarray:
    n = a.shape[0] // k
    return a[r * n:(r + 1) * n]


def _dp(params, ids, targets, cfg, k, ring):
    grads = [M.loss_and_grads(params, _rows(ids, k, r), _rows(targets, k, r), cfg)[1] for r in range(k)]
    summed = {name: ring.all_reduce("梯度 all-reduce", [g[name] for g in grads]) for name in params}
    per_rank = [{name: summed[name][r] / k for name in params} for r in range(k)]
    updated = [_adamw_step(params, g) for g in per_rank]
    held = [sum(int(p.size) for p in params.values())] * k
    return per_rank, updated, held


def _zero3(params, ids, targets, cfg, k, ring):
    shards = [{name: _rows(p, k, r) for name, p in params.items()} for r in range(k)]
    grads = []
    forward = {name: ring.all_gather("前向 all-gather 权重", [s[name] for s in shards]) for name in params}
    backward = {name: ring.all_gather("反向 all-gather 权重", [s[name] for s in shards]) for name in params}
    for r in range(k):
        full = {name: backward[name][r] for name in params}
        if any(not np.array_equal(forward[name][r], full[name]) for name in params):
            raise AssertionError("the two gathers differ")
        grads.append(M.loss_and_grads(full, _rows(ids, k, r), _rows(targets, k, r), cfg)[1])
    mine = {name: ring.reduce_scatter("梯度 reduce-scatter", [g[name] for g in grads]) for name in params}
    shard_grads = [{name: mine[name][r] / k for name in params} for r in range(k)]
    updated = [_adamw_step(shards[r], shard_grads[r]) for r in range(k)]
    held = [sum(int(p.size) for p in s.values()) for s in shards]
    return shard_grads, updated, held


# -- tensor parallelism --------------------------------------------------------------------------------------------
_COLS = ("self_attn.o_proj.weight", "mlp.down_proj.weight")                 # split along the input axis
_ROWS = ("self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
         "mlp.gate_proj.weight", "mlp.up_proj.weight")                        # split along the output axis


def tp_split(name: str) -> int | None:
    """The axis tensor parallelism splits a weight along (None: kept whole on every rank)."""
    if name.endswith(_ROWS):
        return 0
    if name.endswith(_COLS):
        return 1
    return None


def _tp_shards(params, k):
    out = []
    for r in range(k):
        shard = {}
        for name, p in params.items():
            axis = tp_split(name)
            shard[name] = p if axis is None else np.split(p, k, axis=axis)[r]
        out.append(shard)
    return out


def _tp(params, ids, targets, cfg, k, ring):
    if cfg.norm_position != "pre" or cfg.qk_norm or cfg.attn_softcap or cfg.logit_softcap or cfg.z_loss:
        raise ValueError("the tensor-parallel simulation runs the baseline block only (pre-LN, no variants)")
    K = _kernels.get(None)
    sh = _tp_shards(params, k)
    part = cfg.with_(d_model=cfg.d_model // k, n_heads=cfg.n_heads // k,     # one rank's heads: the same head_dim
                     n_kv_heads=cfg.n_kv_heads // k)
    B, T = ids.shape
    N, eps, dtype = B * T, cfg.rms_eps, np.float64
    # the attention's tables, as model.forward builds them
    cos, sin = M.rope_tables(T, cfg.head_dim, cfg.rope_base, dtype)
    mask = np.triu(np.full((T, T), -np.inf, dtype=dtype), k=1)
    tables = (B, T, cos, sin, dtype(math.sqrt(cfg.head_dim)), mask)
    flat = ids.reshape(-1)
    x = [params["embed_tokens.weight"][flat] for _ in range(k)]
    caches: list[list[dict]] = [[] for _ in range(k)]
    for i in range(cfg.n_layers):
        pre = f"layers.{i}."
        c: list[dict] = [{} for _ in range(k)]
        h1 = [M.rms_norm(x[r], params[pre + "input_layernorm.weight"], eps) for r in range(k)]
        for r in range(k):
            c[r]["n1"] = h1[r][1]
        outs = [M._attention(sh[r], pre, h1[r][0], part, K, tables, c[r])[0] for r in range(k)]
        outs = ring.all_reduce("前向 all-reduce", outs)
        x = [x[r] + outs[r] for r in range(k)]
        h2 = [M.rms_norm(x[r], params[pre + "post_attention_layernorm.weight"], eps) for r in range(k)]
        for r in range(k):
            c[r]["n2"] = h2[r][1]
        outs = ring.all_reduce("前向 all-reduce", [M._ffn(sh[r], pre, h2[r][0], K, c[r]) for r in range(k)])
        x = [x[r] + outs[r] for r in range(k)]
        for r in range(k):
            caches[r].append(c[r])
    g: list[dict] = [{} for _ in range(k)]
    dx = []
    for r in range(k):            # the head and the loss, whole on every rank (model.loss_and_grads' lines)
        hf, nf = M.rms_norm(x[r], params["norm.weight"], eps)
        logits = K.x_wT(hf, params["embed_tokens.weight"])
        _, probs = M.cross_entropy(logits, targets.reshape(-1))
        probs[np.arange(N), targets.reshape(-1)] -= 1
        dlogits = probs / N
        g[r]["embed_tokens.weight"] = K.dyT_x(dlogits, hf)
        d, g[r]["norm.weight"] = M.rms_norm_backward(K.dy_w(dlogits, params["embed_tokens.weight"]),
                                                     params["norm.weight"], nf)
        dx.append(d)
    for i in reversed(range(cfg.n_layers)):
        pre = f"layers.{i}."
        dh2 = ring.all_reduce("反向 all-reduce",
                              [M._ffn_backward(sh[r], pre, dx[r], K, caches[r][i], g[r]) for r in range(k)])
        for r in range(k):
            d2, g[r][pre + "post_attention_layernorm.weight"] = M.rms_norm_backward(
                dh2[r], params[pre + "post_attention_layernorm.weight"], caches[r][i]["n2"])
            dx[r] = dx[r] + d2
        dh1 = ring.all_reduce("反向 all-reduce", [M._attention_backward(sh[r], pre, dx[r], part, K, tables,
                                                                        caches[r][i], g[r]) for r in range(k)])
        for r in range(k):
            d1, g[r][pre + "input_layernorm.weight"] = M.rms_norm_backward(
                dh1[r], params[pre + "input_layernorm.weight"], caches[r][i]["n1"])
            dx[r] = dx[r] + d1
    for r in range(k):
        np.add.at(g[r]["embed_tokens.weight"], flat, dx[r])
    grads = [{name: g[r][name] for name in params} for r in range(k)]
    updated = [_adamw_step(sh[r], grads[r]) for r in range(k)]
    held = [sum(int(p.size) for p in s.values()) for s in sh]
    return grads, updated, held


def _assemble(layout: str, parts: list[dict[str, np.ndarray]], name: str) -> np.ndarray:
    """One tensor as a single process holds it, from the ranks' pieces (rank 0's copy where every rank has all)."""
    if layout == "dp":
        return parts[0][name]
    if layout == "zero3":
        return np.concatenate([p[name] for p in parts], axis=0)
    axis = tp_split(name)
    return parts[0][name] if axis is None else np.concatenate([p[name] for p in parts], axis=axis)


def formula_bytes(layout: str, k: int, cfg: M.ModelConfig = SMALL, batch: int = BATCH, seq: int = SEQ,
                  elem: int = 8) -> Fraction:
    """What toolkit/parallel.py's formulas say one rank sends for this step (elem bytes per value): 2Ψ(k-1)/k for
    data parallelism, 3Ψ(k-1)/k for ZeRO-3, 4 all-reduces of N·d per layer for tensor parallelism."""
    psi = M.count_params(M.init_params(cfg, 0, dtype=np.float64)) if layout != "tp" else 0
    if layout == "dp":
        return collective_bytes("all_reduce", psi * elem, k)
    if layout == "zero3":
        return 3 * collective_bytes("all_gather", psi * elem, k)
    return 4 * cfg.n_layers * collective_bytes("all_reduce", batch * seq * cfg.d_model * elem, k)


def run(layout: str, k: int, cfg: M.ModelConfig = SMALL, seed: int = 0, batch: int = BATCH, seq: int = SEQ) -> dict:
    """One step over k simulated ranks beside the single-process step: each rank's gradients and updated weights
    (assembled where a rank holds a piece), the largest difference from the single step, the bytes each rank
    sent by collective, the parameters each rank holds, and the formula's bytes. A ValueError in Chinese naming
    what does not divide."""
    bad = problems(layout, k, cfg, batch, seq)
    if bad:
        raise ValueError("；".join(bad))
    one = single_step(cfg, seed, batch, seq)
    params = one["params"]
    ids, targets = token_batch(batch, seq)
    ring = Ring(k)
    grads, updated, held = {"dp": _dp, "zero3": _zero3, "tp": _tp}[layout](params, ids, targets, cfg, k, ring)
    grad_diff = max(float(np.max(np.abs(_assemble(layout, grads, n) - one["grads"][n]))) for n in params)
    weight_diff = max(float(np.max(np.abs(_assemble(layout, updated, n) - one["updated"][n]))) for n in params)
    if layout != "zero3":       # every rank holds whole copies of the replicated tensors: they must agree
        for n in params:
            if layout == "dp" or tp_split(n) is None:
                weight_diff = max(weight_diff, *(float(np.max(np.abs(u[n] - updated[0][n]))) for u in updated))
    return {"layout": layout, "k": k, "loss": one["loss"], "grad_diff": grad_diff, "weight_diff": weight_diff,
            "grad_scale": max(float(np.max(np.abs(g))) for g in one["grads"].values()),
            "sent": {what: list(v) for what, v in ring.sent.items()}, "per_rank": ring.per_rank(),
            "held": held, "params": M.count_params(params), "formula": formula_bytes(layout, k, cfg, batch, seq),
            "shards": [shard_summary(layout, k, r, cfg, batch) for r in range(k)]}


def shard_summary(layout: str, k: int, r: int, cfg: M.ModelConfig = SMALL, batch: int = BATCH) -> dict:
    """What rank r holds and computes on, as numbers: its batch rows, its heads and FFN columns (tp), its rows of
    every tensor (zero3)."""
    out: dict = {"rank": r}
    if layout in ("dp", "zero3"):
        n = batch // k
        out["batch"] = (r * n, (r + 1) * n)
    else:
        out["batch"] = (0, batch)
    if layout == "tp":
        h, f = cfg.n_heads // k, cfg.d_ff // k
        out["heads"] = (r * h, (r + 1) * h)
        out["ffn"] = (r * f, (r + 1) * f)
    if layout == "zero3":
        out["rows"] = Fraction(1, k)
    return out
