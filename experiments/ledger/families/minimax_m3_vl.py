"""minimax_m3_vl (MiniMax-M3) and step3p7 (Step-3.7-Flash): one text stack in two spellings plus each lab's vision
tower (transformers MiniMaxM3VLConfig / Step3p7Config; Step3p7TextConfig derives from MiniMaxM3VLTextConfig).

Text, both: GQA attention with per-head q/k RMSNorm; a dense SwiGLU on the ``mlp_layer_types`` "dense" layers
(else from ``moe_layer_freq`` 0 / 1) and, on the "sparse" ones, routed experts (``intermediate_size`` wide, a
sigmoid router whose e_score_correction_bias transformers keeps as a buffer) plus one shared expert.
- minimax_m3_vl: gate and up fused (``gate_up_proj``) in the dense MLP (``dense_intermediate_size``) and the
  shared expert (``shared_intermediate_size``); layers listed 1 in ``sparse_attention_config.
  sparse_attention_freq`` (layer type ``minimax_m3_sparse``) add a block-sparse indexer (q_proj, k_proj, q_norm,
  k_norm); every MoE layer by default. The vision tower is a CLIP-style ViT with a Conv3d patch embedding and no
  post-norm; the projector maps single patches (linear_1, linear_2) and merged spatial_merge_size² groups
  (merge_linear_1, merge_linear_2) into the text width. The config's ``num_mtp_modules`` has no published
  tensor layout the engine could follow, so no MTP part is counted.
- step3p7: separate gate/up/down (dense ``intermediate_size``, shared ``share_expert_dim``), a head-wise output
  gate ``g_proj`` (one logit per head; per channel with gating false), sliding layers (``layer_types``) with
  ``num_sliding_attention_heads``; MoE on layers 3.. by default (``moe_layers_enum`` lists them); the
  ``num_nextn_predict_layers`` MTP layers follow the last layer in the checkpoint in DeepSeek-V3's nextn layout
  (transformers skips them on load) and are the ``mtp`` part, dense unless ``moe_layers_enum`` names them. Its
  vision tower: a Conv2d patch embedding without bias, learned positions, pre-LN layers with layer-scale vectors
  (lambda_1, lambda_2), two stride-2 Conv2d downsamplers (w -> 2w -> 4w) and one linear into the text width.
"""
from __future__ import annotations

from ..arch import Mixer, Model
from ..blocks import attention, expert_matrices, gated_fused, linear, moe, norm, swiglu
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import (
    BASE_SYMBOLS,
    build_layers,
    experts,
    gqa_arch,
    gqa_sizes,
    group_names,
    layer_norms,
    moe_info,
    standard_text,
)
from ._parts import flag_list, listed, nested, text_config
from .deepseek_v2 import nextn_mtp


def _moe_flags(t: Reader, L: int, default: list[bool]) -> list[bool]:
    names = listed(t, "mlp_layer_types", L, ("dense", "sparse"))
    if names is not None:
        return [x == "sparse" for x in names]
    freq = flag_list(t, "moe_layer_freq", L)
    return freq if freq is not None else default


def build_m3_text(t: Reader, step: bool, prefix: str) -> Model:
    """The text model, with step3p7's MTP layers (num_nextn_predict_layers) as its ``mtp``."""
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(t, head_dim_default=128)
    tied = t.bool("tie_word_embeddings", default=False)
    ctx = t.int("max_position_embeddings", default=128000 if step else 524288)
    experts_key = "num_local_experts" if t.has("num_local_experts") or not step else "n_routed_experts"
    n_experts, top_k, expert_d_ff = experts(t, experts_key, "num_experts_per_tok", "intermediate_size"
                                            if not step else "moe_intermediate_size")
    n_mtp = t.int("num_nextn_predict_layers", default=0, minimum=0, maximum=MAX_LAYERS) if step else 0
    if step:
        bias = t.bool("attention_bias", default=False)
        mlp_bias = t.bool("mlp_bias", default=False)
        d_ff, shared_d_ff = t.int("intermediate_size"), t.int("share_expert_dim", default=1280)
        other = t.sub("attention_other_setting") if t.has("attention_other_setting") else None
        swa_heads = t.int("num_sliding_attention_heads",
                          default=other.int("num_attention_heads", default=n_heads) if other else n_heads)
        per_head_gate = t.config.get("gating", True) in (True, "per-head")
        if t.has("moe_layers_enum") and not t.has("mlp_layer_types"):
            enum = t.config["moe_layers_enum"]
            items = enum.split(",") if isinstance(enum, str) else enum if isinstance(enum, list) else []
            moe_set = {int(i) for i in items if str(i).strip().isdigit()}
        else:
            moe_set = set(range(3, L))
        flags = _moe_flags(t, L, [i in moe_set for i in range(L)])
        mtp_flags = [L + k in moe_set for k in range(n_mtp)]
        types = listed(t, "layer_types", L, ("full_attention", "sliding_attention")) or ["full_attention"] * L
        window = t.int("sliding_window", default=None) if "sliding_attention" in types else None
    else:
        d_ff, shared_d_ff = t.int("dense_intermediate_size", default=12288), t.int("shared_intermediate_size",
                                                                                 default=3072)
        flags = _moe_flags(t, L, [True] * L)
        mtp_flags = []
        sparse = t.sub("sparse_attention_config") if t.has("sparse_attention_config") else None
        names = listed(t, "layer_types", L, ("full_attention", "minimax_m3_sparse"))
        freq = flag_list(sparse, "sparse_attention_freq", L) if sparse is not None and names is None else None
        types = names or (["minimax_m3_sparse" if f else "full_attention" for f in freq] if freq
                           else ["full_attention"] * L)
        window = None
        if "minimax_m3_sparse" in types:
            src = sparse if sparse is not None and not t.has("index_n_heads") else t
            n_index = src.int("sparse_num_index_heads" if src is sparse else "index_n_heads", default=4)
            index_dim = src.int("sparse_index_dim" if src is sparse else "index_head_dim", default=128)

    def mixer(kind: str = "full_attention") -> Node:
        if step:
            heads = swa_heads if kind == "sliding_attention" else n_heads
            node = attention(d, heads, n_kv, head_dim, qkv_bias=bias, o_bias=bias, qk_norm=True)
            return group(node.name, list(node.children) + linear("g_proj", d, heads if per_head_gate
                                                                 else heads * head_dim), kind=node.kind)
        node = attention(d, n_heads, n_kv, head_dim, qk_norm=True)
        if kind == "minimax_m3_sparse":
            indexer = group("indexer", linear("q_proj", d, n_index * index_dim) + linear("k_proj", d, index_dim)
                            + [norm("q_norm", index_dim), norm("k_norm", index_dim)], kind="attention")
            node = group(node.name, list(node.children) + [indexer], kind=node.kind)
        return node

    def ffn(is_moe: bool) -> Node:
        if step:
            if not is_moe:
                return swiglu(d, d_ff, mlp_bias)
            shared = group("shared_experts", expert_matrices(d, shared_d_ff, mlp_bias))
            return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias",
                       block_extra=(shared,))
        if not is_moe:
            return gated_fused(d, d_ff)
        shared = group("shared_experts", linear("gate_up_proj", d, 2 * shared_d_ff)
                       + linear("down_proj", shared_d_ff, d))
        return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias", block_extra=(shared,))

    layers = build_layers(group_names(types, flags), types, flags, mixer, ffn, lambda: layer_norms(d))
    kv, score = 2 * n_kv * head_dim, 2 * n_heads * head_dim
    mixers = {"sliding_attention": Mixer(kv_elems_per_token=kv, score_width=2 * (swa_heads if step else n_heads)
                                         * head_dim, window=window),
              "minimax_m3_sparse": Mixer(kv_elems_per_token=kv + (index_dim if "minimax_m3_sparse" in types else 0),
                                         score_width=score)}
    arch = gqa_arch("step3p7" if step else "minimax_m3_vl", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=types, tied_embeddings=tied, sliding_window=window,
                    mixers=mixers, moe=moe_info(n_experts, top_k, expert_d_ff, 1, shared_d_ff, flags),
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size" if step else "dense_intermediate_size",
                                 E=experts_key, k="num_experts_per_tok",
                                 d_e="moe_intermediate_size" if step else "intermediate_size",
                                 d_s="share_expert_dim" if step else "shared_intermediate_size",
                                 **({"W": "sliding_window"} if window else {})))
    model = Model(standard_text(layers, V, d, tied), arch)
    if n_mtp:
        model.mtp = nextn_mtp(mtp_flags, len(set(flags + mtp_flags)) > 1, V, d, mixer, ffn)
    return model


def _m3_vision(v: Reader, pr: Reader, d_text: int) -> Node:
    w, w_ff = v.int("hidden_size", default=1280), v.int("intermediate_size", default=5120)
    depth = v.int("num_hidden_layers", default=32, maximum=MAX_LAYERS)
    v.int("num_attention_heads", default=16)
    c_in, p, tp = v.int("num_channels", default=3), v.int("patch_size", default=14), \
        v.int("temporal_patch_size", default=2)
    merge = v.int("spatial_merge_size", default=2)
    hidden = pr.int("projector_hidden_size", default=6144)
    layer = group("layers", [
        group("self_attn", linear("k_proj", w, w, True) + linear("v_proj", w, w, True) + linear("q_proj", w, w, True)
              + linear("out_proj", w, w, True)),
        norm("layer_norm1", w, True), group("mlp", linear("fc1", w, w_ff, True) + linear("fc2", w_ff, w, True)),
        norm("layer_norm2", w, True)], n=depth)
    tower = group("vision_tower", [leaf("embeddings.proj.weight", w, c_in, tp, p, p, matmul=True),
                                   norm("pre_layrnorm", w, True), layer])
    projector = group("multi_modal_projector", linear("linear_1", w, hidden, True)
                      + linear("linear_2", hidden, d_text, True)
                      + linear("merge_linear_1", d_text * merge * merge, hidden, True)
                      + linear("merge_linear_2", hidden, d_text, True))
    return group("vision", [tower, projector], kind="vision")


def _step_vision(v: Reader, d_text: int, projector_bias: bool) -> Node:
    w = v.int("hidden_size" if v.has("hidden_size") or not v.has("width") else "width", default=1536)
    depth = v.int("num_hidden_layers" if v.has("num_hidden_layers") or not v.has("layers") else "layers",
                  default=47, maximum=MAX_LAYERS)
    ratio = v.config.get("mlp_ratio", 8960 / 1536)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 64:
        v.fail("mlp_ratio", "a number > 0 and <= 64", ratio)
        ratio = 8960 / 1536
    w_ff = int(w * ratio)                               # Step3p7VisionConfig: intermediate_size = hidden × mlp_ratio
    c_in, p, image = v.int("num_channels", default=3), v.int("patch_size", default=14), v.int("image_size", default=728)
    layer = group("layers", [
        leaf("lambda_1", w, matmul=False), leaf("lambda_2", w, matmul=False),
        group("self_attn", linear("k_proj", w, w, True) + linear("v_proj", w, w, True) + linear("q_proj", w, w, True)
              + linear("out_proj", w, w, True)),
        group("mlp", linear("fc1", w, w_ff, True) + linear("fc2", w_ff, w, True)),
        norm("layernorm_before", w, True), norm("layernorm_after", w, True)], n=depth)
    tower = group("vision_model", [
        group("embeddings", [leaf("patch_embedding.weight", w, c_in, p, p, matmul=True),
                             leaf("position_embedding.weight", (image // p) ** 2, w, matmul=False)]),
        norm("pre_layernorm", w, True), layer,
        group("downsampler1", [leaf("weight", 2 * w, w, 3, 3, matmul=True), leaf("bias", 2 * w, matmul=False)]),
        group("downsampler2", [leaf("weight", 4 * w, 2 * w, 3, 3, matmul=True), leaf("bias", 4 * w, matmul=False)])])
    projector = group("multi_modal_projector", [leaf("weight", d_text, 4 * w)]
                      + ([leaf("bias", d_text, matmul=False)] if projector_bias else []))
    return group("vision", [tower, projector], kind="vision")


def _sub_or_defaults(r: Reader, key: str) -> Reader:
    return r.sub(key) if r.has(key) else Reader({}, key, r.problems, r.rejected)


def build_minimax_m3_vl(r: Reader) -> Model:
    t = text_config(r, inherit=("tie_word_embeddings",)) if r.has("text_config") else \
        Reader({}, "text_config", r.problems, r.rejected)
    model = build_m3_text(t, step=False, prefix="text_config.")
    model.vision = _m3_vision(_sub_or_defaults(r, "vision_config"), r, model.arch.d_model)
    return nested(model, "minimax_m3_vl")


def build_step3p7(r: Reader) -> Model:
    t = text_config(r, inherit=("tie_word_embeddings",)) if r.has("text_config") else \
        Reader({}, "text_config", r.problems, r.rejected)
    t_defaults = Reader(dict({"vocab_size": 128815, "hidden_size": 4096, "intermediate_size": 11264,
                              "num_hidden_layers": 45, "num_attention_heads": 64, "num_key_value_heads": 8,
                              "head_dim": 128, "num_experts_per_tok": 8, "n_routed_experts": 288,
                              "moe_intermediate_size": 1280}, **t.config), t.prefix, r.problems, r.rejected)
    model = build_m3_text(t_defaults, step=True, prefix="text_config.")
    model.vision = _step_vision(_sub_or_defaults(r, "vision_config"), model.arch.d_model,
                                r.bool("projector_bias", default=False))
    return nested(model, "step3p7")


FAMILIES = (
    Family("minimax_m3_vl", build_minimax_m3_vl, ("MiniMaxM3SparseForConditionalGeneration",)),
    Family("step3p7", build_step3p7, ("Step3p7ForConditionalGeneration",)),
)
