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
    declared = {n for _, _, fields in jscheck.declarations(text) for n, _ in jscheck.declared_calls(fields, text)}
    assert declared == {"c11_moe_ledger", "c11_hybrid_memory", "c11_hybrid_chart", "c11_batch_read",
                        "c11_batch_chart", "c11_recall"}
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
    text = text.replace('"c11-hybrid-memory": {', '"c11-hybrid-memry": {', 1)          # a declared widget
    text = text.replace('call: ["c11_batch_read"', 'call: ["c11_batch_reed"', 1)      # its entry point
    text = text.replace('dtype: ".c11-dtype"', 'dtype: ".c11-dtyp"', 1)              # a control's class
    text = text.replace('x.rows', 'x.rowz', 1)                                        # what show reads
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
    mount = _line_of(script, '"c11-hybrid-memry"')
    call = _line_of(script, '"c11_batch_reed"')
    control = _line_of(script, '".c11-dtyp"')
    read = _line_of(script, 'x.rowz')
    field = _line_of(ledger, 'data-f="totl"')
    expected = [
        f"{C11}:{mount}: mount key 'c11-hybrid-memry' is not a widget that loads this script (did you mean "
        "'c11-hybrid-memory'?)",
        f"{C11}:{call}: entry point 'c11_batch_reed' is not one widget 'c11-batch-experts' declares in calls (did "
        "you mean 'c11_batch_read'?)",
        f"{C11}:{control}: controls.dtype of widget 'c11-batch-experts': no element of its template has class "
        "'c11-dtyp' (did you mean 'c11-dtype'?)",
        f"{C11}:{read}: show of widget 'c11-recall' reads 'rowz', not a key of its answers (did you mean 'rows'?)",
        f"{LEDGER}:{field}: data-f key 'totl' is not a key of the widget's "
        "answers or view (did you mean 'total'?)",
    ]
    for start in expected:
        assert any(line.startswith(start) for line in lines), (start, result.stderr)
    assert not previous.exists()          # nothing written


DECLARED = '''W.declare({
  "c9-seq": { controls: { model: ".c9-seq-model" }, call: "c9_seq", args: (v) => [W.model(v.model)],
    answer: ".c9-seq-answr", show: (x, w) => W.chart(w.root, x.chrt) },
  "c9-measured": { controls: { batch: ".c9-m-batch", seq: [".c9-m-seq", [1, 2]] }, whenReady: ".c9-m-run, .c9-m-rn",
    call: (v, w, arg) => arg.label === "run" ? "c9_measure" : "c9_predictd", args: (v) => ["a,b", v.batch] },
});'''


def test_a_declaration_is_read_field_by_field():
    """declare({...}): each widget's fields, over strings with commas and nested brackets; the names its call may
    pick (not the other strings of an arrow function); the classes its selectors name; what its show reads."""
    (seq, line, fields), (measured, line2, fields2) = jscheck.declarations(DECLARED)
    assert (seq, line, measured, line2) == ("c9-seq", 2, "c9-measured", 4)
    assert set(fields) == {"controls", "call", "args", "answer", "show"}
    assert set(fields2) == {"controls", "whenReady", "call", "args"}
    assert jscheck.declared_calls(fields, DECLARED) == [("c9_seq", 2)]
    assert jscheck.declared_calls(fields2, DECLARED) == [("c9_measure", 5), ("c9_predictd", 5)]
    assert jscheck.selectors(fields2, DECLARED) == [("whenReady", "c9-m-run", 4), ("whenReady", "c9-m-rn", 4),
                                                     ("controls.batch", "c9-m-batch", 4),
                                                     ("controls.seq", "c9-m-seq", 4)]
    assert jscheck.answer_reads(fields, DECLARED) == [("chrt", 3)]
    assert jscheck.answer_reads(fields2, DECLARED) == []            # (no show)
    assert [k for k, _ in jscheck.mount_keys(DECLARED)] == ["c9-seq", "c9-measured"]


def test_a_declarations_misspellings_are_found_at_their_lines():
    """A class no element of the rendered widget has, a key the build's answers lack: each at its script line with
    a did-you-mean; nothing when they match."""
    html = ('<div class="c9-seq"><select class="c9-seq-model"></select><div class="c9-seq-answer">'
            '<figure class="chart"></figure></div></div>')
    problems = [str(e) for e in jscheck.declaration_problems(html, DECLARED, "lessons/c9/script.js", "c9-seq",
                                                             [{"chart": {}, "rows": []}])]
    assert problems == [
        "lessons/c9/script.js:3: answer of widget 'c9-seq': no element of its template has class 'c9-seq-answr' "
        "(did you mean 'c9-seq-answer'?)",
        "lessons/c9/script.js:3: show of widget 'c9-seq' reads 'chrt', not a key of its answers (did you mean "
        "'chart'?)"]
    fixed = DECLARED.replace("answr", "answer").replace("x.chrt", "x.chart")
    assert jscheck.declaration_problems(html, fixed, "s.js", "c9-seq", [{"chart": {}}]) == []
    assert jscheck.declaration_problems(html, fixed, "s.js", "c9-seq", []) == []    # (no answers: show unchecked)


def test_a_declared_call_must_be_one_its_own_widget_declares(tmp_path):
    from experiments.widget import Widget
    js = tmp_path / "site" / "static" / "js"
    js.mkdir(parents=True)
    (js / "s.js").write_text(DECLARED, encoding="utf-8")
    widgets = {"c9-seq": Widget("c9-seq", "t.html", "v:v", script="s.js", calls={"c9_seq": "v:a"}),
               "c9-measured": Widget("c9-measured", "t.html", "v:v", script="s.js",
                                     calls={"c9_measure": "v:b", "c9_predicted": "v:c", "c9_seq_other": "v:d"})}
    problems = [str(e) for e in jscheck.script_problems(widgets, tmp_path)]
    assert problems == ["site/static/js/s.js:5: entry point 'c9_predictd' is not one widget 'c9-measured' declares "
                        "in calls (did you mean 'c9_predicted'?); it declares: c9_measure, c9_predicted, c9_seq_other"]


def test_a_disabled_controls_rule_is_checked_at_its_lines(tmp_path):
    """declare's disabled: {key: {when, reason}}: the key one of the declaration's controls, the reason a message
    key of the table (a misspelling at its line, with a did-you-mean) without placeholders; a rule with no reason is
    refused too. The course's own rules pass."""
    from sitegen import messages
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "messages_zh.json").write_text(
        '{"c9.step.zero_one_card": "一张卡", "c9.step.n": "{n} 张卡"}', encoding="utf-8")
    js = tmp_path / "site" / "static" / "js"
    js.mkdir(parents=True)
    (js / "s.js").write_text('''W.declare({
  "c9-step": { controls: { zero: ".c9-zero", ranks: ".c9-ranks" }, call: "c9_step",
    disabled: { zero: { when: (v) => v.ranks === "1",
                        reason: "c9.step.zero_one_crad" },
                zeros: { when: (v) => false, reason: "c9.step.zero_one_card" },
                ranks: { when: (v) => false, reason: "c9.step.n" } } },
  "c9-other": { controls: { a: ".a" }, disabled: { a: { when: (v) => true } } },
});''', encoding="utf-8")
    problems = [str(e) for e in jscheck.message_problems(tmp_path, messages.load(tmp_path))]
    assert problems == [
        "site/static/js/s.js:4: the reason 'c9.step.zero_one_crad' of disabled.zero (widget 'c9-step') is not a key "
        "of data/messages_zh.json (did you mean 'c9.step.zero_one_card'?)",
        "site/static/js/s.js:5: disabled.zeros of widget 'c9-step' is not one of its controls (did you mean "
        "'zero'?); they are: ranks, zero",
        "site/static/js/s.js:6: the reason 'c9.step.n' of disabled.ranks (widget 'c9-step') is shown as it is, but "
        "its message has the placeholders {n}",
        "site/static/js/s.js:7: disabled.a of widget 'c9-other' gives no reason: write reason: \"message.key\" (a key "
        "of data/messages_zh.json)"]
    from build_fixtures import REPO
    assert [e for e in jscheck.message_problems(REPO, messages.load(REPO)) if "disabled." in str(e)] == []
    assert {(w, k, r) for w, k, _, r, _ in jscheck.disabled_rules(
        (REPO / "lessons" / "c15-architecture-forks" / "script.js").read_text(encoding="utf-8"))} == {
        ("c15-what-if", "kv", "c15.what_if.kv_unused")}
