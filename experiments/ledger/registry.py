"""The model families the ledger engine knows, discovered: every module in experiments/ledger/families/ declares
``FAMILIES`` (experiments/ledger/family.py), and this module collects them, in module-name order.

``FAMILIES`` maps each ``model_type`` to its builder and ``ARCHITECTURES`` each ``architectures`` class name to its
``model_type``. A config whose ``model_type`` is unknown but whose ``architectures`` names a known class is read
by that class's family; the ledger records which class it used. Two modules claiming one model_type or one class
is an error at import, naming both.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

from .arch import Model
from .config import Reader
from .family import Family

_families_pkg = importlib.import_module(".families", __package__)


def discover() -> tuple[Family, ...]:
    found: list[Family] = []
    owner: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(_families_pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{_families_pkg.__name__}.{info.name}")
        for fam in getattr(module, "FAMILIES", ()):
            for key in (fam.model_type, *fam.architectures):
                if key in owner:
                    raise RuntimeError(f"families/{info.name}.py: {key!r} is already read by families/{owner[key]}.py")
                owner[key] = info.name
            found.append(fam)
    return tuple(found)


REGISTRY: tuple[Family, ...] = discover()

FAMILIES: dict[str, Callable[[Reader], Model]] = {f.model_type: f.build for f in REGISTRY}
ARCHITECTURES: dict[str, str] = {cls: f.model_type for f in REGISTRY for cls in f.architectures}
