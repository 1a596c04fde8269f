"""A lesson names only chapters of data/course.json's outline, and speaks of each as what it is: done only if it
comes earlier in the outline and is written, still to come only if it comes later, linked only to its own page and
never linked while it is planned.

The rule, sentence by sentence over a lesson's whole Markdown (a sentence ends at 。；！？ or a line break):
- every chapter id in it (C4, C4+, C11, ...) is one of the outline's;
- if the sentence says something is done (学过 算过 讲过 见过 写过 已经 前面 上一课), every other chapter it names
  comes before the lesson's own chapter and is written;
- if it says something is to come (下一课 后面 之后会 接下来 再往后 留给), every other chapter it names comes after;
- a Markdown link whose text starts with a chapter id points at that chapter's page, and a planned chapter is
  never linked (it has no page).
So 「上一课 C8 讲的是……」 in C9 passes, 「接下来 C8 讲……」 in C9 fails, and so does 「C7 里学过……」 while C7 is planned.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COURSE = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
ORDER = [ch["id"] for ch in COURSE["chapters"]]
WRITTEN = {ch["id"] for ch in COURSE["chapters"] if ch["status"] == "written"}
PAGE = {ch["id"]: f"{ch['lesson']}.html" for ch in COURSE["chapters"] if ch["id"] in WRITTEN}
LESSON_OF = {ch["lesson"]: ch["id"] for ch in COURSE["chapters"] if ch.get("lesson")}
DONE = re.compile("学过|算过|讲过|见过|写过|已经|前面|上一课")
LATER = re.compile("下一课|后面|之后会|接下来|再往后|留给")
CHAPTER = re.compile(r"(?<![A-Za-z0-9])(C\d+\+?)(?![0-9+])")
LINK = re.compile(r"\[(C\d+\+?)(?![0-9+])[^\]]*\]\(([^)\s]*)\)")


def misplaced(me: str, text: str, order: list[str] = ORDER, written: set[str] = WRITTEN) -> list[str]:
    out = []
    for sentence in re.split("[。；！？\n]", text):
        named = CHAPTER.findall(sentence)
        out += [f"{c} is not a chapter of the outline: {sentence.strip()[:60]}" for c in named if c not in order]
        named = [c for c in named if c in order and c != me]
        if DONE.search(sentence):
            out += [f"{c} spoken of as done: {sentence.strip()[:60]}" for c in named
                    if order.index(c) > order.index(me) or c not in written]
        if LATER.search(sentence):
            out += [f"{c} spoken of as to come: {sentence.strip()[:60]}" for c in named
                    if order.index(c) < order.index(me)]
    return out


def wrong_links(text: str, pages: dict[str, str] = PAGE) -> list[str]:
    """Links whose text names a chapter: each must go to that chapter's page, which only a written one has."""
    return [f"[{c}…]({href})" for c, href in LINK.findall(text) if href.split("#")[0] != pages.get(c)]


@pytest.mark.parametrize("stem", sorted(LESSON_OF))
def test_a_lesson_calls_done_only_what_comes_before_it(stem):
    text = (ROOT / "lessons" / stem / "lesson.md").read_text(encoding="utf-8")
    assert misplaced(LESSON_OF[stem], text) == []


@pytest.mark.parametrize("stem", sorted(LESSON_OF))
def test_a_lesson_links_a_chapter_only_to_its_own_written_page(stem):
    assert wrong_links((ROOT / "lessons" / stem / "lesson.md").read_text(encoding="utf-8")) == []


def test_the_check_catches_a_later_chapter_called_done():
    """The sentences C6 and C9 used to have: C11's ledger 'already', C8 'next' after C9."""
    assert misplaced("C6", "一个模型的账本已经有了三本：C4 的参数账、C11 的激活账。")
    assert misplaced("C9", "接下来 C8 讲训练稳定性。")
    assert not misplaced("C9", "上一课 C8 讲的是训练稳定性；接下来的 C11 讲 MoE。")


def test_the_check_catches_unknown_and_planned_chapters():
    order, written = ["C1", "C2", "C3"], {"C2", "C3"}
    assert misplaced("C3", "C1 里学过分词。", order, written)          # C1 comes earlier but is planned
    assert not misplaced("C3", "C2 里学过 softmax。", order, written)
    assert misplaced("C3", "分词归 C9。", order, written)                # no C9 in this outline
    assert not misplaced("C3", "分词归 C1，那一章还没写。", order, written)
    pages = {"C2": "c2.html", "C3": "c3.html"}
    assert wrong_links("见 [C1 分词](c1.html)。", pages) and wrong_links("见 [C2](c3.html)。", pages)
    assert not wrong_links("见 [C2 下一个 token](c2.html#x) 和 [C3](c3.html)。", pages)


@pytest.mark.parametrize("chapter", [ch for ch in COURSE["chapters"] if ch["id"] in WRITTEN], ids=lambda c: c["id"])
def test_the_outline_names_a_written_chapter_as_its_page_does(chapter):
    """The outline's title of a written chapter is its page's title, and the outline says what it is about (C6's
    outline said 「模型该多大」 over a page titled 「模型该多大：算力预算、……」; issue #49)."""
    text = (ROOT / "lessons" / chapter["lesson"] / "lesson.md").read_text(encoding="utf-8")
    title = re.search(r"^title:\s*(.+?)\s*$", text.split("\n---", 1)[0], re.M).group(1)
    assert chapter["title"] == title
    assert chapter.get("summary", "").strip()
