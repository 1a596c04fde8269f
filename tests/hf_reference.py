"""Independent reference counts: what Hugging Face ``transformers`` itself instantiates for a config.

The course engine (``experiments.ledger``) counts parameters from a config.json by formula. This module
checks it from the other side: it builds the real ``transformers`` model on torch's ``meta`` device (shapes
only, no memory, no weights downloaded) and sums ``numel()`` over ``model.parameters()``. Tied weights are
one ``Parameter`` object, so ``parameters()`` counts them once, exactly as the engine must.

    hf_param_count(config) -> int              # the HF total
    hf_param_shapes(config) -> {name: shape}   # every parameter, for debugging a mismatch
    hf_buffer_shapes(config) -> {name: shape}  # persistent buffers (in the state dict, not in parameters())
    hf_model_class(config) -> class            # the class that was built
    supported(config) -> bool                  # can transformers build this model_type at all?
    reference_counts(config) -> dict           # the per-part counts data/reference_counts.json holds
    BUILD_SECONDS[key]                         # wall time of each build (see _key)

Results are cached per config (keyed by its canonical JSON) for the whole session.

    python tests/hf_reference.py CONFIG.json...                         # counts, build times, grouped names
    python tests/hf_reference.py --write-reference data/reference_counts.json   # regenerate the file

data/reference_counts.json: for every data/models/<id>/config.json transformers supports, {id: {...}} with
  hf_count       sum of numel over model.parameters() (tied weights once): what transformers builds;
  text_backbone  numel of every state-dict tensor outside the vision tower, i.e. parameters plus persistent
                 buffers the checkpoint stores (DeepSeek-V3's router e_score_correction_bias), tied weights once;
  embedding / lm_head (0 if tied) / final_norm / vision: numel of those parts (same rule);
  layer.<group>  numel of ONE decoder layer of each layer group (all of ``...layers.{i}.`` for one i; every
                 layer of a group must have the same count). Groups are named as the engine names them: the
                 layer's mixer type (config ``layer_types`` if the config has them, else ``sliding_attention``
                 when a sliding window is set, else ``full_attention``), suffixed ``_dense`` / ``_moe`` when a
                 model has both dense and MoE (``mlp.experts``) layers.
"""
from __future__ import annotations

import copy
import json
import re
import time
from pathlib import Path

# Keys removed before instantiation, and why (they describe storage, not architecture):
#   quantization_config - gpt-oss (mxfp4) and DeepSeek-V3 (fp8 blocks) carry one. With it, transformers
#       routes construction through a quantizer that needs a GPU / extra kernels, and would swap the
#       nn.Linear / expert weights for packed storage tensors (blocks + scales) whose numel is not the
#       parameter count. Without it the same modules are built in plain form with their true shapes.
#   auto_map - points at remote code (DeepSeek's modeling_deepseek.py); we only build native classes.
_STRIP = ("quantization_config", "auto_map")

_CACHE: dict[str, dict[str, tuple[int, ...]]] = {}
_BUFFERS: dict[str, dict[str, tuple[int, ...]]] = {}
_TEXT_CONFIGS: dict[str, object] = {}
_CLASSES: dict[str, type] = {}
BUILD_SECONDS: dict[str, float] = {}


def _key(config: dict) -> str:
    """Canonical cache key of a config."""
    return json.dumps(config, sort_keys=True)


def _clean(config: dict) -> dict:
    """A deep copy without the storage-only keys, at top level and in nested sub-configs."""
    cfg = copy.deepcopy(config)
    for part in (cfg, cfg.get("text_config"), cfg.get("vision_config")):
        if isinstance(part, dict):
            for k in _STRIP:
                part.pop(k, None)
    return cfg


def _resolve_class(config: dict):
    """The class named by ``architectures`` if transformers has it, else the causal-LM / image-text class for
    the model_type; None if there is none."""
    import transformers
    from transformers.models.auto import modeling_auto as ma

    for name in config.get("architectures") or []:
        cls = getattr(transformers, name, None)
        if cls is not None:
            return cls
    mt = config.get("model_type")
    for mapping in ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES"):
        name = getattr(ma, mapping, {}).get(mt)
        if name and getattr(transformers, name, None) is not None:
            return getattr(transformers, name)
    return None


def supported(config: dict) -> bool:
    """True if transformers knows the config's model_type and has a model class to build for it."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return config.get("model_type") in CONFIG_MAPPING and _resolve_class(config) is not None


def hf_model_class(config: dict) -> type:
    """The transformers class that ``hf_param_count`` builds for this config."""
    cls = _resolve_class(config)
    if cls is None:
        raise ValueError(f"transformers has no model class for model_type {config.get('model_type')!r}")
    return cls


def _build(config: dict) -> dict[str, tuple[int, ...]]:
    """Instantiate on the meta device once per config; cache name -> shape of every (deduplicated) parameter."""
    key = _key(config)
    if key not in _CACHE:
        import torch
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING

        cls = hf_model_class(config)
        cfg = _clean(config)
        start = time.perf_counter()
        hf_config = CONFIG_MAPPING[cfg["model_type"]].from_dict(cfg)
        with torch.device("meta"):
            model = cls._from_config(hf_config)
        _CACHE[key] = {n: tuple(p.shape) for n, p in model.named_parameters()}
        param_names = {n for n, _ in model.named_parameters(remove_duplicate=False)}
        _BUFFERS[key] = {n: tuple(t.shape) for n, t in model.state_dict().items() if n not in param_names}
        text_config = hf_config.get_text_config() if hasattr(hf_config, "get_text_config") else hf_config
        _TEXT_CONFIGS[key] = text_config
        BUILD_SECONDS[key] = time.perf_counter() - start
        _CLASSES[key] = cls
        del model
    return _CACHE[key]


def hf_param_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every parameter transformers builds for the config: dotted name -> shape (tied weights listed once)."""
    return dict(_build(config))


def hf_buffer_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Persistent buffers (saved in the state dict, not returned by ``parameters()``): dotted name -> shape."""
    _build(config)
    return dict(_BUFFERS[_key(config)])


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def hf_param_count(config: dict) -> int:
    """``sum(p.numel() for p in model.parameters())`` of the transformers model built for the config."""
    total = 0
    for shape in _build(config).values():
        n = 1
        for d in shape:
            n *= d
        total += n
    return total


_VISION = re.compile(r"(^|\.)(visual|vision_tower|vision_model|mm_projector|multi_modal_projector|embed_vision)\.")
_TEXT = r"(?:model\.(?:language_model\.)?|language_model\.model\.)"   # (Kimi-K2.5: language_model.model.*)
_LAYER = re.compile(r"^(?:" + _TEXT + r"layers|transformer\.h)\.(\d+)\.")
_EMBEDDING = re.compile(r"^(?:" + _TEXT + r"embed_tokens|transformer\.(?:wte|wpe))\.")
_FINAL_NORM = re.compile(r"^(?:" + _TEXT + r"(?:norm|final_layernorm)|transformer\.ln_f)\.")
_LM_HEAD = re.compile(r"^(?:language_model\.)?lm_head\.")


# transformers' layer type -> the engine's group name where the two differ (DeepseekV32Config / GlmMoeDsaConfig call
# a layer that runs its own DSA indexer "indexed_attention"; the engine calls it full attention with an indexer)
HF_TYPE_NAMES = {"indexed_attention": "full_attention"}


def _layer_group_names(config: dict, n_layers: int, moe_layers: set[int]) -> list[str]:
    """Per decoder layer, the name of its group (see the module docstring)."""
    text_config = _TEXT_CONFIGS[_key(config)]
    types = getattr(text_config, "layer_types", None)
    blocks = getattr(text_config, "layers_block_type", None)   # Jamba: "attention" / "mamba" (Mamba-1) per layer
    if isinstance(blocks, list) and len(blocks) == n_layers:      # (its layer_types call Mamba "linear_attention")
        types = ["mamba1" if b == "mamba" else "full_attention" for b in blocks]
    if not (isinstance(types, list) and len(types) == n_layers):
        mixer = "sliding_attention" if getattr(text_config, "sliding_window", None) else "full_attention"
        types = [mixer] * n_layers
    types = [HF_TYPE_NAMES.get(t, t) for t in types]
    mixed = 0 < len(moe_layers) < n_layers
    return [t + (("_moe" if i in moe_layers else "_dense") if mixed else "") for i, t in enumerate(types)]


def reference_counts(config: dict) -> dict[str, int]:
    """The counts data/reference_counts.json holds for one config (see the module docstring). Every state-dict
    tensor must fall in exactly one part, so the parts add up to the whole."""
    _build(config)
    key = _key(config)
    tensors = dict(_CACHE[key])
    tensors.update(_BUFFERS[key])
    parts = {"embedding": 0, "lm_head": 0, "final_norm": 0, "vision": 0}
    per_layer: dict[int, int] = {}
    moe_layers: set[int] = set()
    for name, shape in tensors.items():
        n = _numel(shape)
        m = _LAYER.match(name)
        if _VISION.search(name):
            parts["vision"] += n
        elif m:
            i = int(m.group(1))
            per_layer[i] = per_layer.get(i, 0) + n
            if ".experts." in name:
                moe_layers.add(i)
        elif _EMBEDDING.match(name):
            parts["embedding"] += n
        elif _FINAL_NORM.match(name):
            parts["final_norm"] += n
        elif _LM_HEAD.match(name):
            parts["lm_head"] += n
        else:
            raise ValueError(f"{name}: not a part reference_counts knows (embedding, layers, norm, lm_head, vision)")
    n_layers = len(per_layer)
    if sorted(per_layer) != list(range(n_layers)):
        raise ValueError(f"decoder layer indices are not 0..{n_layers - 1}: {sorted(per_layer)}")
    groups: dict[str, int] = {}
    for i, name in enumerate(_layer_group_names(config, n_layers, moe_layers)):
        if groups.setdefault(name, per_layer[i]) != per_layer[i]:
            raise ValueError(f"layer {i} ({per_layer[i]:,}) differs from the other {name} layers ({groups[name]:,})")
    total = sum(_numel(s) for s in tensors.values())
    text_backbone = total - parts["vision"]
    assert text_backbone == parts["embedding"] + parts["lm_head"] + parts["final_norm"] + sum(per_layer.values())
    out = {"hf_count": hf_param_count(config), "text_backbone": text_backbone}
    out.update(parts)
    out.update({f"layer.{name}": n for name, n in groups.items()})
    return out


def model_files(models_dir: Path | None = None) -> list[Path]:
    """Every model's published config.json: data/models/<id>/config.json."""
    return sorted((models_dir or Path(__file__).resolve().parent.parent / "data" / "models").glob("*/config.json"))


def all_reference_counts(models_dir: Path | None = None) -> dict[str, dict[str, int]]:
    """{model id: reference_counts} for every data/models/<id>/config.json whose model_type transformers supports."""
    out = {}
    for path in model_files(models_dir):
        config = json.loads(path.read_text(encoding="utf-8"))
        if supported(config):
            out[path.parent.name] = reference_counts(config)
    return out


def reference_json(counts: dict[str, dict[str, int]]) -> str:
    """The exact text of data/reference_counts.json for these counts."""
    return json.dumps(counts, indent=1, sort_keys=True) + "\n"


def grouped_shapes(config: dict) -> dict[str, tuple[tuple[int, ...], list[int]]]:
    """Parameters grouped by name pattern (layer index replaced by ``{i}``): pattern -> (shape, layer indices).
    A pattern whose shape differs between layers appears once per shape, suffixed ``#shape``."""
    out: dict[str, tuple[tuple[int, ...], list[int]]] = {}
    for name, shape in _build(config).items():
        m = re.search(r"\.(\d+)\.", name)
        idx = int(m.group(1)) if m else -1
        pat = re.sub(r"\.\d+\.", ".{i}.", name, count=1)
        if pat in out and out[pat][0] != shape:
            pat = f"{pat}#{shape}"
        out.setdefault(pat, (shape, []))[1].append(idx)
    return out


def _main(paths: list[str]) -> None:
    """Print count, class, build time and the grouped parameter shapes of each model file or config."""
    for path in paths:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        config = doc.get("config", doc)
        count = hf_param_count(config)
        key = _key(config)
        print(f"{path}: {_CLASSES[key].__name__} {count:,} ({BUILD_SECONDS[key]:.1f} s)")
        for pat, (shape, idx) in grouped_shapes(config).items():
            n = len(idx)
            print(f"  {pat:70s} {str(list(shape)):24s} x{n}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="What transformers builds for model configs (meta device).")
    parser.add_argument("configs", nargs="*", help="config.json files (e.g. data/models/<id>/config.json) to print")
    parser.add_argument("--write-reference", metavar="PATH",
                        help="write the reference counts of every data/models/<id>/config.json to PATH")
    args = parser.parse_args()
    if args.write_reference:
        start = time.perf_counter()
        counts = all_reference_counts()
        Path(args.write_reference).write_text(reference_json(counts), encoding="utf-8")
        print(f"wrote {args.write_reference}: {len(counts)} models ({time.perf_counter() - start:.1f} s)")
    _main(args.configs)
