"""A model's "fork card": where its config stands at each architectural fork of 2025-2026, read from the config.

Every field comes from the config, through the engine: the layer types and each type's cache (``Arch.mixer``),
the ledger tree's tensors (an attention group holding ``q_norm``/``k_norm`` has QK-norm, one holding ``sinks``
has attention sinks, one holding an ``indexer`` runs DeepSeek Sparse Attention's lightning indexer; the norms a
decoder layer holds give their placement), the MoE facts (``Arch.moe``), and a few keys the ledger does not need
for counting, read here through the engine's ``Reader`` at the text config's path: ``index_topk``,
``index_n_heads``, ``index_head_dim`` (DSA), ``attn_logit_softcapping`` / ``final_logit_softcapping`` (Gemma 2),
``partial_rotary_factor`` and ``no_rope_layers`` (RoPE on part of a head, or not at all in some layers), and the
FFN's activation (``hidden_act``, Gemma's ``hidden_activation``, GPT-2's ``activation_function``).

The cost models the forks need (formulas, per generated token, one sequence):
- Dense attention over T cached tokens: 2 · score_width · min(T, window) FLOPs per layer (views.py).
- DeepSeek Sparse Attention (DeepSeek-AI 2025, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with
  DeepSeek Sparse Attention", section 2.1): a lightning indexer scores every earlier token with H_I index heads
  of width d_I, I_t,s = Σ_j w_t,j · ReLU(q_t,j · k_s), then the main (MLA) attention attends only to the top
  k_idx tokens. Per layer with its own indexer: 2 · H_I · d_I · T (the dot products) + 2 · H_I · T (the weights
  and the sum) FLOPs, plus 2 · width · min(T, k_idx) for the attention proper; a layer that reuses an
  earlier layer's selection (GLM-5.2's "shared" indexer layers) pays only the second term. The index key (d_I
  elements per token) is cached beside the MLA latent in each layer with an indexer (the engine counts it in
  ``kv_elems_per_token``). The indexer's projections are weights like any other (in the ledger tree).
  The report (same section, "Instantiate DSA Under MLA") runs DSA on MLA's MQA mode: the query is absorbed
  into the latent space, so every head attends to the shared cached entry itself, keys of kv_lora_rank +
  qk_rope_head_dim elements and values of kv_lora_rank (576 and 512 for DeepSeek-V3.2). The width of a sparse
  MLA layer is therefore h · (2 · kv_lora_rank + qk_rope_head_dim), not the MHA form h · (d_qk + d_v) the
  engine's training and prefill views use (``Arch.score_width``); its dense counterpart (the same layers over
  every token, how V3.1-Terminus decodes) is counted in the same mode. The absorption moves the key and value
  up-projections to the query and output side: the same weights, so the per-token weight FLOPs do not change.
  A model whose indexer sits on attention other than MLA keeps its layers' own width.
- Multi-token prediction (DeepSeek-V3 report section 2.2; Qwen3.5's ``mtp_num_hidden_layers``): its parameters
  are the ledger's ``mtp`` part; one extra predicted token costs 2 FLOPs per matmul weight a token passes in the
  MTP module, plus the output head it shares with the main model when the module holds none of its own (a
  V × d matmul). Its embedding copy is a lookup, not a matmul.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import Ledger, ledger_of
from .arch import Mixer, layer_runs
from .config import Reader
from .tree import Node
from .views import (
    MIXER_KINDS,
    attention_score_flops,
    breakdown,
    cache_bytes_per_sequence,
    kv_bytes_per_token,
    param_flops_per_token,
    score_flops_per_context_token,
)

BF16_BYTES = 2

# attention kinds a card names (the lesson's labels live in experiments/labels.py; these are the card's keys)
KINDS = ("mha", "gqa", "mqa", "mla", "sliding", "chunked", "linear", "mamba", "sparse", "compressed", "none")


# layer types whose attention keeps only the indexer's top_k tokens in a model with an indexer
SPARSE_TYPES = ("full_attention", "shared_index_attention")


@dataclass(frozen=True)
class Indexer:
    """DSA's lightning indexer as the config sets it: heads, head width, tokens kept, layers with their own, and
    the score width of a sparse layer (MLA's MQA mode; None: the layer's own ``score_width``)."""
    heads: int
    head_dim: int
    top_k: int
    own_layers: int        # layers that run an indexer (the others reuse a selection)
    sparse_layers: int     # layers whose attention keeps only top_k tokens
    mqa_width: int | None = None   # h · (2 · kv_lora_rank + qk_rope_head_dim) on MLA, else None

    def width(self, layer_type: str, mixer: Mixer) -> int:
        """Score FLOPs per attended token are 2 * this in a layer of this type: MQA mode in a sparse MLA layer."""
        if self.mqa_width is not None and layer_type in SPARSE_TYPES:
            return self.mqa_width
        return mixer.score_width


def text_prefix(ledger: Ledger) -> str:
    """The dotted path of the text config inside the config ('' at the top, 'text_config' for a nested one), from
    the key the family read the width from."""
    key = ledger.arch.symbols.get("d", "hidden_size")
    return key.rsplit(".", 1)[0] if "." in key else ""


def text_reader(config: dict[str, Any], ledger: Ledger) -> Reader:
    prefix = text_prefix(ledger)
    node: object = config
    for part in prefix.split(".") if prefix else ():
        node = node.get(part) if isinstance(node, dict) else None
    return Reader(node if isinstance(node, dict) else {}, prefix)


# -- reading the tree ------------------------------------------------------------------------------------------
def _layer_groups(ledger: Ledger) -> list[Node]:
    return list(ledger.root.find("text/layers").children)


def _names(node: Node, skip: str = "") -> set[str]:
    """The tensor and part names under a node (without ".weight"), leaving out any part named ``skip``."""
    out = {node.name.split(".")[0]}
    for c in node.children:
        if c.name != skip:
            out |= _names(c, skip)
    return out


def _attention(group: Node) -> Node | None:
    for c in group.children:
        if c.kind in MIXER_KINDS:
            return c
    return None


def indexer_of(config: dict[str, Any], ledger: Ledger) -> Indexer | None:
    """The DSA indexer, if the model's attention holds one (None otherwise)."""
    own = sum(g.n for g in _layer_groups(ledger) if (a := _attention(g)) is not None and "indexer" in _names(a))
    if not own:
        return None
    r = text_reader(config, ledger)
    heads, head_dim = r.int("index_n_heads", default=64), r.int("index_head_dim", default=128)
    top_k = r.int("index_topk", default=2048)
    arch = ledger.arch
    # MLA's MQA mode (the report's): keys of kv_lora_rank + qk_rope_head_dim, values of kv_lora_rank, every head
    mqa = arch.n_heads * (2 * r.int("kv_lora_rank") + r.int("qk_rope_head_dim")) if "d_c" in arch.symbols else None
    r.check()
    sparse = sum(1 for t in arch.layer_types if t in SPARSE_TYPES)
    return Indexer(heads, head_dim, top_k, own, sparse, mqa)


def _norm_placement(groups: list[Node]) -> str:
    """pre (norm before each sublayer), sandwich (before and after), post (after only), or other."""
    names: set[str] = set()
    for g in groups:
        names |= {c.name for c in g.children if c.kind == "norm"}
    before = bool(names & {"input_layernorm", "ln_1", "pre_feedforward_layernorm", "pre_mixer_norm", "norm"})
    after = any(n.startswith("post_feedforward") for n in names)
    if before and after:
        return "sandwich"
    if after and "input_layernorm" not in names:
        return "post"
    if before or "post_attention_layernorm" in names:
        return "pre"
    return "other"


def _norm_type(ledger: Ledger) -> str:
    """rmsnorm (a weight only) or layernorm (weight and bias) for the final norm."""
    text = ledger.part("text")
    node = next((c for c in text.children if c.kind == "norm"), None) if text is not None else None
    if node is None:
        return "other"
    return "layernorm" if "bias" in {c.name.split(".")[-1] for c in node.walk()} else "rmsnorm"


# the share of a head that RoPE rotates when the config names none: transformers' defaults for these model types
# (Qwen3NextConfig / Qwen3_5Config and Glm4MoeConfig __post_init__ set partial_rotary_factor 0.25 and 0.5)
ROTARY_DEFAULTS = {"qwen3_next": 0.25, "qwen3_5": 0.25, "qwen3_5_moe": 0.25, "glm4_moe": 0.5}


def _fraction(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1 else None


def _rotary_share(text: dict[str, Any], family: str) -> float:
    """partial_rotary_factor, at the text config's top or in rope_parameters (per layer type: the first), else
    rotary_dim / head_dim (MiniMax-M2's legacy key), else the model type's default, else 1."""
    own = _fraction(text.get("partial_rotary_factor"))
    if own is not None:
        return own
    params = text.get("rope_parameters")
    if isinstance(params, dict):
        nested = [params] + [v for v in params.values() if isinstance(v, dict)]
        for p in nested:
            got = _fraction(p.get("partial_rotary_factor"))
            if got is not None:
                return got
    dim, head = text.get("rotary_dim"), text.get("head_dim")
    if isinstance(dim, int) and isinstance(head, int) and 0 < dim <= head:
        return dim / head
    return ROTARY_DEFAULTS.get(family, 1.0)


# -- the card --------------------------------------------------------------------------------------------------
def attention_kind(ledger: Ledger, layer_type: str, indexer: Indexer | None) -> str:
    """The kind of one layer type's token mixer."""
    a = ledger.arch
    m = a.mixer(layer_type)
    if m.state_elems and not m.kv_elems_per_token:
        return "mamba" if "mamba" in layer_type else "linear"
    if not m.kv_elems_per_token:
        return "none"
    if "compressed" in layer_type:
        return "compressed"
    if m.window is not None:
        return "chunked" if "chunk" in layer_type else "sliding"
    if indexer is not None and layer_type in SPARSE_TYPES:
        return "sparse"
    if "d_c" in a.symbols:
        return "mla"
    if a.n_kv_heads == a.n_heads:
        return "mha"
    return "mqa" if a.n_kv_heads == 1 else "gqa"


def fork_card(config: dict[str, Any]) -> dict[str, Any]:
    """The card of one config: plain JSON values (the browser's and the build's)."""
    ledger = ledger_of(config)
    return card_of(config, ledger)


def card_of(config: dict[str, Any], ledger: Ledger) -> dict[str, Any]:
    a = ledger.arch
    indexer = indexer_of(config, ledger)
    r = text_reader(config, ledger)
    runs: dict[str, dict[str, Any]] = {}
    for t in a.layer_types:
        m = a.mixer(t)
        run = runs.setdefault(t, {"type": t, "kind": attention_kind(ledger, t, indexer), "layers": 0,
                                  "kv_elems_per_token": m.kv_elems_per_token, "window": m.window,
                                  "state_elems": m.state_elems})
        run["layers"] += 1
    groups = _layer_groups(ledger)
    attn_names: set[str] = set()
    for g in groups:
        att = _attention(g)
        if att is not None:
            attn_names |= _names(att, skip="indexer")   # (the indexer's own k_norm is not a QK-norm)
    grows = a.n_full
    emb = ledger.sum_kind("embedding") + ledger.sum_kind("lm_head")
    if "d_rope" in a.symbols:       # MLA: a rotary part of qk_rope_head_dim beside qk_nope_head_dim
        rope_dims = r.int("qk_rope_head_dim")
        rope_share = rope_dims / (rope_dims + r.int("qk_nope_head_dim"))
    else:
        rope_share = _rotary_share(r.config, a.family)
    no_rope = r.config.get("no_rope_layers")
    attn_layers = sum(1 for t in a.layer_types if a.mixer(t).kv_elems_per_token)
    if isinstance(no_rope, list) and len(no_rope) == a.n_layers and all(v in (0, 1) for v in no_rope):
        nope_layers = sum(1 for v in no_rope if v == 0)        # 0 = a layer without RoPE (Llama 4, SmolLM3)
    elif isinstance(no_rope, list) and not no_rope:          # empty: every no_rope_layer_interval-th layer
        interval = r.int("no_rope_layer_interval", default=4)
        nope_layers = a.n_layers // interval
    else:
        nope_layers = 0
    emb_node = ledger.root.get("text/embedding")
    learned = emb_node is not None and bool(_names(emb_node) & {"wpe", "position_embeddings", "embed_positions"})
    if learned:                                              # GPT-2's learned absolute positions, no RoPE
        rope_share, nope_layers = 0.0, 0
    softcap = {k: r.config.get(k) for k in ("attn_logit_softcapping", "final_logit_softcapping")
               if isinstance(r.config.get(k), (int, float)) and not isinstance(r.config.get(k), bool)}
    act = next((r.config[k] for k in ("hidden_act", "hidden_activation") if isinstance(r.config.get(k), str)),
               config.get("activation_function") if isinstance(config.get("activation_function"), str) else None)
    r.check()
    moe = a.moe
    card = {
        "model_type": a.family,
        "layers": a.n_layers,
        "attention": list(runs.values()),
        "kinds": sorted({run["kind"] for run in runs.values()}, key=KINDS.index),
        "full_layers": grows,
        "bounded_layers": a.n_layers - grows,
        "heads": a.n_heads, "kv_heads": a.n_kv_heads,
        "indexer": None if indexer is None else {"heads": indexer.heads, "head_dim": indexer.head_dim,
                                                 "top_k": indexer.top_k, "own_layers": indexer.own_layers,
                                                 "sparse_layers": indexer.sparse_layers},
        "moe": None if moe is None else {"experts": moe.n_experts, "top_k": moe.top_k, "shared": moe.n_shared,
                                         "dense_layers": moe.n_dense_layers or 0, "moe_layers": moe.n_moe_layers,
                                         "expert_d_ff": moe.expert_d_ff},
        "ffn": {"gated": a.ffn_matrices == 3, "act": act},
        "total": ledger.total, "active": ledger.active_per_token, "text_backbone": ledger.text_backbone,
        "norm": {"placement": _norm_placement(groups), "type": _norm_type(ledger),
                 "qk_norm": bool(attn_names & {"q_norm", "k_norm", "q_layernorm", "k_layernorm"}),
                 "softcap": softcap, "sinks": "sinks" in attn_names},
        "position": {"scheme": "learned" if learned else "rope", "rope_share": rope_share,
                     "nope_layers": nope_layers, "rope_layers": 0 if learned else attn_layers - nope_layers,
                     "context": a.context_length},
        "embedding": {"vocab": a.vocab_size, "tied": a.tied_embeddings, "params": emb,
                      "share": emb / ledger.total if ledger.total else 0.0},
        "mtp": mtp_cost(ledger),
        "kv_bytes_per_token": kv_bytes_per_token(ledger),   # (the layers whose cache grows with T)
    }
    return card


# -- cost models -----------------------------------------------------------------------------------------------
def kv_bytes_at(ledger: Ledger, T: int, bytes_per_elem: int = BF16_BYTES) -> int:
    """Cache bytes of one sequence of T tokens (views.cache_bytes_per_sequence: K/V or latent, index keys, states)."""
    return cache_bytes_per_sequence(ledger, T, bytes_per_elem)


def _runs(ledger: Ledger) -> list[tuple[str, Mixer, int]]:
    """(layer type, its Mixer, how many layers) in first-seen order."""
    a = ledger.arch
    return [(t, m, k) for (t, _), (m, k) in zip(layer_runs(a.layer_types), a.mixer_counts)]


def _index_flops_per_token(indexer: Indexer) -> int:
    """The indexer's scoring of one more cached token, over every layer with its own: 2 · H_I · (d_I + 1) each."""
    return indexer.own_layers * 2 * indexer.heads * (indexer.head_dim + 1)


def attention_flops(config: dict[str, Any], ledger: Ledger, T: int) -> dict[str, Any]:
    """Attention work for one generated token with T cached tokens: {"dense": as if every layer attended to all
    it may, "indexer": the DSA indexer's scoring, "attend": the attention proper (top-k tokens in sparse layers),
    "total": indexer + attend}. Without an indexer, total == dense == views.attention_score_flops; with one on
    MLA, the sparse layers and their dense counterpart are counted in MQA mode (the module docstring)."""
    indexer = indexer_of(config, ledger)
    if indexer is None:
        dense = attention_score_flops(ledger, T)
        return {"dense": dense, "indexer": 0, "attend": dense, "total": dense}
    dense = attend = 0
    for t, m, k in _runs(ledger):
        width, seen = indexer.width(t, m), m.attended(T)
        dense += 2 * width * seen * k
        attend += 2 * width * (min(seen, indexer.top_k) if t in SPARSE_TYPES else seen) * k
    indexer_work = _index_flops_per_token(indexer) * T
    return {"dense": dense, "indexer": indexer_work, "attend": attend, "total": indexer_work + attend}


def attention_flops_per_context_token(config: dict[str, Any], ledger: Ledger) -> int:
    """How many more attention FLOPs each generated token costs per further cached token, once the context is
    past every window and the indexer's top_k: 2 · score_width per layer that sees the whole context (views), and
    in a model with an indexer, instead of its sparse layers' attention (which stops growing at top_k), the
    indexer's 2 · H_I · (d_I + 1) per layer with its own."""
    indexer = indexer_of(config, ledger)
    if indexer is None:
        return score_flops_per_context_token(ledger)
    rest = sum(2 * m.score_width * k for t, m, k in _runs(ledger) if m.window is None and t not in SPARSE_TYPES)
    return rest + _index_flops_per_token(indexer)


def sparse_crossover_T(config: dict[str, Any], ledger: Ledger) -> int | None:
    """The smallest context (in tokens) from which the sparse path (indexer + top-k attention) costs less than
    dense attention over every token; None without an indexer or when it never does. Beyond top_k the dense work
    grows by 2 · width per token per sparse layer and the sparse only by the indexer's scoring."""
    indexer = indexer_of(config, ledger)
    if indexer is None:
        return None
    per_T_dense = sum(2 * indexer.width(t, m) * k for t, m, k in _runs(ledger)
                      if t in SPARSE_TYPES and m.window is None)
    # below top_k: sparse = dense + indexer (never cheaper); above: dense' - sparse' = per_T_dense (T - k) - index T
    if per_T_dense <= _index_flops_per_token(indexer):
        return None
    lo, hi = indexer.top_k, 1 << 40
    while lo < hi:
        mid = (lo + hi) // 2
        f = attention_flops(config, ledger, mid)
        if f["total"] < f["dense"]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def mixer_params(ledger: Ledger) -> int:
    """Token-mixer parameters of the text backbone: every layer's attention (with its indexer, its q/k norms and
    sinks), Gated DeltaNet or Mamba mixer (views.breakdown's attention, linear_attention and mamba parts, which
    hold the MTP and vision parts apart)."""
    parts = breakdown(ledger)
    return sum(parts.get(k, 0) for k in ("attention", "linear_attention", "mamba"))


def mtp_cost(ledger: Ledger) -> dict[str, Any]:
    """{"modules": MTP modules, "params": the checkpoint's MTP parameters, "flops_per_token": forward FLOPs of one
    extra predicted token, "shared_head": whether it borrows the main model's output head, "share": params over
    the total, "flops_share": its FLOPs over the main model's weight FLOPs per token}."""
    node = ledger.part("mtp")
    if node is None:
        return {"modules": 0, "params": 0, "flops_per_token": 0, "shared_head": False, "share": 0.0,
                "flops_share": 0.0}
    a = ledger.arch
    modules = _mtp_modules(node)
    weights = node.sum_where(lambda leaf, kinds: leaf.matmul, active=True)
    has_head = any(n.shape is not None and n.matmul and a.vocab_size in n.shape for n in node.walk())
    flops = 2 * weights + (0 if has_head else 2 * modules * a.vocab_size * a.d_model)
    main = param_flops_per_token(ledger)
    return {"modules": modules, "params": node.count, "flops_per_token": flops, "shared_head": not has_head,
            "share": node.count / ledger.total, "flops_share": flops / main if main else 0.0}


def _mtp_modules(node: Node) -> int:
    """Decoder layers in the MTP part (one per module in DeepSeek-V3 and Qwen3.5's layout)."""
    layers = node.get(f"{node.key}/layers")
    if layers is None:
        return 1
    return sum(c.n for c in layers.children)


# -- what if one fork went the other way ----------------------------------------------------------------------
WHAT_IFS = ("none", "no_linear", "no_sliding", "mla_to_gqa", "no_indexer", "no_shared")


def what_if_options(card: dict[str, Any]) -> list[str]:
    """The swaps that change something in this model."""
    kinds = set(card["kinds"])
    out = ["none"]
    if kinds & {"linear", "mamba"}:
        out.append("no_linear")
    if kinds & {"sliding", "chunked"}:
        out.append("no_sliding")
    if kinds & {"mla", "sparse"}:
        out.append("mla_to_gqa")
    if card["indexer"]:
        out.append("no_indexer")
    if card["moe"] and card["moe"]["shared"]:
        out.append("no_shared")
    return out


def what_if(config: dict[str, Any], swap: str, T: int, kv_heads: int = 8) -> dict[str, Any]:
    """The model as it is and with one fork swapped, at context T: {"base": {...}, "swapped": {...}} each with
    cache bytes per sequence (BF16), attention FLOPs per token, total and active parameters.

    no_linear: every linear-attention / Mamba layer becomes the model's own full-attention layer (its parameters
    and cache); no_sliding: the windowed layers keep their heads and attend to everything; mla_to_gqa: MLA's
    latent becomes a GQA cache of kv_heads heads of K (qk_nope + qk_rope) and V (v_head_dim) widths, with
    q/k/v/o projections of those widths (the query as wide as MLA's); no_indexer: DSA's indexer removed (dense
    MLA over every token, no index keys); no_shared: the always-active shared experts removed."""
    ledger = ledger_of(config)
    if swap not in WHAT_IFS:
        raise ValueError(f"swap: expected one of {', '.join(WHAT_IFS)}, got {swap!r}")
    a = ledger.arch
    base_f = attention_flops(config, ledger, T)
    base = {"cache_bytes": kv_bytes_at(ledger, T), "attn_flops": base_f["total"], "total": ledger.total,
            "active": ledger.active_per_token}
    out = dict(base)
    mixers = [(t, a.mixer(t)) for t in a.layer_types]
    if swap == "no_linear":
        full = next((m for t, m in mixers if m.kv_elems_per_token and m.window is None), None)
        if full is None:
            raise ValueError("swap no_linear: the model has no full-attention layer to copy")
        n_lin = sum(1 for _, m in mixers if m.state_elems and not m.kv_elems_per_token)
        cache = sum((full.kv_elems_per_token * T if (m.state_elems and not m.kv_elems_per_token)
                     else m.kv_elems_per_token * m.attended(T) + m.state_elems) for _, m in mixers)
        extra = 2 * full.score_width * T * n_lin
        per_attn, per_lin = _mixer_params(ledger, "attention"), _mixer_params(ledger, "linear")
        delta = n_lin * (per_attn - per_lin)
        out.update(cache_bytes=cache * BF16_BYTES, attn_flops=base_f["total"] + extra,
                   total=ledger.total + delta, active=ledger.active_per_token + delta)
    elif swap == "no_sliding":
        cache = sum(m.kv_elems_per_token * T + m.state_elems for _, m in mixers)
        extra = sum(2 * m.score_width * (T - min(T, m.window)) for _, m in mixers if m.window is not None)
        out.update(cache_bytes=cache * BF16_BYTES, attn_flops=base_f["total"] + extra)
    elif swap in ("mla_to_gqa", "no_indexer"):
        out.update(_mla_swap(config, ledger, swap, T, kv_heads))
    elif swap == "no_shared":
        shared = _named_sum(ledger, "shared_expert")
        out.update(total=ledger.total - shared[0], active=ledger.active_per_token - shared[1])
    return {"base": base, "swapped": out, "swap": swap, "T": T}


def _named_sum(ledger: Ledger, prefix: str) -> tuple[int, int]:
    """(all, active) parameters of the text backbone's nodes whose name starts with prefix (the outermost)."""
    total = active = 0
    text = ledger.part("text")
    assert text is not None

    def go(node: Node, mult: int, mult_active: int) -> None:
        nonlocal total, active
        if node.name.startswith(prefix):
            total += mult * node.count
            active += mult_active * node.active
            return
        m = mult * node.n
        ma = mult_active * (node.n if node.n_active is None else node.n_active)
        for c in node.children:
            go(c, m, ma)
    for c in text.children:
        go(c, 1, 1)
    return total, active


def _mixer_params(ledger: Ledger, which: str) -> int:
    """Parameters of one layer's token mixer of a kind (attention with full context, or a linear/Mamba mixer),
    from the first layer group holding one."""
    for g in _layer_groups(ledger):
        att = _attention(g)
        if att is None:
            continue
        if which == "attention" and att.kind == "attention":
            return att.count
        if which == "linear" and att.kind in ("linear_attention", "mamba"):
            return att.count
    raise ValueError(f"no {which} layer in the model")


def _mla_widths(config: dict[str, Any], ledger: Ledger, swap: str) -> tuple[int, int, int]:
    """(qk_nope + qk_rope, v_head_dim, the number of MLA layers) of a model with multi-head latent attention."""
    r = text_reader(config, ledger)
    if "d_c" not in ledger.arch.symbols:
        raise ValueError(f"swap {swap}: the model has no multi-head latent attention")
    nope, rope, v_dim = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim"), r.int("v_head_dim")
    r.check()
    return nope + rope, v_dim, sum(1 for t in ledger.arch.layer_types if t in SPARSE_TYPES)


def mla_as_gqa_kv_bytes_per_token(config: dict[str, Any], ledger: Ledger, kv_heads: int) -> int:
    """Cache bytes per token (BF16, layers that see the whole context) once every MLA layer keeps kv_heads heads
    of K (qk_nope + qk_rope) and V (v_head_dim) instead of its latent, rotary key and index key; kv_heads = the
    query heads is MHA (what MLA's up-projections produce per head)."""
    qk, v_dim, n = _mla_widths(config, ledger, "mla_to_gqa")
    a = ledger.arch
    latent = sum(a.mixer(t).kv_elems_per_token for t in a.layer_types if t in SPARSE_TYPES)
    return kv_bytes_per_token(ledger) + (n * kv_heads * (qk + v_dim) - latent) * BF16_BYTES


def _mla_swap(config: dict[str, Any], ledger: Ledger, swap: str, T: int, kv_heads: int) -> dict[str, Any]:
    a = ledger.arch
    qk, v_dim, n = _mla_widths(config, ledger, swap)
    indexer = indexer_of(config, ledger)
    h, d = a.n_heads, a.d_model
    attn_groups = [(g, _attention(g)) for g in _layer_groups(ledger)]
    mla_params = sum(g.n * att.count for g, att in attn_groups if att is not None and att.kind == "attention")
    index_params = _named_sum(ledger, "indexer")[0]
    f = attention_flops(config, ledger, T)
    if swap == "no_indexer":
        cache = kv_bytes_at(ledger, T) - (indexer.own_layers * indexer.head_dim * T * BF16_BYTES if indexer else 0)
        return {"cache_bytes": cache, "attn_flops": f["dense"], "total": ledger.total - index_params,
                "active": ledger.active_per_token - index_params}
    if not 1 <= kv_heads <= h or h % kv_heads:
        raise ValueError(f"kv_heads: expected a divisor of num_attention_heads ({h}), got {kv_heads}")
    gqa_layer = d * h * qk + d * kv_heads * qk + d * kv_heads * v_dim + h * v_dim * d
    delta = n * gqa_layer - mla_params
    grown = mla_as_gqa_kv_bytes_per_token(config, ledger, kv_heads) - kv_bytes_per_token(ledger)
    cache = kv_bytes_at(ledger, T) + grown * T
    score = h * (qk + v_dim)
    return {"cache_bytes": cache, "attn_flops": n * 2 * score * T, "total": ledger.total + delta,
            "active": ledger.active_per_token + delta}


# -- what each stability device and the indexer cost in parameters ---------------------------------------------
def stability_params(ledger: Ledger) -> dict[str, Any]:
    """Parameters of the stability devices in the text backbone: {"qk_norm": q_norm + k_norm weights,
    "sinks": attention sinks (one logit per head), "extra_norms": the norms after each sublayer of a sandwich
    layout (post_attention / post_feedforward where a pre_feedforward norm also exists)}. Soft-capping and
    clipping have none."""
    out = {"qk_norm": 0, "sinks": 0, "extra_norms": 0}
    for g in _layer_groups(ledger):
        att = _attention(g)
        if att is not None:
            for c in att.children:
                if c.name != "indexer" and c.name.split(".")[0] in ("q_norm", "k_norm", "q_layernorm", "k_layernorm"):
                    out["qk_norm"] += g.n * c.count
                if c.name == "sinks":
                    out["sinks"] += g.n * c.count
        names = {c.name for c in g.children if c.kind == "norm"}
        if "pre_feedforward_layernorm" in names:
            out["extra_norms"] += g.n * sum(c.count for c in g.children if c.kind == "norm" and (
                c.name == "post_attention_layernorm" or c.name.startswith("post_feedforward")))
    return out


def indexer_params(ledger: Ledger) -> int:
    """Parameters of every DSA indexer in the text backbone (0 without one)."""
    return _named_sum(ledger, "indexer")[0]
