"""C1 分词 — the vocabulary ledger's numbers, ``c1.<model>.<quantity>`` for every model config of the course
(<model> is its alias or slug, as in course_numbers), and the padding figures of GPT-2 and Qwen3; then the measured
tokenizers' and the course BPE's numbers (tokstats.py, from data/tokenizer_stats.json), and the comparison of
characters and BPE tokens at the same compute (fair.py, from data/train_bpe.json).

Each count is an expression over the config's V and d (experiments.expr) checked against the engine's tensor
count (vocab.vocab_row); shares divide by the engine's checkpoint total and active parameters. Cited figures
(kind "cited") carry their source: Qwen3's tokenizer entries, nanoGPT's and Megatron-LM's padding multiples.
"""
from __future__ import annotations

from ...expr import Const, Sym
from ...toolkit.model_numbers import LEDGER
from . import fair, tokstats, vocab

QWEN3_MODEL = "qwen3_8b"      # Qwen3's dense 8B: every Qwen3 config of the course has the same V
QWEN_DOCS = "Qwen 文档 Key Concepts（151,643 个 BPE 词条）"
QWEN_TOKENIZER = "Qwen3 发布的分词器文件：附加词条编号 151,643 至 151,668，共 26 个"
NANOGPT = "nanoGPT（Karpathy）的模型定义：vocab_size = 50304，注释说 GPT-2 的 50257 补到 64 的倍数以求效率"
MEGATRON = "Megatron-LM 的 --make-vocab-size-divisible-by，默认 128"


def register(reg, models, course=None, data=None) -> None:
    rows = {key: vocab.vocab_row(mn.ledger) for key, mn in models.items()}
    for key, mn in models.items():
        _model(reg, key, mn, rows[key])
    reg.add("c1.models", "词表账本里的模型配置数", value=len(rows), sources=("课程收录的全部模型 config.json",))
    reg.add("c1.tied_models", "输入 embedding 与输出头共用一张表（tie_word_embeddings）的模型数",
            value=sum(r.tied for r in rows.values()), sources=("各模型 config.json：tie_word_embeddings" + LEDGER,))
    for m in (vocab.NANOGPT_MULTIPLE, vocab.MEGATRON_MULTIPLE):
        reg.add(f"c1.multiple_{m}_models", f"词表 V 是 {m} 的倍数的模型数",
                value=sum(r.V % m == 0 for r in rows.values()), sources=("各模型 config.json：vocab_size",))
    reg.add("c1.nanogpt_multiple", "nanoGPT 把词表补到的倍数", value=vocab.NANOGPT_MULTIPLE, kind="cited",
            sources=(NANOGPT,))
    reg.add("c1.megatron_multiple", "Megatron-LM 默认把词表补到的倍数", value=vocab.MEGATRON_MULTIPLE, kind="cited",
            sources=(MEGATRON,))
    if "gpt2" in models:
        _gpt2(reg, models["gpt2"], rows["gpt2"])
    if QWEN3_MODEL in models:
        _qwen3(reg, models[QWEN3_MODEL], rows[QWEN3_MODEL])
    if data is not None:      # a caller with no data files (a test of another lesson's numbers) skips the measurements
        tokstats.register(reg, data)
        fair.register(reg, data)


def _vd(mn) -> tuple[Sym, Sym]:
    return Sym("V", mn.arch.vocab_size), Sym("d", mn.arch.d_model)


def _model(reg, key: str, mn, row: vocab.VocabRow) -> None:
    p, V, d = f"c1.{key}", *_vd(mn)
    kw = {"symbols": mn.keys, "sources": mn.src("V", "d")}
    reg.add(f"{p}.table", f"{mn.name}：输入 embedding 表 V × d", V * d, value=row.table, **kw)
    params = V * d
    if not row.tied:
        reg.add(f"{p}.head", f"{mn.name}：输出头（lm_head）V × d", V * d, value=row.head, **kw)
        params = V * d * Const(2)
    reg.add(f"{p}.params", f"{mn.name}：词表相关参数（embedding 表" + ("）" if row.tied else " + 输出头）"),
            params, value=row.params, symbols=mn.keys,
            sources=(f"{mn.where}：vocab_size、hidden_size、tie_word_embeddings" + LEDGER,))
    vocab_sym = Sym("词表相关参数", row.params)
    reg.add(f"{p}.share_total", f"{mn.name}：词表相关参数占全部参数的比例", vocab_sym / Sym("全部参数", row.total),
            kind="ratio", style="pct", sources=(mn.where + LEDGER,))
    reg.add(f"{p}.share_active", f"{mn.name}：词表相关参数占每个 token 激活参数的比例",
            vocab_sym / Sym("激活参数", row.active), kind="ratio", style="pct", sources=(mn.where + LEDGER,))


def _padding(reg, p: str, entries: int, multiple: int) -> None:
    """The rows a vocabulary of `entries` needs padded to `multiple`, and what the padding costs."""
    rows = vocab.padded(entries, multiple)
    reg.add(f"{p}.padded_{multiple}", f"{entries:,} 补到 {multiple} 的倍数",
            Const(multiple) * Sym(f"⌈{entries:,} ÷ {multiple}⌉", rows // multiple),
            sources=(NANOGPT if multiple == vocab.NANOGPT_MULTIPLE else MEGATRON,))


def _gpt2(reg, mn, row: vocab.VocabRow) -> None:
    V, d = _vd(mn)
    _padding(reg, "c1.gpt2", row.V, vocab.NANOGPT_MULTIPLE)
    extra = vocab.padded(row.V, vocab.NANOGPT_MULTIPLE) - row.V
    reg.add("c1.gpt2.pad_rows", f"{mn.name} 的词表补到 64 的倍数要加的行数",
            Sym("补齐后的行数", row.V + extra) - V, symbols=mn.keys, sources=(NANOGPT,) + mn.src("V"))
    reg.add("c1.gpt2.pad_params", f"{mn.name} 补齐的行多出的参数（输入输出共用一张表）",
            Sym("补的行数", extra) * d, symbols=mn.keys, sources=(NANOGPT,) + mn.src("d"))


def _qwen3(reg, mn, row: vocab.VocabRow) -> None:
    V, d = _vd(mn)
    bpe = Sym("BPE 词条", vocab.QWEN3_BPE_ENTRIES)
    added = Sym("附加词条", vocab.QWEN3_ADDED_TOKENS)
    reg.add("c1.qwen3.bpe_entries", "Qwen3 分词器的 BPE 词条数", bpe, kind="cited", sources=(QWEN_DOCS,))
    reg.add("c1.qwen3.added_tokens", "Qwen3 分词器的附加词条数（特殊标记等）", added, kind="cited",
            sources=(QWEN_TOKENIZER,))
    entries = bpe + added
    reg.add("c1.qwen3.entries", "Qwen3 分词器的真实词条数", entries, kind="cited", sources=(QWEN_DOCS, QWEN_TOKENIZER))
    reg.add("c1.qwen3.V", "Qwen3 配置里的词表行数 V", V, kind="config", symbols=mn.keys, sources=mn.src("V"))
    unused = V - Sym("真实词条", entries.value)
    reg.add("c1.qwen3.unused_rows", "Qwen3 词表里没有词条对应的行数", unused, symbols=mn.keys,
            sources=mn.src("V") + (QWEN_DOCS, QWEN_TOKENIZER))
    reg.add("c1.qwen3.v_over_128", "Qwen3 的 V 除以 128", V / Const(128), kind="ratio", style="n",
            symbols=mn.keys, sources=mn.src("V"))
    _padding(reg, "c1.qwen3", entries.value, vocab.MEGATRON_MULTIPLE)
    factor = Const(1) if row.tied else Const(2)
    reg.add("c1.qwen3.unused_params", f"{mn.name} 里没有词条对应的行占的参数（embedding 表与输出头各一份）",
            Sym("空行", unused.value) * d * factor, value=(row.V - entries.value) * row.d * (1 if row.tied else 2),
            symbols=mn.keys, sources=mn.src("V", "d") + (QWEN_DOCS, QWEN_TOKENIZER))
