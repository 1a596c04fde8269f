"""A config's generic numbers (``model.total`` ...) with the derivation rows the build shows for them
(experiments.numbers.derivation_rows): what a page's popovers show for a model the learner pasted or picked;
site/static/js/derivation.js draws them.
"""
from __future__ import annotations

from ..numbers import derivation_rows, format_number
from .model_numbers import model_numbers


def derivations(config: dict, names=None) -> dict:
    """{name: {display, rows}} of a config's generic numbers, for `names` (all of them when None)."""
    numbers = model_numbers(config)
    return {name: {"display": format_number(numbers[name]), "rows": derivation_rows(numbers[name])}
            for name in (names or numbers) if name in numbers}
