"""`llm-ledger` (python -m experiments.ledger) on files that are not a config: one line naming the file and the
problem, exit 2, no traceback, whatever the bytes (README: "A bad config prints one line per problem naming the
file, the key and what was expected, and exits 2"). The text is bounded before it is parsed
(experiments/ledger/jsontext.py): too big, nested too deeply, not UTF-8.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from build_fixtures import REPO
from experiments.errors import ConfigError

GOOD = REPO / "data" / "models" / "llama-2-7b" / "config.json"


def _ledger(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.ledger", str(path)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def _one_line(proc, path, expect: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == "", proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{path}: "), lines[0]
    assert expect in lines[0], lines[0]


CASES = {
    "not-utf8": (GOOD.read_bytes().replace(b'"llama"', b'"ll\xe9ma"'), "expected UTF-8 text (not at byte offset"),
    "lone-continuation-byte": (b"\x80{}", "expected UTF-8 text (not at byte offset 0)"),
    "nested-arrays": (b"[" * 10_000 + b"]" * 10_000,
                      "expected JSON nested at most 64 levels deep (this one nests 10,000 levels)"),
    "nested-objects": (b'{"a": ' * 10_000 + b"1" + b"}" * 10_000, "this one nests 10,000 levels"),
    "deep-but-invalid": (b"[" * 100_000, "this one nests 100,000 levels"),
    "too-big": (GOOD.read_bytes()[:-2] + b', "pad": "' + b"x" * 5_000_000 + b'"}',
                "expected a file of at most 4,000,000 bytes (this one has 5,"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ledger_cli_refuses_in_one_line(tmp_path, name):
    data, expect = CASES[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(data)
    _one_line(_ledger(path), path, expect)


def test_ledger_cli_refuses_a_folder_in_one_line(tmp_path):
    _one_line(_ledger(tmp_path), tmp_path, "expected a readable file (Is a directory)")


def test_a_byte_order_mark_and_the_limit_itself_are_fine(tmp_path):
    from experiments.ledger import jsontext
    head = b"\xef\xbb\xbf" + GOOD.read_bytes().rstrip()[:-1] + b', "pad": "'
    path = tmp_path / "config.json"
    path.write_bytes(head + b"x" * (jsontext.MAX_CONFIG_BYTES - len(head) - 2) + b'"}')
    assert path.stat().st_size == jsontext.MAX_CONFIG_BYTES
    proc = _ledger(path)
    assert proc.returncode == 0, proc.stderr
    assert "total 6,738,415,616" in proc.stdout


def test_depth_is_counted_outside_strings_only():
    from experiments.ledger import jsontext
    assert jsontext.json_depth('{"a": "[[[[{{{{", "b": [1, {"c": "\\"]]]"}]}') == 3
    assert jsontext.json_depth("17") == 0
    assert jsontext.json_depth("[" * 65 + "]" * 65) == 65
    jsontext.loads("[" * 64 + "]" * 64)                       # the limit itself parses
    with pytest.raises(ConfigError, match="nested at most 64 levels deep .this one nests 65 levels"):
        jsontext.loads("[" * 65 + "]" * 65)


def test_a_text_over_the_limit_is_refused_by_its_utf8_size():
    from experiments.ledger import jsontext
    text = '"' + "汉" * (jsontext.MAX_CONFIG_BYTES // 3) + '"'     # fewer characters than the limit, more bytes
    assert len(text) < jsontext.MAX_CONFIG_BYTES < len(text.encode())
    with pytest.raises(ConfigError, match="at most 4,000,000 bytes"):
        jsontext.loads(text)
