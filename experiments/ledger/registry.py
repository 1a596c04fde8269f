"""The one list of model families the ledger engine knows, by Hugging Face ``model_type``.

Every family module in experiments/ledger/families/ exposes a builder ``build(reader) -> Model``; this module
maps each ``model_type`` to its builder and each ``architectures`` class name (as in a config's
``"architectures": ["LlamaForCausalLM"]``) to its ``model_type``. A config whose ``model_type`` is not registered
here but whose ``architectures`` names a known class (Kimi-K2 ships ``kimi_k2`` with ``DeepseekV3ForCausalLM``)
is read by that class's family; the ledger records which class it used.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

from .families import deepseek_v3, gpt2, gpt_oss, llama, qwen3_5, qwen3_moe, qwen3_next
from .families import falcon_h1, gemma4, jamba, llama4, nemotron_h  # group mB (hybrid / SSM families)


@dataclass(frozen=True)
class Family:
    model_type: str
    build: Callable
    architectures: tuple[str, ...] = ()


REGISTRY: tuple[Family, ...] = (
    Family("gpt2", gpt2.build_gpt2, ("GPT2LMHeadModel", "GPT2Model")),
    Family("llama", partial(llama.build_llama_like, model_type="llama"), ("LlamaForCausalLM",)),
    Family("mistral", partial(llama.build_llama_like, model_type="mistral"), ("MistralForCausalLM",)),
    Family("qwen2", partial(llama.build_llama_like, model_type="qwen2"), ("Qwen2ForCausalLM",)),
    Family("qwen3", partial(llama.build_llama_like, model_type="qwen3"), ("Qwen3ForCausalLM",)),
    Family("qwen3_5", qwen3_5.build_qwen3_5, ("Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM")),
    Family("qwen3_moe", qwen3_moe.build_qwen3_moe, ("Qwen3MoeForCausalLM",)),
    Family("gpt_oss", gpt_oss.build_gpt_oss, ("GptOssForCausalLM",)),
    Family("deepseek_v3", deepseek_v3.build_deepseek_v3, ("DeepseekV3ForCausalLM",)),
    Family("qwen3_next", qwen3_next.build_qwen3_next, ("Qwen3NextForCausalLM",)),
    # -- group mB: chunked / hybrid / state-space families (llama4, gemma4, nemotron_h, jamba, falcon_h1) --
    Family("llama4", llama4.build_llama4, ("Llama4ForConditionalGeneration",)),
    Family("llama4_text", llama4.build_llama4_text, ("Llama4ForCausalLM",)),
    Family("nemotron_h", nemotron_h.build_nemotron_h, ("NemotronHForCausalLM",)),
    Family("jamba", jamba.build_jamba, ("JambaForCausalLM",)),
    Family("falcon_h1", falcon_h1.build_falcon_h1, ("FalconH1ForCausalLM",)),
    Family("gemma4", gemma4.build_gemma4, ("Gemma4ForConditionalGeneration",)),
    # -- end group mB --
)

FAMILIES: dict[str, Callable] = {f.model_type: f.build for f in REGISTRY}
ARCHITECTURES: dict[str, str] = {cls: f.model_type for f in REGISTRY for cls in f.architectures}
