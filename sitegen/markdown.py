"""Lesson Markdown: markdown-it-py (CommonMark + GFM tables) plus the course's small plugins.

A lesson is a Markdown file with YAML front matter. On top of CommonMark it understands:

    ::: warning                      a callout: warning (⚠ 常见误解), note (🔍 细看一层), try (🎯 动手试试);
    正文……                            text after the name replaces the default title: `::: note 为什么是三个矩阵`
    :::

    ```{widget} ledger-total         a widget: the body is YAML options; the build-time HTML comes from
    model: anchor                    widget_renderers[name](options, context), wrapped in
    ```                              <div class="widget" data-widget=... data-options='{JSON}'> (JSON: the
                                     declared defaults overlaid with the options)

    {n}`anchor.total`                a computed number in a style (n, pct, wan, yi, B, M, x, optionally with a
                                     digit count: {pct0}, {B1}), described by its entry in the page's 数字口径 list
                                     (label, formula, substituted form, value, sources, check), which
                                     site/static/js/popover.js shows beside it on hover, focus and tap

    {term}`softcap`                  a device's one name (data/glossary.json: 软封顶) with its one-line gloss as the
                                     element's title; an id not in the glossary fails the build

    {claim}`a.x / a.y >= 3`          a relation the prose relies on, checked against the same numbers and
                                     rendered as nothing (sitegen/claims.py); a false claim fails the build

Each plugin is one `md.use(...)`; validation happens in core rules that run once per parse and append a
LessonError (file:line, what was expected) to the page's error list, so one build reports every problem of
every lesson at once. Rendering never fails: a bad reference renders as a visible placeholder.
"""
from __future__ import annotations

import difflib
import functools
import html
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import yaml
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

from experiments.errors import CourseError
from experiments.format import STYLES, valid_style
from experiments.numbers import derivation_rows, format_number
from experiments.widget import LAST_SCRIPTS

from .claims import claims_plugin
from .errors import BuildError, LessonError

CALLOUTS = {  # name -> (icon, default title)
    "warning": ("⚠", "常见误解"),
    "note": ("🔍", "细看一层"),
    "try": ("🎯", "动手试试"),
}
WIDGET_INFO = "{widget}"
TERM_ROLE = "term"   # {term}`softcap`: a device's one name from data/glossary.json, with its gloss
FRONT_MATTER_REQUIRED: dict[str, type] = {"title": str, "chapter": str}
FRONT_MATTER_OPTIONAL: dict[str, type] = {"id": str, "order": int, "summary": str,   # id: the folder's name
                                          "reading_minutes": int}

# The first widget the build answered (its controls work before Python) is drawn set up in the page's first paint:
# an empty element right after it (FIRST_WIDGET_MARK) and, in <head>, <link rel=expect href=#MARK blocking=render>
# keep the browser from painting until the parser has passed it, so widgets.js has set it up by then (without it, a
# slow phone painted the text above it first and the widget a frame or two later, its controls still disabled).
# Only when it ends within FIRST_WIDGET_WITHIN bytes of the lesson's body: a phone at 4x CPU parses about 13-25 kB
# per parser task, so the first paint waits a few tasks at most; a widget further down does not hold it back.
FIRST_WIDGET_MARK = "first-widget-parsed"
FIRST_WIDGET_MARK_HTML = f'<div id="{FIRST_WIDGET_MARK}" hidden></div>\n'
FIRST_WIDGET_WITHIN = 64 * 1024

WidgetRenderer = Callable[[dict, "WidgetContext"], str]
Formatter = Callable[[Any, str], str]


# -- what a render needs and what it collects ------------------------------------------------------------------
@dataclass
class Page:
    """One lesson being rendered: its inputs (numbers, formatter, widgets) and what the plugins collect.

    numbers=None means the numbers could not be computed (the build already has errors): references are then
    rendered as placeholders without further errors.
    """
    file: str
    numbers: Mapping[str, Any] | None = None
    fmt: Formatter = format_number
    widgets: Mapping[str, WidgetRenderer] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)
    errors: list[LessonError] = field(default_factory=list)
    used: dict[str, str] = field(default_factory=dict)  # number name -> first style, in order of first use
    scripts: list[tuple[str, ...]] = field(default_factory=list)  # each widget's static/js files, in load order
    calls: list[str] = field(default_factory=list)  # browser entry points its widgets call (the worker warms them)
    preload: list[str] = field(default_factory=list)  # site files its widgets fetch at once (<link rel=preload>)
    fetches: list[str] = field(default_factory=list)  # data files its widgets may fetch later (experiments.widget
                                                      # data_ref): the build publishes them
    claims: list[tuple[int, str, bool]] = field(default_factory=list)  # (line, claim, holds), sitegen/claims.py
    first_widget_marked: bool = False  # FIRST_WIDGET_MARK written after the first widget with build-time answers
    _counters: dict[str, int] = field(default_factory=dict)

    def error(self, line: int | None, message: str) -> None:
        self.errors.append(LessonError(self.file, line, message))

    def next_id(self, prefix: str) -> str:
        self._counters[prefix] = self._counters.get(prefix, 0) + 1
        return f"{prefix}-{self._counters[prefix]}"

    def use(self, name: str, style: str) -> None:
        self.used.setdefault(name, style)

    def need_script(self, *files: str) -> None:
        """Files one widget needs, in the order it needs them loaded (experiments.widget.Widget.scripts)."""
        self.scripts.append(files)


@dataclass
class WidgetContext:
    """What a widget renderer may use: the page's numbers (use_number records the number as cited) and data."""
    name: str
    file: str
    line: int
    page: Page
    answered: bool = False   # the renderer wrote build-time answers for its controls (sitegen/widgets.py)

    @property
    def data(self) -> Mapping[str, Any]:
        return self.page.data

    def number(self, name: str, style: str = "n") -> Any:
        """The Number `name`, recorded as used on this page (so it appears in 数字口径)."""
        numbers = self.page.numbers or {}
        if name not in numbers:
            raise LessonError(self.file, self.line, f"widget {self.name}: unknown number {name!r}")
        self.page.use(name, style)
        return numbers[name]

    def format(self, name: str, style: str = "n") -> str:
        return self.page.fmt(self.number(name, style), style)


@dataclass
class Lesson:
    file: str                      # 'lessons/c4-transformer-block/lesson.md'
    meta: dict                     # validated front matter
    body: str                      # HTML
    toc: list[tuple[str, str]]     # (heading id, heading text) of the h2 parts
    used: dict[str, str]           # number name -> first style, in order of first use
    scripts: list[str] = field(default_factory=list)   # static/js files its widgets need, in load order
    calls: list[str] = field(default_factory=list)     # browser entry points its widgets call
    preload: list[str] = field(default_factory=list)   # site files fetched as soon as the page loads
    first_paint_after: str | None = None   # the id the first paint waits for (FIRST_WIDGET_MARK), if any
    fetches: list[str] = field(default_factory=list)   # data files its widgets may fetch later (published by the build)

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def page(self) -> str:
        return f"{self.meta['id']}.html"


def script_order(needs: list[tuple[str, ...]]) -> list[str]:
    """One load order (the page's script file, sitegen/scripts.py, holds the scripts in it) that keeps every
    widget's own order: a file comes after every file some widget lists before it, and otherwise in order of first
    mention. The declarations put the shared core (widgets.js) before a lesson's widget script and the chart
    drawing (charts.js) last."""
    before: dict[str, set[str]] = {}
    for files in needs:
        for i, f in enumerate(files):
            before.setdefault(f, set()).update(files[:i])
    order: list[str] = []
    while len(order) < len(before):
        ready = [f for f in before if f not in order and before[f] <= set(order)]
        if not ready:
            raise ValueError(f"widget scripts need each other in a cycle: {sorted(set(before) - set(order))}")
        order.append(ready[0])
    return [f for f in order if f not in LAST_SCRIPTS] + [f for f in order if f in LAST_SCRIPTS]


# -- the parser ------------------------------------------------------------------------------------------------
@functools.cache
def make_parser() -> MarkdownIt:
    """The one lesson parser (built once; markdown-it parsers are reusable)."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(front_matter_plugin)
    md.use(anchors_plugin, min_level=2, max_level=3)
    md.use(table_scroll_plugin)
    md.use(callout_plugin)
    md.use(block_check_plugin)
    md.use(widget_plugin)
    md.use(number_role_plugin)
    md.use(claims_plugin)
    return md


def render_markdown(text: str, page: Page) -> tuple[list[Token], str]:
    """Parse and render Markdown for `page` (errors land in page.errors); returns (tokens, html)."""
    md, env = make_parser(), {"page": page}
    tokens = md.parse(text, env)
    return tokens, md.renderer.render(tokens, md.options, env)


def _by_line(error: LessonError) -> int:
    return error.line or 0


def render_lesson(text: str, page: Page) -> Lesson:
    """A lesson file's text -> Lesson; raises LessonErrors (all of them, sorted by line) as one BuildError."""
    tokens, body = render_markdown(text, page)
    meta = read_front_matter(tokens, page)
    if page.errors:
        in_order: list[LessonError] = sorted(page.errors, key=_by_line)
        raise BuildError(in_order)
    body, wait_for = first_paint_target(body)
    return Lesson(page.file, meta, body, table_of_contents(tokens), in_page_order(page.used, body),
                  script_order(page.scripts), list(dict.fromkeys(page.calls)), list(dict.fromkeys(page.preload)),
                  wait_for, list(dict.fromkeys(page.fetches)))


def first_paint_target(body: str) -> tuple[str, str | None]:
    """(body, FIRST_WIDGET_MARK) if the marked widget ends within FIRST_WIDGET_WITHIN bytes, else (body without
    the mark, None): see FIRST_WIDGET_MARK."""
    at = body.find(FIRST_WIDGET_MARK_HTML)
    if at < 0:
        return body, None
    if len(body[:at].encode("utf-8")) > FIRST_WIDGET_WITHIN:
        return body.replace(FIRST_WIDGET_MARK_HTML, "", 1), None
    return body, FIRST_WIDGET_MARK


def in_page_order(used: dict[str, str], body: str) -> dict[str, str]:
    """Numbers in the order a reader meets them (widgets resolve before prose, so parse order is not it)."""
    def first(name: str) -> int:
        at = body.find(f'aria-describedby="{html.escape(derivation_id(name))}"')
        return at if at >= 0 else len(body)
    return dict(sorted(used.items(), key=lambda item: first(item[0])))


def _page_env(env) -> Page:
    page = env.get("page")
    if page is None:
        page = env["page"] = Page(file="<markdown>")
    return page


def _line(token: Token | None) -> int | None:
    return token.map[0] + 1 if token is not None and token.map else None


# -- front matter ----------------------------------------------------------------------------------------------
def read_front_matter(tokens: list[Token], page: Page) -> dict:
    """The YAML front matter as a dict, checked against FRONT_MATTER_REQUIRED/OPTIONAL (errors -> page)."""
    token = tokens[0] if tokens and tokens[0].type == "front_matter" else None
    if token is None:
        page.error(1, "expected YAML front matter (--- title/chapter ---) at the top of the lesson")
        return {}
    try:
        meta = yaml.safe_load(token.content) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        page.error(2 + mark.line if mark else 1, f"front matter is not valid YAML ({getattr(e, 'problem', e)})")
        return {}
    if not isinstance(meta, dict):
        page.error(1, f"front matter must be a YAML mapping, got {type(meta).__name__}")
        return {}
    lines = token.content.splitlines()

    def line_of(key: str) -> int:
        return next((2 + i for i, text in enumerate(lines) if text.startswith(f"{key}:")), 1)

    for key, kind in FRONT_MATTER_REQUIRED.items():
        if key not in meta:
            page.error(1, f"front matter: missing '{key}' ({kind.__name__})")
    for key, kind in {**FRONT_MATTER_REQUIRED, **FRONT_MATTER_OPTIONAL}.items():
        if meta.get(key) is not None and (not isinstance(meta[key], kind) or isinstance(meta[key], bool)):
            page.error(line_of(key), f"front matter: '{key}' expected {kind.__name__}, got {meta[key]!r}")
    for key in FRONT_MATTER_OPTIONAL:
        meta.setdefault(key, None)
    stem = lesson_id(page.file)
    if isinstance(meta.get("id"), str) and meta["id"] != stem:
        page.error(line_of("id"), f"front matter: id {meta['id']!r} must equal the folder's name {stem!r}")
    meta["id"] = stem   # the lesson's id is its folder's name, written once (an id in the front matter may repeat it)
    return meta


def lesson_id(file: str) -> str:
    """A lesson's id, its folder's name: lessons/<id>/lesson.md -> <id> (a lone Markdown file x.md: x)."""
    parts = file.split("/")
    if parts[-1] == "lesson.md" and len(parts) > 1:
        return parts[-2]
    return parts[-1].removesuffix(".md")


def table_of_contents(tokens: list[Token]) -> list[tuple[str, str]]:
    """(id, text) of every h2 (the lesson's ① ② … parts), in order."""
    out = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2" and token.attrGet("id"):
            text = "".join(c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline"))
            out.append((str(token.attrGet("id")), text.strip()))
    return out


# -- tables: scroll inside their own box on narrow screens; alignment as classes (the CSP refuses style="") ---
def table_scroll_plugin(md: MarkdownIt) -> None:
    def table_open(self, tokens, idx, options, env):
        # each scrollable region needs its own name: the table's number on the page and its column headings
        n = _page_env(env).next_id("table").rsplit("-", 1)[1]
        heads = []
        for token in tokens[idx + 1:]:
            if token.type == "thead_close":
                break
            if token.type == "inline":   # the cell's plain text: text and code spans, no Markdown syntax
                heads.append("".join(c.content for c in token.children or [] if c.type in ("text", "code_inline"))
                             .strip())
        label = f"表 {n}：{'、'.join(h for h in heads if h)}（可横向滚动）"
        return (f'<div class="table-scroll" role="region" tabindex="0" aria-label="{html.escape(label)}">\n'
                + self.renderToken(tokens, idx, options, env))

    def table_close(self, tokens, idx, options, env):
        return self.renderToken(tokens, idx, options, env) + "</div>\n"

    def cell_open(self, tokens, idx, options, env):
        token = tokens[idx]
        style = token.attrGet("style")
        if isinstance(style, str) and style.startswith("text-align:"):
            del token.attrs["style"]
            token.attrJoin("class", "align-" + style.removeprefix("text-align:"))
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    md.add_render_rule("th_open", cell_open)
    md.add_render_rule("td_open", cell_open)


# -- callouts --------------------------------------------------------------------------------------------------
def callout_plugin(md: MarkdownIt) -> None:
    """`::: warning|note|try [title]` … `:::` -> <aside class="callout callout-NAME" role="note">."""
    for name, (icon, default_title) in CALLOUTS.items():
        def render(self, tokens, idx, options, env, name=name, icon=icon, default_title=default_title):
            token = tokens[idx]
            if token.nesting == -1:
                return "</aside>\n"
            title = token.info.strip()[len(name):].strip() or default_title
            title_id = _page_env(env).next_id("callout")
            return (f'<aside class="callout callout-{name}" role="note" aria-labelledby="{title_id}">\n'
                    f'<p class="callout-title" id="{title_id}"><span class="callout-icon" aria-hidden="true">'
                    f'{icon}</span> {html.escape(title)}</p>\n')
        md.use(container_plugin, name, render=render)


def block_check_plugin(md: MarkdownIt) -> None:
    """Errors for directives markdown-it would silently accept: a callout or widget block that is never closed
    (it would swallow the rest of the lesson) and a `::: NAME` that is not a known callout."""
    md.core.ruler.after("block", "course_block_check", _check_blocks)


_CALLOUT_LINE = re.compile(r"^\s*:::\s*(\S*)")


def _check_blocks(state: StateCore) -> None:
    page, lines = _page_env(state.env), state.src.split("\n")

    def closes(first: int, marker: str, last: int) -> bool:
        return first < last < len(lines) and lines[last].strip().startswith(marker)

    for token in state.tokens:
        if token.map is None:
            continue
        if token.type.startswith("container_") and token.type.endswith("_open") \
                and not closes(token.map[0], ":::", token.map[1]):   # a container's map ends at its closing line
            page.error(_line(token), f"callout '{token.info.strip().split()[0]}' is never closed: "
                                     "expected a line ':::' after its text")
        elif token.type == "fence" and token.info.strip().startswith(WIDGET_INFO) \
                and not closes(token.map[0], token.markup, token.map[1] - 1):   # a fence's map ends after it
            name = token.info.strip()[len(WIDGET_INFO):].strip() or "?"
            page.error(_line(token), f"widget '{name}' is never closed: expected a line {token.markup} "
                                     "after its options")
        elif token.type == "inline":
            m = _CALLOUT_LINE.match(token.content)
            if m and m.group(1) not in CALLOUTS:
                known = ", ".join(CALLOUTS)
                page.error(_line(token), f"unknown callout '{m.group(1)}' (known: {known})" if m.group(1) else
                           f"a ':::' with no callout to close (callouts: {known})")


# -- widgets ---------------------------------------------------------------------------------------------------
def widget_plugin(md: MarkdownIt) -> None:
    """```{widget} NAME + YAML options -> <div class="widget" ...> holding the build-time rendering."""
    md.core.ruler.push("course_widgets", _resolve_widgets)
    default_fence = cast(RendererHTML, md.renderer).rules["fence"]

    def fence(self, tokens, idx, options, env):
        token = tokens[idx]
        if "widget" not in token.meta:
            return default_fence(tokens, idx, options, env)
        name, opts, inner = token.meta["widget"]
        data = html.escape(json.dumps(opts, ensure_ascii=False, separators=(",", ":")), quote=True)
        out = (f'<div class="widget" data-widget="{html.escape(name)}" data-options=\'{data}\'>\n'
               f'<div class="widget-static">\n{inner}</div>\n</div>\n')
        page = env.get("page")
        if token.meta.get("answered") and page is not None and not page.first_widget_marked:
            page.first_widget_marked = True
            out += FIRST_WIDGET_MARK_HTML
        return out

    md.add_render_rule("fence", fence)


def _resolve_widgets(state: StateCore) -> None:
    page = _page_env(state.env)
    for token in state.tokens:
        if token.type != "fence" or not token.info.strip().startswith(WIDGET_INFO):
            continue
        line = cast(int, _line(token))   # (a fence always has its lines)
        name = token.info.strip()[len(WIDGET_INFO):].strip()
        token.meta["widget"] = (name or "?", {}, '<p class="widget-missing">（组件未能生成）</p>\n')
        if not name:
            page.error(line, "widget: expected a name after {widget}, e.g. ```{widget} ledger-total")
            continue
        if name not in page.widgets:
            known = ", ".join(sorted(page.widgets)) or "none registered"
            page.error(line, f"unknown widget {name!r} (known: {known})")
            continue
        try:
            options = yaml.safe_load(token.content) if token.content.strip() else {}
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            page.error(line + 1 + mark.line if mark else line,
                       f"widget {name}: options are not valid YAML ({getattr(e, 'problem', e)})")
            continue
        if not isinstance(options, dict):
            page.error(line, f"widget {name}: options must be a YAML mapping, got {type(options).__name__}")
            continue
        try:
            json.dumps(options)
        except (TypeError, ValueError):
            page.error(line, f"widget {name}: options must be plain JSON values (text, numbers, lists, mappings)")
            continue
        if page.numbers is None:       # the inputs already failed: a rendering would only repeat those problems
            continue
        ctx = WidgetContext(name, page.file, line, page)
        try:
            inner = page.widgets[name](options, ctx)
        except LessonError as e:
            page.errors.append(e)
            continue
        except BuildError as e:         # several problems, each at its own file and line (sitegen/jscheck.py)
            page.errors += [e for e in e.errors if isinstance(e, LessonError)]
            continue
        except Exception as e:  # noqa: BLE001 - any renderer failure is reported at the lesson line, no traceback
            page.error(line, f"widget {name}: {e.__class__.__name__}: {e}")
            continue
        merged = getattr(page.widgets[name], "options", None)   # a declared widget: its defaults + these options
        token.meta["widget"] = (name, merged(options) if merged else options,
                                inner if inner.endswith("\n") else inner + "\n")
        token.meta["answered"] = ctx.answered


# -- numbers ---------------------------------------------------------------------------------------------------
def number_role_plugin(md: MarkdownIt) -> None:
    """{style}`name` -> the number's display, pointing at its derivation (see number_html)."""
    md.use(myst_role_plugin)
    md.core.ruler.push("course_numbers", _resolve_numbers)

    def render(self, tokens, idx, options, env):
        return tokens[idx].meta.get("html", "")

    md.add_render_rule("myst_role", render)


def _inline_children_with_lines(tokens: list[Token]):
    """(child, line) for every inline child; lines advance at soft and hard breaks."""
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        line = _line(token) or 0
        for child in token.children:
            yield child, line
            line += child.content.count("\n") if child.type not in ("softbreak", "hardbreak") else 1


def _resolve_numbers(state: StateCore) -> None:
    page = _page_env(state.env)
    for child, line in _inline_children_with_lines(state.tokens):
        if child.type != "myst_role":
            continue
        style, name = child.meta.get("name", ""), child.content.strip()
        if style == TERM_ROLE:
            child.meta["html"] = term_html(page, line, name)
            continue
        ref = f"{{{style}}}`{name}`"
        child.meta["html"] = f'<span class="num num-missing">{html.escape(ref)}</span>'
        if not valid_style(style):
            page.error(line, f"unknown number style {style!r} in {ref} (styles: {', '.join(STYLES)}, "
                             "optionally followed by a digit count, e.g. pct0)")
            continue
        if page.numbers is None:
            continue
        if name not in page.numbers:
            close = difflib.get_close_matches(name, list(page.numbers), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            page.error(line, f"unknown number {name!r} in {ref}{hint}")
            continue
        number = page.numbers[name]
        try:
            display = page.fmt(number, style)
        except (CourseError, KeyError, TypeError, ValueError) as e:
            page.error(line, f"{ref}: cannot format in style {style!r} ({e})")
            continue
        page.use(name, style)
        child.meta["html"] = number_html(name, style, display)


def term_html(page: Page, line: int, term_id: str) -> str:
    """{term}`id`: the glossary's one name for a device (data/glossary.json), its one-line gloss shown on hover and
    read as the element's title. An id not in the glossary is an error at the role's line. Widget templates write
    the same with {{ term("id") }} (sitegen/widgets.py)."""
    terms = {t["id"]: t for t in page.data.get("glossary", {}).get("terms", [])}
    if term_id not in terms:
        close = difflib.get_close_matches(term_id, list(terms), n=1)
        page.error(line, f"unknown term {term_id!r} in {{term}}`{term_id}`: expected an id in data/glossary.json"
                         + (f" (did you mean {close[0]!r}?)" if close else ""))
        return f'<span class="term num-missing">{html.escape(term_id)}</span>'
    t = terms[term_id]
    return f'<span class="term" title="{html.escape(t["gloss"])}">{html.escape(t["name"])}</span>'


def derivation_id(name: str) -> str:
    """The id of a number's entry in the page's 数字口径 list (lesson.html). Each derivation is written once, there;
    every use of the number points at it with aria-describedby (a screen reader reads the entry: value, label and
    derivation rows), and popover.js shows a copy of its label and rows next to the number."""
    return f"num-{name}"


def number_html(name: str, style: str, display: str) -> str:
    """The number, described by (and showing in its popover) its entry in the 数字口径 list. data-style is for the
    build only: sitegen.changes.mark_uses records it with the use's id and drops it from the page."""
    return (f'<span class="num" tabindex="0" aria-describedby="{html.escape(derivation_id(name))}" '
            f'data-style="{style}">{html.escape(display)}</span>')


def derivation(number, where: bool = False) -> list[tuple[str, str]]:
    """(kind, escaped HTML) lines explaining a number, from experiments.numbers.derivation_rows (the browser
    renders the same rows with site/static/js/derivation.js)."""
    esc = html.escape
    out = []
    for row in derivation_rows(number, where):
        text = esc(row["text"])
        if "code" in row:
            text += "；".join(f"<code>{esc(c)}</code>" for c in row["code"])
        if "items" in row:
            text += "，".join(esc(t) + (f"（<code>{esc(k)}</code>）" if k else "") for t, k in row["items"])
        out.append((row["cls"], text))
    return out
