"""deepseek_v2 and deepseek_v3: multi-head latent attention in every layer (queries through q_proj when
``q_lora_rank`` is null, as in DeepSeek-V2-Lite, else through the q_a/q_b bottleneck); the first
``first_k_dense_replace`` layers dense, the others MoE with routed experts and ``n_shared_experts`` always-active
shared experts of ``moe_intermediate_size`` each (transformers DeepseekV2Config / DeepseekV3Config and their
DecoderLayers).

- deepseek_v2: a softmax router with no correction bias; ``mlp_bias`` adds biases to the dense MLP and the shared
  experts.
- deepseek_v32 (DeepSeek-V3.2) and glm_moe_dsa (GLM-5): deepseek_v3's layers plus DeepSeek Sparse Attention's
  lightning indexer in each attention (blocks.dsa_indexer; GLM-5's ``indexer_types`` "shared" layers reuse the
  previous layer's and have none), ``mlp_layer_types`` when listed (transformers DeepseekV32Config,
  GlmMoeDsaConfig; both ignore moe_layer_freq, which every released config sets to 1).
- deepseek_v3: a sigmoid router whose e_score_correction_bias transformers keeps as a buffer; MoE only on every
  ``moe_layer_freq``-th layer from first_k_dense_replace on (DeepSeek's own modeling_deepseek.py; transformers
  ignores the key, every released V3 config has 1); ``num_nextn_predict_layers`` MTP modules that the checkpoint
  holds and transformers does not build.

transformers (and the checkpoint) store the shared experts as ONE MLP of width n_shared · moe_intermediate_size;
the ledger lists them as n_shared copies of one expert's width: the same count.

Also the DeepSeek-V3-style next-token-prediction (nextn / MTP) module both this family and glm4_moe use
(``nextn_mtp``): per module an own embed_tokens copy, enorm / hnorm, eh_proj (2d -> d), one decoder layer and
shared_head.{norm, head}, stored as checkpoint layer num_hidden_layers + k (DeepSeek-V3 README_WEIGHTS.md).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..arch import Arch, Mixer, Model, layer_runs
from ..blocks import dsa_indexer, mla, moe, norm, swiglu
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import (
    build_layers,
    dense_d_ff,
    experts,
    group_names,
    layer_norms,
    moe_arch,
    sizes,
    standard_text,
    tied_context,
)


# ---------------------------------------------------------------------------------------------------------------
# shared by deepseek_v2 / deepseek_v3 / glm4_moe: dense-first layer flags and the nextn MTP module
def first_dense_flags(r: Reader, L: int, default: int) -> tuple[list[bool], int]:
    """MoE from layer first_k_dense_replace on (transformers DeepseekV2/Glm4Moe DecoderLayer)."""
    first_dense = r.int("first_k_dense_replace", default=default, minimum=0)
    if first_dense > L:
        r.fail("first_k_dense_replace", f"an integer <= num_hidden_layers ({L})", first_dense,
               involves=("num_hidden_layers",))
    return [i >= first_dense for i in range(L)], first_dense

def nextn_mtp(mtp_flags: list[bool], mixed: bool, V: int, d: int, mixer: Callable[[], Node],
              ffn: Callable[[bool], Node]) -> Node | None:
    """One nextn module per flag after the last layer (checkpoint layers L, L + 1, ...), each: embed_tokens,
    enorm, hnorm, eh_proj, one decoder layer (MoE where its flag is set), shared_head.norm and shared_head.head.
    Modules are grouped and named as text layers are: full_attention, suffixed _moe / _dense when ``mixed``."""
    if not mtp_flags:
        return None
    names = ["full_attention" + (("_moe" if f else "_dense") if mixed else "") for f in mtp_flags]
    moe_of = dict(zip(names, mtp_flags))
    modules = [group(name, [leaf("embed_tokens.weight", V, d, kind="embedding", matmul=False),
                            norm("enorm", d), norm("hnorm", d), leaf("eh_proj.weight", d, 2 * d),
                            mixer(), ffn(moe_of[name])] + layer_norms(d)
                     + [group("shared_head", [norm("norm", d), leaf("head.weight", V, d)])], n=n)
               for name, n in layer_runs(names)]
    return group("mtp", [group("layers", modules)], kind="mtp")


# ---------------------------------------------------------------------------------------------------------------
# deepseek_v2 / deepseek_v3 / deepseek_v32 / glm_moe_dsa: MLA (optional q bottleneck), dense first layers,
# routed + shared experts; the last two add DeepSeek Sparse Attention's indexer
@dataclass(frozen=True)
class DeepseekVariant:
    """What one model_type does differently: its config class's defaults and the keys only it reads."""
    ctx_default: int                # max_position_embeddings
    shared_default: int             # n_shared_experts
    dense_default: int              # first_k_dense_replace
    mlp_bias_key: bool              # reads mlp_bias (biases on the dense FFN and shared experts)
    sigmoid_router: bool            # a sigmoid router with an e_score_correction_bias buffer; reads
                                    # moe_layer_freq and num_nextn_predict_layers (MTP)
    dsa: bool = False               # a lightning indexer in each attention; reads mlp_layer_types
    shared_indexers: bool = False   # reads indexer_types / index_topk_pattern (layers that reuse an indexer)
    architectures: tuple[str, ...] = ()


VARIANTS = {
    "deepseek_v3": DeepseekVariant(4096, 1, 3, mlp_bias_key=False, sigmoid_router=True,
                                   architectures=("DeepseekV3ForCausalLM",)),
    "deepseek_v2": DeepseekVariant(2048, 2, 0, mlp_bias_key=True, sigmoid_router=False,
                                   architectures=("DeepseekV2ForCausalLM",)),
    "deepseek_v32": DeepseekVariant(163840, 1, 3, mlp_bias_key=False, sigmoid_router=True, dsa=True,
                                    architectures=("DeepseekV32ForCausalLM",)),
    "glm_moe_dsa": DeepseekVariant(202752, 1, 3, mlp_bias_key=False, sigmoid_router=True, dsa=True,
                                   shared_indexers=True, architectures=("GlmMoeDsaForCausalLM",)),
}


def _mlp_layer_flags(r: Reader, L: int, flags: list[bool]) -> list[bool]:
    """DeepseekV32Config / GlmMoeDsaConfig: ``mlp_layer_types`` ("dense" / "sparse" per layer) when listed."""
    if not r.has("mlp_layer_types"):
        return flags
    types = r.str_list("mlp_layer_types", choices=("dense", "sparse"))
    if types and len(types) != L:
        r.fail("mlp_layer_types", f"a list of {L} entries (num_hidden_layers)", f"{len(types)} entries",
               involves=("num_hidden_layers",))
    return [t == "sparse" for t in types] if len(types) == L else flags

def _indexer_flags(r: Reader, L: int) -> list[bool]:
    """GlmMoeDsaConfig: per layer, whether it runs its own indexer (``indexer_types`` "full") or reuses the previous
    full layer's top-k ("shared"); without the list, from ``index_topk_pattern`` (F / S per layer), else layer i
    runs one when max(i - index_skip_topk_offset + 1, 0) is a multiple of ``index_topk_freq`` (defaults 2, 1:
    every layer)."""
    if not r.has("indexer_types"):
        if r.has("index_topk_pattern"):
            pattern = r.str("index_topk_pattern")
            if len(pattern) != L or set(pattern) - {"F", "S"}:
                r.fail("index_topk_pattern", f"a string of {L} letters F / S (num_hidden_layers)", pattern,
                       involves=("num_hidden_layers",))
                return [True] * L
            return [c == "F" for c in pattern]
        freq = r.int("index_topk_freq", default=1)
        offset = r.int("index_skip_topk_offset", default=2, minimum=0)
        return [max(i - offset + 1, 0) % freq == 0 for i in range(L)]
    types = r.str_list("indexer_types", choices=("full", "shared"))
    if types and len(types) != L:
        r.fail("indexer_types", f"a list of {L} entries (num_hidden_layers)", f"{len(types)} entries",
               involves=("num_hidden_layers",))
    return [t == "full" for t in types] if len(types) == L else [True] * L

def build_deepseek(r: Reader, model_type: str, variant: DeepseekVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    ctx_default, shared_default, dense_default, dsa = v.ctx_default, v.shared_default, v.dense_default, v.dsa
    d, L, V = sizes(r)
    n_heads = r.int("num_attention_heads")
    n_kv = r.int("num_key_value_heads", default=n_heads)     # MLA expands K/V per head; no effect on shapes
    if n_heads % n_kv:
        r.fail("num_key_value_heads", f"a divisor of num_attention_heads ({n_heads})", n_kv,
               involves=("num_attention_heads",))
    # the MLA widths are required; q_lora_rank null means one q_proj (DeepSeek-V2-Lite)
    if "q_lora_rank" not in r.config:
        r.fail("q_lora_rank", "an integer >= 1, or null for a plain q_proj (the key is missing)")
    q_lora = r.int("q_lora_rank", default=None)
    kv_lora = r.int("kv_lora_rank")
    nope, rope, v_dim = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim"), r.int("v_head_dim")
    attn_bias = r.bool("attention_bias", default=False)
    mlp_bias = r.bool("mlp_bias", default=False) if v.mlp_bias_key else False
    tied, ctx = tied_context(r, False, ctx_default)
    n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    n_shared = r.int("n_shared_experts", default=shared_default, minimum=0)
    _, first_dense = first_dense_flags(r, L, default=dense_default)
    freq = r.int("moe_layer_freq", default=1) if v.sigmoid_router else 1
    n_mtp = r.int("num_nextn_predict_layers", default=0, minimum=0, maximum=MAX_LAYERS) if v.sigmoid_router else 0

    def is_moe(i: int) -> bool:                      # MoE from first_k_dense_replace on, every moe_layer_freq-th layer
        return i >= first_dense and i % freq == 0

    flags = [is_moe(i) for i in range(L)]
    if dsa:
        flags = _mlp_layer_flags(r, L, flags)
        n_index, index_dim = r.int("index_n_heads", default=64), r.int("index_head_dim", default=128)
        r.int("index_topk", default=2048)
        own_index = _indexer_flags(r, L) if v.shared_indexers else [True] * L
    else:
        own_index = [True] * L        # (no indexer at all: every layer is plain full attention)
    d_ff = dense_d_ff(r, flags)
    mixers = ["full_attention" if own else "shared_index_attention" for own in own_index]

    def mixer(kind: str = "full_attention") -> Node:
        node = mla(d, n_heads, q_lora, kv_lora, nope, rope, v_dim, attn_bias)
        if dsa and kind == "full_attention":
            node = group(node.name, list(node.children) + [dsa_indexer(d, q_lora or d, n_index, index_dim)],
                         kind=node.kind)
        return node

    def ffn(moe_layer: bool) -> Node:
        if not moe_layer:
            assert d_ff is not None   # (read whenever a layer is dense)
            return swiglu(d, d_ff, mlp_bias)
        return moe(d, n_experts, top_k, expert_d_ff,
                   router_buffer="e_score_correction_bias" if v.sigmoid_router else None, n_shared=n_shared,
                   shared_d_ff=expert_d_ff, shared_bias=mlp_bias)

    layers = build_layers(group_names(mixers, flags), mixers, flags, mixer, ffn, lambda: layer_norms(d))
    mtp_flags = [is_moe(L + k) for k in range(n_mtp)]
    mtp = nextn_mtp(mtp_flags, len(set(flags + mtp_flags)) > 1, V, d, mixer, ffn)
    # DSA: each token also leaves its index key (index_head_dim) in the cache of a layer with its own indexer
    kv = kv_lora + rope
    score = n_heads * (nope + rope + v_dim)
    arch = Arch(family=model_type, d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=nope + rope, layer_types=mixers, tied_embeddings=tied,
                kv_elems_per_token=kv + (index_dim if dsa else 0), score_width=score,
                mixers={"shared_index_attention": Mixer(kv_elems_per_token=kv, score_width=score)},
                **moe_arch(flags, d_ff, expert_d_ff, n_experts, top_k, n_shared, expert_d_ff,
                           moe_keys={"shared_d_ff_key": "moe_intermediate_size"},   # shared experts: that width too
                           d_h="qk_nope_head_dim + qk_rope_head_dim", E="n_routed_experts", k="num_experts_per_tok",
                           d_e="moe_intermediate_size", E_shared="n_shared_experts", L_dense="first_k_dense_replace",
                           d_c="kv_lora_rank", d_cq="q_lora_rank", d_rope="qk_rope_head_dim",
                           d_nope="qk_nope_head_dim", d_v="v_head_dim",
                           **({"L_mtp": "num_nextn_predict_layers"} if v.sigmoid_router else {})))
    return Model(standard_text(layers, V, d, tied), arch, mtp)


FAMILIES = tuple(Family(mt, partial(build_deepseek, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
