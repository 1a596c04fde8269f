"""Every number a lesson may cite, computed from the model configs in data/, each with its derivation.

Names are ``<model>.<quantity>`` where <model> is an alias from data/course.json (``anchor``, ``gpt2`` ...) or,
for any other model, its id with dots and dashes turned into underscores (``qwen3_235b_a22b``). The generic
quantities of every model and the cited figures (``cited.<name>``, data/citations.json) come from the toolkit
(experiments/toolkit/model_numbers.py), with the few numbers several lessons cite
(experiments/toolkit/shared_numbers.py); each lesson's package (lessons/<id>/) adds its own derived
numbers. This module sits above the lessons: it is the one place that puts both together.
"""
from __future__ import annotations

from . import lessons as lesson_folders
from .numbers import Number
from .toolkit.model_numbers import LEDGER, ModelNumbers, Registry, generic_numbers, model_numbers, slug
from .toolkit.shared_numbers import register_shared

__all__ = ["LEDGER", "ModelNumbers", "Registry", "compute_course", "compute_numbers", "model_numbers", "slug"]


def compute_numbers(models: dict[str, dict], course: dict | None = None, reference: dict | None = None,
                    citations: dict | None = None, data: dict | None = None) -> dict[str, Number]:
    """models: id -> data/models document; course: data/course.json; reference: data/reference_counts.json;
    data: every data/*.json by name (lessons whose numbers read one, e.g. train_runs)."""
    return compute_course(models, course, reference, citations, data)[0]


def compute_course(models: dict[str, dict], course: dict | None = None, reference: dict | None = None,
                   citations: dict | None = None, data: dict | None = None, strict: bool = True,
                   lessons: lesson_folders.Course | None = None) -> tuple[dict[str, Number], dict[str, ModelNumbers]]:
    """The numbers, and each model's ModelNumbers (ledger, arch, name) keyed by its alias or slug. data: the
    other data/*.json documents by name (e.g. train_runs), for the lessons whose numbers read one; ``strict``: see
    experiments.toolkit.model_numbers.Registry; ``lessons``: the lessons whose numbers to add (the build's, from the
    root it builds; by default experiments.lessons.course())."""
    reg, per_model = generic_numbers(models, course, reference, citations, strict)   # every model's, and cited.*
    register_shared(reg, per_model)                                         # the ones several lessons cite
    (lessons or lesson_folders.course()).register_numbers(reg, per_model, course, data=data)   # each lesson's own
    return reg.numbers, per_model
