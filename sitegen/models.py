"""The course's model files: one folder per model, so that updating a model is replacing one file.

    data/models/<id>/config.json    the model's config.json exactly as published (dropped in as is)
    data/models/<id>/meta.yaml      the course's metadata about it: id (= the folder name), name (display name),
                                    family, source (where the config comes from) and optional published_total,
                                    published_total_source, hub_page_total, notes, training_tokens (with
                                    training_tokens_source, _source_zh and _url) (META_KEYS: each known key's
                                    type is checked; other keys pass through)

In memory a model is still one document {"meta": {...}, "config": {...}} (what experiments.course_numbers and
the widgets read). Reading validates once, at this edge: every problem becomes a ConfigError naming the file
(config.json or meta.yaml), the key and what was expected; the config itself is checked by the ledger engine,
with the same messages `python -m experiments.ledger data/models/<id>/config.json` prints.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import cast

import yaml

from experiments.errors import ConfigError, Problem
from experiments.ledger import jsontext

CONFIG = "config.json"
META = "meta.yaml"
FOLDER = "data/models"
MISSING = {CONFIG: "the model's published config.json",
           META: "the course's metadata about the model: id, name, family, source"}
MAX_META_BYTES = 64_000   # a meta.yaml is a dozen lines; the config's own limit is jsontext.MAX_CONFIG_BYTES
LAYOUT = "a model folder data/models/<id>/ holding config.json (as published) and meta.yaml"


def model_file(model_id: str, name: str = CONFIG) -> str:
    """The repo-relative path of a model's file, as messages and provenance name it."""
    return f"{FOLDER}/{model_id}/{name}"


def model_folders(models_dir: Path) -> list[Path]:
    """Every model folder under data/models, sorted by id (a folder is one whatever it holds)."""
    return sorted(p for p in Path(models_dir).iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def stray_files(models_dir: Path) -> list[Path]:
    """Files directly in data/models (e.g. a config.json dropped there instead of into its folder)."""
    return sorted(p for p in Path(models_dir).iterdir() if p.is_file() and not p.name.startswith("."))


def _read_text(path: Path, rel: str, limit: int) -> tuple[str | None, ConfigError | None]:
    """The file's UTF-8 text; a file over `limit` bytes is refused unread (a 200 MB "config" never ties up the
    build)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = f.read(limit + 1) if size <= limit else b""
    except FileNotFoundError:
        return None, ConfigError([Problem("", f"{MISSING.get(path.name, 'a file')} (the file is missing)")], rel)
    except OSError as e:
        return None, ConfigError([Problem("", f"a readable file ({e.strerror})")], rel)
    too_big = jsontext.size_problem(max(size, len(data)), limit)
    if too_big:
        return None, ConfigError([too_big], rel)
    try:
        return jsontext.decode(data, rel), None
    except ConfigError as e:
        return None, e


def _read_document(path: Path, rel: str, parse, limit: int) -> tuple[object, list[ConfigError]]:
    """(the parsed file, []) or (None, [the one ConfigError naming the file]): missing, unreadable, too big, not
    UTF-8, or text that `parse` refuses (a ConfigError without the file)."""
    text, error = _read_text(path, rel, limit)
    if error:
        return None, [error]
    try:
        return parse(text), []
    except ConfigError as e:
        return None, [e.with_file(rel)]


def _yaml(text: str):
    """yaml.safe_load, its problems as a ConfigError. PyYAML composes nested nodes by recursion, so a YAML text
    nested past MAX_JSON_DEPTH levels is refused before it is parsed (the same count as JSON's: flow brackets,
    or indentation steps of block mappings)."""
    too_deep = jsontext.depth_problem(text) or _yaml_indent_problem(text)
    if too_deep:
        raise ConfigError([too_deep])
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError([Problem("", f"valid YAML ({where}{getattr(e, 'problem', None) or e})")]) from None
    except RecursionError:
        raise ConfigError([Problem("", f"YAML nested at most {jsontext.MAX_JSON_DEPTH} levels deep")]) from None


def _yaml_indent_problem(text: str) -> Problem | None:
    """A block-style YAML nested deeper than MAX_JSON_DEPTH (counted as distinct indentation widths)."""
    widths = {len(line) - len(line.lstrip(" ")) for line in text.splitlines() if line.strip()}
    if len(widths) <= jsontext.MAX_JSON_DEPTH:
        return None
    return Problem("", f"YAML nested at most {jsontext.MAX_JSON_DEPTH} levels deep")


def read_config(path: Path, rel: str) -> tuple[dict | None, list[ConfigError]]:
    """A published config.json, checked by the ledger engine. Published configs may hold Infinity (Nemotron-H's
    time_step_limit), which Python reads and browser_json() passes on; NaN has no JSON spelling a browser reads
    back, so it is refused, naming its key."""
    from experiments.ledger import read_model
    config, errors = _read_document(path, rel, jsontext.loads, jsontext.MAX_CONFIG_BYTES)
    if errors:
        return None, errors
    nans = [Problem(key, "a number (JSON has no NaN)", float("nan"), True) for key in _nan_keys(config)]
    if nans:
        return None, [ConfigError(nans, rel)]
    try:
        read_model(cast(dict, config))   # (which refuses anything but a JSON object)
    except ConfigError as e:
        return None, [e.with_file(rel)]
    return cast(dict, config), []


def _nan_keys(value, key: str = "") -> list[str]:
    if isinstance(value, float) and value != value:
        return [key]
    if isinstance(value, dict):
        return [k for name, v in value.items() for k in _nan_keys(v, f"{key}.{name}" if key else str(name))]
    if isinstance(value, list):
        return [k for i, v in enumerate(value) for k in _nan_keys(v, f"{key}[{i}]")]
    return []


INFINITE = "\u0000course:inf"   # a placeholder no config holds (a NUL character)


def browser_json(value) -> str:
    """JSON for the browser. Python writes an infinite float as the bare word Infinity, which is not JSON and which
    JSON.parse refuses (one such config would break every model picker); here it is written 1e999, a number that
    JSON.parse and Python's json.loads both read back as Infinity, so the browser's Python sees the very config
    the build counted."""
    def mark(v):
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return INFINITE + ("+" if v > 0 else "-")
        if isinstance(v, dict):
            return {k: mark(x) for k, x in v.items()}
        if isinstance(v, list):
            return [mark(x) for x in v]
        return v
    text = json.dumps(mark(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    quoted = json.dumps(INFINITE, ensure_ascii=False)[:-1]
    return text.replace(quoted + '+"', "1e999").replace(quoted + '-"', "-1e999")


def _text(v) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _flag(v) -> bool:
    return isinstance(v, bool)


TEXT, COUNT, FLAG = (_text, "text"), (_count, "a parameter count (an integer >= 1)"), (_flag, "true or false")
# meta.yaml's known keys: key -> (required, (check, what it holds)). A key not listed passes through untouched (a
# lesson may read its own); a listed key of the wrong type is refused with the others, naming it.
META_KEYS: dict[str, tuple[bool, tuple]] = {
    "name": (True, (_text, "the model's display name (text)")),
    "family": (True, (_text, "the model's family (text, e.g. llama)")),
    "source": (True, (_text, "where the config comes from (text)")),
    "source_zh": (False, (_text, "the short Chinese line a page shows about the source (text)")),
    "notes": (False, TEXT),
    "published_total": (False, COUNT),
    "published_total_source": (False, TEXT),
    "published_total_rounded": (False, FLAG),
    "checkpoint_total": (False, COUNT),
    "checkpoint_total_source": (False, TEXT),
    "hub_page_total": (False, COUNT),
}


def meta_problems(meta: dict, model_id: str) -> list[Problem]:
    """Every problem of a meta.yaml mapping: its id is the folder name, each known key holds what META_KEYS says."""
    problems = []
    if meta.get("id") != model_id:
        problems.append(Problem("id", f"the folder name {model_id!r}", meta.get("id"), "id" in meta))
    for key, (required, (check, what)) in META_KEYS.items():
        if key not in meta:
            if required:
                problems.append(Problem(key, what))
        elif not check(meta[key]):
            problems.append(Problem(key, what, meta[key], True))
    return problems


def read_meta(path: Path, rel: str, model_id: str) -> tuple[dict | None, list[ConfigError]]:
    """meta.yaml: a mapping whose id is the folder name and whose known keys hold what META_KEYS says."""
    meta, errors = _read_document(path, rel, _yaml, MAX_META_BYTES)
    if errors:
        return None, errors
    if not isinstance(meta, dict):
        return None, [ConfigError([Problem("", "a YAML mapping with id, name, family and source", meta, True)],
                                  rel)]
    problems = meta_problems(meta, model_id) + training_tokens_problems(meta)
    return (None, [ConfigError(problems, rel)]) if problems else (meta, [])


TOKENS_TEXT = ("training_tokens_source", "training_tokens_source_zh", "training_tokens_url")


def training_tokens_problems(meta: dict) -> list[Problem]:
    """Optional training_tokens (a positive whole number of tokens, as published) comes with where it is published:
    training_tokens_source (for maintainers), training_tokens_source_zh (the line a page shows) and
    training_tokens_url; a source without the figure is a problem too."""
    if "training_tokens" not in meta:
        stray = [k for k in TOKENS_TEXT if k in meta]
        if not stray:
            return []
        return [Problem(stray[0], "to accompany training_tokens (which is missing)", meta[stray[0]], True)]
    problems = []
    tokens = meta["training_tokens"]
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
        problems.append(Problem("training_tokens", "a positive whole number of tokens (e.g. 2000000000000)", tokens,
                                True))
    for key in TOKENS_TEXT:
        value = meta.get(key)
        if not isinstance(value, str) or not value.strip():
            problems.append(Problem(key, "where the training-token figure is published (text)", value, key in meta))
    url = meta.get("training_tokens_url")
    if isinstance(url, str) and url.strip() and not url.startswith("https://"):
        problems.append(Problem("training_tokens_url", "an https:// link", url, True))
    return problems


def read_model_folder(folder: Path, rel: Callable[[Path], str] | None = None
                      ) -> tuple[dict | None, list[ConfigError]]:
    """{"meta", "config"} of one model folder, or None and every problem found in it."""
    rel = rel or (lambda p: model_file(folder.name, p.name))
    meta, errors = read_meta(folder / META, rel(folder / META), folder.name)
    config, config_errors = read_config(folder / CONFIG, rel(folder / CONFIG))
    errors += config_errors
    return (None if errors else {"meta": meta, "config": config}), errors


def read_models(models_dir: Path, rel: Callable[[Path], str] | None = None
                ) -> tuple[dict[str, dict], list[ConfigError]]:
    """id -> {"meta", "config"} for every good model folder, and every problem of the others (files lying
    directly in data/models included)."""
    models, errors = {}, []
    for path in stray_files(models_dir):
        name = rel(path) if rel else f"{FOLDER}/{path.name}"
        errors.append(ConfigError([Problem("", f"{LAYOUT}, not a file here")], name))
    for folder in model_folders(models_dir):
        doc, found = read_model_folder(folder, rel)
        if doc is None:
            errors += found
        else:
            models[folder.name] = doc
    return models, errors


def load_models(models_dir: Path) -> dict[str, dict]:
    """id -> {"meta", "config"}; raises the first problem (for tests and tools that expect good data)."""
    models, errors = read_models(models_dir)
    if errors:
        raise errors[0]
    return models


def load_model(folder: Path) -> dict:
    doc, errors = read_model_folder(Path(folder))
    if errors or doc is None:   # (no doc without a problem)
        raise errors[0]
    return doc
