"""Tiny symbolic arithmetic: one expression tree gives a value, its formula and its substituted form.

Every number the course shows is computed by evaluating one of these trees, so the formula a learner sees
(``3 · L · d · d_ff``), the same formula with the config's values substituted (``3 × 64 × 5,120 × 17,408``) and
the value itself (17,112,760,320) can never disagree. ``to_python(expr.substituted())`` is plain Python that
evaluates to ``expr.value``; tests use exactly that.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

_SUPERSCRIPT = {2: "²", 3: "³"}


def group_digits(value) -> str:
    """27781427952 -> '27,781,427,952'; Fractions and floats are shown as exact decimals where possible."""
    if isinstance(value, Fraction):
        if value.denominator == 1:
            value = value.numerator
        else:
            return f"{value.numerator:,}/{value.denominator:,}"
    if isinstance(value, float):
        return f"{value:,.10g}" if abs(value) < 1e15 else repr(value)
    return f"{value:,}"


class Expr:
    prec = 9

    @property
    def value(self):
        raise NotImplementedError

    def formula(self) -> str:
        raise NotImplementedError

    def substituted(self) -> str:
        raise NotImplementedError

    def symbols(self) -> dict[str, object]:
        """Symbol name -> value for every symbol used (for the derivation's 'where' line)."""
        return {}

    # operators build trees; plain numbers become constants
    def __add__(self, other): return BinOp("+", self, lift(other))
    def __radd__(self, other): return BinOp("+", lift(other), self)
    def __sub__(self, other): return BinOp("-", self, lift(other))
    def __rsub__(self, other): return BinOp("-", lift(other), self)
    def __mul__(self, other): return BinOp("*", self, lift(other))
    def __rmul__(self, other): return BinOp("*", lift(other), self)
    def __truediv__(self, other): return BinOp("/", self, lift(other))
    def __rtruediv__(self, other): return BinOp("/", lift(other), self)
    def __pow__(self, exponent: int): return Pow(self, exponent)

    def __repr__(self) -> str:
        return f"<{self.formula()} = {self.substituted()} = {group_digits(self.value)}>"


class Const(Expr):
    prec = 4

    def __init__(self, value):
        self._value = value

    @property
    def value(self):
        return self._value

    def formula(self) -> str:
        return group_digits(self._value)

    substituted = formula


class Sym(Expr):
    """A named quantity: a config value (``d``) or a computed part (``FFN``)."""
    prec = 4

    def __init__(self, name: str, value):
        self.name, self._value = name, value

    @property
    def value(self):
        return self._value

    def formula(self) -> str:
        return self.name

    def substituted(self) -> str:
        return group_digits(self._value)

    def symbols(self):
        return {self.name: self._value}


class BinOp(Expr):
    _PREC = {"+": 1, "-": 1, "*": 2, "/": 2}
    _SHOW = {"+": (" + ", " + "), "-": (" - ", " - "), "*": (" · ", " × "), "/": (" / ", " / ")}

    def __init__(self, op: str, left: Expr, right: Expr):
        self.op, self.left, self.right = op, left, right
        self.prec = self._PREC[op]

    @property
    def value(self):
        a, b = self.left.value, self.right.value
        if self.op == "+":
            return a + b
        if self.op == "-":
            return a - b
        if self.op == "*":
            return a * b
        q = Fraction(a) / Fraction(b)
        return q.numerator if q.denominator == 1 else q

    def _render(self, side: str, which: int) -> str:
        def wrap(child: Expr, is_right: bool) -> str:
            text = getattr(child, side)()
            tight = child.prec < self.prec or (is_right and child.prec == self.prec and self.op in "-/")
            return f"({text})" if tight else text
        return wrap(self.left, False) + self._SHOW[self.op][which] + wrap(self.right, True)

    def formula(self) -> str:
        return self._render("formula", 0)

    def substituted(self) -> str:
        return self._render("substituted", 1)

    def symbols(self):
        return {**self.left.symbols(), **self.right.symbols()}


class Pow(Expr):
    prec = 3

    def __init__(self, base: Expr, exponent: int):
        if exponent not in _SUPERSCRIPT:
            raise ValueError("only squares and cubes are written as powers")
        self.base, self.exponent = base, exponent

    @property
    def value(self):
        return self.base.value ** self.exponent

    def _render(self, text: str, base: Expr) -> str:
        if base.prec < self.prec:
            text = f"({text})"
        return text + _SUPERSCRIPT[self.exponent]

    def formula(self):
        return self._render(self.base.formula(), self.base)

    def substituted(self):
        return self._render(self.base.substituted(), self.base)

    def symbols(self):
        return self.base.symbols()


# -- floating-point nodes (value computed exactly as Python evaluates the substituted text) -------------------
class Sqrt(Expr):
    """√(base): formula ``√(2 · L)``, substituted ``(2 × 4) ** 0.5``."""
    prec = 4

    def __init__(self, base: Expr):
        self.base = base

    @property
    def value(self):
        return self.base.value ** 0.5

    def formula(self) -> str:
        return f"√({self.base.formula()})"

    def substituted(self) -> str:
        return f"({self.base.substituted()}) ** 0.5"

    def symbols(self):
        return self.base.symbols()


class Exp(Expr):
    """exp(arg), e.g. ``exp(-x)`` -> ``exp(-10)``."""
    prec = 4

    def __init__(self, arg: Expr):
        self.arg = arg

    @property
    def value(self):
        return math.exp(self.arg.value)

    def formula(self) -> str:
        return f"exp({self.arg.formula()})"

    def substituted(self) -> str:
        return f"exp({self.arg.substituted()})"

    def symbols(self):
        return self.arg.symbols()


class Neg(Expr):
    prec = 4

    def __init__(self, arg: Expr):
        self.arg = arg

    @property
    def value(self):
        return -self.arg.value

    def _wrap(self, text: str) -> str:
        return f"-{text}" if self.arg.prec >= 4 else f"-({text})"

    def formula(self) -> str:
        return self._wrap(self.arg.formula())

    def substituted(self) -> str:
        return self._wrap(self.arg.substituted())

    def symbols(self):
        return self.arg.symbols()


class RealDiv(Expr):
    """a / b in floating point (expr's own ``/`` is exact rational arithmetic, which floats would not match)."""
    prec = 2

    def __init__(self, left: Expr, right: Expr):
        self.left, self.right = left, right

    @property
    def value(self):
        return self.left.value / self.right.value

    def _render(self, side: str) -> str:
        left, right = getattr(self.left, side)(), getattr(self.right, side)()
        if self.left.prec < self.prec:
            left = f"({left})"
        if self.right.prec <= self.prec:
            right = f"({right})"
        return f"{left} / {right}"

    def formula(self) -> str:
        return self._render("formula")

    def substituted(self) -> str:
        return self._render("substituted")

    def symbols(self):
        return {**self.left.symbols(), **self.right.symbols()}


def lift(x) -> Expr:
    return x if isinstance(x, Expr) else Const(x)


def total(terms: list[Expr]) -> Expr:
    """Left-folded sum of several terms (keeps the order the learner reads them in)."""
    out = lift(terms[0])
    for t in terms[1:]:
        out = out + t
    return out


def to_python(substituted: str) -> str:
    """The substituted form as Python source: 'x' -> '*', '²' -> '**2', digit-group commas dropped."""
    src = substituted.replace("×", "*").replace("·", "*").replace("²", "**2").replace("³", "**3")
    return src.replace(",", "")


_LITERAL = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:e-?\d+)?)(?![\w.])")


def evaluate(substituted: str, exact: bool = True):
    """Evaluate a substituted form in Python: exactly (every literal a Fraction) for counts and ratios, or in
    floating point (math.exp available) for the few float-valued numbers. Tests compare the result with .value."""
    src = to_python(substituted)
    if not exact:
        return eval(src, {"__builtins__": {}, "exp": math.exp})
    value = eval(_LITERAL.sub(r"Fraction('\1')", src), {"__builtins__": {}, "Fraction": Fraction})
    return value.numerator if isinstance(value, Fraction) and value.denominator == 1 else value
