"""Site generation helpers used by build.py (rendering, the bundled Pyodide runtime)."""
