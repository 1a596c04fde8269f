"""Shared test fixtures (a pytest plugin, listed in conftest.py and tests/conftest.py): the course's numbers.

Every number the course cites (experiments.course_numbers.compute_numbers), computed from this checkout's
data/ as the build reads it (claim_inputs.load_inputs), once per test process: it costs about half a second of
CPU, and a dozen test modules read it (before, each computed its own). Tests only read it; a test that edits
inputs computes its own numbers.

    def test_x(course_numbers):
        assert course_numbers["c14.ridge"].value == ...
"""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def course_numbers() -> dict:
    """name -> Number, every number of the course from the checkout's data/ (the build's inputs)."""
    from claim_inputs import ROOT, load_inputs
    from experiments.course_numbers import compute_numbers
    models, data = load_inputs(ROOT)
    return compute_numbers(models, data.get("course"), data.get("reference_counts"), data.get("citations"), data)
