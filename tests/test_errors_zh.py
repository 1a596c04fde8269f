"""Config problems in Chinese for learners (experiments/errors_zh.py): nothing English and no exception class on a page.

- Every `expected` phrase the engine can build has a Chinese pattern: the source of experiments/ledger (every
  r.fail / _add / Problem call, read with ast; f-string holes tried as numbers and key names) and of the
  bring-your-own-config box, so the fallback is never the path.
- Real bad configs: the bad-input corpus (tests/bad_input/configs), the engine tests' bad cases, the family
  tests' bad cases, and a sweep that spoils every key of one config per family (missing, negative, zero,
  indivisible, huge, wrong type, wrong list length...). Every ConfigError they raise renders each problem in
  Chinese, through a pattern (never the fallback), with no run of 3+ English words outside quoted keys and values.
  The hand-made ones are checked in the fast loop; the sweep (~10,000 ledgers) is `slow`.
- The English lines for maintainers are unchanged; byo_error and the FFN calculators show the Chinese.
"""
from __future__ import annotations

import ast
import copy
import itertools
import json
import re
from pathlib import Path

import pytest

from experiments.errors import ConfigError, Problem
from experiments.errors_zh import (
    FALLBACK,
    GENERIC,
    MISSING_SUFFIX,
    PHRASES,
    has_chinese,
    learner_message,
    phrase_zh,
    problem_zh,
)
from experiments.ledger import build_ledger
from experiments.ledger.registry import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "experiments" / "ledger").rglob("*.py")) + [
    ROOT / "experiments" / "toolkit" / "config_text.py"]       # (the pasted-config box's own phrases)
ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?:[ \t]+[A-Za-z]{2,}){2,}")


def english_run(line: str) -> str | None:
    """A run of 3+ English words in a learner line, outside quoted keys / values and identifiers (None if none)."""
    text = re.sub(r"'[^']*'", " ", line)                        # '...' : a key name or the learner's value
    text = re.sub(r"[A-Za-z0-9]*[_\d][\w.]*", " ", text)       # num_attention_heads, qwen3, text_config.x
    m = ENGLISH_RUN.search(text)
    return m.group(0) if m else None


def check_line(line: str) -> None:
    assert has_chinese(line), line
    assert english_run(line) is None, (english_run(line), line)
    assert FALLBACK not in line and "不符合引擎的要求" not in line, line
    assert not re.search(r"\b\w*(Error|Exception)\b", line), line


# -- 1. every phrase in the source has a pattern -----------------------------------------------------------------------
HOLE_GUESSES = ("7", "num_attention_heads")


def _templates(node) -> list[str] | None:
    """The strings an expression can build, holes as \\0 (f-string values) or \\1 (a number with thousands
    commas); one template per branch of a conditional. None: not a string expression (a forwarded variable)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append([v.value])
            else:
                spec = v.format_spec and "".join(c.value for c in v.format_spec.values if isinstance(c, ast.Constant))
                parts.append(["\1" if spec == "," else "\0"])
        return ["".join(p) for p in itertools.product(*parts)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _templates(node.left), _templates(node.right)
        return None if left is None or right is None else [a + b for a in left for b in right]
    if isinstance(node, ast.IfExp):
        body, other = _templates(node.body), _templates(node.orelse)
        return None if body is None or other is None else body + other
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and isinstance(node.func.value, ast.Constant):
        return [f"cohere{node.func.value.value}gpt2"]
    return None


def source_phrases() -> list[tuple[str, int, str]]:
    """(file, line, template) of every `expected` argument of r.fail / _add / Problem in the engine's source."""
    out = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("fail", "_add", "Problem"):
                for t in _templates(node.args[1]) or []:
                    out.append((str(path.relative_to(ROOT)), node.lineno, t))
    return out


def _knows(template: str) -> bool:
    """Some filling of the holes (numbers or key names) gives a phrase a pattern knows."""
    if template in ("\0", "\0" + MISSING_SUFFIX):
        return True   # the Reader's _absent: a getter's own phrase + the suffix; every getter's phrase is checked
    holes = template.count("\0")
    for fill in itertools.product(HOLE_GUESSES, repeat=holes):
        text = template.replace("\1", "10,000,000")
        for f in fill:
            text = text.replace("\0", f, 1)
        text = text[:-len(MISSING_SUFFIX)] if text.endswith(MISSING_SUFFIX) else text
        if phrase_zh(text) is not None:
            return True
    return False


def test_the_source_scan_finds_the_engine_phrases():
    found = {t for _, _, t in source_phrases()}
    # the Reader's getters, the unknown model_type, a family's consistency check, the byo box's own
    assert {"a JSON object", "true or false", "an integer >= \0", "an integer <= \1",
            "\0 (the key is missing)",
            "a divisor of \0 (\0)", "a config.json: the box is empty", "a JSON object (a config.json)"} <= found
    assert any(t.startswith("one of cohere, gpt2 (or an 'architectures'") for t in found)
    assert len(found) >= 30   # (the engine folds repeated phrases into shared helpers: fewer, not less covered)


@pytest.mark.parametrize("where, lineno, template", source_phrases(), ids=lambda x: str(x)[:60])
def test_every_phrase_in_the_engine_has_a_chinese_pattern(where, lineno, template):
    assert _knows(template), f"{where}:{lineno}: no pattern in experiments/errors_zh.PHRASES for {template!r}"


# -- 2. real bad configs -------------------------------------------------------------------------------------------
def _configs_per_family() -> dict[str, dict]:
    """One real config per model_type (test fixtures, then the course's data files)."""
    out = {}
    for path in sorted((ROOT / "tests" / "fixtures" / "models").glob("*/config.json")) + \
            sorted((ROOT / "data" / "models").glob("*/config.json")):
        config = json.loads(path.read_text(encoding="utf-8"))
        out.setdefault(config.get("model_type"), config)
    return out


def _spoils(value):
    """Bad stand-ins for a value of this kind (None: delete the key)."""
    if isinstance(value, bool):
        return [None, "yes", 1]
    if isinstance(value, int):
        return [None, -5, 0, 3, 7, value + 1, 999_999, 10**8, "abc", 1.5, True, [value]]
    if isinstance(value, str):
        return [None, 123, "zzz", ""]
    if isinstance(value, list):
        return [None, value[:-1], value + value[-1:], [-1], [10**6], "0", [], [True]]
    if isinstance(value, dict):
        return [None, [1], "x"]
    return [None]


DELETE = object()


class _Watched(dict):
    """A config object that records which of its keys the engine looks at (reading every key when it is iterated
    or copied), so that a key it never looks at is known not to change the outcome."""

    def __init__(self, data: dict, seen: set, prefix: tuple = ()):
        super().__init__({k: _Watched(v, seen, prefix + (k,)) if isinstance(v, dict) else v for k, v in data.items()})
        self._seen, self._prefix = seen, prefix

    def _saw(self, key):
        self._seen.add(self._prefix + (key,))

    def __getitem__(self, key):
        self._saw(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._saw(key)
        return super().get(key, default)

    def __contains__(self, key):
        self._saw(key)
        return super().__contains__(key)

    def _all(self):
        for key in super().keys():
            self._saw(key)

    def __iter__(self):
        self._all()
        return super().__iter__()

    def keys(self):
        self._all()
        return super().keys()

    def items(self):
        self._all()
        return super().items()

    def values(self):
        self._all()
        return super().values()

    def __deepcopy__(self, memo):
        self._all()
        return copy.deepcopy(dict(super().items()), memo)


def _looked_at(config: dict) -> set[tuple]:
    """The key paths the engine looks at when it reads this (valid) config."""
    seen: set[tuple] = set()
    build_ledger(_Watched(config, seen))
    return seen


def _sweep():
    """Every config that spoils one key (top level or one level down) of one config per family. A key the engine
    never looks at on the unspoilt config cannot change what it reads (the outcome is a function of the keys it
    looked at), so spoiling it would give the same valid ledger: those are not tried."""
    for config in _configs_per_family().values():
        seen = _looked_at(config)
        paths = [(k,) for k in config] + [(k, j) for k, v in config.items() if isinstance(v, dict) for j in v]
        for path in [p for p in paths if p in seen]:
            parent = config if len(path) == 1 else config[path[0]]
            for bad in _spoils(parent[path[-1]]):
                spoilt = dict(config)             # (the engine never changes a config: copy only what is spoilt)
                target = spoilt
                if len(path) == 2:
                    target = spoilt[path[0]] = dict(config[path[0]])
                if bad is None:
                    del target[path[-1]]
                else:
                    target[path[-1]] = bad
                yield spoilt
        for extra in ({"hybrid_override_pattern": ""}, {"hybrid_override_pattern": "M-X"},
                      {"model_type": "bert"}, {"model_type": None}):
            yield {**config, **extra}


def _corpus():
    for path in sorted((ROOT / "tests" / "bad_input" / "configs").glob("*.json")):
        yield path.read_text(encoding="utf-8")


def _test_module_cases():
    """The bad configs the engine and family tests use (their module-level lists), as configs or texts."""
    import test_engine
    yield from (text for _, text, _ in test_engine.BAD)
    import test_engine_moe
    yield from (test_engine_moe.variant(model_id, **changes) for _, model_id, changes, *_ in test_engine_moe.BAD)
    import test_families_views_windows as g
    for model_id, spoil, _ in g.BAD:
        c = g.fixture(model_id)
        spoil(c)
        yield c
    import test_families_views_moe as m
    yield from (m.without(m.fixture(model_id), key) for model_id, key in m.MISSING)


def _error_of(item) -> ConfigError | None:
    from experiments.toolkit.config_text import parse_config_text
    try:
        config = parse_config_text(item) if isinstance(item, str) else item
        build_ledger(config)
    except ConfigError as e:
        return e
    except Exception:  # noqa: BLE001 - not this test's subject (byo_error shows those in Chinese too)
        return None
    return None


LITERALS = ["", "   ", '{"model_type": "llama",', "{a: 1}", "[1, 2]", '"text"', "1 2", "x" * 1_000_001]


def _errors_of(items) -> list[ConfigError]:
    return [e for e in map(_error_of, items) if e is not None]


@pytest.fixture(scope="module")
def hand_made():
    """The ConfigErrors of the bad configs written by hand: the corpus, the other tests' bad cases, a few texts."""
    return _errors_of(itertools.chain(_corpus(), _test_module_cases(), LITERALS))


@pytest.fixture(scope="module")
def errors(hand_made):
    """hand_made and the sweep's (~10,000 spoilt configs, a ledger each: `slow`, tests/conftest.py)."""
    return hand_made + _errors_of(_sweep())


def _chinese_lines(errors) -> set[str]:
    """Checks each problem's line of each error (Chinese, from a pattern, naming its key); the expected phrases."""
    seen = set()
    for e in errors:
        english = e.lines()
        chinese = e.lines_zh()
        assert len(chinese) == len(english) == len(e.problems)
        for p, line in zip(e.problems, chinese):
            assert problem_zh(p.key, p.expected, p.got, p.has_got, fallback_ok=False) == line
            check_line(line)
            if p.key:
                assert f"'{p.key}'" in line       # the key is named as the learner wrote it
            seen.add(p.expected)
    return seen


def test_every_hand_made_bad_config_gets_chinese_lines(hand_made):
    assert len(hand_made) > 50
    seen = _chinese_lines(hand_made)
    for needle in ("valid JSON", "a JSON object", "(the key is missing)"):
        assert any(needle in s for s in seen), needle


def test_every_learner_line_is_chinese_and_never_the_fallback(errors):
    assert len(errors) > 1000
    seen = _chinese_lines(errors)
    # the sweep reaches the Reader's phrases and the families' consistency checks alike
    for needle in ("an integer >= 1", "an integer <= 10,000,000", "true or false", "a divisor of",
                   "a list of integers", "one of", "entries (num_hidden_layers)", "valid JSON", "a JSON object",
                   "a multiple of", "(the key is missing)", "an integer <= num_"):
        assert any(needle in s for s in seen), needle


def test_every_pattern_is_reached_by_a_real_config_or_listed_here(errors):
    reached = set()
    for e in errors:
        for p in e.problems:
            text = p.expected[:-len(MISSING_SUFFIX)] if p.expected.endswith(MISSING_SUFFIX) else p.expected
            reached.add(next(i for i, (pattern, _) in enumerate(PHRASES) if re.fullmatch(pattern, text)))
    # phrases only the command line, a config the sweep does not build, or a getter no family calls that way
    # today can give (the Reader's getters are checked directly in test_every_reader_getter_in_chinese)
    elsewhere = {r"a list of integers", r"a list of strings", r"one of (?P<names>.*)",
                 r"a readable file \((?P<why>.*)\)", r"UTF-8 text \(not at byte offset (?P<n>-?\d[\d,]*)\)",
                 r"an integer >= 1 or a string of L \(local\) and G \(global\)",
                 r"0 \(per-layer input embeddings are not modelled by the ledger yet\)",
                 r"0 \(KV-shared layers are not modelled by the ledger yet\)",
                 r"an integer >= 1, or null for a plain q_proj",
                 r"a string of M \(Mamba-2\), \* \(attention\), - \(MLP\) and E \(MoE\)",
                 r"a non-empty string of M, \*, - and E",   # (Nemotron-H's MTP pattern: no fixture has one)
                 r"a string of (?P<n>-?\d[\d,]*) letters F / S \((?P<key>[A-Za-z_][\w.]*)\)",
                 r"a list of two integers >= 1",
                 r"a number > 0 and <= (?P<n>-?\d[\d,]*)", r"at most (?P<n>-?\d[\d,]*) layers",
                 r"a divisor of (?P<a>[A-Za-z_][\w.]*) × (?P<b>[A-Za-z_][\w.]*) \((?P<n>-?\d[\d,]*)\)",
                 r"a list of at least (?P<n>-?\d[\d,]*) entries 0 / 4 / 128 \((?P<key>[A-Za-z_][\w.]*)\)",
                 r"a file of at most (?P<n>-?\d[\d,]*) bytes \(this one has (?P<m>-?\d[\d,]*)\)"}
    missed = [p for i, (p, _) in enumerate(PHRASES) if i not in reached and p not in elsewhere]
    assert not missed, missed


def test_every_reader_getter_in_chinese():
    from experiments.ledger.config import Reader
    r = Reader({"i": "x", "b": 2, "s": 3, "c": "z", "il": [-1], "sl": [1], "cl": ["q"], "o": 1})
    r.int("i"), r.int("gone"), r.bool("b"), r.bool("gone_b")
    r.str("s"), r.str("gone_s"), r.str("c", choices=("a", "b"))
    r.int_list("il"), r.int_list("gone_il")
    r.str_list("sl"), r.str_list("gone_sl"), r.str_list("cl", choices=("a", "b"))
    r.sub("o"), r.sub("gone_o")
    lines = [p.zh() for p in r.problems]
    for line in lines:
        check_line(line)
    assert lines == [
        "键 'i'：应为正整数，实际是 'x'", "键 'gone'：缺少这个键，它应为正整数",
        "键 'b'：应为 true 或 false，实际是 2", "键 'gone_b'：缺少这个键，它应为 true 或 false",
        "键 's'：应为字符串，实际是 3", "键 'gone_s'：缺少这个键，它应为字符串",
        "键 'c'：应为以下之一：a、b，实际是 'z'",
        "键 'il'：应为整数列表（每一项都不小于 0），实际是一个有 1 项的列表",
        "键 'gone_il'：缺少这个键，它应为整数列表",
        "键 'sl'：应为字符串列表，实际是一个有 1 项的列表", "键 'gone_sl'：缺少这个键，它应为字符串列表",
        "键 'cl'：应为列表，每一项都是 a、b 之一，实际是一个有 1 项的列表",
        "键 'o'：应为 JSON 对象，实际是 1", "键 'gone_o'：缺少这个键，它应为 JSON 对象"]


# -- 3. the rendering, line by line ----------------------------------------------------------------------------------
@pytest.mark.parametrize("problem, line", [
    (Problem("hidden_size", "an integer >= 1", -5, True), "键 'hidden_size'：应为正整数，实际是 -5"),
    (Problem("hidden_size", "an integer >= 1 (the key is missing)"), "键 'hidden_size'：缺少这个键，它应为正整数"),
    (Problem("rope", "an integer >= 0", "x", True), "键 'rope'：应为非负整数，实际是 'x'"),
    (Problem("n", "an integer >= 2", 1.5, True), "键 'n'：应为不小于 2 的整数，实际是 1.5"),
    (Problem("vocab_size", "an integer <= 10,000,000", 10**8, True),
     "键 'vocab_size'：应为不超过 10,000,000 的整数，实际是 100000000"),
    (Problem("tie", "true or false", "yes", True), "键 'tie'：应为 true 或 false，实际是 'yes'"),
    (Problem("", "a JSON object (a config.json)", [1, 2], True),
     "内容应为 JSON 对象（即一份 config.json 的内容），实际是一个有 2 项的列表"),
    (Problem("text_config", "a JSON object", "x", True), "键 'text_config'：应为 JSON 对象，实际是 'x'"),
    (Problem("", "valid JSON (line 3, column 5: Expecting value)"),
     "内容应为合法的 JSON（第 3 行第 5 列：这里应有一个值）"),
    (Problem("", "valid JSON (line 1, column 9: Expecting ',' delimiter)"),
     "内容应为合法的 JSON（第 1 行第 9 列：两项之间缺少逗号 ,）"),
    (Problem("num_key_value_heads", "a divisor of num_attention_heads (32)", 5, True),
     "键 'num_key_value_heads'：应为能整除 num_attention_heads（32）的数，实际是 5"),
    (Problem("top_k", "an integer <= num_experts (8)", 9, True),
     "键 'top_k'：应为不超过 num_experts（8）的整数，实际是 9"),
    (Problem("layer_types", "a list of 48 entries (num_hidden_layers)", "47 entries", True),
     "键 'layer_types'：应为 48 项的列表（每层一项，层数见 num_hidden_layers），实际是 47 项"),
    (Problem("linear_num_value_heads", "a multiple of linear_num_key_heads (16)", 20, True),
     "键 'linear_num_value_heads'：应为 linear_num_key_heads（16）的整数倍，实际是 20"),
    (Problem("layer_types", "a list of full_attention / sliding_attention", [1], True),
     "键 'layer_types'：应为列表，每一项都是 full_attention、sliding_attention 之一，实际是一个有 1 项的列表"),
    (Problem("act", "one of gelu, relu", None, True), "键 'act'：应为以下之一：gelu、relu，实际是 null"),
    (Problem("", "a readable file (No such file or directory)"), "内容应为可以读取的文件（文件不存在）"),
    (Problem("pattern", "at least one layer", "an empty pattern", True), "键 'pattern'：应为至少一层，实际是空字符串"),
])
def test_a_problem_in_chinese(problem, line):
    assert problem.zh() == line
    check_line(line)


def test_an_unknown_phrase_falls_back_to_a_chinese_frame_that_keeps_key_and_value():
    assert problem_zh("x", "something new the engine says", 5, True) == "键 'x' 的值不符合这个模型家族的要求（得到 5）"
    assert problem_zh("x", "something new (the key is missing)") == "键 'x'：缺少这个键"
    with pytest.raises(LookupError):
        problem_zh("x", "something new", fallback_ok=False)


def test_english_lines_for_maintainers_are_unchanged():
    e = ConfigError([Problem("hidden_size", "an integer >= 1", -5, True)], "data/models/x/config.json")
    assert e.lines() == ["data/models/x/config.json: key 'hidden_size': expected an integer >= 1, got -5"]
    assert e.lines_zh() == ["键 'hidden_size'：应为正整数，实际是 -5"]          # no file name for a learner


def test_learner_message_never_names_an_exception_class():
    assert learner_message(ValueError("批大小：需要一个整数")) == "批大小：需要一个整数"
    assert learner_message(ZeroDivisionError("division by zero")) == GENERIC
    assert learner_message(KeyError("x")) == GENERIC
    assert learner_message(ConfigError([Problem("a", "true or false", 1, True)])) \
        == "键 'a'：应为 true 或 false，实际是 1"
    check_line(GENERIC)


def test_unsupported_model_type_lists_every_family():
    e = _error_of('{"model_type": "bert"}')
    (line,) = e.lines_zh()
    check_line(line)
    assert all(f.model_type in line for f in REGISTRY)


# -- 4. where learners see them ------------------------------------------------------------------------------------
def test_byo_error_is_chinese():
    from experiments.lessons.c4_transformer_block.widgets import byo_error
    r = byo_error(ConfigError([Problem("hidden_size", "an integer >= 1", -5, True),
                               Problem("vocab_size", "an integer >= 1 (the key is missing)")]))
    assert r == {"ok": False, "title": "这个 config 有 2 处问题：",
                 "problems": ["键 'hidden_size'：应为正整数，实际是 -5", "键 'vocab_size'：缺少这个键，它应为正整数"]}
    assert byo_error(RuntimeError("x")) == {"ok": False, "title": "无法计算这个 config：", "problems": [GENERIC]}
    assert byo_error(ValueError("上下文长度 T 需要是正整数"))["problems"] == ["上下文长度 T 需要是正整数"]


def test_ffn_calculators_name_a_bad_pasted_config_in_chinese():
    from experiments.lessons.c4_ffn_deep_read import calc
    good = json.loads((ROOT / "data" / "models" / "llama-2-7b" / "config.json").read_text(encoding="utf-8"))
    assert calc.decode(json.dumps(good), "FP16", "3.35", 1, "989.4") == calc.decode(good, "FP16", "3.35", 1, "989.4")
    wrapped = json.dumps({"meta": {"id": "llama-2-7b"}, "config": good})     # a course data file, pasted
    assert calc.batch_series(wrapped, "FP16", "3.35", "989.4") == calc.batch_series(good, "FP16", "3.35", "989.4")
    for bad, needle in ((dict(good, num_key_value_heads=5),
                         "键 'num_key_value_heads'：应为能整除 num_attention_heads（32）的数"),
                        ('{"model_type": "llama",', "合法的 JSON（第 1 行第 24 列"),
                        ({"model_type": "bert"}, "键 'model_type'：应为本课程支持的模型家族之一")):
        with pytest.raises(ValueError) as e:
            calc.decode(bad if isinstance(bad, str) else json.dumps(bad), "FP16", "3.35", 1, "989.4")
        assert str(e.value).startswith("这份 config 有问题：") and needle in str(e.value), str(e.value)
        check_line(str(e.value))
