"""Byte-level BPE: train merges on a text, encode, decode. Plain Python, no I/O, no numpy (every count is a Python
int), so the build and the page's Python (Pyodide) run the same code.

Sources:
- BPE for words: Sennrich, Haddow, Birch 2016, "Neural Machine Translation of Rare Words with Subword Units"
  (https://arxiv.org/abs/1508.07909), Algorithm 1: count every adjacent symbol pair over the words (each word
  weighted by its frequency), merge the most frequent pair everywhere into a new symbol, repeat.
- Byte level: GPT-2 (Radford et al. 2019, "Language Models are Unsupervised Multitask Learners", section 2.2): the
  base symbols are the 256 byte values of the UTF-8 text, so every string is encodable and nothing is unknown.
  The base ids here are GPT-2's: byte b has the id of its position in `bytes_to_unicode()` of openai/gpt-2
  src/encoder.py (printable bytes 33..126, 161..172, 174..255 first, then the rest; the space byte is id 220 as in
  GPT-2's vocabulary). `printable()` is that same map, used to show a token's bytes.
- Ties: among pairs of equal count the pair with the smaller (left id, right id) is merged first, merged symbols
  taking ids 256, 257, ... in order; that is the rule of the `tokenizers` library's BpeTrainer (its `Merge`
  ordering), whose merges tests/test_bpe.py compares with these.
- Pre-tokenisation (the text is cut into pieces first and no merge crosses a piece boundary), three schemes:
  "none" (the whole text is one piece), "gpt2", the pattern of openai/gpt-2 src/encoder.py
      's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
  and "qwen", PRETOKENIZE_REGEX of transformers models/qwen2/tokenization_qwen2.py (read in 5.23.0; Qwen3's
  checkpoints load the same Qwen2Tokenizer class)
      (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*
      |\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+
  Python's `re` has no \\p{L}, so `split()` scans each pattern by hand, alternative by alternative as a
  backtracking regex engine would try them: \\p{L} is a Unicode general category L* (Lu Ll Lt Lm Lo), \\p{N} is N*
  (Nd Nl No), both read with `unicodedata.category`; \\s is Unicode's White_Space property (PropList.txt; not
  Python's str.isspace, which adds U+001C..U+001F). Tests compare `split()` with the `regex` package's findall.
  Qwen3's tokenizer.json also normalises the text to NFC before splitting; this module does not normalise, so
  that decode(encode(s)) == s for every string (NFC would turn 'e' + U+0301 into 'é').

Training is incremental and bounded: `Trainer.step()` makes one merge (the page runs it in a worker, a few merges
per message, and shows each merge as it appears); pair counts are kept and updated around each merged occurrence
(a doubly linked list over the pieces' symbols, a heap of counts with stale entries skipped), never recounted.
A text longer than MAX_TEXT_BYTES UTF-8 bytes or more than MAX_MERGES merges is refused with a clear message.
"""
from __future__ import annotations

import heapq
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import CourseError

MAX_TEXT_BYTES = 262_144     # 256 KiB of UTF-8: three times the course text (data/texts/sishu.txt, ~85 kB)
MAX_MERGES = 4_096
SCHEMES = ("none", "gpt2", "qwen")
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
QWEN_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
PATTERNS = {"gpt2": GPT2_PATTERN, "qwen": QWEN_PATTERN}

# Unicode White_Space (PropList.txt), what \s matches in the `regex` package and in the tokenizers' patterns.
WHITE_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                        "\u200a\u2028\u2029\u202f\u205f\u3000")
CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")
# Case-insensitive (?i:...) in `regex` uses simple case folding: besides upper case, U+017F LONG S folds to s.
_FOLD = {"s": "sSſ", "t": "tT", "r": "rR", "e": "eE", "v": "vV", "m": "mM", "l": "lL", "d": "dD"}


class BPEError(CourseError, ValueError):
    """A text or a request the tokenizer refuses; str() is English, lines_zh() the learner's Chinese line."""

    def __init__(self, en: str, zh: str):
        super().__init__(en)
        self.zh = zh

    def lines_zh(self) -> list[str]:
        return [self.zh]


# -- bytes and their GPT-2 ids --------------------------------------------------------------------------------
def _gpt2_byte_order() -> list[int]:
    first = [*range(33, 127), *range(161, 173), *range(174, 256)]
    return first + [b for b in range(256) if b not in set(first)]


BYTE_ORDER = _gpt2_byte_order()                       # id -> byte
BYTE_ID = {b: i for i, b in enumerate(BYTE_ORDER)}    # byte -> id (space: 220)
_PRINTABLE = {b: chr(b) if i < 188 else chr(256 + i - 188) for i, b in enumerate(BYTE_ORDER)}


def printable(data: bytes) -> str:
    """GPT-2's bytes_to_unicode view of some bytes: printable bytes as themselves, the others shifted to
    U+0100.. (the space byte shows as 'Ġ', a newline as 'Ċ')."""
    return "".join(_PRINTABLE[b] for b in data)


def utf8(text: str) -> bytes:
    """The UTF-8 bytes of a string; a lone surrogate (U+D800..U+DFFF, half of a UTF-16 pair, not a character) is
    refused with its position."""
    if not isinstance(text, str):
        raise BPEError(f"expected a string, got {type(text).__name__}", "需要一段文字")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        cp = ord(text[e.start])
        raise BPEError(f"character {e.start}: U+{cp:04X} is a lone surrogate (half of a UTF-16 pair), not a "
                       f"character; UTF-8 cannot encode it",
                       f"第 {e.start + 1} 个字符 U+{cp:04X} 是落单的代理码位（UTF-16 的半个字符），不是字符，"
                       f"UTF-8 无法编码") from None


# Han characters: the CJK Unified Ideographs blocks (the main block, extensions A to I) and the two CJK
# Compatibility Ideographs blocks (Unicode 16 Blocks.txt). C1 counts a vocabulary's entries that hold one or more.
HAN_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2EE5F),
              (0x2F800, 0x2FA1F), (0x30000, 0x323AF))


def is_han(c: str) -> bool:
    """Whether the character c is a Han character (an ideograph of HAN_RANGES)."""
    cp = ord(c)
    return any(lo <= cp <= hi for lo, hi in HAN_RANGES)


# -- pre-tokenisation -----------------------------------------------------------------------------------------
def _is_letter(c: str) -> bool:
    return unicodedata.category(c)[0] == "L"


def _is_number(c: str) -> bool:
    return unicodedata.category(c)[0] == "N"


def _is_other(c: str) -> bool:
    """[^\\s\\p{L}\\p{N}]"""
    return c not in WHITE_SPACE and not _is_letter(c) and not _is_number(c)


def _run(text: str, i: int, pred) -> int:
    """The end of the longest run of characters from i that satisfy pred."""
    n = len(text)
    while i < n and pred(text[i]):
        i += 1
    return i


def _spaces(text: str, i: int) -> int | None:
    """\\s+(?!\\S)|\\s+ at i: the whitespace run, less its last character when a non-space follows it (that one
    then starts the next piece, as ' word'); None if text[i] is not whitespace."""
    j = _run(text, i, WHITE_SPACE.__contains__)
    if j == i:
        return None
    if j < len(text) and j - 1 > i:
        return j - 1
    return j


def _contraction(text: str, i: int, folded: bool) -> int | None:
    for c in CONTRACTIONS:
        part = text[i:i + len(c)]
        if len(part) == len(c) and part[0] == "'" and all(
                (ch in _FOLD[w]) if folded else ch == w for ch, w in zip(part[1:], c[1:])):
            return i + len(c)
    return None


def _gpt2_piece(text: str, i: int) -> int:
    end = _contraction(text, i, folded=False)
    if end is not None:
        return end
    j = i + 1 if text[i] == " " and i + 1 < len(text) else i    # the optional leading space
    for pred in (_is_letter, _is_number, _is_other):
        for start in dict.fromkeys((j, i)):                      # ' ?' is greedy: with the space, then without
            end = _run(text, start, pred)
            if end > start:
                return end
    spaces = _spaces(text, i)
    assert spaces is not None     # every character is whitespace, a letter, a number or other
    return spaces


def _qwen_piece(text: str, i: int) -> int:
    end = _contraction(text, i, folded=True)
    if end is not None:
        return end
    c = text[i]
    # [^\r\n\p{L}\p{N}]?\p{L}+
    if c not in "\r\n" and not _is_letter(c) and not _is_number(c):
        end = _run(text, i + 1, _is_letter)
        if end > i + 1:
            return end
    end = _run(text, i, _is_letter)
    if end > i:
        return end
    if _is_number(c):                                            # \p{N}: one digit at a time
        return i + 1
    # ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    j = i + 1 if c == " " and i + 1 < len(text) else i
    for start in dict.fromkeys((j, i)):
        end = _run(text, start, _is_other)
        if end > start:
            return _run(text, end, "\r\n".__contains__)
    # \s*[\r\n]+: the whitespace run up to and including its last \r or \n
    j = _run(text, i, WHITE_SPACE.__contains__)
    last = max(text.rfind("\r", i, j), text.rfind("\n", i, j))
    if last >= 0:
        return last + 1
    spaces = _spaces(text, i)
    assert spaces is not None
    return spaces


_PIECE = {"gpt2": _gpt2_piece, "qwen": _qwen_piece}


def split(text: str, scheme: str = "gpt2") -> list[str]:
    """The pieces `scheme` cuts `text` into ("none": the text itself); they join back to the text."""
    if scheme not in SCHEMES:
        raise BPEError(f"unknown pre-tokenisation {scheme!r}; expected one of {', '.join(SCHEMES)}",
                       f"没有名为 {scheme!r} 的预切分方式")
    if scheme == "none":
        return [text] if text else []
    piece, out, i = _PIECE[scheme], [], 0
    while i < len(text):
        end = piece(text, i)
        out.append(text[i:end])
        i = end
    return out


# -- training ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Merge:
    """One learned merge: `left` and `right` ids become `id` (= 256 + rank); `count` is how often the pair
    occurred in the training text (pieces weighted by frequency) when it was chosen."""
    rank: int
    left: int
    right: int
    id: int
    count: int
    bytes: bytes


def _check_merges(n_merges: int) -> None:
    if isinstance(n_merges, bool) or not isinstance(n_merges, int) or not 0 <= n_merges <= MAX_MERGES:
        raise BPEError(f"merges: expected an integer from 0 to {MAX_MERGES}, got {n_merges!r}",
                       f"合并次数应为 0 到 {MAX_MERGES} 之间的整数，实际是 {n_merges!r}")


class Trainer:
    """Byte-level BPE training on one text, one merge per step().

    The text's pieces (after `scheme`) are counted; each distinct piece is laid out once as byte ids in flat
    arrays (`tok`, `nxt`, `prv`: a doubly linked list per piece, -1 at its ends) with its frequency `weight`.
    `where[pair]` holds the positions at which a pair starts, `count[pair]` its weighted count, and a heap of
    (-count, left, right) gives the most frequent pair, smallest ids first among equals."""

    def __init__(self, text: str, scheme: str = "gpt2", max_merges: int = MAX_MERGES):
        _check_merges(max_merges)
        data = utf8(text)
        if len(data) > MAX_TEXT_BYTES:
            raise BPEError(f"text is {len(data):,} UTF-8 bytes; training takes at most {MAX_TEXT_BYTES:,}",
                           f"文字有 {len(data):,} 字节（UTF-8），训练最多接受 {MAX_TEXT_BYTES:,} 字节")
        self.scheme, self.max_merges = scheme, max_merges
        freq: dict[str, int] = {}
        for piece in split(text, scheme):
            freq[piece] = freq.get(piece, 0) + 1
        self.tok: list[int] = []
        self.weight: list[int] = []
        for piece, f in freq.items():
            self.tok.extend(BYTE_ID[b] for b in piece.encode("utf-8"))
            self.weight.extend([f] * len(piece.encode("utf-8")))
        n = len(self.tok)
        self.nxt = list(range(1, n + 1))
        self.prv = list(range(-1, n - 1))
        at = 0
        for piece in freq:                      # cut the links at each piece's ends
            k = len(piece.encode("utf-8"))
            self.prv[at], self.nxt[at + k - 1] = -1, -1
            at += k
        self.count: dict[tuple[int, int], int] = {}
        self.where: dict[tuple[int, int], set[int]] = {}
        for p in range(n):
            if self.nxt[p] != -1:
                self._add((self.tok[p], self.tok[self.nxt[p]]), p)
        self.heap = [(-c, a, b) for (a, b), c in self.count.items()]
        heapq.heapify(self.heap)
        self.merges: list[Merge] = []
        self.vocab: list[bytes] = [bytes([b]) for b in BYTE_ORDER]

    def _add(self, pair: tuple[int, int], p: int) -> None:
        self.count[pair] = self.count.get(pair, 0) + self.weight[p]
        self.where.setdefault(pair, set()).add(p)

    def _remove(self, pair: tuple[int, int], p: int) -> None:
        self.count[pair] -= self.weight[p]
        self.where[pair].discard(p)

    def _best(self) -> tuple[tuple[int, int], int] | None:
        while self.heap:
            neg, a, b = heapq.heappop(self.heap)
            now = self.count.get((a, b), 0)
            if now == -neg and now > 0:
                return (a, b), now
            if now > 0:                         # stale: the pair has fewer occurrences now
                heapq.heappush(self.heap, (-now, a, b))
        return None

    @property
    def done(self) -> bool:
        return len(self.merges) >= self.max_merges or not any(c > 0 for c in self.count.values())

    def step(self) -> Merge | None:
        """Make the next merge and return it; None once max_merges are made or no pair is left."""
        if len(self.merges) >= self.max_merges:
            return None
        best = self._best()
        if best is None:
            return None
        (a, b), c = best
        new = len(self.vocab)
        tok, nxt, prv = self.tok, self.nxt, self.prv
        touched: set[tuple[int, int]] = set()
        for p in sorted(self.where[(a, b)]):       # left to right: in 'aaa' only the first 'aa' merges
            q = nxt[p]
            if tok[p] != a or q == -1 or tok[q] != b:
                continue                            # already consumed by an overlapping occurrence
            left, right = prv[p], nxt[q]
            if left != -1:
                self._remove((tok[left], a), left)
            if right != -1:
                self._remove((b, tok[right]), q)
            self._remove((a, b), p)
            tok[p], tok[q] = new, -1
            nxt[p] = right
            if right != -1:
                prv[right] = p
            if left != -1:
                self._add((tok[left], new), left)
                touched.add((tok[left], new))
            if right != -1:
                self._add((new, tok[right]), p)
                touched.add((new, tok[right]))
        assert self.count.pop((a, b)) == 0 and not self.where.pop((a, b))
        for pair in touched:                        # pairs with the new symbol are new: push their counts
            if self.count[pair] > 0:
                heapq.heappush(self.heap, (-self.count[pair], *pair))
        merge = Merge(len(self.merges), a, b, new, c, self.vocab[a] + self.vocab[b])
        self.vocab.append(merge.bytes)
        self.merges.append(merge)
        return merge

    def __iter__(self) -> Iterator[Merge]:
        while (m := self.step()) is not None:
            yield m

    def steps(self, k: int) -> list[Merge]:
        """Up to k more merges (the page's worker asks for a few per message)."""
        out = []
        for _ in range(k):
            m = self.step()
            if m is None:
                break
            out.append(m)
        return out

    def pieces(self) -> list[list[int]]:
        """Each distinct piece as its current token ids, in first-seen order."""
        out, p, n = [], 0, len(self.tok)
        while p < n:
            ids = []
            while True:
                ids.append(self.tok[p])
                if self.nxt[p] == -1:
                    break
                p = self.nxt[p]
            out.append(ids)
            p += 1
            while p < n and self.tok[p] == -1:
                p += 1
        return out

    def tokenizer(self) -> Tokenizer:
        return Tokenizer(self.merges, self.scheme)


def train(text: str, n_merges: int, scheme: str = "gpt2") -> Tokenizer:
    """A tokenizer with (at most) n_merges merges learned on text."""
    trainer = Trainer(text, scheme, n_merges)
    for _ in trainer:
        pass
    return trainer.tokenizer()


# -- encoding and decoding ------------------------------------------------------------------------------------
class Tokenizer:
    """Encode with learned merges (GPT-2's rule: in each piece, repeatedly merge the adjacent pair of lowest
    rank, all its occurrences left to right) and decode ids back to the exact string."""

    def __init__(self, merges: list[Merge], scheme: str = "gpt2"):
        _check_merges(len(merges))
        self.merges, self.scheme = list(merges), scheme
        self.rank = {(m.left, m.right): m.rank for m in self.merges}
        self.vocab: list[bytes] = [bytes([b]) for b in BYTE_ORDER] + [m.bytes for m in self.merges]
        self._cache: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.vocab)

    def _piece(self, data: bytes) -> list[int]:
        """A heap of (rank, position) over the piece's pairs, invalid entries skipped: the same result as
        rescanning for the lowest rank after every merge, in O(n log n) for a long piece (scheme "none")."""
        tok = [BYTE_ID[b] for b in data]
        n = len(tok)
        nxt, prv = list(range(1, n + 1)), list(range(-1, n - 1))
        if n:
            nxt[-1] = -1
        rank, vocab_size = self.rank, 256
        heap = [(rank[(tok[p], tok[p + 1])], p) for p in range(n - 1) if (tok[p], tok[p + 1]) in rank]
        heapq.heapify(heap)
        while heap:
            r, p = heapq.heappop(heap)
            q = nxt[p]
            m = self.merges[r]
            if tok[p] != m.left or q == -1 or tok[q] != m.right:
                continue
            tok[p], tok[q] = vocab_size + r, -1
            nxt[p] = nxt[q]
            if nxt[p] != -1:
                prv[nxt[p]] = p
                pair = (tok[p], tok[nxt[p]])
                if pair in rank:
                    heapq.heappush(heap, (rank[pair], p))
            if prv[p] != -1:
                pair = (tok[prv[p]], tok[p])
                if pair in rank:
                    heapq.heappush(heap, (rank[pair], prv[p]))
        return [t for t in tok if t != -1]

    def encode(self, text: str) -> list[int]:
        utf8(text)            # refuses a lone surrogate, named
        out: list[int] = []
        for piece in split(text, self.scheme):
            ids = self._cache.get(piece)
            if ids is None:
                ids = self._piece(piece.encode("utf-8"))
                if len(self._cache) < 65_536:
                    self._cache[piece] = ids
            out.extend(ids)
        return out

    def decode_bytes(self, ids: list[int]) -> bytes:
        n = len(self.vocab)
        for i, t in enumerate(ids):
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < n:
                raise BPEError(f"id {i}: expected a token id from 0 to {n - 1}, got {t!r}",
                               f"第 {i + 1} 个编号应在 0 到 {n - 1} 之间，实际是 {t!r}")
        return b"".join(self.vocab[t] for t in ids)

    def decode(self, ids: list[int]) -> str:
        """The string the ids stand for; ids that cut a character's UTF-8 bytes apart are refused, named."""
        data = self.decode_bytes(ids)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BPEError(f"bytes {e.start}..{e.end - 1} of the decoded ids are not valid UTF-8 ({e.reason}); "
                           f"the ids cut a character apart",
                           f"这些编号拼出的第 {e.start + 1} 个字节起不是完整的 UTF-8 字符"
                           f"（编号把一个字切开了）") from None
