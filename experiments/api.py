"""The browser's entry points into the experiments package (called by site/static/js/worker.js).

Contract (docs/architecture.md, "Browser"): the page asks for ``experiments.api:NAME`` with a list of args; the
worker calls ``NAME(json.dumps(args))`` and each function returns a JSON string. One string in, one string out:
no Python object crosses into JavaScript, and every function runs, and is tested, unchanged under CPython.

Besides the few generic functions below, NAME is any browser entry point a lesson's widget declares
(experiments.widget.Widget.calls, discovered by experiments.lessons): ``experiments.api:ffn_memory`` calls the
declared function with the args as positional arguments and returns its result as JSON. A null argument means
"the function's own default" for that parameter. Ledgers come from experiments.ledger.ledger_of (a small LRU keyed
by the config's canonical JSON), so a widget that sends the same config on every slider tick builds it once.

A built-in model travels as its id, ``{"$model": alias}`` (experiments.widget.model_ref; the folder's id works
too): the worker hands this module data/models.json once (use_models), and each entry point gets that model's
config in the placeholder's place, a fresh copy per call. An id it does not know is refused in Chinese
(UnknownModel). Only a config a learner pasted travels whole.
"""
from __future__ import annotations

import inspect
import json
import sys

from .errors import CourseError
from .widget import with_refs


def ping(args_json: str) -> str:
    """Echo the args back with the interpreter's version: the worker's smoke test."""
    return json.dumps({"pong": json.loads(args_json), "python": sys.version})


def _args(args_json: str) -> list:
    args = json.loads(args_json)
    if not isinstance(args, list):
        raise TypeError("args must be a JSON list")
    return args


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _ledger(config):
    from .ledger import ledger_of
    return ledger_of(config)


def ledger_json(args_json: str) -> str:
    """[config] -> the ledger's --json payload (used to prove browser == CPython on every config)."""
    (config,) = _args(args_json)
    return json.dumps(_ledger(config).to_json())


def number_derivations(args_json: str) -> str:
    """[config, names] -> {name: {display, rows}} of a config's generic numbers (the browser's popovers)."""
    from .ledger import unwrap
    from .toolkit.derivations import derivations
    config, names = _args(args_json)
    return _dumps(derivations(unwrap(config), names))


def warm_modules(args_json: str = "[]") -> str:
    """[[entry point names]] -> the modules those entry points live in (all declared ones for an empty list), in
    the order given: the worker imports them one by one once it is ready, so the learner's first change does not
    pay for an import (numpy it imports once it has loaded it). The build lists each page's entry points
    (sitegen.markdown.Page.calls)."""
    from .lessons import entry_points
    (names,) = (_args(args_json) + [[]])[:1]
    declared = entry_points()
    modules = []
    for name in names or list(declared):
        if name in declared:
            widget, ref = declared[name]
            module = widget.resolve(ref).__module__
            if module not in modules:
                modules.append(module)
    return _dumps(modules)


_MODELS: dict[str, str] = {}   # alias and folder id -> the built-in model's config as JSON text (use_models)
_MODELS_TEXT: list[str] = []   # data/models.json as handed over, for the exercises' cases (grade_exercise)


class UnknownModel(CourseError, LookupError):
    """A {"$model": id} that names no built-in model (the message is the learner's, in Chinese)."""


def use_models(args_json: str) -> str:
    """[the text of data/models.json (alias -> {id, name, config})] -> the aliases now known. The worker calls it
    once, before the first call that names a model by its id; a config is kept as its JSON text, so each call gets
    a copy of its own (an entry point may change what it is given)."""
    (text,) = _args(args_json)
    _MODELS.clear()
    _MODELS_TEXT[:] = [text]
    models = json.loads(text)
    for alias, m in models.items():
        _MODELS[alias] = _MODELS[m["id"]] = json.dumps(m["config"])
    return _dumps(sorted(models))


def model_config(model_id: str):
    """The config of the built-in model {"$model": model_id} names (an alias or its folder's id)."""
    if not isinstance(model_id, str) or model_id not in _MODELS:
        raise UnknownModel(f"没有这个内置模型：{model_id}（课程的模型列表里没有它）" if _MODELS
                           else "内置模型的配置还没有载入，请刷新页面再试")
    return json.loads(_MODELS[model_id])


def grade_exercise(args_json: str) -> str:
    """[spec, the learner's source, seed] -> the grade (experiments.exercise.grade) on the built-in models. The page
    runs it in the code cells' worker (site/static/js/exercise.js), which is stopped if it does not answer in time."""
    from .exercise import grade
    spec, source, seed = _args(args_json)
    if not _MODELS_TEXT:
        raise UnknownModel("内置模型的配置还没有载入，请刷新页面再试")
    return _dumps(grade(spec, source, json.loads(_MODELS_TEXT[0]), int(seed)))


def _with_defaults(fn, args: list) -> tuple[list, dict]:
    """Positional args, where a null (None) means the parameter's own default."""
    params = list(inspect.signature(fn).parameters.values())
    if len(args) > len(params):
        raise TypeError(f"{fn.__name__}: expected at most {len(params)} args, got {len(args)}")
    positional, named = [], {}
    for param, value in zip(params, args):
        if value is None and param.default is not inspect.Parameter.empty:
            named[param.name] = param.default
        elif named:
            named[param.name] = value
        else:
            positional.append(value)
    return positional, named


def entry_point(name: str, declared: dict | None = None):
    """The JSON-string wrapper of a widget's declared entry point `name`, looked up in `declared` (name -> (Widget,
    "module:function"): the build passes the entry points of the lessons it builds) or, by default, in every
    lesson's (experiments.lessons.entry_points(): in the browser, the lessons its bundle ships)."""
    from .lessons import entry_points
    declared = entry_points() if declared is None else declared
    if name not in declared:
        raise AttributeError(f"module 'experiments.api' has no attribute {name!r}")
    widget, ref = declared[name]
    fn = widget.resolve(ref)

    def with_args(args: list) -> str:
        positional, named = _with_defaults(fn, args)
        return _dumps(fn(*positional, **named))

    def call(args_json: str = "[]") -> str:
        return with_args(with_refs(_args(args_json), model_config))
    call.with_args = with_args   # type: ignore[attr-defined]  # the same on args already parsed (the build: its own configs, not re-serialised)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = fn.__doc__
    call.packages = getattr(fn, "packages", ())   # type: ignore[attr-defined]  # experiments.widget.uses: what the worker loads before calling
    return call


def __getattr__(name: str):   # PEP 562: experiments.api.ffn_memory and getattr(api, "ffn_memory") alike
    if name.startswith("__"):
        raise AttributeError(name)
    return entry_point(name)
