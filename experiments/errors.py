"""The course's tiny exception hierarchy.

CourseError is the root; everything a user can cause (a bad config, a bad lesson) is one of its subclasses and
prints as one clear line per problem, naming the file, the key and what was expected. No traceback reaches a user.
Those lines are English, for maintainers (the command line, the build); a learner reads the same problems in
Chinese: Problem.zh() and ConfigError.lines_zh(), rendered by experiments/errors_zh.py.
"""
from __future__ import annotations

from dataclasses import dataclass


class CourseError(Exception):
    """Base class for every error the course reports to a person."""

    def lines(self) -> list[str]:
        return [str(self)]


@dataclass(frozen=True)
class Problem:
    key: str
    expected: str
    got: object = None
    has_got: bool = False

    def describe(self) -> str:
        text = f"key '{self.key}': expected {self.expected}" if self.key else f"expected {self.expected}"
        if self.has_got:
            text += f", got {_show(self.got)}"
        return text

    def zh(self) -> str:
        """The problem in Chinese for a learner: 键 'hidden_size'：应为正整数，实际是 -5."""
        from .errors_zh import problem_zh
        return problem_zh(self.key, self.expected, self.got, self.has_got)


def _show(value: object) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, (dict, list)):
        return type(value).__name__
    return repr(value)


class ConfigError(CourseError):
    """One or more problems in a model config; all problems found in one pass are reported together."""

    def __init__(self, problems: list[Problem], file: str | None = None):
        self.problems = list(problems)
        self.file = file
        super().__init__(self.lines()[0] if self.problems else "invalid config")

    def with_file(self, file: str) -> ConfigError:
        return ConfigError(self.problems, file)

    def lines(self) -> list[str]:
        where = f"{self.file}: " if self.file else ""
        return [where + p.describe() for p in self.problems]

    def lines_zh(self) -> list[str]:
        """One Chinese line per problem, for a page (no file name: a learner pasted the config)."""
        return [p.zh() for p in self.problems]

    def __str__(self) -> str:
        return "; ".join(self.lines())
