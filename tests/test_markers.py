"""tests/conftest.py marks each test by what it needs: `hf` from the code it reaches, `browser` from its fixtures.

`make check` leaves out `-m "browser or hf"`; a test that needs transformers but is not marked would make the fast
loop slow, one that is marked without needing it would drop out of the fast loop. Both are checked here on the
marking function itself and on the real tests of the cross-check.
"""
from __future__ import annotations

import conftest
import test_hf_crosscheck


def _reaches_hf_lazily():
    from hf_reference import hf_param_count
    return hf_param_count


def _through_a_helper():
    return _reaches_hf_lazily()


def _uses_torch():
    import torch
    return torch


def _engine_only():
    from experiments.ledger import build_ledger
    return build_ledger


# (held in a dict, so that the test below does not itself name them and get marked hf)
SAMPLES = {"lazy import": _reaches_hf_lazily, "helper": _through_a_helper, "torch": _uses_torch,
           "engine only": _engine_only}


def test_hf_is_found_in_the_body_through_helpers_and_by_module():
    found = {name: conftest._uses_hf(func, set()) for name, func in SAMPLES.items()}
    assert found == {"lazy import": True, "helper": True, "torch": True, "engine only": False}


def test_the_cross_check_is_hf_except_its_engine_side():
    assert conftest._uses_hf(test_hf_crosscheck.test_engine_matches_transformers, set())
    assert conftest._uses_hf(test_hf_crosscheck.test_reference_counts, set())
    assert conftest._uses_hf(test_hf_crosscheck.live_reference.__wrapped__, set())   # a fixture's function
    # compares data/reference_counts.json with the engine: no transformers, so it stays in the fast loop
    assert not conftest._uses_hf(test_hf_crosscheck.test_engine_equals_reference_file, set())


def test_this_test_is_in_the_fast_loop(request):
    assert not request.node.get_closest_marker("hf") and not request.node.get_closest_marker("browser")
