"""How a lesson declares its widgets, once: name, defaults, build-time view, browser entry points, template, script.

A lesson's folder (lessons/<id>/, the package experiments.lessons.<id with - as _>) holds ``LESSON =
Lesson(...)``; experiments/lessons/__init__.py discovers every such folder, so nothing is listed by hand anywhere
else. From the declarations:
- the build (sitegen/widgets.py) fills each ```` ```{widget} NAME ```` block: options = defaults + the block's YAML,
  values = view(options, data), HTML = <template> (the lesson's templates/, else site/templates/widgets/) rendered
  with those values, and the page loads the widget's script (the lesson's script.js, or one in site/static/js/)
  after the shared core (widgets.js) and before charts.js;
- the browser (experiments/api.py) answers ``experiments.api:NAME`` for every entry point a widget declares in
  ``calls``, with the same functions;
- the worker warms the modules those entry points live in (api.warm_modules), in declaration order;
- the build answers ahead of time what the widget's enumerable controls can ask (``states``): states(options,
  data) -> [(entry point name, args), ...], args plain JSON where ``{"$model": alias}`` stands for that model's
  config (the page sends the same placeholder, and the browser's Python resolves it: model_ref);
  sitegen/widgets.py calls each entry point with those args (through experiments.api, as the browser would) and
  embeds the answers in the page, where widgets.js's call() finds them before Python is loaded.

Function references are "module:function" strings relative to the lesson package (or absolute,
"experiments.x:f"), resolved only when first used, so importing the declarations costs nothing: the browser's
first answer does not wait for numpy or for a lesson it does not call.

An entry point that imports a Pyodide package (numpy) says so with ``@uses("numpy")``: the widgets' worker is ready
before numpy has loaded and holds only such calls until it has (site/static/js/worker.js).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import CourseError

F = TypeVar("F", bound=Callable[..., Any])   # a function, kept as its own type by a decorator
CORE_SCRIPT = "widgets.js"        # the shared mount / call / error / URL-state helpers, before any widget script
LAST_SCRIPTS = ("charts.js",)     # draw after every widget has set its charts up


class OptionError(CourseError):
    """A widget option a lesson gave is not what the widget expects (the build adds the lesson file and line)."""

    def __init__(self, widget: str, key: str, expected: str, got: Any = None, message: str | None = None):
        self.widget, self.key, self.expected, self.got = widget, key, expected, got
        super().__init__(f"widget {widget}: " + (message or f"option '{key}': expected {expected}"
                                                 + (f", got {got!r}" if got is not None else "")))


@dataclass(frozen=True)
class Widget:
    name: str                                   # ```{widget} NAME in a lesson
    template: str                               # in the lesson's templates/, else site/templates/widgets/
    view: str                                   # "module:function": view(options, data) -> template values
    defaults: Mapping[str, Any] = field(default_factory=dict)   # the first state; the browser's too
    script: str | None = None                   # "script.js" (its lesson's) makes it live; None: static as built
    needs: tuple[str, ...] = ()                 # other scripts it uses, e.g. ("derivation.js", "charts.js")
    calls: Mapping[str, str] = field(default_factory=dict)      # browser entry point -> "module:function"
    states: str | None = None                   # "module:function": states(options, data) -> [(call, args)]
    script_keys: tuple[str, ...] = ()           # template fields its script fills itself, not from an answer
    package: str = ""                           # set by Lesson: where relative references are resolved

    def scripts(self) -> tuple[str, ...]:
        """The static/js files this widget needs, in load order."""
        own = (self.script,) if self.script else ()
        first = tuple(s for s in self.needs if s not in LAST_SCRIPTS)
        last = tuple(s for s in self.needs if s in LAST_SCRIPTS)
        core = (CORE_SCRIPT,) if own else ()
        return tuple(dict.fromkeys(first + core + own + last))

    def options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The defaults overlaid with a lesson's options; an option the widget does not know is an error."""
        unknown = sorted(set(given) - set(self.defaults))
        if unknown:
            raise OptionError(self.name, unknown[0], "one of " + ", ".join(sorted(self.defaults)) if self.defaults
                              else "no options (this widget takes none)")
        return {**self.defaults, **given}

    def resolve(self, ref: str) -> Callable[..., Any]:
        return resolve(ref, self.package)


@dataclass(frozen=True)
class Lesson:
    id: str | None = None                       # not needed (and not read): a lesson's id is its file's name,
    widgets: tuple[Widget, ...] = ()            # lessons/<id>.md, written once
    numbers: str | None = None                  # "module:function": register(reg, models, course)
    package: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "widgets", tuple(
            w if w.package else Widget(**{**w.__dict__, "package": self.package}) for w in self.widgets))


def resolve(ref: str, package: str = "") -> Callable[..., Any]:
    """"module:function" -> the function; a module starting with "experiments." is absolute, else relative to
    `package`."""
    module, _, name = ref.partition(":")
    if not module.startswith("experiments"):
        module = f"{package}.{module}" if module else package
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def uses(*packages: str) -> Callable[[F], F]:
    """Mark a browser entry point that imports these Pyodide packages (by their names in Pyodide's lock file). The
    widgets' worker says "ready" before they have loaded and loads them right after; a marked call waits for them,
    every other call is answered at once (tests/test_worker.py checks the marks against the real calls)."""
    def mark(fn: F) -> F:
        fn.packages = tuple(packages)   # type: ignore[attr-defined]  # (a function's own attribute)
        return fn
    return mark


MODEL_REF = "$model"              # {"$model": alias} in a call's args: that built-in model's config


def model_ref(alias: str) -> dict[str, str]:
    """The placeholder for a built-in model's config, wherever the page and Python talk: a states() function
    writes it, the page's script sends it (widgets.js model(alias)), the build keys its answer by it, and the
    browser's Python puts the config in its place (experiments.api, from data/models.json, read once). Only a
    config the learner pasted travels whole."""
    return {MODEL_REF: alias}


DATA_REF = "$data"                # {"$data": "train_runs/race"} in a call's args: that part of a data document


def data_ref(path: str) -> dict[str, str]:
    """The placeholder for a part of a data document (data/<document>.json, then keys joined by '/'), e.g. lesson
    C5's stored training runs: the build passes the part itself to the entry point and keys the answer by the
    placeholder; the browser sends the placeholder, and only when Python has to answer does widgets.js fetch the
    document (the build publishes it as data/<document>.json) and send the part instead."""
    return {DATA_REF: path}


def with_refs(value: Any, model: Callable[[str], Any], data: Callable[[str], Any] | None = None) -> Any:
    """value (a call's args, plain JSON) with every {"$model": id} replaced by model(id) and every {"$data": path}
    by data(path) (left as it is when data is None): the one walk over a call's placeholders, for the build
    (sitegen/widgets.py, both kinds) and for the browser's Python (experiments/api.py, the models)."""
    if isinstance(value, dict):
        if set(value) == {MODEL_REF}:
            return model(value[MODEL_REF])
        if set(value) == {DATA_REF} and data is not None:
            return data(value[DATA_REF])
        return {k: with_refs(v, model, data) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [with_refs(v, model, data) for v in value]
    return value


def data_part(files: Mapping[str, Any], path: str) -> Any:
    """The part of a data document a data_ref names (KeyError when there is none)."""
    document, *keys = path.split("/")
    value = files[document]
    for key in keys:
        value = value[key]
    return value


@dataclass
class WidgetData:
    """What a widget's build-time view (and states) may read: the course's models (alias ->
    course_numbers.ModelNumbers), the data files (course, citations, evolution, reference_counts) and the widget
    being rendered, so a view need not repeat its own name: data.model(alias), raise data.option_error(...)."""
    models: Mapping[str, Any]
    files: Mapping[str, Any] = field(default_factory=dict)
    widget: Widget | None = None
    answers: Callable[[str, list[Any]], Any] | None = None   # the build's: (entry point, args) -> its answer

    def answer(self, name: str, args: list[Any]) -> Any:
        """What the page gets from this widget's entry point `name` called with args (as the page sends them:
        {"$model": alias} for a built-in model), as parsed JSON. A view that shows its first state this way shows
        exactly what the page's own call would, and the build answers it once, through its cache of answers
        (sitegen/widgets.py gives `answers`)."""
        if self.answers is None:
            raise RuntimeError(f"widget {self.widget_name}: data.answer needs the build's answers "
                               "(sitegen.widgets.widget_data)")
        return self.answers(name, args)

    def __getattr__(self, name: str) -> Any:          # data.course, data.citations ... ({} when absent)
        if name.startswith("_"):
            raise AttributeError(name)
        return self.files.get(name) or {}

    @property
    def widget_name(self) -> str:
        return self.widget.name if self.widget else "?"

    def option_error(self, key: str, expected: str, got: Any = None) -> OptionError:
        """A bad option of this widget (raise it; the build adds the lesson file and line)."""
        return OptionError(self.widget_name, key, expected, got)

    def model(self, *args: str, key: str | None = None) -> tuple[str, Any]:
        """(alias, ModelNumbers) of a model option: model(alias) or model(alias, key) (key: the option's name,
        "model" by default); an unknown alias names the known ones. (The older model(widget, alias[, key]), which
        repeats the widget's name, still works.)"""
        if len(args) >= 2 and (self.widget is None or args[0] == self.widget.name):
            widget, alias, *rest = args
        else:
            widget, alias, *rest = (self.widget_name, *args)
        key = key or (rest[0] if rest else "model")
        if alias not in self.models:
            known = ", ".join(sorted(self.models))
            raise OptionError(widget, key, f"a model alias (known: {known})", alias,
                              message=f"unknown model {alias!r} in option '{key}' (known: {known})")
        return alias, self.models[alias]

    def choices(self) -> list[tuple[str, Any]]:
        """(alias, ModelNumbers) of every model in data/, by display name: the model pickers' options."""
        return sorted(self.models.items(), key=lambda item: item[1].name.lower())
