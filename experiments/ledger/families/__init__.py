"""One module per model family: each reads a config.json through a ``Reader`` and returns a ``Model``.

Families are registered explicitly in experiments/ledger/registry.py (model_type -> builder).
"""
