"""What the compute and memory views need to know about a model beyond its parameter tree.

A family builder (experiments/ledger/families/) returns a ``Model``: the text backbone tree, the MTP and vision
trees where the checkpoint holds them, and an ``Arch`` summary (keyword-only) with the sizes the views read:
widths, head counts, per-layer token-mixer types, KV-cache and recurrent-state sizes, and, for a model with
routed experts, its ``MoE`` facts (counts and the config key behind each).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from .tree import Node


def layer_runs(types: list[str]) -> list[tuple[str, int]]:
    """Count layers per type in first-seen order: ['a','a','b','a'] -> [('a', 3), ('b', 1)]."""
    counts: dict[str, int] = {}
    for t in types:
        counts[t] = counts.get(t, 0) + 1
    return list(counts.items())


@dataclass(frozen=True, kw_only=True)
class Mixer:
    """What one layer's token mixer keeps and does per sequence, for the cache and compute views.

    kv_elems_per_token: elements each attended token leaves in the cache (K and V; MLA: its latent + rotary key).
    score_width: score FLOPs per attended token are 2 * this (q·k plus the weighted sum of v, over all heads).
    window: the layer attends to at most this many tokens (sliding window; chunked attention's chunk, an upper
        bound), so its cache and score work stop growing there; None: every earlier token.
    state_elems: a fixed recurrent state per sequence (Gated DeltaNet, Mamba: SSM state + conv buffer).
    A layer with no token mixer (an MLP-only layer) is ``Mixer()``.
    """
    kv_elems_per_token: int = 0
    score_width: int = 0
    window: int | None = None
    state_elems: int = 0

    def attended(self, T: int) -> int:
        """How many of T earlier tokens the layer attends to: all of them, or up to its window."""
        return min(T, self.window or T)

    @property
    def grows(self) -> bool:
        """Its cache and score work grow with every token of context."""
        return self.window is None and self.kv_elems_per_token > 0


# the endings a layer group's name adds to its layer type when a model has dense and MoE layers of one type
# (families/_common.group_names)
GROUP_SUFFIXES = ("_dense", "_moe")

# which symbol of Arch.symbols names the config key of each MoE fact (the families name them for derivations)
MOE_KEY_SYMBOLS = {"experts_key": "E", "top_k_key": "k", "expert_d_ff_key": "d_e", "shared_key": "E_shared",
                   "shared_d_ff_key": "d_s", "dense_layers_key": "L_dense"}


@dataclass(frozen=True, kw_only=True)
class MoE:
    """The routed experts of a model, as the views and lessons read them, and the config key behind each count.

    n_experts routed experts per MoE layer of width expert_d_ff, top_k of them per token; n_shared always-active
    shared experts of width shared_d_ff; n_moe_layers layers with routed experts, n_dense_layers layers with a
    dense FFN instead. A ``*_key`` is the config.json key the family read the count from (a dotted path for a
    nested config: ``text_config.num_local_experts``), None where the count has no key of its own (fixed by the
    architecture, or a rule over several keys). The family fills them (experiments/ledger/families/_common.py
    ``moe_info`` / ``moe_arch``); keys it leaves out are taken from the symbols it names (``MOE_KEY_SYMBOLS``).
    expert_d_ff_own: no dense FFN layer reads the expert width's key (Jamba's intermediate_size sizes both), so
    the experts' width can be changed without changing the dense layers.
    """
    n_experts: int
    top_k: int
    expert_d_ff: int
    n_shared: int = 0
    shared_d_ff: int = 0
    n_moe_layers: int
    n_dense_layers: int | None = None
    experts_key: str | None = None
    top_k_key: str | None = None
    expert_d_ff_key: str | None = None
    shared_key: str | None = None
    shared_d_ff_key: str | None = None
    dense_layers_key: str | None = None
    expert_d_ff_own: bool | None = None

    def keyed(self, arch: Arch) -> MoE:
        """These facts with every key the family left out taken from its symbols, n_dense_layers defaulting to
        the layers without routed experts, and whether the expert width's key is its own."""
        symbols = arch.symbols
        keys = {name: symbols.get(symbol) for name, symbol in MOE_KEY_SYMBOLS.items() if getattr(self, name) is None}
        dense = arch.n_layers - self.n_moe_layers if self.n_dense_layers is None else self.n_dense_layers
        width_key = self.expert_d_ff_key or keys.get("expert_d_ff_key")
        own = self.expert_d_ff_own
        if own is None:   # (shared experts may scale with it: they belong to the same MoE block)
            own = width_key is not None and not (dense and symbols.get("d_ff") == width_key)
        return replace(self, **{k: v for k, v in keys.items() if v is not None}, n_dense_layers=dense,
                       expert_d_ff_own=own)


@dataclass(kw_only=True)
class Arch:
    family: str
    d_model: int
    n_layers: int
    vocab_size: int
    context_length: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int                       # dense FFN width (an expert's width for all-MoE models)
    ffn_matrices: int               # 2 (GELU MLP) or 3 (gated)
    layer_types: list[str]          # per layer: full_attention / sliding_attention / linear_attention
    tied_embeddings: bool
    sliding_window: int | None = None
    kv_elems_per_token: int = 0     # cached elements per token per attention layer (K and V)
    score_width: int = 0            # n_heads * (qk dim + v dim): score FLOPs per cached token = 2 * this
    linear_state_elems: int = 0     # recurrent state elements per linear-attention layer per sequence
    moe: MoE | None = None          # routed experts, None for a dense model
    symbols: dict[str, Any] = field(default_factory=dict)   # the config keys behind each symbol, for derivations
    mixers: dict[str, Mixer] = field(default_factory=dict)   # layer type -> Mixer, where the defaults below do not fit

    def __post_init__(self) -> None:
        if isinstance(self.moe, dict):   # a family that spells the facts as a dict (or {} for none)
            self.moe = MoE(**self.moe) if self.moe else None
        if self.moe is not None:
            self.moe = self.moe.keyed(self)

    def mixer(self, layer_type: str) -> Mixer:
        """The Mixer of a layer type: from ``mixers`` if the family set one, else full attention (K/V for every
        token), sliding attention (up to ``sliding_window``), linear attention (a fixed state) or no mixer."""
        if layer_type in self.mixers:
            return self.mixers[layer_type]
        attention = {"kv_elems_per_token": self.kv_elems_per_token, "score_width": self.score_width}
        if layer_type == "full_attention":
            return Mixer(**attention)
        if layer_type == "sliding_attention":
            return Mixer(**attention, window=self.sliding_window)
        if layer_type == "linear_attention":
            return Mixer(state_elems=self.linear_state_elems)
        return Mixer()

    def group_mixer(self, group: str) -> Mixer:
        """The Mixer of a layer group of the tree (``Ledger.layer_types``): its layer type, which the group's name
        is, or carries with a ``GROUP_SUFFIXES`` ending when a model has both dense and MoE layers of that type."""
        known = set(self.layer_types) | set(self.mixers)
        if group not in known:
            for suffix in GROUP_SUFFIXES:
                if group.endswith(suffix) and group.removesuffix(suffix) in known:
                    return self.mixer(group.removesuffix(suffix))
        return self.mixer(group)

    @property
    def per_layer(self) -> list[Mixer]:
        by_type = {t: self.mixer(t) for t in set(self.layer_types)}   # (one Mixer per type, shared by its layers)
        return [by_type[t] for t in self.layer_types]

    @cached_property
    def mixer_counts(self) -> list[tuple[Mixer, int]]:
        """(Mixer, how many layers have it), one entry per layer type in first-seen order: sums over the layers
        without a step per layer. (Read once the family's builder has returned the Arch, which nothing changes
        afterwards.)"""
        return [(self.mixer(t), k) for t, k in layer_runs(self.layer_types)]

    @property
    def n_full(self) -> int:
        """Layers whose attention covers the whole context."""
        return sum(m.grows for m in self.per_layer)


@dataclass
class Model:
    text: Node
    arch: Arch
    mtp: Node | None = None
    vision: Node | None = None

