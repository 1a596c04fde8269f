"""C6's exercise (issue #48): the compute-optimal model size and data, in closed form.

The learner writes chinchilla_optimum(C, A, B, alpha, beta) -> (N, D): the N and D that minimise
L = E + A/N^alpha + B/D^beta at a budget C = 6·N·D (Hoffmann et al. 2022, equation 4: N_opt = G (C/6)^a with
G = (alpha A / (beta B))^(1/(alpha+beta)), a = beta/(alpha+beta), D_opt = C/(6 N_opt)). The reference is the
course's own experiments.toolkit.scaling.ParametricFit.optimum (``optimum``). The cases are the two published
fits the course uses (Chinchilla's and Epoch AI's refit, experiments.toolkit.scaling.FITS) at budgets of real
models, C = 6 N D with N each model's ledger total and D = 20 N, shown on the course's anchor model; others; and
one fit, model and budget drawn with the page's seed.
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.ledger import ledger_of
from experiments.toolkit.scaling import FITS, ParametricFit

SHOWN = "qwen3.8-27b"
OTHERS = ("llama-2-7b", "deepseek-v3", "gpt3-175b")
TOKENS_PER_PARAM = 20   # the budgets' D = 20·N: Chinchilla's ratio (the prompt cites it as c6.exercise_tpp, and
                        # test_c6 checks it against Chinchilla's cited tokens over parameters, c6.chinchilla_tpp)


def optimum(C, A, B, alpha, beta) -> tuple[float, float]:
    """(N_opt, D_opt) of the course's closed form (E does not move the optimum)."""
    return ParametricFit("exercise", E=0.0, A=A, B=B, alpha=alpha, beta=beta).optimum(C)


def _case(m: dict, fit: ParametricFit, label: str, shown: bool = False) -> Case:
    n = ledger_of(m["config"]).total
    budget = float(6 * n * TOKENS_PER_PARAM * n)
    return Case(label, (budget, fit.A, fit.B, fit.alpha, fit.beta), shown=shown)


def optimum_cases(models, rng) -> list[Case]:
    by_id = {m["id"]: m for m in models.values()}

    def name(f: str, fit: ParametricFit) -> str:
        return f"{by_id[f]['name']} 的规模（C = 6·N·{TOKENS_PER_PARAM}N），{fit.key} 的拟合"

    cases = [_case(by_id[SHOWN], FITS["chinchilla"], name(SHOWN, FITS["chinchilla"]), shown=True)]
    cases += [_case(by_id[f], fit, name(f, fit)) for f in OTHERS for fit in FITS.values()]
    f, fit = rng.choice(sorted(by_id)), FITS[rng.choice(sorted(FITS))]
    return cases + [_case(by_id[f], fit, "随机抽到的 " + name(f, fit))]


SOLUTION = '''def chinchilla_optimum(C, A, B, alpha, beta):
    G = (alpha * A / (beta * B)) ** (1 / (alpha + beta))
    a = beta / (alpha + beta)                 # N_opt ∝ C^a
    N = G * (C / 6) ** a
    D = C / (6 * N)                           # 预算 C = 6·N·D 剩下的给数据
    return N, D
'''
