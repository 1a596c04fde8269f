"""Validated reading of a Hugging Face config.json, at the edge, collecting every problem in one pass.

A family builder reads each key it needs through a ``Reader``. A bad value is recorded as a Problem (key, what
was expected, what was found) and a harmless stand-in is returned so reading can go on; ``Reader.check()``
then raises one ConfigError listing everything. Keys of nested configs are reported with their full path
(``text_config.hidden_size``).
"""
from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, TypeVar, cast, overload

from ..errors import ConfigError, Problem

MISSING: Any = object()   # (a getter's default when none is given: the key is required)
T = TypeVar("T")
MAX_SIZE = 10**7          # no real width, vocabulary or layer count comes near this
MAX_LAYERS = 10**4


class Reader:
    def __init__(self, config: object, prefix: str = "", problems: list[Problem] | None = None,
                 rejected: set[str] | None = None, read: set[str] | None = None) -> None:
        self.problems = problems if problems is not None else []
        self.rejected = rejected if rejected is not None else set()   # keys whose value itself was invalid
        self.read = read if read is not None else set()               # every key a getter was asked for (paths)
        self.prefix = prefix
        if not isinstance(config, dict):
            self._add("", "a JSON object", config)
            config = {}
        self.config: dict[str, Any] = config

    # -- plumbing -------------------------------------------------------------------------------------------
    def path(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def _add(self, key: str, expected: str, got: object = MISSING) -> None:
        self.rejected.add(self.path(key) if key else self.prefix)
        self.problems.append(Problem(self.path(key) if key else self.prefix, expected,
                                     None if got is MISSING else got, got is not MISSING))

    def fail(self, key: str, expected: str, got: object = MISSING, involves: tuple[str, ...] = ()) -> None:
        """Record a consistency problem found by a builder (e.g. heads that do not divide the width).

        Consistency is only judged among values that are each valid: if `key` or a key it `involves` was already
        rejected, its stand-in value would report a problem that is not really there, so nothing is recorded."""
        if any(self.path(k) in self.rejected for k in (key, *involves)):
            return
        self.problems.append(Problem(self.path(key), expected, None if got is MISSING else got, got is not MISSING))

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def check(self) -> None:
        if self.problems:
            raise ConfigError(self.problems)

    # -- typed getters ------------------------------------------------------------------------------------
    def _absent(self, key: str, default: object, expected: str, stand_in: T) -> T:
        """A missing or null key: its default, or (with none) a 'missing' problem and the stand-in."""
        if default is MISSING:
            self._add(key, f"{expected} (the key is missing)")
            return stand_in
        return cast(T, default)   # (a getter's default is of its own type, or None where the overload says so)

    @overload
    def int(self, key: builtins.str, default: None, minimum: builtins.int = 1,
            maximum: builtins.int = MAX_SIZE) -> builtins.int | None: ...
    @overload
    def int(self, key: builtins.str, default: builtins.int = ..., minimum: builtins.int = 1,
            maximum: builtins.int = MAX_SIZE) -> builtins.int: ...

    def int(self, key: builtins.str, default: object = MISSING, minimum: builtins.int = 1,
            maximum: builtins.int = MAX_SIZE) -> builtins.int | None:
        self.read.add(self.path(key))
        value: object = self.config.get(key, MISSING)
        if value is None or value is MISSING:
            return self._absent(key, default, f"an integer >= {minimum}", max(minimum, 1))
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                self._add(key, f"an integer >= {minimum}", value)
                return max(minimum, 1)
        if value < minimum:
            self._add(key, f"an integer >= {minimum}", value)
            return max(minimum, 1)
        if value > maximum:
            self._add(key, f"an integer <= {maximum:,}", value)
            return max(minimum, 1)
        return value

    def bool(self, key: builtins.str, default: builtins.bool = MISSING) -> builtins.bool:
        self.read.add(self.path(key))
        value: object = self.config.get(key, MISSING)
        if value is MISSING or value is None:
            return self._absent(key, default, "true or false", False)
        if not isinstance(value, bool):
            self._add(key, "true or false", value)
            return False
        return value

    def str(self, key: builtins.str, default: builtins.str = MISSING,
            choices: tuple[builtins.str, ...] | None = None) -> builtins.str:
        self.read.add(self.path(key))
        value: object = self.config.get(key, MISSING)
        if value is MISSING or value is None:
            return self._absent(key, default, "a string", "")
        if not isinstance(value, str) or (choices and value not in choices):
            self._add(key, "one of " + ", ".join(choices) if choices else "a string", value)
            return choices[0] if choices else ""
        return value

    @overload
    def int_list(self, key: builtins.str, default: None, minimum: builtins.int = 0) -> list[builtins.int] | None: ...
    @overload
    def int_list(self, key: builtins.str, default: list[builtins.int] = ...,
                 minimum: builtins.int = 0) -> list[builtins.int]: ...

    def int_list(self, key: builtins.str, default: object = MISSING,
                 minimum: builtins.int = 0) -> list[builtins.int] | None:
        return self._list(key, default, "integers", f"integers >= {minimum}",
                          lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum)

    def str_list(self, key: builtins.str, default: list[builtins.str] = MISSING,
                 choices: tuple[builtins.str, ...] = ()) -> list[builtins.str]:
        return cast("list[builtins.str]", self._list(   # (a list: its default is one, never None)
            key, default, "strings", " / ".join(choices) if choices else "strings",
            lambda v: isinstance(v, str) and (not choices or v in choices)))

    def _list(self, key: builtins.str, default: object, items: builtins.str, valid_items: builtins.str,
              is_valid: Callable[[object], builtins.bool]) -> list[Any] | None:
        """A list whose every entry passes is_valid; problems say 'a list of <items>' (missing) or 'a list of
        <valid_items>' (a wrong value)."""
        self.read.add(self.path(key))
        value: object = self.config.get(key, MISSING)
        if value is MISSING or value is None:
            return self._absent(key, default, f"a list of {items}", cast("list[Any] | None", []))
        if not isinstance(value, list) or not all(is_valid(v) for v in value):
            self._add(key, f"a list of {valid_items}", value)
            return []
        return value

    def sub(self, key: builtins.str) -> Reader:
        """The nested object under key, read with the same problem list (a missing one is a problem, and an empty
        stand-in is returned so that reading goes on and every problem is collected)."""
        self.read.add(self.path(key))
        value: object = self.config.get(key, MISSING)
        if value is MISSING or value is None:
            return self._absent(key, MISSING, "a JSON object", Reader({}, self.path(key), self.problems,
                                                                     self.rejected, self.read))
        if not isinstance(value, dict):
            self._add(key, "a JSON object", value)
            value = {}
        return Reader(value, self.path(key), self.problems, self.rejected, self.read)
