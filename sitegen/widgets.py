"""Build-time rendering of the lesson widgets each lesson declares (experiments.widget.Widget, in lessons/<id>/).

For a ```` ```{widget} NAME ```` block: options = the widget's defaults overlaid with the block's YAML; values =
its view(options, data) (pure Python, the same functions the browser's answers come from); HTML = its template
rendered with those values and the helpers below. A template is looked up in its lesson's folder first
(lessons/<id>/templates/), then among the templates several lessons share (site/templates/widgets/: the code
cell, the row and picker macros); both of the course root being built (Templates). The page records the widget's
scripts, so it loads exactly the JavaScript its widgets need, in the order the declarations give.

    renderers(course, root)     -> {widget name: renderer}, for one build (build.py); nothing is kept between builds

Template helpers: blank (an all-empty row for a <template class="row">), num(name, style) a computed number
pointing at its derivation; md(text) inline Markdown; chart(spec, label) a Plotly figure drawn when it scrolls
into view; json(value, cls) data for the widget's script; id, a page-unique id for this widget instance; the
filters grouped, pct and attrjson.

Answers before Python: a widget that declares ``states`` gets, after its HTML, a <script class="precomputed"
type="application/gzip+base64"> holding {key: answer} for every (entry point, args) its states() lists, each
computed by calling experiments.api exactly as the browser would. The JSON is gzipped (then base64): the answers
repeat the same labels and counts across models, and gzip keeps a lesson page with a hundred of them far below
its 400 KiB budget; the browser inflates it with DecompressionStream (where that is missing, Python answers).
key = entry point name + " " + canonical(args) with every built-in model's config written as {"$model": alias}
and a part of a data document as {"$data": path} (experiments.widget.data_ref: the page's script sends the
placeholder, the build publishes the document for when Python must answer); site/static/js/widgets.js builds the
same key for a call
(canon()) and answers from the table at once, asking Python only for what is not in it. This is the one way a
widget answers before Python. A build reads an answer back from the answers' cache (sitegen/answer_cache.py) while
the Python that computes it (the experiments package and the widget's lesson folder) and its arguments are
unchanged.

Checking the declarations: declaration_problems() resolves every reference a lesson package declares (functions,
templates, scripts) before anything is rendered; build.py reports what it finds with the build's other problems.
"""
from __future__ import annotations

import base64
import gzip
import html
import json
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from experiments.errors import ConfigError, Problem
from experiments.lessons import TEMPLATES_DIR, Course
from experiments.widget import DATA_REF, MODEL_REF, OptionError, Widget, WidgetData, data_part, resolve, with_refs

from . import jscheck
from .answer_cache import AnswerCache
from .errors import BuildError, LessonError
from .markdown import number_html, render_markdown, term_html
from .scripts import part_path
from .template_cache import COMPILED

MODELS_JSON = "data/models.json"   # the built-in models for the browser (build.py write_browser_models)
SHARED_TEMPLATES = "site/templates/widgets"   # (from the course root) templates several lessons use


class Templates:
    """The widget templates of one course root: each lesson's folder (lessons/<id>/templates/) first, then the
    shared ones; one Jinja environment per lesson folder, made when first needed."""

    def __init__(self, root: Path, course: Course):
        self.root, self.course = Path(root), course
        self._envs: dict[tuple[Path, ...], Environment] = {}

    def dirs(self, widget: Widget) -> list[Path]:
        """Where the widget's template (and what it imports) is looked for, in order."""
        folder = self.course.folder(widget.package)
        own = [folder / TEMPLATES_DIR] if folder is not None else []
        return own + [self.root / SHARED_TEMPLATES]

    def find(self, widget: Widget) -> Path | None:
        return next((d / widget.template for d in self.dirs(widget) if (d / widget.template).is_file()), None)

    def env(self, widget: Widget) -> Environment:
        dirs = tuple(self.dirs(widget))
        if dirs not in self._envs:
            env = Environment(loader=FileSystemLoader([str(d) for d in dirs]), autoescape=True,
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              bytecode_cache=COMPILED)   # (sitegen/template_cache.py)
            env.filters["grouped"] = lambda v: f"{v:,}" if isinstance(v, int) else v
            env.filters["pct"] = lambda v: f"{float(v) * 100:.1f}%"
            env.filters["attrjson"] = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
            self._envs[dirs] = env
        return self._envs[dirs]


def json_script(value, cls: str) -> Markup:
    """<script type="application/json" class=cls> holding value; <, > and & are JSON-escaped (\\u003c ...), so
    the text can never close the element and JSON.parse(textContent) gives back exactly value."""
    payload = (json.dumps(value, ensure_ascii=False, separators=(",", ":"))
               .replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))
    return Markup(f'<script type="application/json" class="{html.escape(cls)}">{payload}</script>')


def precomputed_script(answers: dict) -> Markup:
    """<script type="application/gzip+base64" class="precomputed" data-calls="ENTRY POINTS">: the answers' JSON,
    gzipped (deterministic: no file name, mtime 0) and base64-encoded; data-calls names the entry points its keys
    answer, so widgets.js inflates a script only when one of them is called (or in idle time after load)."""
    # (answers keep Python's key order)
    raw = json.dumps(answers, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    packed = base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")
    calls = " ".join(sorted({key.split(" ", 1)[0] for key in answers}))
    return Markup(f'<script type="application/gzip+base64" class="precomputed" data-calls="{html.escape(calls)}">'
                  f'{packed}</script>')


def read_precomputed(text: str) -> dict:
    """The answers a precomputed script holds (for tests and for looking at a built page)."""
    return json.loads(gzip.decompress(base64.b64decode(text)))


class Blank:
    """A row with every field empty: a macro called with it writes the row's <template class="row"> (the browser
    fills each data-f cell), so the build's rows and the browser's come from one piece of markup."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return ""

    __getitem__ = __getattr__

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False


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
        kind = f" chart-{html.escape(spec['kind'])}" if spec.get("kind") else ""   # its height, reserved by CSS
        # the plot's box is in the page from the start (its height from CSS), so drawing it moves nothing
        return Markup(f'<figure class="chart{kind}" id="{chart_id}" aria-label="{html.escape(label)}">'
                      f'{json_script(spec, "chart-spec")}<div class="chart-plot"></div>'
                      f'<figcaption>{html.escape(label)}</figcaption></figure>')

    def term(term_id: str) -> Markup:   # a device's one name from data/glossary.json, as {term}`id` in a lesson
        return Markup(term_html(ctx.page, ctx.line, term_id))

    return {"num": num, "md": md, "chart": chart, "json": json_script, "uid": ctx.page.next_id, "blank": Blank(),
            "term": term}


def canonical(value) -> str:
    """The text a call's args are keyed by, identical to widgets.js canon(): JSON with sorted keys and no spaces,
    floats that are whole numbers written as integers (JavaScript has one number type)."""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(value[k])
                              for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return json.dumps(value, ensure_ascii=False)


def _with_configs(value, data: WidgetData):
    """args with every {"$model": alias} replaced by that model's config (what the browser's Python puts there),
    and every {"$data": path} by that part of a data document (what the browser sends when Python answers)."""
    return with_refs(value, lambda alias: data.models[alias].doc["config"], lambda path: data_part(data.files, path))


def _keyed(args, data: WidgetData, cache: AnswerCache):
    """args as the answer cache's key holds them: a model as its alias and its config's digest, a part of a data
    document as its path and its digest (the config's canonical JSON is the one the ledger made for its own cache:
    experiments.ledger.canonical_key, once per config)."""
    from experiments.ledger import canonical_key

    def model(alias):
        return {MODEL_REF: alias, "sha256": cache.digest(f"model {alias}",
                                                          lambda: canonical_key(data.models[alias].doc["config"]))}

    def part(path):
        return {DATA_REF: path, "sha256": cache.digest(f"data {path}", lambda: json.dumps(
            data_part(data.files, path), sort_keys=True, ensure_ascii=False, separators=(",", ":")))}
    return with_refs(json.loads(json.dumps(args)), model, part)


def data_documents(value) -> list[str]:
    """The data documents the {"$data": path} placeholders in a call's args name."""
    if isinstance(value, dict):
        if set(value) == {DATA_REF}:
            return [value[DATA_REF].split("/", 1)[0]]
        return [d for v in value.values() for d in data_documents(v)]
    if isinstance(value, (list, tuple)):
        return [d for v in value for d in data_documents(v)]
    return []


def answer(widget: Widget, data: WidgetData, cache: AnswerCache, code: tuple[Path, ...], name: str, args: list):
    """The widget's entry point `name` called with args (placeholders as the page sends them) exactly as the
    browser's Python would call it, its answer parsed; kept in `cache` under the source of `code`, the folders of
    the Python that answers (sitegen/answer_cache.py)."""
    from experiments import api
    if name not in widget.calls:
        raise OptionError(widget.name, "states", "entry points the widget declares in calls "
                          f"({', '.join(widget.calls)})", name)
    call = api.entry_point(name, {n: (widget, ref) for n, ref in widget.calls.items()}).with_args
    # (computed only on a miss: JSON's round trip, then the configs as they are)
    return cache.answer(code, name, lambda: _keyed(args, data, cache),
                        lambda: call(_with_configs(json.loads(json.dumps(args)), data)))


def widget_data(models, files, widget: Widget, cache: AnswerCache | None = None,
                code: tuple[Path, ...] = ()) -> WidgetData:
    """The WidgetData a widget's view and states read at build time, its data.answer() answered by answer()."""
    import experiments
    cache = cache or AnswerCache(None)
    code = code or (Path(experiments.__file__).parent,)
    data = WidgetData(models, files, widget)
    data.answers = lambda name, args: answer(widget, data, cache, code, name, args)
    return data


def precompute(widget: Widget, options: dict, data: WidgetData) -> dict:
    """{key: answer} for the calls the widget's states() lists (see the module docstring), each by data.answer."""
    if not widget.states:
        return {}
    if data.answers is None:   # (a test's own WidgetData: answered without a cache)
        data = widget_data(data.models, data.files, widget)
    answers = {}
    for name, args in widget.resolve(widget.states)(options, data):
        key = f"{name} {canonical(args)}"
        if key not in answers:
            answers[key] = data.answer(name, args)
    return answers


class FieldErrors(BuildError):
    """A rendered widget's template fields that nothing fills, each at its template's file and line."""


def renderer(widget: Widget, templates: Templates, cache: AnswerCache | None = None):
    """renderer(options, ctx) -> HTML for one declared widget (sitegen.markdown calls it per widget block)."""
    import experiments
    lesson_folder = templates.course.folder(widget.package)
    code = (Path(experiments.__file__).parent, *([lesson_folder] if lesson_folder else []))

    def render(given: dict, ctx) -> str:
        data = widget_data(ctx.data["models"], ctx.data, widget, cache, code)
        try:
            options = widget.options(given)
            values = widget.resolve(widget.view)(options, data)
            answers = precompute(widget, options, data)
        except OptionError as e:
            raise LessonError(ctx.file, ctx.line, str(e)) from None
        ctx.page.need_script(*widget.scripts())
        ctx.page.calls.extend(widget.calls)
        for key in answers:   # documents Python is sent a part of when it answers (published as data/<name>.json)
            ctx.page.fetches.extend(f"data/{d}.json" for d in data_documents(json.loads(key.split(" ", 1)[1])))
        ctx.answered = bool(answers)
        out = templates.env(widget).get_template(widget.template).render(**_tools(ctx), **values,
                                                                          id=ctx.page.next_id(widget.name))
        fields: list[LessonError] = []
        if widget.script and answers:   # the fields its script fills are keys of the answers (sitegen/jscheck.py)
            fields += [LessonError(f, line, msg) for f, line, msg in jscheck.field_problems(
                out, [values, *answers.values(), dict.fromkeys(widget.script_keys)], templates.dirs(widget),
                widget.template, templates.root)]
        script = part_path(templates.root, widget.script) if widget.script else None
        if script is not None and script.is_file():   # its declaration's classes: in its HTML; show's reads: answers
            fields += jscheck.declaration_problems(out, *jscheck.script_source(script, templates.root), widget.name,
                                                   answers.values())
        if fields:
            raise FieldErrors([LessonError(e.file, e.line, f"{e.message} (widget {widget.name}, used at {ctx.file}:"
                                                           f"{ctx.line})") for e in fields])
        return out + (str(precomputed_script(answers)) if answers else "")
    render.options = widget.options   # type: ignore[attr-defined]  # the wrapper's data-options: the defaults overlaid with the lesson's options
    return render


def renderers(course: Course, root: Path, cache: AnswerCache | None = None) -> dict:
    """{widget name: renderer} for every widget the course's lessons declare, templates from `root`; answers kept in
    `cache` (none: each computed)."""
    templates = Templates(root, course)
    return {name: renderer(w, templates, cache) for name, w in course.widgets().items()}


# -- checking the declarations ---------------------------------------------------------------------------------
def _function_problem(key: str, ref, package: str) -> Problem | None:
    """None if ref ("module:function") names a function; else what is wrong with it."""
    if not isinstance(ref, str) or ref.count(":") != 1 or not all(ref.split(":")):
        return Problem(key, '"module:function" (module relative to the lesson package)', ref, True)
    module, _, name = ref.partition(":")
    full = module if module.startswith("experiments") else f"{package}.{module}"
    try:
        fn = resolve(ref, package)
    except ModuleNotFoundError as e:
        return Problem(key, f"a module {full} ({e})", ref, True)
    except AttributeError:
        return Problem(key, f"a function {name} in {full}", ref, True)
    except Exception as e:  # noqa: BLE001 - a module that fails to import is reported, not raised
        return Problem(key, f"a module {full} that imports ({e.__class__.__name__}: {e})", ref, True)
    if not callable(fn):
        return Problem(key, f"a function {name} in {full}, not a {type(fn).__name__}", ref, True)
    return None


def package_file(package: str, course: Course, root: Path) -> str:
    """The file a maintainer opens for a lesson package: lessons/<id>/__init__.py (experiments/lessons/common.py for
    the shared widgets), from the course root."""
    folder = course.folder(package)
    if folder is not None:
        return _rel(folder / "__init__.py", root)
    parts = package.split(".")
    return "/".join(parts) + ("/__init__.py" if len(parts) > 2 else ".py")


def declaration_problems(declared, root: Path, course: Course) -> list[tuple[ConfigError, list[str]]]:
    """Every reference the lesson packages declare, resolved: each widget's view, states and calls (functions),
    template (its lesson's templates/, then site/templates/widgets/), script and needs (a file of its lesson's
    folder, named lessons/<id>/<file>, or of site/static/js/), and each lesson's numbers. -> one (ConfigError,
    names of its broken widgets) per lesson package with problems, the error naming the package's file and each
    field; empty when all resolve."""
    out: list[tuple[ConfigError, list[str]]] = []
    root = Path(root)
    templates = Templates(root, course)
    for lesson in declared:
        problems: list[Problem | None] = []   # (None: that reference resolved)
        package = lesson.package
        if lesson.numbers is not None:
            problems.append(_function_problem("numbers", lesson.numbers, package))
        broken = []
        for w in lesson.widgets:
            where = f"widgets[{w.name}]"
            mine: list[Problem | None] = [_function_problem(f"{where}.view", w.view, package)]
            if w.states is not None:
                mine.append(_function_problem(f"{where}.states", w.states, package))
            mine += [_function_problem(f"{where}.calls.{name}", ref, package) for name, ref in w.calls.items()]
            if templates.find(w) is None:
                mine.append(Problem(f"{where}.template", "a file in " + " or ".join(
                    _rel(d, root) + "/" for d in templates.dirs(w)), w.template, True))
            own = _rel(templates.dirs(w)[0].parent, root) + "/" if len(templates.dirs(w)) > 1 else ""
            where_js = f"a file in {own + ' or ' if own else ''}site/static/js/"
            if w.script is not None and not part_path(root, w.script).is_file():
                mine.append(Problem(f"{where}.script", where_js, w.script, True))
            mine += [Problem(f"{where}.needs", where_js, s, True)
                     for s in w.needs if not part_path(root, s).is_file()]
            if any(mine):
                broken.append(w.name)
            problems += mine
        found = [p for p in problems if p]
        if found:
            out.append((ConfigError(found, package_file(package, course, root)), broken))
    return out


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return str(path)


def broken_renderer(name: str, file: str | None):
    """The renderer of a widget whose declaration has problems: the lesson line says where they are."""
    def render(given: dict, ctx) -> str:
        raise LessonError(ctx.file, ctx.line, f"widget {name}: its declaration in {file} has problems (listed above)")
    return render
