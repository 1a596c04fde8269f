"""Build-time rendering of the lesson widgets declared in experiments/lessons/ (experiments.widget.Widget).

For a ```` ```{widget} NAME ```` block: options = the widget's defaults overlaid with the block's YAML; values =
its view(options, data) (pure Python, the same functions the browser's answers come from); HTML = its template
in site/templates/widgets/ rendered with those values and the helpers below. The page records the widget's
scripts, so it loads exactly the JavaScript its widgets need, in the order the declarations give.

Template helpers: num(name, style) a computed number pointing at its derivation; md(text) inline Markdown;
chart(spec, label) a Plotly figure drawn when it scrolls into view; json(value, cls) data for the widget's script;
id, a page-unique id for this widget instance; the filters grouped, pct and attrjson.
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from experiments import lessons
from experiments.widget import OptionError, Widget, WidgetData

from .errors import LessonError
from .markdown import number_html, render_markdown

TEMPLATES = Path(__file__).resolve().parent.parent / "site" / "templates" / "widgets"
_env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, undefined=StrictUndefined,
                   trim_blocks=True, lstrip_blocks=True)
_env.filters["grouped"] = lambda v: f"{v:,}" if isinstance(v, int) else v
_env.filters["pct"] = lambda v: f"{float(v) * 100:.1f}%"
_env.filters["attrjson"] = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def json_script(value, cls: str) -> Markup:
    """<script type="application/json" class=cls> holding value; <, > and & are JSON-escaped (\\u003c ...), so
    the text can never close the element and JSON.parse(textContent) gives back exactly value."""
    payload = (json.dumps(value, ensure_ascii=False, separators=(",", ":"))
               .replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))
    return Markup(f'<script type="application/json" class="{html.escape(cls)}">{payload}</script>')


def _tools(ctx):
    def num(name: str, style: str = "n") -> Markup:
        number = ctx.number(name, style)
        return Markup(number_html(name, style, ctx.page.fmt(number, style)))

    def md(text: str) -> Markup:
        _, out = render_markdown(text, ctx.page)
        out = out.strip()
        if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
            out = out[3:-4]
        return Markup(out)

    def chart(spec: dict, label: str) -> Markup:
        ctx.page.need_script("charts.js")
        chart_id = ctx.page.next_id("chart")
        return Markup(f'<figure class="chart" id="{chart_id}" aria-label="{html.escape(label)}">'
                      f'{json_script(spec, "chart-spec")}'
                      f'<figcaption>{html.escape(label)}</figcaption></figure>')

    return {"num": num, "md": md, "chart": chart, "json": json_script, "uid": ctx.page.next_id}


def renderer(widget: Widget):
    """renderer(options, ctx) -> HTML for one declared widget (sitegen.markdown calls it per widget block)."""
    def render(given: dict, ctx) -> str:
        try:
            options = widget.options(given)
            values = widget.resolve(widget.view)(options, WidgetData(ctx.data["models"], ctx.data))
        except OptionError as e:
            raise LessonError(ctx.file, ctx.line, str(e)) from None
        ctx.page.need_script(*widget.scripts())
        ctx.page.calls.extend(widget.calls)
        return _env.get_template(widget.template).render(**_tools(ctx), **values, id=ctx.page.next_id(widget.name))
    return render


WIDGETS = {name: renderer(w) for name, w in lessons.widgets().items()}
