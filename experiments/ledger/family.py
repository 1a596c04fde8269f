"""How a family module declares what it reads: ``FAMILIES = (Family(model_type, build, architectures), ...)``.

``build(reader) -> Model`` reads one config.json (experiments/ledger/config.py ``Reader``); ``architectures`` are
the class names a config lists in ``"architectures"`` that this family also reads when the config's
``model_type`` is one the engine does not know (Kimi-K2 ships ``kimi_k2`` with ``DeepseekV3ForCausalLM``).
experiments/ledger/registry.py discovers every module's ``FAMILIES``; nothing lists families by hand.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .arch import Model
    from .config import Reader


@dataclass(frozen=True)
class Family:
    model_type: str
    build: Callable[[Reader], Model]
    architectures: tuple[str, ...] = ()
