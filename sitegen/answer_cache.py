"""The build's cache of widget answers: an answer computed once is read back while its code and inputs are unchanged.

A widget's answers before Python (sitegen/widgets.py precompute) are most of a build's time: C10's planner and
C14's batching simulation walk thousands of layouts and decode steps with exact fractions, 5 of a build's 7.5 s
of CPU on this machine. An answer is a pure function of the code that computes it and of its arguments: the
entry points are the experiments package and one lesson folder's Python, which do no I/O and import no other
lesson (tests/test_layers.py), and everything an answer reads arrives in its arguments (a model's whole config,
a data document's part: the build puts them there before calling). So the key of an answer is the SHA-256 of

    the source of every .py file of the experiments package as imported, and of the answering lesson's folder
    numpy's and Python's versions (an answer's floats go through them)
    the entry point's name and its arguments (canonical JSON; a built-in model's config and a data document's
    part, which the build puts in the arguments, as their alias or path and the SHA-256 of their canonical JSON,
    made once per build: a config can be megabytes, and a widget's states send it dozens of times)

and a build whose key is found reads the answer instead of computing it: the same page, byte for byte (a test
builds with and without the cache and compares). Editing one lesson's Python invalidates that lesson's answers
only; editing the experiments package invalidates all of them. Like Observable Framework's data-loader cache, it
lives beside the project (.cache/answers/, git-ignored) or where COURSE_ANSWER_CACHE says; "off" there, or
build.py --no-cache, turns it off. Entries are small JSON files (two hex digits of fan-out), written atomically
(two builds may fill it at once); a hit touches its file, and a build that leaves the folder over LIMIT_BYTES
removes the least recently used until it is under half of that.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ENV = "COURSE_ANSWER_CACHE"
LIMIT_BYTES = 200_000_000


def default_folder(checkout: Path) -> Path | None:
    """The cache folder a build of `checkout`'s build.py uses: COURSE_ANSWER_CACHE, else checkout/.cache/answers;
    None when the variable says "off"."""
    setting = os.environ.get(ENV, "")
    if setting.lower() == "off":
        return None
    return Path(setting) if setting else checkout / ".cache" / "answers"


def folder_digest(folder: Path) -> str:
    """SHA-256 over every .py file under the folder (its name, each file's relative name and bytes), in order; a
    lesson's tests (test_*.py, which no entry point imports and the browser's package leaves out) are not part of
    it."""
    h = hashlib.sha256(folder.name.encode() + b"/\0")
    for path in sorted(p for p in folder.rglob("*.py")
                       if "__pycache__" not in p.parts and not p.name.startswith("test_")):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def source_digest(folders: list[Path], digests: dict[Path, str] | None = None) -> str:
    """One digest of the folders' folder_digest()s, in order; `digests` keeps each folder's for the next call (a
    build asks for the experiments package with every lesson's folder: it is read once)."""
    digests = {} if digests is None else digests
    for folder in folders:
        if folder not in digests:
            digests[folder] = folder_digest(folder)
    return hashlib.sha256(" ".join(digests[f] for f in folders).encode()).hexdigest()


class AnswerCache:
    """One build's view of the cache folder (None: no cache): answer(code_folders, name, args, compute) -> the
    answer; hits and misses count this build's reads."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.hits = self.misses = 0
        self._digests: dict[tuple[Path, ...], str] = {}
        self._digests_of: dict[str, str] = {}
        self.folder_digests: dict[Path, str] = {}   # each source folder's, read once per build (source_digest)

    def _code(self, folders: tuple[Path, ...]) -> str:
        if folders not in self._digests:
            import numpy
            versions = f" numpy {numpy.__version__} python {sys.version_info.major}.{sys.version_info.minor}"
            self._digests[folders] = source_digest(list(folders), self.folder_digests) + versions
        return self._digests[folders]

    def digest(self, name: str, text) -> str:
        """SHA-256 of text() (a model's config, a data document's part, as canonical JSON), made once per build
        for each name: a call's key names a config by its alias and this digest, not by its whole text."""
        if name not in self._digests_of:
            self._digests_of[name] = hashlib.sha256(text().encode()).hexdigest()
        return self._digests_of[name]

    def answer(self, folders: tuple[Path, ...], name: str, args, compute):
        """json.loads(compute()), compute() being the entry point `name` called with its arguments (JSON text), or
        the stored answer of the same call under the same code (an entry that does not read back as JSON is
        computed again). args() is the arguments as the key holds them (plain JSON, a model or a data part named
        with its digest)."""
        if self.folder is None:
            return json.loads(compute())
        body = json.dumps([self._code(folders), name, args()], sort_keys=True, ensure_ascii=False,
                          separators=(",", ":"))
        key = hashlib.sha256(body.encode()).hexdigest()
        path = self.folder / key[:2] / f"{key}.json"
        try:
            answer = json.loads(path.read_text(encoding="utf-8"))
            os.utime(path)
            self.hits += 1
            return answer
        except (OSError, ValueError):
            pass
        text = compute()
        self.misses += 1
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False,
                                             suffix=".tmp") as f:
                f.write(text)
            os.replace(f.name, path)
        except OSError:   # a read-only or full disk: the build goes on without storing
            pass
        return json.loads(text)

    def prune(self, limit: int = LIMIT_BYTES) -> None:
        """Least recently used entries removed until the folder is under limit/2, when it is over limit; looked at
        only after this build stored something (a build that only read adds nothing)."""
        if self.folder is None or not self.misses or not self.folder.is_dir():
            return
        entries = []
        for path in self.folder.glob("*/*.json"):
            try:
                st = path.stat()
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, path))
        total = sum(size for _, size, _ in entries)
        if total <= limit:
            return
        for _, size, path in sorted(entries):
            if total <= limit // 2:
                break
            path.unlink(missing_ok=True)
            total -= size
