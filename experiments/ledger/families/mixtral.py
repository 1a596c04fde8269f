"""Mixtral-style MoE decoders: every layer's FFN is routed experts only (no shared expert, no dense layer), with
GQA attention. Five families (transformers MixtralConfig, GraniteMoeConfig, PhimoeConfig, OlmoeConfig, MiniMaxM2Config):

- mixtral: plain GQA, an optional sliding window on every layer (``sliding_window``; Mixtral-8x7B has none);
  the checkpoint's ``block_sparse_moe.{gate, experts.N.w1/w2/w3}`` are transformers' ``mlp.{gate, experts}``.
- granitemoe: GQA with ``attention_bias`` on q/k/v/o, the MoE block named ``block_sparse_moe`` with a ``router``
  (Granite's checkpoint fuses each expert's gate/up as ``input_linear``; the count is the same).
- phimoe (Phi-3.5-MoE): GQA with ``attention_bias`` on q/k/v/o, LayerNorms with biases (before attention, before
  the MoE block, at the end), a ``router``, a sliding window on every layer when ``sliding_window`` is set, and a
  bias on the head with ``lm_head_bias`` (transformers PhimoeConfig; Microsoft's remote-code class name
  PhiMoEForCausalLM also routes here).
- olmoe (OLMoE): GQA with RMSNorms over the whole q and k projections (as minimax_m2), ``num_experts`` routed
  experts behind a ``gate`` (transformers OlmoeConfig).
- minimax_m2: GQA with RMSNorm over the WHOLE q and k projections (``q_norm`` of num_attention_heads·head_dim,
  ``k_norm`` of num_key_value_heads·head_dim, MiniMax's "per_layer" qk norm), a sigmoid router whose
  ``e_score_correction_bias`` sits on the MoE block and is a buffer in transformers. The config declares MTP
  modules (``use_mtp``, ``num_mtp_modules``) but the published MiniMax-M2 / M2.5 / M2.7 checkpoints hold no MTP
  weights (their weight maps stop at layer num_hidden_layers - 1: MiniMax-AI/MiniMax-M2 issue #47,
  MiniMax-AI/MiniMax-M2.5 issue #8), so the ledger has no ``mtp`` part for them.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Model
from ..blocks import attention, moe, norm
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import (
    BASE_SYMBOLS,
    build_layers,
    embed_tokens,
    experts,
    gqa_arch,
    gqa_sizes,
    moe_info,
    text_tree,
    tied_context,
)
from ._parts import with_defaults


@dataclass(frozen=True)
class MixtralVariant:
    """What one model_type does differently: names, defaults and the few keys only it reads."""
    router: str                      # the router's module name
    block: str                       # the MoE block's module name
    ctx_default: int                 # max_position_embeddings when the config has none
    head_dim_default: int | None = None   # head_dim when absent (None: hidden_size / heads)
    attention_bias: bool = False     # reads attention_bias (biases on q/k/v/o)
    sliding_window: bool = False     # reads sliding_window (a window on every layer)
    whole_qk_norm: bool = False      # RMSNorm over the whole q and k projections
    score_bias_buffer: bool = False  # the router's e_score_correction_bias, a buffer on the MoE block
    experts_key: str = "num_local_experts"   # the key of the routed-expert count
    layernorm: bool = False          # LayerNorms with a bias (PhiMoE) instead of RMSNorms
    lm_head_bias: bool = False       # reads lm_head_bias (a bias on the output head)
    defaults: tuple[tuple[str, int], ...] = ()   # the config class's defaults for keys a config may leave out
    architectures: tuple[str, ...] = ()


VARIANTS = {
    "mixtral": MixtralVariant("gate", "mlp", 131072, sliding_window=True, architectures=("MixtralForCausalLM",)),
    "granitemoe": MixtralVariant("router", "block_sparse_moe", 2048, attention_bias=True,
                                 architectures=("GraniteMoeForCausalLM",)),
    "minimax_m2": MixtralVariant("gate", "mlp", 196608, head_dim_default=128, whole_qk_norm=True,
                                 score_bias_buffer=True, architectures=("MiniMaxM2ForCausalLM",)),
    "phimoe": MixtralVariant("router", "mlp", 131072, attention_bias=True, sliding_window=True, layernorm=True,
                             lm_head_bias=True, architectures=("PhimoeForCausalLM", "PhiMoEForCausalLM")),
    "olmoe": MixtralVariant("gate", "mlp", 4096, attention_bias=True, whole_qk_norm=True, experts_key="num_experts",
                            defaults=(("vocab_size", 50304), ("hidden_size", 2048), ("intermediate_size", 2048),
                                      ("num_hidden_layers", 16), ("num_attention_heads", 16), ("num_experts", 64),
                                      ("num_experts_per_tok", 8)),
                            architectures=("OlmoeForCausalLM",)),
}


def build_mixtral_like(r: Reader, model_type: str, variant: MixtralVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    r = with_defaults(r, dict(v.defaults)) if v.defaults else r
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r, head_dim_default=v.head_dim_default)
    attn_bias = r.bool("attention_bias", default=False) if v.attention_bias else False
    tied, ctx = tied_context(r, False, v.ctx_default)
    n_experts, top_k, expert_d_ff = experts(r, v.experts_key, "num_experts_per_tok", "intermediate_size")
    head_bias = r.bool("lm_head_bias", default=False) if v.lm_head_bias else False
    # transformers MixtralModel: a sliding-window mask on every layer when sliding_window is set
    window = r.int("sliding_window", default=None) if v.sliding_window else None
    mixer_type = "sliding_attention" if window else "full_attention"
    mixers, flags = [mixer_type] * L, [True] * L

    def mixer(_: str) -> Node:
        node = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias)
        if not v.whole_qk_norm:
            return node
        return group(node.name, list(node.children) + [norm("q_norm", n_heads * head_dim),
                                                       norm("k_norm", n_kv * head_dim)], kind=node.kind)

    def ffn(_: bool) -> Node:
        extra = ((leaf("e_score_correction_bias", n_experts, kind="hf_buffer", matmul=False),)
                 if v.score_bias_buffer else ())
        return moe(d, n_experts, top_k, expert_d_ff, router=v.router, name=v.block, block_extra=extra)

    def norms() -> list[Node]:
        return [norm(n, d, v.layernorm) for n in ("input_layernorm", "post_attention_layernorm")]

    layers = build_layers(mixers, mixers, flags, mixer, ffn, norms)
    head = None if tied else group("lm_head", [leaf("weight", V, d)] + ([leaf("bias", V, matmul=False)] if head_bias
                                                                      else []), kind="lm_head")
    text = text_tree([embed_tokens(V, d)], layers, norm("norm", d, v.layernorm), head)
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=expert_d_ff, ffn_matrices=3, layer_types=mixers, tied_embeddings=tied, sliding_window=window,
                    moe=moe_info(n_experts, top_k, expert_d_ff, 0, 0, flags),
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size", E=v.experts_key,
                                 k="num_experts_per_tok", d_e="intermediate_size",
                                 **({"W": "sliding_window"} if window else {})))
    return Model(text, arch)


FAMILIES = tuple(Family(mt, partial(build_mixtral_like, model_type=mt), v.architectures)
                 for mt, v in VARIANTS.items())
