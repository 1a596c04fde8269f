"""The parameter ledger of a transformer, computed exactly from its Hugging Face config.json.

    python -m experiments.ledger CONFIG.json          # readable tree
    python -m experiments.ledger CONFIG.json --json   # one JSON object

The ledger is an ordered tree (model -> part -> layer type -> tensor) whose subtotals are the sums of their
children (see experiments/tree.py). Parts: ``text`` (the language backbone), ``mtp`` (multi-token-prediction
layers the checkpoint ships but transformers does not build) and ``vision`` (a vision tower). Counts are checked
against the transformers implementation instantiated on torch's meta device (tests/test_hf_crosscheck.py).
"""
from __future__ import annotations

import json
import sys
from collections import OrderedDict
from dataclasses import dataclass

from .config import Reader
from .errors import ConfigError, CourseError, Problem
from .families import FAMILIES, Arch, Model
from .tree import Node, group


@dataclass
class Ledger:
    root: Node
    arch: Arch

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
        return sum(self.root.get(part).sum_where(lambda leaf, kinds: "hf_buffer" in kinds)
                   for part in ("text", "vision") if self.root.get(part) is not None)

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
        return self.part("text").active

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

    def to_json(self) -> dict:
        return {
            "model_type": self.arch.family,
            "total": self.total,
            "vision": self.vision,
            "mtp": self.mtp,
            "text_backbone": self.text_backbone,
            "active_per_token": self.active_per_token,
            "hf_count": self.hf_count,
            "ffn": self.ffn,
            "tree": self.root.to_json(),
        }


def model_type_of(config) -> str:
    if not isinstance(config, dict):
        raise ConfigError([Problem("", "a JSON object (a config.json)", config, True)])
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        raise ConfigError([Problem("model_type", "one of " + ", ".join(sorted(FAMILIES)), model_type,
                                   "model_type" in config)])
    return model_type


def read_model(config: dict) -> Model:
    """Validate and read a config into trees; raises ConfigError listing every problem found."""
    model_type = model_type_of(config)
    reader = Reader(config)
    model = FAMILIES[model_type](reader)
    reader.check()
    return model


def build_ledger(config: dict) -> Ledger:
    model = read_model(config)
    root = group("model", [model.text, model.mtp, model.vision])
    root = Node("model", "", None, tuple(c.with_keys("") for c in root.children))
    return Ledger(root, model.arch)


_CACHE: OrderedDict = OrderedDict()
CACHE_SIZE = 32


def ledger_of(config) -> Ledger:
    """build_ledger of a config (or a {"meta", "config"} data file), from a small LRU keyed by the config's
    canonical JSON: a widget that sends the same config on every slider tick builds its ledger once. Ledgers are
    never modified after they are built, so sharing one is safe."""
    config = unwrap(config)
    key = json.dumps(config, sort_keys=True, separators=(",", ":"))
    ledger = _CACHE.get(key)
    if ledger is None:
        ledger = _CACHE[key] = build_ledger(config)
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return ledger


def unwrap(document) -> dict:
    """Accept a plain config.json or the course's data file ({"meta": ..., "config": ...})."""
    if isinstance(document, dict) and "config" in document and "meta" in document and "model_type" not in document:
        return document["config"]
    return document


# -- command line ---------------------------------------------------------------------------------------------
def render_tree(node: Node, depth: int = 0, max_depth: int = 99) -> list[str]:
    mult = f" ×{node.n}" if node.n != 1 else ""
    shape = " (" + "×".join(f"{s:,}" for s in node.shape) + ")" if node.shape else ""
    active = f"  [active {node.active:,}]" if node.active != node.count else ""
    lines = [f"{'  ' * depth}{node.name}{mult}{shape}: {node.count:,}{active}"]
    if depth < max_depth:
        for child in node.children:
            lines += render_tree(child, depth + 1, max_depth)
    return lines


def load_config_file(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError([Problem("", f"a readable file ({e.strerror})")], path) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError([Problem("", f"valid JSON (line {e.lineno}, column {e.colno}: {e.msg})")], path) from None
    return unwrap(document)


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m experiments.ledger", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="a config.json (or a data/models/*.json file)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--depth", type=int, default=99, help="tree depth to print")
    args = parser.parse_args(argv)
    try:
        ledger = build_ledger(load_config_file(args.config))
    except ConfigError as e:
        for line in e.with_file(e.file or args.config).lines():
            print(line, file=sys.stderr)
        return 2
    except CourseError as e:
        print(f"{args.config}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(ledger.to_json(), ensure_ascii=False))
    else:
        print("\n".join(render_tree(ledger.root, max_depth=args.depth)))
        print(f"\ntotal {ledger.total:,} = text backbone {ledger.text_backbone:,} + MTP {ledger.mtp:,}"
              f" + vision {ledger.vision:,}; active per token {ledger.active_per_token:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
