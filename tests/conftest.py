"""Shared pytest configuration: fixtures live in small plugin modules beside this file."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest_plugins = ["browser_fixtures", "build_fixtures"]
