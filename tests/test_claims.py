"""Claims ({claim}`expr`, sitegen/claims.py) on the real lessons: all hold on the real configs, the build counts
them, and a change to the configs that makes claims false fails the build naming each one, leaving the previous
site as it was. (The plugin's syntax and messages are tested with fixture files in test_markdown_plugins.py.)
"""
from __future__ import annotations

import json
import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from sitegen import claims
from tests.build_fixtures import REPO, copy_course, run_build, tree_digest

CLAIM = re.compile(r"\{claim\}`([^`]+)`")


def claims_in_lessons(root: Path = REPO) -> list[tuple[str, int, str]]:
    """(lessons/<id>/lesson.md, line, claim) for every claim written in the lessons."""
    out = []
    for path in sorted((root / "lessons").glob("*/lesson.md")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            out += [(path.relative_to(root).as_posix(), i, m.group(1)) for m in CLAIM.finditer(line)]
    return out


def test_evaluation_is_exact():
    numbers = {"a.x": Fraction(2, 3), "a.y": 3, "a.z": 0.1 + 0.2}
    assert claims.evaluate("a.x * a.y == 2", numbers) == (True, "left = 2, right = 2")
    assert claims.evaluate("a.x == 0.6666666666666666", numbers)[0] is False      # 0.666… is a decimal, not 2/3
    assert claims.evaluate("a.y / 4 == 0.75", numbers)[0] is True                  # literals are exact decimals
    assert claims.evaluate("increasing(a.x, 1, a.y)", numbers) == (True, "values = ≈ 0.666667, 1, 3".replace(
        "≈ ", ""))
    with pytest.raises(claims.UnknownName):
        claims.evaluate("a.w > 0", numbers)
    with pytest.raises(claims.ClaimSyntaxError):
        claims.evaluate("a.y.__class__ == 0 or 1", numbers)


def test_every_claim_holds_and_the_report_counts_them(repo_site):
    written = claims_in_lessons()
    assert len(written) >= 80
    assert f"claims: {len(written)} claims checked, all hold" in repo_site.stdout.splitlines()


def test_perturbed_configs_fail_the_build_naming_each_broken_claim(tmp_path):
    """Llama-2-7B with a 320,000-token vocabulary: its vocabulary matrices outgrow Qwen3.8's share, its FFN share
    drops far below two thirds; the claims saying otherwise must each be reported, and nothing written."""
    root = copy_course(tmp_path, fixture_lessons=False)
    path = root / "data" / "models" / "llama-2-7b" / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["vocab_size"] = 320_000
    path.write_text(json.dumps(config), encoding="utf-8")
    out = root / "_site"
    out.mkdir()
    (out / "index.html").write_text("the previous site", encoding="utf-8")
    before = tree_digest(out)

    result = run_build(root, out)

    assert result.returncode == 1, result.stdout + result.stderr
    failed = [line for line in result.stderr.splitlines() if ": claim failed: " in line]
    broken = {
        "llama7b.V < anchor.V": "left = 320,000, right = 248,320",
        "llama7b.total < anchor.total and llama7b.embedding_share < anchor.embedding_share":
            "llama7b.embedding_share < anchor.embedding_share fails",
        "llama7b.embedding_share < anchor.embedding_share and llama7b.ffn_share_total > anchor.ffn_share_total":
            "llama7b.embedding_share < anchor.embedding_share fails",
        "abs(llama7b.ffn_share_total - 2/3) < 0.05": "right = 0.05",
        "llama7b.ffn_share_total > 0.6 and ffn.decode_ffn_share.llama7b > 0.6 and ffn.llama7b_ffn_flops_share > 0.6":
            "llama7b.ffn_share_total > 0.6 fails",
    }
    where = {text: (file, line) for file, line, text in claims_in_lessons(root)}
    for text, why in broken.items():
        file, line = where[text]
        expected = f"{file}:{line}: claim failed: {text} ("
        assert any(f.startswith(expected) and why in f for f in failed), (expected, failed)
    assert len(failed) >= 3
    assert all(not line.startswith("Traceback") for line in result.stderr.splitlines())
    assert result.stderr.splitlines()[-1] == f"build failed: {len(result.stderr.splitlines()) - 1} problem(s); " \
                                             f"{out} left unchanged"
    assert tree_digest(out) == before


def test_change_report_names_the_claims_a_changed_number_feeds(tmp_path, repo_site):
    """A small config change that keeps every claim true (Llama-2-7B's native context one token longer): each
    changed number lists exactly the claims that use it. (The previous build is the session's build of the course,
    whose numbers.json the copy's _site/ starts with.)"""
    root = copy_course(tmp_path, fixture_lessons=False)
    (root / "_site").mkdir()
    shutil.copy2(repo_site.out / "numbers.json", root / "_site" / "numbers.json")
    path = root / "data" / "models" / "llama-2-7b" / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["max_position_embeddings"] += 1
    path.write_text(json.dumps(config), encoding="utf-8")
    result = run_build(root, runtime=False)
    assert result.returncode == 0, result.stderr
    rows = {c["name"]: c for c in json.loads((root / "_site" / "changes.json").read_text(encoding="utf-8"))}
    assert rows["llama7b.T_max"]["new"] == str(config["max_position_embeddings"])
    written = claims_in_lessons()
    for name, row in rows.items():
        expected = sorted(f"{file}:{line}" for file, line, text in written if name in claims.claim_names(text))
        assert sorted(c["id"] for c in row["claims"]) == expected, name
    claimed = [name for name, row in rows.items() if row["claims"]]
    assert claimed, "some changed number feeds a claim"
    assert "; claims: lessons/" in next(line for line in result.stdout.splitlines()
                                         if f"changed {claimed[0]}:" in line)
