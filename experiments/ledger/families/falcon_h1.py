"""falcon_h1: every layer runs GQA attention and a Mamba-2 mixer side by side on the same normalised input and adds
their outputs, then a SwiGLU FFN (transformers FalconH1Config / modeling_falcon_h1.py, FalconH1DecoderLayer:
``self_attn`` + ``mamba`` + ``feed_forward``, input_layernorm and pre_ff_layernorm).

All layers are of one type, ``hybrid``, whose Mixer has both a K/V cache that grows with context and a fixed
Mamba-2 state (SSM state + conv buffer). The Mamba inner width is mamba_d_ssm (if null: mamba_expand ×
hidden_size); its gated RMSNorm exists only with mamba_rms_norm. The µP multipliers scale activations and hold no
parameters (the per-layer mup_vector is a non-persistent buffer).
"""
from __future__ import annotations

from ..arch import Mixer, Model
from ..blocks import attention, mamba2, mamba2_state, norm, swiglu
from ..config import Reader
from ..family import Family
from ..tree import group
from ._common import BASE_SYMBOLS, embed_tokens, gqa_arch, gqa_sizes, lm_head, text_tree, tied_context


def mamba_sizes(r: Reader, d: int) -> tuple[int, int, int]:
    """(Mamba heads, head width, inner width) as FalconH1Config resolves them; head width × heads must equal the
    inner width."""
    n_heads = r.int("mamba_n_heads", default=128)
    if "mamba_d_ssm" in r.config and r.config["mamba_d_ssm"] is None:
        d_inner = r.int("mamba_expand", default=2) * d
    else:
        d_inner = r.int("mamba_d_ssm", default=1024)             # FalconH1Config default
    if d_inner % n_heads:
        r.fail("mamba_n_heads", f"a divisor of the Mamba width mamba_d_ssm ({d_inner})", n_heads,
               involves=("mamba_d_ssm",))
        return n_heads, max(d_inner // n_heads, 1), d_inner
    if r.config.get("mamba_d_head", "auto") == "auto":
        head_dim = d_inner // n_heads
    else:
        head_dim = r.int("mamba_d_head")
        if head_dim * n_heads != d_inner:
            r.fail("mamba_d_head", f"mamba_d_ssm ÷ mamba_n_heads = {d_inner // n_heads}", head_dim,
                   involves=("mamba_d_ssm", "mamba_n_heads"))
    return n_heads, head_dim, d_inner


def build_falcon_h1(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    attn_bias, mlp_bias = r.bool("attention_bias", default=False), r.bool("mlp_bias", default=False)
    tied, ctx = tied_context(r, False, 8192)
    m_heads, m_head_dim, d_inner = mamba_sizes(r, d)
    d_state, n_groups = r.int("mamba_d_state", default=256), r.int("mamba_n_groups", default=1)
    kernel = r.int("mamba_d_conv", default=4)
    ssm = mamba2(d, m_heads, m_head_dim, d_state, n_groups, kernel, d_inner=d_inner,
                 in_bias=r.bool("mamba_proj_bias", default=False), conv_bias=r.bool("mamba_conv_bias", default=True),
                 out_bias=r.bool("projectors_bias", default=False), gated_norm=r.bool("mamba_rms_norm", default=False),
                 name="mamba")
    layer = group("hybrid", [attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias), ssm,
                             swiglu(d, d_ff, mlp_bias, name="feed_forward"),
                             norm("input_layernorm", d), norm("pre_ff_layernorm", d)], n=L)
    text = text_tree([embed_tokens(V, d)], [layer], norm("final_layernorm", d),
                     lm_head(V, d, tied))
    kv, score = 2 * n_kv * head_dim, 2 * n_heads * head_dim
    state = mamba2_state(m_heads, m_head_dim, d_state, n_groups, kernel, d_inner)
    arch = gqa_arch("falcon_h1", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=["hybrid"] * L,
                    tied_embeddings=tied, linear_state_elems=state,
                    mixers={"hybrid": Mixer(kv_elems_per_token=kv, score_width=score, state_elems=state)},
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size", h_ssm="mamba_n_heads",
                                 d_ssm_head="mamba_d_head", d_ssm="mamba_d_ssm", N="mamba_d_state",
                                 G="mamba_n_groups", K_conv="mamba_d_conv"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("falcon_h1", build_falcon_h1, ('FalconH1ForCausalLM',)),
)
