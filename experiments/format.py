"""Every way the course writes a number as text: the one formatting module.

Lesson prose, widget tables, popovers and the change report all format through here, at build time under CPython
and in the browser under Pyodide, so a number reads the same wherever it appears. Styles of ``format_value``
(the ``{n}`` role's styles): ``n`` 27,781,427,952 · ``pct`` 61.6% · ``wan`` 1,100 万 · ``yi`` 278 亿 · ``B`` 4.33B ·
``M`` 151.0M · ``x`` 3.0 · ``e`` 8.09 × 10²², each with an optional digit count (``pct0``, ``x2``). The helpers
below it (``gb``, ``ms``, ``sci``, ``shape_str`` ...) are the widgets' units.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

from .expr import group_digits

GB = 10**9


def exact(value) -> str:
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    return str(int(value)) if isinstance(value, Fraction) else str(value)


_STYLE = re.compile(r"^(n|pct|wan|yi|B|M|x|e)(\d?)$")
STYLES = ("n", "pct", "wan", "yi", "B", "M", "x", "e")


def valid_style(style: str) -> bool:
    return bool(_STYLE.match(style))


def _round_sig(x: float, sig: int) -> float:
    if x == 0:
        return 0.0
    from math import floor, log10
    return round(x, sig - 1 - floor(log10(abs(x))))


def format_value(value, style: str) -> str:
    m = _STYLE.match(style)
    if not m:
        raise ValueError(f"unknown number style {style!r}; expected one of {', '.join(STYLES)} (+ optional digits)")
    base, digits = m.group(1), m.group(2)
    x = float(value)
    if base == "n":
        if isinstance(value, Fraction) and value.denominator != 1:
            places = int(digits or 1)
            return f"{x:,.{places}f}"
        return group_digits(int(value))
    if base == "pct":
        return f"{x * 100:.{int(digits or 1)}f}%"
    if base == "wan":   # 万: rounded to `digits` significant figures (2 by default)
        return f"{_round_sig(x / 1e4, int(digits or 2)):,.0f} 万"
    if base == "yi":
        return f"{x / 1e8:,.{int(digits or 0)}f} 亿"
    if base == "B":
        return f"{x / 1e9:,.{int(digits or 2)}f}B"
    if base == "M":
        return f"{x / 1e6:,.{int(digits or 1)}f}M"
    if base == "e":
        return sci(value, int(digits or 2))
    return f"{x:,.{int(digits or 1)}f}"   # x: a plain ratio


SCI_BELOW = Fraction(1, 10**6)      # exact_text writes a value below this (in size) as mantissa × 10^exponent
SCI_FROM = 10**15                   # ... and a value that is not an integer from this size up


def exact_text(value) -> str:
    """An exact integer with digit groups; anything else to 6 significant digits, marked ≈: as a decimal between
    10⁻⁶ and 10¹⁵ (0.0000237742, 87,040.2), outside that as mantissa × 10^exponent (≈ 3.14159 × 10⁻³¹⁴), so a
    p-value of 10⁻³¹⁴ is not written as a decimal of three hundred zeros."""
    if isinstance(value, Fraction) and value.denominator == 1:
        value = value.numerator
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    as_float = float(value)
    if as_float.is_integer() and abs(as_float) < SCI_FROM:
        return f"{int(as_float):,}"
    size = abs(Fraction(repr(value)) if isinstance(value, float) else value)
    if size < SCI_BELOW or size >= SCI_FROM:
        mant, times, power = sci(value, 5).partition(" × ")
        return "≈ " + mant.rstrip("0").rstrip(".") + times + power
    places = max(0, 5 - math.floor(math.log10(abs(as_float))))
    return "≈ " + f"{as_float:,.{places}f}".rstrip("0").rstrip(".")


def n(v: int) -> str:
    return f"{int(v):,}"


def pct(x, digits: int = 1) -> str:
    return format_value(Fraction(x), f"pct{digits}")


def signed_pct(x, digits: int = 2) -> str:
    x = Fraction(x)
    text = format_value(abs(x), f"pct{digits}")
    return ("+" if x > 0 else "−" if x < 0 else "±") + text


def fixed(x, digits: int = 1) -> str:
    return format_value(Fraction(x), f"x{digits}")


def gb(nbytes) -> str:
    """Bytes as decimal GB (10⁹ bytes): one decimal from 10 GB up, two below."""
    x = Fraction(nbytes, 1) / GB
    return format_value(x, "x1" if x >= 10 else "x2") + " GB"


def ms(seconds) -> str:
    x = Fraction(seconds) * 1000
    return format_value(x, "x2" if x < 100 else "x1") + " ms"


def per_second(rate) -> str:
    x = Fraction(rate)
    return format_value(x, "x0" if x >= 100 else "x1")


_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(value, digits: int = 2) -> str:
    """A value as mantissa × 10^exponent (8.09 × 10²², 1 × 10⁻⁶; the ``e`` style); floats are read as their decimal
    text and the exponent is found with exact arithmetic."""
    x = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    if x == 0:
        return "0"
    sign, x = ("-" if x < 0 else ""), abs(x)
    e = len(str(x.numerator)) - len(str(x.denominator))
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    mant = f"{float(x / Fraction(10) ** e):.{digits}f}"
    if mant.startswith("10"):
        e += 1
        mant = f"{float(x / Fraction(10) ** e):.{digits}f}"
    return f"{sign}{mant} × 10{str(e).translate(_SUPER)}"


def trim_decimal(x) -> str:
    """An exact value without trailing zeros: 10 -> '10', 5/2 -> '2.5', 1/3 -> '0.333333'."""
    x = Fraction(x)
    if x.denominator == 1:
        return n(x)
    return f"{float(x):,.6f}".rstrip("0").rstrip(".")


def ratio_text(r: Fraction) -> str:
    return f"{r.numerator}/{r.denominator}" if r.denominator != 1 else str(r.numerator)


def signed(v: int) -> str:
    """+11,017,952 / −10,923,802,880 (a real minus sign) / 0."""
    return "0" if v == 0 else ("+" if v > 0 else "−") + f"{abs(v):,}"


def share(num: int, den: int) -> str:
    """num / den as a percentage with one decimal; "—" when there is nothing to divide by."""
    return format_value(Fraction(num, den), "pct") if den else "—"


def shape_str(shape) -> str:
    """A tensor shape the way Python prints a tuple: (5,), (5, 5120). No digit groups inside a shape: a comma
    there would read as one more dimension."""
    dims = [str(int(s)) for s in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
