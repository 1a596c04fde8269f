"""C5's exercise (issue #48): one AdamW step with bias correction, graded against the trainer's own optimiser.

The learner writes adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay) -> (p, m, v) for one matrix.
The reference, ``adamw_step``, is not a second copy of the formula: it hands the same state to
experiments.train.optim.AdamW (the optimiser every run of the course trains with) and takes one step. The cases
are the states that optimiser goes through over several steps of a run on a random matrix (so step 1, where the
bias correction divides by 1 - beta1 = 0.1, and later steps, where it matters less, are both checked), with the
hyperparameters varied between runs; one run is drawn with the page's seed, so it differs at every check: on a
real matrix of a course model drawn with that seed (one attention head's W_Q block, head_dim x head_dim from the
config's ledger, initialised with the config's initializer_range). Its hyperparameters are drawn from a few
published settings: a config.json holds no optimiser settings (learning rate, betas, decay are the training
recipe's, not the checkpoint's).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from experiments.exercise import Case
from experiments.ledger import ledger_of

if TYPE_CHECKING:   # (numpy is imported where it is used: the page's worker reads this lesson before numpy)
    import numpy as np

SHAPE = (4, 3)
CHECKED_STEPS = (1, 2, 3, 10)   # the steps of each run that are cases


def adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay):
    """One step of the trainer's AdamW on one matrix from state (m, v) after t - 1 steps -> (p, m, v) after t."""
    import numpy as np

    from experiments.train.optim import AdamW
    opt = AdamW(b1=beta1, b2=beta2, eps=eps, weight_decay=weight_decay)
    opt.state["w"] = (np.array(m, dtype=np.float64), np.array(v, dtype=np.float64))
    opt.t = int(t) - 1
    params = {"w": np.array(p, dtype=np.float64)}
    opt.step(params, {"w": np.asarray(g, dtype=np.float64)}, lr)
    m_new, v_new = opt.state["w"]
    return params["w"], m_new, v_new


def _run(rng: np.random.Generator, label: str, lr: float, beta1: float, beta2: float, weight_decay: float,
         shown: tuple[int, ...] = (), shape: tuple[int, int] = SHAPE, init_std: float = 0.5) -> list[Case]:
    """The states of a run of the trainer's AdamW over max(CHECKED_STEPS) steps, one case per checked step, on a
    matrix of `shape` initialised with N(0, init_std²)."""
    import numpy as np
    eps = 1e-8
    p = rng.normal(0.0, init_std, shape)
    m, v = np.zeros(shape), np.zeros(shape)
    cases = []
    for t in range(1, max(CHECKED_STEPS) + 1):
        g = rng.normal(0.0, 1.0, shape) * (1.0 + t / 4)
        if t in CHECKED_STEPS:
            cases.append(Case(f"{label}第 {t} 步", (p.copy(), g.copy(), m.copy(), v.copy(), t, lr, beta1, beta2, eps,
                                                  weight_decay), shown=t in shown))
        p, m, v = adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay)
    return cases


def _drawn_matrix(models, rng) -> tuple[str, tuple[int, int], float]:
    """A real matrix of a course model drawn with the page's seed: one attention head's block of W_Q (head_dim x
    head_dim, from the config's ledger), initialised as the config says (its initializer_range)."""
    pool = sorted((m["name"], m["config"]) for m in models.values()
                  if isinstance(m["config"].get("initializer_range"), float))
    name, config = rng.choice(pool)
    d = ledger_of(config).arch.head_dim
    std = config["initializer_range"]
    return f"{name} 一个注意力头的 W_Q 块（{d}×{d}，按 config 的 initializer_range {std} 初始化）", (d, d), std


def adamw_cases(models, rng) -> list[Case]:
    """Two fixed runs (the course's settings, then others) and one drawn with the page's seed, on a real matrix's
    shape and initialisation from a course model drawn with that seed."""
    import numpy as np
    matrix, shape, init_std = _drawn_matrix(models, rng)
    seed = rng.randrange(2**32)
    drawn = np.random.default_rng(seed)
    return (_run(np.random.default_rng(5), "课程的设定（lr 0.001、β₁ 0.9、β₂ 0.95、衰减 0.1）", 1e-3, 0.9, 0.95, 0.1,
                 shown=(1, 2))
            + _run(np.random.default_rng(6), "另一组设定（lr 0.01、β₁ 0.8、β₂ 0.999、衰减 0.05）",
                   1e-2, 0.8, 0.999, 0.05)
            + _run(drawn, f"随机抽到的 {matrix}，种子 {seed} 的一次训练", float(drawn.choice([3e-4, 1e-3, 3e-3])),
                   float(drawn.choice([0.85, 0.9])), float(drawn.choice([0.95, 0.99])),
                   float(drawn.choice([0.0, 0.1])), shape=shape, init_std=init_std))


SOLUTION = '''import numpy as np

def adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay):
    m = beta1 * m + (1 - beta1) * g             # 一阶矩：梯度的滑动平均
    v = beta2 * v + (1 - beta2) * g * g         # 二阶矩：梯度平方的滑动平均
    m_hat = m / (1 - beta1 ** t)                # 偏差修正：前几步 m、v 从 0 起步，偏小
    v_hat = v / (1 - beta2 ** t)
    p = p - lr * m_hat / (np.sqrt(v_hat) + eps) - lr * weight_decay * p   # 衰减不经过 m、v
    return p, m, v
'''
