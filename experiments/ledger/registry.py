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


def _one_builder(build: Callable, architectures: dict[str, tuple[str, ...]]) -> tuple[Family, ...]:
    """The families one builder reads, told apart by its ``model_type`` argument: model_type -> class names."""
    return tuple(Family(model_type, partial(build, model_type=model_type), classes)
                 for model_type, classes in architectures.items())


REGISTRY: tuple[Family, ...] = (
    Family("gpt2", gpt2.build_gpt2, ("GPT2LMHeadModel", "GPT2Model")),
    *_one_builder(llama.build_llama_like, {
        "llama": ("LlamaForCausalLM",), "mistral": ("MistralForCausalLM",), "qwen2": ("Qwen2ForCausalLM",),
        "qwen3": ("Qwen3ForCausalLM",)}),
    Family("qwen3_5", qwen3_5.build_qwen3_5, ("Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM")),
    Family("qwen3_moe", qwen3_moe.build_qwen3_moe, ("Qwen3MoeForCausalLM",)),
    Family("gpt_oss", gpt_oss.build_gpt_oss, ("GptOssForCausalLM",)),
    Family("deepseek_v3", deepseek_v3.build_deepseek_v3, ("DeepseekV3ForCausalLM",)),
    Family("qwen3_next", qwen3_next.build_qwen3_next, ("Qwen3NextForCausalLM",)),
    # -- gemma / cohere / olmo group (issue #12): gemma, gemma2, gemma3_text, gemma3, cohere, cohere2, olmo,
    #    olmo2, exaone4, smollm3
    *_one_builder(gemma.build_gemma, {
        "gemma": ("GemmaForCausalLM",), "gemma2": ("Gemma2ForCausalLM",), "gemma3_text": ("Gemma3ForCausalLM",)}),
    Family("gemma3", gemma.build_gemma3, ("Gemma3ForConditionalGeneration",)),
    *_one_builder(cohere.build_cohere, {"cohere": ("CohereForCausalLM",), "cohere2": ("Cohere2ForCausalLM",)}),
    *_one_builder(olmo.build_olmo, {"olmo": ("OlmoForCausalLM",), "olmo2": ("Olmo2ForCausalLM",)}),
    Family("exaone4", exaone4.build_exaone4, ("Exaone4ForCausalLM",)),
    Family("smollm3", smollm3.build_smollm3, ("SmolLM3ForCausalLM",)),
    # -- issue #12, group dB: parallel blocks, fused projections, LayerNorm/bias families, llama variants --
    Family("phi", phi_families.build_phi, ("PhiForCausalLM",)),
    Family("phi3", phi_families.build_phi3, ("Phi3ForCausalLM",)),
    Family("gpt_neox", gpt_neox.build_gpt_neox, ("GPTNeoXForCausalLM",)),
    Family("falcon", falcon.build_falcon, ("FalconForCausalLM",)),
    Family("starcoder2", starcoder2.build_starcoder2, ("Starcoder2ForCausalLM",)),
    Family("glm4", glm4.build_glm4, ("Glm4ForCausalLM",)),
    *_one_builder(llama_variants.build_llama_variant, {
        "granite": ("GraniteForCausalLM",), "ernie4_5": ("Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"),
        "hunyuan_v1_dense": ("HunYuanDenseV1ForCausalLM",)}),
    # -- end group dB --
    # -- group mA (issue #12): MoE families -----------------------------------------------------------------
    *_one_builder(mixtral.build_mixtral_like, {
        "mixtral": ("MixtralForCausalLM",), "granitemoe": ("GraniteMoeForCausalLM",),
        "minimax_m2": ("MiniMaxM2ForCausalLM",)}),
    Family("qwen2_moe", qwen2_moe.build_qwen2_moe, ("Qwen2MoeForCausalLM",)),
    Family("deepseek_v2", deepseek_v2.build_deepseek_v2, ("DeepseekV2ForCausalLM",)),
    Family("glm4_moe", glm4_moe.build_glm4_moe, ("Glm4MoeForCausalLM",)),
    Family("hunyuan_v1_moe", hunyuan_v1_moe.build_hunyuan_v1_moe, ("HunYuanMoEV1ForCausalLM",)),
    Family("ernie4_5_moe", ernie4_5_moe.build_ernie4_5_moe, ("Ernie4_5_MoeForCausalLM",)),
    # -- end group mA ---------------------------------------------------------------------------------------
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
