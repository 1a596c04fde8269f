"""gpt2 and gpt_bigcode: learned positions, LayerNorms with bias, a fused biased ``c_attn``, a biased two-matrix
GELU MLP of ``n_inner`` (default 4·n_embd), a tied head (transformers GPT2Config / GPT2Model,
GPTBigCodeConfig / modeling_gpt_bigcode.py).

What differs between the two is data (``VARIANTS``):
- gpt2 stores its projections as ``Conv1D`` (weights in × out) and has full multi-head attention, so ``c_attn``
  is 3·n_embd wide; its config class's defaults are not used (every size must be in the config).
- gpt_bigcode (StarCoder, SantaCoder, Granite-Code-20B/34B, WizardCoder, OctoCoder) uses ``nn.Linear`` (out × in)
  and multi-query attention: with ``multi_query`` (default true) one key/value head is shared by all ``n_head``
  query heads, so ``c_attn`` is n_embd + 2·head_dim wide; missing sizes take GPTBigCodeConfig's defaults.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..arch import Model
from ..blocks import decoder_layer, gelu_mlp, linear, norm
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import gqa_arch, heads, text_tree
from ._parts import with_defaults


@dataclass(frozen=True)
class GPT2Variant:
    architectures: tuple[str, ...]
    conv1d: bool                     # weights stored in × out (GPT-2's Conv1D) rather than out × in (nn.Linear)
    multi_query: bool                # reads multi_query (default true): one K/V head for all query heads
    defaults: dict[str, Any] = field(default_factory=dict)   # the config class's defaults, for keys it leaves out


VARIANTS = {
    "gpt2": GPT2Variant(("GPT2LMHeadModel", "GPT2Model"), conv1d=True, multi_query=False),
    "gpt_bigcode": GPT2Variant(("GPTBigCodeForCausalLM",), conv1d=False, multi_query=True,
                               defaults={"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
                                         "n_positions": 1024}),
}


def _projection(conv1d: bool, name: str, d_in: int, d_out: int) -> list[Node]:
    if not conv1d:
        return linear(name, d_in, d_out, True)
    return [leaf(f"{name}.weight", d_in, d_out), leaf(f"{name}.bias", d_out, matmul=False)]


def build_gpt2(r: Reader, model_type: str) -> Model:
    v = VARIANTS[model_type]
    if v.defaults:
        r = with_defaults(r, v.defaults)
    d, L, V = r.int("n_embd"), r.int("n_layer", maximum=MAX_LAYERS), r.int("vocab_size")
    n_pos = r.int("n_positions")
    n_heads, _, head_dim = heads(r, d, "n_head", None, None, "n_embd")
    n_kv = (1 if r.bool("multi_query", default=True) else n_heads) if v.multi_query else n_heads
    d_ff = r.int("n_inner", default=4 * d)
    mixer = group("attn", _projection(v.conv1d, "c_attn", d, d + 2 * n_kv * head_dim)
                  + _projection(v.conv1d, "c_proj", d, d), kind="attention")
    layer = decoder_layer(mixer, gelu_mlp(d, d_ff), [norm("ln_1", d, True), norm("ln_2", d, True)],
                          "full_attention", L)
    text = text_tree([leaf("wte.weight", V, d, matmul=False), leaf("wpe.weight", n_pos, d, matmul=False)],
                     [layer], norm("ln_f", d, True), None)
    symbols = {"d": "n_embd", "L": "n_layer", "V": "vocab_size", "d_ff": "n_inner (or 4·n_embd)", "h": "n_head",
               **({"h_kv": "multi_query (1 head, or n_head)"} if v.multi_query else {}), "T_max": "n_positions"}
    arch = gqa_arch(model_type, d, L, V, n_pos, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=2,
                    layer_types=["full_attention"] * L, tied_embeddings=True, symbols=symbols)
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = tuple(Family(mt, partial(build_gpt2, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
