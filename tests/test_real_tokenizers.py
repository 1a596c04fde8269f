"""sitegen/real_tokenizers.py and data/tokenizer_stats.json (lesson C1, part 3): the pinned tokenizer files, the
stored figures against what independent readings of the same files give, and the build's refusal of a stale file.

Independent of the measuring code: token counts through transformers' PreTrainedTokenizerFast (its own wrapper of
the file), Han entries read from the vocabulary's token strings (GPT-2's byte map undone by hand for the byte-level
ones, SentencePiece's byte-fallback entries <0xNN> for Gemma 3) and classified with unicodedata's character names,
and the course's BPE retrained here.
"""
from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest

from experiments.train import bpe, derived
from sitegen import real_tokenizers as rt

ROOT = Path(__file__).resolve().parent.parent
STATS = json.loads((ROOT / rt.OUTPUT).read_text(encoding="utf-8"))
BY_KEY = {t["key"]: t for t in STATS["tokenizers"]}


@pytest.fixture(scope="module")
def paths():
    return rt.ensure_tokenizers()       # `make tokenizers`; a warm cache only checks the sha256 pins


@pytest.fixture(scope="module")
def documents(paths):
    """Each tokenizer.json parsed once for the module (the largest, ~10 MB of JSON, takes a second or two)."""
    parsed: dict[str, dict] = {}

    def document(key: str) -> dict:
        if key not in parsed:
            parsed[key] = json.loads(paths[key].read_text(encoding="utf-8"))
        return parsed[key]
    return document


@pytest.fixture(scope="module")
def texts():
    return rt.sample_texts(ROOT)


def test_stored_file_is_up_to_date():
    d = derived.derived(rt.OUTPUT)
    assert derived.changed_inputs(d, ROOT, STATS) == []
    assert [p for p in derived.problems(ROOT) if p[0] == rt.OUTPUT] == []
    assert [t["key"] for t in STATS["tokenizers"]] == [p.key for p in rt.PINS]
    assert all(t["sha256"] == p.sha256 and t["package"] == f"{p.package}@{rt.VERSION}"
               for t, p in zip(STATS["tokenizers"], rt.PINS))


def test_stale_file_refused_with_its_command(tmp_path):
    for rel in derived.derived(rt.OUTPUT).data + (rt.OUTPUT,):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    assert [p for p in derived.problems(tmp_path) if p[0] == rt.OUTPUT] == []
    sample = tmp_path / rt.SAMPLE_FILES["code"]
    sample.write_text(sample.read_text(encoding="utf-8") + "# one more line\n", encoding="utf-8")
    found = dict(derived.problems(tmp_path))[rt.OUTPUT]
    assert rt.SAMPLE_FILES["code"] in found and "python -m sitegen.real_tokenizers" in found


def test_cached_files_match_pins(paths):
    for pin in rt.PINS:
        assert paths[pin.key].stat().st_size == pin.size
        assert rt.sha256_file(paths[pin.key]) == pin.sha256


def test_samples_as_stored(texts):
    from experiments.train.data import split_passages
    seen = set(split_passages((ROOT / derived.TEXT_FILE).read_text(encoding="utf-8"))[0])
    for name, text in texts.items():
        assert STATS["samples"][name] == {"chars": len(text), "bytes": len(text.encode("utf-8")),
                                          "unseen": len([c for c in text if c not in seen])}
    assert texts["modern"].startswith("世界人权宣言\n") and texts["english"].startswith("Universal Declaration")


@pytest.mark.parametrize("pin", rt.PINS, ids=lambda p: p.key)
def test_token_counts_through_transformers(pin, paths, texts):
    from transformers import PreTrainedTokenizerFast
    tok = PreTrainedTokenizerFast(tokenizer_file=str(paths[pin.key]))
    stored = BY_KEY[pin.key]
    assert len(tok) == stored["entries"]
    for name, text in texts.items():
        ids = tok.encode(text, add_special_tokens=False)
        assert len(ids) == stored["tokens"][name], name
        assert tok.decode(ids) == text, name         # nothing lost: the counts are of the whole text


def _byte_decoder() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted (written out here, not taken from bpe.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def _entry_text(token: str, byte_level: bool, decoder: dict[str, int]) -> str:
    if byte_level and all(ch in decoder for ch in token):
        return bytes(decoder[ch] for ch in token).decode("utf-8", "replace")
    if token.startswith("<0x") and token.endswith(">") and len(token) == 6:
        return ""                                           # one byte of SentencePiece's byte fallback
    return token


def _han(c: str) -> bool:
    return unicodedata.name(c, "").startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


@pytest.mark.parametrize("pin", rt.PINS, ids=lambda p: p.key)
def test_han_entries_from_the_vocabulary(pin, documents):
    doc = documents(pin.key)
    byte_level = "ByteLevel" in json.dumps(doc["decoder"])
    decoder = _byte_decoder()
    tokens = dict(doc["model"]["vocab"])
    tokens.update({a["content"]: a["id"] for a in doc["added_tokens"]})
    counts = [sum(map(_han, _entry_text(t, byte_level, decoder))) for t in tokens]
    stored = BY_KEY[pin.key]
    assert len(tokens) == stored["entries"]
    assert sum(c >= 1 for c in counts) == stored["han_entries"]
    assert sum(c >= 2 for c in counts) == stored["han2_entries"]


def test_is_han_agrees_with_unicode_names():
    """On every assigned character around and in the blocks (an unassigned code point inside a block is in no
    vocabulary)."""
    for cp in [*range(0x3000, 0xA000), *range(0xF900, 0xFB00), *range(0x20000, 0x20100), *range(0x2F800, 0x2F900)]:
        if unicodedata.category(chr(cp)) != "Cn":
            assert bpe.is_han(chr(cp)) == _han(chr(cp)), hex(cp)


def test_widget_merges_retrained():
    """The first merges stored for C1's trainer widget: the course's BPE on the whole course text, trained again."""
    text = (ROOT / derived.TEXT_FILE).read_text(encoding="utf-8")
    w = STATS["widget"]
    trainer = bpe.Trainer(text, w["scheme"], len(w["merges"]))
    assert [[m.left, m.right, m.count] for m in trainer] == w["merges"]
    assert w["encoded_after_first"] == len(bpe.Tokenizer(trainer.merges[:1], w["scheme"]).encode(text))
    assert (w["chars"], w["bytes"], w["distinct"]) == (len(text), len(text.encode("utf-8")), len(set(text)))


def test_course_bpe_figures_retrained(texts):
    from experiments.train.data import split_passages
    train_text = split_passages((ROOT / derived.TEXT_FILE).read_text(encoding="utf-8"))[0]
    run = STATS["course_bpe"]["runs"][1]
    tok = bpe.train(train_text, run["merges"], STATS["course_bpe"]["scheme"])
    assert len(tok) == run["entries"] == 256 + run["merges"]
    assert {name: len(tok.encode(t)) for name, t in texts.items()} == run["tokens"]
    assert [r["merges"] for r in STATS["course_bpe"]["runs"]] == list(rt.COURSE_MERGES)


@pytest.mark.parametrize("pin", [p for p in rt.PINS if p.model], ids=lambda p: p.key)
def test_tokenizer_fits_its_models_config(pin, documents):
    """The config's vocabulary has a row for every entry, and its end-of-text id is one of the tokenizer's added
    (special) tokens: the file belongs to that model."""
    config = json.loads((ROOT / "data" / "models" / pin.model / "config.json").read_text(encoding="utf-8"))
    config = config.get("text_config", config)
    doc = documents(pin.key)
    special = {a["id"] for a in doc["added_tokens"] if a["special"]}
    assert BY_KEY[pin.key]["entries"] <= config["vocab_size"]
    eos = config["eos_token_id"]
    assert all(e in special for e in (eos if isinstance(eos, list) else [eos]))
