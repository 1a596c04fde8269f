"""C9's exercise prompt states the mixed-precision AdamW recipe as 2 BF16 states (weights, gradients) of
c9.bpp.bf16_state bytes each plus ZeRO's K: this holds for the training ledger's recipe, term by term."""
from __future__ import annotations

from experiments.ledger import training as T


def test_two_bf16_states_and_zeros_K_make_the_mixed_adamw_recipe():
    parts = {c.key: c.bytes for c in T.RECIPES["mixed_adamw"]}
    assert parts["grads"] == parts["weights"]
    K = parts["master"] + parts["adam_m"] + parts["adam_v"]
    assert 2 * parts["weights"] + K == T.bytes_per_param("mixed_adamw") == 16
