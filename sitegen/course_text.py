"""The course's training text in one script: OpenCC's traditional-to-simplified tables, then one set of punctuation.

    python -m sitegen.course_text            # rewrite data/texts/sishu.txt in place (idempotent), print its counts
    python -m sitegen.course_text --check    # exit 1 and name what is left to convert, write nothing

The text (data/texts/sishu.txt, where it comes from: sishu.meta.yaml) joins three files of one collection:
《论语》 came in simplified characters, 《大学》《中庸》 in traditional ones with 「」 quotes. The course trains a
character model on it and holds out part of it, so two scripts in one text would make part of every "held-out"
gap a change of script. `normalise` applies:

1. OpenCC's `t2s` conversion (PyPI `opencc`, pinned in pyproject.toml; its dictionaries are phrase-aware, so
   后/後 and 于/於 follow the word), one line (one passage) at a time, so a passage converts the same wherever it
   stands; already-simplified text passes through, bar the rare
   characters the 2013 通用规范汉字表 simplifies further (e.g. 鮀 -> 𬶍), which it converts as well.
2. Punctuation as mainland simplified text sets it: 「」『』 -> “”‘’, and the few ASCII , : ? -> ，：？.

A second pass changes nothing but one phrase: OpenCC keeps 於 in 於戲 (read wūhū, "alas": 《大学》 quotes
《诗》's 「於戲前王不忘」), which the first pass makes 於戏; that no longer matches the phrase table, so a second pass
would turn it into 于戏. KEPT lists such phrases, already in their converted form; `normalise` leaves them alone, so
it is idempotent, and `differences` (the "one script" rule, tests/test_course_text.py) reports every character a
further pass would still change.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

TEXT_FILE = "data/texts/sishu.txt"
OPENCC_CONFIG = "t2s"
KEPT = ("於戏",)            # kept as converted: see the module's docstring
PUNCTUATION = str.maketrans({"「": "“", "」": "”", "『": "‘", "』": "’", ",": "，", ":": "：", "?": "？"})


def normalise(text: str) -> str:
    """The text converted by OpenCC's t2s tables, with simplified-text punctuation."""
    import opencc
    converter = opencc.OpenCC(OPENCC_CONFIG)
    masks = {phrase: chr(0xE000 + i) for i, phrase in enumerate(KEPT)}   # private-use characters: OpenCC keeps them
    lines = []
    for line in text.split("\n"):
        for phrase, mask in masks.items():
            line = line.replace(phrase, mask)
        line = converter.convert(line)
        for phrase, mask in masks.items():
            line = line.replace(mask, phrase)
        lines.append(line)
    return "\n".join(lines).translate(PUNCTUATION)


def differences(text: str) -> list[tuple[int, str, str]]:
    """(line number, character, what normalise makes of it) for each character the normalisation changes."""
    out = []   # (normalise converts line by line and keeps every line break, so the lines pair up)
    for number, (line, converted) in enumerate(zip(text.split("\n"), normalise(text).split("\n")), 1):
        if converted != line:
            out += [(number, a, b) for a, b in zip(line, converted) if a != b] or [(number, line, converted)]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sitegen.course_text", description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--check", action="store_true", help="only say whether the text is in one script")
    args = ap.parse_args(argv)
    path = Path(args.root) / TEXT_FILE
    text = path.read_text(encoding="utf-8")
    if args.check:
        left = differences(text)
        for number, old, new in left[:20]:
            print(f"{TEXT_FILE}:{number}: {old!r} -> {new!r}", file=sys.stderr)
        print(f"{TEXT_FILE}: {len(left)} characters still to convert" if left else f"{TEXT_FILE}: one script")
        return 1 if left else 0
    converted = normalise(text)
    if converted != text:
        path.write_text(converted, encoding="utf-8")
    print(f"{TEXT_FILE}: {'rewritten' if converted != text else 'unchanged'}; characters: {len(converted)}, "
          f"distinct_characters: {len(set(converted))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
