"""The JavaScript half of a widget, checked by the build as the Python half is (experiments/widget.py declares both).

Three references cross from a widget's script and template to its declaration, and a misspelling of any of them
would otherwise build green and fail only in a learner's browser:

- a script's ``mount({"widget-name": setUp, ...})`` key must be a widget that loads that script (its ``script``);
- a script's entry point names (``call("name", ...)``, ``"experiments.api:name"``, a live-training panel's
  ``startCall`` / ``stepCall``) must be entry points that the widgets loading that script declare in ``calls``;
- a rendered widget's ``data-f`` / ``data-each`` keys must be keys of what fills it: the answers the build just
  computed for it (its ``states``), the values its view gave the template, or the keys its declaration says the
  script adds itself (``script_keys``). A ``data-if`` key is not checked: it names a part only some answers have.

Each problem is reported with its file and line and a did-you-mean, and the build reports them all together. The
scripts are read as text (patterns below): what a script computes at run time (a name in a variable) is not seen.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from .errors import LessonError
from .scripts import part_path

MOUNT = re.compile(r"\bmount\(\s*\{")
CALL_NAMES = (re.compile(r"""\bcall\(\s*["']([A-Za-z0-9_]+)["']"""),           # call("name", ...)
              re.compile(r"""["']experiments\.api:([A-Za-z0-9_]+)["']"""),   # the runtime's own call
              re.compile(r"""\w*Call:\s*["']([A-Za-z0-9_]+)["']"""),           # stepCall: "name"
              re.compile(r"""\w*Call:\s*\([^)]*\)\s*=>\s*\[\s*["']([A-Za-z0-9_]+)["']"""))  # startCall: (t) => ["name"
FIELD = re.compile(r"""\bdata-(f|each)="([^"{}]+)\"""")   # (data-if names a part only some answers have)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def mount_keys(text: str) -> list[tuple[str, int]]:
    """(key, line) for every key of every object literal passed to mount(...)."""
    out = []
    for m in MOUNT.finditer(text):
        depth, start, entries = 0, m.end(), []
        i = start
        while i < len(text):
            c = text[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    entries.append((start, i))
                    break
                depth -= 1
            elif c == "," and depth == 0:
                entries.append((start, i))
                start = i + 1
            i += 1
        for a, b in entries:
            entry = text[a:b]
            key, colon, _ = entry.partition(":")
            if colon and key.strip():
                out.append((key.strip().strip("\"'"), _line(text, a + len(entry) - len(entry.lstrip()))))
    return out


def call_names(text: str) -> list[tuple[str, int]]:
    """(entry point name, line) for every literal entry point name the script sends to Python."""
    found = sorted({(m.start(1), m.group(1)) for p in CALL_NAMES for m in p.finditer(text)})
    return [(name, _line(text, pos)) for pos, name in found]


def script_problems(widgets: Mapping, root: Path) -> list[LessonError]:
    """Every mount key and entry point name in the widgets' own scripts that no widget loading the script declares.
    widgets: name -> experiments.widget.Widget; root: the course root (a lesson's script is lessons/<id>/script.js,
    a shared one a file of site/static/js/, sitegen.scripts.part_path)."""
    by_script: dict[str, list] = {}
    for w in widgets.values():
        if w.script:
            by_script.setdefault(w.script, []).append(w)
    problems = []
    for script, users in sorted(by_script.items()):
        path = part_path(root, script)
        if not path.is_file():
            continue                        # reported by the declarations' own check
        text = path.read_text(encoding="utf-8")
        names = {w.name for w in users}
        calls = {c for w in users for c in w.calls}
        file = path.relative_to(root).as_posix()
        for key, line in mount_keys(text):
            if key not in names:
                problems.append(LessonError(file, line, f"mount key '{key}' is not a widget that loads this script"
                                            f"{_did_you_mean(key, names)}; its widgets: {', '.join(sorted(names))}"))
        for name, line in call_names(text):
            if name not in calls:
                problems.append(LessonError(file, line, f"entry point '{name}' is not one its widgets declare in "
                                            f"calls{_did_you_mean(name, calls)}; they declare: "
                                            f"{', '.join(sorted(calls)) or 'none'}"))
    return problems


def key_paths(value) -> set[str]:
    """Every key path a fill() can read from value, and every tail of one: a script fills a part of its widget
    with a part of an answer (fill(part, answer.diff) reads "sentence" from "diff.sentence"), a data-each row
    with one item of a list, and a path may index a list ("bars.0.bytes")."""
    out: set[str] = set()

    def walk(v, parts: tuple[str, ...]) -> None:
        out.update(".".join(parts[i:]) for i in range(len(parts)))
        if isinstance(v, Mapping):
            for k, x in v.items():
                walk(x, parts + (str(k),))
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, parts + (str(i),))
    walk(value, ())
    return out


def field_problems(html: str, sources: Iterable, dirs: list[Path], template: str,
                   root: Path) -> list[tuple[str, int, str]]:
    """(template file from the course root, line, message) for each data-f / data-each key of a rendered widget
    that none of `sources` (its answers and its view's values) holds. The line is the first one in the widget's
    template (or a template it imports, from `dirs`: its lesson's templates, then the shared ones) that writes the
    key."""
    known: set[str] = set()
    for s in sources:
        known |= key_paths(s)
    out = []
    for kind, key in sorted({(m.group(1), m.group(2)) for m in FIELD.finditer(html)}):
        if key in known:
            continue
        file, line = _where(dirs, template, f'data-{kind}="{key}"', root)
        out.append((file, line, f"data-{kind} key '{key}' is not a key of the widget's answers or view"
                                f"{_did_you_mean(key, known)}"))
    return out


def _where(dirs: list[Path], template: str, needle: str, root: Path) -> tuple[str, int]:
    """The template file and line that write `needle`: the widget's own template first, then any other."""
    own = next((d / template for d in dirs if (d / template).is_file()), Path(dirs[0]) / template)
    files = [own] + [p for d in dirs for p in sorted(Path(d).glob("*.html")) if p != own]
    for path in files:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        pos = text.find(needle)
        if pos >= 0:
            return path.relative_to(root).as_posix(), _line(text, pos)
    return own.relative_to(root).as_posix(), 0
