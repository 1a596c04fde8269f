"""C4's exercise (issue #48): the classic estimate 12·L·d² + V·d from a published config.

The learner writes classic_estimate(config): read the layer count, the width and the vocabulary from a
config.json (num_hidden_layers, hidden_size, vocab_size) and return 12·L·d² + V·d. The reference is the
engine's own experiments.ledger.views.classic_estimate on the config's ledger (``classic``). The cases are real
configs of the course's models whose keys carry those names at the top level: three shown in the page (a dense
model of 2023, the course's baseline and an MoE model, so the learner sees how far the estimate is from the
ledger's total on each), others, and one drawn with the page's seed.
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.ledger import ledger_of
from experiments.ledger.views import classic_estimate

SHOWN = ("llama-2-7b", "baseline", "qwen3-30b-a3b")
OTHERS = ("llama-2-70b", "deepseek-v3")
KEYS = ("num_hidden_layers", "hidden_size", "vocab_size")


def classic(config) -> int:
    """The engine's classic estimate of a config (through its ledger)."""
    return classic_estimate(ledger_of(config))


def _plain(m: dict) -> bool:
    """The three keys at the config's top level, and the ones the engine reads (no nested text_config)."""
    c, a = m["config"], ledger_of(m["config"]).arch
    return all(isinstance(c.get(k), int) for k in KEYS) and \
        (c["num_hidden_layers"], c["hidden_size"], c["vocab_size"]) == (a.n_layers, a.d_model, a.vocab_size)


def _case(m: dict, label: str, shown: bool = False) -> Case:
    total = ledger_of(m["config"]).total
    return Case(label, (m["config"],), shown=shown,
                args_text=f"{m['name']} 的 config.json（账本总数 {total:,}）")


def classic_cases(models, rng) -> list[Case]:
    by_id = {m["id"]: m for m in models.values()}
    cases = [_case(by_id[f], by_id[f]["name"], shown=True) for f in SHOWN]
    cases += [_case(by_id[f], by_id[f]["name"]) for f in OTHERS]
    pool = sorted(f for f, m in by_id.items() if f not in SHOWN and _plain(m))
    drawn = by_id[rng.choice(pool)]
    return cases + [_case(drawn, f"随机抽到的 {drawn['name']}")]


SOLUTION = '''def classic_estimate(config):
    L = config["num_hidden_layers"]
    d = config["hidden_size"]
    V = config["vocab_size"]
    return 12 * L * d * d + V * d     # 每层注意力 4d² + FFN 8d²，再加词嵌入
'''
