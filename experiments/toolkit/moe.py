"""A MoE config's routed experts, changed through the engine's MoE facts (experiments.ledger.arch.MoE).

Which config key holds a model's expert count, top-k and expert width is the family's knowledge: its builder
records it in ``ledger.arch.moe`` (``experts_key``, ``top_k_key``, ``expert_d_ff_key``, dotted for a nested
config such as ``text_config.num_local_experts``). A lesson that varies them reads the keys here and never
keeps a table of its own.
"""
from __future__ import annotations

from typing import cast

from ..ledger import ledger_of, unwrap
from ..ledger.arch import MoE


def moe_facts(config) -> MoE:
    """The MoE facts of a config; a ValueError (Chinese) for a model without routed experts."""
    moe = ledger_of(unwrap(config)).arch.moe
    if moe is None or not (moe.experts_key and moe.top_k_key):
        raise ValueError("这个模型没有可以改的路由专家（config 里找不到专家数和 top-k 的键）")
    return moe


def moe_keys(config) -> tuple[str, str, str | None]:
    """The config keys of (expert count, experts per token, expert width); the width's is None when the width
    cannot change on its own (its key also sizes the dense FFN layers, as Jamba's intermediate_size does)."""
    moe = moe_facts(config)   # (which refuses a model without the first two keys)
    return (cast(str, moe.experts_key), cast(str, moe.top_k_key),
            moe.expert_d_ff_key if moe.expert_d_ff_own else None)


def get_key(config: dict, key: str):
    """config["text_config"]["num_experts"] for key "text_config.num_experts"."""
    node = config
    for part in key.split("."):
        node = node[part]
    return node


def set_key(config: dict, key: str, value) -> None:
    """Set a (dotted) config key in place."""
    *path, last = key.split(".")
    node = config
    for part in path:
        node = node[part]
    node[last] = value

