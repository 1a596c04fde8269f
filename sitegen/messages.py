"""The learner messages scripts write, one table: data/messages_zh.json, key -> Chinese text with {name} placeholders.

Every text a script shows a learner (the runtime's states, a widget's waiting and error lines, a code cell's run
states, a live-training panel's states, chart axis titles the script sets) is a key of this table, read in the page
through ``courseMessages.msg(key, values)`` (site/static/js/messages.js; widgets.js re-exports it as ``W.msg``).
Scripts hold no Chinese string literal (tests/test_messages.py), so a message is worded once, here, and a
script's key that the table lacks fails the build at the script's file and line (sitegen/jscheck.py).

The build puts the table and messages.js at the head of every page's script file (sitegen/scripts.py), ahead of
every part, so the first part (runtime-client.js) and the deferred popover.js can use it; the table is a few kB.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from .errors import LessonError

FILE = "data/messages_zh.json"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def load(root: Path) -> dict[str, str]:
    """The table under `root` (a course folder); a file that is not one JSON object of strings fails, named."""
    path = Path(root) / FILE
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LessonError(FILE, None, f"expected a JSON object of message texts, could not read it ({e})") from e
    if not isinstance(table, dict):
        raise LessonError(FILE, None, f"expected a JSON object of message texts, got {type(table).__name__}")
    bad = sorted(k for k, v in table.items() if not isinstance(v, str) or not v)
    if bad:
        raise LessonError(FILE, None, f"expected a non-empty text for every key, not for: {', '.join(bad)}")
    return table


def placeholders(text: str) -> set[str]:
    """The {name}s a message expects."""
    return set(PLACEHOLDER.findall(text))


def prelude(table: dict[str, str], js_dir: Path) -> str:
    """The head of a page's script file: the table, then messages.js (which reads it), minified."""
    from . import minify
    code = minify.js((Path(js_dir) / "messages.js").read_text(encoding="utf-8")).rstrip()
    return ("/* learner messages: data/messages_zh.json + messages.js (sitegen/messages.py) */\n"
            f"window.courseMessageTable = {json.dumps(table, ensure_ascii=False, sort_keys=True)};\n{code}\n;\n")
