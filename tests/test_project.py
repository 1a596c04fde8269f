"""The project's shape stays as documented: the README's layout table matches the tree, its list of supported
model_types is the registry's, and no import cycle runs through the course's packages."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_layout_table_matches_the_tree():
    table = re.findall(r"^\| `([\w./-]+)/` \|", _readme(), flags=re.M)
    assert table, "README has a layout table"
    tracked = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
               and p.name not in ("node_modules",) and any(p.rglob("*"))}
    assert set(table) == tracked - {"build", "dist"} - {n for n in tracked if n.endswith(".egg-info")}
    for folder in table:
        assert (ROOT / folder).is_dir()


def test_readme_lists_exactly_what_llm_ledger_list_prints(capsys):
    """README's supported list is `llm-ledger --list`'s first column, in its order, with its count; every
    model_type there is the registry's, and each line names the family's architectures classes."""
    from experiments.ledger.cli import main
    from experiments.ledger.registry import REGISTRY
    assert main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    types = [line.split()[0] for line in lines]
    assert types == sorted(f.model_type for f in REGISTRY)
    assert {line.split()[0]: line.split()[1:] for line in lines} == {f.model_type: list(f.architectures)
                                                                      for f in REGISTRY}
    text = _readme()
    block = text[text.index("Supported `model_type`s"):text.index("A config whose")]
    listed = re.findall(r"\b([a-z][a-z0-9_]*[a-z0-9])\b(?=[,.])", block.split(":", 1)[1])
    assert listed == types
    assert f"({len(types)})" in block and "llm-ledger --list" in block


def _module_imports(package: str) -> dict[str, set[str]]:
    """module -> modules of the same package it imports at module level (function-level imports are lazy on
    purpose and do not form cycles at import time)."""
    out: dict[str, set[str]] = {}
    base = ROOT / package
    for path in base.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        is_pkg = rel.name == "__init__"
        deps = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = name.split(".")
                    anchor = parts if is_pkg else parts[:-1]
                    anchor = anchor[:len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                    mod = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            deps |= {t for t in targets if t.split(".")[0] in ("experiments", "sitegen") and t != name}
        out[name] = deps
    return out


def test_no_import_cycles():
    graph: dict[str, set[str]] = {}
    for package in ("experiments", "sitegen"):
        graph.update(_module_imports(package))
    graph = {m: {d for d in deps if d in graph} for m, deps in graph.items()}
    # a module importing its own package's __init__ (from . import X) is not a cycle unless the __init__ imports it
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert cycles == []


def test_the_engine_installs_as_a_command(tmp_path):
    """`pip install .` gives the ledger engine's console command, usable without the site."""
    import shutil
    import subprocess
    import sys
    # from a copy of what the package is made of: building in the checkout would leave build/ behind, and a stale
    # build/ from an earlier install would be packaged instead of the sources
    src = tmp_path / "src"
    for part in ("experiments", "sitegen"):
        shutil.copytree(ROOT / part, src / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", src / "pyproject.toml")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                          "--no-build-isolation", "--no-index", str(src)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert pip.returncode == 0, pip.stderr
    out = subprocess.run([str(venv / "bin" / "llm-ledger"), str(ROOT / "data" / "models" / "gpt2" / "config.json"),
                          "--depth", "0"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("model: 124,439,808\n")
