"""Shared pytest configuration: fixtures live in small plugin modules beside this file; every test is marked by
what it needs, so that `make check` can leave out the slow kinds (`-m "not browser and not hf and not slow"`).

- `browser`: the test drives Chromium through Playwright: it uses the `browser` fixture (browser_fixtures.py),
  directly or through another fixture (guarded_page, module_guard, a module's own sealed_browser ...).
- `hf`: the test builds a model with torch + transformers: its body, one of its fixtures, or a function of test
  code (tests/, a lesson's test_*.py) that it names (followed through the functions those name) calls something
  from tests/hf_reference.py or tests/hf_tree.py, or uses torch or transformers itself.
- `slow`: the test starts a slow process or runs a sweep: it reaches one of the helpers in SLOW below (each with
  why), from its body, a fixture that is not session-wide, or a function of test code it names. `make check` leaves
  these out; `make test` runs them. A session fixture is exempt: it runs once per test process, however many tests
  share it (the one `python build.py` command of built_site is the fast loop's check of the command itself).
All three are found from the code, not from a list of files or tests, so a new test is marked without anyone
remembering to; an explicit `@pytest.mark.browser` / `hf` / `slow` is kept as it is. The code is followed through
module globals and through imports inside a function (`from hf_reference import ...` in a test's body).
"""
import dis
import functools
import importlib
import os
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest_plugins = ["browser_fixtures", "build_fixtures", "course_fixtures"]

# Every build a test runs (in this process, in a copy's own modules, or as `python build.py`) keeps its widget
# answers in the checkout's one cache folder (sitegen/answer_cache.py: keyed by the answering code's source and the
# arguments, so a modified copy computes what it changed and reads back the rest); a run may point it elsewhere or
# turn it off (COURSE_ANSWER_CACHE=off).
os.environ.setdefault("COURSE_ANSWER_CACHE", str(ROOT / ".cache" / "answers"))
# One BLAS thread per test process: `make check` runs one process per core, and numpy's OpenBLAS would otherwise
# start a thread per core in each, which wait for work by spinning: the numpy-heavy tests took twice the CPU
# (21.4 s against 10.4 s for the trainer's tests on two workers). The course's stored runs are made with one
# thread too (experiments/train/runs.py), so in-process reruns sum in the same order. (Set before numpy is
# imported; pytest-xdist's workers inherit it.)
for _blas in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_blas, "1")

HF_MODULES = {"hf_reference", "hf_tree", "torch", "transformers"}   # (top-level package names)
TESTS_DIR = str(Path(__file__).resolve().parent)
LESSONS_DIR = str(ROOT / "lessons")

# What makes a test slow, as "module.name" (a test module's or helper's name without "tests."): a test that reaches
# one of these is marked `slow`. Each costs seconds of CPU per test (measured with `--durations`, see README).
SLOW = {
    "build_fixtures.run_build_command":
        "`python build.py` in a new interpreter: it imports numpy, Jinja2 and the engine again, ~1 s a build",
    "test_new_lesson.build_copy":
        "the walkthrough's `python build.py` in a copy of the whole project, a new interpreter building every lesson",
    "test_robust_build.build":
        "the same command, which the kill tests kill (SIGKILL) at each step of the swap and at random moments",
    "gradient_reference.central_differences":
        "a finite-difference sweep: two evaluations of the loss per parameter element",
    "claim_inputs.numbers_after":
        "recomputes every number of the course with one input changed, once per witness (~180 of them)",
    "test_errors_zh._sweep":
        "a sweep: every config that spoils one key of one config per family, ~10,000 ledgers (the hand-made bad "
        "configs stay in the fast loop)",
    "test_serve.LOAD_REQUESTS":
        "the load test: 2,000 requests, each on a new connection, to `python -m sitegen.serve` in its own process",
}


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _local_name(module: str) -> str:
    """A module's name as SLOW writes it: tests/ is on sys.path, and is also imported as the package `tests`."""
    return module.removeprefix("tests.")


_OPS = {dis.opmap[name]: name for name in ("LOAD_GLOBAL", "LOAD_NAME", "IMPORT_NAME", "IMPORT_FROM")}


@functools.cache
def _references(code: types.CodeType) -> tuple[tuple[str | None, str | None], ...]:
    """(None, name) for each global a body loads, (module, None) for `import module` and (module, name) for `from
    module import name` inside it; once per code object (a helper is reached from many tests). Read from the
    bytecode's (opcode, argument) pairs directly: dis.get_instructions was most of collecting the suite."""
    found: list[tuple[str | None, str | None]] = []
    module = None
    raw, extended = code.co_code, 0
    for i in range(0, len(raw), 2):
        op, arg = raw[i], raw[i + 1] | extended
        extended = arg << 8 if op == dis.EXTENDED_ARG else 0
        kind = _OPS.get(op)
        if kind == "LOAD_GLOBAL":   # (its argument is the name's index times 2, plus a flag)
            found.append((None, code.co_names[arg >> 1]))
        elif kind == "LOAD_NAME":
            found.append((None, code.co_names[arg]))
        elif kind == "IMPORT_NAME":
            module = code.co_names[arg]
            found.append((module, None))
        elif kind == "IMPORT_FROM" and module:
            found.append((module, code.co_names[arg]))
    return tuple(found)


def _module(name: str) -> types.ModuleType | None:
    """An imported module, or a helper module of tests/ imported now (it is test code, cheap to import; anything
    else, torch say, is recognised by its name and never imported here)."""
    if name in sys.modules:
        return sys.modules[name]
    local = _local_name(name)
    if "." not in local and local not in HF_MODULES and Path(TESTS_DIR, local + ".py").is_file():
        return importlib.import_module(local)
    return None


def _walk(func, seen: set, found: set) -> None:
    """Adds to `found` the names `func` uses: every name in its code (attributes too), each global or imported
    function, class or value as "module.name" (a function or class by where it is defined), each module's name;
    and walks every function of tests/ it names."""
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or code in seen:
        return
    seen.add(code)
    module_globals = getattr(func, "__globals__", {})
    here = _local_name(module_globals.get("__name__", ""))
    for co in _code_objects(code):
        found.update(co.co_names)
        for module_name, name in _references(co):
            if module_name is None:
                target, key = module_globals.get(name), f"{here}.{name}"
            else:
                module = _module(module_name)
                target = module if name is None else getattr(module, name, None)
                key = _local_name(module_name) + ("" if name is None else f".{name}")
            found.add(key)
            if isinstance(target, types.ModuleType):
                found.add(target.__name__)
                continue
            home = getattr(target, "__module__", None)
            if isinstance(home, str):
                found.update((home, f"{_local_name(home)}.{getattr(target, '__qualname__', name)}"))
            code_of = getattr(getattr(target, "__wrapped__", target), "__code__", None)
            if code_of is not None and _test_code(code_of.co_filename):
                _walk(target, seen, found)


def _test_code(filename: str) -> bool:
    """Is this file test code: tests/, or a lesson's own test_*.py?"""
    return filename.startswith(TESTS_DIR) or (filename.startswith(LESSONS_DIR)
                                              and Path(filename).name.startswith("test_"))


_REACHED: dict[types.CodeType, frozenset[str]] = {}


def _reached(func) -> frozenset[str]:
    """Every name `func` reaches (_walk), once per function (fixtures are shared by many tests)."""
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None:
        return frozenset()
    if code not in _REACHED:
        found: set[str] = set()
        _walk(func, set(), found)
        _REACHED[code] = frozenset(found)
    return _REACHED[code]


def _uses_hf(func) -> bool:
    """Does `func` (or a function of tests/ that it names) reach torch/transformers or the hf helpers?"""
    return any(name.split(".")[0] in HF_MODULES for name in _reached(func))


def slow_reason(funcs) -> str | None:
    """Why a test whose body and fixtures are `funcs` is slow (SLOW's line for a helper it reaches), or None."""
    for func in funcs:
        for name in sorted(_reached(func) & SLOW.keys()):
            return f"{name}: {SLOW[name]}"
    return None


SLOW_MARKER = ("slow: starts a slow process or runs a sweep (set by tests/conftest.py from the helpers a test "
               "reaches, SLOW); left out of `make check`")


def pytest_configure(config):
    """Registers `slow` (--strict-markers); also called from the hook below: a run of lessons/ alone loads this
    file from the root conftest.py at collection, after pytest's configuration."""
    if SLOW_MARKER not in config.getini("markers"):
        config.addinivalue_line("markers", SLOW_MARKER)


def pytest_collection_modifyitems(config, items):
    pytest_configure(config)
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        if "browser" in item.fixturenames and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        fixtures = [d for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs]
        if not item.get_closest_marker("hf"):
            if any(_uses_hf(f) for f in [item.function, *(d.func for d in fixtures)]):
                item.add_marker(pytest.mark.hf)
        if not item.get_closest_marker("slow"):
            if slow_reason([item.function, *(d.func for d in fixtures if d.scope != "session")]):
                item.add_marker(pytest.mark.slow)
