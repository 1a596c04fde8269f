"""qwen2_vl (Qwen2-VL): the Qwen2 text stack (q/k/v biases) read from ``text_config`` or, in the released configs,
from the top level, plus Qwen2-VL's ViT and patch merger (transformers Qwen2VLConfig; _vision.qwen2_vl_vision;
its defaults without a ``vision_config``, as transformers builds it).
"""
from __future__ import annotations

from ..arch import Model
from ..config import Reader
from ..family import Family
from ._parts import nested, sub_or_defaults, text_config
from ._vision import qwen2_vl_vision
from .llama import build_llama_like


def build_qwen2_vl(r: Reader) -> Model:
    model = build_llama_like(text_config(r, inherit=("tie_word_embeddings",)), model_type="qwen2")
    model.vision = qwen2_vl_vision(sub_or_defaults(r, "vision_config"))
    return nested(model, "qwen2_vl", prefix="text_config." if r.has("text_config") else "")


FAMILIES = (
    Family("qwen2_vl", build_qwen2_vl, ("Qwen2VLForConditionalGeneration",)),
)
