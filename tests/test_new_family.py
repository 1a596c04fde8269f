"""docs/adding-a-family.md, followed to the letter: a new family is one module in experiments/ledger/families/
plus its fixture config (config.json + meta.yaml), and one word in README's supported list; nothing else.

In a temporary copy of the project the files under tests/fixtures/new_family/ are added (each must be new) and
README's list gets the new model_type; the copy's engine is imported in this process. It must discover the family
(registry, ``llm-ledger --list``, README equal to it), read the fixture config with it, and its whole tree and its
total must match what transformers builds on the meta device for the same sizes as LlamaForCausalLM (the made-up
family is Llama-shaped; transformers does not know its model_type).
"""
from __future__ import annotations

import json
import re

import pytest

from project_copy import ROOT, add_files, copy_project, modules_of

KIT = ROOT / "tests" / "fixtures" / "new_family"
FIXTURE = "tests/fixtures/models/toyllama-tiny"


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("new-family") / "project")
    added = add_files(root, KIT)
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    types = re.search(r"Supported `model_type`s \((\d+)\)", text)
    text = text.replace(types.group(0), f"Supported `model_type`s ({int(types.group(1)) + 1})")
    listed = re.search(r"family reads\): (.*?)\. A config", text, re.S)      # README's list is in name order
    names = sorted(re.split(r",\s+", listed.group(1)) + ["toyllama"])
    text = text.replace(listed.group(1), ", ".join(names))
    readme.write_text(text, encoding="utf-8")
    config = json.loads((root / FIXTURE / "config.json").read_text(encoding="utf-8"))
    return root, added, config


def test_only_new_files(toy):
    _, added, _ = toy
    assert added == ["experiments/ledger/families/toyllama.py", f"{FIXTURE}/config.json", f"{FIXTURE}/meta.yaml"]


def test_the_family_is_discovered_and_listed(toy, capsys):
    root, _, config = toy
    with modules_of(root):
        from experiments.ledger import build_ledger
        from experiments.ledger.cli import main
        from experiments.ledger.registry import ARCHITECTURES, FAMILIES
        assert "toyllama" in FAMILIES and ARCHITECTURES["ToyLlamaForCausalLM"] == "toyllama"
        assert main(["--list"]) == 0
        ledger = build_ledger(config)
    lines = capsys.readouterr().out.splitlines()
    assert "toyllama ToyLlamaForCausalLM" in lines
    assert ledger.arch.family == "toyllama" and ledger.via_class is None
    block = (root / "README.md").read_text(encoding="utf-8")
    block = block[block.index("Supported `model_type`s"):block.index("A config whose")]
    listed = re.findall(r"\b([a-z][a-z0-9_]*[a-z0-9])\b(?=[,.])", block.split(":", 1)[1])
    assert listed == [line.split()[0] for line in lines] and f"({len(lines)})" in block


def test_its_whole_tree_matches_transformers(toy):
    pytest.importorskip("transformers")
    from hf_reference import hf_param_count
    from hf_tree import tree_mismatches
    root, _, config = toy
    with modules_of(root):
        from experiments.ledger import build_ledger
        ledger = build_ledger(config)
    as_llama = dict(config, model_type="llama", architectures=["LlamaForCausalLM"])
    assert ledger.hf_count == ledger.total == hf_param_count(as_llama)
    assert tree_mismatches(as_llama, ledger) == []
