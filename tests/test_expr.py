"""experiments/expr.py on its own: every node class and operator, with exact values and exact strings.

The module's contract (its docstring): one tree gives a value, a formula (symbols, ``·``) and a substituted form
(numbers with digit-group commas, ``×``), and the substituted form read as Python (× -> *, ÷ -> /, ² -> **2,
commas dropped) evaluates to the value. The expected strings and values below are written out by hand.
The cases at the end once broke the contract (powers of powers, of negatives and of square roots, fraction- and
float-valued symbols); they now hold it.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest

from experiments.expr import (
    BinOp,
    Const,
    Exp,
    Expr,
    Neg,
    Pow,
    RealDiv,
    Sqrt,
    Sym,
    evaluate,
    group_digits,
    lift,
    to_python,
    total,
)

d, d_ff, L = Sym("d", 5120), Sym("d_ff", 17408), Sym("L", 64)
a, b, c = Sym("a", 12), Sym("b", 5), Sym("c", 3)


def as_python(substituted: str) -> str:
    """The substituted text as Python, by the rule the module states (written independently of to_python)."""
    return (substituted.replace("×", "*").replace("·", "*").replace("÷", "/").replace(",", "")
            .replace("²", "**2").replace("³", "**3"))


def py_value(substituted: str, exact: bool = True):
    """Evaluate that Python; with exact=True every integer literal is a Fraction so / is exact division."""
    src = as_python(substituted)
    if exact:
        src = re.sub(r"(?<![\w.])(\d+)(?![\w.])", r"Fraction(\1)", src)
    return eval(src, {"__builtins__": {}, "Fraction": Fraction, "exp": math.exp})


# -- group_digits ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, text", [
    (0, "0"), (999, "999"), (1000, "1,000"), (27_781_427_952, "27,781,427,952"), (-1234567, "-1,234,567"),
    (Fraction(4, 2), "2"), (Fraction(3, 2), "3/2"), (Fraction(1234567, 1000), "1,234,567/1,000"),
    (Fraction(-1, 3), "-1/3"), (0.5, "0.5"), (1234.5, "1,234.5"), (1 / 3, "0.3333333333"), (1e20, "1e+20"),
])
def test_group_digits(value, text):
    assert group_digits(value) == text


# -- leaves --------------------------------------------------------------------------------------------------------
def test_const_shows_its_value_in_both_forms():
    k = Const(17408)
    assert (k.value, k.formula(), k.substituted(), k.symbols()) == (17408, "17,408", "17,408", {})
    assert Const(Fraction(3, 4)).formula() == "3/4"


def test_sym_shows_its_name_then_its_value():
    assert (d.value, d.formula(), d.substituted(), d.symbols()) == (5120, "d", "5,120", {"d": 5120})


def test_lift_wraps_numbers_and_passes_expressions_through():
    assert lift(d) is d
    k = lift(7)
    assert isinstance(k, Const) and k.value == 7


def test_the_base_class_has_no_value_or_text():
    e = Expr()
    for method in (lambda: e.value, e.formula, e.substituted):
        with pytest.raises(NotImplementedError):
            method()
    assert e.symbols() == {}


# -- binary operators ------------------------------------------------------------------------------------------
def test_the_ffn_example_of_the_docstring():
    ffn = 3 * L * d * d_ff
    assert ffn.formula() == "3 · L · d · d_ff"
    assert ffn.substituted() == "3 × 64 × 5,120 × 17,408"
    assert ffn.value == 17_112_760_320          # 192 · 5,120 = 983,040; · 17,408
    assert py_value(ffn.substituted()) == ffn.value
    assert ffn.symbols() == {"L": 64, "d": 5120, "d_ff": 17408}
    assert repr(ffn) == "<3 · L · d · d_ff = 3 × 64 × 5,120 × 17,408 = 17,112,760,320>"


@pytest.mark.parametrize("build, formula, substituted, value", [
    (lambda: a + b, "a + b", "12 + 5", 17),
    (lambda: a - b, "a - b", "12 - 5", 7),
    (lambda: a * b, "a · b", "12 × 5", 60),
    (lambda: a / c, "a / c", "12 / 3", 4),
    (lambda: 1 + a, "1 + a", "1 + 12", 13),
    (lambda: 100 - a, "100 - a", "100 - 12", 88),
    (lambda: 2 * a, "2 · a", "2 × 12", 24),
    (lambda: 6 / a, "6 / a", "6 / 12", Fraction(1, 2)),
    (lambda: a + 1000, "a + 1,000", "12 + 1,000", 1012),
])
def test_each_operator_and_its_reflected_form(build, formula, substituted, value):
    e = build()
    assert isinstance(e, BinOp)
    assert (e.formula(), e.substituted(), e.value) == (formula, substituted, value)
    assert py_value(e.substituted()) == value


def test_division_is_exact_and_whole_quotients_are_ints():
    q = a / b
    assert q.value == Fraction(12, 5) and isinstance(q.value, Fraction)
    whole = a / c
    assert whole.value == 4 and type(whole.value) is int
    assert (Sym("x", 10**30 + 1) / 1).value == 10**30 + 1      # no float rounding anywhere
    assert (Const(1) / 3 + Const(1) / 6).value == Fraction(1, 2)


@pytest.mark.parametrize("build, formula, substituted, value", [
    # a lower-precedence child is parenthesised, a higher one is not
    (lambda: (a + b) * c, "(a + b) · c", "(12 + 5) × 3", 51),
    (lambda: a + b * c, "a + b · c", "12 + 5 × 3", 27),
    (lambda: a * (b + c), "a · (b + c)", "12 × (5 + 3)", 96),
    (lambda: (a - b) / c, "(a - b) / c", "(12 - 5) / 3", Fraction(7, 3)),
    # same precedence: left-nested needs nothing; on the right, - and / need parentheses, + and * do not
    (lambda: a - b - c, "a - b - c", "12 - 5 - 3", 4),
    (lambda: a - (b - c), "a - (b - c)", "12 - (5 - 3)", 10),
    (lambda: a - (b + c), "a - (b + c)", "12 - (5 + 3)", 4),
    (lambda: a + (b - c), "a + b - c", "12 + 5 - 3", 14),
    (lambda: a / b / c, "a / b / c", "12 / 5 / 3", Fraction(4, 5)),
    (lambda: a / (b / c), "a / (b / c)", "12 / (5 / 3)", Fraction(36, 5)),
    (lambda: a / (b * c), "a / (b · c)", "12 / (5 × 3)", Fraction(4, 5)),
    (lambda: a * (b / c), "a · b / c", "12 × 5 / 3", 20),
    (lambda: a * (b * c), "a · b · c", "12 × 5 × 3", 180),
])
def test_precedence_and_parentheses(build, formula, substituted, value):
    e = build()
    assert (e.formula(), e.substituted(), e.value) == (formula, substituted, value)
    assert py_value(e.substituted()) == value


def test_symbols_are_collected_left_to_right_once_each():
    e = (L * d + d * d_ff) / L
    assert list(e.symbols().items()) == [("L", 64), ("d", 5120), ("d_ff", 17408)]


def test_total_left_folds_in_reading_order():
    t = total([a, b, 7, c])
    assert t.formula() == "a + b + 7 + c" and t.substituted() == "12 + 5 + 7 + 3" and t.value == 27
    one = total([5])
    assert isinstance(one, Const) and one.value == 5
    with pytest.raises(IndexError):
        total([])


# -- powers and the floating-point nodes ------------------------------------------------------------------------
@pytest.mark.parametrize("build, formula, substituted, value", [
    (lambda: d ** 2, "d²", "5,120²", 26_214_400),
    (lambda: c ** 3, "c³", "3³", 27),
    (lambda: 12 * d ** 2, "12 · d²", "12 × 5,120²", 314_572_800),
    (lambda: (a + b) ** 2, "(a + b)²", "(12 + 5)²", 289),
    (lambda: (a * b) ** 2, "(a · b)²", "(12 × 5)²", 3600),
    (lambda: (a / b) ** 2, "(a / b)²", "(12 / 5)²", Fraction(144, 25)),
    (lambda: a / c ** 2, "a / c²", "12 / 3²", Fraction(4, 3)),
])
def test_pow(build, formula, substituted, value):
    e = build()
    assert isinstance(d ** 2, Pow) and Pow(d, 3).value == 134_217_728_000
    assert (e.formula(), e.substituted(), e.value) == (formula, substituted, value)
    assert py_value(e.substituted()) == value


@pytest.mark.parametrize("exponent", [0, 1, 4, -1])
def test_pow_writes_only_squares_and_cubes(exponent):
    with pytest.raises(ValueError, match="only squares and cubes"):
        d ** exponent


def test_sqrt():
    r = Sqrt(2 * L)
    assert r.formula() == "√(2 · L)" and r.substituted() == "(2 × 64) ** 0.5"
    assert r.value == 128 ** 0.5 and r.symbols() == {"L": 64}
    assert py_value(r.substituted(), exact=False) == r.value
    assert (3 * r).formula() == "3 · √(2 · L)"      # a function call binds tighter than ·


def test_exp_and_neg():
    x = Sym("x", 10)
    e = Exp(Neg(x))
    assert e.formula() == "exp(-x)" and e.substituted() == "exp(-10)" and e.value == math.exp(-10)
    assert e.symbols() == {"x": 10}
    assert py_value(e.substituted(), exact=False) == e.value


@pytest.mark.parametrize("build, formula, substituted, value", [
    (lambda: Neg(a), "-a", "-12", -12),
    (lambda: Neg(a + b), "-(a + b)", "-(12 + 5)", -17),
    (lambda: Neg(a * b), "-(a · b)", "-(12 × 5)", -60),
    (lambda: Neg(a ** 2), "-(a²)", "-(12²)", -144),
    (lambda: c - Neg(b), "c - -b", "3 - -5", 8),
    (lambda: Neg(a) * b, "-a · b", "-12 × 5", -60),
])
def test_neg(build, formula, substituted, value):
    e = build()
    assert (e.formula(), e.substituted(), e.value) == (formula, substituted, value)
    assert py_value(e.substituted()) == value


@pytest.mark.parametrize("build, formula, substituted, value", [
    (lambda: RealDiv(a, b), "a / b", "12 / 5", 2.4),
    (lambda: RealDiv(a + b, c), "(a + b) / c", "(12 + 5) / 3", 17 / 3),
    (lambda: RealDiv(a * b, c), "a · b / c", "12 × 5 / 3", 20.0),
    (lambda: RealDiv(a, b * c), "a / (b · c)", "12 / (5 × 3)", 0.8),
    (lambda: RealDiv(a, RealDiv(b, c)), "a / (b / c)", "12 / (5 / 3)", 12 / (5 / 3)),
    (lambda: RealDiv(Sqrt(a), b), "√(a) / b", "(12) ** 0.5 / 5", 12 ** 0.5 / 5),
])
def test_realdiv_is_float_division(build, formula, substituted, value):
    e = build()
    assert (e.formula(), e.substituted()) == (formula, substituted)
    assert e.value == value and isinstance(e.value, float)
    assert py_value(e.substituted(), exact=False) == e.value
    assert e.symbols().keys() <= {"a", "b", "c"}


def test_division_by_zero_raises():
    with pytest.raises(ZeroDivisionError):
        _ = (a / Const(0)).value
    with pytest.raises(ZeroDivisionError):
        _ = RealDiv(a, Sym("z", 0)).value


# -- to_python / evaluate -----------------------------------------------------------------------------------------
def test_to_python_rewrites_the_display_symbols():
    assert to_python("3 × 64 × 5,120²") == "3 * 64 * 5120**2"
    assert to_python("2 · 7³ / 1,000") == "2 * 7**3 / 1000"


@pytest.mark.parametrize("text, value", [
    ("3 × 64 × 5,120 × 17,408", 17_112_760_320),
    ("1 / 3 + 1 / 6", Fraction(1, 2)),
    ("6 / 3", 2),
    ("0.1 + 0.2", Fraction(3, 10)),
    ("(12 + 5)²", 289),
    ("2.5e-3 × 4", Fraction(1, 100)),
])
def test_evaluate_exact(text, value):
    got = evaluate(text)
    assert got == value and type(got) is type(value)


def test_evaluate_float_and_sandbox():
    assert evaluate("0.1 + 0.2", exact=False) == 0.1 + 0.2 != 0.3
    assert evaluate("exp(-10)", exact=False) == math.exp(-10)
    with pytest.raises(NameError):
        evaluate("len([1])")
    with pytest.raises(NameError):
        evaluate("open('x')", exact=False)


def test_every_tree_here_round_trips_through_the_modules_own_evaluate():
    exact = [3 * L * d * d_ff, (a + b) ** 2 / c, a - (b - c), total([a, b, c]) / 7, Neg(a * b) + 1000]
    for e in exact:
        assert evaluate(e.substituted()) == e.value, e
    for e in [Sqrt(2 * L), Exp(Neg(Sym("x", 10))), RealDiv(a + b, c)]:
        assert evaluate(e.substituted(), exact=False) == e.value, e


# -- cases that once broke the contract: parentheses a power or a division needs, every digit of a float ------
def test_power_of_a_power():
    e = (c ** 2) ** 3
    assert py_value(e.substituted()) == e.value == 729


@pytest.mark.parametrize("base", [Neg(Sym("x", 3)), Const(-3), Sym("x", -3)], ids=["Neg", "negative Const",
                                                                                  "negative Sym"])
def test_square_of_a_negative(base):
    e = base ** 2
    assert py_value(e.substituted()) == e.value == 9


def test_square_of_a_sqrt():
    e = Sqrt(Sym("x", 16)) ** 2
    assert py_value(e.substituted(), exact=False) == e.value == 16.0


@pytest.mark.parametrize("build, value", [(lambda: 2 / Sym("r", Fraction(1, 3)), 6),
                                          (lambda: Sym("r", Fraction(2, 3)) ** 2, Fraction(4, 9))],
                         ids=["divided by", "squared"])
def test_fraction_valued_symbol(build, value):
    e = build()
    assert py_value(e.substituted()) == e.value == value


def test_float_symbol_keeps_all_its_digits():
    e = Sym("x", 0.1234567890123) * 1
    assert py_value(e.substituted(), exact=False) == e.value
