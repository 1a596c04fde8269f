"""The course's trainer: the baseline decoder at any size with a hand-written backward pass, its optimisers,
learning-rate schedules and per-step diagnostics. Plain Python + numpy, no I/O; the same code runs in CPython
(the build, the precomputed runs) and in the page under Pyodide (the training worker)."""
