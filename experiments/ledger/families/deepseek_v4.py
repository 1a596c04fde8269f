"""deepseek_v4 (DeepSeek-V4-Flash / V4-Pro): every layer attends with one shared key=value head of head_dim through
a low-rank query (q_a_proj, q_a_norm, q_b_proj), a per-head sink logit and a grouped low-rank output projection
(o_a_proj per group, o_b_proj mixing the groups); on top of a sliding window, a layer compresses the past:
``compressed_sparse_attention`` (CSA, compress rate 4: a gated compressor of 2·head_dim plus a lightning indexer
that picks index_topk compressed entries) or ``heavily_compressed_attention`` (HCA, rate 128: a compressor of
head_dim), or only slides (``sliding_attention``). Every layer is MoE: routed experts, one shared expert, a router
whose e_score_correction_bias (top-k layers) or tid2eid token-to-expert table (the first num_hash_layers,
``hash_moe``) transformers keeps as buffers. Manifold-constrained hyper-connections keep hc_mult residual
streams: each layer mixes them before attention and before the FFN (attn_hc, ffn_hc: fn, base, scale) and
hc_head collapses them before the final norm (transformers DeepseekV4Config, modeling_deepseek_v4.py).

Layer types: ``layer_types``, else DeepSeek's ``compress_ratios`` (0 / 4 / 128 per layer, its extra entries for the
MTP layers dropped), else transformers' default. ``num_nextn_predict_layers`` MTP layers are in the checkpoint but
not built by transformers, and no published layout of them was at hand: the ledger counts none (its ``mtp`` part
is empty), so the total is what transformers builds plus the router buffers.
Cache view: a sliding layer caches one head_dim vector per token within the window; a CSA / HCA layer also keeps
one compressed head_dim entry per rate tokens (CSA: plus its index key), which is what grows with context.
"""
from __future__ import annotations

from ..arch import Arch, Mixer, Model
from ..blocks import expert_matrices, linear, moe, norm
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import BASE_SYMBOLS, build_layers, experts, layer_norms, moe_info, sizes, standard_text, tied_context
from ._parts import listed

_TYPES = ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention")
_RATIO = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}


def _layer_types(r: Reader, L: int) -> list[str]:
    names = listed(r, "layer_types", L, _TYPES)
    if names is not None:
        return names
    if r.has("compress_ratios"):
        ratios = r.int_list("compress_ratios")
        if len(ratios) < L or any(x not in _RATIO for x in ratios):
            r.fail("compress_ratios", f"a list of at least {L} entries 0 / 4 / 128 (num_hidden_layers)", ratios,
                   involves=("num_hidden_layers",))
        else:
            return [_RATIO[x] for x in ratios[:L]]
    return (["heavily_compressed_attention"] * min(L, 2)
            + ["compressed_sparse_attention" if i % 2 else "heavily_compressed_attention"
               for i in range(max(L - 2, 0))])


def _compressor(d: int, width: int, rate: int, out: int) -> list[Node]:
    """A gated compressor: kv_proj and gate_proj to ``width``, a learned bias per position within the rate-token
    block, an RMSNorm over the ``out`` channels it emits."""
    return (linear("kv_proj", d, width) + linear("gate_proj", d, width)
            + [leaf("position_bias", rate, width, matmul=False), norm("kv_norm", out)])


def build_deepseek_v4(r: Reader) -> Model:
    d, L, V = sizes(r)
    n_heads, head_dim = r.int("num_attention_heads"), r.int("head_dim", default=512)
    r.int("num_key_value_heads", default=1)
    q_lora, groups, o_lora = r.int("q_lora_rank", default=1024), r.int("o_groups", default=8), \
        r.int("o_lora_rank", default=1024)
    if (n_heads * head_dim) % groups:
        r.fail("o_groups", f"a divisor of num_attention_heads × head_dim ({n_heads * head_dim})", groups,
               involves=("num_attention_heads", "head_dim"))
    n_index, index_dim = r.int("index_n_heads", default=64), r.int("index_head_dim", default=128)
    r.int("index_topk", default=512)
    rates = r.sub("compress_rates") if r.has("compress_rates") else None
    csa = rates.int("compressed_sparse_attention", default=4) if rates else r.int("compress_rate_csa", default=4)
    hca = rates.int("heavily_compressed_attention", default=128) if rates else r.int("compress_rate_hca", default=128)
    hc = r.int("hc_mult", default=4)
    window = r.int("sliding_window", default=128)
    tied, ctx = tied_context(r, False, 1048576)
    n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    mlp_bias = r.bool("mlp_bias", default=False)
    types = _layer_types(r, L)
    hash_names = listed(r, "mlp_layer_types", L, ("hash_moe", "moe"))
    if hash_names is None:
        n_hash = r.int("num_hash_layers", default=3, minimum=0)
        hash_names = ["hash_moe"] * min(L, n_hash) + ["moe"] * max(0, L - n_hash)
    hashed = [t == "hash_moe" for t in hash_names]
    n_mix = (2 + hc) * hc

    def mixer(kind: str) -> Node:
        parts = ([leaf("sinks", n_heads, matmul=False)] + linear("q_a_proj", d, q_lora) + [norm("q_a_norm", q_lora)]
                 + linear("q_b_proj", q_lora, n_heads * head_dim) + linear("kv_proj", d, head_dim)
                 + [norm("kv_norm", head_dim)]
                 + linear("o_a_proj", n_heads * head_dim // groups, groups * o_lora)
                 + linear("o_b_proj", groups * o_lora, d))
        if kind == "compressed_sparse_attention":
            indexer = group("indexer", _compressor(d, 2 * index_dim, csa, index_dim)
                            + linear("q_b_proj", q_lora, n_index * index_dim)
                            + [group("scorer", linear("weights_proj", d, n_index))], kind="attention")
            parts.append(group("compressor", _compressor(d, 2 * head_dim, csa, head_dim) + [indexer]))
        elif kind == "heavily_compressed_attention":
            parts.append(group("compressor", _compressor(d, head_dim, hca, head_dim)))
        return group("self_attn", parts, kind="attention")

    def ffn(is_hash: bool) -> Node:
        buffer = leaf("tid2eid", V, top_k, kind="hf_buffer", matmul=False) if is_hash else \
            leaf("e_score_correction_bias", n_experts, kind="hf_buffer", matmul=False)
        shared = group("shared_experts", expert_matrices(d, expert_d_ff, mlp_bias))
        return moe(d, n_experts, top_k, expert_d_ff, router_extra=(buffer,), block_extra=(shared,))

    # the hyper-connection mixers are residual-stream bookkeeping beside the norms: they are summed with them (kind
    # norm), so every tensor has a purpose category (views.breakdown, the page's 总账)
    def hyper(name: str) -> Node:
        return group(name, [leaf("fn", n_mix, hc * d), leaf("base", n_mix, matmul=False),
                            leaf("scale", 3, matmul=False)], kind="norm")

    names = [t + ("_hash" if h else "") for t, h in zip(types, hashed)]
    layers = build_layers(names, types, hashed, mixer, ffn, lambda: layer_norms(d) + [hyper("attn_hc"),
                                                                                      hyper("ffn_hc")])
    text = standard_text(layers, V, d, tied)
    head = group("hc_head", [leaf("hc_fn", hc, hc * d), leaf("hc_base", hc, matmul=False),
                             leaf("hc_scale", 1, matmul=False)], kind="norm")
    text = group("text", list(text.children[:3]) + [head] + list(text.children[3:]))
    score = 2 * n_heads * head_dim
    mixers = {"sliding_attention": Mixer(kv_elems_per_token=head_dim, score_width=score, window=window),
              "compressed_sparse_attention": Mixer(kv_elems_per_token=(head_dim + index_dim) // csa,
                                                   score_width=score),
              "heavily_compressed_attention": Mixer(kv_elems_per_token=head_dim // hca, score_width=score)}
    mixers.update({k + "_hash": m for k, m in mixers.items()})
    arch = Arch(family="deepseek_v4", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=1, head_dim=head_dim, d_ff=expert_d_ff, ffn_matrices=3, layer_types=names,
                tied_embeddings=tied, sliding_window=window, mixers=mixers,
                moe=moe_info(n_experts, top_k, expert_d_ff, 1, expert_d_ff, [True] * L),
                symbols=dict(BASE_SYMBOLS, d_ff="moe_intermediate_size", E="n_routed_experts",
                             k="num_experts_per_tok", d_e="moe_intermediate_size", W="sliding_window",
                             L_mtp="num_nextn_predict_layers"))
    return Model(text, arch)


FAMILIES = (
    Family("deepseek_v4", build_deepseek_v4, ("DeepseekV4ForCausalLM",)),
)
