"""LLaVA-style wrappers: a text family's model read from ``text_config`` (its own builder, chosen by the
text_config's model_type, with that configuration class's defaults for keys left out), a vision tower and a
projector from the vision width into the text width (transformers LlavaConfig / Mistral3Config).

- llava (LLaVA-1.5 and the llava-hf ports): a CLIP ViT (_vision.clip_vision) and a two-layer GELU projector with
  biases (``multimodal_projector_bias``); the text model defaults to Llama.
- mistral3 (Mistral-Small-3.x, Ministral-3, Devstral-2 with vision): a Pixtral ViT (Conv2d patches without bias,
  ln_pre, RMSNorm-ed layers of q/k/v/o attention and a gated MLP) and the Mistral3 projector: an RMSNorm, a patch
  merger of spatial_merge_size² patches, then linear_1 and linear_2; the text model defaults to Mistral-Small's.
  Ministral-3 configs that name the top-level model_type ``ministral3`` reach this family through
  ``architectures`` (Mistral3ForConditionalGeneration).
The input embedding is tied to the output head when the wrapper's ``tie_word_embeddings`` says so (transformers
reads the wrapper's; Mistral3Config's default is true, LlavaConfig's false).
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import linear, norm, swiglu
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node, group, leaf
from . import llama
from ._parts import TEXT_DEFAULTS, nested, with_defaults
from ._vision import clip_vision, mm_projector_2

# wrapper model_type: (default text model_type, its text_config when there is none, tie default)
_WRAPPERS = {
    "llava": ("llama", {}, False),
    "mistral3": ("mistral", {"vocab_size": 131072, "hidden_size": 5120, "intermediate_size": 32768,
                             "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
                             "head_dim": 128, "max_position_embeddings": 131072, "sliding_window": None}, True),
}


# the text families a wrapper may hold, read by their own builders (from their modules, not the registry, which
# sits above every family)
_LLAMA_LIKE = {f.model_type: f.build for f in llama.FAMILIES}
TEXT_BUILDERS = {"llama": _LLAMA_LIKE["llama"], "mistral": _LLAMA_LIKE["mistral"], "ministral3": _LLAMA_LIKE["mistral"]}


def _text(r: Reader, wrapper: str) -> Model:
    text_type, empty_default, tie_default = _WRAPPERS[wrapper]
    tied = r.bool("tie_word_embeddings", default=tie_default)
    if r.has("text_config"):
        t = r.sub("text_config")
        text_type = t.str("model_type", default=text_type)
        if text_type not in TEXT_DEFAULTS:
            t.fail("model_type", "one of " + " / ".join(TEXT_DEFAULTS), text_type)
            text_type = _WRAPPERS[wrapper][0]
        defaults = TEXT_DEFAULTS[text_type]
    else:
        t, defaults = Reader({}, "text_config", r.problems, r.rejected), dict(TEXT_DEFAULTS[text_type], **empty_default)
    t = with_defaults(t, dict(defaults, tie_word_embeddings=tied))
    return TEXT_BUILDERS[text_type](t)


def pixtral_vision(v: Reader) -> Node:
    w, w_ff = v.int("hidden_size", default=1024), v.int("intermediate_size", default=4096)
    depth = v.int("num_hidden_layers", default=24, maximum=MAX_LAYERS)
    v.int("num_attention_heads", default=16)
    c_in, p = v.int("num_channels", default=3), v.int("patch_size", default=14)
    layer = group("layers", [norm("attention_norm", w),
                             swiglu(w, w_ff, name="feed_forward"),
                             group("attention", linear("q_proj", w, w) + linear("k_proj", w, w) + linear("v_proj", w, w)
                                   + linear("o_proj", w, w)),
                             norm("ffn_norm", w)], n=depth)
    return group("vision_tower", [leaf("patch_conv.weight", w, c_in, p, p, matmul=True), norm("ln_pre", w),
                                  group("transformer", [layer])])


def _feature_layers(r: Reader) -> int:
    """How many vision layers' outputs the projector concatenates (vision_feature_layer: one index or a list)."""
    value = r.config.get("vision_feature_layer")
    return len(value) if isinstance(value, list) and value else 1


def build_llava_like(r: Reader, wrapper: str) -> Model:
    model = _text(r, wrapper)
    d_text = model.arch.d_model
    v = r.sub("vision_config") if r.has("vision_config") else Reader({}, "vision_config", r.problems, r.rejected)
    bias = r.bool("multimodal_projector_bias", default=wrapper == "llava")
    n_feat = _feature_layers(r)
    if wrapper == "llava":
        tower = clip_vision(with_defaults(v, {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
                                              "num_attention_heads": 16, "patch_size": 14, "image_size": 336}))
        w = v.int("hidden_size", default=1024)
        projector = mm_projector_2(w * n_feat, d_text, bias)
    else:
        tower = pixtral_vision(v)
        w, merge = v.int("hidden_size", default=1024), r.int("spatial_merge_size", default=2)
        merger = group("patch_merger", linear("merging_layer", w * merge * merge, w))
        projector = group("multi_modal_projector", [norm("norm", w), merger]
                          + linear("linear_1", w * n_feat, d_text, bias) + linear("linear_2", d_text, d_text, bias))
    model.vision = group("vision", [tower, projector], kind="vision")
    return nested(model, wrapper)


FAMILIES = (
    Family("llava", lambda r: build_llava_like(r, "llava"), ("LlavaForConditionalGeneration",)),
    Family("mistral3", lambda r: build_llava_like(r, "mistral3"), ("Mistral3ForConditionalGeneration",)),
)
