"""C4+'s exercise (issue #48): a SwiGLU FFN's parameters in a whole model.

The learner writes swiglu_ffn_params(hidden, intermediate, n_layers): each layer's gate, up and down projections,
three hidden x intermediate matrices without bias. The numbers are the config's own keys (hidden_size,
intermediate_size, num_hidden_layers); the reference is the ledger's FFN count of that config, Ledger.ffn (``ffn``),
summed over its real tensors. The cases are the course's dense models whose every layer has that FFN (the sum the
ledger finds equals the three-matrix count): two shown, others, and one drawn with the page's seed.
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.ledger import ledger_of

SHOWN = ("llama-2-7b", "qwen3-8b")
OTHERS = ("llama-2-70b", "mistral-7b-v0.1")


def ffn(config) -> int:
    """The ledger's FFN parameters of a config."""
    return ledger_of(config).ffn


def _numbers(config) -> tuple[int, int, int]:
    return config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]


def _plain(config) -> bool:
    try:
        h, f, n = _numbers(config)
        return isinstance(f, int) and 3 * h * f * n == ffn(config)
    except (KeyError, TypeError):
        return False


def ffn_cases(models, rng) -> list[Case]:
    by_id = {m["id"]: m for m in models.values()}

    def case(folder: str, label: str, shown: bool = False) -> Case:
        c = by_id[folder]["config"]
        return Case(label, _numbers(c), shown=shown, ref_args=(c,))

    cases = [case(f, by_id[f]["name"], shown=True) for f in SHOWN] + [case(f, by_id[f]["name"]) for f in OTHERS]
    pool = sorted(f for f, m in by_id.items() if f not in SHOWN + OTHERS and _plain(m["config"]))
    drawn = rng.choice(pool)
    return cases + [case(drawn, f"随机抽到的 {by_id[drawn]['name']}")]


SOLUTION = '''def swiglu_ffn_params(hidden, intermediate, n_layers):
    per_layer = 3 * hidden * intermediate     # gate、up、down 三个矩阵，没有偏置
    return n_layers * per_layer
'''
