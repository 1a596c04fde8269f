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

from .families import gpt2, gpt_oss, llama, qwen3_5, qwen3_moe, qwen3_next
from .families import cohere, exaone4, gemma, olmo, smollm3
from .families import falcon, glm4, gpt_neox, llama_variants, phi as phi_families, starcoder2
# group mA (issue #12: MoE families)
from .families import deepseek_v2, ernie4_5_moe, glm4_moe, hunyuan_v1_moe, mixtral, qwen2_moe
from .families import falcon_h1, gemma4, jamba, llama4, nemotron_h  # group mB (hybrid / SSM families)


@dataclass(frozen=True)
class Family:
    model_type: str
    build: Callable
    architectures: tuple[str, ...] = ()


def _families(module, architectures: dict[str, tuple[str, ...]], shared: str = "") -> tuple[Family, ...]:
    """The families one module reads, model_type -> its ``architectures`` class names: each read by the module's
    ``build_<model_type>``, or, with ``shared``, all by that one builder, told the model_type."""
    return tuple(Family(model_type, partial(getattr(module, shared), model_type=model_type) if shared
                        else getattr(module, f"build_{model_type}"), classes)
                 for model_type, classes in architectures.items())


REGISTRY: tuple[Family, ...] = (
    *_families(gpt2, {"gpt2": ("GPT2LMHeadModel", "GPT2Model")}),
    *_families(llama, {"llama": ("LlamaForCausalLM",), "mistral": ("MistralForCausalLM",),
                       "qwen2": ("Qwen2ForCausalLM",), "qwen3": ("Qwen3ForCausalLM",)}, shared="build_llama_like"),
    *_families(qwen3_5, {"qwen3_5": ("Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM")}),
    *_families(qwen3_moe, {"qwen3_moe": ("Qwen3MoeForCausalLM",)}),
    *_families(gpt_oss, {"gpt_oss": ("GptOssForCausalLM",)}),
    *_families(deepseek_v2, {"deepseek_v3": ("DeepseekV3ForCausalLM",)}, shared="build_deepseek"),
    *_families(qwen3_next, {"qwen3_next": ("Qwen3NextForCausalLM",)}),
    # -- gemma / cohere / olmo group (issue #12): gemma, gemma2, gemma3_text, gemma3, cohere, cohere2, olmo,
    #    olmo2, exaone4, smollm3
    *_families(gemma, {"gemma": ("GemmaForCausalLM",), "gemma2": ("Gemma2ForCausalLM",),
                       "gemma3_text": ("Gemma3ForCausalLM",)}, shared="build_gemma"),
    *_families(gemma, {"gemma3": ("Gemma3ForConditionalGeneration",)}),
    *_families(cohere, {"cohere": ("CohereForCausalLM",), "cohere2": ("Cohere2ForCausalLM",)}, shared="build_cohere"),
    *_families(olmo, {"olmo": ("OlmoForCausalLM",), "olmo2": ("Olmo2ForCausalLM",)}, shared="build_olmo"),
    *_families(exaone4, {"exaone4": ("Exaone4ForCausalLM",)}),
    *_families(smollm3, {"smollm3": ("SmolLM3ForCausalLM",)}),
    # -- issue #12, group dB: parallel blocks, fused projections, LayerNorm/bias families, llama variants --
    *_families(phi_families, {"phi": ("PhiForCausalLM",), "phi3": ("Phi3ForCausalLM",)}),
    *_families(gpt_neox, {"gpt_neox": ("GPTNeoXForCausalLM",)}),
    *_families(falcon, {"falcon": ("FalconForCausalLM",)}),
    *_families(starcoder2, {"starcoder2": ("Starcoder2ForCausalLM",)}),
    *_families(glm4, {"glm4": ("Glm4ForCausalLM",)}),
    *_families(llama_variants, {"granite": ("GraniteForCausalLM",),
                                "ernie4_5": ("Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"),
                                "hunyuan_v1_dense": ("HunYuanDenseV1ForCausalLM",)}, shared="build_llama_variant"),
    # -- end group dB --
    # -- group mA (issue #12): MoE families -----------------------------------------------------------------
    *_families(mixtral, {"mixtral": ("MixtralForCausalLM",), "granitemoe": ("GraniteMoeForCausalLM",),
                         "minimax_m2": ("MiniMaxM2ForCausalLM",)}, shared="build_mixtral_like"),
    *_families(qwen2_moe, {"qwen2_moe": ("Qwen2MoeForCausalLM",)}),
    *_families(deepseek_v2, {"deepseek_v2": ("DeepseekV2ForCausalLM",)}, shared="build_deepseek"),
    *_families(glm4_moe, {"glm4_moe": ("Glm4MoeForCausalLM",)}),
    *_families(hunyuan_v1_moe, {"hunyuan_v1_moe": ("HunYuanMoEV1ForCausalLM",)}),
    *_families(ernie4_5_moe, {"ernie4_5_moe": ("Ernie4_5_MoeForCausalLM",)}),
    # -- end group mA ---------------------------------------------------------------------------------------
    # -- group mB: chunked / hybrid / state-space families (llama4, gemma4, nemotron_h, jamba, falcon_h1) --
    *_families(llama4, {"llama4": ("Llama4ForConditionalGeneration",), "llama4_text": ("Llama4ForCausalLM",)}),
    *_families(nemotron_h, {"nemotron_h": ("NemotronHForCausalLM",)}),
    *_families(jamba, {"jamba": ("JambaForCausalLM",)}),
    *_families(falcon_h1, {"falcon_h1": ("FalconH1ForCausalLM",)}),
    *_families(gemma4, {"gemma4": ("Gemma4ForConditionalGeneration",)}),
    # -- end group mB --
)

FAMILIES: dict[str, Callable] = {f.model_type: f.build for f in REGISTRY}
ARCHITECTURES: dict[str, str] = {cls: f.model_type for f in REGISTRY for cls in f.architectures}
