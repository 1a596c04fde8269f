"""tests/conftest.py marks each test by what it needs: `hf` and `slow` from the code it reaches, `browser` from its
fixtures.

`make check` leaves out `-m "browser or hf or slow"`; a test that needs transformers or starts a slow process but is
not marked would make the fast loop slow, one that is marked without needing it would drop out of the fast loop.
Both are checked here on the marking functions themselves and on real tests (the cross-check, the kill tests, the
load test, the finite-difference sweeps).
"""
from __future__ import annotations

import build_fixtures
import conftest
import test_hf_crosscheck
import test_robust_build
import test_serve
import test_train_model
from build_fixtures import run_build, run_build_command


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
    found = {name: conftest._uses_hf(func) for name, func in SAMPLES.items()}
    assert found == {"lazy import": True, "helper": True, "torch": True, "engine only": False}


def test_the_cross_check_is_hf_except_its_engine_side():
    assert conftest._uses_hf(test_hf_crosscheck.test_engine_matches_transformers)
    assert conftest._uses_hf(test_hf_crosscheck.test_reference_counts)
    assert conftest._uses_hf(test_hf_crosscheck.live_reference.__wrapped__)   # a fixture's function
    # compares data/reference_counts.json with the engine: no transformers, so it stays in the fast loop
    assert not conftest._uses_hf(test_hf_crosscheck.test_engine_equals_reference_file)


def _a_future_test_that_builds_by_command(tmp_path):
    return _through_a_build_helper(tmp_path)


def _through_a_build_helper(root):
    return run_build_command(root)


def _a_future_sweep():
    from gradient_reference import central_differences
    return central_differences


def _builds_in_process(tmp_path):
    return run_build(tmp_path)


SLOW_SAMPLES = {"command build through a helper": _a_future_test_that_builds_by_command,
                "lazy import of the sweep": _a_future_sweep, "in-process build": _builds_in_process}


def test_slow_is_found_from_the_helpers_a_test_reaches():
    reasons = {name: conftest.slow_reason([func]) for name, func in SLOW_SAMPLES.items()}
    assert reasons["command build through a helper"].startswith("build_fixtures.run_build_command: ")
    assert reasons["lazy import of the sweep"].startswith("gradient_reference.central_differences: ")
    assert reasons["in-process build"] is None


def test_the_kills_the_load_test_and_the_sweeps_are_slow_and_the_edge_cases_are_not():
    slow = {
        "kill": [test_robust_build.test_a_kill_at_any_step_of_the_swap_leaves_the_old_site_or_the_new,
                 test_robust_build.two_sites.__wrapped__],
        "random kills": [test_robust_build.test_random_kills_of_the_whole_build_never_leave_a_partial_site],
        "load": [test_serve.test_load_2000_requests_at_50_concurrent_every_one_answered_whole],
        "finite differences": [test_train_model.test_gradients_match_central_finite_differences_for_every_parameter],
    }
    assert {name: bool(conftest.slow_reason(funcs)) for name, funcs in slow.items()} == dict.fromkeys(slow, True)
    # a build that fails in this process, and the session's one command build (session fixtures are exempt)
    assert conftest.slow_reason([test_robust_build.test_a_config_over_the_size_limit_is_refused_unread,
                                 test_robust_build.course.__wrapped__]) is None
    assert conftest.slow_reason([build_fixtures.built_site.__wrapped__]) is not None   # (what the exemption leaves in)


def test_this_test_is_in_the_fast_loop(request):
    assert not any(request.node.get_closest_marker(m) for m in ("hf", "browser", "slow"))
