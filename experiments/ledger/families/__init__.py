"""One module per model family: each reads a config.json through a ``Reader`` and returns a ``Model``.

Each module declares the model_types it reads in ``FAMILIES`` (experiments/ledger/family.py); registry.py
discovers them. Modules whose name starts with ``_`` hold shared parts and declare none.
"""
