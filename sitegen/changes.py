"""The change report: which computed numbers moved since the previous build, shown as the pages show them.

Every use of a number on a page is rendered as `<span class="num" tabindex="0" aria-describedby="num-NAME"
data-style="STYLE">` (sitegen/markdown.py number_html). mark_uses, the last step of a page, records each use and
gives it an id, `use-NAME-K` (K counts that number's uses on that page from 1), in place of data-style (which only
the build reads; numbers.json keeps it per use), so that a link `page.html#use-NAME-K` lands on that very place,
highlighted by `.num:target` in course.css:

    <span class="num" tabindex="0" aria-describedby="num-NAME" id="use-NAME-K">

Every build writes `_site/numbers.json`:

    {"anchor.total": {"value": "27781427952", "display": "27,781,427,952", "label": "...",
                      "pages": ["c4-transformer-block.html"],
                      "uses": [{"page": "c4-transformer-block.html", "id": "use-anchor.total-1", "style": "n"}]}}

(value is exact: an integer, or "p/q" for a fraction). The next build reads the previous file before replacing
the folder, compares, and reports each difference in the page's own format, in three places:
- the terminal: `changed anchor.classic_short: 23% -> 22% (c4-transformer-block.html: 2 places)`;
- `_site/changes.json`: one object per change, `old` / `new` exact, `shown` the page formats
  ([{"style", "old", "new"}]), `pages`, `uses` (page, id), `claims` (see below);
- `_site/changes.html` (not linked from the course): one row per change, a link to every place.

A number that appears has old = null; one that disappears has new = null. A missing or unreadable previous
file means there is nothing to compare (first build): changes.json is [] and `previous` is None.

Claims: compare() takes an optional list of claims, each {"id", "text", "page"?, "numbers": [names]}; a change
lists the ids (lessons/FILE.md:LINE) and texts of the claims that name its number; the build passes every claim
of every lesson.
"""
from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from experiments.numbers import exact, format_number, format_value

NUMBERS_FILE = "numbers.json"
CHANGES_FILE = "changes.json"
CHANGES_PAGE = "changes.html"
_NUM_SPAN = re.compile(r'<span class="num" tabindex="0" aria-describedby="num-(?P<name>[^"]+)" '
                       r'data-style="(?P<style>[^"]*)">')


@dataclass(frozen=True)
class Change:
    name: str
    old: str | None
    new: str | None
    pages: list[str]
    label: str = ""
    shown: list[dict] = field(default_factory=list)   # [{"style", "old", "new"}]: as the pages show it
    uses: list[dict] = field(default_factory=list)    # [{"page", "id"}]: every place on a page
    claims: list[dict] = field(default_factory=list)  # [{"id", "text"}]: claims that name the number

    def places(self) -> str:
        if not self.pages:
            return "no page shows it"
        counts = {page: sum(u["page"] == page for u in self.uses) for page in self.pages}
        return ", ".join(f"{page}: {n} place{'s' if n != 1 else ''}" for page, n in counts.items())

    def shown_text(self) -> str:
        parts = [f"{s['old'] or '—'} -> {s['new'] or '—'}" for s in self.shown]
        text = "; ".join(parts)
        if self.old is not None and self.new is not None and all(s["old"] == s["new"] for s in self.shown):
            text += f" (same as shown; exact {self.old} -> {self.new})"
        return text

    def describe(self) -> str:
        where = f" ({self.places()})"
        claims = f"; claims: {', '.join(c['id'] for c in self.claims)}" if self.claims else ""
        if self.old is None:
            return f"added   {self.name} = {self.shown[0]['new'] if self.shown else self.new}{where}{claims}"
        if self.new is None:
            return f"removed {self.name} (was {self.shown[0]['old'] if self.shown else self.old}){where}{claims}"
        return f"changed {self.name}: {self.shown_text()}{where}{claims}"


# -- where each number is used ---------------------------------------------------------------------------------
def use_id(name: str, k: int) -> str:
    return f"use-{name}-{k}"


def mark_uses(page_html: str, page: str) -> tuple[str, list[dict]]:
    """The page with an id on every number span, and its uses in page order: [{"name", "page", "id", "style"}]."""
    uses: list[dict] = []
    counts: dict[str, int] = {}

    def add_id(m: re.Match) -> str:
        name = html.unescape(m.group("name"))
        counts[name] = counts.get(name, 0) + 1
        uses.append({"name": name, "page": page, "id": use_id(name, counts[name]), "style": m.group("style")})
        return m.group(0).removesuffix(f' data-style="{m.group("style")}">') + f' id="{html.escape(uses[-1]["id"])}">'

    return _NUM_SPAN.sub(add_id, page_html), uses


# -- numbers.json and the comparison ---------------------------------------------------------------------------
def snapshot(numbers: dict[str, Any], uses: Iterable[dict]) -> dict[str, dict]:
    """What numbers.json holds for this build: every computed number, sorted by name, with its uses."""
    by_name: dict[str, list[dict]] = {}
    for use in uses:
        by_name.setdefault(use["name"], []).append({k: use[k] for k in ("page", "id", "style")})
    out = {}
    for name, n in sorted(numbers.items()):
        used = by_name.get(name, [])
        out[name] = {"value": exact(n.value), "display": format_number(n), "label": n.label,
                     "default_style": n.default_style, "pages": list(dict.fromkeys(u["page"] for u in used)),
                     "uses": used}
    return out


def read_previous(out_dir: Path) -> dict[str, dict] | None:
    path = Path(out_dir) / NUMBERS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _as_value(text: str | None):
    """An exact value back from numbers.json ("123", "p/q", "0.5")."""
    if text is None:
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def _show(value_text: str | None, style: str, fallback: str | None) -> str | None:
    value = _as_value(value_text)
    if value is None:
        return fallback if value_text is not None else None
    try:
        return format_value(value, style)
    except (ValueError, TypeError, OverflowError):
        return fallback


def _styles(old: dict, new: dict) -> list[str]:
    """The styles the pages show the number in (first use first), else its default style."""
    styles = [u.get("style") for u in (new.get("uses") or old.get("uses") or []) if u.get("style")]
    styles = list(dict.fromkeys(styles))
    return styles or [new.get("default_style") or old.get("default_style") or "n"]


def compare(old: dict[str, dict] | None, new: dict[str, dict], claims: list[dict] | None = None) -> list[Change]:
    if old is None:
        return []
    changes = []
    for name in sorted(set(old) | set(new)):
        before = (old.get(name) or {}).get("value") if name in old else None
        after = new[name]["value"] if name in new else None
        if before == after and (name in old) == (name in new):
            continue
        o, n = old.get(name) or {}, new.get(name) or {}
        pages = list(dict.fromkeys([*(n.get("pages") or []), *(o.get("pages") or [])]))
        uses = [{"page": u["page"], "id": u["id"]} for u in n.get("uses") or []]   # places that exist now
        shown = [{"style": s, "old": _show(before, s, o.get("display")), "new": _show(after, s, n.get("display"))}
                 for s in _styles(o, n)]
        about = [{"id": c.get("id"), "text": c.get("text", "")} for c in claims or [] if name in c.get("numbers", ())]
        changes.append(Change(name, before, after, pages, n.get("label") or o.get("label") or "", shown, uses, about))
    return changes


def as_json(changes: list[Change]) -> str:
    return json.dumps([asdict(c) for c in changes], ensure_ascii=False, indent=1) + "\n"


def snapshot_json(snap: dict[str, dict]) -> str:
    return json.dumps(snap, ensure_ascii=False, indent=1) + "\n"


def summary(changes: list[Change], previous_existed: bool, claims: int | None = None) -> list[str]:
    """The report's lines; `claims` (how many {claim}s the lessons checked, all true) adds a last line."""
    if not previous_existed:
        lines = ["numbers: no previous numbers.json to compare with (first build)"]
    elif not changes:
        lines = ["numbers: unchanged since the previous build"]
    else:
        lines = ([f"numbers: {len(changes)} changed since the previous build (every place: {CHANGES_PAGE})"]
                 + ["  " + c.describe() for c in changes])
    if claims is not None:
        lines.append(f"claims: {claims} claims checked, all hold")
    return lines


def render_page(env, changes: list[Change], previous_existed: bool, pages: dict[str, str]) -> str:
    """_site/changes.html: one row per change, a link to every place it is used (pages: file -> title)."""
    return env.get_template("changes.html").render(changes=changes, previous_existed=previous_existed,
                                                   titles=pages, scripts=[], calls=[])
