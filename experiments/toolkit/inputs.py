"""A learner's typed value -> an exact number, or a ValueError whose message (Chinese) names the field and what it
got. Ratios and decimals are read from their text (``'8/3'``, ``'3.35'``, a float via its repr) as exact
Fractions, so a calculator never carries a binary rounding error into a page.
"""
from __future__ import annotations

from fractions import Fraction


def got(value) -> str:
    """How a message names what the learner gave: 「abc」, an empty field as 空白."""
    text = str(value).strip() if value is not None else ""
    return f"「{text}」" if text else "空白"


def parse_fraction(value, what: str, low=Fraction(0), high=None, inclusive_low: bool = False,
                   example: str = "3.5") -> Fraction:
    """'8/3', '3.5', 4, 3.35 -> an exact Fraction (floats via their decimal text); range-checked. `example`: what
    the message suggests for this field (a ratio: 8/3、3.5; a bandwidth: 3.35)."""
    if isinstance(value, bool):
        raise ValueError(f"{what}：需要一个数（例如 {example}），得到{got(value)}")
    try:
        x = Fraction(str(value).strip()) if isinstance(value, (str, float)) else Fraction(value)
    except (ValueError, ZeroDivisionError, TypeError):
        raise ValueError(f"{what}：需要一个数（例如 {example}），得到{got(value)}") from None
    if (x < low) if inclusive_low else (x <= low):
        raise ValueError(f"{what}：需要大于{'等于' if inclusive_low else ''} {low} 的数，得到{got(value)}")
    if high is not None and x > high:
        raise ValueError(f"{what}：不能超过 {high}，得到{got(value)}")
    return x


def parse_int(value, what: str, low: int = 1, high: int = 10**7) -> int:
    """An integer in [low, high] from an int, an integral float or its text ('4096', '4,096' is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{what}：需要一个整数，得到{got(value)}")
    try:
        x = Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{what}：需要一个整数，得到{got(value)}") from None
    if x.denominator != 1 or not low <= x <= high:
        raise ValueError(f"{what}：需要 {low:,} 到 {high:,} 之间的整数，得到{got(value)}")
    return int(x)
