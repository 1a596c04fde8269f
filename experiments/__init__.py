"""从0训练LLM: the course's computation package.

Plain Python (+ numpy where arrays help) with no I/O inside the computation, so the very same modules run at
build time under CPython and in the learner's browser under Pyodide. See docs/architecture.md.
"""
