"""Every claim on every page can fail: some admissible change of its inputs makes it false.

A claim that compares a number with its own definition (``gap == total - classic`` where gap is defined as that
difference) holds whatever the configs say, so it checks nothing. For each claim, tests/fixtures/
claim_witnesses.json records a *witness*: one change of a published config, a cited figure or a widget's first
setting after which the course still computes but the claim is false (found by tests/claim_inputs.py; run
``python -m tests.claim_inputs --write`` after adding a claim). This test replays every witness.
"""
from __future__ import annotations

import pytest

from tests.claim_inputs import Change, compute, holds, lesson_claims, load_inputs, numbers_after, read_witnesses

CLAIMS = lesson_claims()
WITNESSES = read_witnesses()
# Lessons whose claims are not all witnessed yet, with how many still lack one: the count may only fall (none now).
PENDING: dict[str, int] = {}


@pytest.fixture(scope="module")
def inputs():
    return load_inputs()


@pytest.fixture(scope="module")
def base(inputs):
    """The course's numbers on the unchanged inputs (each witness test checks its claims hold here first)."""
    return compute(*inputs)


def test_the_lessons_have_claims():
    assert len(CLAIMS) >= 100
    assert {c.file for c in CLAIMS} >= {"c4-transformer-block.md", "c4-ffn-deep-read.md",
                                         "c11-moe-linear-attention.md"}


def test_every_claim_has_a_witness():
    missing = [f"{c.file}:{c.line}: {{claim}}`{c.text}`" for c in CLAIMS
               if c.text not in WITNESSES and c.file not in PENDING]
    assert missing == [], ("claims that no recorded change of their inputs makes false (compare a number with "
                           "something computed independently, or run `python -m tests.claim_inputs --write`):\n"
                           + "\n".join(missing))


@pytest.mark.parametrize("lesson", sorted(PENDING))
def test_a_pending_lesson_gains_no_unwitnessed_claim(lesson):
    lacking = [c for c in CLAIMS if c.file == lesson and c.text not in WITNESSES]
    assert len(lacking) <= PENDING[lesson], f"{lesson}: {len(lacking)} claims without a witness"


def test_no_witness_is_left_over():
    assert sorted(set(WITNESSES) - {c.text for c in CLAIMS}) == []


@pytest.mark.parametrize("change", sorted({WITNESSES[c.text] for c in CLAIMS if c.text in WITNESSES}))
def test_the_witness_makes_its_claims_false(change, inputs, base):
    models, data = inputs
    claims = [c for c in CLAIMS if WITNESSES.get(c.text) == change]
    assert all(holds(c, base) for c in claims)
    numbers = numbers_after(Change.parse(change), models, data)
    assert numbers is not None, f"the course no longer computes after {change}"
    still_true = [c.text for c in claims if holds(c, numbers) is not False]
    assert still_true == [], f"after {change} these claims still hold: {still_true}"


def test_a_definition_has_no_witness(inputs):
    """The search itself: a claim that restates a definition finds no witness; a real comparison finds one."""
    from tests.claim_inputs import Claim, find_witnesses
    identity = Claim("x.md", 1, "anchor.classic_gap == anchor.total - anchor.classic")
    real = Claim("x.md", 2, "llama7b.V < anchor.V")
    tries = [Change("model:qwen3.8-27b:text_config.hidden_size", "*2"), Change("model:llama-2-7b:vocab_size", "*10"),
             Change("cited:gpt3_train_tokens", "*2")]
    found = find_witnesses([identity, real], candidates=tries)
    assert found[real] == tries[1] and found[identity] is None
