"""Attention-free state-space language models: mamba (Mamba-1, Gu & Dao 2023), falcon_mamba (Falcon-Mamba) and
mamba2 (Mamba-2, Dao & Gu 2024; Codestral-Mamba) (transformers MambaConfig / FalconMambaConfig / Mamba2Config and
their modeling_*.py).

Every layer is ONE block: an RMSNorm (``norm``) and a mixer, no FFN; the stack sits under ``backbone`` with
``embeddings`` and a final ``norm_f``, and the head is tied by default for mamba and falcon_mamba, untied for
mamba2 (the classes' defaults).

- mamba / falcon_mamba: the Mamba-1 mixer (blocks.mamba1) of inner width ``intermediate_size`` (the config class
  writes expand × hidden_size when the key is absent), dt rank ``time_step_rank`` ("auto" = ceil(hidden_size / 16)).
  Falcon-Mamba's RMSNorms on dt, B and C are weightless (non-persistent buffers of ones): nothing to count, the
  same tree as Mamba's.
- mamba2: the Mamba-2 mixer (blocks.mamba2) of num_heads × head_dim, n_groups B/C groups, a gated RMSNorm.
Layer groups are ``mamba1`` (Mamba-1) / ``mamba`` (Mamba-2, as Nemotron-H names them): a fixed state per sequence,
no KV cache (``Mixer(state_elems=...)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from math import ceil

from ..arch import Arch, Mixer, Model
from ..blocks import mamba1, mamba1_state, mamba2, mamba2_state, norm
from ..config import Reader
from ..family import Family
from ..tree import group, leaf
from ._common import lm_head, sizes, text_tree, tied_context


@dataclass(frozen=True)
class MambaVariant:
    """Which mixer one model_type stacks, and its config class's defaults."""
    layer: str                      # the layer group: "mamba1" (a Mamba-1 mixer) or "mamba" (Mamba-2, as Nemotron-H's)
    tied_default: bool
    architectures: tuple[str, ...] = ()


VARIANTS = {
    "mamba": MambaVariant("mamba1", tied_default=True, architectures=("MambaForCausalLM",)),
    "falcon_mamba": MambaVariant("mamba1", tied_default=True, architectures=("FalconMambaForCausalLM",)),
    "mamba2": MambaVariant("mamba", tied_default=False, architectures=("Mamba2ForCausalLM",)),
}

_SYMBOLS = {"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size", "N": "state_size",
            "K_conv": "conv_kernel", "expand": "expand"}


def _dt_rank(r: Reader, d: int) -> int:
    if r.config.get("time_step_rank", "auto") == "auto":
        return ceil(d / 16)
    return r.int("time_step_rank")


def build_mamba(r: Reader, model_type: str, variant: MambaVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    d, L, V = sizes(r)
    d_state, kernel = r.int("state_size", default=16 if v.layer == "mamba1" else 128), r.int("conv_kernel", default=4)
    expand = r.int("expand", default=2)
    bias, conv_bias = r.bool("use_bias", default=False), r.bool("use_conv_bias", default=True)
    tied, _ = tied_context(r, v.tied_default, 0)
    symbols = dict(_SYMBOLS)
    if v.layer == "mamba1":
        d_inner = r.int("intermediate_size", default=expand * d)
        dt_rank = _dt_rank(r, d)
        mixer = mamba1(d, d_inner, d_state, dt_rank, kernel, conv_bias=conv_bias, proj_bias=bias, name="mixer")
        state = mamba1_state(d_inner, d_state, kernel)
        n_heads, head_dim = 0, 0
        symbols.update(d_inner="intermediate_size", R_dt="time_step_rank")
    else:
        n_heads, head_dim = r.int("num_heads", default=128), r.int("head_dim", default=64)
        n_groups = r.int("n_groups", default=8)
        d_inner = expand * d
        if d_inner != n_heads * head_dim:        # Mamba2Config refuses the same mismatch
            r.fail("expand", f"expand × hidden_size = num_heads × head_dim ({n_heads * head_dim})", expand,
                   involves=("hidden_size", "num_heads", "head_dim"))
        if n_groups and n_heads % n_groups:
            r.fail("n_groups", f"a divisor of num_heads ({n_heads})", n_groups, involves=("num_heads",))
        mixer = mamba2(d, n_heads, head_dim, d_state, n_groups, kernel, d_inner=d_inner, in_bias=bias,
                       conv_bias=conv_bias, out_bias=bias)
        state = mamba2_state(n_heads, head_dim, d_state, n_groups, kernel, d_inner=d_inner)
        symbols.update(h_ssm="num_heads", d_h_ssm="head_dim", G="n_groups")
    layer = group(v.layer, [norm("norm", d), mixer], n=L)
    text = text_tree([leaf("embeddings.weight", V, d, matmul=False)], [layer], norm("norm_f", d), lm_head(V, d, tied))
    arch = Arch(family=model_type, d_model=d, n_layers=L, vocab_size=V, context_length=0, n_heads=n_heads,
                n_kv_heads=0, head_dim=head_dim, d_ff=d_inner, ffn_matrices=0, layer_types=[v.layer] * L,
                tied_embeddings=tied, linear_state_elems=state, mixers={v.layer: Mixer(state_elems=state)},
                symbols=symbols)
    return Model(text, arch)


FAMILIES = tuple(Family(mt, partial(build_mamba, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
