"""The Gemma family: gemma (v1), gemma2, gemma3_text and gemma3 (text + a SigLIP vision tower), read as the
transformers 5 configuration classes GemmaConfig, Gemma2Config, Gemma3TextConfig and Gemma3Config define them.

What the ledger shows, per transformers' modeling_gemma*.py:
- every version: RMSNorm (one weight per channel), GeGLU FFN (gate_proj, up_proj, down_proj), head_dim 256 by
  default (not hidden_size / heads), input embeddings tied to the output head by default;
- gemma2 and gemma3: four norms per layer (input_layernorm, post_attention_layernorm, pre_feedforward_layernorm,
  post_feedforward_layernorm) and sliding-window layers (``sliding_attention``, window ``sliding_window``)
  between global ones (``full_attention``): gemma2 alternates, gemma3 makes every 6th layer global
  (``sliding_window_pattern``) unless ``layer_types`` lists them;
- gemma3: per-head q_norm / k_norm in attention; the multimodal checkpoint adds a SigLIP vision tower and the
  multi_modal_projector (mm_input_projection_weight: vision width x text width, and mm_soft_emb_norm), both in
  the ledger's ``vision`` part.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Arch, Model
from ..blocks import attention, norm, siglip_vision, swiglu
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import build_layers, gqa_arch, standard_text
from ._windows import every_nth_global, listed_layer_types, pattern_layer_types, window_of


@dataclass(frozen=True)
class GemmaVariant:
    """One text model_type: its config class's size defaults (read for a gemma3 text_config, which may leave
    them out) and its layer layout."""
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    max_position_embeddings: int
    sliding_window: int | None
    global_every: int | None        # every n-th layer global, the others sliding (None: every layer global)
    pattern_key: bool               # n is the config's sliding_window_pattern (default global_every)
    four_norms: bool                # pre/post norms around both attention and the FFN
    qk_norm: bool                   # per-head q_norm / k_norm


VARIANTS = {
    "gemma": GemmaVariant(256000, 3072, 24576, 28, 16, 16, 8192, None, global_every=None, pattern_key=False,
                          four_norms=False, qk_norm=False),
    "gemma2": GemmaVariant(256000, 2304, 9216, 26, 8, 4, 8192, 4096, global_every=2, pattern_key=False,
                           four_norms=True, qk_norm=False),
    "gemma3_text": GemmaVariant(262208, 2304, 9216, 26, 8, 4, 131072, 4096, global_every=6, pattern_key=True,
                                four_norms=True, qk_norm=True),
}


def build_gemma(r: Reader, model_type: str) -> Model:
    """gemma / gemma2 / gemma3_text: a text-only model from a flat config."""
    text, arch = _gemma_text(r, model_type, "", nested=False)
    return Model(text, arch)


def build_gemma3(r: Reader) -> Model:
    """gemma3 (Gemma3ForConditionalGeneration): text_config (Gemma3TextConfig defaults where keys are absent),
    vision_config (SiglipVisionConfig defaults) and the projector between them."""
    t = r.sub("text_config") if r.has("text_config") else Reader({}, "text_config", r.problems, r.rejected)
    tied = r.bool("tie_word_embeddings", default=t.bool("tie_word_embeddings", default=True))
    text, arch = _gemma_text(t, "gemma3_text", "text_config.", nested=True, tied=tied)
    v = r.sub("vision_config") if r.has("vision_config") else Reader({}, "vision_config", r.problems, r.rejected)
    vision = group("vision", [_siglip(v), _projector(v, arch.d_model)], kind="vision")
    arch.family = "gemma3"
    return Model(text, arch, vision=vision)


def _gemma_text(r: Reader, model_type: str, prefix: str, nested: bool, tied: bool | None = None) -> tuple[Node, Arch]:
    """The text model. A flat config must give its sizes (as every other family's); a gemma3 text_config may
    leave them to Gemma3TextConfig's defaults, as Google's published gemma-3-4b/12b/27b configs do."""
    v = VARIANTS[model_type]

    def size(key: str, **kw: int) -> int:
        return r.int(key, default=getattr(v, key), **kw) if nested else r.int(key, **kw)

    d, L = size("hidden_size"), size("num_hidden_layers", maximum=10**4)
    V, d_ff = size("vocab_size"), size("intermediate_size")
    n_heads, n_kv = size("num_attention_heads"), r.int("num_key_value_heads", default=v.num_key_value_heads)
    if n_heads % n_kv:
        r.fail("num_key_value_heads", f"a divisor of num_attention_heads ({n_heads})", n_kv,
               involves=("num_attention_heads",))
    head_dim = r.int("head_dim", default=256)         # the config classes' default, not hidden_size / heads
    attn_bias = r.bool("attention_bias", default=False)
    if tied is None:
        tied = r.bool("tie_word_embeddings", default=True)
    ctx = r.int("max_position_embeddings", default=v.max_position_embeddings)
    if v.global_every is None:
        types = ["full_attention"] * L
    elif v.pattern_key:
        types = pattern_layer_types(r, L, v.global_every)
    else:                                             # Gemma2Config: even layers slide, odd layers are global
        types = listed_layer_types(r, L) or every_nth_global(L, v.global_every)
    window = window_of(r, types, v.sliding_window)

    def mixer(_: str) -> Node:
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                         qk_norm=v.qk_norm)

    def norms() -> list[Node]:
        names = ["input_layernorm", "post_attention_layernorm"]
        if v.four_norms:
            names += ["pre_feedforward_layernorm", "post_feedforward_layernorm"]
        return [norm(name, d) for name in names]

    layers = build_layers(types, types, [False] * L, mixer, lambda _: swiglu(d, d_ff), norms)
    text = standard_text(layers, V, d, tied)
    p = prefix
    symbols = {"d": p + "hidden_size", "L": p + "num_hidden_layers", "V": p + "vocab_size",
               "d_ff": p + "intermediate_size", "h": p + "num_attention_heads", "h_kv": p + "num_key_value_heads",
               "d_h": p + "head_dim", "T_max": p + "max_position_embeddings"}
    if window:
        symbols.update(W=p + "sliding_window", L_full=p + "layer_types")
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                    tied_embeddings=tied, sliding_window=window, symbols=symbols)
    return text, arch


def _siglip(v: Reader) -> Node:
    """SigLIP vision tower with SiglipVisionConfig's defaults for absent keys."""
    width, d_ff = v.int("hidden_size", default=768), v.int("intermediate_size", default=3072)
    depth = v.int("num_hidden_layers", default=12, maximum=10**4)
    v.int("num_attention_heads", default=12)
    channels, patch = v.int("num_channels", default=3), v.int("patch_size", default=16)
    image = v.int("image_size", default=224)
    return siglip_vision(width, d_ff, depth, channels, patch, (image // patch) ** 2,
                         v.bool("vision_use_head", default=True))


def _projector(v: Reader, d_text: int) -> Node:
    """Gemma3MultiModalProjector: one (vision width x text width) matrix and an RMSNorm over the vision width."""
    width = v.int("hidden_size", default=768)
    return group("multi_modal_projector", [leaf("mm_input_projection_weight", width, d_text),
                                           norm("mm_soft_emb_norm", width)])


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("gemma", partial(build_gemma, model_type="gemma"), ('GemmaForCausalLM',)),
    Family("gemma2", partial(build_gemma, model_type="gemma2"), ('Gemma2ForCausalLM',)),
    Family("gemma3_text", partial(build_gemma, model_type="gemma3_text"), ('Gemma3ForCausalLM',)),
    Family("gemma3", build_gemma3, ('Gemma3ForConditionalGeneration',)),
)
