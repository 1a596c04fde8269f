"""The ledger engine's command line: ``llm-ledger CONFIG.json [--json] [--depth N]`` (same as
``python -m experiments.ledger``). Bad input prints one line per problem, naming the file and key, and exits 2.
"""
from __future__ import annotations

import json
import sys

from ..errors import ConfigError, CourseError, Problem
from . import build_ledger, unwrap
from .tree import Node


# -- command line ---------------------------------------------------------------------------------------------
def render_tree(node: Node, depth: int = 0, max_depth: int = 99) -> list[str]:
    mult = f" ×{node.n}" if node.n != 1 else ""
    shape = " (" + "×".join(f"{s:,}" for s in node.shape) + ")" if node.shape else ""
    # the root's active count is on the summary line below the tree, so its first line is just the total
    active = f"  [active {node.active:,}]" if node.active != node.count and depth else ""
    block = "  [parallel: attention + FFN from one norm]" if node.kind == "parallel" else ""
    lines = [f"{'  ' * depth}{node.name}{mult}{shape}: {node.count:,}{active}{block}"]
    if depth < max_depth:
        for child in node.children:
            lines += render_tree(child, depth + 1, max_depth)
    return lines


def load_config_file(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError([Problem("", f"a readable file ({e.strerror})")], path) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError([Problem("", f"valid JSON (line {e.lineno}, column {e.colno}: {e.msg})")], path) from None
    return unwrap(document)


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(
        prog="llm-ledger", description="The exact parameter ledger of a transformer, from its config.json.")
    parser.add_argument("config", help="a config.json (or a data/models/*.json file)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--depth", type=int, default=99, help="tree depth to print")
    args = parser.parse_args(argv)
    try:
        ledger = build_ledger(load_config_file(args.config))
    except ConfigError as e:
        for line in e.with_file(e.file or args.config).lines():
            print(line, file=sys.stderr)
        return 2
    except CourseError as e:
        print(f"{args.config}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(ledger.to_json(), ensure_ascii=False))
    else:
        print("\n".join(render_tree(ledger.root, max_depth=args.depth)))
        if ledger.estimate:
            print(f"(ESTIMATE: model_type {ledger.arch.family!r} is not a family the engine knows; read as a generic"
                  " decoder. Assumed:")
            for line in ledger.estimate["assumed"]:
                print(f"  - {line}")
            unread = ledger.estimate["unread_keys"]
            print(f"  config keys not read: {', '.join(unread) if unread else 'none'})")
        if ledger.via_class:
            print(f"(model_type not known: read as {ledger.arch.family}, the family of {ledger.via_class})")
        print(f"\ntotal {ledger.total:,} = text backbone {ledger.text_backbone:,} + MTP {ledger.mtp:,}"
              f" + vision {ledger.vision:,}; active per token {ledger.active_per_token:,}")
    return 0


