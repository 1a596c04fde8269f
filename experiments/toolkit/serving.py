"""Serving arithmetic (C14 推理): how long prefill and decode take on a device, where decode stops being limited
by memory bandwidth, how many sequences' KV cache fit beside the weights, and what quantization changes.

Every figure is a roofline (Williams, Waterman & Patterson 2009, "Roofline: an insightful visual performance model
for multicore architectures", CACM 52(4)): a step takes at least bytes moved / memory bandwidth and at least FLOPs /
peak FLOP/s, and the larger of the two is its time and names its bound. It is a lower bound, no kernel launch,
no overlap loss, no communication, one device. The decode and prefill bookkeeping follows Pope et al. 2022
(arXiv 2211.05102) and the Scaling Book's inference chapter (https://jax-ml.github.io/scaling-book/inference/):

- decode, batch B, each sequence with T cached tokens: one step reads every weight matrix the step's tokens touch
  once (toolkit.decode.StepWeights: all of a dense model; for an MoE, the top-k plus the expected further experts
  B tokens touch, E·(1 − (1 − k/E)^B) per MoE layer under uniform independent routing, as in C11) and the B
  sequences' KV cache (views.cache_bytes_per_sequence: min(T, window) tokens per layer plus any fixed recurrent
  state); it does B·(2·active matmul weights + attention score FLOPs at T) (views.param_flops_per_token,
  views.attention_score_flops). Every user gets one token per step: step time is the time per token a user
  waits; B / step time is the device's tokens per second.
- the crossover batch: the smallest B at which the step's FLOP time reaches its byte time. For a dense model at
  short context it is peak FLOP/s × bytes per weight / (2 × bandwidth) (Scaling Book: decode is bandwidth-bound
  below about that batch); the KV cache read, which grows with B·T, pushes it up, and can keep the step
  bandwidth-bound at every batch.
- prefill of B prompts of T tokens: weights read once (every expert touched, in practice), the cache written once,
  FLOPs B·(T·2·active weights + Σ_{t=1..T} score FLOPs at t): causal attention over the prompt.
- KV cache beside the weights: device bytes (what the driver reports, toolkit.devices) minus the weights'
  bytes, divided by one sequence's cache at T tokens, allocated in blocks of 16 tokens as vLLM's PagedAttention
  does (Kwon et al. 2023, arXiv 2309.06180; 16 is vLLM's default block size).
- paged KV memory (Kwon et al. 2023, §3 and §4.1): a server that reserves each request's cache for the longest
  context it may reach holds `reserved` tokens per sequence while the request uses `used` of them; PagedAttention
  allocates blocks of PAGE_TOKENS tokens as the sequence grows, so a sequence wastes at most one block's unused
  slots. `paging` weighs both on the bytes left beside the weights: sequences that fit and the share of the cache
  reserved but unused (the internal fragmentation and reservation of the paper's Fig. 3, with no external
  fragmentation counted: a lower bound of what contiguous reservation wastes).
- continuous batching (Yu et al. 2022, Orca, OSDI '22: iteration-level scheduling) against static batching, on a
  trace of requests with a prompt and an output length each (`trace`: seeded, uniform lengths, as Orca's own
  evaluation draws them; the bounds are this course's). Every request's prompt is prefilled before it decodes, the
  same work either way, so only decode steps are timed, each by the roofline above for the lengths its sequences
  have cached at that step (`StepClock`). Static batching takes the requests in order, `slots` at a time, and a
  batch runs until its longest output is done; a finished sequence's slot stays empty (and is timed as free, which
  favours static batching). Continuous batching refills a finished sequence's slot at the next step. With the cache
  reserved contiguously for the server's longest context, `slots` is also capped by the sequences whose
  reservation fits beside the weights; with paging (`paged=True`) a request takes, when it joins, the blocks of
  PAGE_TOKENS its prompt and output will fill (the server is assumed to know the output length, so it never runs
  short mid-request; vLLM instead takes blocks as the sequence grows and pauses requests when memory runs out,
  their blocks swapped to CPU memory or dropped and recomputed, Kwon et al. §4.5; not modelled), so more
  sequences share a step. `batching` reports tokens per second, the mean batch, the share of slot-steps left
  empty, and the gains.
- quantization: the weight matrices (views.matmul_weights; embedding table and norms stay in BF16) stored in
  BF16, FP8, INT8 or INT4. INT8 and INT4 carry one BF16 scale per group of g weights (GPTQ / AWQ style, g = 128
  by default): 16/g extra bits per weight, 0.125 bits at g = 128. FP8 here is per-tensor scaled (no group
  overhead). FP8 weights multiply on FP8 tensor cores; INT8/INT4 weights are weight-only, dequantized and
  multiplied at BF16 FLOP/s. The KV cache is stored in BF16 or FP8 (1 byte per element).

Counts stay exact (ints and Fractions); seconds are Fractions too, so the browser's Python gives the same digits.
"""
from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from ..ledger import views
from .decode import step_weights
from .devices import Device

SCHEMES = ("BF16", "FP8", "INT8", "INT4")     # weight storage this module weighs
GROUPED = ("INT8", "INT4")                    # schemes with a per-group scale
SCALE_BITS = 16                               # the group scale is stored in BF16
KV_BYTES = {"BF16": 2, "FP8": 1}              # bytes per cache element
PAGE_TOKENS = 16                              # vLLM's default KV block size, tokens
GROUP_SIZE = 128                              # weights sharing one BF16 scale in INT8 / INT4
CONTEXTS = (4096, 32768, 131072)              # the contexts the chapter weighs: 4K, 32K, 128K
MAX_BATCH = 2 ** 14                           # crossover search gives up beyond this batch (16,384)


def _check(scheme: str, kv: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"权重精度 {scheme!r} 未知（可选：{'、'.join(SCHEMES)}）")
    if kv not in KV_BYTES:
        raise ValueError(f"KV cache 精度 {kv!r} 未知（可选：{'、'.join(KV_BYTES)}）")


def bits_per_weight(scheme: str, group_size: int = GROUP_SIZE) -> Fraction:
    """Stored bits per weight of a matrix: the value's bits plus, for INT8/INT4, a BF16 scale shared by
    `group_size` weights."""
    _check(scheme, "BF16")
    bits = Fraction(views.DTYPE_BITS[scheme])
    if scheme in GROUPED:
        if group_size < 1:
            raise ValueError(f"分组大小应为正整数，实际是 {group_size!r}")
        bits += Fraction(SCALE_BITS, group_size)
    return bits


def peak_flops(device: Device, scheme: str) -> int:
    """The FLOP/s a step's matmuls run at: FP8 tensor cores for FP8 weights, BF16 for the rest (INT8/INT4 are
    weight-only: dequantized to BF16 before the multiply). A ValueError in Chinese if the card has no such path."""
    flops = device.fp8_flops if scheme == "FP8" else device.bf16_flops
    if flops is None:
        raise ValueError(f"{device.name} 没有 {'FP8' if scheme == 'FP8' else 'BF16'} 张量核")
    return flops


def text_params(ledger) -> int:
    """Every parameter of the text model (the vision tower, if any, is not served per token)."""
    return ledger.root.find("text").sum_where(lambda leaf, kinds: True)


def quantized_weight_bytes(ledger, scheme: str = "BF16", group_size: int = GROUP_SIZE) -> Fraction:
    """Bytes the text model's weights take: matrices in `scheme` (with group scales for INT8/INT4), the rest
    (embedding table, norms, biases the engine does not count as matmul weights) in BF16."""
    matrices = views.matmul_weights(ledger, active=False)
    return matrices * bits_per_weight(scheme, group_size) / 8 + (text_params(ledger) - matrices) * 2


def kv_bytes(ledger, context: int, kv: str = "BF16") -> int:
    """One sequence's cache at `context` tokens (fixed recurrent state included)."""
    _check("BF16", kv)
    return views.cache_bytes_per_sequence(ledger, context, KV_BYTES[kv])


def roofline(ledger, device: Device, batch: int = 1, context: int = 4096, scheme: str = "BF16",
             kv: str = "BF16", group_size: int = GROUP_SIZE) -> dict:
    """One decode step of `batch` sequences with `context` cached tokens each: bytes (weights, KV cache), FLOPs,
    the time each bound sets, the step's time, its bound, and tokens per second per device and per user."""
    if batch < 1 or context < 0:
        raise ValueError(f"批大小应 ≥ 1、上下文应 ≥ 0，实际是 {batch!r}、{context!r}")
    clock = StepClock(ledger, device, scheme, kv, group_size)
    cache, scores = clock.per_sequence(context)
    r = clock.step(batch, batch * cache, batch * scores)
    return {"batch": batch, "context": context, "scheme": scheme, "kv": kv, **r,
            "tokens_per_s": batch / r["step_time"], "tokens_per_s_per_user": 1 / r["step_time"]}


class StepClock:
    """One decode step's roofline for one model, device and precision: `step` from the batch, the cache bytes it
    reads and its attention score FLOPs; `time` for sequences with different cached lengths. A length's cache
    bytes and score FLOPs are kept once computed, so a simulation of thousands of steps stays cheap."""

    def __init__(self, ledger, device: Device, scheme: str = "BF16", kv: str = "BF16", group_size: int = GROUP_SIZE):
        _check(scheme, kv)
        self.ledger, self.device, self.kv = ledger, device, kv
        self.weights = step_weights(ledger)
        self.bytes_per_weight = bits_per_weight(scheme, group_size) / 8
        self.token_flops = views.param_flops_per_token(ledger)
        self.peak = peak_flops(device, scheme)
        self._lengths: dict[int, tuple[int, int]] = {}
        self._weight_read: dict[int, Fraction] = {}

    def per_sequence(self, T: int) -> tuple[int, int]:
        """(cache bytes, attention score FLOPs) of one sequence with T cached tokens."""
        if T not in self._lengths:
            self._lengths[T] = (kv_bytes(self.ledger, T, self.kv), views.attention_score_flops(self.ledger, T))
        return self._lengths[T]

    def step(self, batch: int, cache_read, score_flops: int) -> dict:
        if batch not in self._weight_read:
            self._weight_read[batch] = self.weights.read(batch) * self.bytes_per_weight
        weight_read = self._weight_read[batch]
        flops = batch * self.token_flops + score_flops
        t_mem = (weight_read + cache_read) / self.device.bandwidth
        t_flop = Fraction(flops, self.peak)
        return {"weight_bytes": weight_read, "kv_bytes": cache_read, "flops": flops, "memory_time": t_mem,
                "compute_time": t_flop, "step_time": max(t_mem, t_flop),
                "bound": "memory" if t_mem >= t_flop else "compute"}

    def time(self, contexts) -> Fraction:
        """The step time of sequences with these cached lengths, one each."""
        known, cache, scores = self._lengths, 0, 0
        for T in contexts:
            c, f = known[T] if T in known else self.per_sequence(T)
            cache += c
            scores += f
        return self.step(len(contexts), cache, scores)["step_time"]


def prefill(ledger, device: Device, prompt: int, batch: int = 1, scheme: str = "BF16", kv: str = "BF16",
            group_size: int = GROUP_SIZE) -> dict:
    """Prefill of `batch` prompts of `prompt` tokens: weights read once (all experts touched at batch·prompt
    tokens), the cache written once, causal attention FLOPs summed over positions; time per prompt token."""
    _check(scheme, kv)
    if batch < 1 or prompt < 1:
        raise ValueError(f"批大小和提示长度应 ≥ 1，实际是 {batch!r}、{prompt!r}")
    tokens = batch * prompt
    nbytes = (step_weights(ledger).read(tokens) * bits_per_weight(scheme, group_size) / 8
              + batch * kv_bytes(ledger, prompt, kv))
    flops = batch * (prompt * views.param_flops_per_token(ledger) + causal_score_flops(ledger, prompt))
    t_mem = nbytes / device.bandwidth
    t_flop = Fraction(flops, peak_flops(device, scheme))
    t = max(t_mem, t_flop)
    return {"batch": batch, "prompt": prompt, "bytes": nbytes, "flops": flops, "memory_time": t_mem,
            "compute_time": t_flop, "time": t, "time_per_token": t / tokens,
            "bound": "memory" if t_mem >= t_flop else "compute"}


def causal_score_flops(ledger, T: int) -> int:
    """Σ_{t=1..T} of the score FLOPs of a token attending to t tokens (itself included): each layer attends to
    min(t, window) of them, so a windowed layer's sum is W(W+1)/2 + (T − W)·W once T passes W."""
    total = 0
    for m, k in ledger.arch.mixer_counts:
        W = T if m.window is None else min(T, m.window)
        total += 2 * m.score_width * k * (W * (W + 1) // 2 + (T - W) * W)
    return total


def crossover_batch(ledger, device: Device, context: int = 0, scheme: str = "BF16", kv: str = "BF16",
                    group_size: int = GROUP_SIZE) -> int | None:
    """The smallest batch at which a decode step's FLOP time reaches its byte time; None if the step stays
    bandwidth-bound up to MAX_BATCH (the KV cache read grows as fast as the FLOPs). FLOP time minus byte time is
    convex in the batch (the experts read saturate), so once it turns positive it stays so: doubling, then
    bisection."""
    def compute_bound(b: int) -> bool:
        r = roofline(ledger, device, b, context, scheme, kv, group_size)
        return r["compute_time"] >= r["memory_time"]

    if compute_bound(1):
        return 1
    lo, hi = 1, 2
    while not compute_bound(hi):
        if hi >= MAX_BATCH:
            return None
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(mid) else (mid, hi)
    return hi


def fits_kv(ledger, device: Device, context: int, scheme: str = "BF16", kv: str = "BF16",
            group_size: int = GROUP_SIZE, page: int = PAGE_TOKENS) -> dict:
    """How many sequences of `context` tokens have room for their KV cache beside the weights on one device: the
    cache allocated in pages of `page` tokens (PagedAttention), against the bytes the driver reports."""
    _check(scheme, kv)
    weights = quantized_weight_bytes(ledger, scheme, group_size)
    paged = -(-context // page) * page
    per_seq = kv_bytes(ledger, paged, kv)
    free = device.bytes - weights
    seqs = int(free // per_seq) if free > 0 else 0
    return {"context": context, "weights": weights, "free": free, "per_sequence": per_seq,
            "sequences": seqs, "weights_fit": free >= 0}


def paging(ledger, device: Device, used: int, reserved: int, scheme: str = "BF16", kv: str = "BF16",
           group_size: int = GROUP_SIZE, page: int = PAGE_TOKENS) -> dict:
    """Sequences using `used` tokens each, when every one reserves `reserved` tokens of contiguous cache against
    paged allocation in blocks of `page` tokens: one block's bytes, the bytes per sequence, the sequences that fit
    beside the weights and the share of the cache held but unused, each way."""
    _check(scheme, kv)
    if not 1 <= used <= reserved or page < 1:
        raise ValueError(f"实际长度应在 1 到预留长度之间、块大小应 ≥ 1，实际是 {used!r}、{reserved!r}、{page!r}")
    free = device.bytes - quantized_weight_bytes(ledger, scheme, group_size)
    need = kv_bytes(ledger, used, kv)
    out = {"used": used, "reserved": reserved, "page": page, "free": free, "needed": need,
           "block_bytes": kv_bytes(ledger, page, kv) - kv_bytes(ledger, 0, kv)}
    for way, tokens in (("contiguous", reserved), ("paged", -(-used // page) * page)):
        held = kv_bytes(ledger, tokens, kv)
        out[way] = {"tokens": tokens, "per_sequence": held, "sequences": int(free // held) if free > 0 else 0,
                    "waste": 1 - Fraction(need, held)}
    return out


def batch_curve(ledger, device: Device, batches, context: int = 4096, scheme: str = "BF16",
                kv: str = "BF16") -> list[dict]:
    """Tokens per second per device and per user as the batch grows (one roofline per batch), each marked with
    whether that many sequences' cache fits beside the weights."""
    room = fits_kv(ledger, device, context, scheme, kv)["sequences"]
    return [{**roofline(ledger, device, b, context, scheme, kv), "fits": b <= room} for b in batches]


def quantization_table(ledger, device: Device, batch: int = 1, context: int = 4096,
                       group_size: int = GROUP_SIZE) -> list[dict]:
    """Per weight scheme: bits per weight, weight bytes, and one decode step (BF16 cache) at `batch` and
    `context`, with its speed-up over BF16."""
    base = roofline(ledger, device, batch, context, "BF16")["step_time"]
    rows = []
    for s in SCHEMES:
        if s == "FP8" and device.fp8_flops is None:
            continue
        r = roofline(ledger, device, batch, context, s, "BF16", group_size)
        rows.append({"scheme": s, "bits": bits_per_weight(s, group_size),
                     "weights": quantized_weight_bytes(ledger, s, group_size),
                     "step_time": r["step_time"], "tokens_per_s_per_user": r["tokens_per_s_per_user"],
                     "speedup": base / r["step_time"], "bound": r["bound"]})
    return rows


def kv_fp8_effect(ledger, device: Device, context: int, batch: int, scheme: str = "BF16") -> dict:
    """What an FP8 cache changes at `context`: sequences that fit, and the decode step at `batch`."""
    out = {}
    for kv in KV_BYTES:
        f = fits_kv(ledger, device, context, scheme, kv)
        r = roofline(ledger, device, batch, context, scheme, kv)
        out[kv] = {"sequences": f["sequences"], "per_sequence": f["per_sequence"], "step_time": r["step_time"],
                   "bound": r["bound"]}
    return out


# ---- static against continuous batching ---------------------------------------------------------------------------

# the course's trace: uniform lengths, seeded
TRACE: dict[str, Any] = {"requests": 512, "prompt": (1, 3072), "output": (1, 1024)}
RESERVE = 4096               # the server's longest context: a contiguous reservation holds this many tokens
MAX_REQUESTS = 1024          # bounded work: at most this many requests, each at most RESERVE tokens
MIN_SLOTS = 8                # bounded work: fewer slots than this would take tens of thousands of steps


def trace(seed: int = 0, requests: int = TRACE["requests"], prompt=TRACE["prompt"], output=TRACE["output"]) \
        -> list[tuple[int, int]]:
    """`requests` (prompt length, output length) pairs, each drawn uniformly from its inclusive bounds with
    random.Random(seed) (the same digits in CPython and in the browser's Python)."""
    if not 1 <= requests <= MAX_REQUESTS or prompt[0] < 1 or output[0] < 1 or prompt[1] + output[1] > RESERVE:
        raise ValueError(f"请求数应在 1 到 {MAX_REQUESTS} 之间，提示加输出不超过 {RESERVE} 个 token")
    rng = random.Random(seed)
    return [(rng.randint(*prompt), rng.randint(*output)) for _ in range(requests)]


def _run(clock: StepClock, requests, slots: int, continuous: bool, budget=None, page: int = PAGE_TOKENS) -> dict:
    """Decode every request of `requests` with at most `slots` sequences a step; with a `budget` of cache bytes, a
    request joins only if its blocks (prompt + output, rounded up to `page`) fit beside those of the running ones.
    Static (continuous=False): a batch of `slots` requests runs until its longest output is done; continuous: a
    finished sequence leaves and the next request joins at the next step."""
    queue = list(requests)
    running: list[list[int]] = []           # [cached tokens, tokens still to generate, blocks' bytes]
    held, steps, busy, seconds = 0, 0, 0, Fraction(0)
    while queue or running:
        if continuous or not running:
            while queue and len(running) < slots:
                p, g = queue[0]
                need = clock.per_sequence(-(-(p + g) // page) * page)[0] if budget is not None else 0
                if budget is not None and held + need > budget:
                    break
                queue.pop(0)
                held += need
                running.append([p, g, need])
        active = [s for s in running if s[1] > 0]
        seconds += clock.time([s[0] for s in active])
        steps += 1
        busy += len(active)
        for s in active:
            s[0] += 1
            s[1] -= 1
        done = [s for s in running if s[1] == 0]
        if continuous or len(done) == len(running):
            held -= sum(s[2] for s in done)
            running = [s for s in running if s[1] > 0]
    tokens = sum(g for _, g in requests)
    return {"slots": slots, "steps": steps, "seconds": seconds, "tokens": tokens,
            "tokens_per_s": tokens / seconds, "mean_batch": Fraction(busy, steps),
            "idle": 1 - Fraction(busy, steps * slots)}


def batching(ledger, device: Device, max_batch: int, seed: int = 0, scheme: str = "BF16", kv: str = "BF16",
             reserve: int = RESERVE, requests=None) -> dict:
    """The course's trace (or `requests`) served three ways on one device: static and continuous batching with each
    sequence's cache reserved for `reserve` tokens (slots: `max_batch`, or fewer if that many reservations do not
    fit beside the weights), and continuous batching with paged cache (up to `max_batch` sequences, as many as
    their blocks fit). Each way: tokens per second, mean batch, share of slot-steps empty; and the gains."""
    if not 1 <= max_batch <= MAX_BATCH:
        raise ValueError(f"批大小应在 1 到 {MAX_BATCH} 之间，实际是 {max_batch!r}")
    reqs = trace(seed) if requests is None else list(requests)
    if any(p + g > reserve for p, g in reqs):
        raise ValueError(f"每条请求的提示加输出应不超过 {reserve:,} 个 token")
    clock = StepClock(ledger, device, scheme, kv)
    free = device.bytes - quantized_weight_bytes(ledger, scheme)
    reserved = kv_bytes(ledger, reserve, kv)
    fit = int(free // reserved) if free > 0 else 0
    if fit < 1:
        raise ValueError(f"权重之外放不下一条 {reserve:,} 个 token 的 KV cache：一张卡不够")
    slots = min(max_batch, fit)
    if slots < MIN_SLOTS:
        raise ValueError(f"同时解码的序列至少要 {MIN_SLOTS} 条才比较得出批处理的差别；这里只有 {slots} 条"
                         f"（{'批大小上限' if max_batch < fit else '权重之外放得下的整段预留'}）")
    static = _run(clock, reqs, slots, continuous=False)
    cont = _run(clock, reqs, slots, continuous=True)
    paged = _run(clock, reqs, max_batch, continuous=True, budget=free)
    return {"requests": reqs, "max_batch": max_batch, "reserve": reserve, "free": free, "fit": fit,
            "static": static, "continuous": cont, "paged": paged,
            "gain": cont["tokens_per_s"] / static["tokens_per_s"],
            "paged_gain": paged["tokens_per_s"] / cont["tokens_per_s"]}
