"""The ledger engine's command line: ``llm-ledger CONFIG.json [--json] [--depth N]`` (same as
``python -m experiments.ledger``), and ``llm-ledger --list``: every supported model_type with the transformers
classes (``architectures``) its family reads. ``--train`` prints the training-memory ledger of one step on one
GPU instead (experiments/ledger/training.py; ``--recipe``, ``--micro-batch``, ``--seq-len``, ``--recompute``,
``--zero``, ``--dp``, ``--tp``, ``--sp``, ``--ce-chunk``, ``--kernel``, ``--gpu-gb``). Bad input prints one line
per problem, naming the file and key, and exits 2.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import ConfigError, CourseError, Problem
from . import Ledger, build_ledger, jsontext, training, unwrap
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


def load_config_file(path: str) -> dict[str, Any]:
    """The config at `path`: read as bytes (no more than the size limit plus one), decoded as UTF-8 and parsed
    once it is known to be small and shallow enough (jsontext.py); every refusal a ConfigError naming the file."""
    try:
        with open(path, "rb") as f:
            data = f.read(jsontext.MAX_CONFIG_BYTES + 1)
            size = os.fstat(f.fileno()).st_size if len(data) > jsontext.MAX_CONFIG_BYTES else len(data)
    except OSError as e:
        raise ConfigError([Problem("", f"a readable file ({e.strerror})")], path) from None
    too_big = jsontext.size_problem(max(size, len(data)))
    if too_big:
        raise ConfigError([too_big], path)
    return unwrap(jsontext.loads(jsontext.decode(data, path), path))


def supported_lines() -> list[str]:
    """``--list``: one line per supported model_type, in name order: the type, then its architectures classes."""
    from .registry import REGISTRY
    return [" ".join([f.model_type, *f.architectures]) for f in sorted(REGISTRY, key=lambda f: f.model_type)]


def render_training(mem: training.TrainMemory, gpu_gb: float) -> list[str]:
    """The training-memory tree, one line per node (GB = 10^9 bytes), then the total against the GPU."""
    lines = []

    def go(node: dict[str, Any], depth: int) -> None:
        for child in node["children"]:
            name = child["key"].rsplit("/", 1)[-1]
            lines.append(f"{'  ' * depth}{name}: {child['bytes'] / training.GB:,.3f} GB")
            go(child, depth + 1)
    go(mem.tree(), 0)
    s = mem.setup
    fit = "fits" if mem.total <= gpu_gb * training.GB else "does not fit"
    lines += ["", f"total {mem.total / training.GB:,.3f} GB per GPU ({fit} in {gpu_gb:g} GB); "
              f"{mem.params_per_rank:,} of {mem.params:,} parameters on this tensor-parallel rank; "
              f"{s.micro_batch * s.seq_len * s.accum * s.dp:,} tokens per optimiser step"]
    if mem.recompute_flops:
        lines.append(f"recomputation adds {mem.recompute_flops / mem.step_flops:.1%} to the step's FLOPs")
    lines += [f"(note: {n})" for n in mem.notes]
    return lines


def print_training(ledger: Ledger, args: argparse.Namespace) -> int:
    setup = training.TrainSetup(
        recipe=args.recipe, micro_batch=args.micro_batch, seq_len=args.seq_len, accum=args.accum,
        recompute=args.recompute, kernel=args.kernel, dropout=args.dropout, zero=args.zero, dp=args.dp,
        tp=args.tp, sp=args.sp, ce_chunk=args.ce_chunk, mtp=not args.no_mtp)
    problems = setup.problems()
    if problems:
        for problem in problems:
            key, rest = problem.split(":", 1)
            print(f"{args.config}: --{key.replace('_', '-')}:{rest}", file=sys.stderr)
        return 2
    mem = training.training_memory(ledger, setup)
    if args.json:
        print(json.dumps(mem.to_json(), ensure_ascii=False))
    else:
        print("\n".join(render_training(mem, args.gpu_gb)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="llm-ledger", description="The exact parameter ledger of a transformer, from its config.json.")
    parser.add_argument("config", nargs="?", help="a config.json (or a data/models/*.json file)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--depth", type=int, default=99, help="tree depth to print")
    parser.add_argument("--list", action="store_true", help="print the supported model_types and their classes")
    train = parser.add_argument_group("training memory (--train)")
    train.add_argument("--train", action="store_true", help="print the bytes of one training step on one GPU")
    train.add_argument("--recipe", default="mixed_adamw", choices=list(training.RECIPES))
    train.add_argument("--micro-batch", type=int, default=1)
    train.add_argument("--seq-len", type=int, default=4096)
    train.add_argument("--accum", type=int, default=1, help="gradient-accumulation micro-steps per step")
    train.add_argument("--recompute", default="none", choices=list(training.RECOMPUTE))
    train.add_argument("--kernel", default="fused", choices=list(training.KERNELS))
    train.add_argument("--dropout", action="store_true")
    train.add_argument("--zero", type=int, default=0, choices=(0, 1, 2, 3))
    train.add_argument("--dp", type=int, default=1, help="data-parallel ranks")
    train.add_argument("--tp", type=int, default=1, help="tensor-parallel ranks")
    train.add_argument("--sp", action="store_true", help="sequence parallelism (with --tp)")
    train.add_argument("--ce-chunk", type=int, default=0, help="tokens per cross-entropy chunk (0: all)")
    train.add_argument("--no-mtp", action="store_true", help="leave the multi-token-prediction modules out")
    train.add_argument("--gpu-gb", type=float, default=80.0, help="the GPU's memory, for the last line")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(supported_lines()))
        return 0
    if args.config is None:
        parser.error("a config.json is needed (or --list)")
    try:
        ledger = build_ledger(load_config_file(args.config))
    except ConfigError as e:
        for line in e.with_file(e.file or args.config).lines():
            print(line, file=sys.stderr)
        return 2
    except CourseError as e:
        print(f"{args.config}: {e}", file=sys.stderr)
        return 2
    if args.train:
        return print_training(ledger, args)
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
        print(f"transformers parameters {ledger.hf_count:,} = total - MTP {ledger.mtp:,}"
              f" - checkpoint buffers {ledger.hf_buffers:,} (router e_score_correction_bias and the like)")
    return 0


