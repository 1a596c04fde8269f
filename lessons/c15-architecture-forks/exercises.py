"""C15's exercise (issue #48): one fork's KV-cache bytes, the plain GQA one.

The learner writes kv_cache_bytes(n_layers, n_kv_heads, head_dim, tokens, bytes_per_elem): one sequence's K and
V for every layer, each token kv heads x head_dim elements of each. The numbers are read from a real config's
keys; the reference is the engine's experiments.ledger.views.cache_bytes_per_sequence of that config (``kv``),
which walks every layer's mixer (windows, latents, recurrent state). The cases are the course's models where that
walk comes to the plain GQA sum at the case's length (every layer full attention or a window no shorter than it,
no latent, no state), so the learner's formula is checked against the same engine C15's fork map reads: two shown,
others at other lengths, and one model and length drawn with the page's seed.
"""
from __future__ import annotations

from experiments.exercise import Case
from experiments.ledger import ledger_of
from experiments.ledger.views import cache_bytes_per_sequence

SHOWN = (("llama-2-7b", 4096), ("qwen3-8b", 32768))
OTHERS = (("mistral-7b-v0.1", 2048), ("qwen3-235b-a22b", 8192), ("llama-2-70b", 4096))
BYTES = 2   # BF16


def kv(config, tokens, bytes_per_elem) -> int:
    """The engine's cache bytes of one sequence of `tokens` tokens."""
    return cache_bytes_per_sequence(ledger_of(config), tokens, bytes_per_elem)


def _numbers(config, tokens) -> tuple[int, ...]:
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    return (config["num_hidden_layers"], config.get("num_key_value_heads") or heads, head_dim, tokens, BYTES)


def _plain(config, tokens) -> bool:
    try:
        layers, kv_heads, head_dim, _, _ = _numbers(config, tokens)
    except (KeyError, TypeError):
        return False
    return 2 * layers * kv_heads * head_dim * tokens * BYTES == kv(config, tokens, BYTES)


def kv_cases(models, rng) -> list[Case]:
    by_id = {m["id"]: m for m in models.values()}

    def case(folder: str, tokens: int, label: str, shown: bool = False) -> Case:
        c = by_id[folder]["config"]
        return Case(label, _numbers(c, tokens), shown=shown, ref_args=(c, tokens, BYTES))

    cases = [case(f, t, f"{by_id[f]['name']}，{t:,} 个 token", shown=True) for f, t in SHOWN]
    cases += [case(f, t, f"{by_id[f]['name']}，{t:,} 个 token") for f, t in OTHERS]
    tokens = rng.choice((1000, 3000, 4096))
    pool = sorted(f for f, m in by_id.items() if f not in dict(SHOWN) and _plain(m["config"], tokens))
    drawn = rng.choice(pool)
    return cases + [case(drawn, tokens, f"随机抽到的 {by_id[drawn]['name']}，{tokens:,} 个 token")]


SOLUTION = '''def kv_cache_bytes(n_layers, n_kv_heads, head_dim, tokens, bytes_per_elem):
    per_token_per_layer = 2 * n_kv_heads * head_dim      # K 和 V 各一份
    return n_layers * per_token_per_layer * tokens * bytes_per_elem
'''
