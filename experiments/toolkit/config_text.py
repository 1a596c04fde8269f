"""A model's config as a learner gives it: pasted text or a parsed dict -> the config, or its ledger.

``parse_config_text`` reads a pasted config.json (or a course data file ``{"meta", "config"}``) and raises a
ConfigError naming the problem (bad JSON by line and column, not an object, no supported model_type).
``ledger_of_input`` is what a calculator uses: a config or its text -> the ledger, a refused config being a
ValueError whose message is its problems in Chinese (experiments/errors_zh.py), which a page shows as it is.
"""
from __future__ import annotations

from ..errors import ConfigError, Problem
from ..errors_zh import learner_message
from ..ledger import Ledger, ledger_of, model_type_of, unwrap
from ..ledger.jsontext import loads


def parse_config_text(text: str) -> dict:
    """A pasted config.json (or a course data file {"meta", "config"}) -> the config dict; ConfigError naming the
    problem (over the size limit, nested too deeply, bad JSON with line and column, not an object)."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError([Problem("", "a config.json: the box is empty")])
    config = unwrap(loads(text))   # (too big, nested too deeply or bad JSON: refused before Python recurses)
    model_type_of(config)   # a JSON object with a supported model_type, or a ConfigError saying which
    return config


def config_problem_zh(error: Exception) -> str:
    """A refused config as the one Chinese line the calculators show: 这份 config 有问题：键 '…'：应为…"""
    return "这份 config 有问题：" + learner_message(error)


def ledger_of_input(config) -> Ledger:
    """The ledger of a config dict, or of a pasted config.json's text (parsed here)."""
    try:
        if isinstance(config, str):
            config = parse_config_text(config)
        return ledger_of(config)
    except ConfigError as e:
        raise ValueError(config_problem_zh(e)) from None


def text_config_of(config: dict) -> tuple[dict, str]:
    """(the text model's keys, their prefix): ``text_config`` for a nested (multimodal) config, else the config."""
    if isinstance(config.get("text_config"), dict):
        return config["text_config"], "text_config."
    return config, ""
