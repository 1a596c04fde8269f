"""The JavaScript half of a widget, checked by the build as the Python half is (experiments/widget.py declares both).

Four references cross from a widget's script and template to its declaration, and a misspelling of any of them
would otherwise build green and fail only in a learner's browser:

- a script's ``mount({"widget-name": setUp, ...})`` or ``declare({"widget-name": {...}})`` key must be a widget that
  loads that script (its ``script``), and a declaration's ``call`` names entry points that very widget declares;
- a script's entry point names (``call("name", ...)``, ``"experiments.api:name"``, a live-training panel's
  ``startCall`` / ``stepCall``) must be entry points that the widgets loading that script declare in ``calls``;
- a rendered widget's ``data-f`` / ``data-each`` keys must be keys of what fills it: the answers the build just
  computed for it (its ``states``), the values its view gave the template, or the keys its declaration says the
  script adds itself (``script_keys``). A ``data-if`` key is not checked: it names a part only some answers have;
- a declaration's selectors (``controls``, ``answer``, ``whenReady``, ``live``) name classes the rendered widget has,
  and each ``x.key`` its ``show(x, ...)`` reads from its one call's answer is a key of the build's answers for it.

And one reference crosses from every script to the learner message table (sitegen/messages.py):

- a ``msg("key", ...)`` key must be a key of data/messages_zh.json, and the values object written in the call
  (``msg("key", {name: ...})``) must give exactly the message's {name} placeholders;
- a declaration's ``disabled: {key: {when, reason: "message.key"}}`` (a control the state makes moot, disabled with
  its reason beside it: widgets.js moot()) names one of its own ``controls`` and a message of the table without
  placeholders (it is shown as it is).

Each problem is reported with its file and line and a did-you-mean, and the build reports them all together. The
scripts are read as text (patterns below): what a script computes at run time (a name in a variable) is not seen.
"""
from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from .errors import LessonError
from .scripts import part_path

MOUNT = re.compile(r"\b(?:mount|declare)\(\s*\{")   # mount({name: setup}) and declare({name: spec}) alike
DECLARE = re.compile(r"\bdeclare\(\s*\{")
SELECTOR_FIELDS = ("answer", "whenReady", "live")       # a declaration's fields that hold selectors (and controls)
CLASS = re.compile(r"\.(-?[A-Za-z_][\w-]*)")            # a class named in a selector
QUOTED = re.compile(r"""["'`]([^"'`]*)["'`]""")          # a selector, quoted
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)        # a comment in a script
NAME = re.compile(r"""["']([A-Za-z0-9_]+)["']""")        # an entry point's name, quoted
PICKED = re.compile(r"""(?:=>|\breturn|[?:])\s*["']([A-Za-z0-9_]+)["']""")   # ... one an arrow function returns
CALL_NAMES = (re.compile(r"""\bcall\(\s*["']([A-Za-z0-9_]+)["']"""),           # call("name", ...)
              re.compile(r"""["']experiments\.api:([A-Za-z0-9_]+)["']"""),   # the runtime's own call
              re.compile(r"""\w*Call:\s*["']([A-Za-z0-9_]+)["']"""),           # stepCall: "name"
              re.compile(r"""\w*Call:\s*\([^)]*\)\s*=>\s*\[\s*["']([A-Za-z0-9_]+)["']"""))  # startCall: (t) => ["name"
MSG = re.compile(r"""\bmsg\(\s*["']([\w.-]+)["']\s*(,\s*\{)?""")   # msg("key"[, {values}])
FIELD = re.compile(r"""\bdata-(f|each)="([^"{}]+)\"""")   # (data-if names a part only some answers have)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def mount_keys(text: str) -> list[tuple[str, int]]:
    """(key, line) for every key of every object literal passed to mount(...)."""
    return [(key, _line(text, pos)) for m in MOUNT.finditer(text) for key, pos, v, end in entries(text, m.end())
            if v < end]


def call_names(text: str) -> list[tuple[str, int]]:
    """(entry point name, line) for every literal entry point name the script sends to Python."""
    found = sorted({(m.start(1), m.group(1)) for p in CALL_NAMES for m in p.finditer(text)})
    return [(name, _line(text, pos)) for pos, name in found]


def entries(text: str, start: int) -> list[tuple[str, int, int, int]]:
    """(key, key position, value start, value end) of each top-level entry of the object literal whose body begins at
    `start` (just after its "{"), reading over strings and nested brackets; a shorthand entry ({step}) is its own
    key with an empty value."""
    out, depth, i, a = [], 0, start, start

    def entry(a: int, b: int) -> None:
        body = COMMENT.sub(lambda m: " " * len(m.group()), text[a:b])   # (a comment before a key is no part of it)
        key, colon, _ = body.partition(":")
        if key.strip():
            at = a + len(body) - len(body.lstrip())
            out.append((key.strip().strip("\"'"), at, a + len(key) + 1 if colon else b, b))
    while i < len(text):
        c = text[i]
        if c in "\"'`":                                   # a string: on to its closing quote
            i += 1
            while i < len(text) and text[i] != c:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith(("//", "/*"), i):              # a comment: on to its end
            end = text.find("\n" if text[i + 1] == "/" else "*/", i + 2)
            i = len(text) if end < 0 else end + (0 if text[i + 1] == "/" else 1)
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                entry(a, i)
                break
            depth -= 1
        elif c == "," and depth == 0:
            entry(a, i)
            a = i + 1
        i += 1
    return out


def declarations(text: str) -> list[tuple[str, int, dict[str, tuple[str, int]]]]:
    """(widget, line, {field: (its value's text, its position)}) for each widget a script's declare({...}) declares
    with an object literal (widgets.js declare)."""
    out = []
    for m in DECLARE.finditer(text):
        for name, at, v, end in entries(text, m.end()):
            brace = text.find("{", v, end)
            if brace < 0 or text[v:brace].strip():
                continue                                    # (a spec given by name: not read)
            fields = {k: (text[fv:fe], fv) for k, _, fv, fe in entries(text, brace + 1)}
            out.append((name, _line(text, at), fields))
    return out


def declared_calls(fields: Mapping[str, tuple[str, int]], text: str) -> list[tuple[str, int]]:
    """(entry point name, line) of every name a declaration's `call` writes ("name", ["a", "b"], or the names an
    arrow function returns: after =>, return, or a ternary's ? and :)."""
    value, at = fields.get("call", ("", 0))
    picked = NAME if value.strip()[:1] in "\"'[" else PICKED
    return [(m.group(1), _line(text, at + m.start(1))) for m in picked.finditer(value)]


def selectors(fields: Mapping[str, tuple[str, int]], text: str) -> list[tuple[str, str, int]]:
    """(field, class, line) of every class a declaration's selectors name: its controls' and SELECTOR_FIELDS'."""
    found = [(k, *fields[k]) for k in SELECTOR_FIELDS if k in fields]
    if "controls" in fields:
        value, at = fields["controls"]
        brace = value.find("{")
        if brace >= 0:
            found += [(f"controls.{k}", value[v:e], at + v) for k, _, v, e in entries(value, brace + 1)]
    out = []
    for field, value, at in found:
        quoted = QUOTED.search(value)
        if quoted:
            out += [(field, c.group(1), _line(text, at + quoted.start(1) + c.start()))
                    for c in CLASS.finditer(quoted.group(1))]
    return out


def answer_reads(fields: Mapping[str, tuple[str, int]], text: str) -> list[tuple[str, int]]:
    """(key, line) of each key a declaration's show(x, ...) reads from its answer as x.key, when it has one call."""
    value, at = fields.get("show", ("", 0))
    param = re.match(r"\s*(?:function\s*)?\(?\s*([A-Za-z_$][\w$]*)", value)
    if not param or not NAME.fullmatch(fields.get("call", ("", 0))[0].strip()):
        return []
    return [(m.group(1), _line(text, at + m.start(1)))
            for m in re.finditer(rf"(?<![\w$.]){re.escape(param.group(1))}\.([A-Za-z_]\w*)", value)]


@functools.lru_cache(maxsize=64)
def _source(path: Path, stamp: tuple[int, int]) -> str:
    return path.read_text(encoding="utf-8")


def script_source(path: Path, root: Path) -> tuple[str, str]:
    """(text, path from the course root) of a widget's script, read once per build while it is unchanged (every
    rendered widget's declaration is checked against it)."""
    stat = path.stat()
    return _source(path, (stat.st_mtime_ns, stat.st_size)), path.relative_to(root).as_posix()


def declaration_problems(html: str, text: str, rel: str, widget: str, answers: Iterable) -> list[LessonError]:
    """For one rendered widget declared in a script (its text, at rel): each class its declaration's selectors name
    that the widget's HTML lacks, and each key its show() reads from its one call's answer that the build's answers
    (when it has any) do not hold, at the script's line with a did-you-mean."""
    classes = {c for attr in re.findall(r'\bclass="([^"]*)"', html) for c in attr.split()}
    known: set[str] = set()
    for a in answers:
        known |= key_paths(a)
    problems = []
    for name, _, fields in declarations(text):
        if name != widget:
            continue
        for field, cls, line in selectors(fields, text):
            if cls not in classes:
                problems.append(LessonError(rel, line, f"{field} of widget '{widget}': no element of its template "
                                            f"has class '{cls}'{_did_you_mean(cls, classes)}"))
        for key, line in answer_reads(fields, text) if known else ():
            if key not in known:
                problems.append(LessonError(rel, line, f"show of widget '{widget}' reads '{key}', not a key of "
                                            f"its answers{_did_you_mean(key, known)}"))
    return problems


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
        for widget, _, fields in declarations(text):   # a declaration calls its own widget's entry points
            own = set(widgets[widget].calls) if widget in names else set()
            for name, line in declared_calls(fields, text) if widget in names else ():
                if name not in own:
                    problems.append(LessonError(file, line, f"entry point '{name}' is not one widget '{widget}' "
                                                f"declares in calls{_did_you_mean(name, own)}; it declares: "
                                                f"{', '.join(sorted(own)) or 'none'}"))
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


def message_calls(text: str) -> list[tuple[str, int, set[str] | None]]:
    """(key, line, the names its values object gives, or None when no object literal is written) for every
    msg("key", ...) in a script."""
    out = []
    for m in MSG.finditer(text):
        names = {k for k, _, _, _ in entries(text, m.end())} if m.group(2) else None
        out.append((m.group(1), _line(text, m.start(1)), names))
    return out


KEY_LITERAL = re.compile(r"""["']([a-z][\w-]*(?:\.[\w-]+)+)["']""")   # a quoted "ns.name", perhaps a message key


def message_literals(text: str, namespaces: Iterable[str]) -> list[tuple[str, int]]:
    """(key, line) of every quoted "ns.name" outside comments whose first part is a namespace of the message
    table: a key handed to msg() through a variable (say("offline.kept"), speed: "c1.bpe.speed", key || "x.y")."""
    known = set(namespaces)
    body = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)   # same lines, comments blanked
    return [(m.group(1), _line(body, m.start(1))) for m in KEY_LITERAL.finditer(body)
            if m.group(1).split(".", 1)[0] in known]


def disabled_rules(text: str) -> list[tuple[str, str, int, str | None, int]]:
    """(widget, control key, its line, reason key or None, the reason's line) for each entry of each declaration's
    ``disabled: {key: {when: ..., reason: "message.key"}}`` written as object literals."""
    out = []
    for widget, _, fields in declarations(text):
        value, at = fields.get("disabled", ("", 0))
        brace = value.find("{")
        if brace < 0:
            continue
        for key, kat, v, e in entries(value, brace + 1):
            inner = value.find("{", v, e)
            rule = {k: (value[fv:fe], fv) for k, _, fv, fe in entries(value, inner + 1)} if inner >= 0 else {}
            reason, rat = rule.get("reason", ("", 0))
            quoted = QUOTED.search(reason)
            out.append((widget, key, _line(text, at + kat), quoted.group(1) if quoted else None,
                        _line(text, at + rat + (quoted.start(1) if quoted else 0))))
    return out


def disabled_problems(text: str, rel: str, table: Mapping[str, str]) -> list[LessonError]:
    """Each disabled rule of a script's declarations whose control is not one of the declaration's controls (when
    they are an object literal), or whose reason is not a quoted message key of the table without placeholders, at
    its line with a did-you-mean."""
    from .messages import placeholders
    controls = {}
    for widget, _, fields in declarations(text):
        value = fields.get("controls", ("", 0))[0]
        brace = value.find("{")
        if brace >= 0 and not value[:brace].strip():
            controls[widget] = {k for k, _, _, _ in entries(value, brace + 1)}
    problems = []
    for widget, key, line, reason, rline in disabled_rules(text):
        own = controls.get(widget)
        if own is not None and key not in own:
            problems.append(LessonError(rel, line, f"disabled.{key} of widget '{widget}' is not one of its controls"
                                        f"{_did_you_mean(key, own)}; they are: {', '.join(sorted(own))}"))
        if reason is None:
            problems.append(LessonError(rel, line, f"disabled.{key} of widget '{widget}' gives no reason: write "
                                        "reason: \"message.key\" (a key of data/messages_zh.json)"))
        elif reason not in table:
            problems.append(LessonError(rel, rline, f"the reason '{reason}' of disabled.{key} (widget '{widget}') is "
                                        f"not a key of data/messages_zh.json{_did_you_mean(reason, table)}"))
        elif placeholders(table[reason]):
            problems.append(LessonError(rel, rline, f"the reason '{reason}' of disabled.{key} (widget '{widget}') is "
                                        f"shown as it is, but its message has the placeholders "
                                        f"{{{', '.join(sorted(placeholders(table[reason])))}}}"))
    return problems


def message_keys_used(text: str, namespaces: Iterable[str]) -> set[str]:
    """The message keys a script uses: msg("key") calls and keys handed over as quoted literals."""
    return {key for key, _, _ in message_calls(text)} | {key for key, _ in message_literals(text, namespaces)}


def scripts(root: Path) -> list[tuple[str, Path]]:
    """(path from the course root, file) of every script the course ships: the shared core and each lesson's."""
    root = Path(root)
    files = sorted((root / "site" / "static" / "js").glob("*.js")) + sorted((root / "lessons").glob("*/script.js"))
    return [(p.relative_to(root).as_posix(), p) for p in files]


def message_problems(root: Path, table: Mapping[str, str]) -> list[LessonError]:
    """Every msg("key") of the course's scripts whose key is not in the message table, or whose values object
    does not give exactly the message's placeholders; every quoted "ns.name" handed on to msg() later (its
    namespace is the table's) that names no message; and every declaration's disabled rule whose control or reason
    is wrong (disabled_problems)."""
    from .messages import placeholders
    problems = []
    namespaces = {key.split(".", 1)[0] for key in table}
    for rel, path in scripts(root):
        text = path.read_text(encoding="utf-8")
        calls = {(key, line) for key, line, _ in message_calls(text)}
        found = disabled_problems(text, rel, table)       # (a reason's key is said there, not again below)
        reasons = {(key, line) for _, _, _, key, line in disabled_rules(text)}
        for key, line in message_literals(text, namespaces):
            if key not in table and (key, line) not in calls | reasons:
                found.append(LessonError(rel, line, f"'{key}' names no message of data/messages_zh.json"
                                         f"{_did_you_mean(key, table)}"))
        for key, line, names in message_calls(text):
            if key not in table:
                found.append(LessonError(rel, line, f"message key '{key}' is not in data/messages_zh.json"
                                         f"{_did_you_mean(key, table)}"))
                continue
            wanted = placeholders(table[key])
            if names is not None and names != wanted or names is None and wanted:
                found.append(LessonError(rel, line, f"message '{key}' expects the values "
                                         f"{{{', '.join(sorted(wanted))}}}, the call gives "
                                         f"{{{', '.join(sorted(names or ()))}}}"))
        problems += sorted(found, key=lambda e: e.line or 0)
    return problems
