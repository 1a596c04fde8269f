"""The course reads as one road, from text to a served model (issue #38).

data/course.json's outline lists every chapter from C1 to C15 in order, each written or planned, each with a
one-line summary. The home page lists the planned chapters without a link and says in two sentences where the road
ends; every lesson page steps to its written neighbours along the outline and names the unwritten chapters the
step passes over. C4's data-flow tracker and every lesson's ② 从已有出发 tie what they build on to the chapter
that teaches it: a written chapter is linked, a planned one is named as not written yet, and a tracker stage is
shown as learned only where a written chapter before C4 teaches it (lessons/c4-transformer-block/
widgets.py, stage_status). What a lesson's prose may call done or still to come is tests/test_chapter_order.py.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from experiments.baseline import CONFIG
from experiments.lessons.c4_transformer_block.widgets import chapter_links, stage_status, tracker_call, tracker_settings

ROOT = Path(__file__).resolve().parent.parent
COURSE = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
ROAD = ["C1", "C2", "C3", "C4", "C4+", "C5", "C6", "C7", "C8", "C9", "C10", "C11", "C12", "C13", "C14", "C15"]
ORDER = [ch["id"] for ch in COURSE["chapters"]]
PAGE = {ch["id"]: f"{ch['lesson']}.html" for ch in COURSE["chapters"] if ch["status"] == "written"}
WRITTEN_PAGES = [PAGE[c] for c in ORDER if c in PAGE]
CHAPTER = re.compile(r"(?<![A-Za-z0-9])(C\d+\+?)(?![0-9+])")
NOT_YET = re.compile("还没写|未写|待写")


def html_of(site, page: str) -> str:
    return (site.out / page).read_text(encoding="utf-8")


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


# -- the outline -------------------------------------------------------------------------------------------------
def test_the_outline_is_the_road_from_c1_to_c15():
    assert ORDER == ROAD
    for ch in COURSE["chapters"]:
        assert ch["status"] in ("written", "planned"), ch["id"]
        assert ch.get("title") and ch.get("summary") and "\n" not in ch["summary"], ch["id"]
        lesson = ROOT / "lessons" / str(ch.get("lesson")) / "lesson.md"
        assert lesson.is_file() == (ch["status"] == "written"), ch["id"]


def test_the_home_page_lists_the_road_and_says_where_it_ends(repo_site):
    html = html_of(repo_site, "index.html")
    items = re.findall(r'<li class="chapter[^"]*">(.*?)</li>', html, re.S)
    assert [CHAPTER.search(text(item)).group(1) for item in items] == ORDER
    for ch, item in zip(COURSE["chapters"], items, strict=True):
        assert ch["summary"] in text(item)
        if ch["status"] == "written":
            assert f'href="{PAGE[ch["id"]]}"' in item and "未写" not in item
        else:
            assert "<a " not in item and "未写" in text(item)
    destination = text(re.search(r'<p class="course-destination">(.*?)</p>', html, re.S).group(1))
    assert destination == COURSE["destination"]
    assert destination.count("。") == 2 and destination.endswith("。")   # two sentences


def test_every_lesson_page_steps_along_the_road(repo_site):
    at = {page: ORDER.index(c) for c, page in PAGE.items()}
    for i, page in enumerate(WRITTEN_PAGES):
        html = html_of(repo_site, page)
        navs = re.findall(r'<nav class="lesson-nav".*?</nav>', html, re.S)
        assert len(navs) == 2 and navs[0] == navs[1].replace("上一课与下一课", "课程导航")
        prev_li, next_li = (re.search(rf'<li class="lesson-nav-{d}">(.*?)</li>', navs[0], re.S).group(1)
                            for d in ("prev", "next"))
        before = WRITTEN_PAGES[i - 1] if i else None
        after = WRITTEN_PAGES[i + 1] if i + 1 < len(WRITTEN_PAGES) else None
        assert re.findall(r'href="([^"]+)" rel="prev"', prev_li) == ([before] if before else [])
        assert re.findall(r'href="([^"]+)" rel="next"', next_li) == ([after] if after else [])
        lo, hi = (at[before] if before else -1), (at[after] if after else len(ORDER))
        passed_before = [c for c in ORDER[lo + 1:at[page]] if c not in PAGE]
        passed_after = [c for c in ORDER[at[page] + 1:hi] if c not in PAGE]
        for li, passed in ((prev_li, passed_before), (next_li, passed_after)):
            planned = re.search(r'<span class="lesson-nav-planned">(.*?)</span>', li)
            assert (planned and CHAPTER.findall(planned.group(1))) == (passed or None), (page, li)
            assert not passed or "还没写" in text(li)
    c4 = html_of(repo_site, PAGE["C4"])
    assert "已是第一课" not in c4 or not [c for c in ORDER[:ORDER.index("C4")] if c not in PAGE]


# -- the tracker -------------------------------------------------------------------------------------------------
def test_a_stage_is_learned_only_where_an_earlier_written_chapter_teaches_it():
    course = {"chapters": [{"id": "C1", "status": "planned"}, {"id": "C2", "status": "written", "lesson": "b"},
                           {"id": "C3", "status": "written", "lesson": "c"}, {"id": "C4", "status": "planned"}]}
    links = chapter_links(course)
    assert stage_status(["C1"], "C3", links) == ("planned", "C1")
    assert stage_status(["C2"], "C3", links) == ("learned", "C2")
    assert stage_status(["C1", "C2"], "C3", links) == ("learned", "C2")   # the chapter nearest before
    assert stage_status(["C2", "C3"], "C3", links) == ("new", "C3")
    assert stage_status(["C4"], "C3", links) == ("later", "C4")
    assert stage_status(["C4"], "C2", links) == ("later", "C4")
    assert stage_status(["C9"], "C3", links) == ("", "")          # a chapter the outline lacks is passed over
    assert stage_status(["C9", "C2"], "C3", links) == ("learned", "C2")


def test_the_tracker_follows_the_outline_when_a_chapter_gets_written():
    """C1 is written: the 分词 stage is learned, linked to C1's page; the same outline with C1 planned again shows
    it planned, unlinked."""
    tokens = next(s for s in tracker_call(CONFIG, tracker_settings(COURSE), titles=False) if s["id"] == "tokens")
    assert (tokens["status"], tokens["chapter"]) == ("learned", "C1")
    assert tokens["links"][0]["href"] == PAGE["C1"] and tokens["status_zh"] == "学过"
    planned = {**COURSE, "chapters": [{k: v for k, v in dict(ch, status="planned").items() if k != "lesson"}
                                      if ch["id"] == "C1" else ch for ch in COURSE["chapters"]]}
    tokens = next(s for s in tracker_call(CONFIG, tracker_settings(planned), titles=False) if s["id"] == "tokens")
    assert (tokens["status"], tokens["chapter"]) == ("planned", "C1") and tokens["links"][0]["href"] is None


def test_every_tracker_stage_names_chapters_of_the_outline():
    tracker = COURSE["tracker"]
    assert tracker["chapter"] in ORDER
    for s in tracker["stages"] + tracker["training_stages"]:
        assert s["chapters"] and set(s["chapters"]) <= set(ORDER), s["id"]
        assert "status" not in s, s["id"]   # (a stage's status follows from the outline, never typed)


def test_the_c4_tracker_on_the_page_ties_each_stage_to_its_chapter(repo_site):
    html = html_of(repo_site, PAGE["C4"])
    tracker = html[html.index('<div class="tracker"'):html.index('class="tracker-later"')]
    taught = {s["id"]: s["chapters"] for s in COURSE["tracker"]["stages"]}
    here = ORDER.index(COURSE["tracker"]["chapter"])
    built = re.findall(r'<li class="stage stage-(\w+)" data-stage="(\w+)".*?<span class="badge badge-\w+"[^>]*>'
                       r'(.*?)</span></span>\s*</button>(.*?)</li>\s*(?=<li class="stage|</ol>)', tracker, re.S)
    assert [sid for _, sid, _, _ in built] == ["tokens", "embedding", "linear_attention", "full_attention",
                                               "final_norm", "lm_head", "softmax"]
    legend = COURSE["tracker"]["status_legend"]
    for status, sid, badge, detail in built:
        chapter = re.fullmatch(rf"{legend[status]}（(C\d+\+?)）", text(badge)).group(1)
        assert chapter in taught.get(sid, taught["full_attention"])
        where = ORDER.index(chapter)
        assert {"learned": where < here and chapter in PAGE, "planned": where < here and chapter not in PAGE,
                "new": where == here, "later": where > here}[status], (sid, status, chapter)
        for ref in re.findall(r'<span class="chapter-ref">(.*?)</span></span>(?=、|<span class="chapter-ref"|</span>)',
                              detail):
            c = CHAPTER.search(text(ref)).group(1)
            assert re.findall(r'href="([^"]*)"', ref) == ([PAGE[c]] if c in PAGE else []), ref
            assert ("未写" in text(ref)) == (c not in PAGE)
    learned = [sid for status, sid, _, _ in built if status == "learned"]
    assert not [sid for sid in learned if not any(c in PAGE and ORDER.index(c) < here for c in taught[sid])]
    shown = set(re.findall(r'<span class="badge badge-(\w+)">', tracker[:tracker.index('class="example"')]))
    assert shown == {status for status, *_ in built} | {"new"}   # the legend names the statuses in use


# -- each lesson's ② 从已有出发 --------------------------------------------------------------------------------------
class Prose(HTMLParser):
    """The prose of a page fragment, widgets left out: its paragraphs and list items outside any <div>, each a list
    of (text, href) runs (href None outside a link)."""

    def __init__(self):
        super().__init__()
        self.blocks: list[list[tuple[str, str | None]]] = []
        self.divs, self.href, self.open = 0, None, False

    def handle_starttag(self, tag, attrs):
        if tag == "div":
            self.divs += 1
        elif tag in ("p", "li") and not self.divs:
            self.blocks.append([])
            self.open = True
        elif tag == "a":
            self.href = dict(attrs).get("href")

    def handle_endtag(self, tag):
        self.divs -= tag == "div"
        self.href = None if tag == "a" else self.href
        self.open = self.open and tag not in ("p", "li")

    def handle_data(self, data):
        if self.open and not self.divs:
            self.blocks[-1].append((data, self.href))


def from_what_we_have(html: str) -> list[list[tuple[str, str | None]]]:
    start = re.search(r'<h2 id="[^"]*">② 从已有出发', html)
    assert start, "no ② 从已有出发"
    prose = Prose()
    prose.feed(html[start.end():html.index("<h2", start.end())])
    return prose.blocks


@pytest.mark.parametrize("chapter", [c for c in ORDER if c in PAGE])
def test_from_what_we_have_links_written_chapters_and_names_planned_ones(repo_site, chapter):
    seen = set()
    for block in from_what_we_have(html_of(repo_site, PAGE[chapter])):
        paragraph = "".join(run for run, _ in block)
        for run, href in block:
            for c in CHAPTER.findall(run):
                assert c in ORDER, f"{chapter} ②: {c} is not in the outline"
                if c == chapter:
                    continue
                if c in PAGE and c not in seen:   # a written chapter's first mention links to its page
                    assert href == PAGE[c], f"{chapter} ②: {c} first named without a link to {PAGE[c]}"
                if c not in PAGE:                 # a planned one is never linked and said to be not written yet
                    assert href is None and NOT_YET.search(paragraph), f"{chapter} ②: planned {c}"
                seen.add(c)
    assert seen or chapter == ORDER[0]


def test_no_page_links_a_chapter_anywhere_but_its_own_page(repo_site):
    checked = 0
    for page in sorted(repo_site.out.glob("*.html")):
        for href, inner in re.findall(r'<a [^>]*?href="([^"]*)"[^>]*>(.*?)</a>', page.read_text(encoding="utf-8"),
                                      re.S):
            named = re.match(r"(C\d+\+?)(?![0-9+])", text(inner))
            if named and href:
                assert href.split("#")[0] == PAGE.get(named.group(1)), f"{page.name}: {text(inner)} -> {href}"
                checked += 1
    assert checked > 20
