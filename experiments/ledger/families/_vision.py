"""Vision towers (and their projectors into the text width) that several families share, read from a config's
``vision_config`` with the transformers configuration classes' defaults. Each returns the ledger's ``vision``
part (kind "vision"), with transformers' tensor names:

- ``qwen3_vl_vision``: Qwen2.5/3-VL's ViT (Qwen3VLVisionModel): a Conv3d patch embedding, learned positions,
  pre-LN blocks with fused qkv, a patch merger (LayerNorm + two linears) into the text width and, for Qwen3-VL,
  one DeepStack merger per ``deepstack_visual_indexes`` entry (their LayerNorm is over the merged width);
- ``clip_vision``: the CLIP ViT LLaVA-style models use (CLIPVisionModel: Conv2d patches without bias, a class
  token, learned positions, pre_layrnorm, pre-LN layers with biased q/k/v/out and a GELU MLP, post_layernorm);
- ``mm_projector_2``: LLaVA's two-layer projector (linear_1, GELU, linear_2) from the vision width to the text's.
"""
from __future__ import annotations

from ..blocks import linear, norm
from ..config import MAX_LAYERS, Reader
from ..tree import Node, group, leaf


def qwen3_vl_vision(v: Reader, deepstack: bool) -> Node:
    # defaults: Qwen3VLVisionConfig's (Qwen3_5VisionConfig has the same sizes and no DeepStack)
    depth, w = v.int("depth", default=27, maximum=MAX_LAYERS), v.int("hidden_size", default=1152)
    w_ff = v.int("intermediate_size", default=4304)
    c_in, p = v.int("in_channels", default=3), v.int("patch_size", default=16)
    tp = v.int("temporal_patch_size", default=2)
    merge, out = v.int("spatial_merge_size", default=2), v.int("out_hidden_size", default=3584)
    n_pos = v.int("num_position_embeddings", default=2304)
    v.int("num_heads", default=16)
    n_deep = len(v.int_list("deepstack_visual_indexes", default=[8, 16, 24])) if deepstack else 0
    block = group("blocks", [norm("norm1", w, True), norm("norm2", w, True),
                             group("attn", linear("qkv", w, 3 * w, True) + linear("proj", w, w, True)),
                             group("mlp", linear("linear_fc1", w, w_ff, True) + linear("linear_fc2", w_ff, w, True))],
                  n=depth)
    merged = w * merge * merge

    def merger(name: str, norm_width: int, n: int = 1) -> Node:
        return group(name, [norm("norm", norm_width, True)] + linear("linear_fc1", merged, merged, True)
                     + linear("linear_fc2", merged, out, True), n=n)

    parts = [group("patch_embed", [leaf("proj.weight", w, c_in, tp, p, p, matmul=True),
                                   leaf("proj.bias", w, matmul=False)]),
             leaf("pos_embed.weight", n_pos, w, matmul=False), block, merger("merger", w)]
    if n_deep:
        parts.append(merger("deepstack_merger_list", merged, n_deep))
    return group("vision", parts, kind="vision")


def clip_vision(v: Reader, *, layers_used: int | None = None, name: str = "vision_tower") -> Node:
    """CLIPVisionModel with CLIPVisionConfig's defaults. ``layers_used``: how many encoder layers the wrapper
    keeps (transformers builds them all; the count is the config's num_hidden_layers)."""
    w, w_ff = v.int("hidden_size", default=768), v.int("intermediate_size", default=3072)
    depth = v.int("num_hidden_layers", default=12, maximum=MAX_LAYERS)
    v.int("num_attention_heads", default=12)
    c_in, patch, image = v.int("num_channels", default=3), v.int("patch_size", default=32), \
        v.int("image_size", default=224)
    n_pos = (image // patch) ** 2 + 1
    layer = group("layers", [
        group("self_attn", linear("k_proj", w, w, True) + linear("v_proj", w, w, True)
              + linear("q_proj", w, w, True) + linear("out_proj", w, w, True)),
        norm("layer_norm1", w, True), group("mlp", linear("fc1", w, w_ff, True) + linear("fc2", w_ff, w, True)),
        norm("layer_norm2", w, True)], n=depth)
    return group(name, [
        group("embeddings", [leaf("class_embedding", w, matmul=False),
                             leaf("patch_embedding.weight", w, c_in, patch, patch, matmul=True),
                             leaf("position_embedding.weight", n_pos, w, matmul=False)]),
        norm("pre_layrnorm", w, True), group("encoder", [layer]), norm("post_layernorm", w, True)])


def mm_projector_2(d_in: int, d_text: int, bias: bool = True, name: str = "multi_modal_projector",
                   d_hidden: int | None = None) -> Node:
    """Two linears with an activation between (LlavaMultiModalProjector): d_in -> d_hidden (default d_text) ->
    d_text."""
    hidden = d_hidden or d_text
    return group(name, linear("linear_1", d_in, hidden, bias) + linear("linear_2", hidden, d_text, bias))


def qwen2_vl_vision(v: Reader) -> Node:
    """Qwen2-VL's ViT (Qwen2VisionTransformerPretrainedModel): a Conv3d patch embedding without bias, pre-LN blocks
    (LayerNorms with bias, fused qkv and proj with biases, a GELU MLP fc1/fc2 of embed_dim × mlp_ratio), and a
    merger: LayerNorm ln_q, then mlp.0 (merged -> merged) and mlp.2 (merged -> the text width, ``hidden_size``)."""
    depth, w = v.int("depth", default=32, maximum=MAX_LAYERS), v.int("embed_dim", default=1280)
    ratio = v.int("mlp_ratio", default=4)
    v.int("num_heads", default=16)
    c_in, p, tp = v.int("in_chans", default=3), v.int("patch_size", default=14), v.int("temporal_patch_size", default=2)
    merge, out = v.int("spatial_merge_size", default=2), v.int("hidden_size", default=3584)
    block = group("blocks", [norm("norm1", w, True), norm("norm2", w, True),
                             group("attn", linear("qkv", w, 3 * w, True) + linear("proj", w, w, True)),
                             group("mlp", linear("fc1", w, w * ratio, True) + linear("fc2", w * ratio, w, True))],
                  n=depth)
    merged = w * merge * merge
    return group("vision", [leaf("patch_embed.proj.weight", w, c_in, tp, p, p, matmul=True), block,
                            group("merger", [norm("ln_q", w, True)] + linear("mlp.0", merged, merged, True)
                                  + linear("mlp.2", merged, out, True))], kind="vision")


def qwen2_5_vl_vision(v: Reader) -> Node:
    """Qwen2.5-VL's ViT (Qwen2_5_VisionTransformerPretrainedModel): Qwen2-VL's layout with RMSNorms (no bias) in the
    blocks and the merger, and a biased SwiGLU MLP (gate/up/down) of ``intermediate_size`` instead of the GELU one;
    the merger maps into ``out_hidden_size`` (the text width). Window attention changes no tensor. Defaults are
    Qwen2_5_VLVisionConfig's."""
    depth, w = v.int("depth", default=32, maximum=MAX_LAYERS), v.int("hidden_size", default=3584)
    w_ff, out = v.int("intermediate_size", default=3420), v.int("out_hidden_size", default=3584)
    v.int("num_heads", default=16)
    c_in, p = v.int("in_channels", default=3), v.int("patch_size", default=14)
    tp, merge = v.int("temporal_patch_size", default=2), v.int("spatial_merge_size", default=2)
    block = group("blocks", [norm("norm1", w), norm("norm2", w),
                             group("attn", linear("qkv", w, 3 * w, True) + linear("proj", w, w, True)),
                             group("mlp", linear("gate_proj", w, w_ff, True) + linear("up_proj", w, w_ff, True)
                                   + linear("down_proj", w_ff, w, True))], n=depth)
    merged = w * merge * merge
    return group("vision", [leaf("patch_embed.proj.weight", w, c_in, tp, p, p, matmul=True), block,
                            group("merger", [norm("ln_q", w)] + linear("mlp.0", merged, merged, True)
                                  + linear("mlp.2", merged, out, True))], kind="vision")
