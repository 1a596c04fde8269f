"""The shipping form of the site's own scripts and stylesheets: comments and spare whitespace removed (rjsmin,
rcssmin), so a phone downloads and parses less before a lesson answers. The sources in site/static stay the plain,
commented files the tests and readers read; only what the build writes is minified.

    minify.js(text)                 # one script's text, minified
    minify.static_tree(folder)      # every .js and .css under a built site's static/ folder, in place
"""
from __future__ import annotations

from pathlib import Path

import rcssmin
import rjsmin


def js(text: str) -> str:
    """A script without its comments and spare whitespace (``/*! ... */`` comments are kept, as licences are)."""
    return rjsmin.jsmin(text, keep_bang_comments=True)


def css(text: str) -> str:
    return rcssmin.cssmin(text, keep_bang_comments=True)


def static_tree(folder: Path) -> None:
    """Minify the .js and .css files the build copied into `folder` (the built site's static/), in place; the
    vendored libraries (static/vendor/, already minified) are left as they are."""
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".js", ".css") or "vendor" in path.relative_to(folder).parts or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        path.write_text(js(text) if path.suffix == ".js" else css(text), encoding="utf-8")
