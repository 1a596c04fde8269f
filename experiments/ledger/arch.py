"""What the compute and memory views need to know about a model beyond its parameter tree.

A family builder (experiments/ledger/families/) returns a ``Model``: the text backbone tree, the MTP and vision
trees where the checkpoint holds them, and an ``Arch`` summary (keyword-only) with the sizes the views read:
widths, head counts, per-layer token-mixer types, KV-cache and recurrent-state sizes, MoE routing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from .tree import Node


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

    @property
    def grows(self) -> bool:
        """Its cache and score work grow with every token of context."""
        return self.window is None and self.kv_elems_per_token > 0


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
    moe: dict = field(default_factory=dict)
    symbols: dict = field(default_factory=dict)   # the config keys behind each symbol, for derivations
    mixers: dict = field(default_factory=dict)    # layer type -> Mixer, where the defaults below do not fit

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

    @property
    def per_layer(self) -> list[Mixer]:
        by_type = {t: self.mixer(t) for t in set(self.layer_types)}   # (one Mixer per type, shared by its layers)
        return [by_type[t] for t in self.layer_types]

    @cached_property
    def mixer_counts(self) -> list[tuple[Mixer, int]]:
        """(Mixer, how many layers have it), one entry per layer type in first-seen order: sums over the layers
        without a step per layer. (Read once the family's builder has returned the Arch, which nothing changes
        afterwards.)"""
        counts: dict[str, int] = {}
        for t in self.layer_types:
            counts[t] = counts.get(t, 0) + 1
        return [(self.mixer(t), k) for t, k in counts.items()]

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

