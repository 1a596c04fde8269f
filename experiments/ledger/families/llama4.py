"""llama4 / llama4_text: GQA attention whose RoPE layers attend within chunks of attention_chunk_size tokens and
whose NoPE layers (no_rope_layers, by default every no_rope_layer_interval-th layer) attend to the whole context;
an MoE FFN (routed experts + one always-active shared expert) on the layers in moe_layers (by default every
interleave_moe_layer_step-th layer), a dense SwiGLU of width intermediate_size_mlp on the others; the multimodal
checkpoint adds a ViT with a pixel-shuffle adapter and a projector into the text width (transformers
Llama4TextConfig / Llama4VisionConfig / Llama4Config, modeling_llama4.py).

The qk L2 norm of the RoPE layers has no weights. Chunked layers are their own layer type, ``chunked_attention``,
with ``Mixer(window=attention_chunk_size)``: a token attends to at most one chunk, so its cache and score work
stop growing at the chunk size (an upper bound: the chunk restarts every attention_chunk_size tokens).
"""
from __future__ import annotations

from ..arch import Mixer, Model
from ..blocks import attention, linear, moe, norm, swiglu
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import (
    build_layers,
    experts,
    gqa_arch,
    gqa_sizes,
    group_names,
    layer_indices,
    layer_norms,
    listed_types,
    moe_info,
    standard_text,
)
from ._parts import wrapper_vision

_MIXERS = ("full_attention", "chunked_attention")


def build_llama4(r: Reader) -> Model:
    """Llama4ForConditionalGeneration: text_config + vision_config."""
    t = r.sub("text_config")
    tied = r.bool("tie_word_embeddings", default=False)
    model = _build_text(t, tied, prefix="text_config.")
    v = wrapper_vision(r, text_only_class="Llama4ForCausalLM")      # the default tower without vision_config
    model.vision = build_vision(v, model.arch.d_model) if v is not None else None
    return model


def build_llama4_text(r: Reader) -> Model:
    """Llama4ForCausalLM on a llama4_text config (the text_config of the multimodal checkpoint on its own)."""
    return _build_text(r, r.bool("tie_word_embeddings", default=False), prefix="")


def _layer_mixers(t: Reader, L: int) -> list[str]:
    """Llama4TextConfig: layer_types if given; else from no_rope_layers (1 = RoPE layer = chunked attention,
    0 = NoPE layer = full attention), which defaults to a NoPE layer every no_rope_layer_interval layers."""
    listed = listed_types(t, L, _MIXERS, "chunked_attention")
    if listed is not None:
        return listed
    no_rope = t.int_list("no_rope_layers", default=[], minimum=0)
    if no_rope and (len(no_rope) != L or any(v > 1 for v in no_rope)):
        t.fail("no_rope_layers", f"a list of {L} flags 0 / 1 (num_hidden_layers)", no_rope,
               involves=("num_hidden_layers",))
        no_rope = []
    if not no_rope:                                     # transformers: an empty list means the default
        interval = t.int("no_rope_layer_interval", default=4)
        no_rope = [int((i + 1) % interval != 0) for i in range(L)]
    return ["chunked_attention" if flag else "full_attention" for flag in no_rope]


def _moe_flags(t: Reader, L: int) -> list[bool]:
    if t.has("moe_layers"):
        moe_layers = set(layer_indices(t, "moe_layers", L))
    else:
        step = t.int("interleave_moe_layer_step", default=1)
        moe_layers = set(range(step - 1, L, step))
    return [i in moe_layers for i in range(L)]


def _build_text(t: Reader, tied: bool, prefix: str) -> Model:
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(t)
    attn_bias = t.bool("attention_bias", default=False)
    ctx = t.int("max_position_embeddings", default=131072, maximum=10**9)   # Scout: 10,485,760
    n_experts, top_k, expert_d_ff = experts(t, "num_local_experts", "num_experts_per_tok", "intermediate_size")
    mixers = _layer_mixers(t, L)
    flags = _moe_flags(t, L)
    dense_d_ff = t.int("intermediate_size_mlp", default=16384) if not all(flags) else None
    chunk = t.int("attention_chunk_size", default=8192) if "chunked_attention" in mixers else None
    names = group_names(mixers, flags)

    def mixer(_: str) -> Node:
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias)

    def ffn(is_moe: bool) -> Node:
        if not is_moe:
            assert dense_d_ff is not None   # (read whenever a layer is dense)
            return swiglu(d, dense_d_ff, name="feed_forward")
        return moe(d, n_experts, top_k, expert_d_ff, router="router", n_shared=1, shared_d_ff=expert_d_ff,
                   shared_name="shared_expert", name="feed_forward")

    layers = build_layers(names, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = standard_text(layers, V, d, tied)
    kv, score = 2 * n_kv * head_dim, 2 * n_heads * head_dim
    has_dense = not all(flags)
    p = prefix
    arch = gqa_arch("llama4", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=dense_d_ff if has_dense else expert_d_ff, ffn_matrices=3,
                    layer_types=mixers, tied_embeddings=tied,
                    mixers={"chunked_attention": Mixer(kv_elems_per_token=kv, score_width=score, window=chunk)},
                    moe=moe_info(n_experts, top_k, expert_d_ff, 1, expert_d_ff, flags),
                    symbols={"d": p + "hidden_size", "L": p + "num_hidden_layers", "V": p + "vocab_size",
                             "h": p + "num_attention_heads", "h_kv": p + "num_key_value_heads", "d_h": p + "head_dim",
                             "T_max": p + "max_position_embeddings",
                             "d_ff": p + ("intermediate_size_mlp" if has_dense else "intermediate_size"),
                             "E": p + "num_local_experts", "k": p + "num_experts_per_tok",
                             "d_e": p + "intermediate_size", "d_s": p + "intermediate_size",
                             "W_chunk": p + "attention_chunk_size",
                             "L_full": p + "no_rope_layers (0 = NoPE, full attention)",
                             "L_moe": p + ("moe_layers" if t.has("moe_layers") else "interleave_moe_layer_step")})
    return Model(text, arch)


def build_vision(v: Reader, d_text: int) -> Node:
    """Llama4VisionModel + Llama4MultiModalProjector: patches unfolded and embedded by one linear (no bias), a
    class token and learned positions, pre/post LayerNorms, pre-LN encoder layers (q/k/v/o and a GELU MLP, all
    with biases), the pixel-shuffle adapter's two bias-free linears, and linear_1 into the text width."""
    w, w_ff = v.int("hidden_size", default=768), v.int("intermediate_size", default=5632)
    depth, n_heads = v.int("num_hidden_layers", default=34, maximum=10**4), v.int("num_attention_heads", default=16)
    c_in, patch, image = v.int("num_channels", default=3), v.int("patch_size", default=14), \
        v.int("image_size", default=448)
    proj_in, proj_out = v.int("projector_input_dim", default=4096), v.int("projector_output_dim", default=4096)
    out_dim = v.int("vision_output_dim", default=7680)
    if w % n_heads:
        v.fail("num_attention_heads", f"a divisor of hidden_size ({w})", n_heads, involves=("hidden_size",))
    attn_w = n_heads * (w // n_heads)
    n_patches = (image // patch) ** 2 + 1
    layer = group("layers", [
        group("self_attn", linear("q_proj", w, attn_w, True) + linear("k_proj", w, attn_w, True)
              + linear("v_proj", w, attn_w, True) + linear("o_proj", attn_w, w, True)),
        group("mlp", linear("fc1", w, w_ff, True) + linear("fc2", w_ff, w, True)),
        norm("input_layernorm", w, True), norm("post_attention_layernorm", w, True)], n=depth)
    vision_model = group("vision_model", [
        group("patch_embedding", linear("linear", c_in * patch * patch, w)),
        leaf("class_embedding", w, matmul=False), leaf("positional_embedding_vlm", n_patches, w, matmul=False),
        norm("layernorm_pre", w, True), norm("layernorm_post", w, True), group("model", [layer]),
        group("vision_adapter", [group("mlp", linear("fc1", w_ff, proj_in) + linear("fc2", proj_out, proj_out))]),
    ])
    projector = group("multi_modal_projector", linear("linear_1", out_dim, d_text))
    return group("vision", [vision_model, projector], kind="vision")


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("llama4", build_llama4, ('Llama4ForConditionalGeneration',)),
    Family("llama4_text", build_llama4_text, ('Llama4ForCausalLM',)),
)
