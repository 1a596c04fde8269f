"""The vocabulary ledger of a model config: what the vocabulary costs in parameters, and how far the config's
vocabulary is padded past the tokenizer's real entries.

For a config with vocabulary V (vocab_size) and hidden size d (hidden_size; n_embd in GPT-2's configs):
the input embedding is a V × d table; the output head (lm_head) is another V × d matrix, unless
tie_word_embeddings makes it the same tensor (Press and Wolf 2017, https://arxiv.org/abs/1608.05859). Both are
counted by the ledger engine tensor by tensor (the token table is the text part's embedding tensor of shape
(V, d): GPT-2's position table is left out); shares are of the checkpoint's total and of the parameters one token
passes through, which count the whole embedding table as published active counts do (views.denominators).

Padding: a config's V is the number of rows, not the tokenizer's entries. Qwen3's tokenizer has 151,643 BPE
entries (Qwen's documentation, "Key Concepts": https://qwen.readthedocs.io/en/latest/getting_started/concepts.html)
and 26 added tokens, ids 151,643 to 151,668 (`added_tokens` of Qwen3's tokenizer.json), 151,669 in all, while its
configs say 151,936 = 1,187 × 128. Rows are padded to a multiple of 64 or 128 so that the V × d matrix multiply
of the output head tiles evenly on GPU matrix units and splits evenly across tensor-parallel ranks: nanoGPT's
model.py sets vocab_size = 50304, "GPT-2 vocab_size of 50257, padded up to nearest multiple of 64 for efficiency"
(https://github.com/karpathy/nanoGPT); Megatron-LM's --make-vocab-size-divisible-by defaults to 128, "added for
computational efficiency reasons" (megatron/training/arguments.py; the padded size is a multiple of that times the
tensor-parallel size). The unused rows are never the target of a real token.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ledger import views

QWEN3_BPE_ENTRIES = 151_643       # Qwen's documentation (see above)
QWEN3_ADDED_TOKENS = 26           # ids 151,643..151,668 in Qwen3's tokenizer.json
NANOGPT_MULTIPLE = 64
MEGATRON_MULTIPLE = 128


@dataclass(frozen=True)
class VocabRow:
    V: int
    d: int
    tied: bool
    table: int            # the input embedding's V × d table, as the engine counts it
    head: int             # the output head's parameters (0 when tied)
    total: int
    active: int

    @property
    def params(self) -> int:
        return self.table + self.head

    @property
    def share_total(self) -> float:
        return self.params / self.total

    @property
    def share_active(self) -> float:
        return self.params / self.active


def vocab_row(ledger) -> VocabRow:
    a = ledger.arch
    V, d = a.vocab_size, a.d_model
    text = ledger.part("text")
    table = text.sum_where(lambda leaf, kinds: "embedding" in kinds and leaf.shape == (V, d))
    head = views.breakdown(ledger).get("lm_head", 0)
    return VocabRow(V, d, bool(a.tied_embeddings), table, head, ledger.total, ledger.active_per_token)


def padded(n: int, multiple: int) -> int:
    """The smallest multiple of `multiple` that is at least n."""
    return -(-n // multiple) * multiple
