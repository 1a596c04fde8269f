"""A computed number with its derivation, and the ways lesson prose writes it.

A ``Number`` is what a lesson cites: its exact value, the expression it was computed from (formula in the
lesson's symbols and the same with the config's values substituted), the config files and keys it read, and, where
one exists, what it was checked against. ``format_number`` renders it the way the source documents write numbers:
27,781,427,952 · 61.6% · 1,100 万 · 278 亿 · 4.33B · 151.0M · 3.0 · 8.09 × 10²² (style e: scientific notation,
the same text experiments.ffn.sci gives, so prose and widgets write a quantity one way).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from .expr import Expr, group_digits


@dataclass(frozen=True)
class Number:
    name: str
    value: int | Fraction | float
    label: str
    expr: Expr | None = None
    sources: tuple[str, ...] = ()
    check: str | None = None
    kind: str = "count"            # count / ratio / flops / bytes / tokens
    default_style: str = "n"
    symbols: dict = field(default_factory=dict)   # symbol -> config key it came from

    def derivation(self) -> dict:
        """JSON-ready derivation: what the popover and the 数字口径 section show."""
        out = {"name": self.name, "label": self.label, "value": exact(self.value),
               "display": format_number(self, self.default_style), "sources": list(self.sources)}
        if self.expr is not None:
            out["formula"] = self.expr.formula()
            out["substituted"] = self.expr.substituted()
            out["where"] = {sym: {"value": exact(val), "key": self.symbols.get(sym, "")}
                            for sym, val in self.expr.symbols().items()}
        if self.check:
            out["check"] = self.check
        return out


def exact(value) -> str:
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    return str(int(value)) if isinstance(value, Fraction) else str(value)


_STYLE = re.compile(r"^(n|pct|wan|yi|B|M|x|e)(\d?)$")
STYLES = ("n", "pct", "wan", "yi", "B", "M", "x", "e")
_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(value, digits: int = 2) -> str:
    """A nonzero value as mantissa × 10^exponent (8.09 × 10²², 1 × 10⁻⁶); floats are read as their decimal text,
    the exponent is found with exact arithmetic."""
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
        return scientific(value, int(digits or 2))
    return f"{x:,.{int(digits or 1)}f}"   # x: a plain ratio


def format_number(number: Number, style: str | None = None) -> str:
    return format_value(number.value, style or number.default_style)


def exact_text(value) -> str:
    """An exact integer with digit groups; anything else to 6 significant digits (never e-notation), marked ≈."""
    if isinstance(value, Fraction) and value.denominator == 1:
        value = value.numerator
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    as_float = float(value)
    if as_float.is_integer() and abs(as_float) < 1e15:
        return f"{int(as_float):,}"
    places = max(0, 5 - math.floor(math.log10(abs(as_float))))
    return "≈ " + f"{as_float:,.{places}f}".rstrip("0").rstrip(".")


def derivation_rows(number: Number, where: bool = False) -> list[dict]:
    """The lines that explain a number, as plain data (the build renders them to HTML, the browser to DOM nodes):
    label; formula; substituted form; value; [where: each symbol's value and config key]; sources; check.
    Each row is {"cls", "text"} plus "code" (a list shown as code) or "items" ([[text, key], ...])."""
    rows = [{"cls": "label", "text": number.label or number.name}]
    value = exact_text(number.value)
    if number.expr is not None:
        shown = set()
        for cls, text in (("formula", number.expr.formula()), ("subst", number.expr.substituted())):
            if text not in shown and text != value:
                rows.append({"cls": cls, "text": f"= {text}"})
                shown.add(text)
    rows.append({"cls": "value", "text": value if value.startswith("≈") else f"= {value}"})
    keys = number.symbols or {}
    if where and number.expr is not None and any(keys.get(sym) for sym in number.expr.symbols()):
        rows.append({"cls": "where", "text": "其中 ",
                     "items": [[f"{sym} = {exact_text(val)}", keys.get(sym, "")]
                               for sym, val in number.expr.symbols().items()]})
    if number.sources:
        rows.append({"cls": "sources", "text": "来源：", "code": list(number.sources)})
    if number.check:
        state = "bad" if "✗" in number.check else "ok"
        rows.append({"cls": f"check drv-check-{state}", "text": "核对：" + number.check})
    return rows
