"""Tiny symbolic arithmetic: one expression tree gives a value, its formula and its substituted form.

Every number the course shows is computed by evaluating one of these trees, so the formula a learner sees
(``3 · L · d · d_ff``), the same formula with the config's values substituted (``3 × 64 × 5,120 × 17,408``) and
the value itself (17,112,760,320) can never disagree. ``to_python(expr.substituted())`` is plain Python that
evaluates to ``expr.value``; tests use exactly that.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
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
    """A node. ``prec`` is how tightly its text binds (1: + -, 2: · /, 2.5: a leading minus, 3: a power, 4: a name,
    number or call, as in Python); a parent parenthesises a child that binds less tightly than itself.
    ``_render(side)`` writes the node from its children's ``formula`` or ``substituted`` text; ``children`` supply
    the symbols."""
    prec = 9
    children: tuple = ()

    @property
    def value(self):
        raise NotImplementedError

    def _render(self, side: str) -> str:
        raise NotImplementedError

    def formula(self) -> str:
        return self._render("formula")

    def substituted(self) -> str:
        return self._render("substituted")

    def side_prec(self, side: str) -> float:
        """How tightly the text written for one side binds: ``prec``, except where the text says otherwise (a number
        p/q binds as a division, a negative number as a minus sign, a substituted √ as the ``** 0.5`` it is)."""
        return self.prec

    def symbols(self) -> dict[str, object]:
        """Symbol name -> value for every symbol used (for the derivation's 'where' line)."""
        out: dict[str, object] = {}
        for child in self.children:
            out.update(child.symbols())
        return out

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


def _number_text(value) -> str:
    """A number as written in a substituted form: digit groups, and a float with every digit Python needs to read
    it back (group_digits' 10 significant digits where those suffice, so the usual short forms stay)."""
    text = group_digits(value)
    if isinstance(value, float) and math.isfinite(value) and float(text.replace(",", "")) != value:
        text = f"{value:,}"
    return text


def _number_prec(text: str) -> float:
    """How tightly a number's text binds: 'p/q' as a division, '-x' as a minus sign, any other as a name."""
    if "/" in text:
        return 2
    return 2.5 if text.startswith("-") else 4


class Const(Expr):
    prec = 4

    def __init__(self, value):
        self._value = value

    @property
    def value(self):
        return self._value

    def _render(self, side: str) -> str:
        return _number_text(self._value)

    def side_prec(self, side: str) -> float:
        return _number_prec(self.formula())


class Sym(Expr):
    """A named quantity: a config value (``d``) or a computed part (``FFN``)."""
    prec = 4

    def __init__(self, name: str, value):
        self.name, self._value = name, value

    @property
    def value(self):
        return self._value

    def _render(self, side: str) -> str:
        return self.name if side == "formula" else _number_text(self._value)

    def side_prec(self, side: str) -> float:
        return _number_prec(self.substituted()) if side == "substituted" else self.prec

    def symbols(self):
        return {self.name: self._value}


class _Infix(Expr):
    """A binary operator written between its operands: parenthesise the left operand when it binds less tightly,
    the right one also when it binds equally and the operator is not associative (- and /)."""
    _SHOW: dict[str, tuple[str, str]] = {}

    def __init__(self, op: str, left: Expr, right: Expr):
        self.op, self.left, self.right = op, left, right
        self.children = (left, right)

    def _render(self, side: str) -> str:
        def wrap(child: Expr, is_right: bool) -> str:
            text, prec = getattr(child, side)(), child.side_prec(side)
            tight = prec < self.prec or (is_right and prec == self.prec and self.op in "-/")
            return f"({text})" if tight else text
        return wrap(self.left, False) + self._SHOW[self.op][side == "substituted"] + wrap(self.right, True)


class BinOp(_Infix):
    _PREC = {"+": 1, "-": 1, "*": 2, "/": 2}
    _SHOW = {"+": (" + ", " + "), "-": (" - ", " - "), "*": (" · ", " × "), "/": (" / ", " / ")}

    def __init__(self, op: str, left: Expr, right: Expr):
        super().__init__(op, left, right)
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


class _Unary(Expr):
    """A node of one operand, written around it."""

    def __init__(self, arg: Expr):
        self.arg = arg
        self.children = (arg,)


class Pow(_Unary):
    prec = 3

    def __init__(self, base: Expr, exponent: int):
        if exponent not in _SUPERSCRIPT:
            raise ValueError("only squares and cubes are written as powers")
        super().__init__(base)
        self.base, self.exponent = base, exponent

    @property
    def value(self):
        return self.base.value ** self.exponent

    def _render(self, side: str) -> str:
        text = getattr(self.base, side)()
        if self.base.side_prec(side) <= self.prec:          # (c²)³, (-3)², ((16) ** 0.5)², (2/3)²
            text = f"({text})"
        return text + _SUPERSCRIPT[self.exponent]


# -- floating-point nodes (value computed exactly as Python evaluates the substituted text) -------------------
class Sqrt(_Unary):
    """√(base): formula ``√(2 · L)``, substituted ``(2 × 4) ** 0.5``."""
    prec = 4

    @property
    def value(self):
        return self.arg.value ** 0.5

    def _render(self, side: str) -> str:
        text = getattr(self.arg, side)()
        return f"√({text})" if side == "formula" else f"({text}) ** 0.5"

    def side_prec(self, side: str) -> float:
        return self.prec if side == "formula" else Pow.prec


class Exp(_Unary):
    """exp(arg), e.g. ``exp(-x)`` -> ``exp(-10)``."""
    prec = 4

    @property
    def value(self):
        return math.exp(self.arg.value)

    def _render(self, side: str) -> str:
        return f"exp({getattr(self.arg, side)()})"


class Neg(_Unary):
    prec = 4            # '-a · b' and 'c - -b' read as meant; a power of it is parenthesised by side_prec

    @property
    def value(self):
        return -self.arg.value

    def _render(self, side: str) -> str:
        text = getattr(self.arg, side)()
        return f"-{text}" if self.arg.side_prec(side) >= 4 else f"-({text})"

    def side_prec(self, side: str) -> float:
        return 2.5


class RealDiv(_Infix):
    """a / b in floating point (expr's own ``/`` is exact rational arithmetic, which floats would not match)."""
    prec = 2
    _SHOW = {"/": (" / ", " / ")}

    def __init__(self, left: Expr, right: Expr):
        super().__init__("/", left, right)

    @property
    def value(self):
        return self.left.value / self.right.value


def lift(x) -> Expr:
    return x if isinstance(x, Expr) else Const(x)


def total(terms: Sequence[Expr]) -> Expr:
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
