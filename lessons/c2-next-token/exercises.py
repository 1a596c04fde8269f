"""C2's exercise (issue #48): top-p (nucleus) sampling with a temperature, graded as a sampler.

The learner writes sample_top_p(logits, temperature, top_p, rng) -> one token id, drawing with rng.random() (a
numpy Generator the grader passes). A sampler has no single right answer, so the grader calls it many times per
case and compares the counts with the distribution the course's generator samples from,
experiments.train.generate.next_distribution (``distribution``): a token outside the nucleus is wrong at once, and
Pearson's chi-square (experiments.train.speculative.chi_square, the test C14 runs on speculative sampling) must
not find the counts unlikely (p-value >= the declared tolerance): a wrong temperature (multiplied instead of
divided), a nucleus one token short or the tail not renormalised all fail it. Cases: the page's logits at three
settings, others, and logits drawn with the page's seed.
"""
from __future__ import annotations

from experiments.exercise import Case

# (numpy is imported where it is used: the page's widgets worker reads this lesson before numpy has loaded)

LOGITS = (3.0, 2.5, 1.0, 0.5, 0.0, -1.0)     # the lesson's code cell's logits


def distribution(logits, temperature, top_p):
    """The course's next-token distribution at this temperature and top-p (no top-k)."""
    import numpy as np

    from experiments.train.generate import next_distribution
    return next_distribution(np.asarray(logits, dtype=np.float64), temperature, 0, top_p)


def sampler_cases(models, rng) -> list[Case]:
    import numpy as np
    shown = [Case(f"课程的 logits，温度 {t}，top-p {p}", (list(LOGITS), t, p), shown=True)
             for t, p in ((1.0, 0.8), (0.5, 0.9))]
    others = [Case(f"课程的 logits，温度 {t}，top-p {p}", (list(LOGITS), t, p)) for t, p in ((2.0, 0.7), (1.5, 1.0))]
    seed = rng.randrange(2**32)
    drawn = np.random.default_rng(seed)
    logits = [round(float(x), 2) for x in drawn.normal(0.0, 1.5, 8)]
    t, p = float(drawn.choice([0.7, 1.0, 1.3])), float(drawn.choice([0.6, 0.75, 0.9]))
    return shown + others + [Case(f"随机抽取的 logits（种子 {seed}），温度 {t}，top-p {p}", (logits, t, p))]


SOLUTION = '''import numpy as np

def sample_top_p(logits, temperature, top_p, rng):
    z = np.asarray(logits, dtype=float) / temperature      # 先除以温度
    probs = np.exp(z - z.max())
    probs /= probs.sum()
    order = np.argsort(-probs, kind="stable")              # 从大到小
    mass = np.cumsum(probs[order])
    n = int(np.searchsorted(mass, top_p * (1 - 1e-12))) + 1   # 累计概率第一次达到 top_p 为止
    keep = order[:n]
    p = probs[keep] / probs[keep].sum()                    # 在核里重新归一化
    return int(keep[np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right").clip(max=n - 1)])
'''
