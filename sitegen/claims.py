"""Claims: the relations a lesson's prose relies on, written next to that prose and checked at build time.

A sentence that compares or equates numbers (正好, 等于, 反而, 超过, 不到, 越…越…, "N 倍" ...) is followed by a
claim, a MyST-style inline role holding one expression over number names:

    FFN 一家就占了 {pct}`anchor.ffn_share_total`。{claim}`anchor.ffn_share_total > 1/2`
    宽的和窄的正好抵消。{claim}`c4.anchor_attn_matrices == c4.anchor_attn_4d2`
    d 越大，零头越小。{claim}`decreasing(ffn.align_error.d4096, ffn.align_error.d5120, ffn.align_error.d8192)`

The expression language is deliberately tiny (parsed with `ast`, never eval'd): number names (dotted, as in
{n}`...`), integer and decimal literals (exact: 0.6 is Fraction(3, 5)), + - * / and unary minus, parentheses,
comparisons == != < <= > >= (chains allowed: `3 <= x < 4`), `and`, and the functions increasing(...),
decreasing(...) (strictly monotonic, for 越…越…), abs, min, max. Names resolve to experiments.numbers.Number.value
of the page's numbers: the very values the page prints.

A claim renders as nothing. Checking happens in a core rule that runs once per parse: an unknown name or a
malformed expression is a LessonError like an unknown number reference; a false claim is a LessonError

    lessons/FILE.md:LINE: claim failed: <as written> (left = …, right = …)

so the build stops before writing anything. Every claim checked is appended to ``page.claims`` (the change
report counts them).
"""
from __future__ import annotations

import ast
import difflib
import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any, cast

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from mdit_py_plugins.myst_role import myst_role_plugin

from experiments.numbers import exact_text

ROLE = "claim"
TOKEN = "course_claim"

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_COMPARE = {ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne), ast.Lt: ("<", operator.lt),
            ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt), ast.GtE: (">=", operator.ge)}


def _increasing(*xs):
    return all(a < b for a, b in zip(xs, xs[1:]))


def _decreasing(*xs):
    return all(a > b for a, b in zip(xs, xs[1:]))


FUNCTIONS: dict[str, Callable[..., Any]] = {"increasing": _increasing, "decreasing": _decreasing, "abs": abs,
                                             "min": min, "max": max}


class ClaimSyntaxError(ValueError):
    """The claim is not an expression of the claim language."""


class UnknownName(KeyError):
    """The claim names a number the page does not have."""


# -- the expression language -----------------------------------------------------------------------------------
MAX_CLAIM_CHARS = 4_000   # the longest claim in the lessons is under 600 characters
MAX_CLAIM_DEPTH = 100     # nested parentheses, operators, calls, terms of a sum; a real claim nests a handful


def parse(text: str) -> ast.expr:
    """The claim's syntax tree, checked to use only the claim language (ClaimSyntaxError otherwise). Python's
    parser and the checks below recurse, so a claim is bounded first: its length, then (iteratively) how deeply
    its tree nests; a deeper one is refused before anything walks it."""
    text = text.strip()
    if len(text) > MAX_CLAIM_CHARS:
        raise ClaimSyntaxError(f"too long ({len(text):,} characters; at most {MAX_CLAIM_CHARS:,})")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise ClaimSyntaxError(f"not an expression ({e.msg})") from None
    except (RecursionError, MemoryError):   # the parser's own limits on nesting
        raise ClaimSyntaxError(f"nested too deeply (at most {MAX_CLAIM_DEPTH} levels)") from None
    depth = _depth(tree)
    if depth > MAX_CLAIM_DEPTH:
        raise ClaimSyntaxError(f"nested too deeply ({depth:,} levels; at most {MAX_CLAIM_DEPTH})")
    _check(tree)
    return tree


def _depth(tree: ast.AST) -> int:
    """How deeply a syntax tree nests, walked with an explicit stack (no recursion)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _check(node: ast.AST) -> None:
    if isinstance(node, (ast.Name, ast.Attribute)):
        dotted_name(node)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ClaimSyntaxError(f"only numbers may be written as literals, not {node.value!r}")
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        _check(node.operand)
    elif isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        for child in (node.left, *node.comparators):
            _check(child)
    elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for child in node.values:
            _check(child)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS \
            and not node.keywords and node.args:
        for child in node.args:
            _check(child)
    else:
        allowed = "number names, numbers, + - * /, == != < <= > >=, and, " + ", ".join(f"{f}(...)" for f in FUNCTIONS)
        raise ClaimSyntaxError(f"{ast.unparse(node)!r} is not allowed (allowed: {allowed})")


def dotted_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted_name(node.value)}.{node.attr}"
    raise ClaimSyntaxError(f"{ast.unparse(node)!r} is not a number name")


def names(tree: ast.AST) -> list[str]:
    """Every number name the claim uses, in order (function names excluded)."""
    out: list[str] = []

    def walk(node):
        if isinstance(node, (ast.Name, ast.Attribute)):
            out.append(dotted_name(node))
        elif isinstance(node, ast.Call):
            for a in node.args:
                walk(a)
        else:
            for child in ast.iter_child_nodes(node):
                walk(child)
    walk(tree)
    return out


def claim_names(text: str) -> list[str]:
    """The number names a claim as written uses ([] if it does not parse: the build reports that elsewhere)."""
    try:
        return names(parse(text))
    except (ClaimSyntaxError, SyntaxError):
        return []


def value(node: ast.AST, values: dict):
    """The exact value of an arithmetic node (ints and Fractions stay exact; floats only from float numbers)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return values[dotted_name(node)]
    if isinstance(node, ast.Constant):
        return Fraction(str(node.value)) if isinstance(node.value, float) else node.value
    if isinstance(node, ast.UnaryOp):
        return -value(node.operand, values)
    if isinstance(node, ast.BinOp):
        left, right = value(node.left, values), value(node.right, values)
        if isinstance(node.op, ast.Div) and not isinstance(left, float) and not isinstance(right, float):
            return Fraction(left) / Fraction(right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        return FUNCTIONS[cast(ast.Name, node.func).id](*(value(a, values) for a in node.args))   # (_check: a name)
    if isinstance(node, ast.Compare):
        return compare(node, values)[0]
    if isinstance(node, ast.BoolOp):
        return all(value(v, values) for v in node.values)
    raise ClaimSyntaxError(f"cannot evaluate {ast.unparse(node)!r}")


def compare(node: ast.Compare, values: dict) -> tuple[bool, list]:
    operands = [value(n, values) for n in (node.left, *node.comparators)]
    ok = all(_COMPARE[type(op)][1](a, b) for op, a, b in zip(node.ops, operands, operands[1:]))
    return ok, operands


def show(x) -> str:
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, (int, Fraction, float)):
        return exact_text(x).removeprefix("≈ ")
    return str(x)


def evaluate(text: str, numbers) -> tuple[bool, str]:
    """(holds, the values that decided it) for one claim over `numbers` (name -> Number or plain value).

    Raises ClaimSyntaxError for a malformed claim and UnknownName for a name not in `numbers`."""
    tree = parse(text)
    missing = [n for n in names(tree) if n not in numbers]
    if missing:
        raise UnknownName(missing[0])
    values = {n: getattr(numbers[n], "value", numbers[n]) for n in names(tree)}
    if isinstance(tree, ast.Compare):
        ok, operands = compare(tree, values)
        if len(operands) == 2:
            return ok, f"left = {show(operands[0])}, right = {show(operands[1])}"
        return ok, "values = " + ", ".join(show(o) for o in operands)
    if isinstance(tree, ast.Call):
        args = [value(a, values) for a in tree.args]
        return bool(FUNCTIONS[cast(ast.Name, tree.func).id](*args)), "values = " + ", ".join(show(a) for a in args)
    if isinstance(tree, ast.BoolOp):
        parts = []
        for v in tree.values:
            ok, why = evaluate(ast.unparse(v), numbers)
            if not ok:
                return False, f"{ast.unparse(v)} fails: {why}"
            parts.append(why)
        return True, "; ".join(parts)
    raise ClaimSyntaxError("a claim must be a comparison (==, !=, <, <=, >, >=), an `and` of comparisons, "
                           "or increasing(...) / decreasing(...)")


# -- the markdown-it plugin ------------------------------------------------------------------------------------
def claims_plugin(md: MarkdownIt) -> None:
    """{claim}`expr` -> checked at parse time against env["page"].numbers, rendered as nothing."""
    if "myst_role" not in [r.name for r in md.inline.ruler.__rules__]:
        md.use(myst_role_plugin)
    names_of_core = [r.name for r in md.core.ruler.__rules__]
    if "course_numbers" in names_of_core:      # turn claim roles into their own tokens before numbers resolve
        md.core.ruler.before("course_numbers", "course_claims", _check_claims)
    else:
        md.core.ruler.push("course_claims", _check_claims)
    md.add_render_rule(TOKEN, lambda self, tokens, idx, options, env: "")


def _children_with_lines(tokens):
    """(child, line) for every inline child; lines advance at soft and hard breaks."""
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        line = token.map[0] + 1 if token.map else 0
        for child in token.children:
            yield child, line
            line += child.content.count("\n") if child.type not in ("softbreak", "hardbreak") else 1


def _check_claims(state: StateCore) -> None:
    page = state.env.get("page")
    for child, line in list(_children_with_lines(state.tokens)):
        if child.type != "myst_role" or child.meta.get("name") != ROLE:
            continue
        child.type = TOKEN
        text = child.content.strip()
        if page is None:
            continue
        written = f"{{{ROLE}}}`{text if len(text) <= 120 else text[:100] + ' …'}`"
        try:
            parse(text)
        except ClaimSyntaxError as e:
            page.error(line, f"claim {written}: {e}")
            continue
        if page.numbers is None:      # the inputs already failed; the build reports those
            continue
        try:
            ok, why = evaluate(text, page.numbers)
        except UnknownName as e:
            close = difflib.get_close_matches(e.args[0], list(page.numbers), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            page.error(line, f"unknown number {e.args[0]!r} in {written}{hint}")
            continue
        except (ArithmeticError, TypeError, ValueError) as e:
            page.error(line, f"claim {written}: cannot evaluate ({e})")
            continue
        claims = getattr(page, "claims", None)
        if claims is not None:
            claims.append((line, text, ok))
        if not ok:
            page.error(line, f"claim failed: {text} ({why})")
