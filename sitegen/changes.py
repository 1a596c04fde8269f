"""The change report: which computed numbers moved since the previous build, and which pages show them.

Every build writes `_site/numbers.json`:

    {"anchor.total": {"value": "27781427952", "display": "27,781,427,952", "pages": ["c4-transformer-block.html"]}, ...}

(value is exact: an integer, or "p/q" for a fraction). The next build reads the previous file before replacing
the folder, compares, prints one line per difference and writes `_site/changes.json`:

    [{"name": "anchor.total", "old": "27781427952", "new": "27781432048", "pages": ["c4-transformer-block.html"]}]

A number that appears has old = null; one that disappears has new = null. A missing or unreadable previous
file means there is nothing to compare (first build): changes.json is [] and `previous` is None.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from experiments.numbers import exact, format_number

NUMBERS_FILE = "numbers.json"
CHANGES_FILE = "changes.json"


@dataclass(frozen=True)
class Change:
    name: str
    old: str | None
    new: str | None
    pages: list[str]

    def describe(self) -> str:
        where = f" (pages: {', '.join(self.pages)})" if self.pages else " (no page shows it)"
        if self.old is None:
            return f"added   {self.name} = {self.new}{where}"
        if self.new is None:
            return f"removed {self.name} (was {self.old}){where}"
        return f"changed {self.name}: {self.old} -> {self.new}{where}"


def snapshot(numbers: dict[str, Any], pages_by_name: dict[str, list[str]]) -> dict[str, dict]:
    """What numbers.json holds for this build: every computed number, sorted by name."""
    return {name: {"value": exact(n.value), "display": format_number(n), "pages": pages_by_name.get(name, [])}
            for name, n in sorted(numbers.items())}


def read_previous(out_dir: Path) -> dict[str, dict] | None:
    path = Path(out_dir) / NUMBERS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def compare(old: dict[str, dict] | None, new: dict[str, dict]) -> list[Change]:
    if old is None:
        return []
    changes = []
    for name in sorted(set(old) | set(new)):
        before = (old.get(name) or {}).get("value") if name in old else None
        after = new[name]["value"] if name in new else None
        if before != after or (name in old) != (name in new):
            pages = sorted(set((old.get(name) or {}).get("pages", [])) | set((new.get(name) or {}).get("pages", [])))
            changes.append(Change(name, before, after, pages))
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
        lines = [f"numbers: {len(changes)} changed since the previous build"] + ["  " + c.describe() for c in changes]
    if claims is not None:
        lines.append(f"claims: {claims} claims checked, all hold")
    return lines
