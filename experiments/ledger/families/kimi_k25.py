"""kimi_k25 (Kimi-K2.5 / K2.6): Kimi-K2's DeepSeek-V3 text stack read from ``text_config`` (its model_type kimi_k2
is read as deepseek_v3, as transformers does) plus MoonViT and a patch-merger projector (transformers
Kimi_K25Config / Kimi_K25VisionConfig, modeling_kimi_k25.py).

MoonViT: a Conv2d patch embedding with bias, a learned (height × width × width) position table, pre-LN layers
(LayerNorms with bias; q/k/v/proj and a GELU MLP fc1/fc2, all with biases), a final LayerNorm. The projector
LayerNorms each vision token (projection_hidden_size), merges merge_kernel_size patches and maps them through
in_proj and out_proj into the text width. Moonshot's published vision_config spells the sizes ``vt_hidden_size``
... and ``init_pos_emb_height``; the transformers names win where both are given, the published ones where only
they are (transformers would build its defaults, which equal K2.5's sizes).
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import linear, norm
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._parts import nested, text_config
from .deepseek_v2 import build_deepseek


def _size(v: Reader, key: str, published: str, default: int, **kw: int) -> int:
    return v.int(key if v.has(key) or not v.has(published) else published, default=default, **kw)


def moonvit(v: Reader, d_text: int, projector_norm: int) -> Node:
    w = _size(v, "hidden_size", "vt_hidden_size", 1152)
    w_ff = _size(v, "intermediate_size", "vt_intermediate_size", 4304)
    depth = _size(v, "num_hidden_layers", "vt_num_hidden_layers", 27, maximum=MAX_LAYERS)
    _size(v, "num_attention_heads", "vt_num_attention_heads", 16)
    patch = v.int("patch_size", default=14)
    pos_h = _size(v, "pos_emb_height", "init_pos_emb_height", 64)
    pos_w = _size(v, "pos_emb_width", "init_pos_emb_width", 64)
    kernel = v.int_list("merge_kernel_size", default=[2, 2], minimum=1)
    if len(kernel) != 2:
        v.fail("merge_kernel_size", "a list of two integers >= 1", kernel)
        kernel = [2, 2]
    merged = w * kernel[0] * kernel[1]
    layer = group("layers", [norm("norm1", w, True), norm("norm2", w, True),
                             group("attn", linear("proj", w, w, True) + linear("q_proj", w, w, True)
                                   + linear("k_proj", w, w, True) + linear("v_proj", w, w, True)),
                             group("mlp", linear("fc1", w, w_ff, True) + linear("fc2", w_ff, w, True))], n=depth)
    tower = group("vision_tower", [
        group("patch_embed", [leaf("proj.weight", w, 3, patch, patch, matmul=True), leaf("proj.bias", w, matmul=False),
                              leaf("pos_emb.position_embeddings", pos_h, pos_w, w, matmul=False)]),
        layer, norm("final_layernorm", w, True)])
    projector = group("mm_projector", [norm("pre_norm", projector_norm, True)] + linear("in_proj", merged, merged, True)
                      + linear("out_proj", merged, d_text, True))
    return group("vision", [tower, projector], kind="vision")


def build_kimi_k25(r: Reader) -> Model:
    t = text_config(r, inherit=("tie_word_embeddings",))
    model = build_deepseek(t, "deepseek_v3")
    v = r.sub("vision_config") if r.has("vision_config") else Reader({}, "vision_config", r.problems, r.rejected)
    projector_norm = r.int("projection_hidden_size", default=v.int("mm_hidden_size", default=1152))
    model.vision = moonvit(v, model.arch.d_model, projector_norm)
    return nested(model, "kimi_k25")


FAMILIES = (
    Family("kimi_k25", build_kimi_k25, ("KimiK25ForConditionalGeneration",)),
)
