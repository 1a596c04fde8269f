"""Mixture-of-experts families: qwen3_moe, gpt_oss, deepseek_v3 (MLA + MTP) and qwen3_next (hybrid + MTP).

Same contract as experiments/families.py: each builder reads a config.json through a ``Reader`` (every bad key
collected with what was expected) and returns a ``Model`` whose trees use the checkpoint's tensor names.
Shapes, and the defaults of keys a config may omit, follow the Hugging Face ``transformers`` 5.x modeling and
configuration files of the same ``model_type``. The keys that fix the size of the model (widths, head counts,
expert counts, MLA ranks) are required: a config without them is rejected, not filled in with another model's
numbers.

Ledger conventions for MoE (shared by all four builders, see blocks.moe):
- an MoE FFN is one node of kind "ffn": the router (kind "router", with its bias where there is one), the routed
  experts as ONE node of ``n = num_experts`` copies of one expert with ``n_active = top_k``, shared expert(s) as
  a normal child (``n = n_shared``) and the shared-expert gate where there is one. Routed experts are listed with
  one expert's gate_proj / up_proj / down_proj, as the released checkpoints store them; transformers 5 fuses them
  into 3-D ``gate_up_proj`` / ``down_proj`` parameters of the same total size.
- decoder-layer groups under ``text/layers`` are named by token mixer (``full_attention``, ``sliding_attention``,
  ``linear_attention``) and, only when a model mixes dense and MoE FFNs, suffixed ``_dense`` / ``_moe``
  (DeepSeek-V3: ``full_attention_dense`` x3 + ``full_attention_moe`` x58).

transformers does not build MTP layers; they are the ``mtp`` part (``Ledger.hf_count`` leaves them out).
DeepSeek-V3's router ``e_score_correction_bias`` is stored in the checkpoint but registered by transformers as
a buffer: it is tagged kind "hf_buffer" (see ``Ledger.hf_count``).
"""
from __future__ import annotations

from .blocks import attention, decoder_layer, mla, moe, norm, swiglu
from .config import Reader
from .families import (FAMILIES, Arch, Model, _heads, _lm_head, gdn_from, hybrid_layer_types, layer_runs, mtp_tree,
                       text_tree)
from .tree import Node, group, leaf


# -- shared helpers ------------------------------------------------------------------------------------------
def _experts(r: Reader, n_key: str, k_key: str, width_key: str, allow_zero: bool = False) -> tuple[int, int, int]:
    """(number of routed experts, experts per token, expert width); top-k may not exceed the expert count."""
    n_experts = r.int(n_key, minimum=0 if allow_zero else 1)
    top_k = r.int(k_key)
    width = r.int(width_key)
    if n_experts and top_k > n_experts:
        r.fail(k_key, f"an integer <= {n_key} ({n_experts})", top_k, involves=(n_key,))
    return n_experts, top_k, width


def _layer_indices(r: Reader, key: str, n_layers: int) -> list[int]:
    """A list of layer indices (e.g. mlp_only_layers), each < num_hidden_layers."""
    indices = r.int_list(key, default=[])
    bad = [i for i in indices if i >= n_layers]
    if bad:
        r.fail(key, f"layer indices < num_hidden_layers ({n_layers})", bad[0], involves=("num_hidden_layers",))
    return indices


def _group_names(mixers: list[str], moe_flags: list[bool]) -> list[str]:
    """Per layer, the name of its layer group: the mixer type, suffixed _dense / _moe only if both occur."""
    mixed = len(set(moe_flags)) > 1
    return [m + (("_moe" if f else "_dense") if mixed else "") for m, f in zip(mixers, moe_flags)]


def _build_layers(names: list[str], mixers: list[str], moe_flags: list[bool], make_mixer, make_ffn,
                  make_norms) -> list[Node]:
    """One decoder-layer group per distinct group name, in first-seen order, with n = its number of layers."""
    kind_of = {name: (mixer, flag) for name, mixer, flag in zip(names, mixers, moe_flags)}
    return [decoder_layer(make_mixer(kind_of[name][0]), make_ffn(kind_of[name][1]), make_norms(), name, n)
            for name, n in layer_runs(names)]


def _moe_info(n_experts, top_k, expert_d_ff, n_shared, shared_d_ff, moe_flags) -> dict:
    if not any(moe_flags):
        return {}
    return {"n_experts": n_experts, "top_k": top_k, "n_shared": n_shared, "expert_d_ff": expert_d_ff,
            "shared_d_ff": shared_d_ff, "n_moe_layers": sum(moe_flags)}


def _qwen_moe_flags(r: Reader, n_layers: int, n_experts: int) -> list[bool]:
    """Qwen MoE rule (transformers Qwen3Moe/Qwen3Next DecoderLayer): layer i is MoE unless listed in
    mlp_only_layers, if there are experts and (i + 1) is a multiple of decoder_sparse_step."""
    step = r.int("decoder_sparse_step", default=1)
    dense_only = set(_layer_indices(r, "mlp_only_layers", n_layers))
    return [i not in dense_only and n_experts > 0 and (i + 1) % step == 0 for i in range(n_layers)]


def _dense_d_ff(r: Reader, moe_flags: list[bool]) -> int | None:
    """intermediate_size is only used by dense layers: required if there is one, otherwise read if present."""
    if all(moe_flags):
        return r.int("intermediate_size", default=None)
    return r.int("intermediate_size")


def _layer_norms(d: int) -> list[Node]:
    return [norm("input_layernorm", d), norm("post_attention_layernorm", d)]


_BASE_SYMBOLS = {"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size", "h": "num_attention_heads",
                 "h_kv": "num_key_value_heads", "d_h": "head_dim", "T_max": "max_position_embeddings"}


# ---------------------------------------------------------------------------------------------------------------
# qwen3_moe: Qwen3 attention (GQA, per-head q/k RMSNorm) with a routed-expert FFN, no shared expert
def build_qwen3_moe(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = _heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim",
                                    "hidden_size")
    attn_bias = r.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=32768)
    n_experts, top_k, expert_d_ff = _experts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             allow_zero=True)
    flags = _qwen_moe_flags(r, L, n_experts)
    d_ff = _dense_d_ff(r, flags)
    # transformers: sliding_window applies (to every layer) only with use_sliding_window
    window = r.int("sliding_window", default=None) if r.bool("use_sliding_window", default=False) else None
    mixer_type = "sliding_attention" if window else "full_attention"
    mixers = [mixer_type] * L
    names = _group_names(mixers, flags)

    def ffn(is_moe):
        return moe(d, n_experts, top_k, expert_d_ff) if is_moe else swiglu(d, d_ff)

    layers = _build_layers(names, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                                               qk_norm=True),
                           ffn, lambda: _layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     _lm_head(V, d, tied))
    has_dense = not all(flags)
    arch = Arch("qwen3_moe", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff if has_dense else expert_d_ff, 3, mixers,
                tied, sliding_window=window, kv_elems_per_token=2 * n_kv * head_dim,
                score_width=2 * n_heads * head_dim,
                moe=_moe_info(n_experts, top_k, expert_d_ff, 0, 0, flags),
                symbols=dict(_BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             E="num_experts", k="num_experts_per_tok", d_e="moe_intermediate_size"))
    return Model(text, arch)


# ---------------------------------------------------------------------------------------------------------------
# gpt_oss: GQA with q/k/v/o biases and one learned sink logit per head, alternating sliding / full attention
# (same shapes), every layer MoE with router bias and per-expert biases, no shared expert
_GPT_OSS_MIXERS = ("sliding_attention", "full_attention")


def build_gpt_oss(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = _heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                                     head_dim_default=64)  # GptOssConfig default
    attn_bias = r.bool("attention_bias", default=True)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=131072)
    experts_key = "num_local_experts" if r.has("num_local_experts") or not r.has("num_experts") else "num_experts"
    n_experts, top_k, expert_d_ff = _experts(r, experts_key, "num_experts_per_tok", "intermediate_size")
    if r.has("layer_types"):
        mixers = r.str_list("layer_types", choices=_GPT_OSS_MIXERS)
        if mixers and len(mixers) != L:
            r.fail("layer_types", f"a list of {L} entries (num_hidden_layers)", f"{len(mixers)} entries",
                   involves=("num_hidden_layers",))
        mixers = mixers if len(mixers) == L else ["full_attention"] * L
    else:                                               # GptOssConfig: even layers sliding, odd layers full
        mixers = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(L)]
    window = r.int("sliding_window", default=128) if "sliding_attention" in mixers else None
    flags = [True] * L

    def ffn(_):
        return moe(d, n_experts, top_k, expert_d_ff, router="router", router_bias=True, expert_bias=True)

    layers = _build_layers(mixers, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                                               sinks=True),
                           ffn, lambda: _layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     _lm_head(V, d, tied))
    arch = Arch("gpt_oss", d, L, V, ctx, n_heads, n_kv, head_dim, expert_d_ff, 3, mixers, tied,
                sliding_window=window, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                moe=_moe_info(n_experts, top_k, expert_d_ff, 0, 0, flags),
                symbols=dict(_BASE_SYMBOLS, d_ff="intermediate_size", E=experts_key, k="num_experts_per_tok",
                             d_e="intermediate_size", W="sliding_window", L_full="layer_types"))
    return Model(text, arch)


# ---------------------------------------------------------------------------------------------------------------
# deepseek_v3: multi-head latent attention in every layer; the first first_k_dense_replace layers dense, the rest
# MoE (routed + shared experts, sigmoid router with a correction bias); num_nextn_predict_layers MTP modules
def build_deepseek_v3(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads = r.int("num_attention_heads")
    n_kv = r.int("num_key_value_heads", default=n_heads)     # MLA expands K/V per head; no effect on shapes
    if n_heads % n_kv:
        r.fail("num_key_value_heads", f"a divisor of num_attention_heads ({n_heads})", n_kv,
               involves=("num_attention_heads",))
    if "q_lora_rank" not in r.config:
        r.fail("q_lora_rank", "an integer >= 1, or null for a plain q_proj (the key is missing)")
    q_lora = r.int("q_lora_rank", default=None)
    kv_lora = r.int("kv_lora_rank")
    nope, rope, v_dim = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim"), r.int("v_head_dim")
    attn_bias = r.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=4096)
    n_experts, top_k, expert_d_ff = _experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    n_shared = r.int("n_shared_experts", default=1, minimum=0)
    first_dense = r.int("first_k_dense_replace", default=3, minimum=0)
    if first_dense > L:
        r.fail("first_k_dense_replace", f"an integer <= num_hidden_layers ({L})", first_dense,
               involves=("num_hidden_layers",))
    freq = r.int("moe_layer_freq", default=1)
    n_mtp = r.int("num_nextn_predict_layers", default=0, minimum=0)

    # DeepSeek's modeling_deepseek.py (the checkpoint's own code): MoE from first_k_dense_replace on, every
    # moe_layer_freq-th layer. (transformers ignores moe_layer_freq; every released V3 config has 1.)
    def is_moe(i):
        return i >= first_dense and i % freq == 0

    flags = [is_moe(i) for i in range(L)]
    d_ff = _dense_d_ff(r, flags)
    mixers = ["full_attention"] * L
    names = _group_names(mixers, flags)

    def mixer(_=None):
        return mla(d, n_heads, q_lora, kv_lora, nope, rope, v_dim, attn_bias)

    def ffn(moe_layer):
        if not moe_layer:
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias", n_shared=n_shared,
                   shared_d_ff=expert_d_ff)

    layers = _build_layers(names, mixers, flags, mixer, ffn, lambda: _layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     _lm_head(V, d, tied))

    # MTP module k (checkpoint layer L + k): its own embed_tokens copy, enorm / hnorm, eh_proj (2d -> d), one
    # decoder layer, shared_head.norm and shared_head.head (DeepSeek README_WEIGHTS.md)
    mtp = None
    if n_mtp:
        mtp_flags = [is_moe(L + k) for k in range(n_mtp)]
        mixed = len(set(flags + mtp_flags)) > 1            # name MTP layers as the text layers are named
        mtp_names = ["full_attention" + (("_moe" if f else "_dense") if mixed else "") for f in mtp_flags]
        kinds = dict(zip(mtp_names, mtp_flags))
        modules = [group(name, [leaf("embed_tokens.weight", V, d, kind="embedding", matmul=False),
                                norm("enorm", d), norm("hnorm", d), leaf("eh_proj.weight", d, 2 * d),
                                mixer(), ffn(kinds[name])] + _layer_norms(d)
                         + [group("shared_head", [norm("norm", d), leaf("head.weight", V, d)])], n=n)
                   for name, n in layer_runs(mtp_names)]
        mtp = group("mtp", [group("layers", modules)], kind="mtp")

    has_dense = not all(flags)
    arch = Arch("deepseek_v3", d, L, V, ctx, n_heads, n_kv, nope + rope, d_ff if has_dense else expert_d_ff, 3,
                mixers, tied, kv_elems_per_token=kv_lora + rope, score_width=n_heads * (nope + rope + v_dim),
                moe=_moe_info(n_experts, top_k, expert_d_ff, n_shared, expert_d_ff, flags),
                symbols=dict(_BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             d_h="qk_nope_head_dim + qk_rope_head_dim", E="n_routed_experts",
                             k="num_experts_per_tok", d_e="moe_intermediate_size", E_shared="n_shared_experts",
                             L_dense="first_k_dense_replace", d_c="kv_lora_rank", d_cq="q_lora_rank",
                             d_rope="qk_rope_head_dim", d_nope="qk_nope_head_dim", d_v="v_head_dim",
                             L_mtp="num_nextn_predict_layers"))
    return Model(text, arch, mtp)


# ---------------------------------------------------------------------------------------------------------------
# qwen3_next: Gated DeltaNet + gated full attention (layer_types / full_attention_interval), MoE FFN with one
# gated shared expert, MTP layer(s) stored under mtp.* (not built by transformers)
def _fused_gdn(node: Node) -> Node:
    """Qwen3-Next stores the Gated DeltaNet input projections fused: in_proj_qkvz = [qkv; z] and
    in_proj_ba = [b; a] (Qwen3.5 later split them). Same counts, the checkpoint's names."""
    by_name = {c.name: c for c in node.children}
    qkv, z = by_name["in_proj_qkv.weight"], by_name["in_proj_z.weight"]
    b, a = by_name["in_proj_b.weight"], by_name["in_proj_a.weight"]
    fused = [leaf("in_proj_qkvz.weight", qkv.shape[0] + z.shape[0], qkv.shape[1]),
             leaf("in_proj_ba.weight", b.shape[0] + a.shape[0], b.shape[1])]
    rest = [c for c in node.children if c.name not in ("in_proj_qkv.weight", "in_proj_z.weight",
                                                       "in_proj_b.weight", "in_proj_a.weight")]
    return group(node.name, fused + rest, kind=node.kind)


def build_qwen3_next(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = _heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                                     head_dim_default=256)  # Qwen3NextConfig default
    attn_bias = r.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=32768)
    mixers = hybrid_layer_types(r, L)
    gdn, gdn_info = gdn_from(r, d)
    gdn = _fused_gdn(gdn)
    n_experts, top_k, expert_d_ff = _experts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             allow_zero=True)
    shared_d_ff = r.int("shared_expert_intermediate_size") if n_experts else 0
    flags = _qwen_moe_flags(r, L, n_experts)
    d_ff = _dense_d_ff(r, flags)
    # vLLM's Qwen3NextMTP: getattr(config, "num_nextn_predict_layers", 1); the released checkpoints hold one
    # MTP layer (mtp.*) and their config.json names no count
    n_mtp = r.int("num_nextn_predict_layers", minimum=0,
                  default=r.int("mtp_num_hidden_layers", default=1, minimum=0))
    names = _group_names(mixers, flags)

    def full_attn():
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias, qk_norm=True,
                         output_gate=True)

    def mixer(kind):
        return full_attn() if kind == "full_attention" else gdn

    def ffn(is_moe):
        if not is_moe:
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=1, shared_d_ff=shared_d_ff,
                   shared_name="shared_expert", shared_gate=True)

    layers = _build_layers(names, mixers, flags, mixer, ffn, lambda: _layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     _lm_head(V, d, tied))
    # MTP: a full-attention decoder layer (MoE when the model has experts), fc and three norms (blocks.mtp_tree)
    mtp_name = "full_attention" + (("_moe" if n_experts else "_dense") if len(set(flags)) > 1 else "")
    mtp = mtp_tree(n_mtp, d, decoder_layer(full_attn(), ffn(n_experts > 0), _layer_norms(d), mtp_name, n_mtp)) \
        if n_mtp else None
    has_dense = not all(flags)
    arch = Arch("qwen3_next", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff if has_dense else expert_d_ff, 3, mixers,
                tied, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                linear_state_elems=gdn_info["state"],
                moe=_moe_info(n_experts, top_k, expert_d_ff, 1, shared_d_ff, flags),
                symbols=dict(_BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             E="num_experts", k="num_experts_per_tok", d_e="moe_intermediate_size",
                             d_s="shared_expert_intermediate_size",
                             L_full="layer_types" if r.has("layer_types")
                             else "num_hidden_layers ÷ full_attention_interval"))
    return Model(text, arch, mtp)


MOE_FAMILIES = {
    "qwen3_moe": build_qwen3_moe,
    "gpt_oss": build_gpt_oss,
    "deepseek_v3": build_deepseek_v3,
    "qwen3_next": build_qwen3_next,
}

# Registered here as well as by the import at the bottom of families.py, so either module may be imported first.
FAMILIES.update(MOE_FAMILIES)
