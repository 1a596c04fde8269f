"""A widget's stored data: a derived file in data/ (the precomputed runs, the measured step: experiments/train/
derived.py lists them with the command that makes each), or the widget's own option error naming that command."""
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
