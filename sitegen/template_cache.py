"""Compiled Jinja templates kept in this process, by their source: a build compiles each template once per process.

Jinja compiles a template's source to Python code every time a new Environment loads it, and a build makes new
environments (one for the pages, one per lesson folder for the widgets: build.py keeps nothing from one build to
the next). That compiling was a tenth of a build of the course. Jinja's own bytecode caches (jinja2.bccache) key a
template by its file name, which differs in every copy of the course a test builds; this one keys it by what
decides the compiled code: the environment's syntax options, the template's name and its source's checksum. A
template edited between two builds (`make dev`) has another checksum and is compiled again.
"""
from __future__ import annotations

import hashlib

from jinja2 import Environment
from jinja2.bccache import Bucket, BytecodeCache

KEPT = 512   # compiled templates (the course has about a hundred); the oldest are dropped past this


class SourceKeyedBytecodeCache(BytecodeCache):
    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def get_bucket(self, environment: Environment, name: str, filename: str | None, source: str) -> Bucket:
        options = repr((environment.block_start_string, environment.variable_start_string,
                        environment.comment_start_string, environment.trim_blocks, environment.lstrip_blocks,
                        environment.keep_trailing_newline, environment.newline_sequence,
                        environment.autoescape if isinstance(environment.autoescape, bool)
                        else repr(environment.autoescape),
                        sorted(environment.extensions)))
        checksum = self.get_source_checksum(source)
        key = hashlib.sha1(f"{options}\0{name}\0{checksum}".encode()).hexdigest()
        bucket = Bucket(environment, key, checksum)
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()
        while len(self._code) > KEPT:
            del self._code[next(iter(self._code))]


COMPILED = SourceKeyedBytecodeCache()   # every environment of the process shares it
