"""Hugging Face's SmolLM3 (transformers SmolLM3Config / modeling_smollm3.py): a llama-style decoder (RMSNorm,
SwiGLU, GQA, tied embeddings by default) in which every ``no_rope_layer_interval``-th layer (default 4; or as
``no_rope_layers`` lists, 1 = RoPE, 0 = NoPE) attends without positional encoding. NoPE changes no tensor, so
those layers count the same; layer types are transformers': ``layer_types`` if listed, else
``sliding_attention`` on the RoPE layers only when ``use_sliding_window`` and ``sliding_window`` are set,
``full_attention`` everywhere else.
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, swiglu
from ..config import Reader
from ..family import Family
from ._common import build_layers, gqa_arch, gqa_sizes, layer_norms, standard_text, tied_context
from ._windows import listed_layer_types, window_of, window_symbols


def smollm3_layer_types(r: Reader, L: int) -> list[str]:
    listed = listed_layer_types(r, L)
    if listed is not None:
        return listed
    interval = r.int("no_rope_layer_interval", default=4)
    rope = r.int_list("no_rope_layers", default=None)
    if rope is not None and len(rope) != L:
        r.fail("no_rope_layers", f"a list of {L} entries (num_hidden_layers)", f"{len(rope)} entries",
               involves=("num_hidden_layers",))
    if rope is None or len(rope) != L:
        rope = [int((i + 1) % interval != 0) for i in range(L)]
    sliding = r.bool("use_sliding_window", default=False) and r.has("sliding_window")
    return ["sliding_attention" if sliding and has_rope else "full_attention" for has_rope in rope]


def build_smollm3(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    attn_bias = r.bool("attention_bias", default=False)
    mlp_bias = r.bool("mlp_bias", default=False)
    tied, ctx = tied_context(r, True, 32768)
    types = smollm3_layer_types(r, L)
    window = window_of(r, types, None)
    layers = build_layers(types, types, [False] * L,
                          lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias),
                          lambda _: swiglu(d, d_ff, mlp_bias), lambda: layer_norms(d))
    arch = gqa_arch("smollm3", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                    tied_embeddings=tied, sliding_window=window, symbols=window_symbols(window))
    return Model(standard_text(layers, V, d, tied), arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("smollm3", build_smollm3, ('SmolLM3ForCausalLM',)),
)
