"""A family is one module, and what differs between the model_types a module reads is data, not branches.

Every module in experiments/ledger/families/ (except the ``_*.py`` helpers) declares ``FAMILIES``, a tuple of
``Family`` the registry discovers, and no builder compares ``model_type`` with a literal (``if model_type ==
"mistral"``): per-type settings live in a table keyed by model_type (a frozen dataclass per type, as
llama.py's ``VARIANTS``). Read with ``ast`` from the source.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAMILY_DIR = ROOT / "experiments" / "ledger" / "families"
MODULES = sorted(p for p in FAMILY_DIR.glob("*.py") if not p.name.startswith("_"))


def model_type_branches(source: str) -> list[int]:
    """Lines where a name or attribute called model_type is compared with a string or a tuple/list/set of them."""
    def is_model_type(node):
        return (isinstance(node, ast.Name) and node.id == "model_type") or \
            (isinstance(node, ast.Attribute) and node.attr == "model_type")

    def is_literal(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(is_literal(e) for e in node.elts)

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(is_model_type(s) for s in sides) and any(is_literal(s) for s in sides):
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_branch_on_model_type(path):
    assert model_type_branches(path.read_text(encoding="utf-8")) == [], \
        f"{path.name}: a per-type difference as a branch; make it a field of the module's per-type settings"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_every_family_module_declares_its_families(path):
    from experiments.ledger.family import Family
    module = importlib.import_module(f"experiments.ledger.families.{path.stem}")
    families = getattr(module, "FAMILIES", None)
    assert isinstance(families, tuple) and families and all(isinstance(f, Family) for f in families)


def test_the_branch_check_finds_one():
    assert model_type_branches('def b(r, model_type):\n    x = 1 if model_type in ("a", "b") else 2\n') == [2]
    assert model_type_branches('def b(r, model_type):\n    if model_type == "a":\n        pass\n') == [2]
    assert model_type_branches('def b(r, v):\n    x = VARIANTS[v.model_type]\n') == []
