"""What the compute and memory views need to know about a model beyond its parameter tree.

A family builder (experiments/ledger/families/) returns a ``Model``: the text backbone tree, the MTP and vision
trees where the checkpoint holds them, and an ``Arch`` summary (keyword-only) with the sizes the views read:
widths, head counts, per-layer token-mixer types, KV-cache and recurrent-state sizes, MoE routing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .tree import Node


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

    @property
    def n_full(self) -> int:
        return self.layer_types.count("full_attention")


@dataclass
class Model:
    text: Node
    arch: Arch
    mtp: Node | None = None
    vision: Node | None = None

