"""C3's exercise (issue #48): causal attention for one sequence with H query heads sharing G key/value heads.

The learner writes causal_gqa(q, k, v) -> (out, weights): q of shape (H, T, d), k and v of shape (G, T, d) with G
dividing H; query head i reads key/value head i // (H / G) (grouped-query attention, Ainslie et al. 2023: G = H is
multi-head attention, G = 1 multi-query); weights (H, T, T) = softmax over s of q_t · k_s / sqrt(d) with s > t
masked out, out = weights @ v. Graded as arrays against the course trainer's own pieces
(experiments.train.model: attention_tables for the causal mask and the scale sqrt(d), repeat_kv for the grouping;
experiments.train.generate.softmax), put together here as in model._attention. Cases: two shown, one with the
trainer's own speaker head counts, one drawn with the page's seed from a real config's num_attention_heads and
num_key_value_heads.
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.toolkit.config_text import text_config_of

# (numpy is imported where it is used: the page's widgets worker reads this lesson before numpy has loaded)


def attention(q, k, v):
    """(out (H, T, d), weights (H, T, T)): the trainer's causal attention with grouped key/value heads, one sequence."""
    import numpy as np

    from experiments.train import generate as G
    from experiments.train import model as M
    q, k, v = (np.asarray(a, dtype=np.float64)[None] for a in (q, k, v))      # (1, heads, T, d)
    H, T, d = q.shape[1:]
    cfg = M.ModelConfig(d_model=H * d, n_heads=H, n_kv_heads=k.shape[1], d_ff=1, vocab_size=1).validate()
    _, _, _, _, scale, mask = M.attention_tables(cfg, 1, T, np.dtype(np.float64))
    scores = q @ M.repeat_kv(k, cfg.group).transpose(0, 1, 3, 2) / scale + mask
    weights = np.apply_along_axis(G.softmax, -1, scores)
    return (weights @ M.repeat_kv(v, cfg.group))[0], weights[0]


def _qkv(rng, H: int, G: int, T: int, d: int) -> tuple:
    return tuple(rng.normal(0.0, 1.0, (h, T, d)).round(3).tolist() for h in (H, G, G))


def _heads(config: dict) -> tuple[int, int] | None:
    """(num_attention_heads, num_key_value_heads) of a config (its text model's), if both are usable here."""
    text, _ = text_config_of(config)
    h, g = text.get("num_attention_heads"), text.get("num_key_value_heads", text.get("num_attention_heads"))
    if not (isinstance(h, int) and isinstance(g, int)) or isinstance(h, bool) or isinstance(g, bool):
        return None
    return (h, g) if 0 < g <= h <= 128 and h % g == 0 else None


def gqa_cases(models, rng) -> list[Case]:
    import numpy as np
    fixed = np.random.default_rng(3)
    cases = [Case("4 个查询头、2 个 KV 头、3 个位置、每头 2 维", _qkv(fixed, 4, 2, 3, 2), shown=True),
             Case("2 个查询头、1 个 KV 头（MQA）、4 个位置、每头 2 维", _qkv(fixed, 2, 1, 4, 2), shown=True),
             Case("4 个查询头、4 个 KV 头（MHA）、5 个位置、每头 4 维", _qkv(fixed, 4, 4, 5, 4))]
    heads = sorted((m.get("name", a), hg) for a, m in models.items()
                   if (hg := _heads(m.get("config", {}))) is not None)
    if heads:
        seed = rng.randrange(2**32)
        drawn = np.random.default_rng(seed)
        name, (H, G) = heads[int(drawn.integers(len(heads)))]
        cases.append(Case(f"{name} 的头数：{H} 个查询头、{G} 个 KV 头（随机数种子 {seed}）",
                          _qkv(drawn, H, G, 4, 2)))
    return cases


SOLUTION = '''import numpy as np

def causal_gqa(q, k, v):
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    H, T, d = q.shape
    group = H // k.shape[0]                      # 每组几个查询头共用一个 KV 头
    k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
    scores[:, np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf   # 看不到后面的位置
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return w @ v, w
'''
