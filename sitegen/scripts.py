"""A page's scripts as one file: site/static/js/<part>.js, in the page's load order -> static/js/page-<hash>.js.

Why one file: a lesson's widgets should answer as soon as they are on screen. A <script defer> runs only after
the whole page has been parsed, which on a long lesson and a slow phone is hundreds of milliseconds after its first
screen is painted; several async files would run in whatever order they arrive, and the widget files need
widgets.js, which needs runtime-client.js. So each page gets one file holding its parts in order
(sitegen.markdown.script_order merges the widgets' declared needs), as a plain <script> right after the
stylesheets (site/templates/base.html says why): it runs before the body is parsed, widgets.js sets up each widget
once the parser has passed it (mount), and the parts that work on the whole page wait for DOMContentLoaded.
popover.js, which only works on the whole page, stays a deferred file of its own.

The parts stay separate, plain files in site/static/js (and the tests read them there); the file holds them
minified (sitegen/minify.py), each between its own separator comments; the file's name is a hash
of its bytes, so a page that needs the same parts shares it and a changed part gives a new name. Each part is an
IIFE of its own, run in a try block of its own (one that throws does not stop the next, as with separate files; a
syntax error still stops the file); document.currentScript is the one <script> for all of them (runtime-client.js
reads data-worker and data-warm from it, charts.js finds Plotly next to its src, prefetch-runtime.js reads
data-urls). Ahead of the parts, every file starts with the learner message table and messages.js
(sitegen/messages.py), which is no part: every script may use it, whatever the page's parts.

    bundles = ScriptBundles(Path("site/static/js"), table)   # a Jinja global (sitegen.pages.environment)
    bundles(["runtime-client.js", "widgets.js"])        # -> "page-0123456789ab.js", made once per parts
    bundles.files()                                     # {"static/js/page-0123456789ab.js": text, ...}
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from . import messages, minify
from .errors import CourseError

JS_DIR = "static/js"
HEADER = ("/* {parts}: site/static/js/*.js, in this order, one file for the page's one <script>"
          " (sitegen/scripts.py) */\n")


def part_path(root: Path, part: str) -> Path:
    """A page's script part -> its file: lessons/<id>/script.js from the course root, a bare name in site/static/js."""
    return Path(root) / part if "/" in part else Path(root) / "site" / JS_DIR / part


class ScriptBundles:
    """Makes (once per distinct list of parts) and remembers the pages' script files."""

    def __init__(self, js_dir: Path, table: dict[str, str] | None = None):
        self.js_dir = Path(js_dir)
        self.table = table or {}         # the learner messages (sitegen/messages.py), at the head of every file
        self.made: dict[tuple[str, ...], tuple[str, str]] = {}   # parts -> (file name, text)

    def __call__(self, parts) -> str:
        parts = tuple(parts)
        if parts not in self.made:
            self.made[parts] = self._make(parts)
        return self.made[parts][0]

    def _make(self, parts: tuple[str, ...]) -> tuple[str, str]:
        chunks = [HEADER.format(parts=" + ".join(parts)), messages.prelude(self.table, self.js_dir)]
        for part in parts:
            # a lesson's script by its path from the course root (js_dir is ROOT/site/static/js), a shared one here
            path = self.js_dir.parents[2] / part if "/" in part else self.js_dir / part
            if not path.is_file():
                raise CourseError(f"{part if '/' in part else f'site/{JS_DIR}/{part}'}: missing; a page's script "
                                  f"list names it "
                                  f"(a widget's declaration, experiments/widget.py)")
            # each part on its own, as a file of its own would be: one that throws does not stop the next
            chunks.append(f"\n/* ---- {part} ---- */\ntry {{\n" + minify.js(path.read_text(encoding="utf-8")).rstrip()
                          + f"\n;\n}} catch (e) {{ console.error({json.dumps(part)}, e); }}\n")
        text = "".join(chunks)
        return f"page-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}.js", text

    def files(self) -> dict[str, str]:
        """Every file made so far, by its path in the built site."""
        return {f"{JS_DIR}/{name}": text for name, text in self.made.values()}

    @staticmethod
    def parts_of(text: str) -> list[str]:
        """The parts a made file holds, in order (read back from its separators; for tests and the bench)."""
        return [line[len("/* ---- "):-len(" ---- */")] for line in text.splitlines()
                if line.startswith("/* ---- ") and line.endswith(" ---- */")]
