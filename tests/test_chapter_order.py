"""A lesson speaks of another chapter as done only if it comes earlier in data/course.json's outline, and as still
to come only if it comes later: checked sentence by sentence in every lesson's ⑨ 回到主线, where the lessons place
themselves on the course's path (a sentence that says 已经 / 上一课 / 讲过 about a later chapter, or 下一课 /
接下来 / 之后 about an earlier one, fails).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COURSE = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
ORDER = [ch["id"] for ch in COURSE["chapters"]]
LESSON_OF = {ch["lesson"]: ch["id"] for ch in COURSE["chapters"] if ch.get("lesson")}
DONE = re.compile("已经|上一课|讲过|算过|前面")
LATER = re.compile("下一课|接下来|再往后|之后|后面|留给")
CHAPTER = re.compile(r"(?<![A-Za-z0-9])(C\d+\+?)(?![0-9+])")


def back_to_the_path(text: str) -> str:
    return text.split("## ⑨", 1)[1].split("\n## ", 1)[0] if "## ⑨" in text else ""


def misplaced(me: str, text: str) -> list[str]:
    out = []
    for sentence in re.split("[。；]", back_to_the_path(text)):
        named = [c for c in CHAPTER.findall(sentence) if c in ORDER and c != me]
        if DONE.search(sentence):
            out += [f"{c} spoken of as done: {sentence.strip()[:60]}" for c in named
                    if ORDER.index(c) > ORDER.index(me)]
        if LATER.search(sentence):
            out += [f"{c} spoken of as to come: {sentence.strip()[:60]}" for c in named
                    if ORDER.index(c) < ORDER.index(me)]
    return out


@pytest.mark.parametrize("stem", sorted(LESSON_OF))
def test_a_lesson_calls_done_only_what_comes_before_it(stem):
    text = (ROOT / "lessons" / f"{stem}.md").read_text(encoding="utf-8")
    assert misplaced(LESSON_OF[stem], text) == []


def test_the_check_catches_a_later_chapter_called_done():
    """The sentences C6 and C9 used to have: C11's ledger 'already', C8 'next' after C9."""
    assert misplaced("C6", "## ⑨ 回到主线\n\n一个模型的账本已经有了三本：C4 的参数账、C11 的激活账。\n## ⑩")
    assert misplaced("C9", "## ⑨ 回到主线\n\n接下来 C8 讲训练稳定性。\n## ⑩")
    assert not misplaced("C9", "## ⑨ 回到主线\n\n上一课 C8 讲的是训练稳定性；接下来的 C11 讲 MoE。\n## ⑩")
