"""Widgets any lesson may use: the editable code cell (its behaviour is site/static/js/code-cell.js)."""
from __future__ import annotations

from ..widget import Lesson, Widget


def code_view(o: dict, data) -> dict:
    source = o["source"]
    if not isinstance(source, str) or not source.strip():
        raise data.option_error("source", "the Python to show (a YAML block: `source: |`)", source or None)
    return {"source": source.rstrip("\n"), "title": o["title"]}


LESSON = Lesson(
    widgets=(Widget("code", "code.html", "common:code_view", {"title": "页内实验", "source": ""},
                    script="code-cell.js"),),
    package="experiments.lessons",
)
