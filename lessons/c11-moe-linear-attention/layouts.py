"""The layer layout of a hybrid model whose model_type the ledger engine does not read, from its config's own keys.

Two published forms (data/hybrid_layouts.json holds the configs, each with where it was read):

- MiniMax (MiniMax-Text-01, MiniMax-M1): ``attn_type_list``, one code per layer, 0 = lightning attention (a linear
  attention, MiniMax-01 report, arXiv 2501.08313), 1 = softmax attention;
- Kimi Linear: ``linear_attn_config.kda_layers`` and ``linear_attn_config.full_attn_layers``, 1-based layer
  numbers of the Kimi Delta Attention layers and of the full-attention (MLA) layers (Kimi Linear report,
  arXiv 2510.26692).

``layer_counts`` returns {"linear": n, "full": n, "L": n} and refuses a config whose lists do not cover each of its
``num_hidden_layers`` layers exactly once, naming the key.
"""
from __future__ import annotations


def _layers(config: dict) -> int:
    L = config.get("num_hidden_layers")
    if isinstance(L, bool) or not isinstance(L, int) or L < 1:
        raise ValueError(f"num_hidden_layers: expected a positive integer, got {L!r}")
    return L


def layer_counts(config: dict) -> dict[str, int]:
    L = _layers(config)
    if "attn_type_list" in config:
        codes = config["attn_type_list"]
        if not isinstance(codes, list) or len(codes) != L or any(c not in (0, 1) or isinstance(c, bool)
                                                                 for c in codes):
            raise ValueError(f"attn_type_list: expected {L} codes, each 0 (lightning) or 1 (softmax), got {codes!r}")
        return {"linear": codes.count(0), "full": codes.count(1), "L": L}
    lac = config.get("linear_attn_config")
    if isinstance(lac, dict) and "kda_layers" in lac and "full_attn_layers" in lac:
        kda, full = lac["kda_layers"], lac["full_attn_layers"]
        every = list(kda) + list(full) if isinstance(kda, list) and isinstance(full, list) else None
        if every is None or sorted(every) != list(range(1, L + 1)):
            raise ValueError(f"linear_attn_config.kda_layers / full_attn_layers: expected the layer numbers 1..{L}, "
                             f"each in one list, got {kda!r} / {full!r}")
        return {"linear": len(kda), "full": len(full), "L": L}
    raise ValueError("expected attn_type_list or linear_attn_config.kda_layers / full_attn_layers")
