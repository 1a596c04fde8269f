"""Reader-level parts a family is composed of, beyond _common.py's: the nested text config of a multimodal
wrapper, its symbols under the ``text_config.`` prefix, and the Qwen MoE FFN (routed experts, one gated
shared expert) that Qwen2-MoE, Qwen3-Next and Qwen3.5-MoE share.

A family that is a known text stack plus a vision tower is then: read ``text_config`` with the text family's
builder, read ``vision_config`` with a tower from _vision.py, and rename the Arch (see qwen3_vl.py).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..arch import Model
from ..blocks import moe, swiglu
from ..config import Reader
from ..tree import Node


def text_config(r: Reader, inherit: tuple[str, ...] = ()) -> Reader:
    """The ``text_config`` of a multimodal wrapper, or the config itself when its text keys are flat. Keys in
    ``inherit`` that the wrapper sets at its top level win over the text_config's (transformers reads
    ``tie_word_embeddings`` from the wrapper)."""
    if not r.has("text_config"):
        return r
    t = r.sub("text_config")
    top = {k: r.config[k] for k in inherit if r.has(k)}
    return Reader(dict(t.config, **top), t.prefix, r.problems, r.rejected) if top else t


def sub_or_defaults(r: Reader, key: str) -> Reader:
    """The nested config ``key`` (``vision_config``), or an empty one when the config has none: the part is then
    built from its configuration class's defaults, as transformers builds it (a wrapper always has its tower)."""
    return r.sub(key) if r.has(key) else Reader({}, key, r.problems, r.rejected)


def wrapper_vision(r: Reader, text_only_class: str | None = None) -> Reader | None:
    """The vision tower's config of a multimodal wrapper: its ``vision_config``, or, when it has none, the vision
    configuration class's defaults, because transformers builds the default tower then (Llama-4, Qwen-VL, Gemma 4
    without a vision_config still have one). None only when transformers builds the wrapper's text-only class
    (``text_only_class`` named in ``architectures``, or no architectures where that class is the causal-LM default:
    Llama4ForCausalLM, Qwen3_5ForCausalLM)."""
    if r.has("vision_config"):
        return r.sub("vision_config")
    archs = [a for a in r.config.get("architectures") or [] if isinstance(a, str)]
    if text_only_class and (text_only_class in archs or not archs):
        return None
    return sub_or_defaults(r, "vision_config")


def nested(model: Model, family: str, prefix: str = "text_config.") -> Model:
    """A text family's Model read from a wrapper's text_config: the Arch renamed to the wrapper's model_type and
    every symbol's config key given its path in the wrapper's config."""
    model.arch.family = family
    model.arch.symbols = {k: prefix + v for k, v in model.arch.symbols.items()}
    moe = model.arch.moe
    if moe is not None:            # the MoE facts name their keys too: the same path
        keys = {f.name: prefix + getattr(moe, f.name) for f in dataclasses.fields(moe)
                if f.name.endswith("_key") and isinstance(getattr(moe, f.name), str)}
        model.arch.moe = dataclasses.replace(moe, **keys)
    return model


def qwen_moe_ffn(d: int, n_experts: int, top_k: int, expert_d_ff: int, shared_d_ff: int, d_ff: int | None,
                 is_moe: bool) -> Node:
    """Qwen's MoE FFN: router ``gate``, routed experts, one ``shared_expert`` with a sigmoid
    ``shared_expert_gate`` (none when shared_expert_intermediate_size is 0); a dense SwiGLU where not is_moe."""
    if not is_moe:
        assert d_ff is not None, "a dense layer needs its width"
        return swiglu(d, d_ff)
    return moe(d, n_experts, top_k, expert_d_ff, n_shared=1 if shared_d_ff else 0, shared_d_ff=shared_d_ff,
               shared_name="shared_expert", shared_gate=bool(shared_d_ff))


def listed(r: Reader, key: str, L: int, choices: tuple[str, ...]) -> list[str] | None:
    """A per-layer list of names (``layer_types``, ``mlp_layer_types`` ...): L entries out of ``choices``, None when
    the config has none or it is wrong (the problem is reported)."""
    if not r.has(key):
        return None
    types = r.str_list(key, choices=choices)
    if types and len(types) != L:
        r.fail(key, f"a list of {L} entries (num_hidden_layers)", f"{len(types)} entries",
               involves=("num_hidden_layers",))
    return types if len(types) == L else None


def flag_list(r: Reader, key: str, L: int) -> list[bool] | None:
    """A published per-layer 0 / 1 list (moe_layer_freq, hybrid_layer_pattern, sparse_attention_freq), None when
    absent or wrong (the problem is reported)."""
    if not r.has(key):
        return None
    flags = r.int_list(key)
    if len(flags) != L or any(f > 1 for f in flags):
        r.fail(key, f"a list of {L} flags 0 / 1 (num_hidden_layers)", flags, involves=("num_hidden_layers",))
        return None
    return [f == 1 for f in flags]


# transformers configuration classes' defaults for the text configs a wrapper may leave partly empty (LLaVA-1.5's
# text_config gives only vocab_size and max_position_embeddings: the rest is LlamaConfig's)
TEXT_DEFAULTS = {
    "llama": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
              "num_attention_heads": 32, "max_position_embeddings": 2048},
    "mistral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
                "sliding_window": 4096},
    "ministral3": {"vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 34,
                   "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                   "max_position_embeddings": 262144},
}


def with_defaults(r: Reader, defaults: dict[str, Any]) -> Reader:
    """The same reader with ``defaults`` for the keys the config leaves out (problems still name the config's
    own keys, with its prefix)."""
    return Reader(dict(defaults, **{k: v for k, v in r.config.items() if v is not None}), r.prefix, r.problems,
                  r.rejected)
