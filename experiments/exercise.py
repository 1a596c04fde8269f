"""Exercises graded in the page (issue #48): how one is declared, and how a learner's function is graded.

A lesson declares an exercise in its LESSON beside its widgets, with ``exercise(...)``, which returns a Widget of
the shared kind ``exercise`` (template site/templates/widgets/exercise.html, script exercise.js), so a lesson
places it like any widget, ```` ```{widget} NAME ````, with the learner-facing text in the block's YAML (``prompt``,
``hints``, a list shown one at a time). The declaration names:
- ``function`` and ``params``: the function the learner writes and its parameters (the starting cell is its
  ``def`` line, the grader refuses another name or other parameters);
- ``reference``: the course's own function in experiments/ ("module:function", never a copy), called with the
  same arguments;
- ``cases``: "module:function", cases(models, rng) -> [Case]: the inputs, from real configs (models is the page's
  data/models.json: alias -> {id, name, config}), at least one ``shown`` in the page and at least one the learner
  has not seen, drawn with rng (random.Random, seeded by the page) from the course's models;
- ``compare``: how an answer is checked, and so what the feedback says: "number" (the first case that differs,
  expected and learner's value), "ledger" (a dict name -> count: the first tensor that differs), "arrays" (a
  tuple of arrays: shape and the largest difference), each with a relative tolerance ``rtol``; "sequences" (a
  list of lists of ints, token ids: the first list that differs, exact); "distribution"
  (a sampler, called ``draws`` times per case with a seeded numpy Generator: a token of zero probability is wrong,
  and so are counts a stated test, a chi-square, finds unlikely at p-value < ``rtol``);
- ``solution``: the code shown only when asked (tests/test_exercises.py checks that it passes).

grade(spec, source, models, seed) is the one grader (plain Python; numpy only when an answer holds arrays): the
tests call it in CPython, the page in the code cells' worker (experiments.api.grade_exercise), which is stopped
and restarted when it does not answer in time (runtime-client.js). It returns {"status": "solved" | "wrong" |
"bad", "key": a message key of data/messages_zh.json (exercise.<key>), "values": its placeholders, "passed",
"total"}; the page words it through courseMessages.msg, so the grader holds no learner text.
"""
from __future__ import annotations

import ast
import inspect
import io
import math
import random
import sys
from collections.abc import Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .widget import Widget, resolve

COMPARES = ("number", "ledger", "arrays", "sequences", "distribution")
MAX_ITEMS = 1_000_000        # an answer holding more numbers than this is refused (a huge output)
MAX_MEMORY = 256 * 2**20     # bytes a learner's code may add to the process's memory while graded ("memory")
CHECK_EVERY = 16             # checks in the learner's code between two readings of the memory's high-water mark
MAX_PRINT = 2_000            # what a learner's function prints while graded is kept up to this many characters
SHOWN = 8                    # a value is written with this many significant digits
CELL = "<cell>"               # the file name the learner's code is compiled under
CHECK_NAME, ITER_NAME = "__memory_check__", "__memory_iter__"   # what the instrumented code calls (_instrument)
SMALL_ARRAY = 16             # an array of at most this many numbers is shown in full in the page's examples


@dataclass(frozen=True)
class Case:
    label: str                 # what the feedback calls it: a model's name, "随机种子 3" ... (data, not prose)
    args: tuple                # the arguments, positional, in the declared order
    shown: bool = False        # the page shows this case (its inputs and expected value)
    args_text: str = ""        # how the page shows the arguments, when not by their values (a config: its model)
    ref_args: tuple | None = None   # what the reference is given instead, if not args (the config the learner's
                                    # numbers were read from: the course's function reads it itself)


def exercise(name: str, *, function: str, params: Sequence[str], reference: str, cases: str, solution: str,
             compare: str = "number", rtol: float = 1e-9, title: str = "练习", draws: int = 0,
             test: str = "") -> Widget:
    """The Widget of one exercise (see the module docstring); ``prompt`` and ``hints`` come from the lesson's
    block. References are absolute "module:function" strings. A "distribution" exercise (a sampler) also names
    ``draws`` (calls per case) and ``test`` ("module:function", test(counts, p, bins) -> {statistic, df,
    p_value}), and ``rtol`` is then the p-value below which the learner's draws are refused."""
    if compare not in COMPARES:
        raise ValueError(f"exercise {name}: compare must be one of {', '.join(COMPARES)}, got {compare!r}")
    if (compare == "distribution") != bool(draws and test):
        raise ValueError(f"exercise {name}: draws and test go with compare='distribution', and only with it")
    spec = {"name": name, "function": function, "params": list(params), "reference": reference, "cases": cases,
            "compare": compare, "rtol": rtol, "draws": draws, "test": test}
    return Widget(name, "exercise.html", "experiments.exercise:exercise_view",
                  {"title": title, "prompt": "", "hints": [], "spec": spec, "solution": solution},
                  script="exercise.js", needs=("widgets.js", "code-cell.js"))   # the cells' editor keys first


def page_models(models: Mapping[str, Any]) -> dict[str, dict]:
    """The build's models (alias -> ModelNumbers) in the form the page's data/models.json has."""
    return {alias: {"id": m.id, "name": m.name, "config": m.doc["config"]} for alias, m in sorted(models.items())}


def starter(spec: Mapping[str, Any]) -> str:
    return f"def {spec['function']}({', '.join(spec['params'])}):\n    "


def exercise_view(o: dict, data) -> dict:
    """Template values: the prompt, hints, starting cell, the shown cases with the reference's answers (the build
    computes them with the same grader's reference, so build == browser is a test), and the spec for the page."""
    spec = o["spec"]
    if not isinstance(o["prompt"], str) or not o["prompt"].strip():
        raise data.option_error("prompt", "the exercise's task in Chinese (a YAML block: `prompt: |`)",
                                o["prompt"] or None)
    hints = o["hints"]
    if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
        raise data.option_error("hints", "a list of hints, each a text", hints)
    shown = [c for c in make_cases(spec, page_models(data.models), 0) if c.shown]
    ref = resolve(spec["reference"], "")
    examples = [{"label": c.label, "args": c.args_text or ", ".join(show_value(a) for a in c.args),
                 "expected": show_value(expected(ref, c))} for c in shown]
    return {"title": o["title"], "prompt": o["prompt"].strip(), "hints": hints, "spec": spec,
            "starter": starter(spec), "solution": o["solution"].strip("\n"), "examples": examples}


def expected(ref, case: Case) -> Any:
    """The course's answer for a case. The reference is the course's own code, which never changes its inputs, so
    it gets the case's own values: a built-in config stays the object the ledger cache knows (a copy would be
    serialised again for its cache key); the learner's function gets copies (grade)."""
    return ref(*(case.args if case.ref_args is None else case.ref_args))


def make_cases(spec: Mapping[str, Any], models: Mapping[str, dict], seed: int) -> list[Case]:
    cases = resolve(spec["cases"], "")(models, random.Random(seed))
    if not any(c.shown for c in cases) or all(c.shown for c in cases):
        raise ValueError(f"exercise {spec['name']}: its cases need one shown in the page and one not shown")
    return cases


# -- showing values in feedback ------------------------------------------------------------------------------------

def show_value(x: Any) -> str:
    if isinstance(x, Fraction):   # the course's exact counts: a whole number as one, the rest as a float
        x = x.numerator if x.denominator == 1 else float(x)
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:.{SHOWN}g}"
    if hasattr(x, "shape") and hasattr(x, "dtype"):   # a small array in full (rounded), a larger one by its shape
        import numpy as np
        return (np.array2string(x, precision=4, separator=", ", max_line_width=60) if x.size <= SMALL_ARRAY
                else f"array{tuple(int(n) for n in x.shape)}")
    if isinstance(x, Mapping):
        head = ", ".join(f"{k}: {show_value(v)}" for k, v in list(x.items())[:4])
        return "{" + head + (", …}" if len(x) > 4 else "}")
    if isinstance(x, list):
        return "[" + ", ".join(show_value(v) for v in x) + "]"
    if isinstance(x, tuple):
        return "(" + ", ".join(show_value(v) for v in x) + ")"
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "…"


def type_name(x: Any) -> str:
    """A type as Python writes it: int, float, str, None, tuple, list, dict, ndarray."""
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return "ndarray"
    return "None" if x is None else type(x).__name__


def _count(x: Any, limit: int = MAX_ITEMS) -> int:
    """How many numbers an answer holds (stops counting past the limit)."""
    if hasattr(x, "size") and hasattr(x, "dtype"):
        return int(x.size)
    if isinstance(x, Mapping):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        n = 0
        for item in x:
            n += _count(item, limit)
            if n > limit:
                break
        return n
    if isinstance(x, str):
        return len(x) // 16
    return 1


def _close(a: float, b: float, rtol: float) -> bool:
    return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rtol * max(abs(a), abs(b)))


# -- comparing one case ---------------------------------------------------------------------------------------------

def _bad(key: str, **values) -> dict:
    return {"status": "bad", "key": key, "values": values}


def _wrong(key: str, **values) -> dict:
    return {"status": "wrong", "key": key, "values": values}


def _compare_number(case: Case, want: Any, got: Any, rtol: float) -> dict | None:
    if isinstance(got, bool) or not isinstance(got, (int, float)) and not hasattr(got, "__float__"):
        return _bad("type", case=case.label, expected="int | float", got=type_name(got))
    if not _close(float(want), float(got), rtol):
        return _wrong("number", case=case.label, expected=show_value(want), got=show_value(got))
    return None


def _compare_ledger(case: Case, want: Mapping, got: Any, rtol: float) -> dict | None:
    if not isinstance(got, Mapping):
        return _bad("type", case=case.label, expected="dict", got=type_name(got))
    for key, value in want.items():
        if key not in got:
            return _wrong("ledger_missing", case=case.label, tensor=str(key), expected=show_value(value))
        mine = got[key]
        if isinstance(mine, bool) or not isinstance(mine, (int, float)):
            return _bad("type", case=f"{case.label} / {key}", expected="int | float", got=type_name(mine))
        if not _close(float(value), float(mine), rtol):
            return _wrong("ledger", case=case.label, tensor=str(key), expected=show_value(value),
                          got=show_value(mine))
    extra = [k for k in got if k not in want]
    if extra:
        return _wrong("ledger_extra", case=case.label, tensor=str(extra[0]))
    return None


def _compare_arrays(case: Case, want: Sequence, got: Any, rtol: float) -> dict | None:
    import numpy as np
    expected = "tuple[" + ", ".join(["ndarray"] * len(want)) + "]"
    if not isinstance(got, (tuple, list)) or len(got) != len(want):
        return _bad("type", case=case.label, expected=expected, got=type_name(got)
                    + (f" ({len(got)})" if isinstance(got, (tuple, list)) else ""))
    for i, (w, g) in enumerate(zip(want, got)):
        try:
            g = np.asarray(g, dtype=np.float64)
        except (TypeError, ValueError):
            return _bad("type", case=case.label, expected=expected, got=type_name(got[i]))
        w = np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            return _wrong("shape", case=case.label, item=i + 1, expected=str(w.shape), got=str(g.shape))
        diff = np.abs(g - w)
        scale = float(np.max(np.abs(w))) or 1.0
        worst = float(np.max(diff)) if diff.size else 0.0
        if not np.all(np.isfinite(g)) or worst > rtol * scale:
            at = tuple(int(j) for j in np.unravel_index(int(np.nanargmax(np.where(np.isfinite(diff), diff, np.inf))),
                                                        diff.shape)) if diff.size else ()
            return _wrong("arrays", case=case.label, item=i + 1, shape=str(w.shape), largest=show_value(worst),
                          at=str(at), expected=show_value(float(w[at])), got=show_value(float(g[at])),
                          tolerance=show_value(rtol * scale))
    return None


def _compare_sequences(case: Case, want: Sequence, got: Any, rtol: float) -> dict | None:
    """Lists of ints (token ids), exact: the number of lists, then the first list that differs."""
    expected = "list[list[int]]"
    if not isinstance(got, (list, tuple)):
        return _bad("type", case=case.label, expected=expected, got=type_name(got))
    for item in got:
        if not isinstance(item, (list, tuple)) or not all(isinstance(t, int) and not isinstance(t, bool)
                                                          for t in item):
            return _bad("type", case=case.label, expected=expected, got=f"list[{type_name(item)}]")
    if len(got) != len(want):
        return _wrong("sequences_count", case=case.label, expected=str(len(want)), got=str(len(got)))
    for i, (w, g) in enumerate(zip(want, got)):
        if list(g) != list(w):
            return _wrong("sequence", case=case.label, item=i + 1, expected=show_value(list(w)),
                          got=show_value(list(g)))
    return None


COMPARE = {"number": _compare_number, "ledger": _compare_ledger, "arrays": _compare_arrays,
           "sequences": _compare_sequences}


def _sample(fn, spec: Mapping[str, Any], case: Case, want, index: int, seed: int) -> dict | None:
    """A sampler: `draws` calls with one seeded numpy Generator as its last argument, each answer a token id; a
    token the reference gives no mass, or counts that the stated test (a chi-square) finds unlikely under the
    reference's distribution at p-value < rtol, is wrong."""
    import numpy as np
    p = np.asarray(want, dtype=np.float64)
    rng = np.random.default_rng([seed, index])
    counts = np.zeros(len(p), dtype=np.int64)
    for _ in range(spec["draws"]):
        token = fn(*_copies(case.args), rng)
        if isinstance(token, bool) or not isinstance(token, (int, np.integer)):
            return _bad("type", case=case.label, expected="int", got=type_name(token))
        if not 0 <= int(token) < len(p):
            return _bad("range", case=case.label, got=str(int(token)), size=str(len(p)))
        if p[int(token)] == 0:
            return _wrong("impossible", case=case.label, token=str(int(token)))
        counts[int(token)] += 1
    order = [i for i in np.argsort(-p, kind="stable") if p[i] * spec["draws"] >= 5]
    result = resolve(spec["test"], "")(counts, p, order)
    if result["p_value"] < spec["rtol"]:
        gap = counts - p * spec["draws"]
        worst = int(np.argmax(np.abs(gap)))
        return _wrong("distribution", case=case.label, draws=f"{spec['draws']:,}",
                      statistic=f"{result['statistic']:.1f}",
                      df=str(result["df"]), p_value=f"{result['p_value']:.2g}", tolerance=f"{spec['rtol']:g}",
                      token=str(worst), expected=f"{p[worst] * spec['draws']:.0f}", got=str(int(counts[worst])))
    return None


# -- grading ------------------------------------------------------------------------------------------------------

def _learner_function(spec: Mapping[str, Any], source: str) -> tuple[Any, dict | None]:
    """(the learner's function, None) or (None, the one problem with what was expected)."""
    wanted = f"def {spec['function']}({', '.join(spec['params'])})"
    if not isinstance(source, str) or not source.strip():
        return None, _bad("empty", expected=wanted)
    try:
        code = _instrument(source)
    except SyntaxError as e:
        return None, _bad("syntax", line=e.lineno or 0, detail=e.msg or "", expected=wanted)
    namespace: dict = {"__name__": "__exercise__", CHECK_NAME: _BOUND.check, ITER_NAME: _BOUND.iterate}
    out = io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(out), _memory_bound():
            exec(code, namespace)
    except MemoryError:
        return None, _bad("memory", limit=_megabytes(MAX_MEMORY))
    except Exception as e:   # the learner's module-level code raised: say which error, in their terms
        return None, _bad("raised_top", error=f"{type(e).__name__}: {e}"[:300])
    fn = namespace.get(spec["function"])
    if not callable(fn):
        return None, _bad("missing", name=spec["function"], expected=wanted)
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        params = []
    if params != list(spec["params"]):
        return None, _bad("signature", expected=wanted, got=f"def {spec['function']}({', '.join(params)})")
    return fn, None


def grade(spec: Mapping[str, Any], source: str, models: Mapping[str, dict], seed: int) -> dict:
    """Grade the learner's `source` on the exercise's cases (the shown ones and those drawn with `seed`)."""
    fn, problem = _learner_function(spec, source)
    cases = make_cases(spec, models, seed)
    total = len(cases)
    if problem:
        return {**problem, "passed": 0, "total": total}
    ref = resolve(spec["reference"], "")
    sampler = spec["compare"] == "distribution"
    for passed, case in enumerate(cases):
        want = expected(ref, case)
        args = () if sampler else _copies(case.args)
        out = io.StringIO()
        try:
            with redirect_stdout(out), redirect_stderr(out), _memory_bound():
                got = _sample(fn, spec, case, want, passed, seed) if sampler else fn(*args)
        except MemoryError:
            return {**_bad("memory", limit=_megabytes(MAX_MEMORY)), "passed": passed, "total": total}
        except RecursionError:
            return {**_bad("recursion", case=case.label), "passed": passed, "total": total}
        except Exception as e:
            return {**_bad("raised", case=case.label, error=f"{type(e).__name__}: {e}"[:300]),
                    "passed": passed, "total": total}
        if not sampler and _count(got) > MAX_ITEMS:
            return {**_bad("too_big", case=case.label, limit=f"{MAX_ITEMS:,}"), "passed": passed, "total": total}
        result = got if sampler else COMPARE[spec["compare"]](case, want, got, spec["rtol"])
        if result:
            return {**result, "passed": passed, "total": total,
                    "printed": out.getvalue()[:MAX_PRINT]}
    return {"status": "solved", "key": "solved", "values": {"total": total}, "passed": total, "total": total}


def _megabytes(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


class MemoryLimit(MemoryError):
    """The learner's code made the process take more than MAX_MEMORY bytes more memory (see _memory_bound)."""


def _high_water():
    """A function giving the bytes the interpreter's process has held at most so far: in the page's Pyodide the size
    of its WebAssembly memory (it grows when the allocator needs more and never shrinks), in CPython (the tests) the
    peak resident set (ru_maxrss, kilobytes on Linux). Both are high-water marks, so a bound on their growth is a
    bound on how much memory the learner's code made the process take."""
    if sys.platform == "emscripten":
        import pyodide_js  # the page's Pyodide: its Emscripten module's heap view has the memory's size
        module = pyodide_js._module
        return lambda: int(module.HEAP8.length)
    import resource
    scale = 1 if sys.platform == "darwin" else 1024
    return lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


class _Bound:
    """The memory check the learner's instrumented code calls (see _instrument): every CHECK_EVERY calls it reads
    the high-water mark (a system call in CPython, a call into JavaScript in the page) and raises MemoryLimit once
    it has grown by more than `limit` since the bound was set; outside a bound it does nothing."""

    def __init__(self):
        self.gauge, self.base, self.limit, self.calls = None, 0, 0, 0

    def check(self) -> None:
        self.calls += 1
        if self.gauge is not None and self.calls % CHECK_EVERY == 0 and self.gauge() - self.base > self.limit:
            raise MemoryLimit(self.limit)

    def iterate(self, items):
        """A comprehension's iterable, checked at every item."""
        for item in items:
            self.check()
            yield item


_BOUND = _Bound()


@contextmanager
def _memory_bound(limit: int = MAX_MEMORY):
    """Bound the memory the learner's code makes the process take while it runs: the checks _instrument put into
    that code (at the start of every function and loop body, at every item of a comprehension: everywhere Python
    code can repeat itself) raise MemoryLimit, a MemoryError, once the high-water mark (_high_water) has grown by
    more than `limit`. That stops a loop that keeps adding to a list or stacking arrays at about `limit`, and the
    worker's WebAssembly memory, which never shrinks, stays near what it was; one block made inside a single C call
    (np.zeros(n), [0] * n) is seen at the next check or at the end, and one past what the memory can give fails in
    the allocator with a MemoryError. Only the learner's code is checked, so the course's code (the reference,
    numpy's Python) runs at full speed; the same code runs in CPython (the tests) and in the page's Pyodide."""
    _BOUND.gauge = _high_water()
    _BOUND.base, _BOUND.limit = _BOUND.gauge(), limit
    try:
        yield
        if _BOUND.gauge() - _BOUND.base > limit:
            raise MemoryLimit(limit)
    finally:
        _BOUND.gauge = None


class _Instrument(ast.NodeTransformer):
    """The learner's code with a memory check (CHECK_NAME()) at the start of every function and loop body, and
    every comprehension's iterable read through ITER_NAME(...), which checks at every item."""

    def _checked(self, node):
        self.generic_visit(node)
        check = ast.Expr(ast.Call(ast.Name(CHECK_NAME, ast.Load()), [], []))
        node.body.insert(0, ast.copy_location(check, node.body[0]))
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_For = visit_AsyncFor = visit_While = _checked

    def visit_comprehension(self, node):
        self.generic_visit(node)
        node.iter = ast.copy_location(ast.Call(ast.Name(ITER_NAME, ast.Load()), [node.iter], []), node.iter)
        return node


def _instrument(source: str):
    """The learner's source compiled with the memory checks in (a SyntaxError as compile() raises it)."""
    tree = ast.parse(source, CELL, "exec")
    return compile(ast.fix_missing_locations(_Instrument().visit(tree)), CELL, "exec")


def _copies(args: tuple) -> tuple:
    """Fresh copies of mutable arguments, so a learner's function that changes its inputs in place does not change
    what the reference is given next."""
    import copy
    return tuple(copy.deepcopy(a) for a in args)
