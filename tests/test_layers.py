"""The experiments package is layered, and every import (lazy ones inside functions included) points down.

Layers, lowest first (experiments/toolkit/__init__.py says what each holds):

    values    errors, errors_zh, expr, format, labels, numbers, widget, exercise (declarations: they name what
              they call as "module:function" strings, so they import nothing above them)
    engine    experiments.ledger (inside it: tree, config, arch, blocks, family, families, registry, the package,
              views, cli, __main__, in that order)
    baseline  experiments.baseline
    train     experiments.train (the numpy trainer)
    toolkit   experiments.toolkit
    lesson    experiments.lessons.<one lesson> (its folder lessons/<id>/, tests left out): imports only its own
              package and the layers below
    course    experiments.lessons (discovery), course_numbers, api, the experiments package itself; they reach a
              lesson only through discovery, never by its name

Nothing in experiments/ imports sitegen or build.py. The imports are read with ``ast`` from the source, so an
import inside a function counts the same as one at the top.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "experiments"

LAYERS = (
    ("values", ("experiments.errors", "experiments.errors_zh", "experiments.expr", "experiments.format",
                "experiments.labels", "experiments.numbers", "experiments.widget", "experiments.exercise")),
    ("engine", ("experiments.ledger",)),
    ("baseline", ("experiments.baseline",)),
    ("train", ("experiments.train",)),
    ("toolkit", ("experiments.toolkit",)),
    ("lesson", ()),   # experiments.lessons.<name>[.<module>]
    ("course", ("experiments.lessons", "experiments.course_numbers", "experiments.api", "experiments")),
)
ENGINE = ("jsontext", "tree", "config", "arch", "blocks", "family", "families", "registry", "estimate", "", "views",
          "forks", "training", "cli", "__main__")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the package, each lesson's (lessons/<id>/*.py, imported as experiments.lessons.<package>)
    included."""
    from experiments.lessons import package_name
    found = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}
    for p in sorted((ROOT / "lessons").glob("*/*.py")):
        if (p.parent / "__init__.py").is_file() and not p.name.startswith("test_"):
            package = f"experiments.lessons.{package_name(p.parent.name)}"
            found[package if p.stem == "__init__" else f"{package}.{p.stem}"] = p
    return found


@functools.cache
def _raw_imports(name: str, path: Path) -> tuple[tuple[int, str, tuple[str, ...]], ...]:
    """(line, module, names imported from it) of every import statement anywhere in the file (read once)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((node.lineno, target, tuple(alias.name for alias in node.names)))
    return tuple(out)


def imports(name: str, path: Path, known) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative ones resolved; ``from X import a`` names X.a when
    that is a module of `known`, else X."""
    out = []
    for line, target, names in _raw_imports(name, path):
        if not names:
            out.append((line, target))
        for alias in names:
            sub = f"{target}.{alias}"
            out.append((line, sub if sub in known else target))
    return out


def layer_of(name: str) -> int:
    parts = name.split(".")
    if parts[:2] == ["experiments", "lessons"] and len(parts) > 2:
        return [n for n, _ in LAYERS].index("lesson")
    best, depth = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = i, prefix.count(".")
    assert best is not None, f"{name}: in no layer (add it to LAYERS in tests/test_layers.py)"
    return best


def lesson_of(name: str) -> str | None:
    parts = name.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["experiments", "lessons"] and len(parts) > 2 else None


def engine_rank(name: str) -> int | None:
    parts = name.split(".")
    if parts[:2] != ["experiments", "ledger"]:
        return None
    return ENGINE.index(parts[2] if len(parts) > 2 else "")


def upward_imports(known: dict[str, Path]) -> list[str]:
    bad = []
    for name, path in known.items():
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        for line, target in imports(name, path, known):
            top = target.split(".")[0]
            if top in ("sitegen", "build", "tests"):
                bad.append(f"{rel}:{line}: imports {target} (experiments/ never imports the site or the build)")
            if top != "experiments":
                continue
            if layer_of(target) > layer_of(name):
                bad.append(f"{rel}:{line}: {name} ({LAYERS[layer_of(name)][0]}) imports {target} "
                           f"({LAYERS[layer_of(target)][0]}), a layer above it")
            own, other = lesson_of(name), lesson_of(target)
            if own and other and own != other:
                bad.append(f"{rel}:{line}: lesson {own} imports another lesson, {target}")
            elif other and not own:
                bad.append(f"{rel}:{line}: {name} imports the lesson {target} by name (lessons are discovered)")
            mine, theirs = engine_rank(name), engine_rank(target)
            if mine is not None and theirs is not None and theirs > mine:
                bad.append(f"{rel}:{line}: {name} imports {target}, above it in the engine")
    return bad


def test_every_import_points_down_and_no_lesson_imports_another():
    assert upward_imports(modules()) == []


def test_every_module_is_in_a_layer():
    for name in modules():
        layer_of(name)


@pytest.mark.parametrize("source, expected", [
    ("from ..c4_ffn_deep_read import calc\n",
     "lesson experiments.lessons.c11_moe_linear_attention imports another lesson"),
    ("def f():\n    from ... import api\n", "imports experiments.api (course), a layer above it"),
    ("def f():\n    import sitegen.widgets\n", "never imports the site"),
])
def test_the_check_finds_an_upward_or_sideways_import(tmp_path, source, expected):
    """The same check on a made-up lesson module holding one bad import (a lazy one in two cases) reports it."""
    fake = tmp_path / "experiments" / "lessons" / "c11_moe_linear_attention" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source, encoding="utf-8")
    found = upward_imports({**modules(), "experiments.lessons.c11_moe_linear_attention.probe": fake})
    assert len(found) == 1 and expected in found[0], found


def test_engine_order_is_checked_too():
    """views.py sits above the package's __init__ (it imports Ledger from it); an import the other way is upward."""
    assert engine_rank("experiments.ledger.views") > engine_rank("experiments.ledger")
    assert engine_rank("experiments.ledger.families.llama") < engine_rank("experiments.ledger.registry")


def test_the_check_finds_a_lesson_imported_by_name(tmp_path):
    """experiments.api taking a helper from a lesson's module (as it once took derivations from C4's widgets)."""
    fake = tmp_path / "api.py"
    fake.write_text("def f():\n    from .lessons.c4_transformer_block.widgets import byo_error\n", encoding="utf-8")
    found = upward_imports({**modules(), "experiments.api": fake})
    assert len(found) == 1 and "imports the lesson experiments.lessons.c4_transformer_block.widgets by name" in found[0]
