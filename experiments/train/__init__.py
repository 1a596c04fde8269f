"""The course's trainer: the baseline decoder at any size with a hand-written backward pass, its optimisers,
learning-rate schedules and per-step diagnostics. Plain Python + numpy, no I/O; the same code runs in CPython
(the build, the precomputed runs) and in the page under Pyodide (the training worker). Its tokenizers are here too:
data.py's characters and bpe.py's byte-level BPE (train merge by merge, bounded; encode; decode; GPT-2's and Qwen's
pre-tokenisation patterns scanned by hand with Unicode categories), which C1 teaches and C1's fair comparison
trains on."""
