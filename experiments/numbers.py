"""A computed number with its derivation, and the ways lesson prose writes it.

A ``Number`` is what a lesson cites: its exact value, the expression it was computed from (formula in the
lesson's symbols and the same with the config's values substituted), the config files and keys it read, and, where
one exists, what it was checked against. ``format_number`` renders it the way the source documents write numbers:
27,781,427,952 · 61.6% · 1,100 万 · 278 亿 · 4.33B · 151.0M · 3.0 · 8.09 × 10²² (style e: scientific notation,
the same text experiments.format.sci gives, so prose and widgets write a quantity one way).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .expr import Expr
from .format import exact, exact_text, format_value


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
        out: dict[str, Any] = {"name": self.name, "label": self.label, "value": exact(self.value),
               "display": format_number(self, self.default_style), "sources": list(self.sources)}
        if self.expr is not None:
            out["formula"] = self.expr.formula()
            out["substituted"] = self.expr.substituted()
            out["where"] = {sym: {"value": exact(val), "key": self.symbols.get(sym, "")}
                            for sym, val in self.expr.symbols().items()}
        if self.check:
            out["check"] = self.check
        return out


def format_number(number: Number, style: str | None = None) -> str:
    return format_value(number.value, style or number.default_style)


def derivation_rows(number: Number, where: bool = False) -> list[dict]:
    """The lines that explain a number, as plain data (the build renders them to HTML, the browser to DOM nodes):
    label; formula; substituted form; value; [where: each symbol's value and config key]; sources; check.
    Each row is {"cls", "text"} plus "code" (a list shown as code) or "items" ([[text, key], ...])."""
    rows: list[dict[str, Any]] = [{"cls": "label", "text": number.label or number.name}]
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
        rows.append({"cls": f"check {state}", "text": "核对：" + number.check})
    return rows
