"""The parameter ledger of a transformer, computed exactly from its Hugging Face config.json.

    python -m experiments.ledger CONFIG.json          # readable tree (also installed as `llm-ledger`)
    python -m experiments.ledger CONFIG.json --json   # one JSON object

The ledger is an ordered tree (model -> part -> layer type -> tensor) whose subtotals are the sums of their
children (see tree.py). Parts: ``text`` (the language backbone), ``mtp`` (multi-token-prediction
layers the checkpoint ships but transformers does not build) and ``vision`` (a vision tower). Counts are checked
against the transformers implementation instantiated on torch's meta device (tests/test_hf_crosscheck.py).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ConfigError, Problem
from .arch import Arch, Model
from .config import Reader
from .estimate import build_estimate, estimable, unread_keys
from .registry import ARCHITECTURES, FAMILIES
from .tree import Node, group

T = TypeVar("T")


@dataclass
class Ledger:
    root: Node
    arch: Arch
    via_class: str | None = None    # the `architectures` class that chose the family, when model_type did not
    estimate: dict[str, Any] | None = None   # when no family read the config: {"assumed": [...], "unread_keys": [...]}
    _memo: dict[object, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def memo(self, key: object, compute: Callable[[], T]) -> T:
        """compute() once per ledger and key: a ledger never changes after it is built (views.breakdown is asked
        for by several views of one widget call)."""
        if key not in self._memo:
            self._memo[key] = compute()
        value: T = self._memo[key]   # (what compute() gave for this key)
        return value

    def part(self, name: str) -> Node | None:
        return self.root.get(name)

    def count(self, key: str) -> int:
        return self.root.find(key).count

    @property
    def text_backbone(self) -> int:
        return self.count("text")

    @property
    def mtp(self) -> int:
        node = self.part("mtp")
        return node.count if node else 0

    @property
    def vision(self) -> int:
        node = self.part("vision")
        return node.count if node else 0

    @property
    def total(self) -> int:
        return self.root.count

    @property
    def hf_buffers(self) -> int:
        """Checkpoint tensors outside MTP that transformers registers as buffers, not parameters (leaves of kind
        "hf_buffer", e.g. DeepSeek-V3's router e_score_correction_bias: 58 x 256 = 14,848 values)."""
        nodes = (self.root.get(part) for part in ("text", "vision"))
        return sum(node.sum_where(lambda leaf, kinds: "hf_buffer" in kinds) for node in nodes if node is not None)

    @property
    def hf_count(self) -> int:
        """What transformers instantiates as parameters: ``total - mtp - hf_buffers``. The MTP layers are not built
        at all; hf_buffer leaves (stored in the checkpoint, built as buffers) are not in ``parameters()``. Both
        still count in ``total`` (and the buffers in ``text_backbone`` and the FFN), which is what the checkpoint
        holds."""
        return self.total - self.mtp - self.hf_buffers

    @property
    def active_per_token(self) -> int:
        """Text-backbone parameters one token passes through (routed experts: only the top-k)."""
        return self.root.find("text").active

    def sum_kind(self, kind: str, part: str = "text", active: bool = False) -> int:
        node = self.part(part)
        return node.sum_where(lambda leaf, kinds: kind in kinds, active) if node else 0

    @property
    def ffn(self) -> int:
        """All FFN weights of the text backbone (dense MLPs, experts, shared experts, routers)."""
        return self.sum_kind("ffn")

    def layer(self, layer_type: str) -> Node:
        """The group of decoder layers of one type, e.g. 'full_attention'."""
        return self.root.find(f"text/layers/{layer_type}")

    @property
    def layer_types(self) -> list[str]:
        return [n.name for n in self.root.find("text/layers").children]

    def to_json(self) -> dict[str, Any]:
        return {
            "model_type": self.arch.family,
            "via_class": self.via_class,
            "estimate": self.estimate,
            "total": self.total,
            "vision": self.vision,
            "mtp": self.mtp,
            "text_backbone": self.text_backbone,
            "active_per_token": self.active_per_token,
            "hf_count": self.hf_count,
            "hf_buffers": self.hf_buffers,
            "ffn": self.ffn,
            "tree": self.root.to_json(),
        }


def resolve_family(config: object) -> tuple[str, str | None]:
    """(the family's model_type, the `architectures` class that chose it or None). The config's own
    `model_type` wins when the engine knows it; otherwise the first `architectures` entry naming a known class
    (Kimi-K2: model_type kimi_k2, architectures ["DeepseekV3ForCausalLM"] -> deepseek_v3). A config with no
    model_type at all is refused: it is not a transformers config."""
    if not isinstance(config, dict):
        raise ConfigError([Problem("", "a JSON object (a config.json)", config, True)])
    model_type = config.get("model_type")
    if model_type is None or model_type == "":
        # no model_type at all (an empty object, a file that is not a transformers config): say just that
        raise ConfigError([Problem("model_type", "a string (the key is missing)", None, False)])
    if isinstance(model_type, str) and model_type in FAMILIES:
        return model_type, None
    classes = config.get("architectures") if isinstance(model_type, str) and model_type else None
    for cls in classes if isinstance(classes, list) else []:
        if isinstance(cls, str) and cls in ARCHITECTURES:
            return ARCHITECTURES[cls], cls
    raise ConfigError([Problem("model_type", "one of " + ", ".join(sorted(FAMILIES))
                               + " (or an 'architectures' entry naming a class of one of them)", model_type,
                               "model_type" in config)])


def model_type_of(config: dict[str, Any]) -> str:
    """The family that reads the config, or (the estimate path) the config's own model_type."""
    try:
        return resolve_family(config)[0]
    except ConfigError:
        if estimable(config):
            model_type: str = config["model_type"]   # (estimable: a string)
            return model_type
        raise


def read_model(config: dict[str, Any]) -> Model:
    """Validate and read a config into trees with the family that reads it; raises ConfigError listing every
    problem found. Never an estimate: the site's models (sitegen/models.py) are read exactly or refused."""
    return _read(config, allow_estimate=False)[0]


def _read(config: dict[str, Any], allow_estimate: bool = True) -> tuple[Model, str | None, dict[str, Any] | None]:
    """(Model, the class that chose the family, the estimate's notes or None)."""
    try:
        model_type, via = resolve_family(config)
    except ConfigError:
        if not allow_estimate or not estimable(config):
            raise
        reader = Reader(config)
        model, assumed = build_estimate(reader)
        reader.check()
        return model, None, {"assumed": assumed, "unread_keys": unread_keys(config, reader.read)}
    reader = Reader(config)
    model = FAMILIES[model_type](reader)
    reader.check()
    return model, via, None


def build_ledger(config: dict[str, Any]) -> Ledger:
    model, via, estimate = _read(config)
    root = group("model", [model.text, model.mtp, model.vision])
    root = Node("model", "", None, tuple(c.keyed_in_place("") for c in root.children))
    return Ledger(root, model.arch, via, estimate)


_CACHE: OrderedDict[str, Ledger] = OrderedDict()
CACHE_SIZE = 128
# id(config) -> (config, its canonical JSON): each config object serialised once
_KEYS: OrderedDict[int, tuple[object, str]] = OrderedDict()


def canonical_key(config: object) -> str:
    """The config's canonical JSON (sorted keys, no spaces), computed once per config object: the build passes
    its own config dicts (data/models/) to ledger_of thousands of times, and serialising a big config each time
    was most of a build. The cache holds the config itself, so its id is not reused while the entry lives; a
    config is never modified once it has been counted (a caller that changes one changes a copy: with_experts,
    moe_explore, hybrid_config)."""
    hit = _KEYS.get(id(config))
    if hit is not None and hit[0] is config:
        _KEYS.move_to_end(id(config))
        return hit[1]
    key = json.dumps(config, sort_keys=True, separators=(",", ":"))
    _KEYS[id(config)] = (config, key)
    while len(_KEYS) > 4 * CACHE_SIZE:
        _KEYS.popitem(last=False)
    return key


def ledger_of(config: dict[str, Any]) -> Ledger:
    """build_ledger of a config (or a {"meta", "config"} data file), from a small LRU keyed by the config's
    canonical JSON: a widget that sends the same config on every slider tick builds its ledger once. Ledgers are
    never modified after they are built, so sharing one is safe."""
    config = unwrap(config)
    key = canonical_key(config)
    ledger = _CACHE.get(key)
    if ledger is None:
        ledger = _CACHE[key] = build_ledger(config)
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return ledger


def unwrap(document: dict[str, Any]) -> dict[str, Any]:
    """Accept a plain config.json or the course's data file ({"meta": ..., "config": ...})."""
    if isinstance(document, dict) and "config" in document and "meta" in document and "model_type" not in document:
        config: dict[str, Any] = document["config"]
        return config
    return document
