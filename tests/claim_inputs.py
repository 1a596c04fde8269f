"""Which input change makes each lesson claim false: the search behind tests/test_claims_can_fail.py.

A claim guards a sentence only if some admissible change of what the course computes from would make it false.
Those computed inputs are the published configs in data/models/, the trainer's stored results (each recorded series
or figure, never a run's settings) and the first settings of the widgets' experiments. For each claim this module
looks for a *witness*: one such change (a config key scaled, a stored figure moved, an experiment's setting moved)
after which the course still computes (every number, no error) but the claim no longer holds. A claim that no
change falsifies compares a number with its own definition, states an identity, or compares typed constants only
(cited figures, a run's settings, the course's own constants: moving a cited figure would falsify "0.9 < 0.95" as
readily as a real comparison, so cited figures are never moved), and says nothing.

Changes are tried cheapest-first and the search stops as soon as every claim has a witness, so a course whose
claims are all sound is checked in a few dozen recomputations.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLAIM = re.compile(r"\{claim\}`([^`]+)`")

# config keys worth moving first: the shapes every family reads (then every other integer key of the config)
FIRST_KEYS = ("hidden_size", "num_hidden_layers", "intermediate_size", "vocab_size", "num_attention_heads",
              "num_key_value_heads", "head_dim", "moe_intermediate_size", "num_experts", "n_routed_experts",
              "num_experts_per_tok", "num_local_experts", "kv_lora_rank", "max_position_embeddings")
OPS = ("*2", "*1/2", "+1", "-1", "*3/2", "*3", "*4", "*6", "*10", "*1/10", "*100")   # moves tried on a number
# data documents whose measured values lessons cite (data/train_runs.json: the trainer's stored runs); a change
# moves one recorded series or figure, as a different run would have come out (never a run's settings: /spec/ and
# the settings SETTINGS names, which the trainer was given rather than measured)
MEASURED = ("train_runs", "train_memory", "train_stability", "train_lr_sweep", "train_speaker", "train_isoflop",
            "train_speculative", "tokenizer_stats", "train_bpe", "train_attention")
SETTINGS = re.compile(r"/spec(/|$)|^/(steps|lr|lr_factor|warmup|tau|z_loss|caps|seeds/seeds|xiong/(depths|samples))$"
                      r"|^/race/(steps|multipliers|lr(/.*)?)$|/(batch_size|seq_len|lr)$"
                      r"|^/(lrs|lr_exponents|base_lr|seeds)(/\d+)?$|^/depth/(lrs|model)(/.*)?$"   # lr_sweep's
                      r"|^/(budgets|widths|batch|seq|warmup_share|min_ratio|n_layers|n_heads|vocab_size"
                      r"|train_tokens|held_out_tokens|seeds/budget)(/\d+)?$"
                      r"|^(/seeds)?/runs/\d+/(budget|width|N|steps|D|C|seed)$"                   # isoflop's
                      r"|^/course_bpe/runs/\d+/(merges|entries)$|^/widget/merges/\d+/[01]$"      # tokenizer_stats
                      r"|^/(merges|eval_every|(char|bpe)/(vocab_size|params|runs/\d+/seed))$")   # train_bpe
# true/false keys that most families read with a default when the config leaves them out
ABSENT_FLAGS = ("tie_word_embeddings", "attention_bias", "mlp_bias")


@dataclass(frozen=True)
class Claim:
    file: str
    line: int
    text: str


@dataclass(frozen=True)
class Change:
    """One input change: ``target`` is ``model:<id>:<key path>``, ``data:<document>:<path>``,
    ``default:<lesson package>:<table>.<key>`` (or ``cited:<name>``, which is never a witness: see the module's
    docstring); ``op`` is one of OPS, or ``not`` for a true/false key."""
    target: str
    op: str

    def __str__(self) -> str:
        return f"{self.target} {self.op}"

    @classmethod
    def parse(cls, text: str) -> Change:
        target, op = text.rsplit(" ", 1)
        return cls(target, op)


def lesson_claims(root: Path = ROOT) -> list[Claim]:
    out = []
    for path in sorted((root / "lessons").glob("*/lesson.md")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            out += [Claim(path.relative_to(root / "lessons").as_posix(), i, m.group(1).strip())
                    for m in CLAIM.finditer(line)]
    return out


def load_inputs(root: Path = ROOT):
    """(models, data) exactly as the build reads them."""
    import build
    site = build.Site(root, root / "_site", {}, [])
    build.load_models(site)
    build.load_data(site)
    assert not site.errors, site.errors
    return site.models, site.data


def compute(models, data) -> dict:
    from experiments.course_numbers import compute_course
    course = data.get("course", {})
    numbers, _ = compute_course(models, course=course, reference=data.get("reference_counts"),
                                citations=data.get("citations"), data=data, strict=False)
    return numbers


def _paths(config: dict, prefix: str = ""):
    """(key path, op list) of every integer and true/false value in a config, nested objects included."""
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _paths(value, path + ".")
        elif isinstance(value, bool):
            yield path, ("not",)
        elif isinstance(value, int) and value > 0:
            yield path, OPS


def _ordered_paths(config: dict) -> list[tuple[str, tuple]]:
    rank = {k: i for i, k in enumerate(FIRST_KEYS)}
    return sorted(_paths(config), key=lambda p: (rank.get(p[0].rsplit(".", 1)[-1], len(rank)), p[0].count("."), p[0]))


def computed_input(change: Change) -> bool:
    """Whether the change moves something the course computes from (a witness may only be such a change)."""
    kind, _, rest = change.target.partition(":")
    if kind == "data":
        name, _, path = rest.partition(":")
        return name in MEASURED and not SETTINGS.search(path)
    return kind in ("model", "default")


def changes(models, data):
    """Every admissible change, cheapest and most telling first: the widgets' first settings, the stored runs'
    figures, then each model's shape keys."""
    yield from _default_changes()
    for name in MEASURED:
        for path in _measured_paths(data.get(name)):
            for op in ("*2", "*1/2", "*10"):
                yield Change(f"data:{name}:{path}", op)
    per_model = {}
    for mid, doc in sorted(models.items()):
        paths = _ordered_paths(doc["config"])
        text = "text_config." if isinstance(doc["config"].get("text_config"), dict) else ""
        have = {p for p, _ in paths}
        paths += [(text + k, ("not",)) for k in ABSENT_FLAGS if text + k not in have]
        per_model[mid] = paths
    depth = max((len(p) for p in per_model.values()), default=0)
    for op in OPS + ("not",):              # each move over every model's keys, main keys first, round-robin
        for i in range(depth):
            for mid, paths in per_model.items():
                if i < len(paths) and op in paths[i][1]:
                    yield Change(f"model:{mid}:{paths[i][0]}", op)


def _lesson_defaults():
    """(package, dict name, key) of every numeric setting in a lesson's ``*_DEFAULTS`` (its widgets' first state)."""
    import importlib

    from experiments.lessons import course
    for lesson in course(ROOT).lessons:
        if lesson.package == "experiments.lessons":   # (common.py: no settings of its own)
            continue
        pkg = importlib.import_module(lesson.package)
        for name, table in sorted(vars(pkg).items()):
            if name.endswith("_DEFAULTS") and isinstance(table, dict):
                for key, value in table.items():
                    if isinstance(value, (int, str)) and not isinstance(value, bool):
                        try:
                            Fraction(value)
                        except (ValueError, ZeroDivisionError):
                            continue
                        yield lesson.package.rsplit(".", 1)[1], name, key


def _default_changes():
    for op in ("*2", "*1/2", "*4", "*1/4", "*10"):
        for pkg, table, key in _lesson_defaults():
            yield Change(f"default:{pkg}:{table}.{key}", op)


def _with_default(change: Change):
    """Context: the lesson package's setting moved and its modules reloaded (restored afterwards)."""
    import contextlib
    import importlib
    import sys

    @contextlib.contextmanager
    def moved():
        _, pkg, rest = change.target.split(":", 2)
        table_name, key = rest.split(".", 1)
        package = importlib.import_module(f"experiments.lessons.{pkg}")
        table = getattr(package, table_name)
        old = table[key]
        new = _moved(old, change.op)
        if new is None:
            yield False
            return
        mods = [m for n, m in sorted(sys.modules.items()) if n.startswith(package.__name__ + ".")]
        table[key] = new
        try:
            for m in mods:
                importlib.reload(m)
            yield True
        finally:
            table[key] = old
            for m in mods:
                importlib.reload(m)
    return moved()


def _measured_paths(doc, path: str = ""):
    """'/'-joined paths of every number and every list of numbers in a data document, runs' settings left out."""
    if SETTINGS.search(path):
        return
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _measured_paths(value, f"{path}/{key}")
    elif isinstance(doc, list):
        if doc and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in doc):
            yield path
        else:
            for i, value in enumerate(doc):
                yield from _measured_paths(value, f"{path}/{i}")
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        yield path


def _moved(value, op: str):
    """The value after the move, or None when the move does not apply (an odd count halved)."""
    if op == "not":
        return (not value) if isinstance(value, bool) else None
    if isinstance(value, list):
        moved = [_moved(v, op) for v in value]
        return None if None in moved else moved
    if isinstance(value, float):
        return value * float(Fraction(op[1:])) if op[0] == "*" else None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    x = Fraction(value)                  # cited decimals are written as text ("0.02")
    out = x * Fraction(op[1:]) if op[0] == "*" else x + int(op)
    if out <= 0:
        return None
    if isinstance(value, int):
        return int(out) if out.denominator == 1 else None
    return str(float(out))


def apply(change: Change, models, data):
    """The inputs after the change (copies), or None when the change cannot be made (an odd value halved)."""
    kind, _, rest = change.target.partition(":")
    if kind == "data":
        name, _, path = rest.partition(":")
        doc = copy.deepcopy(data[name])
        *parents, last = path.strip("/").split("/")
        node = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        key = int(last) if isinstance(node, list) else last
        new = _moved(node[key], change.op)
        if new is None:
            return None
        node[key] = new
        return models, {**data, name: doc}
    if kind == "cited":
        cit = copy.deepcopy(data["citations"])
        new = _moved(cit[rest]["value"], change.op)
        if new is None:
            return None
        cit[rest]["value"] = new
        return models, {**data, "citations": cit}
    mid, _, path = rest.partition(":")
    doc = copy.deepcopy(models[mid])
    node = doc["config"]
    *parents, last = path.split(".")
    for p in parents:
        node = node[p]
    new = _moved(node[last], change.op)
    if new is None:
        return None
    node[last] = new
    return {**models, mid: doc}, data


def holds(claim: Claim, numbers) -> bool | None:
    """True / False, or None when the claim cannot be evaluated on these numbers (a name the change removed)."""
    from sitegen.claims import UnknownName, evaluate
    try:
        return evaluate(claim.text, numbers)[0]
    except (UnknownName, ArithmeticError, TypeError, ValueError):
        return None


def _compute_changed(change: Change, models, data):
    """The course's numbers after the change, or None when it cannot be made."""
    if change.target.startswith("default:"):
        with _with_default(change) as ok:
            return compute(models, data) if ok else None
    changed = apply(change, models, data)
    return None if changed is None else compute(*changed)


def find_witnesses(claims: list[Claim], root: Path = ROOT, limit: int | None = None,
                   candidates=None) -> dict[Claim, Change | None]:
    """Claim -> the first change of a computed input that makes it false (None: no change tried does);
    ``candidates`` replaces the full list of changes (those that move no computed input are skipped)."""
    from experiments.errors import CourseError
    models, data = load_inputs(root)
    base = compute(models, data)
    assert all(holds(c, base) for c in claims), "every claim holds on the course's own inputs"
    open_claims = list(dict.fromkeys(claims))
    found: dict[Claim, Change | None] = {c: None for c in open_claims}
    for n, change in enumerate(changes(models, data) if candidates is None else candidates):
        if not open_claims or (limit is not None and n >= limit):
            break
        if not computed_input(change):
            continue                        # a cited figure or a run's setting moved: never a witness
        try:
            numbers = _compute_changed(change, models, data)
            if numbers is None:
                continue
        except (CourseError, AssertionError, ArithmeticError, ValueError, KeyError, TypeError):
            continue                        # not an admissible input: the course refuses it
        for c in list(open_claims):
            if holds(c, numbers) is False:
                found[c] = change
                open_claims.remove(c)
    return found


WITNESSES = ROOT / "tests" / "fixtures" / "claim_witnesses.json"


def read_witnesses(path: Path = WITNESSES) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def numbers_after(change: Change, models, data):
    """The course's numbers after one change (None when it cannot be made or the course refuses it)."""
    from experiments.errors import CourseError
    try:
        return _compute_changed(change, models, data)
    except (CourseError, AssertionError, ArithmeticError, ValueError, KeyError, TypeError):
        return None


def main(argv: list[str] | None = None) -> int:
    """python -m tests.claim_inputs [--write]: each claim with its witness; --write searches only for the claims
    whose recorded witness is missing or no longer falsifies them, and records what it finds."""
    import argparse
    args = argparse.ArgumentParser(description=main.__doc__).parse_known_args(argv)[1]
    write = "--write" in args
    claims = lesson_claims()
    known = read_witnesses()
    models, data = load_inputs()
    stale = []
    by_change: dict[str, list[Claim]] = {}
    for c in claims:
        if c.text in known and computed_input(Change.parse(known[c.text])):
            by_change.setdefault(known[c.text], []).append(c)
        else:
            stale.append(c)
    for text, group in by_change.items():
        numbers = numbers_after(Change.parse(text), models, data)
        stale += [c for c in group if numbers is None or holds(c, numbers) is not False]
    found = find_witnesses(stale) if stale else {}
    result = {c.text: known[c.text] for c in claims if c.text in known and c not in found}
    result.update({c.text: str(w) for c, w in found.items() if w is not None})
    for c in claims:
        print(f"{c.file}:{c.line}: {result.get(c.text, 'NONE')}   {{claim}}`{c.text}`")
    if write:
        WITNESSES.write_text(json.dumps(dict(sorted(result.items())), ensure_ascii=False, indent=1) + "\n",
                             encoding="utf-8")
    print(json.dumps({"claims": len(claims), "without witness": sum(c.text not in result for c in claims)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
