"""The site build's own errors, under the engine's CourseError: a problem in a lesson (file and line), and the
collection of every problem the build found, reported together.
"""
from __future__ import annotations

from collections.abc import Sequence

from experiments.errors import CourseError


class LessonError(CourseError):
    """A problem in a lesson's Markdown, located by file and line."""

    def __init__(self, file: str, line: int | None, message: str):
        self.file, self.line, self.message = file, line, message
        super().__init__(str(self))

    def __str__(self) -> str:
        loc = f"{self.file}:{self.line}" if self.line else self.file
        return f"{loc}: {self.message}"


class SourceError(LessonError):
    """A problem with an input file as a whole (a symbolic link out of the course ...), named by its path."""


class BuildError(CourseError):
    """A collection of problems found while gathering the site; reported together."""

    def __init__(self, errors: Sequence[CourseError]):
        self.errors = list(errors)
        super().__init__(str(self))

    def lines(self) -> list[str]:
        return [line for e in self.errors for line in e.lines()]

    def __str__(self) -> str:
        return "\n".join(self.lines())
