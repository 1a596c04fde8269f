"""Pages: the Jinja2 templates in site/templates filled with a lesson, the course outline or the 数字口径 list.

Every page sits at the top of the output folder (index.html, <lesson id>.html) and uses relative URLs only
(`static/...`, `index.html`), so the site works from any sub-path and from a file system. Templates get plain
dicts and lists; all HTML escaping is Jinja's (autoescape on) except the lesson body and derivations, which
sitegen.markdown has already escaped and which are passed as Markup.

Content-Security-Policy (one meta tag, CSP below): everything from the site itself and nowhere else, plus
'wasm-unsafe-eval' (Pyodide compiles WebAssembly) and data: images (Plotly's own SVG icons); the Python runtime's
worker from the site; no inline script or style, no eval, no plugins, no form posts. Plotly (plotly.js 4.1.1,
bundled with plotly.py 7.1.0) injects a <style id="plotly.js-style-global"> at load, which a strict style-src
refuses; it skips that when an element with that id and class "no-inline-styles" already exists, so a charts
step can ship Plotly's global rules as a static stylesheet (`<link id="plotly.js-style-global"
class="no-inline-styles" rel="stylesheet" href="static/css/plotly.css">`, via the `head_extra` block) instead
of adding 'unsafe-inline' to style-src. Styles set from JavaScript through element.style are not affected.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from experiments.numbers import format_number

from .markdown import Lesson, derivation, derivation_ids

CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
])
LEDGER_ID = "shuzi-koujing"       # the 数字口径 section's anchor
SOURCE_FILE = re.compile(r"data/[\w./-]+\.(?:json|yaml)")
MODEL_PATH = re.compile(r"data/models/(?:([\w.-]+)/(?:config\.json|meta\.yaml)|([\w.-]+)\.json)")


@dataclass
class Nav:
    prev: dict | None    # {"href", "title", "chapter"}
    next: dict | None


def environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.globals.update(csp=CSP, root="")
    return env


def _chapter_title(chapter: dict) -> str:
    return chapter.get("title") or "（题目待定）"


def outline(course: dict, lessons: dict[str, Lesson]) -> list[dict]:
    """The chapters of data/course.json as the home page lists them: linked when written, else marked 未写."""
    out = []
    for ch in course.get("chapters", []):
        lesson = lessons.get(ch.get("lesson") or "") if ch.get("status") == "written" else None
        out.append({"id": ch["id"], "title": _chapter_title(ch), "summary": ch.get("summary"),
                    "href": lesson.page if lesson else None,
                    "reading_minutes": lesson.meta.get("reading_minutes") if lesson else None})
    return out


def ledger_entries(lesson: Lesson, numbers: dict[str, Any]) -> list[dict]:
    """The 数字口径 list: every number the page cites, in order of first use, with its full derivation."""
    entries = []
    for name, style in lesson.used.items():
        number = numbers[name]
        rows = derivation(number, where=True)
        label_id, rows_id = derivation_ids(name)
        entries.append({"name": name, "id": f"num-{name}", "label_id": label_id, "rows_id": rows_id,
                        "display": format_number(number, style),
                        "label": Markup(rows[0][1]), "rows": [(cls, Markup(text)) for cls, text in rows[1:]]})
    return entries


def model_id_of(path: str) -> str | None:
    """The model a data path names: data/models/<id>/config.json or meta.yaml (or the older data/models/<id>.json)."""
    m = MODEL_PATH.fullmatch(path)
    return m and (m.group(1) or m.group(2))


def provenance(lesson: Lesson, numbers: dict[str, Any], models: dict[str, dict]) -> dict:
    """What the footer says about where the page's numbers come from: the data files and the checks."""
    files: dict[str, None] = {}
    checked = failed = cited = 0
    for name in lesson.used:
        number = numbers[name]
        paths = [path for source in number.sources for path in SOURCE_FILE.findall(source)]
        files.update(dict.fromkeys(paths))
        cited += not any(p.startswith("data/models/") for p in paths)
        if number.check:
            checked += 1
            failed += "✗" in number.check
    described = []
    for path in files:
        model_id = model_id_of(path)
        meta = models.get(model_id, {}).get("meta", {}) if model_id else {}
        described.append({"path": path, "name": meta.get("name"), "source": meta.get("source")})
    return {"files": described, "checked": checked, "failed": failed, "count": len(lesson.used), "cited": cited,
            "computed": len(lesson.used) - cited}


def render_lesson_page(env: jinja2.Environment, course: dict, lesson: Lesson, nav: Nav,
                       numbers: dict[str, Any], models: dict[str, dict]) -> str:
    chapter = next((c for c in course.get("chapters", []) if c.get("id") == lesson.meta.get("chapter")), {})
    return env.get_template("lesson.html").render(
        course=course, lesson=lesson, meta=lesson.meta, body=Markup(lesson.body), chapter=chapter,
        toc=lesson.toc, nav=nav, ledger=ledger_entries(lesson, numbers), ledger_id=LEDGER_ID, scripts=lesson.scripts,
        provenance=provenance(lesson, numbers, models))


def render_index_page(env: jinja2.Environment, course: dict, lessons: dict[str, Lesson]) -> str:
    return env.get_template("index.html").render(course=course, chapters=outline(course, lessons), scripts=[])
