"""Lesson C1's widgets: build-time views and the entry points the page calls.

- c1-bpe: byte-level BPE trained in the page's training worker (live.py; script.js drives it). The build draws its
  first state from the merges stored in data/tokenizer_stats.json ("widget": the first merges on the whole course
  text, made by `python -m sitegen.real_tokenizers`), the same merges the page's worker then trains.
- c1-real: the five published tokenizers measured at build time, beside the course's own BPE (the same stored file).
- c1-vocab: the vocabulary ledger of every model config of the course (vocab.py).
Every string a learner reads is formatted here or in live.py.
"""
from __future__ import annotations

from ...format import n, share
from ...toolkit.stored import stored
from ...train import bpe
from . import live, vocab

SAMPLE_NAMES = {"classical": "文言（课程文本留出部分）", "modern": "现代中文（《世界人权宣言》）",
                "english": "英文（同一宣言）", "code": "Python 代码"}


# -- c1-bpe ------------------------------------------------------------------------------------------------------------
def bpe_view(o: dict, data) -> dict:
    doc = stored(data, "tokenizer_stats")["widget"]
    merges = live.merges_from(doc["merges"])
    try:
        k = live.check_merges(o["merges"])
        if k > len(merges):
            raise ValueError(f"at most the {len(merges)} stored merges")
        x = live.state(merges, doc["chars"], doc["bytes"], k, o["sentence"], doc["scheme"])
    except ValueError as e:
        raise data.option_error("merges/sentence", "a merge count and a sentence the page accepts", str(e)) from None
    return {"o": o, "x": x, "text_path": doc["text"], "max": bpe.MAX_MERGES, "max_sentence": live.MAX_SENTENCE,
            "max_kb": bpe.MAX_TEXT_BYTES // 1024, "schemes": live.SCHEMES, "scheme": doc["scheme"],
            "chunk": live.CHUNK, "text_chars": n(doc["chars"]), "text_bytes": n(doc["bytes"]),
            "base": n(len(bpe.BYTE_ORDER)),
            "spec": live.tokens_chart(merges, doc["bytes"], f"构建时：课程文本，{live.SCHEMES[doc['scheme']]}")}


def bpe_start(text, scheme, target) -> dict:
    return live.start(text, scheme, target)


def bpe_step(session, steps=1) -> dict:
    return live.step(session, steps)


def bpe_target(session, target) -> dict:
    return live.retarget(session, target)


def bpe_show(session, k, sentence) -> dict:
    return live.show(session, k, sentence)


# -- c1-real -----------------------------------------------------------------------------------------------------------
def _ratios(tokens: dict, samples: dict) -> dict:
    return {name: {"cpt": f"{samples[name]['chars'] / t:.2f}", "bpt": f"{samples[name]['bytes'] / t:.2f}"}
            for name, t in tokens.items()}


def real_view(o: dict, data) -> dict:
    doc = stored(data, "tokenizer_stats")
    samples = doc["samples"]
    rows = [{"name": t["name"], "entries": n(t["entries"]), "han": n(t["han_entries"]), "han2": n(t["han2_entries"]),
             "han_share": share(t["han_entries"], t["entries"]), "r": _ratios(t["tokens"], samples)}
            for t in doc["tokenizers"]]
    own = doc["course_bpe"]["runs"][-1]
    rows.append({"name": f"本课的 BPE（{n(own['merges'])} 次合并）", "entries": n(own["entries"]),
                 "han": n(own["han_entries"]), "han2": n(own["han2_entries"]),
                 "han_share": share(own["han_entries"], own["entries"]), "r": _ratios(own["tokens"], samples),
                 "own": True})
    cols = [{"key": k, "name": SAMPLE_NAMES[k], "chars": n(samples[k]["chars"]), "bytes": n(samples[k]["bytes"])}
            for k in SAMPLE_NAMES]
    return {"rows": rows, "cols": cols}


# -- c1-vocab ----------------------------------------------------------------------------------------------------------
def vocab_view(o: dict, data) -> dict:
    rows = []
    for _, mn in data.choices():
        r = vocab.vocab_row(mn.ledger)
        rows.append({"name": mn.name, "V": n(r.V), "d": n(r.d), "tied": "是" if r.tied else "否",
                     "params": n(r.params), "share_total": share(r.params, r.total),
                     "share_active": share(r.params, r.active),
                     "m64": "是" if r.V % vocab.NANOGPT_MULTIPLE == 0 else "否",
                     "m128": "是" if r.V % vocab.MEGATRON_MULTIPLE == 0 else "否"})
    return {"rows": rows, "count": len(rows)}
