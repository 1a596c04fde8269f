"""Config problems in Chinese, for the learner (nothing English and no exception class on a page).

The ledger engine (experiments/ledger/config.py's Reader and each family's ``r.fail``) describes what a key
should hold in English noun phrases ("a positive integer" is spelt "an integer >= 1", "a divisor of
num_attention_heads (32)", "a list of 48 entries (num_hidden_layers)"); the command line and the build print
those for maintainers. This module renders the same Problem for a learner: ``PHRASES`` maps each phrase pattern
(a regex over ``Problem.expected``, full match) to its Chinese, carrying the numbers and key names over, and
``problem_zh`` frames it: "键 'hidden_size'：应为正整数，实际是 -5". A phrase no pattern knows falls back to a
Chinese frame that keeps the key and the value (``FALLBACK``); tests/test_errors_zh.py checks that every phrase
the engine can produce has a pattern, so the fallback is a safety net, not a path.

``learner_message`` turns any exception into the one Chinese line a learner sees (a ConfigError's problems, a
course message that is already Chinese, else a generic line: never an exception class name). No I/O, no imports
outside the standard library: it runs under Pyodide as is.
"""
from __future__ import annotations

import re
from collections.abc import Callable

MISSING_SUFFIX = " (the key is missing)"
FALLBACK = "的值不符合这个模型家族的要求"          # 键 'x' 的值不符合这个模型家族的要求（得到 …）
GENERIC = "引擎没能从这个 config 算出参数账本，请检查各个键的取值"

KEY = r"[A-Za-z_][\w.]*"
NUM = r"-?\d[\d,]*"


def _names(text: str) -> str:
    """'a, b, c' or 'a / b / c' -> 'a、b、c' (names stay as they are)."""
    return "、".join(x.strip() for x in re.split(r",| / ", text) if x.strip())


def _at_least(n: str) -> str:
    return {"1": "正整数", "0": "非负整数"}.get(n, f"不小于 {n} 的整数")


# Python's json module (3.11-3.13: the C scanner and the pure-Python decoder give the same texts).
JSON_MESSAGES = [
    (r"Expecting value", "这里应有一个值"),
    (r"Expecting property name enclosed in double quotes", "这里应有一个用双引号括起来的键名"),
    (r"Expecting ':' delimiter", "键名后面缺少冒号 :"),
    (r"Expecting ',' delimiter", "两项之间缺少逗号 ,"),
    (r"Extra data", "JSON 结束后还有多余的内容"),
    (r"Unterminated string starting at", "字符串没有结束的引号"),
    (r"Invalid control character at", "字符串里有不允许的控制字符（例如直接换行）"),
    (r"Invalid \\escape.*", "字符串里有无效的反斜杠转义"),
    (r"Invalid \\uXXXX escape", "字符串里有无效的 \\u 转义"),
    (r"Illegal trailing comma before end of (object|array)", "最后一项后面多了一个逗号"),
]

READ_ERRORS = {"No such file or directory": "文件不存在", "Permission denied": "没有读取权限",
               "Is a directory": "这是一个文件夹"}


def _json_zh(m) -> str:
    msg = m["msg"]
    detail = next((zh for pattern, zh in JSON_MESSAGES if re.fullmatch(pattern, msg)), "格式不对")
    return f"合法的 JSON（第 {m['line']} 行第 {m['col']} 列：{detail}）"


# (pattern over Problem.expected without " (the key is missing)", Chinese noun phrase after 应为). The first full
# match wins, so narrower patterns come before wider ones.
PHRASES: list[tuple[str, str | Callable[[re.Match[str]], str]]] = [
    # -- experiments/ledger/config.py: Reader's typed getters -------------------------------------------------
    (r"a JSON object", "JSON 对象"),
    (r"a JSON object \(a config\.json\)", "JSON 对象（即一份 config.json 的内容）"),
    (rf"an integer >= (?P<n>{NUM})", lambda m: _at_least(m["n"])),
    (rf"an integer <= (?P<n>{NUM})", lambda m: f"不超过 {m['n']} 的整数"),
    (r"true or false", "true 或 false"),
    (r"a string", "字符串"),
    (r"a list of integers", "整数列表"),
    (rf"a list of integers >= (?P<n>{NUM})", lambda m: f"整数列表（每一项都不小于 {m['n']}）"),
    (r"a list of strings", "字符串列表"),
    (rf"a list of (?P<names>{KEY}(?: / {KEY})*)", lambda m: f"列表，每一项都是 {_names(m['names'])} 之一"),
    (r"one of (?P<names>.*) \(or an 'architectures' entry naming a class of one of them\)",
     lambda m: f"本课程支持的模型家族之一：{_names(m['names'])}"
               "（或者在 'architectures' 里写上其中某个家族的模型类名）"),
    (r"one of (?P<names>.*)", lambda m: f"以下之一：{_names(m['names'])}"),
    # -- experiments/ledger/__init__.py, cli.py and the bring-your-own-config box: the document itself -----------
    (r"valid JSON \(line (?P<line>\d+), column (?P<col>\d+): (?P<msg>.*)\)", _json_zh),
    (r"a config\.json: the box is empty", "一份 config.json（输入框是空的）"),
    # -- experiments/ledger/jsontext.py: the text, bounded before it is parsed ----------------------------------
    (rf"a file of at most (?P<n>{NUM}) bytes \(this one has (?P<m>{NUM})\)",
     lambda m: f"不超过 {m['n']} 字节的文本（这份有 {m['m']} 字节，太大了；公开发布的 config.json 只有几十 kB）"),
    (rf"JSON nested at most (?P<n>{NUM}) levels deep \(this one nests (?P<d>{NUM}) levels\)",
     lambda m: f"嵌套不超过 {m['n']} 层的 JSON（这份嵌套太深，有 {m['d']} 层）"),
    (rf"UTF-8 text \(not at byte offset (?P<n>{NUM})\)",
     lambda m: f"UTF-8 编码的文本（从第 {m['n']} 个字节之后开始不是 UTF-8）"),
    (r"a readable file \((?P<why>.*)\)", lambda m: f"可以读取的文件（{READ_ERRORS.get(m['why'], '读取失败')}）"),
    # -- families' r.fail(...): consistency between keys ---------------------------------------------------------
    (rf"a divisor of the hidden size \((?P<n>{NUM})\)", lambda m: f"能整除隐藏宽度（{m['n']}）的数"),
    (rf"a divisor of the Mamba width (?P<key>{KEY}) \((?P<n>{NUM})\)",
     lambda m: f"能整除 Mamba 宽度 {m['key']}（{m['n']}）的数"),
    (rf"a divisor of (?P<key>{KEY}) \((?P<n>{NUM})\)", lambda m: f"能整除 {m['key']}（{m['n']}）的数"),
    (rf"a multiple of (?P<key>{KEY}) \((?P<n>{NUM})\)", lambda m: f"{m['key']}（{m['n']}）的整数倍"),
    (rf"an integer <= (?P<key>{KEY}) \((?P<n>{NUM})\)", lambda m: f"不超过 {m['key']}（{m['n']}）的整数"),
    (rf"an integer < (?P<key>{KEY}) \((?P<n>{NUM})\)", lambda m: f"小于 {m['key']}（{m['n']}）的整数"),
    (rf"layer indices < (?P<key>{KEY}) \((?P<n>{NUM})\)", lambda m: f"小于 {m['key']}（{m['n']}）的层编号"),
    (rf"a list of (?P<n>{NUM}) entries \((?P<key>{KEY})\)",
     lambda m: f"{m['n']} 项的列表（每层一项，层数见 {m['key']}）"),
    (rf"a string of (?P<n>{NUM}) letters F / S \((?P<key>{KEY})\)",
     lambda m: f"{m['n']} 个字母的字符串，每个是 F 或 S（每层一个，层数见 {m['key']}）"),
    (r"a list of two integers >= 1", "两个正整数组成的列表"),
    (rf"at most (?P<n>{NUM}) layers", lambda m: f"最多 {m['n']} 层"),
    (rf"a divisor of (?P<a>{KEY}) × (?P<b>{KEY}) \((?P<n>{NUM})\)",
     lambda m: f"能整除 {m['a']} × {m['b']}（{m['n']}）的数"),
    (rf"a list of at least (?P<n>{NUM}) entries 0 / 4 / 128 \((?P<key>{KEY})\)",
     lambda m: f"至少 {m['n']} 项的列表，每项是 0、4 或 128（每层一项，层数见 {m['key']}）"),
    (rf"a number > 0 and <= (?P<n>{NUM})", lambda m: f"大于 0、不超过 {m['n']} 的数"),
    (rf"a list of (?P<n>{NUM}) flags 0 / 1 \((?P<key>{KEY})\)",
     lambda m: f"{m['n']} 项、每项为 0 或 1 的列表（每层一项，层数见 {m['key']}）"),
    (rf"one entry per layer: (?P<n>{NUM}) \((?P<key>{KEY})\)",
     lambda m: f"每层一项，共 {m['n']} 项（层数见 {m['key']}）"),
    (rf"an integer, or a list of (?P<n>{NUM}) equal integers \((?P<key>{KEY})\)",
     lambda m: f"一个整数，或 {m['n']} 个相等整数的列表（每层一项，层数见 {m['key']}）"),
    (rf"(?P<a>{KEY}) ÷ (?P<b>{KEY}) = (?P<n>{NUM})", lambda m: f"{m['a']} ÷ {m['b']} = {m['n']}"),
    (r"an integer >= 1, or null for a plain q_proj", "正整数，或 null（表示不做低秩分解、只有一个 q_proj）"),
    (r"an integer >= 1 or a string of L \(local\) and G \(global\)",
     "正整数，或由 L（局部注意力层）和 G（全局注意力层）组成的字符串"),
    (r"a string of M \(Mamba-2\), \* \(attention\), - \(MLP\) and E \(MoE\)",
     "由 M（Mamba-2）、*（注意力）、-（MLP）和 E（MoE）组成的字符串"),
    (r"a non-empty string of M, \*, - and E", "由 M（Mamba-2）、*（注意力）、-（MLP）和 E（MoE）组成的非空字符串"),
    (rf"expand × hidden_size = num_heads × head_dim \((?P<n>{NUM})\)",
     lambda m: f"使 expand × hidden_size 等于 num_heads × head_dim（{m['n']}）的值"),
    (r"at least one layer", "至少一层"),
    (r"0 \(per-layer input embeddings are not modelled by the ledger yet\)",
     "0（课程的参数账本还不支持逐层输入嵌入）"),
    (r"0 \(KV-shared layers are not modelled by the ledger yet\)", "0（课程的参数账本还不支持共享 KV 的层）"),
]
_COMPILED = [(re.compile(p), zh) for p, zh in PHRASES]

# English texts the engine passes as `got` (not the learner's own values): rendered, not quoted.
GOT_TEXTS = [
    (re.compile(rf"(?P<n>{NUM}) entries"), lambda m: f"{m['n']} 项"),
    (re.compile(r"an empty pattern"), lambda m: "空字符串"),
]


def phrase_zh(expected: str) -> str | None:
    """The Chinese of an `expected` phrase (without the missing-key suffix), or None if no pattern knows it."""
    for pattern, zh in _COMPILED:
        m = pattern.fullmatch(expected)
        if m:
            return zh(m) if callable(zh) else zh
    return None


def got_zh(value: object) -> str:
    """A found value as a learner reads it: JSON spelling (true, null), strings quoted and cut at 40 characters,
    objects and lists by kind."""
    if isinstance(value, str):
        for pattern, zh in GOT_TEXTS:
            m = pattern.fullmatch(value)
            if m:
                return zh(m)
        return "'" + (value if len(value) <= 40 else value[:37] + "...") + "'"
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "一个 JSON 对象"
    if isinstance(value, list):
        return f"一个有 {len(value)} 项的列表" if value else "一个空列表"
    return repr(value)


def _cat(a: str, b: str) -> str:
    """Chinese next to Latin letters, digits or quotes gets a space between them (应为 JSON 对象, 实际是 -5)."""
    def latin(ch):
        return ch.isascii() and (ch.isalnum() or ch in "'\"-_")
    return a + " " + b if a and b and (latin(a[-1]) or latin(b[0])) else a + b


def problem_zh(key: str, expected: str, got: object = None, has_got: bool = False,
               fallback_ok: bool = True) -> str:
    """One problem as a Chinese line: 键 'hidden_size'：应为正整数，实际是 -5."""
    missing = expected.endswith(MISSING_SUFFIX)
    phrase = phrase_zh(expected[:-len(MISSING_SUFFIX)] if missing else expected)
    where = f"键 '{key}'" if key else "内容"
    if phrase is None:
        if not fallback_ok:
            raise LookupError(expected)
        text = _cat(where, FALLBACK) if key else "这份 config 不符合引擎的要求"
        if missing:
            return f"{where}：缺少这个键"
        return text + (_cat("（得到", got_zh(got)) + "）" if has_got else "")
    if missing:
        return _cat(f"{where}：缺少这个键，它应为", phrase)
    text = _cat(f"{where}：应为" if key else "内容应为", phrase)
    return _cat(text + "，实际是", got_zh(got)) if has_got else text


def has_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def learner_message(error: BaseException) -> str:
    """Any error as the one Chinese line a learner sees: a ConfigError's problems joined with ；, a message that
    is already Chinese as is, else a generic line. Never the exception's class name."""
    lines_zh = getattr(error, "lines_zh", None)
    if callable(lines_zh):
        return "；".join(lines_zh())
    text = str(error).strip()
    return text if has_chinese(text) else GENERIC
