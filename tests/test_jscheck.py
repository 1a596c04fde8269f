"""The build checks the JavaScript half of a widget (sitegen/jscheck.py): a misspelt mount key, entry point name or
template field is refused with its file, line and a did-you-mean, all of them in one build."""
from __future__ import annotations

import pytest

from build_fixtures import REPO, copy_course, run_build
from sitegen import jscheck

C11 = "lessons/c11-moe-linear-attention/script.js"
LEDGER = "lessons/c11-moe-linear-attention/templates/c11_moe_ledger.html"


def _line_of(path, needle: str) -> int:
    text = path.read_text(encoding="utf-8")
    return text.count("\n", 0, text.index(needle)) + 1


def test_mount_keys_and_call_names_are_read_from_the_script():
    text = (REPO / C11).read_text(encoding="utf-8")
    assert [k for k, _ in jscheck.mount_keys(text)] == ["c11-moe-ledger", "c11-hybrid-memory", "c11-batch-experts",
                                                       "c11-recall"]
    assert {n for n, _ in jscheck.call_names(text)} == {"c11_moe_ledger", "c11_hybrid_memory", "c11_hybrid_chart",
                                                        "c11_batch_read", "c11_batch_chart", "c11_recall"}
    panel = ('x({ startCall: (t) => ["c5_train_start", [t]], stepCall: "c5_train_step" }); '
             'rt.call("experiments.api:a_b")')
    assert [n for n, _ in jscheck.call_names(panel)] == ["c5_train_start", "c5_train_step", "a_b"]


def test_key_paths_reach_parts_items_and_indices():
    paths = jscheck.key_paths({"diff": {"sentence": "x"}, "rows": [{"label": 1}], "bars": [{"bytes": 2}]})
    assert {"diff", "diff.sentence", "sentence", "rows", "label", "bars.0.bytes", "bytes"} <= paths
    assert "sentense" not in paths


def test_the_course_as_it_is_has_no_problem():
    from experiments import lessons
    assert jscheck.script_problems(lessons.course(REPO).widgets(), REPO) == []


@pytest.fixture()
def misspelt(tmp_path):
    """A course copy whose C11 script misspells a mount key and an entry point, and whose C11 ledger template
    misspells a field (the build reads both from the copy)."""
    root = copy_course(tmp_path, fixture_lessons=False)
    script = root / C11
    text = script.read_text(encoding="utf-8")
    text = text.replace('"c11-recall": recall', '"c11-recal": recall', 1)
    text = text.replace('W.call("c11_batch_read"', 'W.call("c11_batch_reed"', 1)
    script.write_text(text, encoding="utf-8")
    ledger = root / LEDGER
    source = ledger.read_text(encoding="utf-8")
    assert 'data-f="total"' in source
    ledger.write_text(source.replace('data-f="total"', 'data-f="totl"', 1), encoding="utf-8")
    return root, script, ledger


def test_every_misspelling_is_refused_at_its_file_and_line_together(misspelt):
    root, script, ledger = misspelt
    previous = root / "_site"
    result = run_build(root, runtime=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    mount = _line_of(script, '"c11-recal"')
    call = _line_of(script, '"c11_batch_reed"')
    field = _line_of(ledger, 'data-f="totl"')
    expected = [
        f"{C11}:{mount}: mount key 'c11-recal' is not a widget that loads this script (did you mean 'c11-recall'?)",
        f"{C11}:{call}: entry point 'c11_batch_reed' is not one its widgets declare in calls (did you mean "
        "'c11_batch_read'?)",
        f"{LEDGER}:{field}: data-f key 'totl' is not a key of the widget's "
        "answers or view (did you mean 'total'?)",
    ]
    for start in expected:
        assert any(line.startswith(start) for line in lines), (start, result.stderr)
    assert not previous.exists()          # nothing written
