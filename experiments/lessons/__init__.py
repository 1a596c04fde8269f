"""Every lesson's own Python, discovered: each module or package here that defines ``LESSON`` (experiments.widget.
Lesson) contributes its numbers and its widgets. Adding a lesson means adding a package here; nothing is listed.

    all_lessons()     -> the Lesson declarations, in module-name order
    widgets()         -> {widget name: Widget}
    entry_points()    -> {browser entry point name: (Widget, "module:function")}
    register_numbers(reg, models, course)   every lesson's numbers (experiments/course_numbers.py calls it)
"""
from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil

from ..widget import Lesson, Widget, resolve


@functools.cache
def all_lessons() -> tuple[Lesson, ...]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        lesson = getattr(module, "LESSON", None)
        if isinstance(lesson, Lesson):
            found.append(lesson if lesson.package else Lesson(lesson.id, lesson.widgets, lesson.numbers,
                                                              module.__name__))
    return tuple(found)


@functools.cache
def widgets() -> dict[str, Widget]:
    out: dict[str, Widget] = {}
    for lesson in all_lessons():
        for w in lesson.widgets:
            if w.name in out:
                raise ValueError(f"widget {w.name!r} declared twice ({out[w.name].package}, {w.package})")
            out[w.name] = w
    return out


@functools.cache
def entry_points() -> dict[str, tuple[Widget, str]]:
    out: dict[str, tuple[Widget, str]] = {}
    for w in widgets().values():
        for name, ref in w.calls.items():
            if name in out and out[name][1] != ref:
                raise ValueError(f"browser entry point {name!r} declared twice ({out[name][0].name}, {w.name})")
            out[name] = (w, ref)
    return out


def register_numbers(reg, models, course=None, data=None) -> None:
    """Every lesson's register(reg, models, course=...); one that also takes `data` gets the data/*.json
    documents by name (lesson C5 reads its precomputed training runs from data/train_runs.json), or None when the
    caller has none (then such a lesson registers nothing)."""
    for lesson in all_lessons():
        if lesson.numbers:
            fn = resolve(lesson.numbers, lesson.package)
            extra = {"data": data} if "data" in inspect.signature(fn).parameters else {}
            fn(reg, models, course=course, **extra)
