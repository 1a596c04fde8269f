"""``python -m experiments.ledger CONFIG.json [--json]``: see cli.py."""
import sys

from .cli import main

sys.exit(main())
