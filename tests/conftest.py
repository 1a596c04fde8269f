"""Shared pytest configuration: fixtures live in small plugin modules beside this file; every test is marked by
what it needs, so that `make check` can leave out the slow kinds (`-m "not browser and not hf"`).

- `browser`: the test drives Chromium through Playwright: it uses the `browser` fixture (browser_fixtures.py),
  directly or through another fixture (guarded_page, module_guard, a module's own sealed_browser ...).
- `hf`: the test builds a model with torch + transformers: its body, one of its fixtures, or a function of tests/
  that it names (followed through the functions those name) calls something from tests/hf_reference.py or
  tests/hf_tree.py, or uses torch or transformers itself.
Both are found from the code, not from a list of files, so a new test is marked without anyone remembering to;
an explicit `@pytest.mark.browser` / `@pytest.mark.hf` is kept as it is.
"""
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest_plugins = ["browser_fixtures", "build_fixtures"]

HF_MODULES = {"hf_reference", "hf_tree", "torch", "transformers"}   # (top-level package names)
TESTS_DIR = str(Path(__file__).resolve().parent)


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _uses_hf(func, seen: set) -> bool:
    """Does `func` (or a function of tests/ that it names) reach torch/transformers or the hf helpers?"""
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    module_globals = getattr(func, "__globals__", {})
    for co in _code_objects(code):
        for name in co.co_names:
            if name in HF_MODULES:
                return True
            target = module_globals.get(name)
            if isinstance(target, types.ModuleType):
                if target.__name__.split(".")[0] in HF_MODULES:
                    return True
                continue
            home = getattr(target, "__module__", None) or ""
            if home.split(".")[0] in HF_MODULES:
                return True
            code_of = getattr(getattr(target, "__wrapped__", target), "__code__", None)
            if code_of is not None and code_of.co_filename.startswith(TESTS_DIR) and _uses_hf(target, seen):
                return True
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        if "browser" in item.fixturenames and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        if item.get_closest_marker("hf"):
            continue
        seen: set = set()
        fixture_funcs = [d.func for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs]
        if any(_uses_hf(f, seen) for f in [item.function, *fixture_funcs]):
            item.add_marker(pytest.mark.hf)
