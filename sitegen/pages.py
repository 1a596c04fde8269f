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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from experiments.numbers import format_number

from . import messages
from .markdown import Lesson, derivation, derivation_id
from .runtime import plan_runtime
from .scripts import ScriptBundles
from .template_cache import COMPILED

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
HUB_SOURCE = re.compile(r"^([\w.-]+/[\w.-]+) config\.json \(Hugging Face hub")


@dataclass
class Nav:
    prev: dict | None    # {"href", "title", "chapter"}
    next: dict | None
    planned_before: list[str] = field(default_factory=list)   # ids of the unwritten chapters between prev and here
    planned_after: list[str] = field(default_factory=list)    # ... between here and next


def road(course: dict, lessons: list[Lesson]) -> dict[str, Nav]:
    """Each lesson's previous and next lesson along the outline (lessons in course order), with the planned
    chapters the step passes over (before the first lesson and after the last one too), so that a page never
    presents its neighbour as the chapter right next to it when an unwritten one stands in between."""
    ids = [ch.get("id") for ch in course.get("chapters", [])]
    planned = [ch.get("status") == "planned" for ch in course.get("chapters", [])]

    def between(a: int, b: int) -> list[str]:
        return [ids[k] for k in range(a + 1, b) if planned[k]]

    def link(lesson):
        return lesson and {"href": lesson.page, "title": lesson.meta["title"], "chapter": lesson.meta["chapter"]}
    at = [ids.index(lesson.meta["chapter"]) for lesson in lessons]
    out = {}
    for i, lesson in enumerate(lessons):
        before, after = (at[i - 1] if i else -1), (at[i + 1] if i + 1 < len(lessons) else len(ids))
        out[lesson.id] = Nav(prev=link(lessons[i - 1]) if i else None,
                             next=link(lessons[i + 1]) if i + 1 < len(lessons) else None,
                             planned_before=between(before, at[i]), planned_after=between(at[i], after))
    return out


def environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, bytecode_cache=COMPILED)
    # runtime: the versioned URLs of the Python runtime (sitegen.runtime.plan_runtime), used by base.html;
    # script_bundle: each page's scripts as one file (sitegen.scripts), made as the pages are rendered, each headed
    # by the learner message table of the course the templates belong to (sitegen.messages)
    js = templates.parent / "static" / "js"
    env.globals.update(csp=CSP, root="", runtime=plan_runtime(js / "worker.js"),
                       script_bundle=ScriptBundles(js, messages.load(templates.parent.parent)))
    return env


def _chapter_title(chapter: dict) -> str:
    return chapter.get("title") or "（题目待定）"


EXERCISE_MARK = re.compile(r'<div class="exercise" id="[^"]*" data-exercise="([^"]+)"')   # exercise.html's root


def outline(course: dict, lessons: dict[str, Lesson]) -> list[dict]:
    """The chapters of data/course.json as the home page lists them: linked when written, else marked 未写; a
    lesson's exercises (their names, from its page) for the count of those solved (exercise-progress.js)."""
    out = []
    for ch in course.get("chapters", []):
        lesson = lessons.get(ch.get("lesson") or "") if ch.get("status") == "written" else None
        out.append({"id": ch["id"], "title": _chapter_title(ch), "summary": ch.get("summary"),
                    "href": lesson.page if lesson else None,
                    "reading_minutes": lesson.meta.get("reading_minutes") if lesson else None,
                    "exercises": EXERCISE_MARK.findall(lesson.body) if lesson else []})
    return out


CALC_ROWS = ("formula", "subst", "value")   # the "= ..." lines: the list's plain rows (no class; see course.css)


def ledger_entries(lesson: Lesson, numbers: dict[str, Any]) -> list[dict]:
    """The 数字口径 list: every number the page cites, in order of first use, with its full derivation. An entry's
    id (num-NAME) is what every use of the number points at and where an instructor finds a number by name. Its
    rows are (class, HTML): class "" for a calculation line, else the row's kind (where, sources, check ok|bad)."""
    entries = []
    for name, style in lesson.used.items():
        number = numbers[name]
        rows = derivation(number, where=True)
        entries.append({"name": name, "id": derivation_id(name), "display": format_number(number, style),
                        "label": Markup(rows[0][1]),
                        "rows": [("" if cls in CALC_ROWS else cls, Markup(text)) for cls, text in rows[1:]]})
    return entries


def model_source_zh(model_id: str, meta: dict, course: dict) -> str:
    """A short Chinese line saying where a model's config comes from, for the page (data/ keeps its English notes
    for maintainers): meta.source_zh, else data/course.json model_sources_zh[id], else built from a Hugging Face
    repository named in meta.source, else a generic line."""
    given = meta.get("source_zh") or (course.get("model_sources_zh") or {}).get(model_id)
    if given:
        return given
    hub = HUB_SOURCE.match(meta.get("source") or "")
    if hub:
        return f"{hub.group(1).split('/')[0]} 在 Hugging Face 模型页 {hub.group(1)} 发布的 config.json"
    return "课程收录的 config.json"


def provenance(lesson: Lesson, numbers: dict[str, Any], models: dict[str, Any], course: dict) -> dict:
    """What the footer says about where the page's numbers come from: the models whose configs they read (each
    with a Chinese source line) and how many have an independent check. `models` are the build's ModelNumbers
    (alias -> object with .id, .name, .where, .meta): a number read a model when a source names its .where."""
    used: dict[str, Any] = {}
    checked = failed = cited = 0
    for name in lesson.used:
        number = numbers[name]
        read = [mn for mn in models.values() if any(s.startswith(mn.where) for s in number.sources)]
        used.update({mn.id: mn for mn in read})
        cited += not read
        if number.check:
            checked += 1
            failed += "✗" in number.check
    described = [{"name": mn.name, "source": model_source_zh(mn.id, mn.meta, course)} for mn in used.values()]
    return {"models": described, "checked": checked, "failed": failed, "count": len(lesson.used), "cited": cited,
            "computed": len(lesson.used) - cited}


def render_lesson_page(env: jinja2.Environment, course: dict, lesson: Lesson, nav: Nav,
                       numbers: dict[str, Any], models: dict[str, Any]) -> str:
    chapter: dict = next((c for c in course.get("chapters", []) if c.get("id") == lesson.meta.get("chapter")), {})
    return env.get_template("lesson.html").render(
        course=course, lesson=lesson, meta=lesson.meta, body=Markup(lesson.body), chapter=chapter,
        toc=lesson.toc, nav=nav, ledger=ledger_entries(lesson, numbers), ledger_id=LEDGER_ID, scripts=lesson.scripts,
        calls=lesson.calls, preload=lesson.preload, first_paint_after=lesson.first_paint_after,
        provenance=provenance(lesson, numbers, models, course))


def render_index_page(env: jinja2.Environment, course: dict, lessons: dict[str, Lesson]) -> str:
    chapters = outline(course, lessons)
    return env.get_template("index.html").render(
        course=course, chapters=chapters, calls=[],
        scripts=["exercise-progress.js"] if any(ch["exercises"] for ch in chapters) else [])
