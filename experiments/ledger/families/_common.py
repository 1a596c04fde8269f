"""Helpers every family builder shares: the usual reads (sizes, heads, tied embeddings and context, a listed
layer_types), the standard text tree and the Arch of a GQA model, layer grouping, hybrid layer types, Gated
DeltaNet, MTP, and the MoE layer plumbing (expert counts, dense/MoE layer groups, the MoE Arch fields).

Which keys each family reads, and their defaults, follow the Hugging Face `transformers` configuration classes
of the same name. Ledger conventions for MoE (see blocks.moe): an MoE FFN is one node of kind "ffn" holding the
router, the routed experts as ONE node of ``n = num_experts`` copies with ``n_active = top_k``, shared expert(s)
and a shared-expert gate where there is one. Decoder-layer groups under ``text/layers`` are named by token mixer
(``full_attention``, ``sliding_attention``, ``linear_attention``) and, only when a model mixes dense and MoE
FFNs, suffixed ``_dense`` / ``_moe``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..arch import GROUP_SUFFIXES, Arch, Mixer, MoE, layer_runs
from ..blocks import decoder_layer, gated_deltanet, norm
from ..config import MAX_LAYERS, Reader
from ..tree import Node, group, leaf


def sizes(r: Reader, *more: str) -> tuple[int, ...]:
    """d, L, V (hidden_size, num_hidden_layers, vocab_size), then the integer keys in ``more``, in that order."""
    return (r.int("hidden_size"), r.int("num_hidden_layers", maximum=MAX_LAYERS), r.int("vocab_size"),
            *(r.int(key) for key in more))

def tied_context(r: Reader, tied_default: bool, ctx_default: int) -> tuple[bool, int]:
    """(tie_word_embeddings, max_position_embeddings) with the family's defaults."""
    return r.bool("tie_word_embeddings", default=tied_default), r.int("max_position_embeddings", default=ctx_default)

def text_tree(embed: list[Node], layers: list[Node], final_norm: Node, lm_head: Node | None) -> Node:
    return group("text", [group("embedding", embed, kind="embedding"), group("layers", layers), final_norm,
                          lm_head])

def embed_tokens(vocab: int, d: int) -> Node:
    return leaf("embed_tokens.weight", vocab, d, matmul=False)

def lm_head(vocab: int, d: int, tied: bool) -> Node | None:
    return None if tied else group("lm_head", [leaf("weight", vocab, d)], kind="lm_head")

def standard_text(layers: list[Node], vocab: int, d: int, tied: bool) -> Node:
    """The usual text backbone: embed_tokens, the layers, a final RMSNorm ``norm``, lm_head unless tied."""
    return text_tree([embed_tokens(vocab, d)], layers, norm("norm", d), lm_head(vocab, d, tied))

def gqa_widths(n_heads: int, n_kv: int, head_dim: int) -> dict[str, int]:
    """Per attended token: K and V cached (2 · KV heads · head_dim) and scored (2 · heads · head_dim)."""
    return {"kv_elems_per_token": 2 * n_kv * head_dim, "score_width": 2 * n_heads * head_dim}

def gqa_arch(family: str, d: int, L: int, V: int, ctx: int, n_heads: int, n_kv: int, head_dim: int,
             **rest: Any) -> Arch:
    """The Arch of a model whose attention layers are (grouped-query) multi-head attention: sizes, heads and
    their cache/score widths filled in, the family's other fields as given."""
    widths = gqa_widths(n_heads, n_kv, head_dim)
    return Arch(family=family, d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, kv_elems_per_token=widths["kv_elems_per_token"],
                score_width=widths["score_width"], **rest)

def heads(r: Reader, d: int, heads_key: str, kv_key: str | None, head_dim_key: str | None, d_key: str,
           head_dim_default: int | None = None) -> tuple[int, int, int]:
    """(query heads, KV heads, head_dim). head_dim: the config's key if present, else the family's default if it
    has one (its transformers config class sets it), else d / heads, which must then divide evenly."""
    n_heads = r.int(heads_key)
    n_kv = r.int(kv_key, default=n_heads) if kv_key else n_heads
    if n_heads % n_kv:
        r.fail(kv_key or heads_key, f"a divisor of {heads_key} ({n_heads})", n_kv, involves=(heads_key,))
    if head_dim_key and r.has(head_dim_key):
        head_dim = r.int(head_dim_key)
    elif head_dim_default is not None:
        head_dim = head_dim_default
    else:
        if d % n_heads:
            r.fail(heads_key, f"a divisor of the hidden size ({d})", n_heads, involves=(d_key,))
        head_dim = max(d // n_heads, 1)
    return n_heads, n_kv, head_dim

def gqa_sizes(r: Reader, *more: str, head_dim_key: str | None = "head_dim",
              head_dim_default: int | None = None) -> tuple[int, ...]:
    """sizes(r, *more) then gqa_heads(), read in that order: d, L, V, the keys in ``more``, heads, KV heads,
    head_dim."""
    d, L, V, *rest = sizes(r, *more)
    return (d, L, V, *rest, *gqa_heads(r, d, head_dim_key, head_dim_default))

def every_layer_windowed(kind: str, L: int, window: int | None, n_heads: int, n_kv: int,
                         head_dim: int) -> dict[str, Any]:
    """Arch fields of a gated or two-matrix FFN model whose every layer is ``kind`` (sliding_attention when the
    config sets sliding_window, every layer then attending to at most that many tokens): the layer types, the
    window, that kind's Mixer and the symbols (W only with a window)."""
    return {"layer_types": [kind] * L, "sliding_window": window,
            "mixers": {kind: Mixer(**gqa_widths(n_heads, n_kv, head_dim), window=window)},
            "symbols": dict(BASE_SYMBOLS, d_ff="intermediate_size", **({"W": "sliding_window"} if window else {}))}

def gqa_heads(r: Reader, d: int, head_dim_key: str | None = "head_dim",
              head_dim_default: int | None = None) -> tuple[int, int, int]:
    """heads() on the usual keys: num_attention_heads, num_key_value_heads, head_dim, hidden_size."""
    return heads(r, d, "num_attention_heads", "num_key_value_heads", head_dim_key, "hidden_size", head_dim_default)

def listed_types(r: Reader, L: int, choices: tuple[str, ...], fallback: str) -> list[str] | None:
    """The config's ``layer_types`` (L entries out of ``choices``), None when it has none. A list of the wrong
    length is reported; a wrong list gives ``fallback`` on every layer."""
    if not r.has("layer_types"):
        return None
    types = r.str_list("layer_types", choices=choices)
    if types and len(types) != L:
        r.fail("layer_types", f"a list of {L} entries (num_hidden_layers)", f"{len(types)} entries",
               involves=("num_hidden_layers",))
    return types if len(types) == L else [fallback] * L

# ---------------------------------------------------------------------------------------------------------------
# qwen3_5: hybrid Gated DeltaNet + gated full attention, MTP, vision tower, text_config nesting
def hybrid_layer_types(r: Reader, L: int) -> list[str]:
    """From `layer_types` (listed_types), else every `full_attention_interval`-th layer is full attention."""
    listed = listed_types(r, L, ("full_attention", "linear_attention"), "linear_attention")
    if listed is not None:
        return listed
    interval = r.int("full_attention_interval", default=4)
    return ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(L)]

def gdn_from(r: Reader, d: int) -> tuple[Node, dict[str, Any]]:
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

# -- shared helpers ------------------------------------------------------------------------------------------
def experts(r: Reader, n_key: str, k_key: str, width_key: str, allow_zero: bool = False) -> tuple[int, int, int]:
    """(number of routed experts, experts per token, expert width); top-k may not exceed the expert count."""
    n_experts = r.int(n_key, minimum=0 if allow_zero else 1)
    top_k = r.int(k_key)
    width = r.int(width_key)
    if n_experts and top_k > n_experts:
        r.fail(k_key, f"an integer <= {n_key} ({n_experts})", top_k, involves=(n_key,))
    return n_experts, top_k, width

def layer_indices(r: Reader, key: str, n_layers: int) -> list[int]:
    """A list of layer indices (e.g. mlp_only_layers), each < num_hidden_layers."""
    indices = r.int_list(key, default=[])
    bad = [i for i in indices if i >= n_layers]
    if bad:
        r.fail(key, f"layer indices < num_hidden_layers ({n_layers})", bad[0], involves=("num_hidden_layers",))
    return indices

def group_names(mixers: list[str], moe_flags: list[bool]) -> list[str]:
    """Per layer, the name of its layer group: the mixer type, suffixed _dense / _moe only if both occur."""
    mixed = len(set(moe_flags)) > 1
    dense, moe = GROUP_SUFFIXES
    return [m + ((moe if f else dense) if mixed else "") for m, f in zip(mixers, moe_flags)]

def build_layers(names: list[str], mixers: list[str], moe_flags: list[bool], make_mixer: Callable[[str], Node],
                 make_ffn: Callable[[bool], Node], make_norms: Callable[[], list[Node]]) -> list[Node]:
    """One decoder-layer group per distinct group name, in first-seen order, with n = its number of layers."""
    kind_of = {name: (mixer, flag) for name, mixer, flag in zip(names, mixers, moe_flags)}
    return [decoder_layer(make_mixer(kind_of[name][0]), make_ffn(kind_of[name][1]), make_norms(), name, n)
            for name, n in layer_runs(names)]

def moe_info(n_experts: int, top_k: int, expert_d_ff: int, n_shared: int, shared_d_ff: int, moe_flags: list[bool],
             *, n_dense_layers: int | None = None, **keys: Any) -> MoE | None:
    """The MoE facts of a model whose layers have routed experts where ``moe_flags`` says (None if none does).
    n_dense_layers: layers with a dense FFN instead (default: the other layers). ``keys``: the config key behind a
    count (experts_key=, top_k_key=, expert_d_ff_key=, shared_key=, shared_d_ff_key=, dense_layers_key=), where
    it is not the one the family's symbols name (E, k, d_e, E_shared, d_s, L_dense; arch.MOE_KEY_SYMBOLS)."""
    if not any(moe_flags):
        return None
    return MoE(n_experts=n_experts, top_k=top_k, expert_d_ff=expert_d_ff, n_shared=n_shared, shared_d_ff=shared_d_ff,
               n_moe_layers=sum(moe_flags), n_dense_layers=n_dense_layers, **keys)

def moe_arch(moe_flags: list[bool], d_ff: int | None, expert_d_ff: int, n_experts: int, top_k: int,
             n_shared: int, shared_d_ff: int, *, moe_keys: dict[str, Any] | None = None,
             **symbols: Any) -> dict[str, Any]:
    """Arch fields of a gated-FFN model with MoE layers: d_ff (the dense FFN's width, intermediate_size, if any
    layer is dense, else one expert's, moe_intermediate_size), moe_info, and the symbols (the usual ones, d_ff's
    key, then ``symbols``). The MoE facts' config keys are the symbols E, k, d_e, E_shared, d_s, L_dense, unless
    ``moe_keys`` (moe_info's keyword args) says otherwise."""
    dense = not all(moe_flags)
    return {"d_ff": d_ff if dense else expert_d_ff, "ffn_matrices": 3,
            "moe": moe_info(n_experts, top_k, expert_d_ff, n_shared, shared_d_ff, moe_flags, **(moe_keys or {})),
            "symbols": dict(BASE_SYMBOLS, d_ff="intermediate_size" if dense else "moe_intermediate_size", **symbols)}

def qwen_moe_flags(r: Reader, n_layers: int, n_experts: int) -> list[bool]:
    """Qwen MoE rule (transformers Qwen3Moe/Qwen3Next DecoderLayer): layer i is MoE unless listed in
    mlp_only_layers, if there are experts and (i + 1) is a multiple of decoder_sparse_step."""
    step = r.int("decoder_sparse_step", default=1)
    dense_only = set(layer_indices(r, "mlp_only_layers", n_layers))
    return [i not in dense_only and n_experts > 0 and (i + 1) % step == 0 for i in range(n_layers)]

def qwen_moe_sizes(r: Reader, n_layers: int, shared: bool) -> tuple[int, int, int, int, list[bool], int | None]:
    """The Qwen MoE keys (Qwen2Moe / Qwen3Moe / Qwen3Next): (experts, top-k, expert width, shared-expert width,
    per-layer MoE flags, dense width). Zero experts is allowed (every layer dense); shared_expert_intermediate_size
    is read only with ``shared`` and experts."""
    n_experts, top_k, expert_d_ff = experts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             allow_zero=True)
    shared_d_ff = r.int("shared_expert_intermediate_size") if shared and n_experts else 0
    flags = qwen_moe_flags(r, n_layers, n_experts)
    return n_experts, top_k, expert_d_ff, shared_d_ff, flags, dense_d_ff(r, flags)

def dense_d_ff(r: Reader, moe_flags: list[bool]) -> int | None:
    """intermediate_size is only used by dense layers: required if there is one, otherwise read if present."""
    if all(moe_flags):
        return r.int("intermediate_size", default=None)
    return r.int("intermediate_size")

def layer_norms(d: int) -> list[Node]:
    return [norm("input_layernorm", d), norm("post_attention_layernorm", d)]

BASE_SYMBOLS = {"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size", "h": "num_attention_heads",
                 "h_kv": "num_key_value_heads", "d_h": "head_dim", "T_max": "max_position_embeddings"}
