"""experiments/train/bpe.py, the course's byte-level BPE, against independent references.

- Merges: the `tokenizers` library's BpeTrainer (Rust; byte-level, all 256 bytes as the initial alphabet) on a
  fixed text (the course text plus an English paragraph), for each pre-tokenisation scheme, merge by merge.
- Pre-tokenisation: the `regex` package's findall with GPT-2's and Qwen's patterns, on seeded random strings
  drawn from chosen code point ranges (letters, digits, marks, CJK, emoji, controls, every kind of space).
- Round trip: decode(encode(s)) == s on seeded random strings of the same ranges, with tokenizers trained on the
  course text; a lone surrogate is refused, named; so are texts and merge counts beyond the stated bounds.
(Both `tokenizers` and `regex` come with transformers, a pinned development dependency.)
"""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import regex  # type: ignore[import-untyped]
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

from experiments.errors_zh import learner_message
from experiments.train import bpe
from sitegen import runtime

ROOT = Path(__file__).resolve().parent.parent
COURSE_TEXT = (ROOT / "data" / "texts" / "sishu.txt").read_text(encoding="utf-8")
ENGLISH = ("It's the dog's toy -- they'll say 42 times, isn't it?  Yes!\r\n  Done.  \n"
           "In 2019 GPT-2 read 40GB of text; we'd read 85 kB. DON'T SHOUT 'RE 'VE.\n\n\tTabs\u3000and\xa0spaces\n")
FIXED_TEXT = COURSE_TEXT + "\n" + ENGLISH * 3
N_MERGES = 500

# Code point ranges the fuzzers draw from: each kind a tokenizer must survive.
RANGES = (
    (0x20, 0x7E),        # ASCII printable
    (0x00, 0x1F),        # C0 controls (\t \n \r among them; U+001C..U+001F are str.isspace but not \s)
    (0x7F, 0x9F),        # DEL and C1 controls (U+0085 is \s)
    (0xA0, 0xFF),        # Latin-1: no-break space, letters, ², ³, ½
    (0x300, 0x36F),      # combining marks (Mn)
    (0x391, 0x3C9),      # Greek
    (0x660, 0x669),      # Arabic-Indic digits (Nd)
    (0x2000, 0x200D),    # spaces, zero-width joiner
    (0x2160, 0x2188),    # Roman numerals (Nl)
    (0x3000, 0x3011),    # ideographic space and CJK punctuation
    (0x4E00, 0x9FA5),    # CJK ideographs
    (0xAC00, 0xD7A3),    # Hangul syllables
    (0x1F300, 0x1F64F),  # emoji
    (0x1F3FB, 0x1F3FF),  # skin tone modifiers
)
SPECIALS = ["'", "'s", "'S", "'ſ", "'ll", "'LL", "'Re", "'ve", "'d", "'m", "'t", " ", "  ", "\r\n", "\n\n", "\u3000",
            "👩\u200d💻", "e\u0301", "2026", "\ufeff"]


def random_strings(seed: int, count: int, max_len: int = 24) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, max_len)):
            if rng.random() < 0.25:
                parts.append(rng.choice(SPECIALS))
            else:
                lo, hi = rng.choice(RANGES)
                parts.append(chr(rng.randint(lo, hi)))
        out.append("".join(parts))
    return out


# -- merges against the tokenizers library's trainer ------------------------------------------------------------
def hf_merges(text: str, scheme: str, n: int) -> list[tuple[str, str]]:
    tk = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=scheme == "gpt2")
    if scheme == "qwen":
        tk.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(bpe.QWEN_PATTERN), behavior="isolated"), byte_level])
    else:
        tk.pre_tokenizer = byte_level
    trainer = trainers.BpeTrainer(vocab_size=256 + n, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[], show_progress=False)
    tk.train_from_iterator([text], trainer)
    merges = json.loads(tk.to_str())["model"]["merges"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]


@pytest.mark.parametrize("scheme", bpe.SCHEMES)
def test_merges_equal_tokenizers_trainer(scheme):
    trainer = bpe.Trainer(FIXED_TEXT, scheme, N_MERGES)
    mine = [(bpe.printable(trainer.vocab[m.left]), bpe.printable(trainer.vocab[m.right])) for m in trainer]
    assert len(mine) == N_MERGES
    assert mine == hf_merges(FIXED_TEXT, scheme, N_MERGES)


def test_base_ids_are_gpt2s():
    """GPT-2's vocabulary: '!' is 0, the space byte (shown 'Ġ') 220, a newline ('Ċ') 198."""
    assert bpe.BYTE_ID[ord("!")] == 0 and bpe.BYTE_ID[ord(" ")] == 220 and bpe.BYTE_ID[ord("\n")] == 198
    assert bpe.printable(b" \n") == "ĠĊ"
    assert sorted(bpe.BYTE_ORDER) == list(range(256))
    assert set(bpe.printable(bytes(range(256)))) == set(pre_tokenizers.ByteLevel.alphabet())


def test_counts_are_recounts():
    """Each merge's count is the pair's count in a full recount of the pieces just before it (the incremental
    updates never drift), and the trainer's final pieces are what encoding the text gives."""
    text = COURSE_TEXT[:6000] + ENGLISH + "aaaa aaa aaaaa"
    trainer = bpe.Trainer(text, "gpt2", 120)
    freq: dict[str, int] = {}
    for piece in bpe.split(text, "gpt2"):
        freq[piece] = freq.get(piece, 0) + 1
    words = [[bpe.BYTE_ID[b] for b in p.encode("utf-8")] for p in freq]
    weights = list(freq.values())
    for m in trainer:
        counts: dict[tuple[int, int], int] = {}
        for w, f in zip(words, weights):
            for pair in zip(w, w[1:]):
                counts[pair] = counts.get(pair, 0) + f
        best = max(counts.values())
        assert m.count == best == counts[(m.left, m.right)]
        assert (m.left, m.right) == min(p for p, c in counts.items() if c == best)
        for k, w in enumerate(words):        # merge left to right, non-overlapping
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == (m.left, m.right):
                    out.append(m.id)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[k] = out
    assert trainer.pieces() == words
    tok = trainer.tokenizer()
    assert [tok.encode(p) for p in freq] == words


def test_speed_500_merges_on_course_text():
    start = time.perf_counter()
    tok = bpe.train(COURSE_TEXT, 500)
    assert len(tok) == 256 + 500
    assert time.perf_counter() - start < 5


def test_incremental_steps_equal_one_run():
    whole = bpe.train(COURSE_TEXT, 60, "qwen").merges
    trainer = bpe.Trainer(COURSE_TEXT, "qwen", 60)
    chunks = [trainer.steps(7) for _ in range(10)]
    assert [len(c) for c in chunks] == [7] * 8 + [4, 0]
    assert [m for c in chunks for m in c] == whole
    assert trainer.step() is None


def test_runs_out_of_pairs():
    trainer = bpe.Trainer("abab", "gpt2", 10)
    merges = list(trainer)
    assert [m.bytes for m in merges] == [b"ab", b"abab"]
    assert trainer.done and trainer.step() is None


# -- pre-tokenisation against the regex package ----------------------------------------------------------------
@pytest.mark.parametrize("scheme", ("gpt2", "qwen"))
def test_split_equals_regex(scheme):
    pattern = regex.compile(bpe.PATTERNS[scheme])
    texts = random_strings(seed=2026, count=3000) + [FIXED_TEXT[:5000], ENGLISH, "", " ", "\n", " a", "a "]
    for text in texts:
        assert bpe.split(text, scheme) == pattern.findall(text), repr(text)


def test_split_examples():
    assert bpe.split("It's 2026, isn't it?", "gpt2") == ["It", "'s", " 2026", ",", " isn", "'t", " it", "?"]
    assert bpe.split("It'S 2026", "qwen") == ["It", "'S", " ", "2", "0", "2", "6"]
    assert bpe.split("子曰：“学而，时习之”\n", "gpt2") == ["子曰", "：“", "学而", "，", "时习之", "”", "\n"]
    assert bpe.split("子曰：“学而，时习之”\n", "qwen") == ["子曰", "：“", "学而", "，时习之", "”\n"]
    assert bpe.split("a  b\n\n c", "gpt2") == ["a", " ", " b", "\n\n", " c"]
    assert bpe.split("a  b\n\n c", "qwen") == ["a", " ", " b", "\n\n", " c"]
    assert bpe.split("x", "none") == ["x"] and bpe.split("", "none") == []


def test_what_pre_tokenisation_changes():
    """Without pieces, merges cross word boundaries (a token with a space after a letter: 'd ', 'read '); with
    GPT-2's or Qwen's pieces a space never follows a letter in a token. GPT-2's pieces let digits merge ('42');
    Qwen's keep every digit apart and glue one punctuation mark (a Chinese comma) to the letters after it."""
    text = ENGLISH * 100 + COURSE_TEXT[:20000]
    toks = {s: bpe.train(text, 300, s) for s in bpe.SCHEMES}

    def crosses(b: bytes) -> bool:
        s = b.decode("utf-8", "replace")
        return any(s[i].isalpha() and s[i + 1] == " " for i in range(len(s) - 1))
    assert any(crosses(v) for v in toks["none"].vocab)
    assert not any(crosses(v) for v in toks["gpt2"].vocab + toks["qwen"].vocab)
    assert any(v.isdigit() and len(v) > 1 for v in toks["gpt2"].vocab)
    assert not any(v.isdigit() and len(v) > 1 for v in toks["qwen"].vocab)

    def mark_then_letters(b: bytes) -> bool:
        s = b.decode("utf-8", "ignore")       # (not ASCII: "'s" is a contraction piece in both)
        return len(s) > 1 and ord(s[0]) > 127 and bpe._is_other(s[0]) and s[1:].isalpha()
    assert any(mark_then_letters(v) for v in toks["qwen"].vocab)
    assert not any(mark_then_letters(v) for v in toks["gpt2"].vocab)


# -- round trip and refusals -------------------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", bpe.SCHEMES)
def test_round_trip_fuzz(scheme):
    tok = bpe.train(COURSE_TEXT + ENGLISH, 300, scheme)
    texts = random_strings(seed=7, count=1500, max_len=40) + ["", "\x00", "👨‍👩‍👧‍👦", "é", "e\u0301", "\U0010FFFF"]
    for text in texts:
        ids = tok.encode(text)
        assert tok.decode(ids) == text, repr(text)
        assert all(0 <= i < len(tok) for i in ids)
    ids = tok.encode(COURSE_TEXT)
    assert tok.decode(ids) == COURSE_TEXT
    assert len(ids) < len(COURSE_TEXT.encode("utf-8")) / 2      # merges learned on a text compress it


@pytest.mark.parametrize("bad", ["\ud800", "ab\udfffcd", "😀\ud83d"])
def test_lone_surrogate_refused(bad):
    tok = bpe.train("abc abc", 2)
    with pytest.raises(bpe.BPEError, match="lone surrogate") as err:
        tok.encode(bad)
    assert f"U+{ord(bad[bad.index(next(c for c in bad if 0xD800 <= ord(c) <= 0xDFFF))]):04X}" in str(err.value)
    assert "代理" in learner_message(err.value)
    with pytest.raises(bpe.BPEError, match="lone surrogate"):
        bpe.Trainer(bad, "gpt2", 1)


def test_bounds_refused():
    with pytest.raises(bpe.BPEError, match="at most 262,144") as err:
        bpe.Trainer("字" * (bpe.MAX_TEXT_BYTES // 3 + 1), "gpt2", 10)
    assert "最多" in learner_message(err.value)
    bpe.Trainer("a" * bpe.MAX_TEXT_BYTES, "gpt2", 1)      # exactly the bound is accepted
    for n in (-1, bpe.MAX_MERGES + 1, 2.0, True, "5"):
        with pytest.raises(bpe.BPEError, match="merges: expected an integer"):
            bpe.Trainer("abc", "gpt2", n)
    with pytest.raises(bpe.BPEError, match="unknown pre-tokenisation"):
        bpe.split("abc", "bert")


def test_decode_refuses_bad_ids():
    tok = bpe.train("学而时习之 学而", 3)
    with pytest.raises(bpe.BPEError, match="expected a token id"):
        tok.decode([len(tok)])
    with pytest.raises(bpe.BPEError, match="not valid UTF-8"):
        tok.decode(tok.encode("学")[:1] if len(tok.encode("学")) > 1 else [bpe.BYTE_ID[0xE5]])


# -- the same code under Pyodide (wasm32, the page's Python) ---------------------------------------------------
NODE_SCRIPT = r"""
const fs = require("fs"), path = require("path");
const [dir, root] = process.argv.slice(2);
const { loadPyodide } = require(path.join(dir, "pyodide.js"));
(async () => {
  const py = await loadPyodide({ indexURL: dir + "/" });
  for (const f of ["experiments/__init__.py", "experiments/errors.py", "experiments/toolkit/__init__.py",
                   "experiments/train/bpe.py", "data/texts/sishu.txt"]) {
    py.FS.mkdirTree("/w/" + path.dirname(f));
    py.FS.writeFile("/w/" + f, fs.readFileSync(path.join(root, f)));
  }
  console.log(py.runPython(`
import json, platform, sys
sys.path.insert(0, "/w")
from experiments.train import bpe
text = open("/w/data/texts/sishu.txt", encoding="utf-8").read()
out = {"machine": platform.machine()}
for scheme in bpe.SCHEMES:
    trainer = bpe.Trainer(text, scheme, 200)
    merges = [m for _ in range(8) for m in trainer.steps(25)]
    tok = trainer.tokenizer()
    ids = tok.encode(text)
    out[scheme] = {"merges": [[m.left, m.right, m.count] for m in merges], "ids": len(ids),
                   "round_trip": tok.decode(ids) == text}
json.dumps(out)
`));
})();
"""


@pytest.mark.browser
def test_same_merges_under_pyodide(tmp_path):
    """The page's Python (Pyodide, wasm32, run here by Node) trains the same merges in chunks of 25 and encodes
    the course text to the same number of tokens as CPython."""
    node = shutil.which("node")
    assert node, "node is needed to run Pyodide outside a browser"
    script = tmp_path / "bpe.js"
    script.write_text(NODE_SCRIPT, encoding="utf-8")
    done = subprocess.run([node, str(script), str(runtime.runtime_dir(ROOT / ".cache" / "runtime")), str(ROOT)],
                          capture_output=True, text=True, timeout=300, check=True)
    there = json.loads(done.stdout.strip().splitlines()[-1])
    assert there["machine"] == "wasm32"
    for scheme in bpe.SCHEMES:
        trainer = bpe.Trainer(COURSE_TEXT, scheme, 200)
        here = [[m.left, m.right, m.count] for m in trainer]
        assert there[scheme]["merges"] == here
        assert there[scheme]["ids"] == len(trainer.tokenizer().encode(COURSE_TEXT))
        assert there[scheme]["round_trip"]
