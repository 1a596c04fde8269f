"""Derived data: the files in data/ that a command makes from other inputs, each recording what it was made from.

The files in DERIVED are not written by hand: the groups of precomputed training runs (C5's, C8's stability grid and
learning-rate sweep, C6's IsoFLOP grid, C2's speaking model, C14's speculative-sampling draft and measurement, C1's
characters against BPE tokens) and C9's measured trainer step. Each is made by one command from data files (the
course text, the baseline config) and from the trainer's code. Every such file stores

    "inputs": {"<path>": "<sha256>", ...}      # each input: a data file's bytes; a module's code (code_of)
    "inputs_sha256": "<sha256 over all of them, in order>"

so the command can skip a file whose inputs did not change, and the build (build.py) can refuse a stale one by
name: `problems` says which file is stale, which of its inputs changed and the one command that remakes it.

This module reads files (the commands and the build call it); in the page only toolkit/stored.py reaches it, to
name a command in an error.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

TEXT_FILE = "data/texts/sishu.txt"                     # the course text (sitegen/course_text.py: one script)
BASELINE_CONFIG = "data/models/baseline/config.json"   # the course baseline (C4); runs.BASELINE is its copy
PACKAGE_ROOT = Path(__file__).resolve().parents[2]      # where the experiments/ package these commands run lives
TRAINER = tuple(f"experiments/train/{name}" for name in
                ("kernels.py", "model.py", "optim.py", "schedule.py", "data.py", "trainer.py"))


@dataclass(frozen=True)
class Derived:
    """One derived file: where it is, the command that remakes it, the data files (relative to the course root)
    and the modules (relative to the package's project root, hashed by code_of) it is made from; a group of
    precomputed training runs also names its group and its compute function ("module:function" in
    experiments.train, called as compute(text, inputs_sha256, progress) -> the JSON document)."""
    output: str
    command: str
    data: tuple[str, ...]
    code: tuple[str, ...]
    group: str = ""
    compute: str = ""

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.data + self.code


def run_group(name: str, output: str, compute: str, data: tuple[str, ...], modules: tuple[str, ...] = (),
              other: tuple[str, ...] = ()) -> Derived:
    """A group of precomputed runs (`python -m experiments.train.runs --group NAME`): made from the trainer,
    runs.py, the group's own modules (files in experiments/train/) and any other module it runs (`other`, paths
    from the package's project root). The groups are listed here, not in runs.py, so adding one leaves every stored
    group's inputs as they were."""
    return Derived(output, f"python -m experiments.train.runs --group {name}", data,
                   TRAINER + ("experiments/train/runs.py",) + tuple(f"experiments/train/{m}" for m in modules)
                   + other, group=name, compute=compute)


DERIVED = (
    run_group("optimization", "data/train_runs.json", "runs:compute", (TEXT_FILE, BASELINE_CONFIG)),
    run_group("stability", "data/train_stability.json", "runs_stability:compute", (TEXT_FILE, BASELINE_CONFIG),
              ("runs_stability.py",)),
    run_group("isoflop", "data/train_isoflop.json", "runs_isoflop:compute", (TEXT_FILE,), ("runs_isoflop.py",)),
    run_group("lr_sweep", "data/train_lr_sweep.json", "runs_lr_sweep:compute", (TEXT_FILE, BASELINE_CONFIG),
              ("runs_stability.py", "runs_lr_sweep.py")),
    run_group("speaker", "data/train_speaker.json", "runs_speaker:compute", (TEXT_FILE,),
              ("runs_speaker.py", "generate.py")),
    run_group("speculative", "data/train_speculative.json", "runs_speculative:compute", (TEXT_FILE,),
              ("runs_speaker.py", "generate.py", "speculative.py", "runs_speculative.py")),
    run_group("attention", "data/train_attention.json", "runs_attention:compute", (TEXT_FILE,),
              ("runs_speaker.py", "generate.py", "runs_attention.py")),
    run_group("bpe", "data/train_bpe.json", "runs_bpe:compute", (TEXT_FILE,), ("runs_bpe.py",),
              ("experiments/train/bpe.py",)),
    Derived("data/train_memory.json", "python -m experiments.train.memory",
            (BASELINE_CONFIG,), TRAINER + ("experiments/train/memory.py",)),
    Derived("data/tokenizer_stats.json", "python -m sitegen.real_tokenizers",
            (TEXT_FILE, "data/tokenizer_samples/udhr_zh.txt", "data/tokenizer_samples/udhr_en.txt",
             "data/tokenizer_samples/textwrap_py.txt"),
            ("sitegen/real_tokenizers.py", "experiments/train/bpe.py", "experiments/train/data.py")),
)


def derived(output: str) -> Derived:
    for d in DERIVED:
        if d.output == output:
            return d
    raise ValueError(f"derived data: expected one of {[d.output for d in DERIVED]}, got {output!r}")


def code_of(source: str) -> bytes:
    """What of a Python module can change a result: its syntax tree without comments, layout or docstrings
    (``ast.dump``, which leaves out line numbers). A reworded comment or docstring, or a line broken differently,
    leaves stored results up to date; a changed name, expression or annotation makes them stale."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


def input_hashes(d: Derived, root: Path) -> dict[str, str]:
    """sha256 of each of d's inputs, in order: data files from the course root, modules from PACKAGE_ROOT (the code
    that will run); a missing input hashes as 'missing'."""
    out = {}
    for rel in d.inputs:
        path = (PACKAGE_ROOT if rel in d.code else Path(root)) / rel
        try:
            stat = path.stat()
        except OSError:
            out[rel] = "missing"
            continue
        out[rel] = _file_hash(str(path), stat.st_mtime_ns, stat.st_size)
    return out


@functools.lru_cache(maxsize=64)
def _file_hash(path: str, mtime_ns: int, size: int) -> str:
    """One input's sha256 (a module's by code_of), computed once while the file is unchanged: the trainer's modules
    are inputs of every group, and a build checks every derived file (mtime_ns and size key the cache)."""
    data = Path(path).read_bytes()
    return hashlib.sha256(code_of(data.decode("utf-8")) if path.endswith(".py") else data).hexdigest()


def provenance(d: Derived, root: Path) -> dict:
    """What a derived file stores about its inputs: each one's hash and one hash over all (path, hash) pairs."""
    inputs = input_hashes(d, root)
    total = hashlib.sha256("".join(f"{rel}\0{h}\0" for rel, h in inputs.items()).encode()).hexdigest()
    return {"inputs_sha256": total, "inputs": inputs}


def changed_inputs(d: Derived, root: Path, stored: dict) -> list[str]:
    """The inputs whose hash differs from the one `stored` (the derived file's document) recorded; every input
    when it recorded none."""
    now, then = input_hashes(d, root), stored.get("inputs") if isinstance(stored, dict) else None
    if not isinstance(then, dict):
        return list(now)
    return [rel for rel, h in now.items() if then.get(rel) != h]


def problems(root: Path) -> list[tuple[str, str]]:
    """(derived file, what is wrong with it and the command that remakes it) for each stale or unreadable file
    under root (a course without one, such as a test's small course, has nothing to check; a lesson that reads a
    missing one says so itself)."""
    out = []
    for d in DERIVED:
        path = Path(root) / d.output
        if not path.exists():
            continue
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            out.append((d.output, f"unreadable; make it anew with: {d.command}"))
            continue
        changed = changed_inputs(d, root, stored)
        if changed and not isinstance(stored.get("inputs"), dict):
            out.append((d.output, f"stale: records no inputs; remake it with: {d.command}"))
        elif changed:
            out.append((d.output, f"stale: made from an earlier {', '.join(changed)}; remake it with: {d.command}"))
    return out
