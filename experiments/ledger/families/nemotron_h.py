"""nemotron_h: a hybrid stack in which every layer is ONE block — RMSNorm, then a single mixer: a Mamba-2 mixer (M),
GQA attention (*), a squared-ReLU MLP (-) or an MoE of squared-ReLU experts with one shared expert (E) — as
spelled by hybrid_override_pattern (or the list layers_block_type), transformers NemotronHConfig /
modeling_nemotron_h.py (NemotronHBlock: ``norm`` + ``mixer``).

Layer groups are named by what the block does: ``mamba`` (Mamba-2: a fixed SSM state + conv buffer, no KV cache),
``full_attention``, ``mlp`` and ``moe`` (no token mixer: ``Mixer()``). The Mamba-2 inner width is
mamba_num_heads × mamba_head_dim. The MoE router keeps its e_score_correction_bias as a buffer (kind hf_buffer).

``num_nextn_predict_layers`` MTP steps (Nemotron-3 Super) are in the checkpoint but not built by transformers, as
DeepSeek-V3's: each fuses the normalised embedding and hidden state (enorm, hnorm, eh_proj 2d -> d), runs the
blocks of ``mtp_hybrid_override_pattern`` (default attention then MoE) and a final_layernorm, sharing the main
model's embedding and head (vLLM nemotron_h_mtp.py). They form the ledger's ``mtp`` part.
"""
from __future__ import annotations

from ..arch import Mixer, Model, layer_runs
from ..blocks import attention, mamba2, mamba2_state, moe, norm, up_down_mlp
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import experts, gqa_arch, gqa_heads, lm_head, moe_info, text_tree, tied_context

_PATTERN = {"M": "mamba", "*": "full_attention", "-": "mlp", "E": "moe"}
# layers_block_type spellings (transformers 5 and older remote code) -> the ledger's layer type
_BLOCK_TYPES = {"linear_attention": "mamba", "mamba": "mamba", "full_attention": "full_attention",
                "attention": "full_attention", "mlp": "mlp", "moe": "moe"}


def _alias(r: Reader, key: str, old: str) -> str:
    """NemotronHConfig accepts older key names (mamba_n_groups, mamba_d_conv, ...) for the same value."""
    return old if not r.has(key) and r.has(old) else key


def layer_types(r: Reader) -> list[str]:
    """Per layer: mamba / full_attention / mlp / moe, from hybrid_override_pattern or layers_block_type. With
    num_hidden_layers given as well, the two must agree."""
    if r.has("hybrid_override_pattern") or not r.has("layers_block_type"):
        key = "hybrid_override_pattern"
        pattern = r.str(key)
        bad = sorted(set(pattern) - set(_PATTERN))
        if bad:
            r.fail(key, "a string of M (Mamba-2), * (attention), - (MLP) and E (MoE)", pattern)
            return ["mamba"]
        types = [_PATTERN[c] for c in pattern]
    else:
        key = "layers_block_type"
        types = [_BLOCK_TYPES[t] for t in r.str_list(key, choices=tuple(_BLOCK_TYPES))]
    if not types:
        r.fail(key, "at least one layer", "an empty pattern")
        return ["mamba"]
    if len(types) > MAX_LAYERS:
        r.fail(key, f"at most {MAX_LAYERS:,} layers", f"{len(types):,} entries")
        return ["mamba"]
    if r.has("num_hidden_layers"):
        L = r.int("num_hidden_layers", maximum=10**4)
        if L != len(types):
            r.fail(key, f"one entry per layer: {L} (num_hidden_layers)", f"{len(types)} entries",
                   involves=("num_hidden_layers",))
    return types


def mtp_types(r: Reader) -> list[str]:
    """The blocks of one MTP step: ``mtp_hybrid_override_pattern`` (as hybrid_override_pattern) or
    ``mtp_layers_block_type``, by default attention then MoE (NemotronHConfig)."""
    if r.has("mtp_hybrid_override_pattern"):
        pattern = r.str("mtp_hybrid_override_pattern")
        if not pattern or set(pattern) - set(_PATTERN):
            r.fail("mtp_hybrid_override_pattern", "a non-empty string of M, *, - and E", pattern)
            return ["full_attention", "moe"]
        return [_PATTERN[c] for c in pattern]
    if r.has("mtp_layers_block_type"):
        listed = [_BLOCK_TYPES[t] for t in r.str_list("mtp_layers_block_type", choices=tuple(_BLOCK_TYPES))]
        return listed or ["full_attention", "moe"]
    return ["full_attention", "moe"]


def build_nemotron_h(r: Reader) -> Model:
    d, V = r.int("hidden_size"), r.int("vocab_size")
    types = layer_types(r)
    L = len(types)
    tied, ctx = tied_context(r, False, 4096)
    n_mtp = r.int("num_nextn_predict_layers", default=0, minimum=0, maximum=MAX_LAYERS)
    step_types = mtp_types(r) if n_mtp else []
    used = set(types) | set(step_types)

    n_heads = n_kv = head_dim = 0
    if "full_attention" in used:
        hd_key = "head_dim" if r.has("head_dim") else "attention_head_dim"   # older remote-code name
        n_heads, n_kv, head_dim = gqa_heads(r, d, head_dim_key=hd_key, head_dim_default=128)  # NemotronHConfig default
    state = 0
    if "mamba" in used:
        m_heads, m_head_dim = r.int("mamba_num_heads"), r.int("mamba_head_dim")
        d_state = r.int("ssm_state_size", default=128)
        n_groups = r.int(_alias(r, "n_groups", "mamba_n_groups"), default=8)
        kernel = r.int(_alias(r, "conv_kernel", "mamba_d_conv"), default=4)
        conv_bias = r.bool(_alias(r, "use_conv_bias", "mamba_conv_bias"), default=True)
        use_bias = r.bool("use_bias", default=False)
        if m_heads % n_groups:
            r.fail("mamba_num_heads", f"a multiple of n_groups ({n_groups})", m_heads, involves=("n_groups",))
        state = mamba2_state(m_heads, m_head_dim, d_state, n_groups, kernel)
    d_ff = r.int("intermediate_size") if "mlp" in used else None
    mlp_bias = r.bool("mlp_bias", default=False)
    n_experts = top_k = expert_d_ff = shared_d_ff = 0
    latent = None
    if "moe" in used:
        n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok",
                                                "moe_intermediate_size")
        shared_d_ff = r.int("moe_shared_expert_intermediate_size")
        latent = r.int("moe_latent_size", default=None)

    def block(kind: str) -> Node:
        if kind == "mamba":
            return mamba2(d, m_heads, m_head_dim, d_state, n_groups, kernel, in_bias=use_bias, conv_bias=conv_bias,
                          out_bias=use_bias)
        if kind == "full_attention":
            return attention(d, n_heads, n_kv, head_dim, name="mixer")
        if kind == "mlp":
            assert d_ff is not None   # (read whenever a layer is dense)
            return up_down_mlp(d, d_ff, mlp_bias, name="mixer")
        return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias", n_shared=1,
                   shared_d_ff=shared_d_ff, name="mixer", gated=False, latent=latent)

    layers = [group(kind, [block(kind), norm("norm", d)], n=n) for kind, n in layer_runs(types)]
    text = text_tree([leaf("embeddings.weight", V, d, matmul=False)], layers, norm("norm_f", d),
                     lm_head(V, d, tied))
    mtp = None
    if n_mtp:      # in the checkpoint, not built by transformers; embedding and head shared with the main model
        step = group("layers", [norm("enorm", d), norm("hnorm", d), group("eh_proj", [leaf("weight", d, 2 * d)])]
                     + [group(f"{i}.{kind}", [block(kind), norm("norm", d)]) for i, kind in enumerate(step_types)]
                     + [norm("final_layernorm", d)], n=n_mtp)
        mtp = group("mtp", [step], kind="mtp")
    symbols = {"d": "hidden_size", "L": "hybrid_override_pattern (length)", "V": "vocab_size",
               "T_max": "max_position_embeddings", "h": "num_attention_heads", "h_kv": "num_key_value_heads",
               "d_h": "head_dim", "h_ssm": "mamba_num_heads", "d_ssm_head": "mamba_head_dim",
               "N": "ssm_state_size", "G": "n_groups", "K_conv": "conv_kernel",
               "L_full": "hybrid_override_pattern (*)", "L_mamba": "hybrid_override_pattern (M)"}
    if d_ff:
        symbols["d_ff"] = "intermediate_size"
    if n_experts:
        symbols.update(E="n_routed_experts", k="num_experts_per_tok", d_e="moe_intermediate_size",
                       d_s="moe_shared_expert_intermediate_size")
    arch = gqa_arch("nemotron_h", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff or expert_d_ff, ffn_matrices=2, layer_types=types, tied_embeddings=tied,
                    linear_state_elems=state,
                    mixers={"mamba": Mixer(state_elems=state), "mlp": Mixer(), "moe": Mixer()},
                    moe=moe_info(n_experts, top_k, expert_d_ff, 1, shared_d_ff, [t == "moe" for t in types],
                                 n_dense_layers=types.count("mlp")),
                    symbols=symbols)
    return Model(text, arch, mtp=mtp)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("nemotron_h", build_nemotron_h, ('NemotronHForCausalLM',)),
)
