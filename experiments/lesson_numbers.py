"""Numbers specific to one lesson's argument, built on the generic per-model numbers (course_numbers.py)."""
from __future__ import annotations


def register_lesson_numbers(reg, models, course=None) -> None:
    from . import lesson_c4, lesson_ffn
    lesson_c4.register(reg, models, course=course)
    lesson_ffn.register(reg, models, course=course)
