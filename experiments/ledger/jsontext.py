"""A config.json's text -> the parsed document, bounded before anything is parsed.

Python's json module parses nested arrays and objects by recursion: ``'[' * 10000`` raises RecursionError under
CPython and, under Pyodide, can overflow the WebAssembly stack and kill the runtime for every widget on the page.
The work is also proportional to the text, so a 200 MB "config" ties up a build or a browser tab. So the text is
checked first, in linear time with no recursion (regular expressions and itertools, no Python-level loop per
character):

- its size: at most MAX_CONFIG_BYTES bytes of UTF-8. Most published config.json files are a few kB (tens with
  label maps or per-layer lists); the largest the course holds is NVIDIA's MiniMax-M3-NVFP4, 3.09 MB, whose
  quantisation section lists every excluded module; 4 MB is beyond it;
- its nesting: at most MAX_JSON_DEPTH levels of arrays and objects (a real config nests 3-5 levels:
  text_config.rope_scaling.mrope_section).

Every problem is a ConfigError with an English phrase for maintainers and a Chinese pattern in
experiments/errors_zh.py for learners. No I/O: the build and the command line read the bytes, the browser's
Python gets the pasted text.
"""
from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from ..errors import ConfigError, Problem

MAX_CONFIG_BYTES = 4_000_000
MAX_JSON_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)   # a JSON string (brackets inside it do not nest)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def size_problem(n_bytes: int, limit: int = MAX_CONFIG_BYTES) -> Problem | None:
    if n_bytes <= limit:
        return None
    return Problem("", f"a file of at most {limit:,} bytes (this one has {n_bytes:,})")


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of a JSON text nest (0 for a bare value), without parsing it: strings
    are cut out, then the running count of opening minus closing brackets is summed up by itertools."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def depth_problem(text: str, limit: int = MAX_JSON_DEPTH) -> Problem | None:
    depth = json_depth(text)
    if depth <= limit:
        return None
    return Problem("", f"JSON nested at most {limit} levels deep (this one nests {depth:,} levels)")


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def decode(data: bytes, file: str | None = None) -> str:
    """UTF-8 bytes -> text (a leading byte-order mark dropped); a ConfigError naming where the text stops being
    UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError([Problem("", f"UTF-8 text (not at byte offset {e.start:,})")], file) from None


def loads(text: str, file: str | None = None, *, limit_bytes: int = MAX_CONFIG_BYTES) -> Any:
    """json.loads(text) once the text is known to be small and shallow enough; every refusal a ConfigError (bad
    JSON with its line and column)."""
    too_big = size_problem(len(text), limit_bytes) or size_problem(utf8_bytes(text), limit_bytes)
    if too_big:   # (a character is at least one byte: a text too long is too big without encoding it)
        raise ConfigError([too_big], file)
    too_deep = depth_problem(text)
    if too_deep:
        raise ConfigError([too_deep], file)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError([Problem("", f"valid JSON (line {e.lineno}, column {e.colno}: {e.msg})")], file) from None
    except RecursionError:   # (the depth check above makes this unreachable; never a traceback even so)
        raise ConfigError([Problem("", f"JSON nested at most {MAX_JSON_DEPTH} levels deep "
                                       f"(this one nests {json_depth(text):,} levels)")], file) from None
