"""Build-time renderings of the lesson widgets: complete tables (and chart data) computed by the engine.

Each renderer takes the widget's YAML options and a WidgetContext (sitegen/markdown.py) and returns HTML. The
HTML is the widget's first state: the page is complete without JavaScript; site/static/js/widgets.js later makes
the same markup interactive and recomputes it in the browser with the same `experiments` package. Templates live
in site/templates/widgets/; this module only gathers the numbers they show.

ctx.data holds: models (alias -> course_numbers.ModelNumbers), course (data/course.json), evolution
(data/evolution.json), reference (data/reference_counts.json) and charts (a list the build fills with Plotly
figure specs, one per chart element on the page).
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from experiments.ledger import views
from .errors import LessonError
from experiments.labels import gap_label
from experiments.widgets_data import (baseline_view, crossover_series, ledger_compare, ledger_layer,
                                      ledger_total, tracker_stages)

from .markdown import number_html, render_markdown

TEMPLATES = Path(__file__).resolve().parent.parent / "site" / "templates" / "widgets"
_env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, undefined=StrictUndefined,
                   trim_blocks=True, lstrip_blocks=True)
_env.filters["grouped"] = lambda v: f"{v:,}" if isinstance(v, int) else v
_env.filters["pct"] = lambda v: f"{float(v) * 100:.1f}%"


def _model(ctx, options, key="model"):
    alias = options.get(key, "anchor")
    models = ctx.data["models"]
    if alias not in models:
        raise LessonError(ctx.file, ctx.line, f"widget {ctx.name}: unknown model {alias!r} "
                          f"(known: {', '.join(sorted(models))})")
    return alias, models[alias]


def _choices(ctx) -> list:
    """(alias, ModelNumbers) for every model in data/, for the model pickers."""
    return sorted(ctx.data["models"].items(), key=lambda item: item[1].name.lower())


def json_script(value, cls: str) -> Markup:
    """<script type="application/json" class=cls> holding value; <, > and & are JSON-escaped (\\u003c ...), so
    the text can never close the element and JSON.parse(textContent) gives back exactly value."""
    payload = (json.dumps(value, ensure_ascii=False, separators=(",", ":"))
               .replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))
    return Markup(f'<script type="application/json" class="{html.escape(cls)}">{payload}</script>')


def _tools(ctx):
    """Template helpers: num() renders a computed number with its derivation popover; md() inline Markdown;
    chart() a lazily drawn Plotly figure; json() data for widgets.js; uid() a page-unique id."""
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


def render(template: str, ctx, **values) -> str:
    ctx.page.need_script(*SCRIPTS.get(ctx.name, ()))
    return _env.get_template(template).render(**_tools(ctx), **values)


# -- the widgets -------------------------------------------------------------------------------------------------
TRACKER_MODELS = ("anchor", "baseline")   # the tracker's model toggle: the anchor, and our numpy baseline


def tracker(options, ctx) -> str:
    alias, mn = _model(ctx, options)
    settings = ctx.data["course"]["tracker"]
    reference = ctx.data.get("reference_counts", {})
    toggle = [a for a in dict.fromkeys([alias, *options.get("models", TRACKER_MODELS)])]
    models = [_model(ctx, {"model": a}) for a in toggle]
    stages = tracker_stages(mn.ledger, settings, reference.get(mn.id, {}), mn.id == settings.get("model"))
    data = {"settings": settings, "reference": {a: reference.get(m.id, {}) for a, m in models},
            "course_titles": [a for a, m in models if m.id == settings.get("model")],
            "baseline": "baseline" if "baseline" in toggle else None}
    return render("tracker.html", ctx, alias=alias, model=mn, stages=stages, tracker=settings, models=models,
                  data=data, prefix=ctx.page.next_id("tracker"))


def classic_gap(options, ctx) -> str:
    alias, mn = _model(ctx, options)
    items = [(gap_label(name), value) for name, value in views.classic_gap(mn.ledger)]
    return render("classic_gap.html", ctx, alias=alias, model=mn, items=items,
                  classic=views.classic_estimate(mn.ledger), total=mn.ledger.total)


def ledger_total_widget(options, ctx) -> str:
    alias, mn = _model(ctx, options)
    data = ledger_total(mn.ledger, mn.name)
    return render("ledger_total.html", ctx, alias=alias, model=mn, data=data, choices=_choices(ctx))


def ledger_layer_widget(options, ctx) -> str:
    alias, mn = _model(ctx, options)
    data = ledger_layer(mn.ledger)
    return render("ledger_layer.html", ctx, alias=alias, model=mn, data=data, choices=_choices(ctx))


def ledger_compare_widget(options, ctx) -> str:
    aliases = options.get("models", ["gpt2", "llama7b", "anchor"])
    models = [(_model(ctx, {"model": a})) for a in aliases]
    data = ledger_compare([(a, mn.name, mn.ledger) for a, mn in models])
    return render("ledger_compare.html", ctx, data=data, aliases=aliases, choices=_choices(ctx))


def evolution(options, ctx) -> str:
    return render("evolution.html", ctx, table=ctx.data["evolution"])


def crossover(options, ctx) -> str:
    alias, mn = _model(ctx, options)
    data = crossover_series(mn.ledger, name=mn.name)
    return render("crossover.html", ctx, alias=alias, model=mn, data=data, choices=_choices(ctx))


def baseline(options, ctx) -> str:
    alias, mn = _model(ctx, {"model": options.get("model", "baseline")})
    from experiments.baseline import summary
    return render("baseline.html", ctx, alias=alias, model=mn, view=baseline_view(summary()))


def code(options, ctx) -> str:
    source = options.get("source")
    if not isinstance(source, str) or not source.strip():
        raise LessonError(ctx.file, ctx.line, "widget code: expected option 'source' (the Python to show)")
    return render("code.html", ctx, source=source.rstrip("\n"), cell_id=ctx.page.next_id("cell"),
                  title=options.get("title", "页内实验"))


def byo_config(options, ctx) -> str:
    alias, mn = _model(ctx, {"model": options.get("example", "anchor")})
    compare = options.get("compare", ["gpt2", alias])
    for a in compare:
        _model(ctx, {"model": a})
    return render("byo_config.html", ctx, example=alias, model=mn, compare=compare,
                  byo_id=ctx.page.next_id("byo"))


WIDGETS = {
    "tracker": tracker, "classic-gap": classic_gap, "ledger-total": ledger_total_widget,
    "ledger-layer": ledger_layer_widget, "ledger-compare": ledger_compare_widget, "evolution": evolution,
    "crossover": crossover, "baseline": baseline, "code": code, "byo-config": byo_config,
}

from .widgets_ffn import FFN_WIDGETS  # noqa: E402  (the FFN lesson's widgets live in their own module)

WIDGETS.update(FFN_WIDGETS)

# The static/js files that make each widget live (widgets without an entry stay as the build rendered them).
C4_SCRIPTS = ("widgets.js", "widgets-c4.js")
SCRIPTS: dict[str, tuple[str, ...]] = {
    "tracker": C4_SCRIPTS, "ledger-total": C4_SCRIPTS, "ledger-layer": C4_SCRIPTS, "ledger-compare": C4_SCRIPTS,
    "crossover": C4_SCRIPTS, "baseline": C4_SCRIPTS,
    "byo-config": ("derivation.js", *C4_SCRIPTS, "charts.js"),   # it draws its crossover chart in the browser
    "code": ("widgets.js",),
    **dict.fromkeys(FFN_WIDGETS, ("widgets.js", "widgets-ffn.js")),
}
