"""qwen2_vl (Qwen2-VL) and qwen2_5_vl (Qwen2.5-VL): the Qwen2 text stack (q/k/v biases) read from ``text_config``
or, in the released configs, from the top level, plus a vision tower; without a ``vision_config`` transformers
builds the default tower, and so does the ledger (transformers Qwen2VLConfig, Qwen2_5_VLConfig).

The two differ only in the tower (``VARIANTS``, both in _vision.py): Qwen2-VL's ViT with LayerNorms, a GELU MLP
and a patch merger; Qwen2.5-VL's with RMSNorms, a SwiGLU MLP and a patch merger.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..arch import Model
from ..config import Reader
from ..family import Family
from ..tree import Node
from ._parts import nested, sub_or_defaults, text_config
from ._vision import qwen2_5_vl_vision, qwen2_vl_vision
from .llama import build_llama_like


@dataclass(frozen=True)
class QwenVLVariant:
    architectures: tuple[str, ...]
    vision: Callable[[Reader], Node]


VARIANTS = {
    "qwen2_vl": QwenVLVariant(("Qwen2VLForConditionalGeneration",), qwen2_vl_vision),
    "qwen2_5_vl": QwenVLVariant(("Qwen2_5_VLForConditionalGeneration",), qwen2_5_vl_vision),
}


def build_qwen2_vl(r: Reader, model_type: str) -> Model:
    model = build_llama_like(text_config(r, inherit=("tie_word_embeddings",)), model_type="qwen2")
    model.vision = VARIANTS[model_type].vision(sub_or_defaults(r, "vision_config"))
    return nested(model, model_type, prefix="text_config." if r.has("text_config") else "")


FAMILIES = tuple(Family(mt, partial(build_qwen2_vl, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
