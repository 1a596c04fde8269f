"""qwen3_vl and qwen3_vl_moe: a Qwen3 text stack (dense, or Qwen3-MoE's routed experts) read from ``text_config``
plus Qwen3-VL's vision tower with its DeepStack mergers (transformers Qwen3VLConfig / Qwen3VLMoeConfig). The text
stack is the qwen3 / qwen3_moe family's own builder; the tower is _vision.qwen3_vl_vision (its configuration
class's defaults without a ``vision_config``, as transformers builds it).
"""
from __future__ import annotations

from ..arch import Model
from ..config import Reader
from ..family import Family
from ._parts import nested, sub_or_defaults, text_config
from ._vision import qwen3_vl_vision
from .llama import build_llama_like
from .qwen3_moe import build_qwen3_moe


def build_qwen3_vl(r: Reader, moe: bool = False) -> Model:
    t = text_config(r, inherit=("tie_word_embeddings",))
    model = build_qwen3_moe(t) if moe else build_llama_like(t, model_type="qwen3")
    model.vision = qwen3_vl_vision(sub_or_defaults(r, "vision_config"), deepstack=True)
    return nested(model, "qwen3_vl_moe" if moe else "qwen3_vl")


FAMILIES = (
    Family("qwen3_vl", build_qwen3_vl, ("Qwen3VLForConditionalGeneration",)),
    Family("qwen3_vl_moe", lambda r: build_qwen3_vl(r, moe=True), ("Qwen3VLMoeForConditionalGeneration",)),
)
