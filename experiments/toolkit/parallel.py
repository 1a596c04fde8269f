"""Parallel training (chapter C10): the bytes each GPU sends per step and the memory it holds, for data, ZeRO,
tensor, pipeline, expert and context parallelism and their combinations, from any config the ledger engine reads.

Formulas and where they come from:

- Ring collectives over n ranks on a buffer of S bytes (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce
  algorithms for clusters of workstations"; NCCL's performance notes): reduce-scatter and all-gather each take
  n - 1 steps in which every rank sends one chunk of S/n, (n - 1)/n · S per rank; all-reduce is a
  reduce-scatter then an all-gather, 2(n - 1)/n · S. An all-to-all in which each rank holds S bytes, S/n for
  every rank, sends (n - 1)/n · S. ``collective_bytes``; tests/test_parallel.py counts them in a simulated ring.
- ZeRO (Rajbhandari et al. 2020, arXiv 1910.02054, section 7): with Ψ parameters plain data parallelism and
  stages 1 and 2 move 2Ψ elements per rank per step (a reduce-scatter of the gradients and an all-gather of the
  weights, the same as one all-reduce); stage 3 moves 3Ψ (the weights are all-gathered again for the backward
  pass; with m micro-batches per step ZeRO-3 gathers them before every micro-batch's forward and backward,
  (2m + 1)Ψ, as FSDP does by default). ``dp_bytes``.
- Megatron-LM tensor parallelism (Shoeybi et al. 2019, arXiv 1909.08053, section 3): per layer two all-reduces of
  the b·s·h activations in the forward pass (after attention, after the MLP) and two in the backward pass; with
  sequence parallelism (Korthikanti et al. 2022, arXiv 2205.05198, section 4.2.2) each all-reduce becomes an
  all-gather plus a reduce-scatter of the same total volume. ``tp_bytes``.
- Pipeline parallelism: the bubble of GPipe (Huang et al. 2019, arXiv 1811.06965) and of 1F1B with p stages and
  m micro-batches is (p - 1)/(m + p - 1) of the step; the interleaved schedule with v model chunks per GPU makes
  it (p - 1)/(v·m + p - 1) (Narayanan et al. 2021, arXiv 2104.04473, section 2.2). Under 1F1B the first stage
  keeps at most p micro-batches' activations (same paper), so the first stage holds min(p, m)/p of one
  micro-batch's activations for the whole model. Each stage sends one activation tensor forward and receives
  one gradient back per micro-batch. ``bubble``, ``pp_bytes``.
- Expert parallelism: each MoE layer dispatches every token to its top-k experts and combines the results, an
  all-to-all each way in the forward pass and again in the backward pass. DeepSeek-V3 (arXiv 2412.19437,
  section 3.2.2 and its config: n_group 8 groups of experts, one per node, topk_group 4) limits each token to
  at most M = 4 nodes and sends it once per node over the network, then forwards it inside the node over NVLink.
  ``ep_all_to_all_bytes_per_token``, ``ep_bytes``.
- Context parallelism (Llama 3, arXiv 2407.21783, section 3.3.2): the sequence is split over cp ranks; each
  attention layer all-gathers the keys and values in the forward pass and reduce-scatters their gradients in the
  backward pass (split over tp like the heads). ``cp_bytes``.
- When communication hides behind compute (the Scaling Book, "How to Scale Your Model", chapter on rooflines and
  on training): a step's communication can overlap its compute when compute time ≥ communication time, i.e. when
  its FLOPs per byte sent exceed the device's FLOP/s per byte/s of the link. ``overlap_ratio``.

Memory per GPU extends C9's ledger (experiments.ledger.training): the model states per rank are split over
tp·pp (and the routed experts over ep), then ZeRO shards them over the data-parallel ranks (the routed experts
over dp/ep, the ranks holding the same experts); the activations are the ledger's for one micro-batch of seq/cp
tokens with tp (and sequence parallelism), times min(p, m)/p. Stages are taken as equal (ceil of layers / pp).
The time model (``step_time``), so the planner ranks layouts by estimated time, not bytes: a step does the
model's FLOPs (experiments.ledger.training.recompute_flops: 3 forward passes' worth, matmuls and the score block,
plus what recomputation redoes) spread evenly over the GPUs at the device's dense BF16 peak. Each kind of
parallelism's bytes per GPU cross the link its group sits on (devices.Fabric): ranks are numbered tensor first,
then context, pipeline, data (the Llama 3 report's order [TP, CP, PP, DP], arXiv 2407.21783 section 3.3.2; the
expert ranks are data ranks of stride tp·cp·pp), so a group of size g whose inner groups multiply to s lies inside
one node when s·g ≤ GPUs per node (NVLink) and crosses the network otherwise. Tensor, context, pipeline and expert
communication sit inside the layers' critical path and add to the compute; the pipeline's bubble stretches that
busy time by 1/(1 - bubble); the data-parallel gradient and weight traffic overlaps the backward pass (as ZeRO's
and FSDP's implementations schedule it), so the step takes max(busy/(1 - bubble), data-parallel time). MFU is the
model's FLOPs without recomputation over (GPUs × peak × step time) (PaLM, arXiv 2204.02311, appendix B). This is a
ceiling: matmuls at peak, links at their datasheet rate, no latency, no overlap beyond the data-parallel one
(DeepSeek-V3's DualPipe also hides the expert all-to-all, which this model does not).
All byte counts are exact Fractions or ints; nothing here reads a file.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil, comb

from ..ledger import Ledger, ledger_of, unwrap
from ..ledger.training import RECIPES, TrainSetup, recompute_flops, training_memory
from ..ledger.tree import Node
from .devices import FABRICS, Device, Fabric, fits

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")


def collective_bytes(kind: str, size_bytes: int, n: int) -> Fraction:
    """Bytes each of n ranks sends in a ring collective on a buffer of size_bytes (the whole buffer: the
    all-reduced tensor, the gathered result, the scattered input, or one rank's all-to-all input)."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    if n < 1:
        raise ValueError(f"n: expected at least 1 rank, got {n!r}")
    share = Fraction(n - 1, n) * size_bytes
    return 2 * share if kind == "all_reduce" else share


def bubble(p: int, m: int, v: int = 1) -> Fraction:
    """The idle share of a pipeline step: (p - 1)/(v·m + p - 1) for p stages, m micro-batches, v chunks per GPU."""
    return Fraction(p - 1, v * m + p - 1)


# Upper bounds, so that every count stays an exact integer of bounded size and every plan is bounded work.
MAX_GPUS = 1 << 17
LIMITS = {"tp": 1 << 10, "pp": 1 << 10, "dp": MAX_GPUS, "ep": MAX_GPUS, "cp": 1 << 10, "seq_len": 1 << 24,
          "micro_batch": 1 << 16, "micro_batches": 1 << 20}


@dataclass(frozen=True)
class Layout:
    """One way of spreading a training step over tp·pp·cp·dp GPUs; ep of the dp ranks share one MoE layer's
    experts (ep divides dp). micro_batch sequences of seq_len tokens per micro-batch, micro_batches per step
    (the pipeline's m, also the gradient-accumulation steps)."""
    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    cp: int = 1
    zero: int = 0
    seq_len: int = 4096
    micro_batch: int = 1
    micro_batches: int = 1
    sp: bool = True             # sequence parallelism with tp > 1
    recipe: str = "mixed_adamw"
    recompute: str = "none"

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    def problems(self) -> list[str]:
        out = []
        for key in ("tp", "pp", "dp", "ep", "cp", "seq_len", "micro_batch", "micro_batches"):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                out.append(f"{key}: expected a positive integer, got {v!r}")
            elif v > LIMITS[key]:
                out.append(f"{key}: expected at most {LIMITS[key]}, got {v!r}")
        if not out and self.gpus > MAX_GPUS:
            out.append(f"tp·pp·cp·dp: expected at most {MAX_GPUS} GPUs, got {self.gpus}")
        if not out and self.dp % self.ep:
            out.append(f"ep: expected a divisor of dp = {self.dp}, got {self.ep}")
        if not out and self.seq_len % self.cp:
            out.append(f"cp: expected a divisor of seq_len = {self.seq_len}, got {self.cp}")
        if self.zero not in (0, 1, 2, 3):
            out.append(f"zero: expected 0, 1, 2 or 3, got {self.zero!r}")
        return out

    def validated(self) -> Layout:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))
        return self


# -- parameters ---------------------------------------------------------------------------------------------------
_ROUTED: dict[tuple[int, bool], tuple[Ledger, int]] = {}     # id(ledger) -> (the ledger, kept alive; its count)


def routed_params(ledger: Ledger, mtp: bool = True) -> int:
    """Parameters of the routed experts (every copy of every MoE layer; the MTP modules' too unless mtp=False):
    the tensors expert parallelism splits. 0 for a dense model. Counted once per ledger (the planner asks for
    every layout)."""
    key = (id(ledger), mtp)
    if key in _ROUTED and _ROUTED[key][0] is ledger:
        return _ROUTED[key][1]
    if len(_ROUTED) > 64:
        _ROUTED.clear()
    count = _routed_params(ledger, mtp)
    _ROUTED[key] = (ledger, count)
    return count


def _routed_params(ledger: Ledger, mtp: bool) -> int:
    def go(node: Node, mult: int) -> int:
        if node.kind == "mtp" and not mtp:
            return 0
        if node.n > 1 and node.n_active is not None:
            return mult * node.count
        return sum(go(c, mult * node.n) for c in node.children)
    return go(ledger.root, 1)


def state_bytes(ledger: Ledger, lay: Layout) -> int:
    """Model-state bytes on one GPU: every tensor split tp·pp ways (1-D ones too: a simplification of under
    0.1% for the models here), routed experts also ep ways; each component sharded over the data-parallel ranks
    holding the same tensors once its ZeRO stage is reached (dp for the rest, dp/ep for the routed experts)."""
    routed = routed_params(ledger)
    rest = ledger.total - routed
    shards = {"weights": 3, "grads": 2, "optimizer": 1}
    total = Fraction(0)
    for comp in RECIPES[lay.recipe]:
        sharded = lay.zero >= shards[comp.shard]
        for n, group in ((rest, lay.dp), (Fraction(routed, lay.ep), lay.dp // lay.ep)):
            total += Fraction(n * comp.bytes, lay.tp * lay.pp * (group if sharded else 1))
    return ceil(total)


def activation_bytes(ledger: Ledger, lay: Layout) -> int:
    """Activation bytes on the first pipeline stage (the one holding the most under 1F1B): C9's ledger for one
    micro-batch of seq_len/cp tokens with tp and sequence parallelism, its layers' part times min(p, m)/p, plus
    the loss part (taken on the same GPU: a bound for the last stage too)."""
    mem = training_memory(ledger, TrainSetup(recipe=lay.recipe, micro_batch=lay.micro_batch,
                                             seq_len=lay.seq_len // lay.cp, tp=lay.tp, sp=lay.sp and lay.tp > 1,
                                             recompute=lay.recompute))
    layers = Fraction(mem.part("activations") * min(lay.pp, lay.micro_batches), lay.pp)
    return ceil(layers) + mem.part("loss")


def memory_per_gpu(ledger: Ledger, lay: Layout) -> dict[str, int]:
    states, acts = state_bytes(ledger, lay), activation_bytes(ledger, lay)
    return {"states": states, "activations": acts, "total": states + acts}


# -- communication per step ---------------------------------------------------------------------------------------
def dp_bytes(params: Fraction | int, n: int, zero: int, grad_bytes: int = 2, micro_batches: int = 1) -> Fraction:
    """Bytes one data-parallel rank sends per step to keep `params` parameters in sync over n ranks: one
    all-reduce of the gradients (2Ψ; ZeRO 1 and 2: reduce-scatter + all-gather, the same), ZeRO-3 3Ψ for one
    micro-batch. ZeRO-3 keeps only its shard between uses (PyTorch FSDP's default, reshard after forward), so
    the weights are all-gathered before each micro-batch's forward and again before its backward: (2m + 1)Ψ."""
    share = collective_bytes("all_gather", 1, n) * params * grad_bytes
    return share * (2 * micro_batches + 1) if zero == 3 else 2 * share


def tp_bytes(d_model: int, layers: int, tokens: int, tp: int, act_bytes: int = 2) -> Fraction:
    """Bytes one tensor-parallel rank sends per micro-batch: 4 all-reduces (2 forward, 2 backward) of the
    tokens·d_model activations per layer (with sequence parallelism the same volume as all-gathers and
    reduce-scatters)."""
    return 4 * layers * collective_bytes("all_reduce", tokens * d_model * act_bytes, tp)


def pp_bytes(d_model: int, tokens: int, pp: int, tp: int = 1, act_bytes: int = 2) -> Fraction:
    """Bytes one pipeline stage sends per micro-batch: its output activations forward and its input's gradient
    back (tokens·d_model each; with tp the ranks of a stage split them tp ways, Megatron's scatter/gather)."""
    if pp == 1:
        return Fraction(0)
    return Fraction(2 * tokens * d_model * act_bytes, tp)


def cp_bytes(kv_elems_per_token: int, attn_layers: int, tokens: int, cp: int, tp: int = 1,
             act_bytes: int = 2) -> Fraction:
    """Bytes one context-parallel rank sends per micro-batch of `tokens` tokens (the whole sequences, split cp
    ways): per attention layer an all-gather of the keys and values (tokens·kv elements, the cache's elements per
    token: MLA's latent) forward and a reduce-scatter of their gradients backward; with tp the ranks of a
    tensor-parallel group hold 1/tp of the heads' keys and values each."""
    kv = Fraction(tokens * kv_elems_per_token * act_bytes, tp)
    return 2 * attn_layers * collective_bytes("all_gather", 1, cp) * kv


def expected_nodes(n_experts: int, nodes: int, k: int) -> Fraction:
    """How many distinct nodes a token's k experts sit on, expected over uniform random choices of k of
    n_experts (experts spread evenly over the nodes): nodes·(1 - C(E - E/nodes, k)/C(E, k))."""
    per = n_experts // nodes
    return nodes * (1 - Fraction(comb(n_experts - per, k), comb(n_experts, k)))


def ep_all_to_all_bytes_per_token(config: dict, dispatch_bytes: int = 1, combine_bytes: int = 2) -> dict:
    """The all-to-all bytes one token causes per MoE layer in the forward pass: the width h and the experts per
    token k as the engine reads them (hidden_size and num_experts_per_tok for DeepSeek-V3), and for node-limited
    routing the config's n_group (groups of experts = nodes) and topk_group (M, the most groups a token reaches;
    n_group 1 means no limit). Dispatch in FP8 (1 byte), combine in BF16 (2), as DeepSeek-V3 (section 3.3.2)
    does. Per token: `dispatch`/`combine` to every expert copy (k·h each); with node-limited routing
    `cross_node_*`, what leaves the node sent once per node (M·h), and `unlimited_nodes`, the nodes a token's k
    experts would sit on (expected, uniform routing) without the limit. A ValueError for a dense model."""
    text = unwrap(config)
    moe = ledger_of(text).arch.moe
    if moe is None:
        raise ValueError("这个模型没有路由专家")
    h, k = ledger_of(text).arch.d_model, moe.top_k
    keys = text.get("text_config", text)
    out: dict = {"hidden_size": h, "top_k": k, "dispatch": k * h * dispatch_bytes, "combine": k * h * combine_bytes}
    groups, m = keys.get("n_group") or 1, keys.get("topk_group") or 1
    if groups > 1 and m < groups:
        out |= {"nodes_max": m, "groups": groups, "cross_node_dispatch": m * h * dispatch_bytes,
                "cross_node_combine": m * h * combine_bytes,
                "unlimited_nodes": expected_nodes(moe.n_experts, groups, k)}
    return out


def ep_bytes(d_model: int, top_k: int, moe_layers: int, tokens: int, ep: int, act_bytes: int = 2) -> Fraction:
    """Bytes one expert-parallel rank sends per micro-batch: per MoE layer 4 all-to-alls (dispatch and combine,
    forward and backward) of its tokens' k copies, tokens·k·d_model elements; the (ep - 1)/ep share bound for
    other ranks (uniform routing)."""
    return 4 * moe_layers * collective_bytes("all_to_all", tokens * top_k * d_model * act_bytes, ep)


def per_step_comm(ledger: Ledger, lay: Layout) -> dict[str, Fraction]:
    """Bytes one GPU sends per optimiser step, by kind of parallelism, and their sum ("total")."""
    lay = lay.validated()
    arch = ledger.arch
    layers = ceil(Fraction(arch.n_layers, lay.pp))
    tokens = lay.micro_batch * lay.seq_len // lay.cp
    m = lay.micro_batches
    routed = routed_params(ledger)
    rest = Fraction(ledger.total - routed, lay.tp * lay.pp)
    experts = Fraction(routed, lay.tp * lay.pp * lay.ep)
    out = {"dp": dp_bytes(rest, lay.dp, lay.zero, micro_batches=m)
           + dp_bytes(experts, lay.dp // lay.ep, lay.zero, micro_batches=m),
           "tp": m * tp_bytes(arch.d_model, layers, tokens, lay.tp),
           "pp": m * pp_bytes(arch.d_model, tokens, lay.pp, lay.tp),
           "ep": Fraction(0), "cp": Fraction(0)}
    if arch.moe is not None:
        moe_layers = ceil(Fraction(arch.moe.n_moe_layers, lay.pp))
        out["ep"] = m * ep_bytes(arch.d_model, arch.moe.top_k, moe_layers, tokens, lay.ep)
    attn = ceil(Fraction(sum(t != "linear_attention" for t in arch.layer_types), lay.pp))
    out["cp"] = m * cp_bytes(arch.kv_elems_per_token, attn, lay.micro_batch * lay.seq_len, lay.cp, lay.tp)
    out["total"] = sum(out.values(), Fraction(0))
    return out


def overlap_ratio(flops: int | Fraction, comm_bytes: int | Fraction, flops_per_s: int | Fraction,
                  link_bytes_per_s: int | Fraction) -> Fraction:
    """Compute time over communication time, (flops / comm_bytes) / (flops_per_s / link_bytes_per_s): at 1 or
    more the communication can hide behind the compute (Scaling Book: arithmetic intensity per byte sent
    against the device's FLOP/s per byte/s of the link)."""
    return Fraction(flops) / Fraction(comm_bytes) / (Fraction(flops_per_s) / Fraction(link_bytes_per_s))


# -- time ----------------------------------------------------------------------------------------------------------
SERIAL = ("tp", "cp", "pp", "ep")      # inside the layers' critical path
OVERLAPPED = ("dp",)                   # hidden behind the backward pass when there is compute enough


def group_links(lay: Layout, fab: Fabric) -> dict[str, str]:
    """"nvlink" or "network" for each kind's group: ranks numbered tp fastest, then cp, pp, dp (ep: dp ranks of
    stride tp·cp·pp); a group lies inside a node when its inner groups' product times its size ≤ GPUs per node."""
    out, stride = {}, 1
    for kind, size in (("tp", lay.tp), ("cp", lay.cp), ("pp", lay.pp), ("dp", lay.dp)):
        out[kind] = "nvlink" if stride * size <= fab.gpus_per_node else "network"
        stride *= size
    out["ep"] = "nvlink" if lay.tp * lay.cp * lay.pp * lay.ep <= fab.gpus_per_node else "network"
    return out


def step_flops(ledger: Ledger, lay: Layout) -> tuple[int, int]:
    """(the model's FLOPs per optimiser step over all GPUs, the FLOPs recomputation adds): C9's per-sequence
    count (experiments.ledger.training.recompute_flops) times the sequences of a step, dp·micro_batch·m."""
    extra, base = recompute_flops(ledger, TrainSetup(recipe=lay.recipe, micro_batch=1, seq_len=lay.seq_len,
                                                     recompute=lay.recompute))
    seqs = lay.dp * lay.micro_batch * lay.micro_batches
    return base * seqs, extra * seqs


@dataclass(frozen=True)
class Timing:
    compute: Fraction             # seconds of matmul work per GPU at peak (recomputation included)
    comm: dict[str, Fraction]     # seconds each kind's bytes take on its link
    links: dict[str, str]
    bubble: Fraction
    step: Fraction                # estimated seconds per optimiser step
    mfu: Fraction                 # model FLOPs / (GPUs · peak · step)
    flops: int                    # the model's FLOPs per step (no recomputation)


def step_time(ledger: Ledger, lay: Layout, dev: Device, fab: Fabric, comm: dict[str, Fraction] | None = None,
              chunks: int = 1, hidden: tuple[str, ...] = OVERLAPPED, flops: tuple[int, int] | None = None) -> Timing:
    """The estimated step time and MFU of a layout (the module's docstring: compute at peak, serial traffic added,
    the bubble with `chunks` interleaved model chunks per GPU, the `hidden` kinds' traffic overlapped: the
    data-parallel one by default; ("dp", "ep") for a schedule that also hides the all-to-all, as DualPipe does).
    `flops`: step_flops(ledger, lay) when the caller has it already (the planner: the same for every layout)."""
    lay = lay.validated()
    if dev.bf16_flops is None:
        raise ValueError(f"{dev.name} 没有 BF16 张量核，估不出训练时间")
    comm = per_step_comm(ledger, lay) if comm is None else comm
    matmul, extra = step_flops(ledger, lay) if flops is None else flops
    peak = dev.bf16_flops
    compute = Fraction(matmul + extra, lay.gpus * peak)
    links = group_links(lay, fab)
    bw = {"nvlink": fab.nvlink, "network": fab.network}
    secs = {k: Fraction(comm[k]) / bw[links[k]] for k in SERIAL + OVERLAPPED}
    bub = bubble(lay.pp, lay.micro_batches, chunks)
    busy = (compute + sum((secs[k] for k in secs if k not in hidden), Fraction(0))) / (1 - bub)
    step = max(busy, sum((secs[k] for k in hidden), Fraction(0)))
    return Timing(compute, secs, links, bub, step, Fraction(matmul, lay.gpus * peak) / step, matmul)


# -- the planner --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    layout: Layout
    memory: dict[str, int]
    comm: dict[str, Fraction]
    bubble: Fraction
    fits: bool
    timing: Timing | None       # None for a layout that does not fit (unless the planner was asked for all)


def _powers(top: int) -> list[int]:
    return [1 << i for i in range(top.bit_length()) if 1 << i <= top]


def plan(ledger: Ledger, gpus: int, dev: Device, seq_len: int, global_batch: int, micro_batch: int = 1,
         tp_max: int = 8, cp_max: int = 16, zeros: tuple[int, ...] = (1, 2, 3), recompute: str = "none",
         fitting_only: bool = True, fab: Fabric = FABRICS["h100"], timed: bool = True) -> list[Plan]:
    """Candidate layouts for `gpus` GPUs (tp, pp, cp, ep powers of two; tp within a node of tp_max GPUs, cp up to
    cp_max; ep a divisor of dp and of the expert count; global_batch sequences per step split into
    dp·micro_batch-sized micro-batches), each with its memory per GPU, bytes per step and estimated time; only
    those that fit unless fitting_only is False (timed=False: those that do not fit get no timing). The ones that
    fit first, sorted by estimated step time, then bytes sent. At most
    MAX_GPUS GPUs and 2^20 sequences per step: a few thousand candidates at most (tp 4 × pp 8 × cp 5 × ep 18 ×
    3 stages), the activations computed once per (tp, pp, cp, m)."""
    if not (isinstance(gpus, int) and 1 <= gpus <= MAX_GPUS):
        raise ValueError(f"gpus: expected 1 to {MAX_GPUS}, got {gpus!r}")
    if not (isinstance(global_batch, int) and 1 <= global_batch <= 1 << 20):
        raise ValueError(f"global_batch: expected 1 to {1 << 20}, got {global_batch!r}")
    arch = ledger.arch
    n_experts = arch.moe.n_experts if arch.moe else 1
    acts: dict[tuple, int] = {}
    flops: tuple[int, int] | None = None        # the same for every layout: the step's sequences are global_batch
    out = []
    for tp in _powers(tp_max):
        for pp in _powers(min(gpus // tp, arch.n_layers)):
            for cp in _powers(min(gpus // (tp * pp), cp_max)):
                if gpus % (tp * pp * cp) or seq_len % cp:
                    continue
                dp = gpus // (tp * pp * cp)
                if global_batch % (dp * micro_batch):
                    continue
                m = global_batch // (dp * micro_batch)
                for ep in (e for e in _powers(dp) if dp % e == 0 and n_experts % e == 0):
                    for zero in (zeros if dp > 1 else zeros[:1]):      # one data-parallel rank: nothing to shard
                        lay = Layout(tp=tp, pp=pp, dp=dp, ep=ep, cp=cp, zero=zero, seq_len=seq_len,
                                     micro_batch=micro_batch, micro_batches=m, recompute=recompute)
                        key = (tp, pp, cp, m)
                        if key not in acts:
                            acts[key] = activation_bytes(ledger, lay)
                        states = state_bytes(ledger, lay)
                        mem = {"states": states, "activations": acts[key], "total": states + acts[key]}
                        ok = fits(mem["total"], dev)
                        if ok or not fitting_only:
                            comm = per_step_comm(ledger, lay)
                            if flops is None:
                                flops = step_flops(ledger, lay)
                            timing = step_time(ledger, lay, dev, fab, comm, flops=flops) if ok or timed else None
                            out.append(Plan(lay, mem, comm, bubble(pp, m), ok, timing))
    return sorted(out, key=lambda p: (not p.fits, p.timing.step if p.timing else 0, p.comm["total"]))
