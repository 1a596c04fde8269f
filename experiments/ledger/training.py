"""The training-memory ledger: every byte one training step holds on one GPU, for any config the engine reads.

Three parts, each an ordered list of items with slash keys whose subtotals are the sums of their children:

- ``states/...``: the model states (weights, gradients, master copy, optimiser state) per recipe. Bytes per
  parameter follow ZeRO's accounting (Rajbhandari et al., arXiv 1910.02054, section 3.1): mixed-precision Adam
  holds 2 (fp16/bf16 weights) + 2 (gradients) + K = 12 (fp32 master copy, momentum, variance) bytes, 16 in all.
  The other recipes change which of these exist and in what precision (RECIPES). Under ZeRO stage 1 / 2 / 3
  over N data-parallel ranks each rank keeps 1/N of the optimiser state / + gradients / + weights; under tensor
  parallelism t every matrix is split t ways and the 1-D tensors (norm gains, biases) are replicated.
- ``activations/...``: what the forward pass leaves for the backward pass, per real tensor of each layer type
  (norm inputs and their statistics, the projections' inputs, q/k/v with the layer's real KV heads, the score
  matrix or, with a fused kernel, only the log-sum-exp per head, SwiGLU's gate / up / silu(gate) / product, the
  routed tokens' copies each active expert sees, MLA's latents, what a Gated DeltaNet or Mamba layer's training
  kernels save), for no, selective or full recomputation, with tensor parallelism (and sequence parallelism)
  splitting the tensors Megatron-LM splits (Korthikanti et al., arXiv 2205.05198, section 4).
- ``loss/...``: the final norm, the head's input, the logits and the fp32 softmax the cross-entropy keeps (b·s·V
  each; with chunked cross-entropy only one chunk of tokens at a time).

Korthikanti et al.'s per-layer formula s·b·h·(34 + 5·a·s/h) is what this ledger gives for a GPT block under
their assumptions (``KORTHIKANTI``: 16-bit activations, dropout after the softmax, the attention output and the
MLP, the score matrix materialised, norm statistics neglected); ``korthikanti_bytes`` is their formula, for the
check. Which tensors are exact: a layer built of attention (incl. GQA, QK-norm, an output gate, MLA), a dense or
routed FFN (gated or two-matrix) and norms is counted tensor by tensor as a hand-written backward pass keeps them
(experiments/train/memory.py measures the course's numpy trainer against it); a Gated DeltaNet, Mamba-2 or
Mamba-1 mixer by its training kernels' save_for_backward lists (see GDN_CHUNK); a mixer none of these fits (Jamba's
own sequence around the selective scan) and a DSA indexer's own tensors are estimates, and their items say so.
Multi-token-prediction modules are counted (``mtp_items``); a vision tower's activations are not (the tokens
here are text).
All counts are Python ints.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import ceil, prod
from typing import Any

from . import Ledger, views
from .tree import Node

GB = 10 ** 9

# -- recipes: bytes per parameter, by component ------------------------------------------------------------------
# Each component: (key, bytes per parameter, which ZeRO stage shards it, which parameters it applies to).
# "all" applies to every parameter, "matrix" only to the hidden matrices Muon updates, "other" to the rest.
# An 8-bit state also keeps one fp32 scale per block of 2,048 values (Dettmers et al., arXiv 2110.02861).
BLOCK_8BIT = 2048


@dataclass(frozen=True)
class Component:
    key: str            # weights, grads, grads_fp32, master, adam_m, adam_v, momentum, ...
    bytes: int
    shard: str          # "weights" (ZeRO-3), "grads" (ZeRO-2), "optimizer" (ZeRO-1)
    applies: str = "all"
    blockwise: bool = False


def _c(key: str, b: int, shard: str, applies: str = "all", blockwise: bool = False) -> Component:
    return Component(key, b, shard, applies, blockwise)


RECIPES: dict[str, tuple[Component, ...]] = {
    "fp32_adamw": (_c("weights", 4, "weights"), _c("grads", 4, "grads"), _c("adam_m", 4, "optimizer"),
                   _c("adam_v", 4, "optimizer")),
    "mixed_adamw": (_c("weights", 2, "weights"), _c("grads", 2, "grads"), _c("master", 4, "optimizer"),
                    _c("adam_m", 4, "optimizer"), _c("adam_v", 4, "optimizer")),
    "mixed_adamw_fp32_grads": (_c("weights", 2, "weights"), _c("grads", 2, "grads"), _c("grads_fp32", 4, "grads"),
                               _c("master", 4, "optimizer"), _c("adam_m", 4, "optimizer"),
                               _c("adam_v", 4, "optimizer")),
    "adam_8bit": (_c("weights", 2, "weights"), _c("grads", 2, "grads"), _c("master", 4, "optimizer"),
                  _c("adam_m", 1, "optimizer", blockwise=True), _c("adam_v", 1, "optimizer", blockwise=True)),
    "bf16_adamw": (_c("weights", 2, "weights"), _c("grads", 2, "grads"), _c("adam_m", 2, "optimizer"),
                   _c("adam_v", 2, "optimizer")),
    "sgd_momentum": (_c("weights", 2, "weights"), _c("grads", 2, "grads"), _c("master", 4, "optimizer"),
                     _c("momentum", 4, "optimizer")),
    "muon": (_c("weights", 2, "weights"), _c("grads", 2, "grads"), _c("master", 4, "optimizer"),
             _c("momentum", 4, "optimizer", "matrix"), _c("adam_m", 4, "optimizer", "other"),
             _c("adam_v", 4, "optimizer", "other")),
}
# bytes of one activation element under each recipe (the compute precision)
ACT_BYTES = {"fp32_adamw": 4}
RECOMPUTE = ("none", "selective", "full")
KERNELS = ("fused", "eager")


def bytes_per_param(recipe: str, applies: str = "other") -> int:
    """Bytes one parameter holds under a recipe: a hidden matrix's (applies="matrix") or any other parameter's
    (the two differ only for Muon)."""
    return sum(c.bytes for c in RECIPES[recipe] if c.applies in ("all", applies))


@dataclass(frozen=True)
class TrainSetup:
    """One training configuration. micro_batch sequences of seq_len tokens per rank and micro-step; accum
    micro-steps per optimiser step; dp data-parallel ranks (ZeRO stage `zero` over them); tp tensor-parallel
    ranks, with sequence parallelism if sp. ce_chunk: tokens per chunk of a chunked cross-entropy (0: all at once).
    kernel "fused" (FlashAttention-style: no score matrix kept, a log-sum-exp per head) or "eager" (softmax
    probabilities kept). dropout: masks (1 byte per element) after the softmax, the attention output and the
    FFN. norm_stats: keep each norm's per-token fp32 statistic (1/rms). act_bytes: None = the recipe's."""
    recipe: str = "mixed_adamw"
    micro_batch: int = 1
    seq_len: int = 4096
    accum: int = 1
    recompute: str = "none"
    kernel: str = "fused"
    dropout: bool = False
    norm_stats: bool = True
    act_bytes: int | None = None
    ce_chunk: int = 0
    zero: int = 0
    dp: int = 1
    tp: int = 1
    sp: bool = False
    token_ids: bool = True      # the int64 token ids (and targets) of the micro-batch
    mtp: bool = True            # train the checkpoint's multi-token-prediction modules (where it has them); False:
                                # leave them out entirely (their weights and optimiser state too)
    rope_tables: bool = True    # RoPE's cos and sin tables, s × head_dim/2 each (models with rotary positions)

    def problems(self) -> list[str]:
        out = []
        if self.recipe not in RECIPES:
            out.append(f"recipe: expected one of {list(RECIPES)}, got {self.recipe!r}")
        if self.recompute not in RECOMPUTE:
            out.append(f"recompute: expected one of {list(RECOMPUTE)}, got {self.recompute!r}")
        if self.kernel not in KERNELS:
            out.append(f"kernel: expected one of {list(KERNELS)}, got {self.kernel!r}")
        if self.zero not in (0, 1, 2, 3):
            out.append(f"zero: expected 0, 1, 2 or 3, got {self.zero!r}")
        for key, top in (("micro_batch", 1 << 16), ("seq_len", 1 << 24), ("accum", 1 << 16), ("dp", 1 << 20),
                         ("tp", 1 << 10)):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= top:
                out.append(f"{key}: expected an integer from 1 to {top:,}, got {v!r}")
        if not isinstance(self.ce_chunk, int) or self.ce_chunk < 0:
            out.append(f"ce_chunk: expected a non-negative integer, got {self.ce_chunk!r}")
        if self.act_bytes not in (None, 1, 2, 4):
            out.append(f"act_bytes: expected 1, 2 or 4, got {self.act_bytes!r}")
        return out

    def validated(self) -> TrainSetup:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def a(self) -> int:
        """Bytes of one activation element."""
        return self.act_bytes if self.act_bytes is not None else ACT_BYTES.get(self.recipe, 2)


# Korthikanti et al.'s assumptions (their section 4.1): 16-bit activations, dropout masks of 1 byte, the score
# matrix kept (no fused kernel), small per-token buffers (norm statistics, token ids, position tables) neglected.
KORTHIKANTI = TrainSetup(recipe="mixed_adamw", kernel="eager", dropout=True, norm_stats=False, act_bytes=2,
                         token_ids=False, rope_tables=False)


def korthikanti_bytes(s: int, b: int, h: int, a: int, t: int = 1, sp: bool = False, mode: str = "none") -> int:
    """Activation bytes per transformer layer in Korthikanti et al. (arXiv 2205.05198) equations 1-2, table 2:
    s·b·h·(34 + 5as/h) without parallelism; with tensor parallelism t s·b·h·(10 + 24/t + 5as/(ht)); with sequence
    parallelism too s·b·h/t·(34 + 5as/h); selective recomputation drops the 5as/h term; full recomputation keeps
    2·s·b·h (the layer's 16-bit input). Returned as an exact int (the formula's terms are integers for t | h)."""
    if mode == "full":
        return 2 * s * b * h
    score = 0 if mode == "selective" else 5 * a * s * s * b
    if sp:
        return (34 * s * b * h + score) // t
    return 10 * s * b * h + (24 * s * b * h + score) // t


# -- items --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    """One tensor (or group of identical tensors) of the step. bytes: on one rank. per_layer: bytes in one layer
    (0 for items that are not per layer), layers: how many layers hold it."""
    key: str
    bytes: int
    what: str = ""
    layers: int = 0
    per_layer: int = 0
    exact: bool = True


@dataclass
class TrainMemory:
    setup: TrainSetup
    items: list[Item]
    params: int
    params_per_rank: int
    notes: list[str] = field(default_factory=list)
    recompute_flops: int = 0
    step_flops: int = 0

    @property
    def total(self) -> int:
        return sum(i.bytes for i in self.items)

    def part(self, prefix: str) -> int:
        return sum(i.bytes for i in self.items if i.key == prefix or i.key.startswith(prefix + "/"))

    @property
    def exact(self) -> bool:
        return all(i.exact for i in self.items)

    def tree(self) -> dict[str, Any]:
        """The items as an ordered tree {key, bytes, children}: every subtotal the sum of its children."""
        root: dict[str, Any] = {"key": "", "bytes": 0, "children": []}
        for item in self.items:
            node, path = root, ""
            node["bytes"] += item.bytes
            for part in item.key.split("/"):
                path = f"{path}/{part}" if path else part
                child = next((c for c in node["children"] if c["key"] == path), None)
                if child is None:
                    child = {"key": path, "bytes": 0, "children": []}
                    node["children"].append(child)
                child["bytes"] += item.bytes
                node = child
        return root

    def to_json(self) -> dict[str, Any]:
        return {"setup": self.setup.__dict__, "total": self.total, "params": self.params,
                "params_per_rank": self.params_per_rank, "exact": self.exact, "notes": self.notes,
                "recompute_flops": self.recompute_flops, "step_flops": self.step_flops,
                "parts": {p: self.part(p) for p in ("states", "activations", "loss")},
                "items": [i.__dict__ for i in self.items]}


# -- model states -------------------------------------------------------------------------------------------------
def _split_counts(ledger: Ledger, tp: int, mtp: bool = True) -> dict[str, int]:
    """Parameters on one tensor-parallel rank, by Muon's split: hidden matrices ("matrix", every 2-D matmul
    weight outside the embedding and the output head) and the rest ("other"). Under tp > 1 each tensor of two or
    more dimensions is split tp ways (rounded up), a 1-D tensor replicated. mtp=False leaves the MTP part out."""
    out = {"matrix": 0, "other": 0}

    def go(node: Node, mult: int, kinds: tuple[str, ...]) -> None:
        kinds = kinds + (node.kind,) if node.kind else kinds
        mult *= node.n
        if node.shape is not None:
            size = prod(node.shape)
            if tp > 1 and len(node.shape) >= 2:
                size = ceil(size / tp)
            hidden = node.matmul and len(node.shape) == 2 and not ({"embedding", "lm_head"} & set(kinds))
            out["matrix" if hidden else "other"] += mult * size
            return
        for c in node.children:
            if mtp or c.kind != "mtp":
                go(c, mult, kinds)
    go(ledger.root, 1, ())
    return out


def zero_model_states(params: int, stage: int, dp: int, k: int = 12) -> int:
    """ZeRO's model-state bytes per rank for mixed-precision Adam (paper, figure 1): (2 + 2 + K)Ψ at stage 0,
    then 4Ψ + KΨ/N_d, 2Ψ + (2 + K)Ψ/N_d, (4 + K)Ψ/N_d; rounded up to whole bytes."""
    whole = {0: (2 + 2 + k, 0), 1: (4, k), 2: (2, 2 + k), 3: (0, 4 + k)}[stage]
    return whole[0] * params + ceil(whole[1] * params / dp)


def state_items(ledger: Ledger, setup: TrainSetup) -> tuple[list[Item], int]:
    counts = _split_counts(ledger, setup.tp, setup.mtp)
    shards = {"weights": 3, "grads": 2, "optimizer": 1}
    items = []
    for comp in RECIPES[setup.recipe]:
        n = counts["matrix"] + counts["other"] if comp.applies == "all" else counts[comp.applies]
        size = n * comp.bytes
        if comp.blockwise:
            size += 4 * ceil(n / BLOCK_8BIT)
        if setup.zero >= shards[comp.shard]:
            size = ceil(size / setup.dp)
        items.append(Item(f"states/{comp.shard}/{comp.key}", size, f"{comp.bytes} B per parameter ({comp.applies})"))
    return items, counts["matrix"] + counts["other"]


# -- activations --------------------------------------------------------------------------------------------------
# not an Item: elements per token of one layer, before a setup's sizes make them bytes (_saved_bytes, then Items)
@dataclass(frozen=True)
class Saved:
    """A tensor one layer keeps for its backward pass, per token: `elems` elements of `bytes` bytes, plus
    `per_ctx` elements per attended token (a score matrix). split: divided by tp ("tp"), or only under sequence
    parallelism ("sp"). selective: dropped (recomputed) by selective recomputation. per_seq: elements per
    sequence of the micro-batch instead of per token (a scan's per-chunk intermediates)."""
    key: str
    elems: int
    bytes: int
    split: str = "tp"
    per_ctx: int = 0
    per_seq: int = 0
    selective: bool = False
    what: str = ""
    exact: bool = True      # False: an estimate (what no rule here itemises)
    floor: int = 0          # elements per token a tensor-parallel rank keeps at least (one whole KV head: with
                            # fewer KV heads than ranks, Megatron-LM gives each rank a copy of one)


def _leaves(node: Node, skip: tuple[str, ...] = ()) -> dict[str, tuple[int, ...]]:
    """Each tensor's shape by its name, in a module, leaving out the children named in `skip` (a sparse-attention
    indexer has a k_proj of its own)."""
    out: dict[str, tuple[int, ...]] = {}
    for c in node.children:
        if c.name in skip:
            continue
        out.update({leaf.name: leaf.shape for leaf in c.walk() if leaf.shape is not None})
    return out


def _matmul_params(node: Node) -> int:
    return node.sum_where(lambda leaf, kinds: leaf.matmul) // max(node.n, 1)


def _norm_saved(key: str, width: int, s: TrainSetup, split: str = "sp", what: str = "") -> list[Saved]:
    out = [Saved(f"{key}/input", width, s.a, split, what=what or "the normalised input x/rms (or the input)")]
    if s.norm_stats:
        out.append(Saved(f"{key}/rstd", 1, 4, split, what="1/rms per token (fp32)"))
    return out


def _attention_saved(node: Node, ledger: Ledger, layer_type: str, s: TrainSetup) -> tuple[list[Saved], bool]:
    arch, d, a = ledger.arch, ledger.arch.d_model, s.a
    mixer = arch.group_mixer(layer_type)
    leaves = _leaves(node, skip=("indexer",))
    out = [Saved("attn/in", d, a, "sp", what="the projections' input (the norm's output)")]
    h = arch.n_heads
    if "kv_a_proj_with_mqa.weight" in leaves:                       # MLA (DeepSeek-V2/V3)
        d_c = leaves["kv_b_proj.weight"][1]
        d_rope = leaves["kv_a_proj_with_mqa.weight"][0] - d_c
        d_v = leaves["o_proj.weight"][1] // h
        d_qk = leaves["kv_b_proj.weight"][0] // h - d_v + d_rope
        if "q_a_proj.weight" in leaves:
            d_cq = leaves["q_a_proj.weight"][0]
            out += _norm_saved("attn/q_latent_norm", d_cq, s, "tp", "the query latent before its norm")
            out.append(Saved("attn/q_latent", d_cq, a, "tp", what="q_b_proj's input"))
        out += _norm_saved("attn/kv_latent_norm", d_c, s, "tp", "the KV latent before its norm")
        out += [Saved("attn/kv_latent", d_c, a, "tp", what="kv_b_proj's input"),
                Saved("attn/k_rope", d_rope, a, "tp", what="the shared rotary key"),
                Saved("attn/q", h * d_qk, a, what="queries after RoPE"),
                Saved("attn/k", h * d_qk, a, what="keys (per head, after RoPE)"),
                Saved("attn/v", h * d_v, a, what="values")]
        v_width = h * d_v
    else:
        # K and V as wide as their projections (they differ where a head's key and value widths do, MiMo-V2);
        # a fused projection (GPT-2's c_attn) splits the cache's elements evenly
        k_width = v_cache = mixer.kv_elems_per_token // 2
        if "k_proj.weight" in leaves and "v_proj.weight" in leaves:
            k_width, v_cache = leaves["k_proj.weight"][0], leaves["v_proj.weight"][0]
        kv_heads = max(1, k_width // max(arch.head_dim, 1))
        k_head, v_head = k_width // kv_heads, v_cache // kv_heads
        q_width = v_width = mixer.score_width // 2
        if "o_proj.weight" in leaves and leaves["o_proj.weight"][1] != q_width:
            v_width = leaves["o_proj.weight"][1]
            q_width = mixer.score_width - v_width
        gate = "q_proj.weight" in leaves and leaves["q_proj.weight"][0] == q_width + v_width
        if "q_norm.weight" in leaves:
            out += [Saved("attn/q_norm/input", q_width, a, what="q before its per-head RMSNorm"),
                    Saved("attn/k_norm/input", k_width, a, what="k before its per-head RMSNorm", floor=k_head)]
            if s.norm_stats:
                out.append(Saved("attn/qk_norm/rstd", (q_width + k_width) // max(arch.head_dim, 1), 4,
                                 what="1/rms per head and token (fp32)"))
        out += [Saved("attn/q", q_width, a, what="queries after RoPE"),
                Saved("attn/k", k_width, a, what="keys after RoPE (the real KV heads)", floor=k_head),
                Saved("attn/v", v_cache, a, what="values (the real KV heads)", floor=v_head)]
        if gate:
            out += [Saved("attn/gate", v_width, a, what="the output gate's input"),
                    Saved("attn/core_out", v_width, a, what="attention output before the gate")]
    if s.kernel == "eager":
        out.append(Saved("attn/scores", 0, a, per_ctx=h, selective=True, what="softmax probabilities, b·h·s·s"))
        if s.dropout:
            out += [Saved("attn/scores_dropout_mask", 0, 1, per_ctx=h, selective=True, what="dropout mask"),
                    Saved("attn/scores_dropout", 0, a, per_ctx=h, selective=True, what="probabilities after dropout")]
    else:
        out.append(Saved("attn/lse", h, 4, what="log-sum-exp per head and token (fp32), for the fused kernel"))
    out.append(Saved("attn/o_in", v_width, a, what="o_proj's input (the heads' output)"))
    if s.dropout:
        out.append(Saved("attn/out_dropout_mask", d, 1, "sp", what="dropout mask after o_proj"))
    # a sparse-attention indexer (DSA) is trained by its own loss on its own tensors, which no rule here itemises:
    # its projections' outputs stand in for them, as an estimate
    for c in node.children:
        if c.name == "indexer":
            out += [Saved(f"attn/indexer/{leaf.name.removesuffix('.weight')}_out", leaf.shape[0], a, exact=False,
                          what="a DSA indexer projection's output (an estimate)")
                    for leaf in c.walk() if leaf.shape is not None and leaf.matmul and len(leaf.shape) == 2]
    return out, all(t.exact for t in out)


def _ffn_width(node: Node, d: int, matrices: int) -> int:
    return _matmul_params(node) // (matrices * d)


def _ffn_saved(node: Node, ledger: Ledger, s: TrainSetup) -> list[Saved]:
    arch, d, a = ledger.arch, ledger.arch.d_model, s.a
    gated = arch.ffn_matrices == 3

    def hidden(prefix: str, width: int, copies: int = 1) -> list[Saved]:
        if gated:
            return [Saved(f"{prefix}/gate", copies * width, a, what="gate_proj's output (silu's input)"),
                    Saved(f"{prefix}/up", copies * width, a, what="up_proj's output"),
                    Saved(f"{prefix}/act", copies * width, a, what="silu(gate)"),
                    Saved(f"{prefix}/product", copies * width, a, what="silu(gate)·up, down_proj's input")]
        return [Saved(f"{prefix}/pre_act", copies * width, a, what="the activation's input"),
                Saved(f"{prefix}/act", copies * width, a, what="the activation's output, the second matrix's input")]

    out = [Saved("ffn/in", d, a, "sp", what="the FFN's input (the norm's output)")]
    experts = next((c for c in node.children if c.n > 1 and c.n_active is not None), None)
    if experts is None:
        out += hidden("ffn", _ffn_width(node, d, arch.ffn_matrices))
    else:
        k, n_experts = experts.n_active or 1, experts.n
        width = _matmul_params(experts) // (arch.ffn_matrices * d)
        out += [Saved("ffn/router_probs", n_experts, 4, what="router probabilities (fp32)"),
                Saved("ffn/routing_weights", k, 4, what="top-k weights (fp32)"),
                Saved("ffn/experts/in", k * d, a, what=f"each token copied to its {k} experts")]
        out += hidden("ffn/experts", width, k)
        out.append(Saved("ffn/experts/out", k * d, a, what="expert outputs, for the routing weights' gradient"))
        for c in node.children:
            if c is experts or c.kind == "router" or not _matmul_params(c) or c.shape is not None:
                continue
            w = _matmul_params(c) // (arch.ffn_matrices * d)
            if w:
                out += hidden(f"ffn/{c.name}", w)
    if s.dropout:
        out.append(Saved("ffn/out_dropout_mask", d, 1, "sp", what="dropout mask after the FFN"))
    return out


# The linear-time mixers keep what their training kernels save for the backward pass, read from the kernels'
# save_for_backward lists (not measured by the course's trainer, which has no such layer):
# - Gated DeltaNet as transformers runs it (Qwen3NextGatedDeltaNet / Qwen3_5GatedDeltaNet, transformers 5.23):
#   in_proj's input; causal-conv1d keeps its input (the mixed q, k, v) and recomputes the conv and silu;
#   sigmoid keeps beta; g = -exp(A_log)·softplus(a + dt_bias) keeps softplus's fp32 input and output;
#   flash-linear-attention's chunk_gated_delta_rule (fla/ops/gated_delta_rule/chunk.py; q and k passed with their
#   own heads, the kernel groups them itself since commit 8bcc105) keeps the L2-normalised q and k with their fp32
#   1/norm, a contiguous copy of v, g's fp32 chunk-local cumsum, beta and the WY matrix A (64 per value head and
#   token), and recomputes the chunk states in the backward; the gated RMSNorm keeps its input, the gate z and an
#   fp32 1/rms per head; out_proj keeps its input.
# - Mamba-2 (mamba_ssm's mamba_split_conv1d_scan_combined, transformers' training path for NemotronH, Falcon-H1,
#   Mamba2): in_proj's input, in_proj's whole output (z, x, B, C, dt), the scan's output before the gate and the
#   norm's fp32 1/rms per group; conv, chunk states, the norm's output and out_proj's input are recomputed.
# - Mamba-1 (mamba_ssm's mamba_inner_fn at its default checkpoint level, transformers' MambaMixer / FalconMamba):
#   in_proj's input and output (x, z), x_proj's output, contiguous copies of B and C, the un-gated scan output, and
#   the scan's fp32 intermediates, 2·d_state per channel per 2,048-token chunk of each sequence.
GDN_CHUNK = 64
SCAN_CHUNK = 2048


def _gdn_saved(node: Node, ledger: Ledger, layer_type: str, s: TrainSetup) -> list[Saved] | None:
    leaves = _leaves(node)
    try:
        conv, width = leaves["conv1d.weight"][0], leaves["conv1d.weight"][-1]
        hv, v_dim = leaves["dt_bias"][0], leaves["norm.weight"][0]
    except KeyError:
        return None
    state = ledger.arch.group_mixer(layer_type).state_elems
    qk = (conv - hv * v_dim) // 2                        # n_k_heads · k_head_dim
    k_dim = (state - (width - 1) * conv) // (hv * v_dim) if hv * v_dim else 0
    if k_dim <= 0 or qk % k_dim:
        return None
    hk, a, d = qk // k_dim, s.a, ledger.arch.d_model
    out = [Saved("mixer/in", d, a, "sp", what="the input projections' input (the norm's output)"),
           Saved("mixer/conv_in", conv, a, what="the causal conv's input: q, k, v before the conv"),
           Saved("mixer/beta", hv, a, what="beta = sigmoid(b), per value head"),
           Saved("mixer/decay_softplus", 2 * hv, 4, what="softplus's input and output for the decay g (fp32)"),
           Saved("mixer/decay_cumsum", hv, 4, what="g's chunk-local cumulative sum (fp32)"),
           Saved("mixer/qk_normed", 2 * qk, a, what="q and k after the kernel's L2 norm"),
           Saved("mixer/v", hv * v_dim, a, what="a contiguous copy of v"),
           Saved("mixer/wy_matrix", GDN_CHUNK * hv, a, what="the WY matrix A: 64 per value head and token")]
    if s.norm_stats:
        out.append(Saved("mixer/qk_rstd", 2 * hk, 4, what="q's and k's 1/norm per head (fp32)"))
    out += [Saved("mixer/norm_in", hv * v_dim, a, what="the gated norm's input (the kernel's output)"),
            Saved("mixer/gate_z", hv * v_dim, a, what="the gate z")]
    if s.norm_stats:
        out.append(Saved("mixer/norm_rstd", hv, 4, what="the gated norm's 1/rms per head (fp32)"))
    out.append(Saved("mixer/out_in", hv * v_dim, a, what="out_proj's input"))
    return out


def _mamba_saved(node: Node, ledger: Ledger, layer_type: str, s: TrainSetup) -> list[Saved] | None:
    leaves = _leaves(node)
    a, d = s.a, ledger.arch.d_model
    if "dt_layernorm.weight" in leaves or "in_proj.weight" not in leaves:
        return None          # Jamba's mixer runs its own sequence of ops around selective_scan_fn: not itemised
    zxbcdt, d_inner = leaves["in_proj.weight"][0], leaves["out_proj.weight"][1]
    out = [Saved("mixer/in", d, a, "sp", what="in_proj's input (the norm's output)")]
    if "x_proj.weight" in leaves:                    # Mamba-1
        d_state = leaves["A_log.weight" if "A_log.weight" in leaves else "A_log"][1]
        rank_2n = leaves["x_proj.weight"][0]
        chunks = ceil(s.seq_len / SCAN_CHUNK)
        return out + [Saved("mixer/xz", zxbcdt, a, what="in_proj's output: x and the gate z"),
                      Saved("mixer/x_dbl", rank_2n, a, "sp", what="x_proj's output: dt's low-rank input, B and C"),
                      Saved("mixer/bc", 2 * d_state, a, "sp", what="contiguous copies of B and C"),
                      Saved("mixer/scan_out", d_inner, a, what="the scan's output before the gate"),
                      Saved("mixer/scan_chunks", 0, 4, per_seq=d_inner * 2 * d_state * chunks,
                            what="the scan's fp32 intermediates, per 2,048-token chunk")]
    conv, width = leaves["conv1d.weight"][0], leaves["conv1d.weight"][-1]
    state = ledger.arch.group_mixer(layer_type).state_elems
    d_state = (state - (width - 1) * conv) // d_inner if d_inner else 0
    if d_state <= 0 or (conv - d_inner) % (2 * d_state):
        return None
    out += [Saved("mixer/zxbcdt", zxbcdt, a, what="in_proj's whole output: z, x, B, C and dt"),
            Saved("mixer/scan_out", d_inner, a, what="the scan's output before the gate and the norm")]
    if "norm.weight" in leaves and s.norm_stats:
        out.append(Saved("mixer/norm_rstd", (conv - d_inner) // (2 * d_state), 4,
                         what="the gated norm's 1/rms per group (fp32)"))
    return out


def _generic_mixer_saved(node: Node, ledger: Ledger, layer_type: str, s: TrainSetup) -> list[Saved]:
    """An estimate for a mixer no exact rule fits (Jamba's Mamba): its input, every projection's output, the output
    projection's input, and the recurrent state twice per 2,048-token chunk of each sequence in fp32 (what the
    selective scan keeps: SCAN_CHUNK)."""
    d, a = ledger.arch.d_model, s.a
    out = [Saved("mixer/in", d, a, "sp", what="the projections' input (the norm's output)")]
    for leaf in node.walk():
        if leaf.shape is None or not leaf.matmul or len(leaf.shape) != 2:
            continue
        rows, cols = leaf.shape
        if rows == d and cols != d:
            out.append(Saved(f"mixer/{leaf.name.removesuffix('.weight')}_in", cols, a,
                             what="the output projection's input"))
        else:
            out.append(Saved(f"mixer/{leaf.name.removesuffix('.weight')}_out", rows, a, what="a projection's output"))
    state = ledger.arch.group_mixer(layer_type).state_elems
    if state:
        out.append(Saved("mixer/scan_chunks", 0, 4, per_seq=2 * state * ceil(s.seq_len / SCAN_CHUNK),
                         what="the state twice per 2,048-token chunk (fp32)"))
    return [replace(t, exact=False) for t in out]


def module_saved(node: Node, ledger: Ledger, layer_type: str, s: TrainSetup,
                 named: bool = False) -> tuple[list[Saved], bool]:
    """The tensors one layer (or an MTP module) keeps for the backward pass, and whether the rule is exact: each
    child by its kind (norms, attention, FFN, a linear-attention or Mamba mixer); a bare projection (MTP's eh_proj
    or fc) keeps its input; an embedding keeps only the token ids (counted once, under loss/); an output head is
    the loss's (``mtp_items``); any other group is walked into. Norms are keyed norm1, norm2, ... in order, or by
    their own names if `named`."""
    out: list[Saved] = []
    exact = True
    norms = 0
    V, d = ledger.arch.vocab_size, ledger.arch.d_model
    for child in node.children:
        if child.kind == "norm":
            norms += 1
            width = prod(child.shape) if child.shape is not None else (
                prod(child.children[0].shape or (0,)) if child.children else 0)
            out += _norm_saved(child.name if named else f"norm{norms}", width, s)
        elif child.kind == "attention":
            got, ok = _attention_saved(child, ledger, layer_type, s)
            out += got
            exact = exact and ok
        elif child.kind == "ffn":
            out += _ffn_saved(child, ledger, s)
        elif child.kind in ("linear_attention", "mamba"):
            rule = _gdn_saved if child.kind == "linear_attention" else _mamba_saved
            kept = rule(child, ledger, layer_type, s)
            if kept is None:
                kept, exact = _generic_mixer_saved(child, ledger, layer_type, s), False
            out += kept
        elif child.kind == "embedding" or _is_head(child, V, d):
            continue
        elif child.shape is not None:
            if child.matmul and len(child.shape) == 2:
                stem = child.name.removesuffix("weight").removesuffix(".")
                out.append(Saved(f"{stem}_in" if stem else "in", child.shape[1], s.a, "sp",
                                 what="a projection's input (replicated across tensor-parallel ranks)"))
        else:
            got, ok = module_saved(child, ledger, layer_type, s, named)
            out += [replace(t, key=f"{child.name}/{t.key}") for t in got]
            exact = exact and ok
    return out, exact


def _is_head(node: Node, vocab: int, d: int) -> bool:
    """An output head (a vocabulary-by-width matrix, alone or as a module's only weight) outside an embedding."""
    leaves = [leaf for leaf in node.walk() if leaf.shape is not None]
    return len(leaves) == 1 and leaves[0].shape == (vocab, d) and node.kind != "embedding"


def layer_saved(ledger: Ledger, layer_type: str, s: TrainSetup) -> tuple[list[Saved], bool]:
    """The tensors one layer of a type keeps for the backward pass, and whether the rule is exact."""
    return module_saved(ledger.layer(layer_type), ledger, layer_type, s)


def _saved_bytes(t: Saved, s: TrainSetup, ctx: int) -> int:
    tokens = s.micro_batch * s.seq_len
    if t.floor and s.tp > 1 and t.elems < t.floor * s.tp:
        return tokens * t.floor * t.bytes
    elems = tokens * (t.elems + t.per_ctx * ctx) + s.micro_batch * t.per_seq
    divide = s.tp if (t.split == "tp" or s.sp) else 1
    return ceil(elems * t.bytes / divide)


def activation_items(ledger: Ledger, s: TrainSetup, other_peak: int = 0) -> tuple[list[Item], list[str]]:
    """The backbone's layers, type by type; under full recomputation each layer's input, plus the largest layer
    (or other rebuilt module, `other_peak`) once, as it is rebuilt during its backward."""
    items: list[Item] = []
    notes: list[str] = []
    d = ledger.arch.d_model
    tokens = s.micro_batch * s.seq_len
    peak_layer = other_peak
    for layer_type in ledger.layer_types:
        node = ledger.layer(layer_type)
        mixer = ledger.arch.group_mixer(layer_type)
        ctx = mixer.attended(s.seq_len)
        saved, exact = layer_saved(ledger, layer_type, s)
        if not exact:
            notes.append(_estimate_note(layer_type, [t.key for t in saved if not t.exact]))
        whole = sum(_saved_bytes(t, s, ctx) for t in saved)
        peak_layer = max(peak_layer, whole)
        if s.recompute == "full":
            per = ceil(tokens * d * s.a / (s.tp if s.sp else 1))
            items.append(Item(f"activations/{layer_type}/checkpoint", per * node.n, "the layer's input", node.n,
                              per, exact))
            continue
        for t in saved:
            if s.recompute == "selective" and t.selective:
                continue
            per = _saved_bytes(t, s, ctx)
            items.append(Item(f"activations/{layer_type}/{t.key}", per * node.n, t.what, node.n, per, t.exact))
    if s.recompute == "full" and ledger.layer_types:
        items.append(Item("activations/recomputed_layer", peak_layer,
                          "one layer's tensors, rebuilt during its backward (the largest layer or module)"))
    return items, notes


def _estimate_note(where: str, keys: list[str]) -> str:
    """The note naming which of a part's tensors (their keys) are estimates."""
    rough = sorted({k.rsplit("/", 1)[0] for k in keys})
    return f"{where}: an estimate for {', '.join(rough)} (no rule itemises what it keeps)"


def _logit_items(prefix: str, ledger: Ledger, s: TrainSetup, copies: int = 1) -> list[Item]:
    """The output head's input and the logits with their fp32 softmax, for `copies` heads over the micro-batch."""
    tokens = s.micro_batch * s.seq_len
    d, V = ledger.arch.d_model, ledger.arch.vocab_size
    rows = min(tokens, s.ce_chunk) if s.ce_chunk else tokens
    vocab = ceil(V / s.tp)      # a vocabulary-parallel head splits the logits by vocabulary
    return [Item(f"{prefix}head_in", copies * ceil(tokens * d * s.a / (s.tp if s.sp else 1)),
                 "the output head's input"),
            Item(f"{prefix}logits", copies * rows * vocab * s.a,
                 "the logits, b·s·V (one chunk with chunked cross-entropy)"),
            Item(f"{prefix}softmax_fp32", copies * rows * vocab * 4,
                 "the fp32 softmax the loss keeps for its gradient")]


def _mtp_modules(ledger: Ledger) -> list[tuple[Node, int, str]]:
    """The MTP part's decoder layers (nodes with an attention or mixer child), each with how many copies the tree
    holds and the layer type it repeats (its own name if the backbone has a group of that name, else the first
    attention group's). What lies outside them (Qwen3-Next's fc and norms) is ``mtp_items``' "module"."""
    root = ledger.part("mtp")
    if root is None:
        return []
    known = set(ledger.layer_types)
    default = next((t for t in ledger.layer_types if ledger.arch.group_mixer(t).kv_elems_per_token),
                   ledger.layer_types[0] if ledger.layer_types else "full_attention")
    out: list[tuple[Node, int, str]] = []

    def go(node: Node, mult: int, layer_type: str) -> None:
        layer_type = node.name if node.name in known else layer_type
        if any(c.kind in ("attention", "linear_attention", "mamba") for c in node.children):
            out.append((node, mult * node.n, layer_type))
            return
        for c in node.children:
            if c.shape is None and c.kind not in ("norm", "ffn", "embedding"):
                go(c, mult * node.n, layer_type)
    go(root, 1, default)
    return out


def _mtp_heads(ledger: Ledger) -> tuple[list[Node], int]:
    """The MTP part's own output heads (vocabulary-by-width matrices outside an embedding) and how many MTP modules
    there are: one per head copy the tree holds, or one if the modules share the backbone's head."""
    root = ledger.part("mtp")
    if root is None:
        return [], 0
    shape = (ledger.arch.vocab_size, ledger.arch.d_model)
    heads = [leaf for leaf in root.walk()
             if leaf.shape == shape and leaf.kind != "embedding" and "embed" not in leaf.name]
    return heads, sum(root.multiplicity(leaf.key) for leaf in heads) or 1


# The norm an MTP module applies to the hidden state it is handed (DeepSeek-V3's hnorm, Qwen3-Next's
# pre_fc_norm_hidden): its input is a tensor already kept, the backbone's head input (first module) or the previous
# module's output, which that module's own final norm keeps; only its 1/rms is new.
MTP_HIDDEN_NORMS = ("hnorm", "pre_fc_norm_hidden")


def mtp_items(ledger: Ledger, s: TrainSetup) -> tuple[list[Item], list[Item], int, bool]:
    """What the multi-token-prediction modules keep (DeepSeek-V3, arXiv 2412.19437 section 2.2; Qwen3-Next's MTP):
    per module the norms of the hidden state (MTP_HIDDEN_NORMS: its 1/rms only) and of the next tokens' embeddings,
    the projection's input (both, concatenated), a decoder layer counted by the same rules as the backbone's, and
    one more loss: its own head input, logits and softmax. One module per output head the MTP part holds (one if it
    shares the backbone's). Under full recomputation a module keeps only its new input (the embeddings, d per
    token) and is rebuilt during its backward. Returns (activation items, loss items, one module's bytes when
    rebuilt, exact)."""
    root = ledger.part("mtp")
    if root is None or not s.mtp:
        return [], [], 0, True
    tokens, d = s.micro_batch * s.seq_len, ledger.arch.d_model
    layers = _mtp_modules(ledger)
    inside = {id(node) for node, _, _ in layers}
    # the part's own projections and norms (Qwen3-Next: pre_fc_norm_*, fc, the final norm), outside its layers
    top = Node(root.name, children=tuple(c for c in root.children if id(c) not in inside and c.name != "layers"))
    _, modules = _mtp_heads(ledger)
    exact, kept, rebuilt = True, [], 0
    for node, n, layer_type in [(top, 1, ""), *layers]:
        saved, ok = module_saved(node, ledger, layer_type or "full_attention", s, named=True)
        saved = [t for t in saved if t.key not in {f"{h}/input" for h in MTP_HIDDEN_NORMS}]
        exact = exact and ok
        ctx = ledger.arch.group_mixer(layer_type).attended(s.seq_len) if layer_type else s.seq_len
        rebuilt += sum(_saved_bytes(t, s, ctx) for t in saved) * n // modules
        name = node.name if node is not top else "module"
        for t in saved:
            if not (s.recompute == "selective" and t.selective):
                per = _saved_bytes(t, s, ctx)
                kept.append(Item(f"activations/mtp/{name}/{t.key}", per * n, t.what, n, per, t.exact))
    if s.recompute == "full":
        per = ceil(tokens * d * s.a / (s.tp if s.sp else 1))
        kept = [Item("activations/mtp/checkpoint", per * modules,
                     "each MTP module's new input (the next tokens' embeddings)", modules, per)]
    return kept, _logit_items("loss/mtp/", ledger, s, modules), rebuilt, exact


def _has_rope(ledger: Ledger) -> bool:
    names = {leaf.name for leaf in ledger.root.find("text").walk() if leaf.shape is not None}
    return not any(n.startswith(("wpe", "position_embeddings", "embed_positions")) for n in names)


def loss_items(ledger: Ledger, s: TrainSetup) -> list[Item]:
    arch = ledger.arch
    tokens = s.micro_batch * s.seq_len
    sp = s.tp if s.sp else 1
    d = arch.d_model
    items = [Item("loss/final_norm/input", ceil(tokens * d * s.a / sp), "the final norm's normalised input")]
    if s.norm_stats:
        items.append(Item("loss/final_norm/rstd", ceil(tokens * 4 / sp), "1/rms per token (fp32)"))
    items += _logit_items("loss/", ledger, s)
    if s.token_ids:
        items.append(Item("loss/token_ids", 2 * tokens * 8, "input ids and targets (int64)"))
    if s.rope_tables and _has_rope(ledger):
        half = max(arch.head_dim, 1) // 2
        items.append(Item("loss/rope_tables", 2 * s.seq_len * half * s.a, "RoPE's cos and sin tables"))
    return items


def recompute_flops(ledger: Ledger, s: TrainSetup) -> tuple[int, int]:
    """(extra forward FLOPs recomputation adds to one micro-step on one rank, the step's FLOPs without it).
    A step is 3 forward passes' worth (forward + a backward of twice that); the matmuls are 2 FLOPs per active
    weight per token, the scores 2 · score_width per attended token (the full s × s block, as an unfused kernel
    computes it). Full recomputation runs each layer's forward again; selective only the score block (nothing
    with a fused kernel, which keeps none). Trained MTP modules add their matmuls (and their head's, where they
    share the backbone's) and their attention's scores, rebuilt too under full recomputation."""
    tokens = s.micro_batch * s.seq_len
    arch = ledger.arch
    head = ledger.root.find("text").sum_where(lambda leaf, kinds: leaf.matmul and "lm_head" in kinds, True)
    if arch.tied_embeddings:
        head = arch.vocab_size * arch.d_model
    layer_matmul = ledger.root.find("text").sum_where(lambda leaf, kinds: leaf.matmul, True) - head
    scores = views.attention_score_flops(ledger, s.seq_len)
    mtp = ledger.part("mtp") if s.mtp else None
    if mtp is not None:
        heads, modules = _mtp_heads(ledger)
        own = {id(h) for h in heads}
        mtp_matmul = mtp.sum_where(lambda leaf, kinds: leaf.matmul and "embedding" not in kinds and id(leaf) not in own,
                                   True)
        layer_matmul += mtp_matmul + modules * arch.vocab_size * arch.d_model    # each module's head, own or shared
        scores += sum(2 * arch.group_mixer(t).score_width * arch.group_mixer(t).attended(s.seq_len) * n
                      for _, n, t in _mtp_modules(ledger))
    forward = tokens * (2 * (layer_matmul + head) + scores)
    selective = tokens * scores if s.kernel == "eager" else 0     # a fused kernel keeps no score block to rebuild
    extra = {"none": 0, "selective": selective, "full": tokens * (2 * layer_matmul + scores)}[s.recompute]
    return ceil(extra / s.tp), ceil(3 * forward / s.tp)


def training_memory(ledger: Ledger, setup: TrainSetup | None = None, **changes: Any) -> TrainMemory:
    """Every byte of one training step on one rank (see the module's docstring)."""
    s = replace(setup or TrainSetup(), **changes).validated()
    states, per_rank = state_items(ledger, s)
    mtp_acts, mtp_loss, mtp_rebuilt, mtp_exact = mtp_items(ledger, s)
    acts, notes = activation_items(ledger, s, mtp_rebuilt)
    extra, step = recompute_flops(ledger, s)
    if ledger.vision:
        notes.append("the vision tower's activations are not counted (text tokens only)")
    if not mtp_exact:
        notes.append(_estimate_note("mtp", [i.key for i in mtp_acts if not i.exact]))
    trained = ledger.total - (0 if s.mtp else ledger.mtp)
    return TrainMemory(s, states + acts + mtp_acts + loss_items(ledger, s) + mtp_loss, trained, per_rank,
                       notes, extra, step)
