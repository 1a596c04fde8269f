"""Every claim on every page can fail: some admissible change of its inputs makes it false.

A claim that compares a number with its own definition (``gap == total - classic`` where gap is defined as that
difference), states an arithmetic identity (√8 > 2) or compares typed constants only (two cited figures, a run's
two settings, 1/(1 − β₂) against 1/(1 − β₁) for cited β's) holds whatever the course computes, so it checks nothing.
For each claim, tests/fixtures/claim_witnesses.json records a *witness*: one change of something the course computes
from (a published config, a stored training result, a widget experiment's first setting; never a cited figure or a
run's setting) after which the course still computes but the claim is false (found by tests/claim_inputs.py; run
``python -m tests.claim_inputs --write`` after adding a claim). This test replays every witness. A claim that only
restates another (every comparison in it is already claimed elsewhere, in either direction) is refused too.
"""
from __future__ import annotations

import pytest

from tests.claim_inputs import (
    Change,
    compute,
    computed_input,
    holds,
    lesson_claims,
    load_inputs,
    numbers_after,
    read_witnesses,
)

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
    assert {c.file for c in CLAIMS} >= {"c4-transformer-block/lesson.md", "c4-ffn-deep-read/lesson.md",
                                         "c11-moe-linear-attention/lesson.md"}


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


def test_every_claim_names_a_computed_number():
    """A claim over literals or cited figures alone (no number the course computes) compares typed constants."""
    from sitegen.claims import claim_names
    typed = [f"{c.file}:{c.line}: {{claim}}`{c.text}`" for c in CLAIMS
             if all(name.startswith("cited.") for name in claim_names(c.text))]
    assert typed == []


def test_every_witness_moves_a_computed_input():
    """A cited figure or a run's setting moved is no witness: it falsifies a comparison of typed constants as readily
    as a real one."""
    assert sorted(w for w in set(WITNESSES.values()) if not computed_input(Change.parse(w))) == []


def atoms(text: str) -> list[str]:
    """The comparisons a claim makes, each written one way (``a > b`` as ``b < a``, chains split into pairs)."""
    import ast

    from sitegen.claims import parse
    tree = parse(text)
    flip = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}
    out = []
    for part in tree.values if isinstance(tree, ast.BoolOp) else [tree]:
        if not isinstance(part, ast.Compare):
            out.append(ast.unparse(part))
            continue
        operands = [part.left, *part.comparators]
        for op, a, b in zip(part.ops, operands, operands[1:]):
            if type(op) in flip:
                op, a, b = flip[type(op)](), b, a
            if isinstance(op, (ast.Eq, ast.NotEq)):
                a, b = sorted((a, b), key=ast.unparse)
            out.append(ast.unparse(ast.Compare(left=a, ops=[op], comparators=[b])))
    return out


def test_atoms_write_a_comparison_one_way():
    assert atoms("a.x > b.y and 1 < c.z <= d.w") == ["b.y < a.x", "1 < c.z", "c.z <= d.w"]
    assert atoms("a.total == b.hand") == atoms("b.hand == a.total")
    assert atoms("increasing(a.x, a.y)") == ["increasing(a.x, a.y)"]


# Lessons whose claims still restate others, with how many: the count may only fall (none now).
RESTATING: dict[str, int] = {}


def test_no_claim_only_restates_others():
    """Each claim compares something no other claim of the course compares (in either direction): a summary that
    repeats a claim made earlier adds nothing a reader could not already rely on."""
    made: dict[str, list] = {}
    for c in CLAIMS:
        for atom in set(atoms(c.text)):
            made.setdefault(atom, []).append(c)
    repeats = [c for c in CLAIMS if all(any(o is not c for o in made[atom]) for atom in atoms(c.text))]
    over = {f: n for f in {c.file for c in repeats} if (n := sum(c.file == f for c in repeats)) > RESTATING.get(f, 0)}
    assert over == {}, "\n".join(f"{c.file}:{c.line}: {{claim}}`{c.text}`" for c in repeats if c.file in over)


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
    constants = Claim("x.md", 3, "cited.llm_adam_b2 < cited.torch_adamw_b2")
    tries = [Change("model:qwen3.8-27b:text_config.hidden_size", "*2"), Change("model:llama-2-7b:vocab_size", "*10"),
             Change("cited:gpt3_train_tokens", "*2"), Change("cited:llm_adam_b2", "*2")]
    found = find_witnesses([identity, real, constants], candidates=tries)
    assert found[real] == tries[1] and found[identity] is None and found[constants] is None
