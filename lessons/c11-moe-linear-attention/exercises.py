"""C11's exercise (issue #48): the parameters an MoE model uses per token.

The learner writes active_params(backbone, moe_layers, experts, top_k, hidden, expert_ffn): of the text backbone's
parameters, each MoE layer's token skips experts - top_k routed experts, each a SwiGLU FFN of three hidden x
expert_ffn matrices. The numbers are read from a real config through the engine (experiments/ledger/arch.py MoE);
the reference is the ledger's own count, Ledger.active_per_token, of that config (``active``), so the learner's
arithmetic is checked against what the ledger counts tensor by tensor. The cases are the course's MoE models
whose routed experts are three bias-free matrices (gpt-oss's carry biases, which the formula leaves out): two
shown, others, and one drawn with the page's seed.
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.ledger import ledger_of

SHOWN = ("qwen3-30b-a3b", "deepseek-v3")


def active(config) -> int:
    """The ledger's parameters used per token."""
    return ledger_of(config).active_per_token


def _numbers(config) -> tuple[int, ...]:
    led = ledger_of(config)
    moe = led.arch.moe
    assert moe is not None, "cases are MoE configs only"
    return (led.text_backbone, moe.n_moe_layers, moe.n_experts, moe.top_k, led.arch.d_model, moe.expert_d_ff)


def _three_matrix_experts(config) -> bool:
    backbone, layers, experts, top_k, hidden, ffn = _numbers(config)
    return backbone - layers * (experts - top_k) * 3 * hidden * ffn == active(config)


def active_cases(models, rng) -> list[Case]:
    by_id = {m["id"]: m for m in models.values()}
    pool = sorted(f for f, m in by_id.items() if ledger_of(m["config"]).arch.moe
                  and _three_matrix_experts(m["config"]))

    def case(folder: str, label: str, shown: bool = False) -> Case:
        m = by_id[folder]
        return Case(label, _numbers(m["config"]), shown=shown, ref_args=(m["config"],))

    cases = [case(f, by_id[f]["name"], shown=True) for f in SHOWN]
    cases += [case(f, by_id[f]["name"]) for f in pool if f not in SHOWN][:3]
    drawn = rng.choice([f for f in pool if f not in SHOWN])
    return cases + [case(drawn, f"随机抽到的 {by_id[drawn]['name']}")]


SOLUTION = '''def active_params(backbone, moe_layers, experts, top_k, hidden, expert_ffn):
    one_expert = 3 * hidden * expert_ffn          # 门控、上投影、下投影三个矩阵
    idle = moe_layers * (experts - top_k) * one_expert   # 每个 token 没有用到的路由专家
    return backbone - idle
'''
