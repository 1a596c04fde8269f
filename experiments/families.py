"""One builder per `model_type`: read a config.json (validated, every problem collected) into a ledger tree.

Each builder returns a ``Model``: the text backbone tree, the MTP and vision trees where the checkpoint holds
them, and an ``Arch`` summary with the sizes the compute and memory views need. Which keys each family reads,
and their defaults, follow the Hugging Face `transformers` configuration classes of the same name.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .blocks import attention, decoder_layer, gated_deltanet, gelu_mlp, linear, norm, swiglu
from .config import Reader
from .tree import Node, group, leaf


@dataclass
class Arch:
    family: str
    d_model: int
    n_layers: int
    vocab_size: int
    context_length: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int                       # dense FFN width (an expert's width for all-MoE models)
    ffn_matrices: int               # 2 (GELU MLP) or 3 (gated)
    layer_types: list[str]          # per layer: full_attention / sliding_attention / linear_attention
    tied_embeddings: bool
    sliding_window: int | None = None
    kv_elems_per_token: int = 0     # cached elements per token per attention layer (K and V)
    score_width: int = 0            # n_heads * (qk dim + v dim): score FLOPs per cached token = 2 * this
    linear_state_elems: int = 0     # recurrent state elements per linear-attention layer per sequence
    moe: dict = field(default_factory=dict)
    symbols: dict = field(default_factory=dict)   # the config keys behind each symbol, for derivations

    @property
    def n_full(self) -> int:
        return self.layer_types.count("full_attention")


@dataclass
class Model:
    text: Node
    arch: Arch
    mtp: Node | None = None
    vision: Node | None = None


def layer_runs(types: list[str]) -> list[tuple[str, int]]:
    """Count layers per type in first-seen order: ['a','a','b','a'] -> [('a', 3), ('b', 1)]."""
    counts: dict[str, int] = {}
    for t in types:
        counts[t] = counts.get(t, 0) + 1
    return list(counts.items())


def text_tree(embed: list[Node], layers: list[Node], final_norm: Node, lm_head: Node | None) -> Node:
    return group("text", [group("embedding", embed, kind="embedding"), group("layers", layers), final_norm,
                          lm_head])


def _lm_head(vocab: int, d: int, tied: bool) -> Node | None:
    return None if tied else group("lm_head", [leaf("weight", vocab, d)], kind="lm_head")


def _heads(r: Reader, d: int, heads_key: str, kv_key: str | None, head_dim_key: str | None, d_key: str,
           head_dim_default: int | None = None):
    """(query heads, KV heads, head_dim). head_dim: the config's key if present, else the family's default if it
    has one (its transformers config class sets it), else d / heads, which must then divide evenly."""
    n_heads = r.int(heads_key)
    n_kv = r.int(kv_key, default=n_heads) if kv_key else n_heads
    if n_heads % n_kv:
        r.fail(kv_key, f"a divisor of {heads_key} ({n_heads})", n_kv, involves=(heads_key,))
    if head_dim_key and r.has(head_dim_key):
        head_dim = r.int(head_dim_key)
    elif head_dim_default is not None:
        head_dim = head_dim_default
    else:
        if d % n_heads:
            r.fail(heads_key, f"a divisor of the hidden size ({d})", n_heads, involves=(d_key,))
        head_dim = max(d // n_heads, 1)
    return n_heads, n_kv, head_dim


# ---------------------------------------------------------------------------------------------------------------
# gpt2: learned positions, LayerNorm with bias, fused qkv with bias, two-matrix GELU MLP, tied head
def build_gpt2(r: Reader) -> Model:
    d, L, V = r.int("n_embd"), r.int("n_layer", maximum=10**4), r.int("vocab_size")
    n_pos = r.int("n_positions")
    n_heads, _, head_dim = _heads(r, d, "n_head", None, None, "n_embd")
    d_ff = r.int("n_inner", default=4 * d)
    mixer = group("attn", [leaf("c_attn.weight", d, 3 * d), leaf("c_attn.bias", 3 * d, matmul=False),
                           leaf("c_proj.weight", d, d), leaf("c_proj.bias", d, matmul=False)], kind="attention")
    layer = decoder_layer(mixer, gelu_mlp(d, d_ff), [norm("ln_1", d, True), norm("ln_2", d, True)],
                          "full_attention", L)
    text = text_tree([leaf("wte.weight", V, d, matmul=False), leaf("wpe.weight", n_pos, d, matmul=False)],
                     [layer], norm("ln_f", d, True), None)
    arch = Arch("gpt2", d, L, V, n_pos, n_heads, n_heads, head_dim, d_ff, 2, ["full_attention"] * L, True,
                kv_elems_per_token=2 * d, score_width=2 * n_heads * head_dim,
                symbols={"d": "n_embd", "L": "n_layer", "V": "vocab_size", "d_ff": "n_inner (or 4·n_embd)",
                         "h": "n_head", "T_max": "n_positions"})
    return Model(text, arch)


# ---------------------------------------------------------------------------------------------------------------
# llama family: RMSNorm, SwiGLU, GQA; per-family bias and qk-norm conventions
_LLAMA_LIKE = {
    # model_type: (q/k/v bias default, o bias follows attention_bias, qk_norm)
    "llama": ("attention_bias", True, False),
    "mistral": (False, False, False),
    "qwen2": (True, False, False),
    "qwen3": ("attention_bias", True, True),
}


def build_llama_like(r: Reader, model_type: str) -> Model:
    qkv_rule, o_follows, qk_norm = _LLAMA_LIKE[model_type]
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    d_ff = r.int("intermediate_size")
    n_heads, n_kv, head_dim = _heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size")
    attn_bias = r.bool("attention_bias", default=False) if model_type in ("llama", "qwen3") else False
    qkv_bias = attn_bias if qkv_rule == "attention_bias" else qkv_rule
    mlp_bias = r.bool("mlp_bias", default=False) if model_type == "llama" else False
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=4096)
    window = r.int("sliding_window", default=None) if model_type == "mistral" else None
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=qkv_bias, o_bias=attn_bias and o_follows,
                      qk_norm=qk_norm)
    kind = "sliding_attention" if window else "full_attention"
    layer = decoder_layer(mixer, swiglu(d, d_ff, mlp_bias),
                          [norm("input_layernorm", d), norm("post_attention_layernorm", d)], kind, L)
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], [layer], norm("norm", d),
                     _lm_head(V, d, tied))
    arch = Arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim, d_ff, 3, [kind] * L, tied,
                sliding_window=window, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                symbols={"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size",
                         "d_ff": "intermediate_size", "h": "num_attention_heads", "h_kv": "num_key_value_heads",
                         "d_h": "head_dim", "T_max": "max_position_embeddings"})
    return Model(text, arch)


# ---------------------------------------------------------------------------------------------------------------
# qwen3_5: hybrid Gated DeltaNet + gated full attention, MTP, vision tower, text_config nesting
def hybrid_layer_types(r: Reader, L: int) -> list[str]:
    """From `layer_types`, else every `full_attention_interval`-th layer is full attention."""
    choices = ("full_attention", "linear_attention")
    if r.has("layer_types"):
        types = r.str_list("layer_types", choices=choices)
        if types and len(types) != L:
            r.fail("layer_types", f"a list of {L} entries (num_hidden_layers)", f"{len(types)} entries",
                   involves=("num_hidden_layers",))
        return types or ["linear_attention"] * L
    interval = r.int("full_attention_interval", default=4)
    return ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(L)]


def gdn_from(r: Reader, d: int) -> tuple[Node, dict]:
    n_k, n_v = r.int("linear_num_key_heads"), r.int("linear_num_value_heads")
    dk, dv = r.int("linear_key_head_dim"), r.int("linear_value_head_dim")
    kernel = r.int("linear_conv_kernel_dim", default=4)
    if n_v % n_k:
        r.fail("linear_num_value_heads", f"a multiple of linear_num_key_heads ({n_k})", n_v,
               involves=("linear_num_key_heads",))
    state = n_v * dk * dv + (kernel - 1) * (2 * n_k * dk + n_v * dv)
    return gated_deltanet(d, n_k, n_v, dk, dv, kernel), {"state": state}


def mtp_tree(n_mtp: int, d: int, layer: Node) -> Node:
    """Multi-token prediction module: fuse [norm(embedding); norm(hidden)] with fc 2d -> d, then decoder
    layer(s) and a final norm. The released checkpoint holds it; transformers does not build it."""
    return group("mtp", [group("fc", [leaf("weight", d, 2 * d)]), norm("pre_fc_norm_embedding", d),
                         norm("pre_fc_norm_hidden", d), group("layers", [layer]), norm("norm", d)], kind="mtp")


def build_qwen3_5(r: Reader) -> Model:
    t = r.sub("text_config") if r.has("text_config") else r
    d, L, V = t.int("hidden_size"), t.int("num_hidden_layers", maximum=10**4), t.int("vocab_size")
    d_ff = t.int("intermediate_size")
    n_heads, n_kv, head_dim = _heads(t, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size")
    gate = t.bool("attn_output_gate", default=True)
    attn_bias = t.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=t.bool("tie_word_embeddings", default=False))
    ctx = t.int("max_position_embeddings", default=262144)
    types = hybrid_layer_types(t, L)
    gdn, gdn_info = gdn_from(t, d)
    n_mtp = t.int("mtp_num_hidden_layers", default=0, minimum=0)

    def full_attn():
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias, qk_norm=True,
                         output_gate=gate)

    def layer_norms():
        return [norm("input_layernorm", d), norm("post_attention_layernorm", d)]

    mixers = {"full_attention": full_attn(), "linear_attention": gdn}
    layers = [decoder_layer(mixers[kind], swiglu(d, d_ff), layer_norms(), kind, n) for kind, n in layer_runs(types)]
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     _lm_head(V, d, tied))
    mtp = mtp_tree(n_mtp, d, decoder_layer(full_attn(), swiglu(d, d_ff), layer_norms(), "full_attention", n_mtp)) \
        if n_mtp else None
    vision = build_vision(r.sub("vision_config")) if r.has("vision_config") else None
    arch = Arch("qwen3_5", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff, 3, types, tied,
                kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                linear_state_elems=gdn_info["state"],
                symbols={"d": "text_config.hidden_size", "L": "text_config.num_hidden_layers",
                         "V": "text_config.vocab_size", "d_ff": "text_config.intermediate_size",
                         "h": "text_config.num_attention_heads", "h_kv": "text_config.num_key_value_heads",
                         "d_h": "text_config.head_dim", "T_max": "text_config.max_position_embeddings",
                         "L_full": "text_config.num_hidden_layers ÷ text_config.full_attention_interval"})
    return Model(text, arch, mtp, vision)


def build_vision(v: Reader) -> Node:
    """Qwen3-VL style ViT: conv3d patch embedding, learned positions, pre-LN blocks with fused qkv and a GELU
    MLP (all with biases), and a patch merger (LayerNorm + 2-layer MLP) into the language model's width."""
    depth, w, w_ff = v.int("depth", maximum=10**4), v.int("hidden_size"), v.int("intermediate_size")
    c_in, p, tp = v.int("in_channels", default=3), v.int("patch_size"), v.int("temporal_patch_size", default=2)
    merge, out = v.int("spatial_merge_size", default=2), v.int("out_hidden_size")
    n_pos = v.int("num_position_embeddings")
    v.int("num_heads")
    block = group("blocks", [norm("norm1", w, True), norm("norm2", w, True),
                             group("attn", linear("qkv", w, 3 * w, True) + linear("proj", w, w, True)),
                             group("mlp", linear("linear_fc1", w, w_ff, True) + linear("linear_fc2", w_ff, w, True))],
                  n=depth)
    merged = w * merge * merge
    return group("vision", [
        group("patch_embed", [leaf("proj.weight", w, c_in, tp, p, p, matmul=True), leaf("proj.bias", w, matmul=False)]),
        leaf("pos_embed.weight", n_pos, w, matmul=False), block,
        group("merger", [norm("norm", w, True)] + linear("linear_fc1", merged, merged, True)
              + linear("linear_fc2", merged, out, True)),
    ], kind="vision")


FAMILIES = {
    "gpt2": build_gpt2,
    "llama": lambda r: build_llama_like(r, "llama"),
    "mistral": lambda r: build_llama_like(r, "mistral"),
    "qwen2": lambda r: build_llama_like(r, "qwen2"),
    "qwen3": lambda r: build_llama_like(r, "qwen3"),
    "qwen3_5": build_qwen3_5,
}


# The mixture-of-experts families live in their own module (it registers them in FAMILIES when imported).
from . import families_moe  # noqa: E402,F401
