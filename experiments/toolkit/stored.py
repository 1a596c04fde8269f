"""Stored data: a derived file in data/ (the precomputed runs, the measured step: experiments/train/derived.py lists
them with the command that makes each), or an error naming that command: the widget's own option error (stored),
a CourseError for a lesson's numbers (document)."""
from __future__ import annotations

from typing import Any


def stored(data, name: str) -> Any:
    """data/<name>.json as the build read it (data: the widget's WidgetData); refused, naming the command that
    makes it, when it is missing or empty."""
    from ..train.derived import derived
    doc = getattr(data, name)
    if not doc:
        output = f"data/{name}.json"
        raise data.option_error("data", f"{output} (make it with: {derived(output).command})")
    return doc


def document(data: dict | None, name: str) -> Any:
    """data/<name>.json from the build's data documents (a lesson's numbers), or the CourseError naming the command
    that makes it when it is missing or empty."""
    from ..errors import CourseError
    from ..train.derived import derived
    doc = (data or {}).get(name)
    if not doc:
        output = f"data/{name}.json"
        raise CourseError(f"{output}: missing or empty; make it with: {derived(output).command}")
    return doc
