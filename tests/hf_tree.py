"""Whole-tree comparison of the engine's ledger with the module tree transformers builds on the meta device.

The totals test (test_hf_crosscheck.py) proves the sums; this proves where the parameters sit. Both trees are
reduced to the same shape:

- every decoder layer becomes a *signature*: parameters summed per module two levels down, named as
  transformers names them relative to the layer (``self_attn.q_proj``, ``mlp.experts``, ``input_layernorm.weight``,
  ``mamba.conv1d``). transformers 5 fuses routed experts into 3-D ``gate_up_proj`` / ``down_proj`` tensors; the
  engine lists one expert's checkpoint tensors n times; both sum to ``mlp.experts``. The multiset of layer
  signatures must be equal (the engine's layer group of n identical layers counts n times), so a layer whose
  attention sits in the MLP, a missing norm, or a sliding layer counted as MLP-only all show up by name;
- the tensors outside the decoder layers (embeddings, final norm, lm_head, vision tower, projectors) are compared
  as multisets of tensor sizes, the vision tower's separately.

MTP layers (not built by transformers) and checkpoint tensors that transformers keeps as buffers (kind
"hf_buffer") are left out of the engine side, as in ``Ledger.hf_count``.

    tree_mismatches(config[, ledger]) -> list[str]   # empty when the trees agree; else one line per difference
"""
from __future__ import annotations

import re
from collections import Counter
from math import prod

from hf_reference import hf_param_shapes

_VISION = re.compile(r"(^|\.)(visual|vision_tower|vision_model|multi_modal_projector|vision_embed|embed_vision"
                     r"|mm_projector)\.")
_LAYER = re.compile(r"^(?:.*\.)?(?:layers|h|blocks)\.(\d+)\.(.*)$")


def _module2(path: str) -> str:
    parts = path.split(".")
    return ".".join(parts[:2])


def _engine_leaves(node, prefix: str, mult: int, kinds: tuple, out: list):
    kinds = kinds + (node.kind,) if node.kind else kinds
    mult *= node.n
    path = f"{prefix}.{node.name}" if prefix else node.name
    if node.shape is not None:
        if "hf_buffer" not in kinds:
            out.append((path, prod(node.shape), mult))
        return
    for child in node.children:
        _engine_leaves(child, path, mult, kinds, out)


def engine_view(ledger) -> tuple[Counter, Counter, Counter]:
    """(layer signatures with multiplicity, sizes of other text tensors, sizes of vision tensors)."""
    text = ledger.root.find("text")
    layers = Counter()
    other, vision = Counter(), Counter()
    for child in text.children:
        if child.name == "layers":
            for group in child.children:
                leaves: list = []
                for sub in group.children:
                    _engine_leaves(sub, "", 1, (group.kind,) if group.kind else (), leaves)
                sig = Counter()
                for path, size, mult in leaves:
                    sig[_module2(path)] += size * mult
                layers[frozenset(sig.items())] += group.n
        else:
            leaves = []
            _engine_leaves(child, "", 1, (), leaves)
            for _, size, mult in leaves:
                other[size] += mult
    if ledger.part("vision") is not None:
        leaves = []
        _engine_leaves(ledger.part("vision"), "", 1, (), leaves)
        for _, size, mult in leaves:
            vision[size] += mult
    return layers, other, vision


def hf_view(config: dict) -> tuple[Counter, Counter, Counter]:
    per_layer: dict[str, Counter] = {}
    other, vision = Counter(), Counter()
    for name, shape in hf_param_shapes(config).items():
        size = prod(shape)
        if _VISION.search(name):
            vision[size] += 1
            continue
        m = _LAYER.match(name)
        if m:
            layer_key = name[:m.start(2)]
            per_layer.setdefault(layer_key, Counter())[_module2(m.group(2))] += size
        else:
            other[size] += 1
    layers = Counter(frozenset(sig.items()) for sig in per_layer.values())
    return layers, other, vision


def _show(sig: frozenset) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(sig))


def tree_mismatches(config: dict, ledger=None) -> list[str]:
    """`ledger`: the engine's ledger to compare (default: of `config`, which transformers builds)."""
    from experiments.ledger import build_ledger

    engine, hf = engine_view(ledger or build_ledger(config)), hf_view(config)
    problems = []
    if engine[0] != hf[0]:
        for sig in set(engine[0]) | set(hf[0]):
            if engine[0][sig] != hf[0][sig]:
                problems.append(f"layer x{engine[0][sig]} in engine vs x{hf[0][sig]} in transformers: {_show(sig)}")
    for label, e, h in (("outside the layers", engine[1], hf[1]), ("vision tower", engine[2], hf[2])):
        if e != h:
            problems.append(f"{label}: tensor sizes only in engine {dict(e - h)}, only in transformers {dict(h - e)}")
    return problems
