"""gemma4: Gemma 4 (transformers Gemma4Config / Gemma4TextConfig / Gemma4VisionConfig, modeling_gemma4.py).

Text: sliding-window and full-attention layers (layer_types, default five sliding to one full, the last layer
always full). Sliding layers use head_dim and num_key_value_heads; full layers use global_head_dim and, with
attention_k_eq_v, num_global_key_value_heads and no v_proj (the values come from k_proj, normalised without a
scale). q and k are RMS-normalised per head. With enable_moe_block every layer has BOTH a dense GeGLU MLP and an
MoE block beside it (a router with a learned input scale and per-expert scales, routed experts with fused
gate_up_proj, three extra norms); each layer keeps a learned scalar (layer_scalar) that transformers registers as
a buffer (kind hf_buffer). Vision: a ViT with 2-D learned position tables, q/k norms, GeGLU MLPs and four norms per
layer, standardisation buffers, and embed_vision's projection into the text width.

Views: ``sliding_attention`` has Mixer(window=sliding_window); ``full_attention`` its own K/V width
(2 · global kv heads · global_head_dim: K and V are both cached even when they share k_proj).

Not read (refused with a ConfigError naming the key): per-layer input embeddings (hidden_size_per_layer_input > 0,
the small Gemma 4 models) and KV-shared layers (num_kv_shared_layers > 0); the engine does not model them yet.
"""
from __future__ import annotations

from ..arch import Arch, Mixer, Model, layer_runs
from ..blocks import linear, norm, swiglu
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import listed_types, moe_info, sizes, standard_text

_MIXERS = ("sliding_attention", "full_attention")


def build_gemma4(r: Reader) -> Model:
    t = r.sub("text_config")
    tied = r.bool("tie_word_embeddings", default=t.bool("tie_word_embeddings", default=True))
    model = _build_text(t, tied)
    # Gemma4Model builds no tower when vision_config is null or absent (unlike Llama-4's or Qwen-VL's wrappers)
    model.vision = build_vision(r.sub("vision_config"), model.arch.d_model) if r.has("vision_config") else None
    return model


def _layer_types(t: Reader, L: int) -> list[str]:
    types = listed_types(t, L, _MIXERS, "full_attention")
    if types is None:
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(L)]
    types = list(types)                                  # a copy: the last entry is set below
    types[-1] = "full_attention"                         # Gemma4TextConfig forces the last layer to full
    return types


def _build_text(t: Reader, tied: bool) -> Model:
    d, L, V, d_ff = sizes(t, "intermediate_size")
    n_heads = t.int("num_attention_heads")
    n_kv, head_dim = t.int("num_key_value_heads"), t.int("head_dim", default=256)
    global_head_dim = t.int("global_head_dim", default=512)
    k_eq_v = t.bool("attention_k_eq_v", default=False)
    n_kv_global = t.int("num_global_key_value_heads", default=None) if k_eq_v else None
    n_kv_global = n_kv_global or n_kv
    bias = t.bool("attention_bias", default=False)
    ctx = t.int("max_position_embeddings", default=131072)
    types = _layer_types(t, L)
    window = t.int("sliding_window", default=512) if "sliding_attention" in types else None
    if t.int("hidden_size_per_layer_input", default=256, minimum=0):
        t.fail("hidden_size_per_layer_input", "0 (per-layer input embeddings are not modelled by the ledger yet)",
               t.config.get("hidden_size_per_layer_input", 256))
    if t.int("num_kv_shared_layers", default=0, minimum=0):
        t.fail("num_kv_shared_layers", "0 (KV-shared layers are not modelled by the ledger yet)",
               t.config.get("num_kv_shared_layers"))
    has_moe = t.bool("enable_moe_block", default=False)
    if has_moe:
        n_experts, top_k = t.int("num_experts"), t.int("top_k_experts")
        moe_d_ff = t.int("moe_intermediate_size")
        if top_k > n_experts:
            t.fail("top_k_experts", f"an integer <= num_experts ({n_experts})", top_k, involves=("num_experts",))

    def attn(kind: str) -> Node:
        full = kind == "full_attention"
        hd, kv = (global_head_dim, n_kv_global) if full else (head_dim, n_kv)
        parts = linear("q_proj", d, n_heads * hd, bias) + [leaf("q_norm.weight", hd, kind="norm")]
        parts += linear("k_proj", d, kv * hd, bias) + [leaf("k_norm.weight", hd, kind="norm")]
        if not (full and k_eq_v):
            parts += linear("v_proj", d, kv * hd, bias)
        parts += linear("o_proj", n_heads * hd, d, bias)
        return group("self_attn", parts, kind="attention")

    def layer(kind: str, n: int) -> Node:
        norms = [norm(name, d) for name in ("input_layernorm", "post_attention_layernorm",
                                            "pre_feedforward_layernorm", "post_feedforward_layernorm")]
        parts = [attn(kind), swiglu(d, d_ff)]
        if has_moe:
            parts += [group("router", [leaf("proj.weight", n_experts, d, kind="router"),
                                       leaf("scale", d, matmul=False), leaf("per_expert_scale", n_experts)],
                            kind="ffn"),
                      group("experts", [leaf("gate_up_proj", 2 * moe_d_ff, d, matmul=True),
                                        leaf("down_proj", d, moe_d_ff, matmul=True)],
                            kind="ffn", n=n_experts, n_active=top_k)]
            norms += [norm(name, d) for name in ("post_feedforward_layernorm_1", "post_feedforward_layernorm_2",
                                                 "pre_feedforward_layernorm_2")]
        scalar = group("layer_scalar", [leaf("buffer", 1, kind="hf_buffer", matmul=False)], kind="norm")
        return group(kind, parts + norms + [scalar], n=n)

    layers = [layer(kind, n) for kind, n in layer_runs(types)]
    text = standard_text(layers, V, d, tied)
    kv_sliding, score_sliding = 2 * n_kv * head_dim, 2 * n_heads * head_dim
    kv_full, score_full = 2 * n_kv_global * global_head_dim, 2 * n_heads * global_head_dim
    p = "text_config."
    symbols = {"d": p + "hidden_size", "L": p + "num_hidden_layers", "V": p + "vocab_size",
               "d_ff": p + "intermediate_size", "h": p + "num_attention_heads", "h_kv": p + "num_key_value_heads",
               "d_h": p + "head_dim", "T_max": p + "max_position_embeddings", "W": p + "sliding_window",
               "d_h_full": p + "global_head_dim", "h_kv_full": p + "num_global_key_value_heads",
               "L_full": p + "layer_types"}
    moe = None
    if has_moe:   # every layer has a dense MLP and routed experts side by side: no layer is dense only
        moe = moe_info(n_experts, top_k, moe_d_ff, 0, 0, [True] * L, n_dense_layers=0)
        symbols.update(E=p + "num_experts", k=p + "top_k_experts", d_e=p + "moe_intermediate_size")
    arch = Arch(family="gemma4", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                tied_embeddings=tied, sliding_window=window, kv_elems_per_token=kv_full, score_width=score_full,
                mixers={"sliding_attention": Mixer(kv_elems_per_token=kv_sliding, score_width=score_sliding,
                                                   window=window),
                        "full_attention": Mixer(kv_elems_per_token=kv_full, score_width=score_full)},
                moe=moe, symbols=symbols)
    return Model(text, arch)


def build_vision(v: Reader, d_text: int) -> Node:
    """Gemma4VisionModel + Gemma4MultimodalEmbedder (embed_vision); defaults are Gemma4VisionConfig's."""
    w, w_ff = v.int("hidden_size", default=768), v.int("intermediate_size", default=3072)
    depth = v.int("num_hidden_layers", default=16, maximum=10**4)
    n_heads = v.int("num_attention_heads", default=12)
    n_kv = v.int("num_key_value_heads", default=n_heads)
    hd = v.int("head_dim", default=w // n_heads)
    patch, n_pos = v.int("patch_size", default=16), v.int("position_embedding_size", default=10240)
    clipped = v.bool("use_clipped_linears", default=False)
    standardize = v.bool("standardize", default=False)

    def clippable(name: str, d_in: int, d_out: int) -> Node:
        """Gemma4ClippableLinear: a bias-free Linear, with four scalar clip bounds (buffers) when clipping."""
        parts = [leaf("linear.weight", d_out, d_in)]
        if clipped:
            parts += [leaf(b, 1, kind="hf_buffer", matmul=False)
                      for b in ("input_min", "input_max", "output_min", "output_max")]
        return group(name, parts)

    layer = group("layers", [
        group("self_attn", [clippable("q_proj", w, n_heads * hd), clippable("k_proj", w, n_kv * hd),
                            clippable("v_proj", w, n_kv * hd), clippable("o_proj", n_heads * hd, w),
                            norm("q_norm", hd), norm("k_norm", hd)]),
        group("mlp", [clippable("gate_proj", w, w_ff), clippable("up_proj", w, w_ff),
                      clippable("down_proj", w_ff, w)]),
        norm("input_layernorm", w), norm("post_attention_layernorm", w), norm("pre_feedforward_layernorm", w),
        norm("post_feedforward_layernorm", w)], n=depth)
    tower = [group("patch_embedder", [leaf("input_proj.weight", w, 3 * patch * patch),
                                      leaf("position_embedding_table", 2, n_pos, w, matmul=False)]),
             group("encoder", [layer])]
    if standardize:
        tower += [leaf("std_bias", w, kind="hf_buffer", matmul=False),
                  leaf("std_scale", w, kind="hf_buffer", matmul=False)]
    embed = group("embed_vision", [leaf("embedding_projection.weight", d_text, w)])
    return group("vision", [group("vision_tower", tower), embed], kind="vision")


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("gemma4", build_gemma4, ('Gemma4ForConditionalGeneration',)),
)
