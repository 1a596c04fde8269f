"""Shared reading for the sliding-window / global-attention families (gemma2, gemma3, cohere2, exaone4,
smollm3): which layers are sliding, and how wide the window is.

Rules follow the transformers 5 configuration classes: an explicit ``layer_types`` list wins; otherwise a
family rule derives it (Gemma2Config: even layers sliding; Gemma3TextConfig / Cohere2Config: every
``sliding_window_pattern``-th layer global, default 6 / 4; Exaone4Config: an int pattern or a string such as
"LLLG", none at all when ``sliding_window`` is null; SmolLM3Config: sliding only on RoPE layers when
``use_sliding_window``). A sliding layer is ``sliding_attention`` and attends to at most ``sliding_window``
tokens; a global one is ``full_attention`` (ledger.arch.Arch.mixer gives each its cache and score work).
"""
from __future__ import annotations

from ..config import Reader
from ._common import BASE_SYMBOLS, listed_types

MIXERS = ("sliding_attention", "full_attention")


def listed_layer_types(r: Reader, L: int) -> list[str] | None:
    """The config's `layer_types` (validated: L entries of sliding_attention / full_attention), or None."""
    return listed_types(r, L, MIXERS, "full_attention")


def every_nth_global(L: int, pattern: int) -> list[str]:
    """Layer i is global when (i + 1) is a multiple of the pattern, sliding otherwise."""
    return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(L)]


def pattern_layer_types(r: Reader, L: int, default_pattern: int) -> list[str]:
    """`layer_types`, else every `sliding_window_pattern`-th layer global (Gemma3, Cohere2)."""
    listed = listed_layer_types(r, L)
    if listed is not None:
        return listed
    return every_nth_global(L, r.int("sliding_window_pattern", default=default_pattern))


def window_of(r: Reader, types: list[str], default: int | None) -> int | None:
    """The sliding window if any layer slides: the config's `sliding_window`, the class default when the key is
    absent, None when the config sets it to null (transformers then attends to every token)."""
    if "sliding_attention" not in types:
        return None
    if "sliding_window" in r.config and r.config["sliding_window"] is None:
        return None
    return r.int("sliding_window", default=default)


def window_symbols(window: int | None) -> dict[str, str]:
    """The config keys behind the symbols of a gated-FFN model with sliding-window layers: the usual ones, and the
    window and the layer list when any layer slides."""
    symbols = dict(BASE_SYMBOLS, d_ff="intermediate_size")
    if window:
        symbols.update(W="sliding_window", L_full="layer_types")
    return symbols
