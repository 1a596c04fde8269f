"""Which stretches of a lesson repeat the source article it was modelled on: the check behind tests/test_language.py.

Two lessons were modelled on a source article (a "seed"): C4 on the course's earlier C4 page and C4+ on an article
about the FFN. A lesson is written in the course's own words, so no stretch of eight Chinese characters may appear
both in its seed and in what its page shows.

The comparison is on Chinese characters only: numbers, formulas, model and method names, Latin text, spaces and
punctuation are dropped before n-grams are taken (a formula or a model name is shared by necessity, and "12·L·d²"
says the same thing in every text). What the course owns and repeats on purpose is cut out of a lesson's text first,
so no n-gram spans it: the course's name, its chapter titles when another lesson is linked, the running example
sentence, and the fixed outline every lesson follows (OUTLINE). The lesson's own title is not exempt.

The seeds themselves are not part of the repository. tests/fixtures/seed_ngrams.json keeps, per lesson, a 32-bit
fingerprint (blake2b) of every n-gram of its seed; ``python -m tests.seed_ngrams --write`` recomputes them from the
seed files (SEEDS, default ../shared/seeds beside the repository, or --seeds DIR).
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "seed_ngrams.json"
SEEDS = ROOT.parent / "shared" / "seeds"
N = 8                                           # characters in an n-gram
LESSON_SEEDS = {"c4-transformer-block": "000_f3fbfa652c4ee658.txt",
                "c4-ffn-deep-read": "002_2ac10933c41ec921.txt"}
# the course's fixed lesson outline: every lesson's ①-⑩ headings and ⑦'s three questions (test_language checks
# that each lesson uses all of them, so this list cannot drift from the lessons)
OUTLINE = ("本课一问", "从已有出发", "先自己设计", "改进到现代做法", "极小真数字算一次", "常见误解", "证据三问",
           "它解决什么问题", "数学上为什么可能有效", "实验上为什么最后选了它", "一句话", "回到主线", "你可能会问")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
BREAK = "|"


def han_only(text: str) -> str:
    """The text's Chinese characters in order; a line break becomes BREAK (an n-gram stays inside one paragraph,
    heading, table cell or list item) and BREAK stays; nothing else does."""
    return "".join(BREAK if ch == "\n" else ch for ch in text if ch in (BREAK, "\n") or HAN.match(ch))


class PageText(HTMLParser):
    """What a page shows, code cells and the attributes a tooltip or screen reader gives included (scripts, styles
    and the blank <template>s widgets fill are not), with a line break at every block's edge."""
    HIDDEN = {"script", "style", "template"}
    BLOCKS = {"p", "li", "td", "th", "tr", "div", "section", "h1", "h2", "h3", "h4", "h5", "h6", "label", "option",
              "caption", "figcaption", "pre", "br", "summary", "dt", "dd", "button", "title", "aside", "blockquote"}
    SHOWN = ("aria-label", "title", "alt", "placeholder")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden += 1
        elif not self.hidden:
            self.parts += ["\n", *(f"{v}\n" for k, v in attrs if k in self.SHOWN and v)] if tag in self.BLOCKS else \
                [f"\n{v}\n" for k, v in attrs if k in self.SHOWN and v]

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif not self.hidden and tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def page_text(page_html: str) -> str:
    parser = PageText()
    parser.feed(page_html)
    return "".join(parser.parts)


def course_owned(course: dict, lesson: str) -> list[str]:
    """Phrases the course repeats on purpose on `lesson`'s page (see the module docstring)."""
    owned = [course.get("title", ""), course.get("subtitle", ""), course.get("tracker", {}).get("example_sentence", "")]
    owned += [c["title"] for c in course.get("chapters", []) if c.get("lesson") != lesson]
    return [p for p in (*OUTLINE, *owned) if p]


def cut(text: str, owned=()) -> str:
    """The text's Chinese characters, each owned phrase replaced by BREAK (no n-gram spans it)."""
    han = han_only(text)
    for phrase in sorted({han_only(p) for p in owned if han_only(p)}, key=len, reverse=True):
        han = han.replace(phrase, BREAK)
    return han


def fingerprint(gram: str) -> int:
    return int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=4).digest(), "big")


def grams(text: str, owned=()) -> set[int]:
    """The fingerprints of every run of N Chinese characters in `text` that crosses no owned phrase."""
    han = cut(text, owned)
    return {fingerprint(han[i:i + N]) for i in range(len(han) - N + 1) if BREAK not in han[i:i + N]}


def pack(values) -> str:
    values = sorted(set(values))
    return base64.b64encode(struct.pack(f">{len(values)}I", *values)).decode("ascii")


def unpack(text: str) -> set[int]:
    raw = base64.b64decode(text)
    return set(struct.unpack(f">{len(raw) // 4}I", raw))


def seed_fingerprints(path: Path = FIXTURE) -> dict[str, set[int]]:
    """lesson -> the fingerprints of its seed's n-grams, as recorded."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["n"] == N, doc["n"]
    return {lesson: unpack(entry["fingerprints"]) for lesson, entry in doc["lessons"].items()}


def shared(text: str, seed: set[int], owned=()) -> list[str]:
    """The stretches of `text` (Chinese characters only) that share an n-gram with the seed, each as long as it
    runs, so a finding names the whole repeated phrase rather than each of its n-grams."""
    han = cut(text, owned)
    covered = [False] * len(han)
    for i in range(len(han) - N + 1):
        if BREAK not in han[i:i + N] and fingerprint(han[i:i + N]) in seed:
            covered[i:i + N] = [True] * N
    runs = "".join(ch if c else BREAK for ch, c in zip(han, covered))
    return [r for r in runs.split(BREAK) if r]


def main(argv: list[str] | None = None) -> int:
    """python -m tests.seed_ngrams --write [--seeds DIR]: record the seeds' n-gram fingerprints."""
    import argparse
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--seeds", type=Path, default=SEEDS)
    args = parser.parse_args(argv)
    lessons = {}
    for lesson, name in sorted(LESSON_SEEDS.items()):
        prints = grams((args.seeds / name).read_text(encoding="utf-8"))
        lessons[lesson] = {"seed": name, "fingerprints": pack(prints)}
        print(f"{lesson}: {name}, {len(prints):,} n-grams")
    doc = {"n": N, "lessons": lessons}
    if args.write:
        FIXTURE.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
